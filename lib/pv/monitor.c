/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor: the toolstack side of docs/pv-stats.md.
 *
 * Everything a guest writes is hostile: xenstore keys are parsed by
 * lib/pv/parse.c, name/type pages are copied once and validated, value
 * pages are copied after the provider signals and decoded from the copy.
 * Per domain and per set every count is bounded, and a set that misbehaves
 * only changes its own state.  One epoll set carries the xenstore watch
 * fd, the event channel fd and a timer, so one thread serves every domain.
 *
 * This file, the monitor's top: the object, its event loop and
 * inspection.  It calls discovery (monitor_discovery.c) and sampling
 * (monitor_sample.c), which call the set's state machine below them
 * (monitor_state.c); see monitor_state.h.
 */
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <xenstore.h>

#include "pv/monitor_discovery.h"
#include "pv/monitor_sample.h"

enum { TAG_XS = 1, TAG_EVTCHN = 2, TAG_TIMER = 3 };

/* ---- the event loop ------------------------------------------------------ */

int xenstats_monitor_dispatch(struct xenstats_monitor *monitor, int timeout_ms)
{
    struct epoll_event evs[8];
    int n, i, handled = 0;

    if (monitor->broken)
        return set_errno(monitor->broken);
    n = epoll_wait(monitor->epfd, evs, 8, timeout_ms);
    if (n < 0 && errno != EINTR)
        return set_errno(negative_errno());
    for (i = 0; i < n; i++) {
        switch (evs[i].data.u32) {
        case TAG_XS:
            mon_handle_watches(monitor);
            break;
        case TAG_EVTCHN:
            mon_handle_events(monitor);
            break;
        case TAG_TIMER:
            mon_handle_timeouts(monitor);
            break;
        }
        handled++;
    }
    if (monitor->broken)
        return set_errno(monitor->broken);
    mon_handle_urgent(monitor);
    mon_rescan_dirty(monitor);
    if (monitor->timer_dirty) {
        monitor->timer_dirty = false;
        mon_arm_timer(monitor);
    }
    return handled;
}

/*
 * Sets bound a moment ago first get their bind events, so those are not
 * taken for answers; then one request to every set, and the loop run
 * until each answered or timed out.
 */
int xenstats_monitor_sample(struct xenstats_monitor *monitor)
{
    /* not the sum of the sets' samples: a set withdrawn during the round
     * would take its samples with it, and the difference could go
     * negative and read as an error */
    uint64_t before = monitor->answers;
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    /* Sets bound a moment ago: let their bind events arrive first. */
    for (;;) {
        uint64_t now = 0, wait = 0;

        for (d = monitor->domains; d; d = d->next)
            for (s = d->sets; s; s = s->next) {
                if (!live(s) || !s->bind_event_due)
                    continue;
                if (!now)
                    now = monotonic_ns();
                if (now - s->bound_at < BIND_EVENT_GRACE_NS && BIND_EVENT_GRACE_NS - (now - s->bound_at) > wait)
                    wait = BIND_EVENT_GRACE_NS - (now - s->bound_at);
            }
        if (!wait)
            break;
        int r = xenstats_monitor_dispatch(monitor, (int)(wait / MS) + 1);

        if (r < 0 && r != -EINTR)
            return r;
    }
    xenstats_monitor_request_all(monitor);
    while (xenstats_monitor_pending(monitor)) {
        int r = xenstats_monitor_dispatch(monitor, (int)monitor->opts.sample_timeout_ms);

        if (r < 0 && r != -EINTR)
            return r;
    }
    return monitor->answers - before > INT_MAX ? INT_MAX : (int)(monitor->answers - before);
}

/* ---- construction -------------------------------------------------------- */

static int epoll_add(int epfd, int fd, uint32_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? negative_errno() : 0;
}

struct xenstats_monitor *xenstats_monitor_new(struct xenstats_host *host, const struct xenstats_monitor_opts *opts)
{
    struct platform *pl = &host->platform;
    struct xenstats_monitor *m;
    int r;

