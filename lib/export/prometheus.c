/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prometheus text 0.0.4 and OpenMetrics 1.0.  Every FIGURE of metrics.def
 * is one family, written by one loop whatever the figure; the families of
 * a shape of their own (METRIC) are written here, the guests' own in
 * prometheus_guest.c.  Guest-chosen strings appear only as label values,
 * escaped.
 */
#include <stdlib.h>

#include "export/prometheus.h"
#include "util/util.h"

void export_prom_family_header(struct emitter *e, const char *name, size_t name_len, enum export_metric_kind kind,
                               const char *unit, const char *help)
{
    const char *type = kind == EXPORT_COUNTER ? "counter" : kind == EXPORT_INFO ? (e->om ? "info" : "gauge") : "gauge";
    const char *suffix = "";

    /* Prometheus 0.0.4 names the family like its samples. */
    if (!e->om)
        suffix = kind == EXPORT_COUNTER ? "_total" : kind == EXPORT_INFO ? "_info" : "";
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

static void family(struct emitter *e, enum export_metric_id id)
{
    const struct export_metric_decl *d = &export_metric_decls[id];

    export_prom_family_header(e, d->name, strlen(d->name), d->kind, d->unit, d->help);
}

/* Start a sample: name, suffix and '{'. Labels follow with label(). */
static void sample(struct emitter *e, enum export_metric_id id)
{
    const struct export_metric_decl *d = &export_metric_decls[id];

    puts_(e->b, d->name);
    if (d->kind == EXPORT_COUNTER)
        puts_(e->b, "_total");
    else if (d->kind == EXPORT_INFO)
        puts_(e->b, "_info");
    e->labelled = false;
}

/* Escape every domain's and set's labels once, not once per sample. */
static int make_prefixes(struct emitter *e, const struct export_snapshot *s)
{
    struct export_strbuf *b = &e->prefixes;
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
        const struct export_domain *d = &s->domains[i];
        size_t start = b->len, dom_len;

        puts_(b, "domid=\"");
        put_u64(b, d->domid);
        puts_(b, "\",domain=\"");
        export_strbuf_label(b, d->name);
        putc_(b, '"');
        dom_len = b->len - start;
        putc_(b, '\0');
        e->dom_prefix[i] = start;
        e->dom_len[i] = (uint32_t)dom_len;
        for (j = 0; j < d->nr_sets; j++) {
            size_t here = b->len;

            /* the domain's labels again: room first, as growing may move
             * the buffer the copy is taken from (offsets stay valid) */
            if (!export_strbuf_grow(b, dom_len))
                break;
            put(b, b->data + start, dom_len);
            puts_(b, ",provider=\"");
            export_strbuf_label(b, d->sets[j].provider);
            puts_(b, "\",set=\"");
            export_strbuf_label(b, d->sets[j].set);
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
    export_strbuf_free(&e->prefixes);
    free(e->dom_prefix);
    free(e->set_prefix);
    free(e->set_base);
    free(e->dom_len);
    free(e->set_len);
}

static void end_figure(struct emitter *e, const struct export_figs *f, enum export_figure_id id)
{
    if (export_figure_decls[id].ns)
        end_ns(e, export_figs_get(f, id));
    else
        end_u64(e, export_figs_get(f, id));
}

static void device_figure(struct emitter *e, enum export_figure_id id, const struct export_domain *d,
                          const struct export_device *devs, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        if (!export_figs_known(&devs[k].figs, id))
            continue;
        sample(e, export_figure_decls[id].metric);
        domain_labels(e, d);
        label(e, "device", devs[k].name, false);
        end_figure(e, &devs[k].figs, id);
    }
}

/* The samples of figure `id` of a domain's scopes (domain, devices, PV budget, sets). */
static void domain_figure(struct emitter *e, enum export_figure_id id, const struct export_domain *d)
{
    const struct export_figure_decl *fd = &export_figure_decls[id];

    if (fd->scope == EXPORT_SCOPE_VIF) {
        device_figure(e, id, d, d->vifs, d->nr_vifs);
    } else if (fd->scope == EXPORT_SCOPE_VBD) {
        device_figure(e, id, d, d->vbds, d->nr_vbds);
    } else if (fd->scope == EXPORT_SCOPE_SET) {
        for (uint32_t j = 0; j < d->nr_sets; j++) {
            if (!export_figs_known(&d->sets[j].figs, id))
                continue;
            sample(e, fd->metric);
            set_labels(e, d, &d->sets[j]);
            end_figure(e, &d->sets[j].figs, id);
        }
    } else {
        const struct export_figs *f = fd->scope == EXPORT_SCOPE_PV ? &d->pv : &d->figs;

        if (!export_figs_known(f, id) || (fd->scope == EXPORT_SCOPE_PV && !d->pv_monitored))
            return;
        sample(e, fd->metric);
        domain_labels(e, d);
        end_figure(e, f, id);
    }
}

/* Every FIGURE of the scopes first..last, in the order of metrics.def: one
 * loop, whatever the figure. */
static void figures(struct emitter *e, const struct export_snapshot *s, enum export_figure_scope first, enum export_figure_scope last)
{
    struct export_figs agent;

    if (first == EXPORT_SCOPE_AGENT)
        export_agent_figures(s, &agent);
    for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
        const struct export_figure_decl *fd = &export_figure_decls[id];

        if (fd->scope < first || fd->scope > last || !export_metric_decls[fd->metric].name[0])
            continue;
        family(e, fd->metric);
        if ((fd->scope == EXPORT_SCOPE_AGENT && export_figs_known(&agent, (enum export_figure_id)id)) ||
            (fd->scope == EXPORT_SCOPE_HOST && export_figs_known(&s->host, (enum export_figure_id)id))) {
            sample(e, fd->metric);
            end_figure(e, fd->scope == EXPORT_SCOPE_AGENT ? &agent : &s->host, (enum export_figure_id)id);
        }
        for (uint32_t i = 0; fd->scope == EXPORT_SCOPE_PCPU && i < s->nr_pcpus; i++) {
            if (!export_figs_known(&s->pcpus[i], (enum export_figure_id)id))
                continue;
            sample(e, fd->metric);
            label_u64(e, "cpu", i, true);
            end_figure(e, &s->pcpus[i], (enum export_figure_id)id);
        }
        for (uint32_t i = 0; fd->scope >= EXPORT_SCOPE_DOMAIN && i < s->nr_domains; i++)
            domain_figure(e, (enum export_figure_id)id, &s->domains[i]);
    }
}

