/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Renderings of a snapshot.  Guest-chosen strings appear as label values
 * (escaped) or JSON strings (escaped); in metric names only the guest
 * families' xenstats_guest_<group>_<statistic>, and only from names the
 * naming convention's classifiers accepted (lib/pv/parse.h), so a guest
 * cannot break the exposition or collide with our families.
 * Hand-written appenders: /metrics of a thousand domains is ~100k lines.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "pv/parse.h"
#include "util/util.h"

/* The labels of each scope's samples, in this order. */
#define SCOPE_LABELS_HOST ""
#define SCOPE_LABELS_PCPU "cpu"
#define SCOPE_LABELS_DOMAIN "domid,domain"
#define SCOPE_LABELS_VIF "domid,domain,device"
#define SCOPE_LABELS_VBD "domid,domain,device"

const struct metric_decl metric_decls[METRIC_COUNT] = {
#define METRIC(id, n, k, u, l, h) [METRIC_##id] = {.name = n, .kind = METRIC_##k, .unit = u, .labels = l, .help = h},
#define FIGURE(id, sc, n, k, u, j, t, h)                                                                              \
    [METRIC_##id] = {.name = n, .kind = METRIC_##k, .unit = u, .labels = SCOPE_LABELS_##sc, .help = h},
#include "metrics.def"
#undef FIGURE
#undef METRIC
};

/*
 * A constant expression for "the unit is seconds" (strcmp() is not one):
 * no other unit of metrics.def is 7 letters long, and test_declarations
 * checks the flag against strcmp() for every figure.
 */
#define UNIT_IS_SECONDS(u) (sizeof(u) == sizeof("seconds"))

const struct figure_decl figure_decls[FIG_COUNT] = {
#define METRIC(id, n, k, u, l, h)
#define FIGURE(id, sc, n, k, u, j, t, h)                                                                              \
    [FIG_##id] = {.metric = METRIC_##id, .scope = SCOPE_##sc, .json = j, .top = t, .ns = UNIT_IS_SECONDS(u)},
#include "metrics.def"
#undef FIGURE
#undef METRIC
};

/* ---- buffer ------------------------------------------------------------- */

/* Hand what the buffer holds to its sink; false (and failed) when it refuses. */
static bool drain(struct strbuf *b)
{
    int r;

    if (!b->len)
        return true;
    r = b->sink(b->sink_ctx, b->data, b->len);
    if (r < 0) {
        b->failed = true;
        b->sink_error = r;
        return false;
    }
    b->len = 0;
    return true;
}

static bool grow(struct strbuf *b, size_t more)
{
    size_t cap;
    char *d;

    if (b->failed)
        return false;
    if (b->sink && b->len + more + 1 > b->cap && !drain(b))
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    cap = b->cap ? b->cap : b->sink ? RENDER_PIECE : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

/* The buffer is NUL-terminated only by finish(): appends stay cheap. */
static inline void put(struct strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap && !grow(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static inline void puts_(struct strbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static inline void putc_(struct strbuf *b, char c)
{
    if (b->len + 2 > b->cap && !grow(b, 1))
        return;
    b->data[b->len++] = c;
}

/* Room for n bytes in all, at once: a whole rendering (not with a sink). */
static void reserve(struct strbuf *b, size_t n)
{
    if (!b->sink && n > b->cap)
        grow(b, n - b->len);
}

/* The end of a rendering: NUL-terminated, or all of it given to the sink. */
static int finish(struct strbuf *b)
{
    if (!b->failed && b->sink)
        drain(b);
    if (b->failed)
        return b->sink_error ? b->sink_error : -ENOMEM;
    if (b->sink)
        return 0;
    if (!grow(b, 0))
        return -ENOMEM;
    b->data[b->len] = '\0';
    return 0;
}

static void put_u64(struct strbuf *b, uint64_t v)
{
    char tmp[24];
    int i = 24;

    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(b, tmp + i, (size_t)(24 - i));
}

static void put_s64(struct strbuf *b, int64_t v)
{
    if (v < 0) {
        putc_(b, '-');
        put_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(b, (uint64_t)v);
    }
}

/* Nanoseconds as exact decimal seconds: 1.500000000 */
static void put_ns_seconds(struct strbuf *b, uint64_t ns)
{
    char frac[10];
    uint64_t f = ns % 1000000000ULL;

    put_u64(b, ns / 1000000000ULL);
    for (int i = 8; i >= 0; i--, f /= 10)
        frac[i] = (char)('0' + f % 10);
    frac[9] = '\0';
    putc_(b, '.');
    put(b, frac, 9);
}

static void put_double(struct strbuf *b, double v, bool json)
{
    char tmp[40];
    int n;

    if (isnan(v)) {
        puts_(b, json ? "\"NaN\"" : "NaN");
        return;
    }
    if (isinf(v)) {
        puts_(b, v > 0 ? (json ? "\"+Inf\"" : "+Inf") : (json ? "\"-Inf\"" : "-Inf"));
        return;
    }
    /* the shortest form that reads back as the same double: 0.1, not 0.10000000000000001 */
    for (int digits = 15; digits <= 17; digits++) {
        n = snprintf(tmp, sizeof(tmp), "%.*g", digits, v);
        if (digits == 17 || strtod(tmp, NULL) == v)
            break;
    }
    put(b, tmp, (size_t)n);
}

void strbuf_free(struct strbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* What an invalid UTF-8 byte becomes in every output: U+FFFD. */
#define REPLACEMENT "\xef\xbf\xbd"

static void label_escape(struct strbuf *b, const char *s)
{
    const char *run = s;

    while (*s) {
        const char *esc = NULL;
        size_t n = 1;

        if (*s == '\\')
            esc = "\\\\";
        else if (*s == '"')
            esc = "\\\"";
        else if (*s == '\n')
            esc = "\\n";
        else if ((unsigned char)*s >= 0x80 && !(n = utf8_char_len(s)))
            esc = REPLACEMENT, n = 1;
        if (esc) {
            put(b, run, (size_t)(s - run));
            puts_(b, esc);
            run = s + n;
        }
        s += n;
    }
    put(b, run, (size_t)(s - run));
}

void strbuf_label_value(struct strbuf *b, const char *s)
{
    label_escape(b, s);
    finish(b);
}

/*
 * A JSON string: valid UTF-8 passes through unchanged, each byte of an
 * invalid sequence becomes U+FFFD, control characters are escaped.
 */
void strbuf_json_string(struct strbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    putc_(b, '"');
    while (s && *s) {
        unsigned char c = (unsigned char)*s;
        size_t n;

        if (c == '"' || c == '\\') {
            putc_(b, '\\');
            putc_(b, (char)c);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

            put(b, u, 6);
            s++;
        } else if (c < 0x80) {
            putc_(b, (char)c);
            s++;
        } else if ((n = utf8_char_len(s))) {
            put(b, s, n);
            s += n;
        } else {
            puts_(b, REPLACEMENT);
            s++;
        }
    }
    putc_(b, '"');
}

/* ---- Prometheus / OpenMetrics ---------------------------------------------- */

static const char *const source_names[] = {
    [XENSTATS_VCPU_SOURCE_NONE] = "none",
    [XENSTATS_VCPU_SOURCE_RESOURCE] = "resource",
    [XENSTATS_VCPU_SOURCE_HYPERCALL] = "hypercall",
};

struct emitter {
    struct strbuf *b;
    bool om;
    bool labelled; /* the current sample has a '{' open */
    /* label sets of each domain and each set, escaped once per render */
    const struct snapshot *snap;
    struct strbuf prefixes;
    size_t *dom_prefix; /* offsets into prefixes, NUL-separated */
    size_t *set_prefix;
    uint32_t *dom_len, *set_len;
    uint32_t *set_base; /* index of a domain's first set in set_prefix */
};

/* # HELP, # TYPE and # UNIT of a family named `name` (without _total/_info). */
static void family_header(struct emitter *e, const char *name, size_t name_len, enum metric_kind kind,
                          const char *unit, const char *help)
{
    const char *type = kind == METRIC_COUNTER ? "counter" : kind == METRIC_INFO ? (e->om ? "info" : "gauge") : "gauge";
    const char *suffix = "";

    /* Prometheus 0.0.4 names the family like its samples. */
    if (!e->om)
        suffix = kind == METRIC_COUNTER ? "_total" : kind == METRIC_INFO ? "_info" : "";
    puts_(e->b, "# HELP ");
    put(e->b, name, name_len);
    puts_(e->b, suffix);
    putc_(e->b, ' ');
    puts_(e->b, help);
    puts_(e->b, "\n# TYPE ");
    put(e->b, name, name_len);
    puts_(e->b, suffix);
    putc_(e->b, ' ');
    puts_(e->b, type);
    putc_(e->b, '\n');
    if (e->om && unit[0]) {
        puts_(e->b, "# UNIT ");
        put(e->b, name, name_len);
        putc_(e->b, ' ');
        puts_(e->b, unit);
        putc_(e->b, '\n');
    }
}

static void family(struct emitter *e, enum metric_id id)
{
    const struct metric_decl *d = &metric_decls[id];

    family_header(e, d->name, strlen(d->name), d->kind, d->unit, d->help);
}

/* Start a sample: name, suffix and '{'. Labels follow with label(). */
static void sample(struct emitter *e, enum metric_id id)
{
    const struct metric_decl *d = &metric_decls[id];

    puts_(e->b, d->name);
    if (d->kind == METRIC_COUNTER)
        puts_(e->b, "_total");
    else if (d->kind == METRIC_INFO)
        puts_(e->b, "_info");
    e->labelled = false;
}

static void open_label(struct emitter *e)
{
    putc_(e->b, e->labelled ? ',' : '{');
    e->labelled = true;
}

static void close_labels(struct emitter *e)
{
    puts_(e->b, e->labelled ? "} " : " ");
}

static void label(struct emitter *e, const char *name, const char *value, bool first)
{
    (void)first;
    open_label(e);
    puts_(e->b, name);
    puts_(e->b, "=\"");
    label_escape(e->b, value);
    putc_(e->b, '"');
}

static void label_u64(struct emitter *e, const char *name, uint64_t v, bool first)
{
    (void)first;
    open_label(e);
    puts_(e->b, name);
    puts_(e->b, "=\"");
    put_u64(e->b, v);
    putc_(e->b, '"');
}

static void end_u64(struct emitter *e, uint64_t v)
{
    close_labels(e);
    put_u64(e->b, v);
    putc_(e->b, '\n');
}

static void end_ns(struct emitter *e, uint64_t ns)
{
    close_labels(e);
    put_ns_seconds(e->b, ns);
    putc_(e->b, '\n');
}

static void end_double(struct emitter *e, double v)
{
    close_labels(e);
    put_double(e->b, v, false);
    putc_(e->b, '\n');
}

static void put_prefix(struct emitter *e, size_t offset, uint32_t len)
{
    open_label(e);
    put(e->b, e->prefixes.data + offset, len);
}

static void domain_labels(struct emitter *e, const struct snap_domain *d)
{
    size_t i = (size_t)(d - e->snap->domains);

    put_prefix(e, e->dom_prefix[i], e->dom_len[i]);
}

static void set_labels(struct emitter *e, const struct snap_domain *d, const struct snap_set *s)
{
    size_t i = e->set_base[d - e->snap->domains] + (size_t)(s - d->sets);

    put_prefix(e, e->set_prefix[i], e->set_len[i]);
}

/* Escape every domain's and set's labels once, not once per sample. */
static int make_prefixes(struct emitter *e, const struct snapshot *s)
{
    struct strbuf *b = &e->prefixes;
    uint32_t i, j, nsets = 0;

    e->snap = s;
    e->set_base = calloc(s->nr_domains + 1, sizeof(*e->set_base));
    e->dom_prefix = calloc(s->nr_domains + 1, sizeof(*e->dom_prefix));
    for (i = 0; i < s->nr_domains; i++) {
        e->set_base[i] = nsets;
        nsets += s->domains[i].nr_sets;
    }
    e->set_prefix = calloc(nsets + 1, sizeof(*e->set_prefix));
    e->dom_len = calloc(s->nr_domains + 1, sizeof(*e->dom_len));
    e->set_len = calloc(nsets + 1, sizeof(*e->set_len));
    if (!e->set_base || !e->dom_prefix || !e->set_prefix || !e->dom_len || !e->set_len)
        return -ENOMEM;
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];
        size_t start = b->len, dom_len;

        puts_(b, "domid=\"");
        put_u64(b, d->domid);
        puts_(b, "\",domain=\"");
        label_escape(b, d->name);
        putc_(b, '"');
        dom_len = b->len - start;
        putc_(b, '\0');
        e->dom_prefix[i] = start;
        e->dom_len[i] = (uint32_t)dom_len;
        for (j = 0; j < d->nr_sets; j++) {
            size_t here = b->len;

            /* the domain's labels again: room first, as growing may move
             * the buffer the copy is taken from (offsets stay valid) */
            if (!grow(b, dom_len))
                break;
            put(b, b->data + start, dom_len);
            puts_(b, ",provider=\"");
            label_escape(b, d->sets[j].provider);
            puts_(b, "\",set=\"");
            label_escape(b, d->sets[j].set);
            putc_(b, '"');
            e->set_len[e->set_base[i] + j] = (uint32_t)(b->len - here);
            putc_(b, '\0');
            e->set_prefix[e->set_base[i] + j] = here;
        }
    }
    return b->failed ? -ENOMEM : 0;
}

static void free_prefixes(struct emitter *e)
{
    strbuf_free(&e->prefixes);
    free(e->dom_prefix);
    free(e->set_prefix);
    free(e->set_base);
    free(e->dom_len);
    free(e->set_len);
}

static bool values_exported(const struct snap_set *s)
{
    /* Values of a set that stopped answering are not passed off as current. */
    return s->state == XENSTATS_PV_SET_ACTIVE || s->state == XENSTATS_PV_SET_SAMPLING ||
           s->state == XENSTATS_PV_SET_STALE;
}

static void set_counter(struct emitter *e, enum metric_id id, const struct snapshot *s, size_t field)
{
    family(e, id);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (uint32_t j = 0; j < d->nr_sets; j++) {
            const struct snap_set *set = &d->sets[j];

            sample(e, id);
            set_labels(e, d, set);
            end_u64(e, *(const uint64_t *)((const char *)set + field));
        }
    }
}

/* A per-domain PV stats budget figure: `value` picks it from the domain. */
static void domain_pv(struct emitter *e, enum metric_id id, const struct snapshot *s,
                      uint64_t (*value)(const struct xenstats_pv_domain_info *))
{
    family(e, id);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        if (!d->pv_monitored)
            continue;
        sample(e, id);
        domain_labels(e, d);
        end_u64(e, value(&d->pv));
    }
}

#define PV_FIELD(f)                                                                                                    \
    static uint64_t pv_##f(const struct xenstats_pv_domain_info *pv)                                                   \
    {                                                                                                                  \
        return pv->f;                                                                                                  \
    }
PV_FIELD(throttled)
PV_FIELD(sets_ignored)
PV_FIELD(rescans)
PV_FIELD(xenstore_reads)
PV_FIELD(budget_exceeded)
PV_FIELD(log_suppressed)
#undef PV_FIELD

static void end_figure(struct emitter *e, const struct snap_figs *f, enum figure_id id)
{
    if (figure_decls[id].ns)
        end_ns(e, f->v[id]);
    else
        end_u64(e, f->v[id]);
}

static void device_figures(struct emitter *e, enum figure_id id, const struct snap_domain *d,
                           const struct snap_device *devs, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        if (!devs[k].figs.valid[id])
            continue;
        sample(e, figure_decls[id].metric);
        domain_labels(e, d);
        label(e, "device", devs[k].name, false);
        end_figure(e, &devs[k].figs, id);
    }
}

/* Every FIGURE of metrics.def: one loop, whatever the figure. */
static void figures(struct emitter *e, const struct snapshot *s)
{
    for (int id = 0; id < FIG_COUNT; id++) {
        const struct figure_decl *fd = &figure_decls[id];

        family(e, fd->metric);
        if (fd->scope == SCOPE_HOST && s->host.valid[id]) {
            sample(e, fd->metric);
            end_figure(e, &s->host, (enum figure_id)id);
        }
        for (uint32_t i = 0; fd->scope == SCOPE_PCPU && i < s->nr_pcpus; i++) {
            if (!s->pcpus[i].valid[id])
                continue;
            sample(e, fd->metric);
            label_u64(e, "cpu", i, true);
            end_figure(e, &s->pcpus[i], (enum figure_id)id);
        }
        for (uint32_t i = 0; fd->scope >= SCOPE_DOMAIN && i < s->nr_domains; i++) {
            const struct snap_domain *d = &s->domains[i];

            if (fd->scope == SCOPE_VIF) {
                device_figures(e, (enum figure_id)id, d, d->vifs, d->nr_vifs);
            } else if (fd->scope == SCOPE_VBD) {
                device_figures(e, (enum figure_id)id, d, d->vbds, d->nr_vbds);
            } else if (d->figs.valid[id]) {
                sample(e, fd->metric);
                domain_labels(e, d);
                end_figure(e, &d->figs, (enum figure_id)id);
            }
        }
    }
}

static const char *const state_names[6] = {"running", "blocked", "paused", "shutdown", "crashed", "dying"};
static const char *const shutdown_names[6] = {"poweroff", "reboot", "suspend", "crash", "watchdog", "soft_reset"};

static const char *shutdown_name(uint32_t reason)
{
    return reason < 6 ? shutdown_names[reason] : "unknown";
}

void uuid_format(const uint8_t uuid[16], char out[37])
{
    static const char hex[] = "0123456789abcdef";
    int o = 0;

    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[uuid[i] >> 4];
        out[o++] = hex[uuid[i] & 15];
    }
    out[o] = '\0';
}

static void domain_state(struct emitter *e, const struct snapshot *s)
{
    family(e, METRIC_DOMAIN_STATE);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        for (unsigned int f = 0; f < 6; f++) {
            sample(e, METRIC_DOMAIN_STATE);
            domain_labels(e, &s->domains[i]);
            label(e, "state", state_names[f], false);
            end_u64(e, (s->domains[i].flags >> f) & 1);
        }
    }
    family(e, METRIC_DOMAIN_SHUTDOWN);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        if (!(s->domains[i].flags & XENSTATS_DOMAIN_SHUTDOWN))
            continue;
        sample(e, METRIC_DOMAIN_SHUTDOWN);
        domain_labels(e, &s->domains[i]);
        label(e, "reason", shutdown_name(s->domains[i].shutdown_reason), false);
        end_u64(e, 1);
    }
}


