/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the Prometheus/OpenMetrics writer's two files share: the state of
 * one rendering and the writers of a sample's parts, inline because every
 * sample line of a thousand domains goes through them.
 */
#ifndef XENSTATS_EXPORT_PROMETHEUS_H
#define XENSTATS_EXPORT_PROMETHEUS_H

#include "export/private.h"

struct emitter {
    struct export_strbuf *b;
    bool om;
    bool labelled; /* the current sample has a '{' open */
    /* label sets of each domain and each set, escaped once per render */
    const struct export_snapshot *snap;
    struct export_strbuf prefixes;
    size_t *dom_prefix; /* offsets into prefixes, NUL-separated */
    size_t *set_prefix;
    uint32_t *dom_len, *set_len;
    uint32_t *set_base; /* index of a domain's first set in set_prefix */
};


/* # HELP, # TYPE and # UNIT of a family named `name` (without _total/_info). */
void export_prom_family_header(struct emitter *e, const char *name, size_t name_len, enum export_metric_kind kind,
                               const char *unit, const char *help);

static inline void open_label(struct emitter *e)
{
    putc_(e->b, e->labelled ? ',' : '{');
    e->labelled = true;
}

static inline void close_labels(struct emitter *e)
{
    puts_(e->b, e->labelled ? "} " : " ");
}

static inline void label(struct emitter *e, const char *name, const char *value, bool first)
{
    (void)first;
    open_label(e);
    puts_(e->b, name);
    puts_(e->b, "=\"");
    export_strbuf_label(e->b, value);
    putc_(e->b, '"');
}

static inline void label_u64(struct emitter *e, const char *name, uint64_t v, bool first)
{
    (void)first;
    open_label(e);
    puts_(e->b, name);
    puts_(e->b, "=\"");
    put_u64(e->b, v);
    putc_(e->b, '"');
}

static inline void end_u64(struct emitter *e, uint64_t v)
{
    close_labels(e);
    put_u64(e->b, v);
    putc_(e->b, '\n');
}

static inline void end_ns(struct emitter *e, uint64_t ns)
{
    close_labels(e);
    put_ns_seconds(e->b, ns);
    putc_(e->b, '\n');
}

static inline void end_double(struct emitter *e, double v)
{
    close_labels(e);
    export_strbuf_double(e->b, v, false);
    putc_(e->b, '\n');
}

/* The value of a guest's numeric statistic, and the end of its sample. */
static inline void end_stat(struct emitter *e, const struct export_stat *st)
{
    if (st->type == XEN_PV_STATS_TYPE_S64) {
        close_labels(e);
        put_s64(e->b, st->v.s64);
        putc_(e->b, '\n');
    } else if (st->type == XEN_PV_STATS_TYPE_U64) {
        end_u64(e, st->v.u64);
    } else {
        end_double(e, st->v.dbl);
    }
}

static inline void put_prefix(struct emitter *e, size_t offset, uint32_t len)
{
    open_label(e);
    put(e->b, e->prefixes.data + offset, len);
}

static inline void domain_labels(struct emitter *e, const struct export_domain *d)
{
    size_t i = (size_t)(d - e->snap->domains);

    put_prefix(e, e->dom_prefix[i], e->dom_len[i]);
}

static inline void set_labels(struct emitter *e, const struct export_domain *d, const struct export_set *s)
{
    size_t i = e->set_base[d - e->snap->domains] + (size_t)(s - d->sets);

    put_prefix(e, e->set_prefix[i], e->set_len[i]);
}


static inline bool export_set_values_exported(const struct export_set *s)
{
    /* Values of a set that stopped answering are not passed off as current. */
    return s->state == XENSTATS_PV_SET_ACTIVE || s->state == XENSTATS_PV_SET_SAMPLING ||
           s->state == XENSTATS_PV_SET_STALE;
}

/*
 * The xenstats_guest_ families; *typed (the caller frees it) says which
 * statistics they exported, so that xenstats_pv_value leaves them out.
 */
int export_prom_guest_families(struct emitter *e, const struct export_snapshot *s, bool **typed);

#endif