/* The agent's own families: its build, its figures, its PV sets by state. */
static void agent_families(struct emitter *e, const struct export_snapshot *s)
{
    family(e, EXPORT_METRIC_BUILD);
    sample(e, EXPORT_METRIC_BUILD);
    label(e, "version", XENSTATS_VERSION, true);
    end_u64(e, 1);
    figures(e, s, EXPORT_SCOPE_AGENT, EXPORT_SCOPE_AGENT);
    family(e, EXPORT_METRIC_AGENT_PV_SETS);
    for (unsigned int st = 0; st < XENSTATS_PV_NR_SET_STATES; st++) {
        sample(e, EXPORT_METRIC_AGENT_PV_SETS);
        label(e, "state", xenstats_pv_set_state_name((enum xenstats_pv_set_state)st), true);
        end_u64(e, s->agent.sets_by_state[st]);
    }
}

static void host_and_domain_families(struct emitter *e, const struct export_snapshot *s)
{
    family(e, EXPORT_METRIC_HOST);
    if (s->xen_version[0]) {
        sample(e, EXPORT_METRIC_HOST);
        label(e, "xen_version", s->xen_version, true);
        label(e, "scheduler", s->scheduler, false);
        end_u64(e, 1);
    }
    family(e, EXPORT_METRIC_DOMAIN);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        char uuid[37];

        export_uuid_format(s->domains[i].uuid, uuid);
        sample(e, EXPORT_METRIC_DOMAIN);
        domain_labels(e, &s->domains[i]);
        label(e, "uuid", uuid, false);
        end_u64(e, 1);
    }
    family(e, EXPORT_METRIC_DOMAIN_STATE);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        for (unsigned int f = 0; f < EXPORT_NR_DOMAIN_STATES; f++) {
            sample(e, EXPORT_METRIC_DOMAIN_STATE);
            domain_labels(e, &s->domains[i]);
            label(e, "state", export_domain_state_names[f], false);
            end_u64(e, (s->domains[i].flags >> f) & 1);
        }
    }
    family(e, EXPORT_METRIC_DOMAIN_SHUTDOWN);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        if (!(s->domains[i].flags & XENSTATS_DOMAIN_SHUTDOWN))
            continue;
        sample(e, EXPORT_METRIC_DOMAIN_SHUTDOWN);
        domain_labels(e, &s->domains[i]);
        label(e, "reason", export_shutdown_name(s->domains[i].shutdown_reason), false);
        end_u64(e, 1);
    }
}

