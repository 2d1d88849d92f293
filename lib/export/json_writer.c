/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON of docs/agent-api.md (/api/v1/snapshot).  Every FIGURE of
 * metrics.def with a JSON key is a member of its scope's object, in the
 * order of metrics.def; the rest (names, states, vCPUs, PV sets' values)
 * has a shape of its own and is written here.
 */
#include "export/private.h"

static void json_key(struct export_strbuf *b, const char *k, bool first)
{
    if (!first)
        putc_(b, ',');
    putc_(b, '"');
    puts_(b, k);
    puts_(b, "\":");
}

static void json_seconds(struct export_strbuf *b, bool valid, uint64_t ns)
{
    if (valid)
        put_ns_seconds(b, ns);
    else
        puts_(b, "null");
}

static void json_string_or_null(struct export_strbuf *b, const char *s)
{
    if (s)
        export_strbuf_json_string(b, s);
    else
        puts_(b, "null");
}

static void json_figure(struct export_strbuf *b, const struct export_figs *f, enum export_figure_id id)
{
    const struct export_figure_decl *fd = &export_figure_decls[id];

    uint64_t v = export_figs_get(f, id);

    if (!export_figs_known(f, id))
        puts_(b, "null");
    else if (fd->json_form == EXPORT_JSON_BOOL)
        puts_(b, v ? "true" : "false");
    else if (fd->json_form == EXPORT_JSON_DOUBLE)
        export_strbuf_double(b, fd->ns ? (double)v / 1e9 : (double)v, true);
    else if (fd->ns)
        put_ns_seconds(b, v);
    else
        put_u64(b, v);
}

/* "key":value for each figure of the scope (null when not known), each
 * after a comma unless `first`. */
static void json_figures(struct export_strbuf *b, const struct export_figs *f, enum export_figure_scope scope, bool first)
{
    for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
        if (export_figure_decls[id].scope != scope || !export_figure_decls[id].json[0])
            continue;
        json_key(b, export_figure_decls[id].json, first);
        json_figure(b, f, (enum export_figure_id)id);
        first = false;
    }
}

static void json_devices(struct export_strbuf *b, const char *key, const struct export_device *devs, uint32_t n,
                         enum export_figure_scope scope)
{
    json_key(b, key, false);
    putc_(b, '[');
    for (uint32_t k = 0; k < n; k++) {
        if (k)
            putc_(b, ',');
        puts_(b, "{\"device\":");
        export_strbuf_json_string(b, devs[k].name);
        json_key(b, "devid", false);
        put_u64(b, devs[k].devid);
        json_figures(b, &devs[k].figs, scope, false);
        putc_(b, '}');
    }
    putc_(b, ']');
}

static void json_host(struct export_strbuf *b, const struct export_snapshot *s)
{
    puts_(b, "\"host\":{\"backend\":");
    export_strbuf_json_string(b, s->backend);
    puts_(b, ",\"self_domid\":");
    put_u64(b, s->self_domid);
    json_key(b, "xen_version", false);
    json_string_or_null(b, s->xen_version[0] ? s->xen_version : NULL);
    json_key(b, "scheduler", false);
    json_string_or_null(b, s->xen_version[0] ? s->scheduler : NULL);
    json_figures(b, &s->host, EXPORT_SCOPE_HOST, false);
    json_key(b, "pcpus", false);
    putc_(b, '[');
    for (uint32_t i = 0; i < s->nr_pcpus; i++) {
        if (i)
            putc_(b, ',');
        puts_(b, "{\"cpu\":");
        put_u64(b, i);
        json_figures(b, &s->pcpus[i], EXPORT_SCOPE_PCPU, false);
        putc_(b, '}');
    }
    puts_(b, "]}");
}

static void json_agent(struct export_strbuf *b, const struct export_snapshot *s)
{
    struct export_figs agent;
    uint64_t total = 0;

    export_agent_figures(s, &agent);
    puts_(b, "\"agent\":{");
    json_figures(b, &agent, EXPORT_SCOPE_AGENT, true);
    /* xenstats_agent_pv_sets in two numbers */
    for (unsigned int k = 0; k < XENSTATS_PV_NR_SET_STATES; k++)
        total += s->agent.sets_by_state[k];
    puts_(b, ",\"pv_sets\":");
    put_u64(b, total);
    puts_(b, ",\"pv_sets_rejected\":");
    put_u64(b, s->agent.sets_by_state[XENSTATS_PV_SET_REJECTED]);
    putc_(b, '}');
}

/* "state":[the flags set],"shutdown_reason":... */
static void json_domain_state(struct export_strbuf *b, const struct export_domain *d)
{
    bool first = true;

    json_key(b, "state", false);
    putc_(b, '[');
    for (unsigned int k = 0; k < EXPORT_NR_DOMAIN_STATES; k++) {
        if (!((d->flags >> k) & 1))
            continue;
        if (!first)
            putc_(b, ',');
        export_strbuf_json_string(b, export_domain_state_names[k]);
        first = false;
    }
    putc_(b, ']');
    json_key(b, "shutdown_reason", false);
    json_string_or_null(b, d->flags & XENSTATS_DOMAIN_SHUTDOWN ? export_shutdown_name(d->shutdown_reason) : NULL);
}