/* ---- guest statistics by the naming convention (docs/pv-stats.md) ---------- */

#define GUEST_PREFIX "xenstats_guest_"

/* One sample of a xenstats_guest_<group>_<base> family. */
struct guest_sample {
    const char *group, *base; /* into the set's and the statistic's names */
    uint8_t group_len, base_len;
    enum pv_stat_kind kind;
    enum pv_unit unit;
    uint32_t dom;
    uint32_t ord;  /* the statistic's place among all of the snapshot's (struct guest_index) */
    uint32_t next; /* the family's next sample, in domain order; NONE ends */
    const char *provider, *device; /* device NULL when the set has none */
    const struct snap_stat *stat;
    double created; /* the set's; 0: unknown */
};

/* A family: its name, its samples as a list, whether any guest made it a counter. */
struct guest_family {
    const char *group, *base;
    uint8_t group_len, base_len;
    uint32_t first, last;
    bool counter;
};

#define NONE UINT32_MAX

struct guest_index {
    struct guest_sample *samples;
    struct guest_family *families;
    uint32_t *table; /* open addressing: family numbers, NONE when free */
    size_t nr_samples, cap_samples, nr_families, cap_families, table_size;
    /*
     * typed[n]: statistic n of the snapshot (every statistic of every set
     * of every domain, in order, counted whatever its state) was exported
     * in a family of its own, so not in xenstats_pv_value.
     */
    bool *typed;
};

