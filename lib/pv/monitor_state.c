/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor, the bottom layer: the set's state machine (states,
 * reasons, withdraw, reject, retry, release), the port table, per-domain
 * budgets and the rate-limited log.  Discovery and sampling call these;
 * nothing here calls either (monitor_state.h).
 */
#include <stdarg.h>
#include <string.h>

#include "pv/monitor_state.h"

/* Budgets (docs/pv-stats.md "Budgets"): what one domain may cost. */
#define THROTTLED_GAP_MAX_NS (2000 * MS) /* a throttled domain is rescanned at least this often */
#define THROTTLE_MEMORY_NS (10000 * MS)  /* marked throttled this long after exceeding a budget */
#define LOG_BURST 32                     /* log lines, beyond the sustained rate */
#define RETRY_FIRST_MS 100 /* a set that may come back is re-examined after this, */
#define RETRY_MAX_MS 5000  /* doubling up to this */

/* ---- the set's state machine --------------------------------------------- */

/* Every state change goes here, so the count of outstanding requests
 * stays exact without walking every set. */
void mon_set_state(struct xenstats_monitor *m, struct xenstats_pv_set *s, enum xenstats_pv_set_state state)
{
    if (s->state == XENSTATS_PV_SET_SAMPLING && state != XENSTATS_PV_SET_SAMPLING) {
        /* scans and retries wait while requests are out: the last answer
         * lets them run */
        if (!--m->outstanding)
            m->timer_dirty = true;
    } else if (s->state != XENSTATS_PV_SET_SAMPLING && state == XENSTATS_PV_SET_SAMPLING) {
        m->outstanding++;
    }
    if (s->state == XENSTATS_PV_SET_REJECTED && state != XENSTATS_PV_SET_REJECTED)
        s->domain->nr_rejected--;
    else if (s->state != XENSTATS_PV_SET_REJECTED && state == XENSTATS_PV_SET_REJECTED)
        s->domain->nr_rejected++;
    if (s->capped && state != XENSTATS_PV_SET_REJECTED) {
        s->capped = false;
        s->domain->sets_capped--;
    }
    s->state = state;
}

void mon_set_reason(struct xenstats_pv_set *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
    va_end(ap);
}

void mon_set_detach(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    if (s->port >= 0) {
        mon_port_map(m, s->port, NULL);
        platform_evtchn_unbind(m->platform, m->evtchn, (uint32_t)s->port);
        s->port = -1;
        s->domain->live_sets--;
    }
    if (s->name_map)
        platform_grant_unmap(m->platform, (void *)s->name_map, s->keys.nr_pages);
    if (s->value_map) {
        platform_grant_unmap(m->platform, (void *)s->value_map, s->keys.nr_pages);
        s->domain->mapped_pages -= s->keys.nr_pages;
    }
    s->name_map = s->value_map = NULL;

    free(s->stat_block);
    free(s->texts);
    s->stat_block = NULL;
    s->names = NULL;
    s->types = NULL;
    s->numbers = NULL;
    s->valid = NULL;
    s->texts = NULL;
    s->nr_stats = 0;
}

void mon_set_withdraw(struct xenstats_monitor *m, struct xenstats_pv_set *s, const char *why)
{
    if (s->state != XENSTATS_PV_SET_WITHDRAWN)
        mon_dom_log(m, s->domain, XENSTATS_LOG_INFO, "set %s withdrawn (%s)", s->path, why);
    mon_set_detach(m, s);
    mon_set_state(m, s, XENSTATS_PV_SET_WITHDRAWN);
    if (why != s->reason)
        mon_set_reason(s, "%s", why);
    s->peer_closed = false;
    m->list_dirty = true;
}

void mon_set_reject(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t fingerprint, bool transient)
{
    bool again = s->state == XENSTATS_PV_SET_REJECTED && s->fingerprint == fingerprint;

    mon_set_detach(m, s);
    mon_set_state(m, s, XENSTATS_PV_SET_REJECTED);
    s->fingerprint = fingerprint;
    s->transient = transient;
    s->peer_closed = false;
    s->errors++;
    if (transient)
        mon_set_retry_later(m, s);
    else
        s->retry_at = 0;
    /* one line per set and reason, not one per retry */
    if (!again)
        mon_dom_log(m, s->domain, XENSTATS_LOG_WARNING, "set %s rejected: %s", s->path, s->reason);
}

/* Examine the set again at a growing interval: it may come back by itself. */
void mon_set_retry_later(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    s->backoff_ms = s->backoff_ms ? (s->backoff_ms * 2 < RETRY_MAX_MS ? s->backoff_ms * 2 : RETRY_MAX_MS)
                                  : RETRY_FIRST_MS;
    s->retry_at = monotonic_ns() + (uint64_t)s->backoff_ms * MS;
    m->timer_dirty = true;
}

