/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A snapshot's life: made empty, filled by the collector (or top's
 * reader), shared by reference, rendered once per format on first use.
 */
#include <malloc.h>
#include <stdlib.h>

#include "export/private.h"

struct export_snapshot *export_snapshot_new(void)
{
    struct export_snapshot *s = calloc(1, sizeof(*s));

    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->refs = 1;
    /* the agent's own counters are always there, from 0 */
    for (int id = 0; id < EXPORT_FIG_COUNT; id++)
        if (export_figure_decls[id].scope == EXPORT_SCOPE_AGENT)
            export_figs_set(&s->agent.figs, (enum export_figure_id)id, 0);
    return s;
}

struct export_snapshot *export_snapshot_ref(struct export_snapshot *s)
{
    pthread_mutex_lock(&s->lock);
    s->refs++;
    pthread_mutex_unlock(&s->lock);
    return s;
}

static void snapshot_destroy(struct export_snapshot *s)
{
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        struct export_domain *d = &s->domains[i];

        for (uint32_t j = 0; j < d->nr_sets; j++) {
            struct export_set *set = &d->sets[j];

            for (uint32_t k = 0; !set->strings && k < set->nr_stats; k++) {
                free(set->stats[k].name);
                free(set->stats[k].ascii);
            }
            for (uint32_t k = 0; k < set->nr_stats; k++)
                free(set->stats[k].type_text);
            free(set->strings);
            free(set->stats);
            free(set->provider);
            free(set->set);
            free(set->reason);
            free(set->state_text);
        }
        free(d->sets);
        free(d->vifs);
        free(d->vbds);
        free(d->vcpus);
        free(d->vcpu_error);
    }
    free(s->domains);
    free(s->pcpus);
    free(s->backend_copy);
    for (int f = 0; f < 3; f++) {
        free(s->text[f]);
        free(s->encoded[f]);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void export_snapshot_unref(struct export_snapshot *s)
{
    bool last;

    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (last)
        snapshot_destroy(s);
}

/* The model's bytes (immutable once the snapshot is shared). */
static size_t model_memory(const struct export_snapshot *s)
{
    size_t n = malloc_usable_size((void *)s) + malloc_usable_size(s->domains) + malloc_usable_size(s->pcpus) +
               malloc_usable_size(s->backend_copy);

    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct export_domain *d = &s->domains[i];

        n += malloc_usable_size(d->sets) + malloc_usable_size(d->vifs) + malloc_usable_size(d->vbds) +
             malloc_usable_size(d->vcpus) + malloc_usable_size(d->vcpu_error);
        for (uint32_t j = 0; j < d->nr_sets; j++) {
            const struct export_set *set = &d->sets[j];

            n += malloc_usable_size(set->stats) + malloc_usable_size(set->strings) + malloc_usable_size(set->provider) +
                 malloc_usable_size(set->set) + malloc_usable_size(set->reason) + malloc_usable_size(set->state_text);
            for (uint32_t k = 0; k < set->nr_stats; k++) {
                if (!set->strings)
                    n += malloc_usable_size(set->stats[k].name) + malloc_usable_size(set->stats[k].ascii);
                n += malloc_usable_size(set->stats[k].type_text);
            }
        }
    }
    return n;
}

size_t export_snapshot_memory(struct export_snapshot *s)
{
    size_t n;

    pthread_mutex_lock(&s->lock);
    if (!s->model_memory)
        s->model_memory = model_memory(s);
    n = s->model_memory;
    for (int f = 0; f < 3; f++)
        n += malloc_usable_size(s->text[f]) + malloc_usable_size(s->encoded[f]);
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* The rendering, made now if it was not; s->lock held. */
static const char *render_locked(struct export_snapshot *s, enum export_format format)
{
    if (!s->text[format]) {
        struct export_strbuf b = {0};
        int r = format == EXPORT_FORMAT_JSON ? export_render_json(s, &b) : export_render_prometheus(s, format == EXPORT_FORMAT_OPENMETRICS, &b);

        if (r == 0) {
            s->text[format] = b.data;
            s->text_len[format] = b.len;
        } else {
            export_strbuf_free(&b);
        }
    }
    return s->text[format];
}

const char *export_snapshot_render(struct export_snapshot *s, enum export_format format, size_t *ret_len)
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

int export_snapshot_render_to(const struct export_snapshot *s, enum export_format format, export_render_sink *sink, void *ctx)
{
    struct export_strbuf b = {.sink = sink, .sink_ctx = ctx};
    int r = format == EXPORT_FORMAT_JSON ? export_render_json(s, &b) : export_render_prometheus(s, format == EXPORT_FORMAT_OPENMETRICS, &b);

    export_strbuf_free(&b);
    return r;
}

const char *export_snapshot_render_encoded(struct export_snapshot *s, enum export_format format, export_snapshot_encoder *encode,
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

const char *export_snapshot_encoded(struct export_snapshot *s, enum export_format format, size_t *ret_len)
{
    const char *data;

    pthread_mutex_lock(&s->lock);
    data = s->encoded[format];
    if (data)
        *ret_len = s->encoded_len[format];
    pthread_mutex_unlock(&s->lock);
    return data;
}

void export_domain_set_pv(struct export_domain *d, const struct xenstats_pv_domain_info *info)
{
    struct export_figs *f = &d->pv;

    d->pv_monitored = true;
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_THROTTLED, info->throttled);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_SETS_REJECTED, info->sets_rejected);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_SETS_IGNORED, info->sets_ignored);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_RESCANS, info->rescans);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_XENSTORE_READS, info->xenstore_reads);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_BUDGET_EXCEEDED, info->budget_exceeded);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_LOG_SUPPRESSED, info->log_suppressed);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_LIVE_SETS, info->live_sets);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_MAPPED_PAGES, info->mapped_pages);
    export_figs_set(f, EXPORT_FIG_PV_DOMAIN_SETS_CAPPED, info->sets_capped);
}

void export_agent_figures(const struct export_snapshot *s, struct export_figs *ret_figs)
{
    *ret_figs = s->agent.figs;
    export_figs_set(ret_figs, EXPORT_FIG_AGENT_DOMAINS, s->nr_domains);
}