static int cmp_span(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);

    return c ? c : (alen > blen) - (alen < blen);
}

static bool same_family(const struct guest_sample *a, const struct guest_sample *b)
{
    return a->group_len == b->group_len && a->base_len == b->base_len && !memcmp(a->group, b->group, a->group_len) &&
           !memcmp(a->base, b->base, a->base_len);
}

static uint64_t family_hash(const struct guest_sample *g)
{
    uint64_t h = 1469598103934665603ULL;

    for (size_t i = 0; i < g->group_len; i++)
        h = (h ^ (unsigned char)g->group[i]) * 1099511628211ULL;
    h = (h ^ '_') * 1099511628211ULL;
    for (size_t i = 0; i < g->base_len; i++)
        h = (h ^ (unsigned char)g->base[i]) * 1099511628211ULL;
    return h;
}

static bool grow_array(void **p, size_t *cap, size_t size)
{
    size_t n = *cap ? *cap * 2 : 256;
    void *more = realloc(*p, n * size);

    if (!more)
        return false;
    *p = more;
    *cap = n;
    return true;
}

/* The family of sample `i` (the sample last added): found, or made. */
static int index_family(struct guest_index *x, uint32_t i)
{
    struct guest_sample *g = &x->samples[i];
    size_t slot;

    if ((x->nr_families + 1) * 2 > x->table_size) {
        size_t size = x->table_size ? x->table_size * 2 : 1024;
        uint32_t *t = malloc(size * sizeof(*t));

        if (!t)
            return -ENOMEM;
        memset(t, 0xff, size * sizeof(*t));
        for (size_t f = 0; f < x->nr_families; f++) {
            slot = family_hash(&x->samples[x->families[f].first]) & (size - 1);
            while (t[slot] != NONE)
                slot = (slot + 1) & (size - 1);
            t[slot] = (uint32_t)f;
        }
        free(x->table);
        x->table = t;
        x->table_size = size;
    }
    slot = family_hash(g) & (x->table_size - 1);
    while (x->table[slot] != NONE) {
        struct guest_family *f = &x->families[x->table[slot]];

        if (same_family(&x->samples[f->first], g)) {
            x->samples[f->last].next = i;
            f->last = i;
            f->counter |= g->kind == PV_STAT_COUNTER;
            return 0;
        }
        slot = (slot + 1) & (x->table_size - 1);
    }
    if (x->nr_families == x->cap_families && !grow_array((void **)&x->families, &x->cap_families, sizeof(*x->families)))
        return -ENOMEM;
    x->families[x->nr_families] = (struct guest_family){
        .group = g->group, .base = g->base, .group_len = g->group_len, .base_len = g->base_len,
        .first = i, .last = i, .counter = g->kind == PV_STAT_COUNTER,
    };
    x->table[slot] = (uint32_t)x->nr_families++;
    return 0;
}