    if (!platform_has_store_grant_evtchn(pl)) {
        errno = ENOTSUP;
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    if (!m) {
        errno = ENOMEM;
        return NULL;
    }
    m->epfd = m->tfd = -1;
    m->host = host;
    m->platform = pl;
    if (OPTS_READ(&m->opts, opts) < 0)
        goto fail_errno;
    m->opts.size = sizeof(m->opts);
    if (!m->opts.sample_timeout_ms)
        m->opts.sample_timeout_ms = 500;
    if (!m->opts.min_interval_ms)
        m->opts.min_interval_ms = 100;
    if (!m->opts.stale_limit)
        m->opts.stale_limit = 3;
    /* a provider notifies only to answer (a late answer is one a
     * request): each event beyond costs a wake-up, which on real Xen
     * under QEMU was the bulk of the agent's CPU with a flooder */
    if (!m->opts.max_unsolicited)
        m->opts.max_unsolicited = 4;
    if (!m->opts.max_rejected_sets)
        m->opts.max_rejected_sets = 32;
    if (!m->opts.max_reads_per_s)
        m->opts.max_reads_per_s = 128;
    if (!m->opts.max_rescans_per_s)
        m->opts.max_rescans_per_s = 10;
    if (!m->opts.max_log_per_s)
        m->opts.max_log_per_s = 1;
    if (!m->opts.max_live_sets)
        m->opts.max_live_sets = 256;
    if (!m->opts.max_mapped_pages)
        m->opts.max_mapped_pages = 1024;

    m->xs = platform_store_open(pl, 0);
    if (!m->xs)
        goto fail_errno;
    m->evtchn = platform_evtchn_open(pl);
    if (!m->evtchn)
        goto fail_errno;
    m->epfd = epoll_create1(EPOLL_CLOEXEC);
    m->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (m->epfd < 0 || m->tfd < 0)
        goto fail_errno;
    r = xs_fileno(m->xs);
    if (r < 0)
        goto fail_errno;
    r = epoll_add(m->epfd, r, TAG_XS);
    if (r == 0 && !xs_watch(m->xs, "@releaseDomain", "xenstats-pv-release"))
        r = negative_errno();
    /* a restored or migrated guest is a new domain: say so at once */
    if (r == 0 && !xs_watch(m->xs, "@introduceDomain", "xenstats-pv-introduce"))
        r = negative_errno();
    if (r == 0)
        r = epoll_add(m->epfd, platform_evtchn_fd(pl, m->evtchn), TAG_EVTCHN);
    if (r == 0)
        r = epoll_add(m->epfd, m->tfd, TAG_TIMER);
    if (r < 0) {
        errno = -r;
        goto fail_errno;
    }
    return m;
fail_errno:
    r = negative_errno();
    xenstats_monitor_free(m);
    set_errno(r);
    return NULL;
}

void xenstats_monitor_free(struct xenstats_monitor *monitor)
{
    if (!monitor)
        return;
    while (monitor->domains) {
        struct mon_domain *d = monitor->domains;

        monitor->domains = d->next;
        mon_domain_free(monitor, d, "monitor stopped");
    }
    if (monitor->evtchn)
        platform_evtchn_close(monitor->platform, monitor->evtchn);
    if (monitor->xs)
        xs_close(monitor->xs);
    if (monitor->epfd >= 0)
        close(monitor->epfd);
    if (monitor->tfd >= 0)
        close(monitor->tfd);
    free(monitor->by_port);
    free(monitor->list);
    free(monitor->by_domid);
    free(monitor->scratch);
    free(monitor);
}

int xenstats_monitor_fd(const struct xenstats_monitor *monitor)
{
    return monitor->epfd;
}

/* ---- inspection ---------------------------------------------------------- */

static void rebuild_list(struct xenstats_monitor *m)
{
    const struct mon_domain *d;
    struct xenstats_pv_set *s;
    size_t n = 0;

    for (d = m->domains; d; d = d->next)
        for (s = d->sets; s; s = s->next)
            n++;
    if (n > m->list_cap) {
        struct xenstats_pv_set **grown = realloc(m->list, n * sizeof(*grown));

        if (!grown)
            return;
        m->list = grown;
        m->list_cap = n;
    }
    m->list_len = 0;
    for (d = m->domains; d; d = d->next)
        for (s = d->sets; s; s = s->next)
            m->list[m->list_len++] = s;
    m->list_dirty = false;
}

size_t xenstats_monitor_nr_sets(const struct xenstats_monitor *monitor)
{
    struct xenstats_monitor *m = (struct xenstats_monitor *)monitor;

    rebuild_list(m);
    return m->list_len;
}

const struct xenstats_pv_set *xenstats_monitor_set(const struct xenstats_monitor *monitor, size_t i)
{
    struct xenstats_monitor *m = (struct xenstats_monitor *)monitor;

    if (m->list_dirty)
        rebuild_list(m);
    return i < m->list_len ? m->list[i] : NULL;
}

void xenstats_pv_set_get_info(const struct xenstats_pv_set *s, struct xenstats_pv_set_info *ret_info)
{
    ret_info->domid = s->domain->domid;
    ret_info->provider = s->provider;
    ret_info->set = s->name;
    ret_info->state = s->state;
    ret_info->reason = s->reason;
    ret_info->nr_stats = s->nr_stats;
    ret_info->samples = s->samples;
    ret_info->timeouts = s->timeouts;
    ret_info->errors = s->errors;
    ret_info->last_sample_ns = s->last_sample_ns;
    ret_info->last_latency_ns = s->last_latency_ns;
}

unsigned int xenstats_monitor_domains_introduced(struct xenstats_monitor *monitor)
{
    unsigned int n = monitor->introduced;

    monitor->introduced = 0;
    return n;
}

uint64_t xenstats_pv_set_attached_ns(const struct xenstats_pv_set *s)
{
    return live(s) ? s->bound_at : 0;
}

int xenstats_pv_set_get_stat(const struct xenstats_pv_set *s, uint32_t i, struct xenstats_pv_stat *ret_stat)
{
    if (i >= s->nr_stats)
        return set_errno(-ENOENT);
    ret_stat->name = s->names[i];
    ret_stat->type = (enum xenstats_pv_type)s->types[i];
    ret_stat->valid = s->samples > 0 && s->valid[i];
    memset(&ret_stat->value, 0, sizeof(ret_stat->value));
    if (!ret_stat->valid) {
        if (ret_stat->type == XENSTATS_PV_ASCII)
            ret_stat->value.ascii = ""; /* never NULL: see pv.h */
        return 0;
    }
    switch (s->types[i]) {
    case XEN_PV_STATS_TYPE_S64:
        ret_stat->value.s64 = s->numbers[i].s64;
        break;
    case XEN_PV_STATS_TYPE_U64:
        ret_stat->value.u64 = s->numbers[i].u64;
        break;
    case XEN_PV_STATS_TYPE_DOUBLE:
        ret_stat->value.dbl = s->numbers[i].dbl;
        break;
    default:
        ret_stat->value.ascii = s->texts[i];
        break;
    }
    return 0;
}

static int compare_domids(const void *x, const void *y)
{
    const struct mon_domain *a = *(struct mon_domain *const *)x, *b = *(struct mon_domain *const *)y;

    return a->domid < b->domid ? -1 : a->domid > b->domid;
}

/* mon_domain_find() in O(log n); falls back to the list when out of memory. */
static struct mon_domain *domain_lookup(struct xenstats_monitor *m, uint32_t domid)
{
    size_t lo = 0, hi, n = 0;
    struct mon_domain *d;

