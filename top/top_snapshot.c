/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top's view of a snapshot of lib/export (read from the agent's
 * JSON by export_snapshot_read_json(), or collected in-process): display
 * strings, escaped before anything else sees them (most come from
 * guests), the figures as people read them, the rates between two
 * snapshots and the sort orders.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "top/snapshot.h"
#include "top/sort.h"

static const char *const severity_names[] = {
    [TOP_SET_ACTIVE] = "active",       [TOP_SET_SAMPLING] = "sampling", [TOP_SET_WITHDRAWN] = "withdrawn",
    [TOP_SET_STALE] = "stale",         [TOP_SET_TIMED_OUT] = "timed-out", [TOP_SET_REJECTED] = "rejected",
};

/*
 * Bytes the byte at s[i] takes escaped; *ret_in the bytes it stands for.
 * C0 80 is how lib/export's reader keeps a U+0000 of the JSON: "\x00".
 */
static size_t escaped_size(const char *s, size_t len, size_t i, size_t *ret_in)
{
    unsigned char c = (unsigned char)s[i];

    *ret_in = 1;
    if (c == 0xc0 && i + 1 < len && (unsigned char)s[i + 1] == 0x80) {
        *ret_in = 2;
        return 4;
    }
    return c == '\\' ? 2 : (c < 0x20 || c > 0x7e) ? 4 : 1;
}

char *top_escape(const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, o = 0, size = 0, keep = 0, in;
    bool cut = false;
    char *out;

    /* Sized exactly: a large snapshot holds hundreds of thousands of names. */
    for (keep = 0; keep < len; keep += in) {
        size_t need = escaped_size(s, len, keep, &in);

        if (size + need > TOP_MAX_STRING) {
            cut = true;
            break;
        }
        size += need;
    }
    out = malloc(size + (cut ? 3 : 0) + 1);
    if (!out)
        return NULL;
    for (i = 0; i < keep; i += in) {
        unsigned char c = (unsigned char)s[i];
        size_t n = escaped_size(s, len, i, &in);

        if (in == 2)
            c = 0;
        if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else if (n == 4) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

int top_reason(char *err, size_t errlen, int r, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return r;
}

enum top_set_severity top_set_severity_of(const char *state)
{
    size_t i;

    for (i = 0; i < sizeof(severity_names) / sizeof(severity_names[0]); i++)
        if (!strcmp(state, severity_names[i]))
            return (enum top_set_severity)i;
    return TOP_SET_UNKNOWN;
}

/* ---- the view of a snapshot of lib/export ------------------------------ */

void top_snapshot_free(struct top_snapshot *snap);

static int oom(char *err, size_t errlen)
{
    return top_reason(err, errlen, -ENOMEM, "out of memory");
}

/* An escaped copy of s, NULL for NULL; false only when out of memory. */
static bool escape(const char *s, char **ret)
{
    *ret = s ? top_escape(s, strlen(s)) : NULL;
    return !s || *ret;
}

/* A figure for people: seconds for one kept in ns. */
static double figure_value(enum export_figure_id id, uint64_t v)
{
    return export_figure_decls[id].ns ? (double)v / 1e9 : (double)v;
}

/* The figures of `scope` in f into fig[], added when `sum`. */
static void view_figures(const struct export_figs *f, enum export_figure_scope scope, bool sum, bool *fig_valid,
                         double *fig)
{
    for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
        double v;

        if (export_figure_decls[id].scope != scope || !export_figs_known(f, (enum export_figure_id)id))
            continue;
        v = figure_value((enum export_figure_id)id, export_figs_get(f, (enum export_figure_id)id));
        fig[id] = sum && fig_valid[id] ? fig[id] + v : v;
        fig_valid[id] = true;
    }
}

/* A statistic's value as text: as it came when its type cannot hold it. */
static char *stat_value(const struct export_stat *st)
{
    char buf[64];

    if (st->ascii)
        return top_escape(st->ascii, strlen(st->ascii));
    if (!st->valid)
        snprintf(buf, sizeof(buf), "-");
    else if (st->type == XEN_PV_STATS_TYPE_S64)
        snprintf(buf, sizeof(buf), "%lld", (long long)st->v.s64);
    else if (st->type == XEN_PV_STATS_TYPE_U64)
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)st->v.u64);
    else if (isnan(st->v.dbl)) /* as the JSON spells them */
        snprintf(buf, sizeof(buf), "NaN");
    else if (isinf(st->v.dbl))
        snprintf(buf, sizeof(buf), "%s", st->v.dbl > 0 ? "+Inf" : "-Inf");
    else
        snprintf(buf, sizeof(buf), "%.6g", st->v.dbl);
    return strdup(buf);
}