/* A counter's value must be a number that can count: not NaN, not negative. */
static bool guest_value_ok(const struct snap_stat *st, enum pv_stat_kind kind)
{
    double v = st->v.dbl;

    return kind != PV_STAT_COUNTER || st->type != XEN_PV_STATS_TYPE_DOUBLE || (v >= 0 && !isinf(v));
}

/* Every statistic that follows the convention, grouped by family in domain order. */
static int collect_guest(const struct snapshot *s, struct guest_index *x)
{
    size_t most = 0;

    /* room for every statistic at once: no copying while collecting */
    for (uint32_t i = 0; i < s->nr_domains; i++)
        for (uint32_t j = 0; j < s->domains[i].nr_sets; j++)
            most += s->domains[i].sets[j].nr_stats;
    if (most >= NONE)
        return -ENOMEM;
    x->cap_samples = most ? most : 1;
    x->samples = malloc(x->cap_samples * sizeof(*x->samples));
    x->typed = calloc(x->cap_samples, sizeof(*x->typed));
    if (!x->samples || !x->typed)
        return -ENOMEM;
    for (uint32_t i = 0, ord = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (uint32_t j = 0; j < d->nr_sets; ord += d->sets[j++].nr_stats) {
            const struct snap_set *set = &d->sets[j];
            const char *device;
            int group = pv_set_group(set->set, &device);

            if (group < 0 || !values_exported(set))
                continue;
            for (uint32_t k = 0; k < set->nr_stats; k++) {
                const struct snap_stat *st = &set->stats[k];
                struct pv_stat_name name;

                if (!st->valid || pv_stat_classify(st->name, st->type, &name) < 0 || !guest_value_ok(st, name.kind))
                    continue;
                x->samples[x->nr_samples] = (struct guest_sample){
                    .group = set->set, .group_len = (uint8_t)group, .base = st->name,
                    .base_len = (uint8_t)name.base_len, .kind = name.kind, .unit = name.unit, .dom = i,
                    .ord = ord + k, .next = NONE,
                    .provider = set->provider, .device = device, .stat = st, .created = set->created,
                };
                if (index_family(x, (uint32_t)x->nr_samples++) < 0)
                    return -ENOMEM;
            }
        }
    }
    return 0;
}

static int cmp_family(const void *pa, const void *pb)
{
    const struct guest_family *a = pa, *b = pb;
    int c = cmp_span(a->group, a->group_len, b->group, b->group_len);

    return c ? c : cmp_span(a->base, a->base_len, b->base, b->base_len);
}

/* Samples of one domain in one family: by provider, then device. */
static int cmp_series(const void *pa, const void *pb)
{
    const struct guest_sample *a = *(const struct guest_sample *const *)pa;
    const struct guest_sample *b = *(const struct guest_sample *const *)pb;
    int c = strcmp(a->provider, b->provider);

    if (c)
        return c;
    if (!a->device || !b->device)
        return (a->device != NULL) - (b->device != NULL);
    return strcmp(a->device, b->device);
}

static void guest_family(struct emitter *e, const struct guest_sample *g)
{
    char name[sizeof(GUEST_PREFIX) + PV_GROUP_MAX + 1 + XEN_PV_STATS_NAME_MAX + 1];
    char help[sizeof(name) + 128];
    int n = snprintf(name, sizeof(name), GUEST_PREFIX "%.*s_%.*s", g->group_len, g->group, g->base_len, g->base);

    snprintf(help, sizeof(help), "Statistic %.*s%s of the guests' PV stats sets of group %.*s (reported by the guest).",
             g->base_len, g->base, g->kind == PV_STAT_COUNTER ? "_total" : "", g->group_len, g->group);
    family_header(e, name, (size_t)n, g->kind == PV_STAT_COUNTER ? METRIC_COUNTER : METRIC_GAUGE,
                  pv_unit_name(g->unit), help);
}

/* A guest family's sample name with `suffix`, and its labels. */
static void guest_series(struct emitter *e, const struct guest_sample *g, const char *suffix)
{
    puts_(e->b, GUEST_PREFIX);
    put(e->b, g->group, g->group_len);
    putc_(e->b, '_');
    put(e->b, g->base, g->base_len);
    puts_(e->b, suffix);
    e->labelled = false;
    domain_labels(e, &e->snap->domains[g->dom]);
    label(e, "provider", g->provider, false);
    if (g->device)
        label(e, "device", g->device, false);
}

static void guest_sample_line(struct emitter *e, const struct guest_sample *g)
{
    const struct snap_stat *st = g->stat;

    guest_series(e, g, g->kind == PV_STAT_COUNTER ? "_total" : "");
    if (st->type == XEN_PV_STATS_TYPE_S64) {
        close_labels(e);
        put_s64(e->b, st->v.s64);
        putc_(e->b, '\n');
    } else if (st->type == XEN_PV_STATS_TYPE_U64) {
        end_u64(e, st->v.u64);
    } else {
        end_double(e, st->v.dbl);
    }
    /* OpenMetrics: when the counter started, so that a provider publishing
     * again (restarted, or its domain restored) is seen as a reset */
    if (e->om && g->kind == PV_STAT_COUNTER && g->created > 0) {
        guest_series(e, g, "_created");
        end_double(e, g->created);
    }
}

/*
 * Every statistic that follows the convention, as a counter or a gauge
 * family of its own.  Guest names reach family names here, but only names
 * the convention's classifiers accepted ([a-z0-9_], behind our prefix), so
 * a guest can neither break the exposition nor reach a family of ours.
 * Where guests disagree on a family's kind (a gauge "x" and a counter
 * "x_total" are both family x in OpenMetrics) the counter is exported and
 * the gauge is left to xenstats_pv_value; of two samples with the same
 * labels (two sets of one name) the first is kept, the other left to
 * xenstats_pv_value too.  Grouped by a hash of the family name: a sort of
 * every sample cost 5 times the rest of the rendering at a thousand
 * domains.  *typed (the caller frees it) says which statistics were
 * exported here: every other numeric one is a sample of xenstats_pv_value,
 * so that each is exported once.
 */
