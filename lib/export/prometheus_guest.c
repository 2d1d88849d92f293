/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The xenstats_guest_<group>_<statistic> families: guest statistics that
 * follow the naming convention (docs/pv-stats.md), each a family of its
 * own.  Guest names reach family names here, but only names the
 * convention's classifiers accepted (lib/pv/parse.h), so a guest cannot
 * break the exposition or collide with our families.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "export/prometheus.h"
#include "pv/parse.h"

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
    const struct export_stat *stat;
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
static bool guest_value_ok(const struct export_stat *st, enum pv_stat_kind kind)
{
    double v = st->v.dbl;

    return kind != PV_STAT_COUNTER || st->type != XEN_PV_STATS_TYPE_DOUBLE || (v >= 0 && !isinf(v));
}

/* Every statistic that follows the convention, grouped by family in domain order. */
static int collect_guest(const struct export_snapshot *s, struct guest_index *x)
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
        const struct export_domain *d = &s->domains[i];

        for (uint32_t j = 0; j < d->nr_sets; ord += d->sets[j++].nr_stats) {
            const struct export_set *set = &d->sets[j];
            const char *device;
            int group = pv_set_group(set->set, &device);

            if (group < 0 || !export_set_values_exported(set))
                continue;
            for (uint32_t k = 0; k < set->nr_stats; k++) {
                const struct export_stat *st = &set->stats[k];
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
    export_prom_family_header(e, name, (size_t)n, g->kind == PV_STAT_COUNTER ? EXPORT_COUNTER : EXPORT_GAUGE,
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
    const struct export_stat *st = g->stat;

    guest_series(e, g, g->kind == PV_STAT_COUNTER ? "_total" : "");
    end_stat(e, st);
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
int export_prom_guest_families(struct emitter *e, const struct export_snapshot *s, bool **typed)
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
