/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor, sampling: requests sent to the live sets, answers
 * decoded from a copy of the value pages, deadlines kept by one timer.
 * Above the state (monitor_state.h): a set that stops answering is
 * withdrawn or retried there; it calls nothing of discovery.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "pv/monitor_sample.h"

/*
 * Armed at the earliest deadline as an absolute time, so without reading
 * the clock: in a PV dom0 clock_gettime() is a real system call (about
 * 20 us under QEMU), and a sample used to read it five times.
 */
void mon_arm_timer(struct xenstats_monitor *m)
{
    struct itimerspec its = {0};
    uint64_t earliest = 0;
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    for (d = m->domains; d; d = d->next) {
        /* scans wait for the outstanding answers (mon_set_state re-arms) */
        uint64_t at = m->outstanding ? 0 : mon_next_scan_at(d);

        if (at && (!earliest || at < earliest))
            earliest = at;
        for (s = d->sets; s; s = s->next)
            if (s->state == XENSTATS_PV_SET_SAMPLING && (!earliest || s->deadline < earliest))
                earliest = s->deadline;
    }
    /* (a time already past fires at once; 0 would disarm) */
    its.it_value.tv_sec = (time_t)(earliest / 1000000000ULL);
    its.it_value.tv_nsec = (long)(earliest % 1000000000ULL);
    timerfd_settime(m->tfd, earliest ? TFD_TIMER_ABSTIME : 0, &its, NULL);
}

/* ---- sampling ------------------------------------------------------------ */

/* Whether s is due for a request now (and ready for one: unmasked). */
static bool request_due(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t now)
{
    if (!live(s) || s->state == XENSTATS_PV_SET_SAMPLING)
        return false;
    if (s->requested_at && now - s->requested_at < (uint64_t)m->opts.min_interval_ms * MS)
        return false;
    /* Let the bind's own event arrive first, so it is not taken for the
     * answer; do not wait for it for ever. */
    if (s->bind_event_due && now - s->bound_at < BIND_EVENT_GRACE_NS)
        return false;
    s->bind_event_due = false;
    if (s->masked) {
        platform_evtchn_unmask(m->platform, m->evtchn, (uint32_t)s->port);
        s->masked = false;
    }
    return true;
}

static void requested(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t now, int result)
{
    if (result < 0) {
        s->errors++;
        return;
    }
    s->before_request = s->state;
    s->requested_at = now;
    s->deadline = now + (uint64_t)m->opts.sample_timeout_ms * MS;
    mon_set_state(m, s, XENSTATS_PV_SET_SAMPLING);
}

/*
 * Whether d is paused now (one getdomaininfo): asked only when a request
 * of d went unanswered, and then every round while it stays paused.
 */
static bool domain_paused(struct xenstats_monitor *m, struct mon_domain *d)
{
    struct xenstats_domain_info info;
    bool was = d->paused;

    d->paused = platform_domain_info(m->platform, d->domid, &info) == 0 && (info.flags & XENSTATS_DOMAIN_PAUSED);
    if (d->paused != was)
        mon_dom_log(m, d, XENSTATS_LOG_INFO, "%s: PV stats sets %s", d->paused ? "paused" : "running again",
                    d->paused ? "not asked until it runs again" : "asked again");
    return d->paused;
}