static int guest_families(struct emitter *e, const struct snapshot *s, bool **typed)
{
    struct guest_index x = {0};
    const struct guest_sample **run = NULL;
    size_t cap_run = 0;
    int r = collect_guest(s, &x);

    if (r < 0)
        goto out;
    if (x.nr_families)
        qsort(x.families, x.nr_families, sizeof(*x.families), cmp_family);
    for (size_t f = 0; f < x.nr_families; f++) {
        enum pv_stat_kind kind = x.families[f].counter ? PV_STAT_COUNTER : PV_STAT_GAUGE;
        uint32_t i = x.families[f].first;
        bool header = false;

        while (i != NONE) {
            size_t n = 0;
            uint32_t dom = x.samples[i].dom;

            /* the run of this domain's samples, of the family's kind */
            for (; i != NONE && x.samples[i].dom == dom; i = x.samples[i].next) {
                if (x.samples[i].kind != kind)
                    continue;
                if (n == cap_run && !grow_array((void **)&run, &cap_run, sizeof(*run))) {
                    r = -ENOMEM;
                    goto out;
                }
                run[n++] = &x.samples[i];
            }
            if (n > 1)
                qsort(run, n, sizeof(*run), cmp_series);
            for (size_t k = 0; k < n; k++) {
                if (k && !cmp_series(&run[k - 1], &run[k]))
                    continue;
                if (!header)
                    guest_family(e, run[k]);
                header = true;
                guest_sample_line(e, run[k]);
                x.typed[run[k]->ord] = true;
            }
        }
    }
out:
    *typed = x.typed;
    free(run);
    free(x.samples);
    free(x.families);
    free(x.table);
    return r;
}

int render_prometheus(const struct snapshot *s, bool openmetrics, struct strbuf *out)
{
    struct emitter e = {.b = out, .om = openmetrics};
    uint32_t i, j, k, ord;
    bool *typed = NULL;
    unsigned int st;
    size_t estimate = 8192;
    int r;

    if (make_prefixes(&e, s) < 0) {
        free_prefixes(&e);
        return -ENOMEM;
    }
    /* about 110 bytes a line: avoid growing a large buffer many times */
    for (i = 0; i < s->nr_domains; i++) {
        estimate += 3000 + (size_t)s->domains[i].nr_vcpus * 1100 +
                    (size_t)(s->domains[i].nr_vifs + s->domains[i].nr_vbds) * 1000;
        for (j = 0; j < s->domains[i].nr_sets; j++)
            estimate += 1200 + (size_t)s->domains[i].sets[j].nr_stats * 160; /* one sample each */
    }
    reserve(out, out->len + estimate);

    family(&e, METRIC_BUILD);
    sample(&e, METRIC_BUILD);
    label(&e, "version", XENSTATS_VERSION, true);
    end_u64(&e, 1);
    family(&e, METRIC_AGENT_SAMPLES);
    sample(&e, METRIC_AGENT_SAMPLES);
    end_u64(&e, s->agent.samples);
    family(&e, METRIC_AGENT_SAMPLE_DURATION);
    sample(&e, METRIC_AGENT_SAMPLE_DURATION);
    end_ns(&e, (uint64_t)(s->agent.sample_duration * 1e9));
    family(&e, METRIC_AGENT_ERRORS);
    sample(&e, METRIC_AGENT_ERRORS);
    end_u64(&e, s->agent.errors);
    family(&e, METRIC_AGENT_SCRAPES);
    sample(&e, METRIC_AGENT_SCRAPES);
    end_u64(&e, s->agent.scrapes);
    family(&e, METRIC_AGENT_HTTP_REFUSED);
    sample(&e, METRIC_AGENT_HTTP_REFUSED);
    end_u64(&e, s->agent.http_refused);
    family(&e, METRIC_AGENT_HTTP_EVICTED);
    sample(&e, METRIC_AGENT_HTTP_EVICTED);
    end_u64(&e, s->agent.http_evicted);
    family(&e, METRIC_AGENT_DOMAINS);
    sample(&e, METRIC_AGENT_DOMAINS);
    end_u64(&e, s->nr_domains);
    family(&e, METRIC_AGENT_PROVIDERS);
    sample(&e, METRIC_AGENT_PROVIDERS);
    end_u64(&e, s->agent.providers);
    family(&e, METRIC_AGENT_PV_SETS);
    for (st = 0; st < XENSTATS_PV_NR_SET_STATES; st++) {
        sample(&e, METRIC_AGENT_PV_SETS);
        label(&e, "state", xenstats_pv_set_state_name((enum xenstats_pv_set_state)st), true);
        end_u64(&e, s->agent.sets_by_state[st]);
    }

    family(&e, METRIC_HOST);
    if (s->xen_version[0]) {
        sample(&e, METRIC_HOST);
        label(&e, "xen_version", s->xen_version, true);
        label(&e, "scheduler", s->scheduler, false);
        end_u64(&e, 1);
    }
    family(&e, METRIC_DOMAIN);
    for (i = 0; i < s->nr_domains; i++) {
        char uuid[37];

        uuid_format(s->domains[i].uuid, uuid);
        sample(&e, METRIC_DOMAIN);
        domain_labels(&e, &s->domains[i]);
        label(&e, "uuid", uuid, false);
        end_u64(&e, 1);
    }
    domain_state(&e, s);
    figures(&e, s);
    family(&e, METRIC_DOMAIN_VCPUS);
    for (i = 0; i < s->nr_domains; i++) {
        sample(&e, METRIC_DOMAIN_VCPUS);
        domain_labels(&e, &s->domains[i]);
        end_u64(&e, s->domains[i].nr_vcpus);
    }
    family(&e, METRIC_DOMAIN_VCPU_SOURCE);
    for (i = 0; i < s->nr_domains; i++) {
        for (st = 0; st < ARRAY_SIZE(source_names); st++) {
            sample(&e, METRIC_DOMAIN_VCPU_SOURCE);
            domain_labels(&e, &s->domains[i]);
            label(&e, "source", source_names[st], false);
            end_u64(&e, s->domains[i].vcpu_source == st);
        }
    }
    family(&e, METRIC_VCPU_RUNSTATE);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; d->vcpus && j < d->nr_vcpus; j++) {
            for (st = 0; st < XENSTATS_VCPU_NR_RUNSTATES; st++) {
                if (!d->vcpus[j].time_valid[st])
                    continue; /* inactive: no value, not zero */
                sample(&e, METRIC_VCPU_RUNSTATE);
                domain_labels(&e, d);
                label_u64(&e, "vcpu", j, false);
                label(&e, "runstate", xenstats_vcpu_runstate_name(st), false);
                end_ns(&e, d->vcpus[j].time_ns[st]);
            }
        }
    }
    family(&e, METRIC_VCPU_CHANGES);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; d->vcpus && j < d->nr_vcpus; j++) {
            if (!d->vcpus[j].changes_valid)
                continue;
            sample(&e, METRIC_VCPU_CHANGES);
            domain_labels(&e, d);
            label_u64(&e, "vcpu", j, false);
            end_u64(&e, d->vcpus[j].changes);
        }
    }
    family(&e, METRIC_VCPU_STATE);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; d->vcpus && j < d->nr_vcpus; j++) {
            if (d->vcpus[j].state >= XENSTATS_VCPU_NR_RUNSTATES)
                continue;
            for (st = 0; st < XENSTATS_VCPU_NR_RUNSTATES; st++) {
                sample(&e, METRIC_VCPU_STATE);
                domain_labels(&e, d);
                label_u64(&e, "vcpu", j, false);
                label(&e, "runstate", xenstats_vcpu_runstate_name(st), false);
                end_u64(&e, d->vcpus[j].state == st);
            }
        }
    }

    domain_pv(&e, METRIC_PV_DOMAIN_THROTTLED, s, pv_throttled);
    domain_pv(&e, METRIC_PV_DOMAIN_SETS_IGNORED, s, pv_sets_ignored);
    domain_pv(&e, METRIC_PV_DOMAIN_RESCANS, s, pv_rescans);
    domain_pv(&e, METRIC_PV_DOMAIN_XENSTORE_READS, s, pv_xenstore_reads);
    domain_pv(&e, METRIC_PV_DOMAIN_BUDGET_EXCEEDED, s, pv_budget_exceeded);
    domain_pv(&e, METRIC_PV_DOMAIN_LOG_SUPPRESSED, s, pv_log_suppressed);

    family(&e, METRIC_PV_SET_STATE);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; j++) {
            for (st = 0; st < XENSTATS_PV_NR_SET_STATES; st++) {
                sample(&e, METRIC_PV_SET_STATE);
                set_labels(&e, d, &d->sets[j]);
                label(&e, "state", xenstats_pv_set_state_name((enum xenstats_pv_set_state)st), false);
                end_u64(&e, d->sets[j].state == st);
            }
        }
    }
    family(&e, METRIC_PV_SET_STATISTICS);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; j++) {
            sample(&e, METRIC_PV_SET_STATISTICS);
            set_labels(&e, d, &d->sets[j]);
            end_u64(&e, d->sets[j].nr_stats);
        }
    }
    set_counter(&e, METRIC_PV_SET_SAMPLES, s, offsetof(struct snap_set, samples));
    set_counter(&e, METRIC_PV_SET_TIMEOUTS, s, offsetof(struct snap_set, timeouts));
    set_counter(&e, METRIC_PV_SET_ERRORS, s, offsetof(struct snap_set, errors));
    family(&e, METRIC_PV_SET_LATENCY);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; j++) {
            if (!d->sets[j].samples)
                continue;
            sample(&e, METRIC_PV_SET_LATENCY);
            set_labels(&e, d, &d->sets[j]);
            end_ns(&e, d->sets[j].latency_ns);
        }
    }
    /* the guest families first: what they export is left out of xenstats_pv_value */
    r = guest_families(&e, s, &typed);
    family(&e, METRIC_PV_VALUE);
    for (i = 0, ord = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; ord += d->sets[j++].nr_stats) {
            const struct snap_set *set = &d->sets[j];

            if (!values_exported(set))
                continue;
            for (k = 0; k < set->nr_stats; k++) {
                const struct snap_stat *st_ = &set->stats[k];

                if (!st_->valid || st_->type == XEN_PV_STATS_TYPE_ASCII || (typed && typed[ord + k]))
                    continue;
                sample(&e, METRIC_PV_VALUE);
                set_labels(&e, d, set);
                label(&e, "statistic", st_->name, false);
                label(&e, "type", xenstats_pv_type_name(st_->type), false);
                if (st_->type == XEN_PV_STATS_TYPE_S64) {
                    close_labels(&e);
                    put_s64(e.b, st_->v.s64);
                    putc_(e.b, '\n');
                } else if (st_->type == XEN_PV_STATS_TYPE_U64) {
                    end_u64(&e, st_->v.u64);
                } else {
                    end_double(&e, st_->v.dbl);
                }
            }
        }
    }
    family(&e, METRIC_PV_TEXT);
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; j++) {
            const struct snap_set *set = &d->sets[j];

            if (!values_exported(set))
                continue;
            for (k = 0; k < set->nr_stats; k++) {
                const struct snap_stat *st_ = &set->stats[k];

                if (!st_->valid || st_->type != XEN_PV_STATS_TYPE_ASCII)
                    continue;
                sample(&e, METRIC_PV_TEXT);
                set_labels(&e, d, set);
                label(&e, "statistic", st_->name, false);
                label(&e, "value", st_->ascii, false);
                end_u64(&e, 1);
            }
        }
    }
    free(typed);
    if (openmetrics)
        puts_(out, "# EOF\n");
    if (r == 0)
        r = finish(out);
    free_prefixes(&e);
    return r;
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_key(struct strbuf *b, const char *k, bool first)
{
    if (!first)
        putc_(b, ',');
    putc_(b, '"');
    puts_(b, k);
    puts_(b, "\":");
}