/* The provider's end of the channel is closed (Xen sends no event for it). */
bool mon_peer_gone(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    enum platform_evtchn_state st;

    if (s->port < 0)
        return false;

    return platform_evtchn_status(m->platform, m->evtchn, (uint32_t)s->port, &st) == 0 &&
           st != PLATFORM_EVTCHN_INTERDOMAIN;
}

/* ---- ports --------------------------------------------------------------- */

void mon_port_map(struct xenstats_monitor *m, int port, struct xenstats_pv_set *s)
{
    if (port < 0)
        return;
    if ((size_t)port >= m->by_port_len) {
        size_t len = (size_t)port + 64;
        struct xenstats_pv_set **grown = realloc(m->by_port, len * sizeof(*grown));

        if (!grown)
            return; /* events for it are then counted as strays */
        memset(grown + m->by_port_len, 0, (len - m->by_port_len) * sizeof(*grown));
        m->by_port = grown;
        m->by_port_len = len;
    }
    m->by_port[port] = s;
}

struct xenstats_pv_set *mon_port_lookup(struct xenstats_monitor *m, int port)
{
    return port >= 0 && (size_t)port < m->by_port_len ? m->by_port[port] : NULL;
}

/* ---- budgets and the log ------------------------------------------------- */

void mon_bucket_fill(struct bucket *b, uint64_t now, double rate, double burst)
{
    if (b->at)
        b->tokens += (double)(now - b->at) / 1e9 * rate;
    if (!b->at || b->tokens > burst)
        b->tokens = burst;
    b->at = now;
}

/*
 * A budget ran out: mark the domain, and for the budgets of work (reads,
 * rescans, rejected sets) slow its rescans down.  Dropping the lines is
 * all the log budget needs.
 */
void mon_over_budget(struct mon_domain *d, uint64_t now, const char *which)
{
    d->budget_exceeded++;
    if (!which) {
        d->throttled_until = now + THROTTLE_MEMORY_NS;
        return;
    }
    if (!throttled(d, now))
        log_warning("domain %u: over its %s budget: throttled (rescanned at most every %.1f s)", d->domid, which,
                    (double)THROTTLED_GAP_MAX_NS / 1e9);
    d->throttled_until = now + THROTTLE_MEMORY_NS;
    d->gap_ns = d->gap_ns * 2 < THROTTLED_GAP_MAX_NS ? d->gap_ns * 2 : THROTTLED_GAP_MAX_NS;
}

/*
 * Everything the monitor says about a domain goes through its log budget:
 * a guest cannot make the monitor flood its log.  What is dropped is
 * counted and said on the next line let through.
 */
void mon_dom_log(struct xenstats_monitor *m, struct mon_domain *d, enum xenstats_log_level level,
                 const char *fmt, ...)
{
    uint64_t now;
    char line[768];
    va_list ap;

    if (!log_enabled(level))
        return;
    now = monotonic_ns();
    mon_bucket_fill(&d->logs, now, m->opts.max_log_per_s, LOG_BURST);
    if (d->logs.tokens < 1) {
        d->log_suppressed++;
        d->log_pending_suppressed++;
        if (d->log_pending_suppressed == 1)
            mon_over_budget(d, now, NULL);
        return;
    }
    d->logs.tokens -= 1;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (d->log_pending_suppressed) {
        log_message(level, "domain %u: %s (and %u more messages about this domain, dropped by its log budget)",
                    d->domid, line, d->log_pending_suppressed);
        d->log_pending_suppressed = 0;
    } else {
        log_message(level, "domain %u: %s", d->domid, line);
    }
}

/* When a domain's next scan may run (0: nothing to do). */
uint64_t mon_next_scan_at(const struct mon_domain *d)
{
    uint64_t at = 0;
    const struct xenstats_pv_set *s;

    if (!d->dirty) {
        for (s = d->sets; s; s = s->next)
            if (s->retry_at && (!at || s->retry_at < at))
                at = s->retry_at;
        if (!at)
            return 0;
    }
    /* no sooner than the gap and the read budget allow */
    if (at < d->last_scan + d->gap_ns)
        at = d->last_scan + d->gap_ns;
    if (at < d->not_before)
        at = d->not_before;
    return at;
}

/* ---- guest pages --------------------------------------------------------- */

int mon_grow_scratch(struct xenstats_monitor *m, size_t bytes)
{
    uint8_t *p = realloc(m->scratch, bytes);

    if (!p)
        return -ENOMEM;
    m->scratch = p;
    m->scratch_len = bytes;
    return 0;
}

/* A fast hash of whole pages (word at a time): detects rewritten names. */
uint64_t mon_page_hash(const volatile uint8_t *pages, size_t bytes)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;

    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t w;

        memcpy(&w, (const uint8_t *)pages + i, sizeof(w));
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}
