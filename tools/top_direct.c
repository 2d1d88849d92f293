/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top --direct: build the snapshot the agent would serve, from the
 * host itself.  Maps stay open across fetches (mapping is the costly part)
 * and are dropped when their domain goes; a domain whose map cannot be
 * opened is shown with the reason, and opening is retried every fetch.
 * PV stats come from an in-process monitor that samples every set on each
 * fetch.  It does not create domains' `stats` nodes: a viewer leaves
 * xenstore as the toolstack (or the agent) made it.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xenstats/pv.h>
#include <xenstats/vcpu.h>

#include "tool.h"
#include "top_direct.h"
#include "vcpu_fallback.h"
#include "util/util.h"

struct dmap {
    uint32_t domid;
    char name[XENSTATS_DOMAIN_NAME_MAX];
    struct xenstats_vcpu_map *map;
    bool seen;     /* in the current domain list */
    bool monitored; /* added to the PV stats monitor */
};

struct top_direct {
    struct xenstats_host *host;
    struct xenstats_monitor *monitor; /* NULL when the host has no grants/event channels */
    struct dmap *maps;
    size_t nr_maps, cap_maps;
};

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static struct xenstats_monitor *new_monitor(struct xenstats_host *host)
{
    struct xenstats_monitor_opts mo = {.size = sizeof(mo)};

    /* An update waits for the slowest provider: keep it short. */
    mo.sample_timeout_ms = 250;
    mo.min_interval_ms = 1;
    mo.create_stats_node = false;
    return xenstats_monitor_new(host, &mo);
}

struct top_direct *top_direct_open(char *err, size_t errlen)
{
    struct top_direct *d = calloc(1, sizeof(*d));

    if (!d) {
        say(err, errlen, "out of memory");
        return NULL;
    }
    d->host = xenstats_host_open(global.backend);
    if (!d->host) {
        if (errno == ENOENT)
            say(err, errlen, "no Xen host found: no emulated host is running and this is not a Xen dom0 "
                             "(start one with `xenstats emu`, or set XENSTATS_EMU_DIR)");
        else
            say(err, errlen, "cannot open the host: %s", strerror(errno));
        free(d);
        return NULL;
    }
    d->monitor = new_monitor(d->host);
    return d;
}

void top_direct_close(struct top_direct *d)
{
    size_t i;

    if (!d)
        return;
    for (i = 0; i < d->nr_maps; i++)
        xenstats_vcpu_map_close(d->maps[i].map);
    free(d->maps);
    /* Closing its ports lets providers see the monitor leave. */
    xenstats_monitor_free(d->monitor);
    xenstats_host_close(d->host);
    free(d);
}

/* The open map of `info`, opening it when new; NULL with *ret_err. */
static struct xenstats_vcpu_map *get_map(struct top_direct *d, const struct xenstats_domain_info *info, int *ret_err)
{
    struct dmap *m = NULL, *grown;
    size_t i;

    for (i = 0; i < d->nr_maps; i++) {
        if (d->maps[i].domid == info->domid) {
            m = &d->maps[i];
            break;
        }
    }
    /* The same domid with another name is a new domain. */
    if (m && strcmp(m->name, info->name)) {
        xenstats_vcpu_map_close(m->map);
        m->map = NULL;
        if (m->monitored)
            xenstats_monitor_remove_domain(d->monitor, m->domid);
        m->monitored = false;
        snprintf(m->name, sizeof(m->name), "%s", info->name);
    }
    if (!m) {
        if (d->nr_maps == d->cap_maps) {
            size_t cap = d->cap_maps ? d->cap_maps * 2 : 16;

            grown = realloc(d->maps, cap * sizeof(*grown));
            if (!grown) {
                *ret_err = -ENOMEM;
                return NULL;
            }
            d->maps = grown;
            d->cap_maps = cap;
        }
        m = &d->maps[d->nr_maps++];
        memset(m, 0, sizeof(*m));
        m->domid = info->domid;
        snprintf(m->name, sizeof(m->name), "%s", info->name);
    }
    m->seen = true;
    if (d->monitor && !m->monitored && info->domid != xenstats_host_self_domid(d->host))
        m->monitored = xenstats_monitor_add_domain(d->monitor, info->domid) >= 0;
    if (!m->map) {
        m->map = tool_vcpu_map_open(d->host, info->domid); /* falls back to the hypercall */
        if (!m->map)
            *ret_err = -errno;
    }
    return m->map;
}

static void drop_unseen(struct top_direct *d)
{
    size_t i = 0;

    while (i < d->nr_maps) {
        if (!d->maps[i].seen) {
            xenstats_vcpu_map_close(d->maps[i].map);
            if (d->maps[i].monitored)
                xenstats_monitor_remove_domain(d->monitor, d->maps[i].domid);
            d->maps[i] = d->maps[--d->nr_maps];
            continue;
        }
        d->maps[i++].seen = false;
    }
}