static void json_seconds(struct strbuf *b, bool valid, uint64_t ns)
{
    if (valid)
        put_ns_seconds(b, ns);
    else
        puts_(b, "null");
}

/* ,"key":value for each figure of the scope (null when not known) */
static void json_figures(struct strbuf *b, const struct snap_figs *f, enum figure_scope scope)
{
    for (int id = 0; id < FIG_COUNT; id++) {
        if (figure_decls[id].scope != scope)
            continue;
        json_key(b, figure_decls[id].json, false);
        if (!f->valid[id])
            puts_(b, "null");
        else if (figure_decls[id].ns)
            put_ns_seconds(b, f->v[id]);
        else
            put_u64(b, f->v[id]);
    }
}

static void json_devices(struct strbuf *b, const char *key, const struct snap_device *devs, uint32_t n,
                         enum figure_scope scope)
{
    json_key(b, key, false);
    putc_(b, '[');
    for (uint32_t k = 0; k < n; k++) {
        if (k)
            putc_(b, ',');
        puts_(b, "{\"device\":");
        strbuf_json_string(b, devs[k].name);
        json_key(b, "devid", false);
        put_u64(b, devs[k].devid);
        json_figures(b, &devs[k].figs, scope);
        putc_(b, '}');
    }
    putc_(b, ']');
}