static int view_set(const struct export_set *in, struct top_set *set, char *err, size_t errlen)
{
    const char *state = in->state_text ? in->state_text : xenstats_pv_set_state_name(in->state);

    if (!escape(in->provider ? in->provider : "", &set->provider) || !escape(in->set ? in->set : "", &set->set) ||
        !escape(state, &set->state) || !escape(in->reason, &set->reason))
        return oom(err, errlen);
    set->severity = in->state_text ? TOP_SET_UNKNOWN : top_set_severity_of(state);
    set->samples = export_figs_get(&in->figs, EXPORT_FIG_PV_SET_SAMPLES);
    set->timeouts = export_figs_get(&in->figs, EXPORT_FIG_PV_SET_TIMEOUTS);
    set->errors = export_figs_get(&in->figs, EXPORT_FIG_PV_SET_ERRORS);
    set->latency_valid = export_figs_known(&in->figs, EXPORT_FIG_PV_SET_LATENCY);
    set->latency = figure_value(EXPORT_FIG_PV_SET_LATENCY, export_figs_get(&in->figs, EXPORT_FIG_PV_SET_LATENCY));
    if (in->nr_stats && !(set->stats = calloc(in->nr_stats, sizeof(*set->stats))))
        return oom(err, errlen);
    set->nr_stats = in->nr_stats;
    for (uint32_t k = 0; k < in->nr_stats; k++) {
        const struct export_stat *st = &in->stats[k];
        struct top_stat *out = &set->stats[k];
        const char *type = st->type_text ? st->type_text : st->type ? xenstats_pv_type_name(st->type) : "-";

        if (!escape(st->name ? st->name : "", &out->name) || !escape(type, &out->type) ||
            !(out->value = stat_value(st)))
            return oom(err, errlen);
    }
    return 0;
}

/* xentop's state letters, "dsbcpr", '-' for each flag not set. */
static void view_state(const struct export_domain *in, char state[8])
{
    static const struct {
        uint32_t flag;
        char letter;
    } flags[] = {{XENSTATS_DOMAIN_DYING, 'd'},   {XENSTATS_DOMAIN_SHUTDOWN, 's'}, {XENSTATS_DOMAIN_BLOCKED, 'b'},
                 {XENSTATS_DOMAIN_CRASHED, 'c'}, {XENSTATS_DOMAIN_PAUSED, 'p'},   {XENSTATS_DOMAIN_RUNNING, 'r'}};

    if (in->flags_unknown) {
        snprintf(state, 8, "?");
        return;
    }
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        state[i] = in->flags & flags[i].flag ? flags[i].letter : '-';
    state[6] = '\0';
}

static int view_domain(const struct export_domain *in, struct top_domain *d, char *err, size_t errlen)
{
    size_t rows = 0;

    d->domid = in->domid;
    d->nr_vcpus = in->nr_vcpus;
    if (!escape(in->name, &d->name) || !escape(export_vcpu_source_name(in->vcpu_source), &d->vcpu_source) ||
        !escape(in->vcpu_error, &d->vcpu_error))
        return oom(err, errlen);
    view_state(in, d->state);
    view_figures(&in->figs, EXPORT_SCOPE_DOMAIN, false, d->fig_valid, d->fig);
    for (uint32_t i = 0; i < in->nr_vifs; i++)
        view_figures(&in->vifs[i].figs, EXPORT_SCOPE_VIF, true, d->fig_valid, d->fig);
    for (uint32_t i = 0; i < in->nr_vbds; i++)
        view_figures(&in->vbds[i].figs, EXPORT_SCOPE_VBD, true, d->fig_valid, d->fig);
    d->nr_vifs = in->nr_vifs;
    d->nr_vbds = in->nr_vbds;
    /* a row per vCPU the source has (not the places a JSON snapshot left absent) */
    for (uint32_t i = 0; in->vcpus && i < in->nr_vcpus; i++)
        rows += !in->vcpus[i].absent;
    if (rows && !(d->vcpus = calloc(rows, sizeof(*d->vcpus))))
        return oom(err, errlen);
    for (uint32_t i = 0; in->vcpus && i < in->nr_vcpus; i++) {
        const struct export_vcpu *v = &in->vcpus[i];
        struct top_vcpu *out;

        if (v->absent)
            continue;
        out = &d->vcpus[d->nr_vcpu_rows++];
        out->vcpu = i;
        out->state = v->state < XENSTATS_VCPU_NR_RUNSTATES ? v->state : -1;
        for (unsigned int s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            out->time_valid[s] = v->time_valid[s];
            out->time[s] = (double)v->time_ns[s] / 1e9;
        }
        out->changes_valid = v->changes_valid;
        out->changes = v->changes;
    }
    if (in->nr_sets && !(d->sets = calloc(in->nr_sets, sizeof(*d->sets))))
        return oom(err, errlen);
    for (uint32_t i = 0; i < in->nr_sets; i++) {
        d->nr_sets++;
        if (view_set(&in->sets[i], &d->sets[i], err, errlen))
            return -ENOMEM;
    }
    return 0;
}