static int fill_vcpus(struct xenstats_vcpu_map *map, struct top_domain *dom, uint64_t *ret_now)
{
    struct xenstats_vcpu_sample *samples;
    uint64_t now = 0, times[TOP_NR_RUNSTATES];
    uint32_t n = xenstats_vcpu_map_nr_vcpus(map), i;
    unsigned int s;
    int r;

    if (n > TOP_MAX_VCPUS)
        n = TOP_MAX_VCPUS;
    if (!n)
        return 0;
    samples = calloc(n, sizeof(*samples));
    dom->vcpus = calloc(n, sizeof(*dom->vcpus));
    if (!samples || !dom->vcpus) {
        r = -ENOMEM;
        goto out;
    }
    r = xenstats_vcpu_map_snapshot_all(map, samples, n);
    if (r < 0)
        goto out;
    if (xenstats_vcpu_map_clock(map, &now) < 0)
        now = 0;
    *ret_now = now;
    for (i = 0; i < n; i++) {
        struct top_vcpu *v = &dom->vcpus[i];
        const struct xenstats_vcpu_sample *smp = &samples[i];

        v->vcpu = i;
        v->state = -1;
        if (xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE) == XENSTATS_COUNTER_VALID &&
            xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE) < TOP_NR_RUNSTATES)
            v->state = (int)xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE);
        xenstats_vcpu_sample_project(smp, now, times);
        for (s = 0; s < TOP_NR_RUNSTATES; s++) {
            v->time_valid[s] = xenstats_vcpu_sample_status(smp, s) == XENSTATS_COUNTER_VALID;
            v->time[s] = (double)times[s] / 1e9;
        }
        v->changes_valid =
            xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE_CHANGES) == XENSTATS_COUNTER_VALID;
        v->changes = xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE_CHANGES);
    }
    dom->nr_vcpu_rows = n;
out:
    free(samples);
    return r;
}

static char *format_stat(const struct xenstats_pv_stat *st)
{
    char buf[64];

    if (!st->valid)
        return strdup("-");
    switch (st->type) {
    case XENSTATS_PV_S64:
        snprintf(buf, sizeof(buf), "%lld", (long long)st->value.s64);
        break;
    case XENSTATS_PV_U64:
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)st->value.u64);
        break;
    case XENSTATS_PV_DOUBLE:
        /* Spelled as the agent's JSON spells them. */
        if (isnan(st->value.dbl))
            return strdup("NaN");
        if (isinf(st->value.dbl))
            return strdup(st->value.dbl > 0 ? "+Inf" : "-Inf");
        snprintf(buf, sizeof(buf), "%.6g", st->value.dbl);
        break;
    case XENSTATS_PV_ASCII:
        return top_escape(st->value.ascii, strnlen(st->value.ascii, 4 * TOP_MAX_STRING));
    default:
        return strdup("-");
    }
    return strdup(buf);
}

static char *escape_cstr(const char *s)
{
    return top_escape(s ? s : "", s ? strnlen(s, 4 * TOP_MAX_STRING) : 0);
}

static int fill_set(const struct xenstats_pv_set *pv, struct top_set *set)
{
    struct xenstats_pv_set_info info;
    struct xenstats_pv_stat st;
    const char *type;
    uint32_t k;

    xenstats_pv_set_get_info(pv, &info);
    set->provider = escape_cstr(info.provider);
    set->set = escape_cstr(info.set);
    set->state = escape_cstr(xenstats_pv_set_state_name(info.state));
    set->reason = escape_cstr(info.reason);
    if (!set->provider || !set->set || !set->state || !set->reason)
        return -ENOMEM;
    set->severity = top_set_severity_of(set->state);
    set->samples = info.samples;
    set->timeouts = info.timeouts;
    set->errors = info.errors;
    set->latency_valid = info.samples > 0;
    set->latency = (double)info.last_latency_ns / 1e9;
    if (!info.nr_stats)
        return 0;
    set->stats = calloc(info.nr_stats, sizeof(*set->stats));
    if (!set->stats)
        return -ENOMEM;
    for (k = 0; k < info.nr_stats && k < TOP_MAX_STATS; k++) {
        struct top_stat *out = &set->stats[set->nr_stats];

        if (xenstats_pv_set_get_stat(pv, k, &st) < 0)
            break;
        type = xenstats_pv_type_name(st.type);
        set->nr_stats++;
        out->name = escape_cstr(st.name);
        out->type = strdup(type ? type : "-");
        out->value = format_stat(&st);
        if (!out->name || !out->type || !out->value)
            return -ENOMEM;
    }
    return 0;
}