int render_json(const struct snapshot *s, struct strbuf *b)
{
    uint32_t i, j, k;

    puts_(b, "{\"version\":1,\"host\":{\"backend\":");
    strbuf_json_string(b, s->backend);
    puts_(b, ",\"self_domid\":");
    put_u64(b, s->self_domid);
    json_key(b, "xen_version", false);
    if (s->xen_version[0])
        strbuf_json_string(b, s->xen_version);
    else
        puts_(b, "null");
    json_key(b, "scheduler", false);
    if (s->xen_version[0])
        strbuf_json_string(b, s->scheduler);
    else
        puts_(b, "null");
    json_figures(b, &s->host, SCOPE_HOST);
    json_key(b, "pcpus", false);
    putc_(b, '[');
    for (i = 0; i < s->nr_pcpus; i++) {
        if (i)
            putc_(b, ',');
        puts_(b, "{\"cpu\":");
        put_u64(b, i);
        json_figures(b, &s->pcpus[i], SCOPE_PCPU);
        putc_(b, '}');
    }
    puts_(b, "]},\"time\":");
    put_double(b, s->wall, true);
    puts_(b, ",\"monotonic_ns\":");
    put_u64(b, s->monotonic_ns);
    puts_(b, ",\"interval\":");
    put_double(b, s->interval, true);
    puts_(b, ",\"agent\":{\"samples\":");
    put_u64(b, s->agent.samples);
    puts_(b, ",\"sample_duration\":");
    put_double(b, s->agent.sample_duration, true);
    puts_(b, ",\"errors\":");
    put_u64(b, s->agent.errors);
    puts_(b, ",\"domains\":");
    put_u64(b, s->nr_domains);
    puts_(b, ",\"providers\":");
    put_u64(b, s->agent.providers);
    {
        uint64_t total = 0;

        for (k = 0; k < XENSTATS_PV_NR_SET_STATES; k++)
            total += s->agent.sets_by_state[k];
        puts_(b, ",\"pv_sets\":");
        put_u64(b, total);
        puts_(b, ",\"pv_sets_rejected\":");
        put_u64(b, s->agent.sets_by_state[XENSTATS_PV_SET_REJECTED]);
    }
    puts_(b, "},\"domains\":[");
    for (i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        if (i)
            putc_(b, ',');
        puts_(b, "{\"domid\":");
        put_u64(b, d->domid);
        json_key(b, "name", false);
        strbuf_json_string(b, d->name);
        json_key(b, "nr_vcpus", false);
        put_u64(b, d->nr_vcpus);
        {
            char uuid[37];
            bool first = true;

            uuid_format(d->uuid, uuid);
            json_key(b, "uuid", false);
            strbuf_json_string(b, uuid);
            json_key(b, "state", false);
            putc_(b, '[');
            for (k = 0; k < 6; k++) {
                if (!((d->flags >> k) & 1))
                    continue;
                if (!first)
                    putc_(b, ',');
                strbuf_json_string(b, state_names[k]);
                first = false;
            }
            putc_(b, ']');
            json_key(b, "shutdown_reason", false);
            if (d->flags & XENSTATS_DOMAIN_SHUTDOWN)
                strbuf_json_string(b, shutdown_name(d->shutdown_reason));
            else
                puts_(b, "null");
        }
        json_figures(b, &d->figs, SCOPE_DOMAIN);
        json_devices(b, "vifs", d->vifs, d->nr_vifs, SCOPE_VIF);
        json_devices(b, "vbds", d->vbds, d->nr_vbds, SCOPE_VBD);
        json_key(b, "vcpu_source", false);
        strbuf_json_string(b, source_names[d->vcpu_source]);
        json_key(b, "vcpu_error", false);
        if (d->vcpu_error)
            strbuf_json_string(b, d->vcpu_error);
        else
            puts_(b, "null");
        json_key(b, "vcpus", false);
        putc_(b, '[');
        for (j = 0; d->vcpus && j < d->nr_vcpus; j++) {
            const struct snap_vcpu *v = &d->vcpus[j];

            if (j)
                putc_(b, ',');
            puts_(b, "{\"vcpu\":");
            put_u64(b, j);
            json_key(b, "state", false);
            if (v->state < XENSTATS_VCPU_NR_RUNSTATES)
                strbuf_json_string(b, xenstats_vcpu_runstate_name(v->state));
            else
                puts_(b, "null");
            for (k = 0; k < XENSTATS_VCPU_NR_RUNSTATES; k++) {
                json_key(b, xenstats_vcpu_runstate_name(k), false);
                json_seconds(b, v->time_valid[k], v->time_ns[k]);
            }
            json_key(b, "state_changes", false);
            if (v->changes_valid)
                put_u64(b, v->changes);
            else
                puts_(b, "null");
            putc_(b, '}');
        }
        putc_(b, ']');
        json_key(b, "pv_budget", false);
        if (d->pv_monitored) {
            puts_(b, "{\"throttled\":");
            puts_(b, d->pv.throttled ? "true" : "false");
            json_key(b, "sets_rejected", false);
            put_u64(b, d->pv.sets_rejected);
            json_key(b, "sets_ignored", false);
            put_u64(b, d->pv.sets_ignored);
            json_key(b, "rescans", false);
            put_u64(b, d->pv.rescans);
            json_key(b, "xenstore_reads", false);
            put_u64(b, d->pv.xenstore_reads);
            json_key(b, "budget_exceeded", false);
            put_u64(b, d->pv.budget_exceeded);
            json_key(b, "log_suppressed", false);
            put_u64(b, d->pv.log_suppressed);
            putc_(b, '}');
        } else {
            puts_(b, "null");
        }
        json_key(b, "pv_sets", false);
        putc_(b, '[');
        for (j = 0; j < d->nr_sets; j++) {
            const struct snap_set *set = &d->sets[j];

            if (j)
                putc_(b, ',');
            puts_(b, "{\"provider\":");
            strbuf_json_string(b, set->provider);
            json_key(b, "set", false);
            strbuf_json_string(b, set->set);
            json_key(b, "state", false);
            strbuf_json_string(b, xenstats_pv_set_state_name(set->state));
            json_key(b, "reason", false);
            strbuf_json_string(b, set->reason);
            json_key(b, "samples", false);
            put_u64(b, set->samples);
            json_key(b, "timeouts", false);
            put_u64(b, set->timeouts);
            json_key(b, "errors", false);
            put_u64(b, set->errors);
            json_key(b, "latency", false);
            json_seconds(b, set->samples > 0, set->latency_ns);
            json_key(b, "created", false);
            if (set->created > 0)
                put_double(b, set->created, false);
            else
                puts_(b, "null");
            json_key(b, "stats", false);
            putc_(b, '[');
            for (k = 0; k < set->nr_stats; k++) {
                const struct snap_stat *st = &set->stats[k];

                if (k)
                    putc_(b, ',');
                puts_(b, "{\"name\":");
                strbuf_json_string(b, st->name);
                json_key(b, "type", false);
                strbuf_json_string(b, xenstats_pv_type_name(st->type));
                json_key(b, "value", false);
                if (!st->valid)
                    puts_(b, "null");
                else if (st->type == XEN_PV_STATS_TYPE_S64)
                    put_s64(b, st->v.s64);
                else if (st->type == XEN_PV_STATS_TYPE_U64)
                    put_u64(b, st->v.u64);
                else if (st->type == XEN_PV_STATS_TYPE_DOUBLE)
                    put_double(b, st->v.dbl, true);
                else
                    strbuf_json_string(b, st->ascii);
                putc_(b, '}');
            }
            puts_(b, "]}");
        }
        puts_(b, "]}");
    }
    puts_(b, "]}\n");
    return finish(b);
}

/* ---- snapshots -------------------------------------------------------------- */

struct snapshot *snapshot_new(void)
{
    struct snapshot *s = calloc(1, sizeof(*s));

    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->refs = 1;
    return s;
}

struct snapshot *snapshot_ref(struct snapshot *s)
{
    pthread_mutex_lock(&s->lock);
    s->refs++;
    pthread_mutex_unlock(&s->lock);
    return s;
}