static int cmp_domain(const void *a, const void *b)
{
    const struct top_domain *x = a, *y = b;

    return x->domid < y->domid ? -1 : x->domid > y->domid;
}

/* Sort domains by domid, find each domain's worst PV set state. */
static void finish(struct top_snapshot *snap)
{
    size_t i, j;

    /* The contract sorts them already; sorting again costs little and lets
     * everything else rely on it.  The reader refuses duplicates. */
    if (snap->nr_domains)
        qsort(snap->domains, snap->nr_domains, sizeof(*snap->domains), cmp_domain);
    for (i = 0; i < snap->nr_domains; i++) {
        struct top_domain *d = &snap->domains[i];

        d->worst = TOP_SET_ACTIVE;
        d->worst_state = NULL;
        for (j = 0; j < d->nr_sets; j++) {
            if (!d->worst_state || d->sets[j].severity > d->worst) {
                d->worst = d->sets[j].severity;
                d->worst_state = d->sets[j].state;
            }
        }
    }
}

int top_snapshot_view(const struct export_snapshot *s, struct top_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct top_snapshot *snap = calloc(1, sizeof(*snap));

    if (!snap)
        return oom(err, errlen);
    snap->monotonic_ns = s->monotonic_ns;
    snap->time = s->wall;
    snap->interval = s->interval;
    if (!escape(s->backend, &snap->backend) || !escape(s->xen_version[0] ? s->xen_version : NULL, &snap->xen_version))
        goto fail;
    view_figures(&s->host, EXPORT_SCOPE_HOST, false, snap->fig_valid, snap->fig);
    if (s->nr_domains && !(snap->domains = calloc(s->nr_domains, sizeof(*snap->domains))))
        goto fail;
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        snap->nr_domains++;
        if (view_domain(&s->domains[i], &snap->domains[i], err, errlen))
            goto fail;
    }
    finish(snap);
    *ret_snapshot = snap;
    return 0;
fail:
    top_snapshot_free(snap);
    return oom(err, errlen);
}

int top_snapshot_parse(const char *text, size_t len, struct top_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct export_snapshot *s = NULL;
    int r = export_snapshot_read_json(text, len, &s, err, errlen);

    if (r < 0)
        return r;
    r = top_snapshot_view(s, ret_snapshot, err, errlen);
    export_snapshot_unref(s);
    return r;
}

static int cmp_vcpu(const void *a, const void *b)
{
    const struct top_vcpu *x = a, *y = b;

    return x->vcpu < y->vcpu ? -1 : x->vcpu > y->vcpu;
}

void top_snapshot_free(struct top_snapshot *snap)
{
    size_t i, j, k;

    if (!snap)
        return;
    /* A parse that failed half-way leaves counts without arrays. */
    for (i = 0; snap->domains && i < snap->nr_domains; i++) {
        struct top_domain *d = &snap->domains[i];

        for (j = 0; d->sets && j < d->nr_sets; j++) {
            struct top_set *set = &d->sets[j];

            for (k = 0; set->stats && k < set->nr_stats; k++) {
                free(set->stats[k].name);
                free(set->stats[k].type);
                free(set->stats[k].value);
            }
            free(set->stats);
            free(set->provider);
            free(set->set);
            free(set->state);
            free(set->reason);
        }
        free(d->sets);
        free(d->vcpus);
        free(d->name);
        free(d->vcpu_source);
        free(d->vcpu_error);
    }
    free(snap->domains);
    free(snap->backend);
    free(snap->xen_version);
    free(snap);
}

const struct top_domain *top_snapshot_find(const struct top_snapshot *snap, uint32_t domid)
{
    struct top_domain key = {.domid = domid};

    if (!snap || !snap->nr_domains)
        return NULL;
    return bsearch(&key, snap->domains, snap->nr_domains, sizeof(*snap->domains), cmp_domain);
}