static int cmp_set(const void *a, const void *b)
{
    const struct top_set *x = a, *y = b;
    int r = strcmp(x->provider, y->provider);

    return r ? r : strcmp(x->set, y->set);
}

/* Hand each monitored set to its domain (sets of unlisted domains are left out). */
static int fill_sets(struct top_direct *d, struct top_snapshot *snap)
{
    size_t n = xenstats_monitor_nr_sets(d->monitor), i;
    struct top_domain *dom;
    struct top_set *grown;
    struct xenstats_pv_set_info info;
    int r;

    for (i = 0; i < n; i++) {
        const struct xenstats_pv_set *pv = xenstats_monitor_set(d->monitor, i);

        xenstats_pv_set_get_info(pv, &info);
        dom = (struct top_domain *)top_snapshot_find(snap, info.domid);
        if (!dom || dom->nr_sets >= TOP_MAX_SETS)
            continue;
        grown = realloc(dom->sets, (dom->nr_sets + 1) * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        dom->sets = grown;
        memset(&dom->sets[dom->nr_sets], 0, sizeof(*grown));
        dom->nr_sets++;
        r = fill_set(pv, &dom->sets[dom->nr_sets - 1]);
        if (r < 0)
            return r;
    }
    /* In the agent's order: by provider, then set. */
    for (i = 0; i < snap->nr_domains; i++)
        if (snap->domains[i].nr_sets > 1)
            qsort(snap->domains[i].sets, snap->domains[i].nr_sets, sizeof(struct top_set), cmp_set);
    return 0;
}

int top_direct_fetch(struct top_direct *d, struct top_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct xenstats_domain_info *list = NULL;
    struct top_snapshot *snap = NULL;
    struct timespec wall;
    bool have_clock = false;
    size_t n = 0, i;
    int r;

    r = xenstats_host_list_domains(d->host, &list, &n);
    if (r < 0) {
        say(err, errlen, "cannot list domains: %s", xenstats_strerror(r));
        return r;
    }
    if (n > TOP_MAX_DOMAINS)
        n = TOP_MAX_DOMAINS;
    snap = top_snapshot_new();
    if (!snap || !(snap->backend = strdup(xenstats_host_backend(d->host) == XENSTATS_BACKEND_EMU ? "emu" : "xen")) ||
        (n && !(snap->domains = calloc(n, sizeof(*snap->domains))))) {
        r = -ENOMEM;
        goto oom;
    }
    snap->monotonic_ns = monotonic_ns();
    clock_gettime(CLOCK_REALTIME, &wall);
    snap->time = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    for (i = 0; i < n; i++) {
        struct top_domain *dom = &snap->domains[snap->nr_domains++];
        struct xenstats_vcpu_map *map;
        uint64_t now = 0;
        int why = 0;

        dom->domid = list[i].domid;
        dom->nr_vcpus = list[i].nr_vcpus;
        /* Names come from the toolstack, but escape them like any other. */
        dom->name = top_escape(list[i].name, strnlen(list[i].name, sizeof(list[i].name)));
        if (!dom->name)
            goto oom;
        map = get_map(d, &list[i], &why);
        if (map)
            why = fill_vcpus(map, dom, &now);
        /*
         * The times are projected to the producer's clock: the interval
         * must be measured on it too (the emulated one moves in ticks).
         */
        if (now && !have_clock) {
            snap->monotonic_ns = now;
            have_clock = true;
        }
        if (why == -ENOMEM)
            goto oom;
        if (!map || why)
            dom->vcpu_source = strdup("none");
        else if (xenstats_vcpu_map_source(map) == XENSTATS_VCPU_SOURCE_HYPERCALL)
            dom->vcpu_source = strdup("hypercall");
        else
            dom->vcpu_source = strdup("resource");
        if (!dom->vcpu_source || (why && !(dom->vcpu_error = strdup(tool_vcpu_open_error(why)))))
            goto oom;
    }
    drop_unseen(d);
    free(list);
    list = NULL;
    /* Sorted by domid first, so sets find their domain. */
    r = top_snapshot_finish(snap, err, errlen);
    if (r == 0 && d->monitor) {
        xenstats_monitor_sample(d->monitor);
        if (fill_sets(d, snap) < 0)
            goto oom;
        r = top_snapshot_finish(snap, err, errlen); /* worst states */
    }
    if (r < 0) {
        top_snapshot_free(snap);
        return r;
    }
    *ret_snapshot = snap;
    return 0;
oom:
    free(list);
    top_snapshot_free(snap);
    say(err, errlen, "out of memory");
    return -ENOMEM;
}