int xenstats_monitor_request_all(struct xenstats_monitor *monitor)
{
    uint64_t now = monotonic_ns();
    struct xenstats_pv_set *s, **due = NULL;
    struct mon_domain *d;
    uint32_t *ports = NULL;
    int *results = NULL;
    size_t n = 0, cap = 0, i;
    int sent = 0;

    for (d = monitor->domains; d; d = d->next) {
        /* a paused domain cannot answer: not asked until it runs again */
        if (d->paused && domain_paused(monitor, d))
            continue;
        for (s = d->sets; s; s = s->next) {
            if (!request_due(monitor, s, now))
                continue;
            if (n == cap) {
                size_t grow = cap ? cap * 2 : 64;
                struct xenstats_pv_set **nd = realloc(due, grow * sizeof(*nd));
                uint32_t *np = nd ? realloc(ports, grow * sizeof(*np)) : NULL;

                if (nd)
                    due = nd;
                if (np)
                    ports = np;
                if (!nd || !np) {
                    s->errors++; /* this one waits for the next round */
                    continue;
                }
                cap = grow;
            }
            due[n] = s;
            ports[n++] = (uint32_t)s->port;
        }
    }
    results = n ? calloc(n, sizeof(*results)) : NULL;
    if (n && results && platform_evtchn_notify_many(monitor->platform, monitor->evtchn, ports, n, results) == 0) {
        /* one pipelined round */
    } else {
        for (i = 0; i < n && results; i++)
            results[i] = platform_evtchn_notify(monitor->platform, monitor->evtchn, ports[i]);
    }
    for (i = 0; i < n; i++) {
        requested(monitor, due[i], now, results ? results[i] : -ENOMEM);
        sent += results && results[i] >= 0;
    }
    free(due);
    free(ports);
    free(results);
    mon_arm_timer(monitor);
    monitor->timer_dirty = false;
    return sent;
}

/*
 * Names are never re-read, so rewriting them is harmless; say so once.
 * The name pages are not kept mapped: they are mapped and hashed after
 * samples 4, 8, 16, 32 and 64, then at least every 64th, so a set
 * rewritten soon after it is published is seen soon, and one that is not
 * costs a map a minute (hashing every sample cost as much as the rest of
 * the sample).  The sets of one domain are checked together, in one
 * mapping of all their name pages: a set past its start-up checks whose
 * sibling is due is checked with it once half its period has passed, so
 * a domain's sets keep in step and a domain costs one map, not one per set.
 */
#define NAMES_BATCH_PAGES PV_MAX_PAGES /* one mapping, at most: a set's most */
#define NAMES_PERIOD 64

static bool names_check_due(const struct xenstats_pv_set *s, bool sibling)
{
    uint64_t n = s->samples;

    if (s->names_rewritten_logged || !live(s) || !s->value_map || n < 4 || n == s->names_checked_at)
        return false;
    if (n <= NAMES_PERIOD)
        return !sibling && !(n & (n - 1));
    return n - s->names_checked_at >= (sibling ? NAMES_PERIOD / 2 : NAMES_PERIOD);
}

/* One mapping of the sets' name pages (refs, in the sets' order), each hashed against its own. */
static void names_check_batch(struct xenstats_monitor *m, struct mon_domain *d, struct xenstats_pv_set **sets,
                              size_t nr_sets, const uint32_t *refs, uint32_t nr_pages)
{
    const uint8_t *map;
    size_t at = 0;

    if (!nr_sets)
        return;
    map = platform_grant_map(m->platform, d->domid, nr_pages, refs, PROT_READ);
    if (!map) {
        /* One set's refs revoked must not hide the others' rewrites: each
         * alone (what a set that revokes its pages costs its own domain). */
        for (size_t i = 0; nr_sets > 1 && i < nr_sets; i++)
            names_check_batch(m, d, &sets[i], 1, sets[i]->keys.name_type_ref, sets[i]->keys.nr_pages);
        if (nr_sets == 1)
            sets[0]->names_checked_at = sets[0]->samples; /* tried: not again before its period */
        return; /* revoked: the value pages' turn to find it out */
    }
    for (size_t i = 0; i < nr_sets; i++) {
        struct xenstats_pv_set *s = sets[i];
        size_t bytes = (size_t)s->keys.nr_pages * XEN_PV_STATS_PAGE_SIZE;

        s->names_checked_at = s->samples;
        if (mon_page_hash(map + at, bytes) != s->names_hash) {
            s->names_rewritten_logged = true;
            s->errors++;
            mon_dom_log(m, d, XENSTATS_LOG_WARNING, "set %s rewrote its names after publishing (ignored)", s->path);
        }
        at += bytes;
    }
    platform_grant_unmap(m->platform, (void *)map, nr_pages);
}