    if (m->by_domid_dirty) {
        for (d = m->domains; d; d = d->next)
            n++;
        if (n > m->by_domid_cap) {
            struct mon_domain **grown = realloc(m->by_domid, n * sizeof(*grown));

            if (!grown)
                return mon_domain_find(m, domid);
            m->by_domid = grown;
            m->by_domid_cap = n;
        }
        m->by_domid_len = 0;
        for (d = m->domains; d; d = d->next)
            m->by_domid[m->by_domid_len++] = d;
        qsort(m->by_domid, m->by_domid_len, sizeof(*m->by_domid), compare_domids);
        m->by_domid_dirty = false;
    }
    hi = m->by_domid_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (m->by_domid[mid]->domid == domid)
            return m->by_domid[mid];
        if (m->by_domid[mid]->domid < domid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int xenstats_monitor_domain_info(const struct xenstats_monitor *monitor, uint32_t domid,
                                 struct xenstats_pv_domain_info *ret_info)
{
    const struct mon_domain *d = domain_lookup((struct xenstats_monitor *)monitor, domid);

    if (!d)
        return set_errno(-ENOENT);
    memset(ret_info, 0, sizeof(*ret_info));
    ret_info->domid = d->domid;
    ret_info->throttled = throttled(d, monotonic_ns());
    ret_info->sets_rejected = d->nr_rejected;
    ret_info->sets_ignored = d->sets_ignored;
    ret_info->rescans = d->rescans;
    ret_info->xenstore_reads = d->xs_reads;
    ret_info->budget_exceeded = d->budget_exceeded;
    ret_info->log_suppressed = d->log_suppressed;
    ret_info->live_sets = d->live_sets;
    ret_info->mapped_pages = d->mapped_pages;
    ret_info->sets_capped = d->sets_capped;
    return 0;
}