static void vcpu_runstates(struct emitter *e, const struct export_domain *d)
{
    for (uint32_t j = 0; d->vcpus && j < d->nr_vcpus; j++) {
        for (unsigned int st = 0; st < XENSTATS_VCPU_NR_RUNSTATES; st++) {
            if (!d->vcpus[j].time_valid[st])
                continue; /* inactive: no value, not zero */
            sample(e, EXPORT_METRIC_VCPU_RUNSTATE);
            domain_labels(e, d);
            label_u64(e, "vcpu", j, false);
            label(e, "runstate", xenstats_vcpu_runstate_name(st), false);
            end_ns(e, d->vcpus[j].time_ns[st]);
        }
    }
}

static void vcpu_states(struct emitter *e, const struct export_domain *d)
{
    for (uint32_t j = 0; d->vcpus && j < d->nr_vcpus; j++) {
        if (d->vcpus[j].state >= XENSTATS_VCPU_NR_RUNSTATES)
            continue;
        for (unsigned int st = 0; st < XENSTATS_VCPU_NR_RUNSTATES; st++) {
            sample(e, EXPORT_METRIC_VCPU_STATE);
            domain_labels(e, d);
            label_u64(e, "vcpu", j, false);
            label(e, "runstate", xenstats_vcpu_runstate_name(st), false);
            end_u64(e, d->vcpus[j].state == st);
        }
    }
}

static void vcpu_families(struct emitter *e, const struct export_snapshot *s)
{
    uint32_t i;

    family(e, EXPORT_METRIC_DOMAIN_VCPUS);
    for (i = 0; i < s->nr_domains; i++) {
        sample(e, EXPORT_METRIC_DOMAIN_VCPUS);
        domain_labels(e, &s->domains[i]);
        end_u64(e, s->domains[i].nr_vcpus);
    }
    family(e, EXPORT_METRIC_DOMAIN_VCPU_SOURCE);
    for (i = 0; i < s->nr_domains; i++) {
        for (unsigned int src = 0; src < ARRAY_SIZE(export_vcpu_source_names); src++) {
            sample(e, EXPORT_METRIC_DOMAIN_VCPU_SOURCE);
            domain_labels(e, &s->domains[i]);
            label(e, "source", export_vcpu_source_names[src], false);
            end_u64(e, s->domains[i].vcpu_source == src);
        }
    }
    family(e, EXPORT_METRIC_VCPU_RUNSTATE);
    for (i = 0; i < s->nr_domains; i++)
        vcpu_runstates(e, &s->domains[i]);
    family(e, EXPORT_METRIC_VCPU_CHANGES);
    for (i = 0; i < s->nr_domains; i++) {
        const struct export_domain *d = &s->domains[i];

        for (uint32_t j = 0; d->vcpus && j < d->nr_vcpus; j++) {
            if (!d->vcpus[j].changes_valid)
                continue;
            sample(e, EXPORT_METRIC_VCPU_CHANGES);
            domain_labels(e, d);
            label_u64(e, "vcpu", j, false);
            end_u64(e, d->vcpus[j].changes);
        }
    }
    family(e, EXPORT_METRIC_VCPU_STATE);
    for (i = 0; i < s->nr_domains; i++)
        vcpu_states(e, &s->domains[i]);
}