void mon_names_check_domain(struct xenstats_monitor *m, struct mon_domain *d)
{
    struct xenstats_pv_set *batch[NAMES_BATCH_PAGES], *s;
    uint32_t refs[NAMES_BATCH_PAGES], nr_pages = 0;
    size_t nr_sets = 0;

    for (s = d->sets; s; s = s->next) {
        bool queued = s->names_due;

        s->names_due = false;
        if (!names_check_due(s, !queued) || !s->keys.nr_pages || s->keys.nr_pages > NAMES_BATCH_PAGES)
            continue;
        if (nr_pages + s->keys.nr_pages > NAMES_BATCH_PAGES) {
            names_check_batch(m, d, batch, nr_sets, refs, nr_pages);
            nr_sets = nr_pages = 0;
        }
        memcpy(refs + nr_pages, s->keys.name_type_ref, s->keys.nr_pages * sizeof(*refs));
        nr_pages += s->keys.nr_pages;
        batch[nr_sets++] = s;
    }
    names_check_batch(m, d, batch, nr_sets, refs, nr_pages);
}

/* The domains some of whose sets answered with a check due, each checked in one go. */
static void names_check_queued(struct xenstats_monitor *m)
{
    while (m->names_due) {
        struct mon_domain *d = m->names_due;

        m->names_due = d->names_due_next;
        d->names_due_next = NULL;
        d->names_due = false;
        mon_names_check_domain(m, d);
    }
}

static void names_check_queue(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    struct mon_domain *d = s->domain;

    if (!names_check_due(s, false))
        return;
    s->names_due = true;
    if (!d->names_due) {
        d->names_due = true;
        d->names_due_next = m->names_due;
        m->names_due = d;
    }
}

static void complete(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t now)
{
    size_t bytes = (size_t)s->keys.nr_pages * XEN_PV_STATS_PAGE_SIZE;
    char reason[PV_REASON_MAX];
    uint8_t *value_copy;
    uint32_t i, bad = 0;

    /* The provider refreshed the set before signalling: copy it, then decode the copy. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (bytes > m->scratch_len && mon_grow_scratch(m, bytes) < 0) {
        s->errors++;
        return;
    }
    value_copy = m->scratch;
    /* only the entries declared: the rest of the pages is never looked at */
    memcpy(value_copy, s->value_map, (size_t)s->nr_stats * XEN_PV_STATS_ENTRY_SIZE);
    for (i = 0; i < s->nr_stats; i++) {
        const uint8_t *e = value_copy + (size_t)i * XEN_PV_STATS_ENTRY_SIZE;
        struct pv_value v;

        s->valid[i] = pv_decode_value(s->types[i], e, &v, reason) == 0;
        if (s->valid[i] && v.type == XEN_PV_STATS_TYPE_ASCII)
            memcpy(s->texts[i], v.u.ascii, sizeof(s->texts[i]));
        else if (s->valid[i])
            memcpy(&s->numbers[i], &v.u, sizeof(s->numbers[i]));
        if (!s->valid[i] && !bad++)
            mon_dom_log(m, s->domain, XENSTATS_LOG_WARNING, "set %s: statistic '%s': %s", s->path, s->names[i],
                        reason);
    }
    if (bad)
        s->errors++;
    mon_set_state(m, s, XENSTATS_PV_SET_ACTIVE);
    s->reason[0] = '\0';
    s->timeouts_in_row = 0;
    s->samples++;
    m->answers++;
    s->last_sample_ns = now;
    s->last_latency_ns = now - s->requested_at;
    names_check_queue(m, s);
}