static void snapshot_free(struct snapshot *s)
{
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        struct snap_domain *d = &s->domains[i];

        for (uint32_t j = 0; j < d->nr_sets; j++) {
            struct snap_set *set = &d->sets[j];

            for (uint32_t k = 0; !set->strings && k < set->nr_stats; k++) {
                free(set->stats[k].name);
                free(set->stats[k].ascii);
            }
            free(set->strings);
            free(set->stats);
            free(set->provider);
            free(set->set);
            free(set->reason);
        }
        free(d->sets);
        free(d->vifs);
        free(d->vbds);
        free(d->vcpus);
        free(d->vcpu_error);
    }
    free(s->domains);
    free(s->pcpus);
    for (int f = 0; f < 3; f++) {
        free(s->text[f]);
        free(s->encoded[f]);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void snapshot_unref(struct snapshot *s)
{
    bool last;

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (last)
        snapshot_free(s);
}

/* The rendering, made now if it was not; s->lock held. */
static const char *render_locked(struct snapshot *s, enum render_format format)
{
    if (!s->text[format]) {
        struct strbuf b = {0};
        int r = format == RENDER_JSON ? render_json(s, &b) : render_prometheus(s, format == RENDER_OPENMETRICS, &b);

        if (r == 0) {
            s->text[format] = b.data;
            s->text_len[format] = b.len;
        } else {
            strbuf_free(&b);
        }
    }
    return s->text[format];
}

const char *snapshot_render(struct snapshot *s, enum render_format format, size_t *ret_len)
{
    const char *text;

    pthread_mutex_lock(&s->lock);
    text = render_locked(s, format);
    if (text)
        *ret_len = s->text_len[format];
    pthread_mutex_unlock(&s->lock);
    if (!text)
        errno = ENOMEM;
    return text;
}

int snapshot_render_to(const struct snapshot *s, enum render_format format, render_sink *sink, void *ctx)
{
    struct strbuf b = {.sink = sink, .sink_ctx = ctx};
    int r = format == RENDER_JSON ? render_json(s, &b) : render_prometheus(s, format == RENDER_OPENMETRICS, &b);

    strbuf_free(&b);
    return r;
}

const char *snapshot_render_encoded(struct snapshot *s, enum render_format format, snapshot_encoder *encode,
                                    size_t *ret_len)
{
    const char *data;
    int r = 0;

    pthread_mutex_lock(&s->lock);
    if (!s->encoded[format]) {
        char *out = NULL;
        size_t len = 0;

        /* the encoder renders in pieces: the whole text is never held */
        r = encode(s, format, &out, &len);
        if (r == 0) {
            s->encoded[format] = out;
            s->encoded_len[format] = len;
        }
    }
    data = s->encoded[format];
    if (data)
        *ret_len = s->encoded_len[format];
    pthread_mutex_unlock(&s->lock);
    if (!data)
        errno = r < 0 ? -r : ENOMEM;
    return data;
}

void metrics_reference(FILE *out)
{
    fprintf(out, "<!-- SPDX-License-Identifier: LGPL-2.1-or-later -->\n"
                 "<!-- Generated by `xenstats agent --list-metrics` from lib/export/metrics.def; do not edit. -->\n"
                 "# Metrics of xenstats agent\n\n"
                 "Counters carry `_total` and info metrics `_info` on their samples (and, in the\n"
                 "Prometheus 0.0.4 text format, on their family names too). Units are base units.\n\n"
                 "| metric | type | unit | labels | meaning |\n|---|---|---|---|---|\n");
    for (int i = 0; i < METRIC_COUNT; i++) {
        const struct metric_decl *d = &metric_decls[i];
        const char *suffix = d->kind == METRIC_COUNTER ? "_total" : d->kind == METRIC_INFO ? "_info" : "";

        fprintf(out, "| `%s%s` | %s | %s | %s | %s |\n", d->name, suffix,
                d->kind == METRIC_COUNTER ? "counter" : d->kind == METRIC_INFO ? "info" : "gauge",
                d->unit[0] ? d->unit : "-", d->labels[0] ? d->labels : "-", d->help);
    }    fprintf(out, "| `" GUEST_PREFIX "<group>_<statistic>` | counter or gauge | from the name | "
                 "domid,domain,provider,device | A guest statistic that follows the naming convention of "
                 "pv-stats.md, one family per group and statistic (below). |\n");
    fprintf(out, "\n## Guest statistics\n\n"
                 "A numeric statistic of a PV stats set whose name is `<group>` or `<group> <device>`, when the\n"
                 "statistic's name follows the naming convention\n"
                 "([pv-stats.md](pv-stats.md#names-for-prometheus-convention)), is a sample of the family\n"
                 "`" GUEST_PREFIX "<group>_<statistic>`:\n\n"
                 "- a **counter** when the statistic's name ends in `_total` (the family is named without it,\n"
                 "  its samples with it), otherwise a **gauge**;\n"
                 "- its **unit** is the last word of the name before `_total` when that is one of");
    for (int u = PV_UNIT_NONE + 1; u < PV_UNIT_COUNT_; u++)
        fprintf(out, "%s `%s`", u == PV_UNIT_NONE + 1 ? "" : ",", pv_unit_name((enum pv_unit)u));
    fprintf(out, "\n  (OpenMetrics `# UNIT`);\n"
                 "- labels `domid`, `domain`, `provider`, and `device` when the set has one.\n\n"
                 "Every other numeric statistic is a sample of `xenstats_pv_value`, labelled with the guest's own\n"
                 "provider, set and statistic names: those of a provider that follows the design literally, names\n"
                 "outside the convention, a gauge whose family another guest's counter made a counter (`x`\n"
                 "against `x_total`), a second set of the same name, and a DOUBLE counter that cannot count (NaN,\n"
                 "infinite, negative) in that sample. A statistic is a sample of one family only.\n\n"
                 "Example: statistic `rx_bytes_total` of set `net eth0` is\n"
                 "`" GUEST_PREFIX "net_rx_bytes_total{domid=\"1\",domain=\"web\",provider=\"xenstats-publish\","
                 "device=\"eth0\"}`.\n"
                 "What `xenstats publish` sends is in [publish.md](publish.md). Guest values are reported by\n"
                 "the guest: use them for the guest's own view, and the hypervisor's and the backends'\n"
                 "figures above where a guest must not be trusted.\n"
                 "\n"
                 "## Following a guest across save, restore, migration and reboot\n"
                 "\n"
                 "Each of these gives the guest a new domid (its name and UUID stay), new backend devices\n"
                 "and a new PV stats publication, so every series of the guest starts again under the new\n"
                 "`domid` label, from zero, and the old domid's series end. Counters thus restart honestly:\n"
                 "`rate()` never sees a drop inside one series. In OpenMetrics (what Prometheus asks for),\n"
                 "the guest counters also carry `_created`, the time their set was attached, so a provider\n"
                 "that publishes again under the same labels (restarted) is seen as a reset even between two\n"
                 "scrapes.\n"
                 "\n"
                 "`xenstats_domain_info` carries the UUID, which never changes. Join on it to follow a guest\n"
                 "whatever its domid, e.g. the CPU use of each guest by UUID, across migrations:\n"
                 "\n"
                 "```\n"
                 "sum by (uuid) (\n"
                 "    rate(xenstats_domain_cpu_seconds_total[5m])\n"
                 "  * on (instance, domid) group_left (uuid) max by (instance, domid, uuid) (xenstats_domain_info)\n"
                 ")\n"
                 "```\n"
                 "\n"
                 "and a guest statistic by name and UUID, such as its received bytes:\n"
                 "\n"
                 "```\n"
                 "sum by (domain, uuid) (\n"
                 "    rate(xenstats_guest_net_rx_bytes_total[5m])\n"
                 "  * on (instance, domid) group_left (uuid) max by (instance, domid, uuid) (xenstats_domain_info)\n"
                 ")\n"
                 "```\n"
                 "\n"
                 "(`max by (instance, domid, uuid)` keeps of the info metric only what the join needs: a\n"
                 "domid is one domain at a time on one host.) After a restore the sets show again within two sample intervals\n"
                 "([pv-stats.md](pv-stats.md#lifecycle)); a paused domain keeps its sets' states and last\n"
                 "values, and its vCPUs are not running.\n");
}