static void set_families(struct emitter *e, const struct export_snapshot *s)
{
    figures(e, s, EXPORT_SCOPE_PV, EXPORT_SCOPE_PV);
    family(e, EXPORT_METRIC_PV_SET_STATE);
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct export_domain *d = &s->domains[i];

        for (uint32_t j = 0; j < d->nr_sets; j++) {
            for (unsigned int st = 0; st < XENSTATS_PV_NR_SET_STATES; st++) {
                sample(e, EXPORT_METRIC_PV_SET_STATE);
                set_labels(e, d, &d->sets[j]);
                label(e, "state", xenstats_pv_set_state_name((enum xenstats_pv_set_state)st), false);
                end_u64(e, d->sets[j].state == st);
            }
        }
    }
    figures(e, s, EXPORT_SCOPE_SET, EXPORT_SCOPE_SET);
}

/* The numbers of one set the guest families did not take (typed[] from `ord`). */
static void set_values(struct emitter *e, const struct export_domain *d, const struct export_set *set, const bool *typed)
{
    for (uint32_t k = 0; k < set->nr_stats; k++) {
        const struct export_stat *st = &set->stats[k];

        if (!st->valid || st->type == XEN_PV_STATS_TYPE_ASCII || (typed && typed[k]))
            continue;
        sample(e, EXPORT_METRIC_PV_VALUE);
        set_labels(e, d, set);
        label(e, "statistic", st->name, false);
        label(e, "type", xenstats_pv_type_name(st->type), false);
        end_stat(e, st);
    }
}

static void set_texts(struct emitter *e, const struct export_domain *d, const struct export_set *set)
{
    for (uint32_t k = 0; k < set->nr_stats; k++) {
        const struct export_stat *st = &set->stats[k];

        if (!st->valid || st->type != XEN_PV_STATS_TYPE_ASCII)
            continue;
        sample(e, EXPORT_METRIC_PV_TEXT);
        set_labels(e, d, set);
        label(e, "statistic", st->name, false);
        label(e, "value", st->ascii, false);
        end_u64(e, 1);
    }
}

/* The guests' statistics: their own families first, what is left in
 * xenstats_pv_value, then the texts. */
static int value_families(struct emitter *e, const struct export_snapshot *s)
{
    bool *typed = NULL;
    int r = export_prom_guest_families(e, s, &typed);
    uint32_t i, j, ord;

    family(e, EXPORT_METRIC_PV_VALUE);
    for (i = 0, ord = 0; i < s->nr_domains; i++) {
        const struct export_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; ord += d->sets[j++].nr_stats)
            if (export_set_values_exported(&d->sets[j]))
                set_values(e, d, &d->sets[j], typed ? typed + ord : NULL);
    }
    family(e, EXPORT_METRIC_PV_TEXT);
    for (i = 0; i < s->nr_domains; i++) {
        const struct export_domain *d = &s->domains[i];

        for (j = 0; j < d->nr_sets; j++)
            if (export_set_values_exported(&d->sets[j]))
                set_texts(e, d, &d->sets[j]);
    }
    free(typed);
    return r;
}

/* About 110 bytes a line: enough room at once, not a large buffer grown many times. */
static size_t estimate(const struct export_snapshot *s)
{
    size_t n = 8192;

    for (uint32_t i = 0; i < s->nr_domains; i++) {
        n += 3000 + (size_t)s->domains[i].nr_vcpus * 1100 +
             (size_t)(s->domains[i].nr_vifs + s->domains[i].nr_vbds) * 1000;
        for (uint32_t j = 0; j < s->domains[i].nr_sets; j++)
            n += 1200 + (size_t)s->domains[i].sets[j].nr_stats * 160; /* one sample each */
    }
    return n;
}

int export_render_prometheus(const struct export_snapshot *s, bool openmetrics, struct export_strbuf *out)
{
    struct emitter e = {.b = out, .om = openmetrics};
    int r;

    if (make_prefixes(&e, s) < 0) {
        free_prefixes(&e);
        return -ENOMEM;
    }
    export_strbuf_reserve(out, out->len + estimate(s));
    agent_families(&e, s);
    host_and_domain_families(&e, s);
    figures(&e, s, EXPORT_SCOPE_HOST, EXPORT_SCOPE_VBD);
    vcpu_families(&e, s);
    set_families(&e, s);
    r = value_families(&e, s);
    if (openmetrics)
        puts_(out, "# EOF\n");
    if (r == 0)
        r = export_strbuf_finish(out);
    free_prefixes(&e);
    return r;
}