static const struct top_vcpu *find_vcpu(const struct top_domain *d, uint32_t vcpu)
{
    struct top_vcpu key = {.vcpu = vcpu};

    if (!d->nr_vcpu_rows)
        return NULL;
    return bsearch(&key, d->vcpus, d->nr_vcpu_rows, sizeof(*d->vcpus), cmp_vcpu);
}

/*
 * The interval a vCPU's shares are taken over. When all four runstate times
 * are known, their sum advances with the hypervisor's clock, at which the
 * times were projected: the shares are then of that clock's interval and add
 * up to 100 %, whatever time passed between reading the clock and stamping
 * the snapshot (a busy host, a slow build). Otherwise, the snapshots' own
 * interval.
 */
static double vcpu_interval(const struct top_vcpu *v, const struct top_vcpu *pv, double dt)
{
    double sum = 0;

    for (unsigned int s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
        if (!v->time_valid[s] || !pv->time_valid[s] || v->time[s] < pv->time[s])
            return dt;
        sum += v->time[s] - pv->time[s];
    }
    return sum > 0 ? sum : dt;
}

void top_snapshot_rates(struct top_snapshot *cur, const struct top_snapshot *prev)
{
    double dt, vdt;
    size_t i, j;
    unsigned int s;

    cur->have_rates = false;
    if (!prev || prev->monotonic_ns >= cur->monotonic_ns)
        return;
    dt = (double)(cur->monotonic_ns - prev->monotonic_ns) / 1e9;
    cur->have_rates = true;
    cur->elapsed = dt;
    for (i = 0; i < cur->nr_domains; i++) {
        struct top_domain *d = &cur->domains[i];
        const struct top_domain *p = top_snapshot_find(prev, d->domid);
        double sum[XENSTATS_VCPU_NR_RUNSTATES] = {0}, changes = 0;
        size_t count[XENSTATS_VCPU_NR_RUNSTATES] = {0}, nchanges = 0;

        /* A reused domid is another domain: its counters restarted. */
        if (!p || strcmp(p->name, d->name))
            continue;
        for (j = 0; j < d->nr_vcpu_rows; j++) {
            struct top_vcpu *v = &d->vcpus[j];
            const struct top_vcpu *pv = find_vcpu(p, v->vcpu);

            if (!pv)
                continue;
            vdt = vcpu_interval(v, pv, dt);
            for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
                if (!v->time_valid[s] || !pv->time_valid[s] || v->time[s] < pv->time[s])
                    continue;
                v->share[s] = (v->time[s] - pv->time[s]) / vdt;
                v->share_valid[s] = true;
                sum[s] += v->share[s];
                count[s]++;
            }
            if (v->changes_valid && pv->changes_valid && v->changes >= pv->changes) {
                v->changes_per_s = (double)(v->changes - pv->changes) / dt;
                v->rate_valid = true;
                changes += v->changes_per_s;
                nchanges++;
            }
        }
        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            if (count[s]) {
                d->share[s] = sum[s] / (double)count[s];
                d->share_valid[s] = true;
            }
        }
        if (nchanges) {
            d->changes_per_s = changes;
            d->rate_valid = true;
        }
        if (d->fig_valid[EXPORT_FIG_DOMAIN_CPU] && p->fig_valid[EXPORT_FIG_DOMAIN_CPU] &&
            d->fig[EXPORT_FIG_DOMAIN_CPU] >= p->fig[EXPORT_FIG_DOMAIN_CPU]) {
            d->cpu_pct = (d->fig[EXPORT_FIG_DOMAIN_CPU] - p->fig[EXPORT_FIG_DOMAIN_CPU]) / dt * 100.0;
            d->cpu_pct_valid = true;
        }
    }
}

/* ---- sorting ---------------------------------------------------------- */