/* What one pending port means; false when it is to stay masked. */
static bool handle_event(struct xenstats_monitor *m, int port, uint64_t now)
{
    struct xenstats_pv_set *s = mon_port_lookup(m, port);

    if (!s)
        return true;
    if (s->bind_event_due) {
        s->bind_event_due = false; /* the bind's own event */
    } else if (s->state == XENSTATS_PV_SET_SAMPLING) {
        complete(m, s, now);
    } else {
        /* Unrequested: count it, and stop listening to a flood. */
        s->errors++;
        if (now - s->unsolicited_window_start > 1000 * MS) {
            s->unsolicited_window_start = now;
            s->unsolicited_in_window = 0;
        }
        if (++s->unsolicited_in_window > m->opts.max_unsolicited) {
            /* once a set: a flooder is masked again after each request,
             * and a line each time would spend its domain's log budget */
            if (!s->masked && !s->flood_logged)
                mon_dom_log(m, s->domain, XENSTATS_LOG_WARNING,
                            "set %s floods its event channel; ignored until each next request", s->path);
            s->flood_logged = true;
            s->masked = true;
            return false;
        }
    }
    return true;
}

#define EVENT_BATCH 64

void mon_handle_events(struct xenstats_monitor *m)
{
    uint64_t now = monotonic_ns();
    uint32_t ports[EVENT_BATCH], unmask[EVENT_BATCH];
    int budget = 4096; /* the rest waits for the next round */

    while (budget > 0) {
        size_t nr_unmask = 0;
        int n, i;

        /* a batch of pending ports, each unmasked once handled: few system calls for thousands */
        n = platform_evtchn_pending_many(m->platform, m->evtchn, ports, EVENT_BATCH);
        if (n == -EAGAIN)
            break;
        if (n < 0) {
            /* the event channel device (the host) is gone */
            log_error("event channels: %s", strerror(-n));
            m->broken = n;
            break;
        }
        budget -= n;
        for (i = 0; i < n; i++)
            if (handle_event(m, (int)ports[i], now))
                unmask[nr_unmask++] = ports[i];
        if (nr_unmask > 1)
            platform_evtchn_unmask_many(m->platform, m->evtchn, unmask, nr_unmask);
        else if (nr_unmask == 1)
            platform_evtchn_unmask(m->platform, m->evtchn, unmask[0]);
    }
    /* after the answers, so that a domain's sets answered by now share one map */
    names_check_queued(m);
}

void mon_handle_timeouts(struct xenstats_monitor *m)
{
    uint64_t now = monotonic_ns(), ticks;
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    m->timer_dirty = true;
    if (read(m->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
        log_debug("timerfd: %s", strerror(errno));
    for (d = m->domains; d; d = d->next) {
        bool asked = false;

        for (s = d->sets; s; s = s->next) {
            if (s->retry_at && s->retry_at <= now) {
                s->dirty = d->dirty = m->any_dirty = true;
                continue;
            }
            if (s->state != XENSTATS_PV_SET_SAMPLING || now < s->deadline)
                continue;
            /* one getdomaininfo for the domain, however many of its sets
             * are late: its answer holds for all of them */
            if (!d->paused && !asked) {
                asked = true;
                domain_paused(m, d);
            }
            if (d->paused) {
                /* not the provider's fault: as it was, and asked again later */
                mon_set_state(m, s, s->before_request);
                mon_set_reason(s, "domain paused");
                s->bind_event_due = true; /* its answer, after the unpause, is no misbehaviour */
                continue;
            }
            s->timeouts++;
            s->timeouts_in_row++;
            if (mon_peer_gone(m, s)) {
                /* It may be restarting: its new keys can look like the old
                 * ones, so look again whatever the watches say. */
                mon_set_withdraw(m, s, "the provider closed its event channel");
                s->peer_closed = true;
                mon_set_retry_later(m, s);
                continue;
            }
            if (s->timeouts_in_row >= m->opts.stale_limit) {
                if (s->state != XENSTATS_PV_SET_TIMED_OUT)
                    mon_dom_log(m, d, XENSTATS_LOG_WARNING, "set %s did not answer %u requests in a row", s->path,
                                s->timeouts_in_row);
                mon_set_state(m, s, XENSTATS_PV_SET_TIMED_OUT);
            } else {
                mon_set_state(m, s, XENSTATS_PV_SET_STALE);
            }
            mon_set_reason(s, "no answer within %u ms", m->opts.sample_timeout_ms);
        }
    }
}

size_t xenstats_monitor_pending(const struct xenstats_monitor *monitor)
{
    return monitor->outstanding;
}