static void json_vcpus(struct export_strbuf *b, const struct export_domain *d)
{
    json_key(b, "vcpu_source", false);
    export_strbuf_json_string(b, export_vcpu_source_names[d->vcpu_source]);
    json_key(b, "vcpu_error", false);
    json_string_or_null(b, d->vcpu_error);
    json_key(b, "vcpus", false);
    putc_(b, '[');
    for (uint32_t j = 0; d->vcpus && j < d->nr_vcpus; j++) {
        const struct export_vcpu *v = &d->vcpus[j];

        if (j)
            putc_(b, ',');
        puts_(b, "{\"vcpu\":");
        put_u64(b, j);
        json_key(b, "state", false);
        json_string_or_null(b, v->state < XENSTATS_VCPU_NR_RUNSTATES ? xenstats_vcpu_runstate_name(v->state) : NULL);
        for (unsigned int k = 0; k < XENSTATS_VCPU_NR_RUNSTATES; k++) {
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
}

static void json_stat(struct export_strbuf *b, const struct export_stat *st)
{
    puts_(b, "{\"name\":");
    export_strbuf_json_string(b, st->name);
    json_key(b, "type", false);
    export_strbuf_json_string(b, xenstats_pv_type_name(st->type));
    json_key(b, "value", false);
    if (!st->valid)
        puts_(b, "null");
    else if (st->type == XEN_PV_STATS_TYPE_S64)
        put_s64(b, st->v.s64);
    else if (st->type == XEN_PV_STATS_TYPE_U64)
        put_u64(b, st->v.u64);
    else if (st->type == XEN_PV_STATS_TYPE_DOUBLE)
        export_strbuf_double(b, st->v.dbl, true);
    else
        export_strbuf_json_string(b, st->ascii);
    putc_(b, '}');
}

static void json_set(struct export_strbuf *b, const struct export_set *set)
{
    puts_(b, "{\"provider\":");
    export_strbuf_json_string(b, set->provider);
    json_key(b, "set", false);
    export_strbuf_json_string(b, set->set);
    json_key(b, "state", false);
    export_strbuf_json_string(b, xenstats_pv_set_state_name(set->state));
    json_key(b, "reason", false);
    export_strbuf_json_string(b, set->reason);
    json_figures(b, &set->figs, EXPORT_SCOPE_SET, false);
    json_key(b, "created", false);
    if (set->created > 0)
        export_strbuf_double(b, set->created, false);
    else
        puts_(b, "null");
    json_key(b, "stats", false);
    putc_(b, '[');
    for (uint32_t k = 0; k < set->nr_stats; k++) {
        if (k)
            putc_(b, ',');
        json_stat(b, &set->stats[k]);
    }
    puts_(b, "]}");
}

static void json_domain(struct export_strbuf *b, const struct export_domain *d)
{
    char uuid[37];

    puts_(b, "{\"domid\":");
    put_u64(b, d->domid);
    json_key(b, "name", false);
    export_strbuf_json_string(b, d->name);
    json_key(b, "nr_vcpus", false);
    put_u64(b, d->nr_vcpus);
    export_uuid_format(d->uuid, uuid);
    json_key(b, "uuid", false);
    export_strbuf_json_string(b, uuid);
    json_domain_state(b, d);
    json_figures(b, &d->figs, EXPORT_SCOPE_DOMAIN, false);
    json_devices(b, "vifs", d->vifs, d->nr_vifs, EXPORT_SCOPE_VIF);
    json_devices(b, "vbds", d->vbds, d->nr_vbds, EXPORT_SCOPE_VBD);
    json_vcpus(b, d);
    json_key(b, "pv_budget", false);
    if (d->pv_monitored) {
        putc_(b, '{');
        json_figures(b, &d->pv, EXPORT_SCOPE_PV, true);
        putc_(b, '}');
    } else {
        puts_(b, "null");
    }
    json_key(b, "pv_sets", false);
    putc_(b, '[');
    for (uint32_t j = 0; j < d->nr_sets; j++) {
        if (j)
            putc_(b, ',');
        json_set(b, &d->sets[j]);
    }
    puts_(b, "]}");
}

int export_render_json(const struct export_snapshot *s, struct export_strbuf *b)
{
    puts_(b, "{\"version\":1,");
    json_host(b, s);
    puts_(b, ",\"time\":");
    export_strbuf_double(b, s->wall, true);
    puts_(b, ",\"monotonic_ns\":");
    put_u64(b, s->monotonic_ns);
    puts_(b, ",\"interval\":");
    export_strbuf_double(b, s->interval, true);
    putc_(b, ',');
    json_agent(b, s);
    puts_(b, ",\"domains\":[");
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        if (i)
            putc_(b, ',');
        json_domain(b, &s->domains[i]);
    }
    puts_(b, "]}\n");
    return export_strbuf_finish(b);
}