const struct top_sort_info top_sort_keys[TOP_NR_SORT_KEYS] = {
    [TOP_SORT_DOMID] = {"domid", 'i', false},      [TOP_SORT_NAME] = {"name", 'n', false},
    [TOP_SORT_VCPUS] = {"vcpus", 'v', true},       [TOP_SORT_RUNNING] = {"running", 'u', true},
    [TOP_SORT_RUNNABLE] = {"runnable", 'w', true}, [TOP_SORT_BLOCKED] = {"blocked", 'b', true},
    [TOP_SORT_OFFLINE] = {"offline", 'o', true},   [TOP_SORT_CHANGES] = {"changes", 'c', true},
    [TOP_SORT_SETS] = {"sets", 'p', true},         [TOP_SORT_WORST] = {"worst", 'x', true},
/* a domain figure with a top column sorts by its JSON key, biggest first */
#define METRIC(id, n, k, u, l, h)
#define FIGURE_AS(id, sc, n, k, u, j, form, t, h)                                                                     \
    [TOP_SORT_FIGURE + EXPORT_FIG_##id] = {EXPORT_SCOPE_##sc == EXPORT_SCOPE_DOMAIN && sizeof(t) > 1 ? j : NULL, 0, true},
#include "export/metrics.def"
#undef FIGURE_AS
#undef METRIC
};

enum top_sort_key top_sort_next(enum top_sort_key key, int step)
{
    unsigned int k = (unsigned int)key;

    do
        k = (k + TOP_NR_SORT_KEYS + (unsigned int)step) % TOP_NR_SORT_KEYS;
    while (!top_sort_keys[k].name);
    return (enum top_sort_key)k;
}

int top_sort_parse(const char *name, enum top_sort_key *ret_key)
{
    unsigned int k;

    for (k = 0; k < TOP_NR_SORT_KEYS; k++) {
        if (top_sort_keys[k].name && !strcmp(name, top_sort_keys[k].name)) {
            *ret_key = (enum top_sort_key)k;
            return 0;
        }
    }
    return -EINVAL;
}

/* qsort has no context argument: the comparison reads these. */
static const struct top_snapshot *sort_snap;
static enum top_sort_key sort_key;
static bool sort_reverse;

/* Figure of d for the key, and whether it is known. */
static bool figure(const struct top_domain *d, enum top_sort_key key, double *ret)
{
    switch (key) {
    case TOP_SORT_VCPUS:
        *ret = d->nr_vcpus;
        return true;
    case TOP_SORT_RUNNING:
    case TOP_SORT_RUNNABLE:
    case TOP_SORT_BLOCKED:
    case TOP_SORT_OFFLINE:
        *ret = d->share[key - TOP_SORT_RUNNING];
        return d->share_valid[key - TOP_SORT_RUNNING];
    case TOP_SORT_CHANGES:
        *ret = d->changes_per_s;
        return d->rate_valid;
    case TOP_SORT_SETS:
        *ret = (double)d->nr_sets;
        return true;
    case TOP_SORT_WORST:
        *ret = d->worst;
        return d->nr_sets > 0;
    case TOP_SORT_DOMID:
    case TOP_SORT_NAME:
        *ret = d->domid;
        return true;
    default:
        *ret = d->fig[key - TOP_SORT_FIGURE];
        return d->fig_valid[key - TOP_SORT_FIGURE];
    }
}

static int cmp_order(const void *a, const void *b)
{
    const struct top_domain *x = &sort_snap->domains[*(const size_t *)a];
    const struct top_domain *y = &sort_snap->domains[*(const size_t *)b];
    bool descending = top_sort_keys[sort_key].descending != sort_reverse;
    double fx, fy;
    bool vx, vy;
    int r = 0;

    if (sort_key == TOP_SORT_NAME) {
        /* as xentop: case does not count (then it does, then the domid) */
        r = strcasecmp(x->name, y->name);
        if (!r)
            r = strcmp(x->name, y->name);
    } else if (sort_key != TOP_SORT_DOMID) {
        vx = figure(x, sort_key, &fx);
        vy = figure(y, sort_key, &fy);
        if (vx != vy)
            return vx ? -1 : 1; /* unknown figures last, either way */
        if (vx)
            r = fx < fy ? -1 : fx > fy;
    }
    if (descending)
        r = -r;
    /* Ties stay in domid order whichever way the key sorts. */
    if (!r || sort_key == TOP_SORT_DOMID)
        r = (x->domid < y->domid ? -1 : x->domid > y->domid) * (sort_key == TOP_SORT_DOMID && descending ? -1 : 1);
    return r;
}

void top_sort(const struct top_snapshot *snap, enum top_sort_key key, bool reverse, size_t *order)
{
    size_t i;

    for (i = 0; i < snap->nr_domains; i++)
        order[i] = i;
    if (snap->nr_domains < 2)
        return;
    sort_snap = snap;
    sort_key = key;
    sort_reverse = reverse;
    qsort(order, snap->nr_domains, sizeof(*order), cmp_order);
    sort_snap = NULL;
}
