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
 */
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <xenstore.h>

#include <xenstats/pv.h>

#include "platform/platform.h"
#include "pv/parse.h"
#include "util/util.h"

#define PATH_LEN 512
#define MAX_PROVIDERS 64  /* per domain */
#define MAX_SETS 64       /* per provider */
#define RESCAN_GAP_NS (50 * 1000000ULL) /* a busy guest is rescanned at most 20 times a second */
#define MS 1000000ULL
#define BIND_EVENT_GRACE_NS (50 * MS)
/* Budgets (docs/pv-stats.md "Budgets"): what one domain may cost. */
#define THROTTLED_GAP_MAX_NS (2000 * MS) /* a throttled domain is rescanned at least this often */
#define THROTTLE_MEMORY_NS (10000 * MS)  /* marked throttled this long after exceeding a budget */
#define READS_BURST_S 4                  /* a burst of 4 s' worth of reads, e.g. a provider starting */
#define READS_PER_SCAN 128               /* a scan stops here and goes on after the gap */
#define LOG_BURST 32
#define RETRY_FIRST_MS 100 /* a set that may come back is re-examined after this, */
#define RETRY_MAX_MS 5000  /* doubling up to this */

/* A token bucket: `tokens` refill at a rate up to a burst. */
struct bucket {
    double tokens;
    uint64_t at;
};

union pv_number {
    int64_t s64;
    uint64_t u64;
    double dbl;
};

struct xenstats_pv_set {
    struct xenstats_pv_set *next; /* in its domain */
    struct mon_domain *domain;
    char provider[XEN_PV_STATS_NAME_MAX + 1]; /* names, from the nodes' values */
    char name[XEN_PV_STATS_NAME_MAX + 1];
    char provider_key[XEN_PV_STATS_NAME_MAX + 1]; /* node names */
    char key[XEN_PV_STATS_NAME_MAX + 1];
    char path[PATH_LEN];
    enum xenstats_pv_set_state state;
    char reason[PV_REASON_MAX];
    bool seen; /* still listed by the last rescan */
    uint64_t fingerprint; /* of the keys the set was last judged on (attached or rejected) */
    bool dirty;           /* a watch fired under its path: examine it again */
    bool transient;       /* rejected for a failure that can pass (map, bind): retried */
    bool peer_closed;     /* withdrawn because the provider's end of the channel closed */
    uint64_t retry_at;    /* examine again then, whatever the watches say; 0: never */
    uint32_t backoff_ms;

    struct pv_set_keys keys;
    const uint8_t *name_map, *value_map; /* read-only grant mappings */
    uint64_t names_hash;                 /* of the name pages as validated */
    /* what the set declared, in one block (stat_block): names, types, the
     * last sample's numbers and validity; a set of 32 takes 1 KiB, not the
     * 4 KiB of the parser's page-sized descriptors */
    void *stat_block;
    const char **names;
    uint8_t *types;
    union pv_number *numbers;
    char (*texts)[XEN_PV_STATS_ENTRY_SIZE]; /* only when the set has ascii statistics */
    bool *valid;
    uint32_t nr_stats;
    int port; /* local, -1 when not bound */
    bool masked; /* left masked after an event flood */
    /* Binding sets our new port pending (as EVTCHNOP_bind_interdomain
     * does, for a notification sent before the bind): that event is no
     * answer and no misbehaviour. */
    bool bind_event_due;
    uint64_t bound_at;
    bool names_rewritten_logged;

    uint64_t requested_at, deadline;
    uint32_t timeouts_in_row;
    uint64_t samples, timeouts, errors;
    uint64_t last_sample_ns, last_latency_ns;
    uint64_t unsolicited_window_start;
    uint32_t unsolicited_in_window;
};

struct mon_domain {
    struct mon_domain *next;
    struct xenstats_monitor *monitor;
    uint32_t domid;
    char stats[PATH_LEN]; /* /local/domain/<id>/stats */
    char token[32];
    bool dirty;           /* some scan work waits: the tree, or a set marked dirty */
    bool structure_dirty; /* providers or sets may have come or gone: list them */
    uint64_t last_scan;
    uint64_t not_before; /* no scan before this: the read budget refills */
    uint64_t gap_ns;     /* between scans; grows while throttled */
    struct xenstats_pv_set *sets;
    bool warned_providers, warned_sets;

    /* budgets */
    struct bucket reads, logs;
    uint64_t window_start;
    uint32_t rescans_in_window;
    uint64_t throttled_until;
    uint32_t nr_rejected, sets_ignored, log_pending_suppressed;
    uint64_t rescans, xs_reads, budget_exceeded, log_suppressed;
};

struct xenstats_monitor {
    struct xenstats_host *host;
    struct platform *platform;
    struct xs_handle *xs;
    struct platform_evtchn *evtchn;
    int epfd, tfd;
    struct xenstats_monitor_opts opts;
    struct mon_domain *domains;
    struct xenstats_pv_set **by_port;
    size_t by_port_len;
    struct xenstats_pv_set **list; /* snapshot for xenstats_monitor_set() */
    size_t list_len, list_cap;
    bool list_dirty;
    /* domains sorted by domid, for the collector's look-up of each of
     * thousands of domains per round */
    struct mon_domain **by_domid;
    size_t by_domid_len, by_domid_cap;
    bool by_domid_dirty;
    bool release_watched;
    int broken; /* -errno once xenstore or the event channel device is gone */
    size_t outstanding;  /* sets in the sampling state */
    bool any_dirty;      /* some domain waits for a rescan */
    bool timer_dirty;    /* deadlines or rescans changed: re-arm the timer */
    /* private copies of guest pages live here only while being parsed or
     * decoded: one buffer for all sets keeps a monitor of thousands small */
    uint8_t *scratch;
    size_t scratch_len;
};

static int grow_scratch(struct xenstats_monitor *m, size_t bytes)
{
    uint8_t *p = realloc(m->scratch, bytes);

    if (!p)
        return -ENOMEM;
    m->scratch = p;
    m->scratch_len = bytes;
    return 0;
}

/* A fast hash of whole pages (word at a time): detects rewritten names. */
static uint64_t page_hash(const volatile uint8_t *pages, size_t bytes)
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

enum { TAG_XS = 1, TAG_EVTCHN = 2, TAG_TIMER = 3 };

/* ---- helpers ------------------------------------------------------------ */

/* Every state change goes here, so the count of outstanding requests
 * stays exact without walking every set. */
static void set_state(struct xenstats_monitor *m, struct xenstats_pv_set *s, enum xenstats_pv_set_state state)
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
    s->state = state;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = data;

    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void set_reason(struct xenstats_pv_set *s, const char *fmt, ...) XS_PRINTF(2, 3);

static void set_reason(struct xenstats_pv_set *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
    va_end(ap);
}

/* ---- budgets --------------------------------------------------------------- */

static void bucket_fill(struct bucket *b, uint64_t now, double rate, double burst)
{
    if (b->at)
        b->tokens += (double)(now - b->at) / 1e9 * rate;
    if (!b->at || b->tokens > burst)
        b->tokens = burst;
    b->at = now;
}

static bool throttled(const struct mon_domain *d, uint64_t now)
{
    return d->throttled_until > now;
}

/*
 * A budget ran out: mark the domain, and for the budgets of work (reads,
 * rescans, rejected sets) slow its rescans down.  Dropping the lines is
 * all the log budget needs.
 */
static void over_budget(struct mon_domain *d, uint64_t now, const char *which)
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
static void dom_log(struct xenstats_monitor *m, struct mon_domain *d, enum xenstats_log_level level,
                    const char *fmt, ...) XS_PRINTF(4, 5);

static void dom_log(struct xenstats_monitor *m, struct mon_domain *d, enum xenstats_log_level level,
                    const char *fmt, ...)
{
    uint64_t now;
    char line[768];
    va_list ap;

    if (!log_enabled(level))
        return;
    now = monotonic_ns();
    bucket_fill(&d->logs, now, m->opts.max_log_per_s, LOG_BURST);
    if (d->logs.tokens < 1) {
        d->log_suppressed++;
        d->log_pending_suppressed++;
        if (d->log_pending_suppressed == 1)
            over_budget(d, now, NULL);
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

/* xenstore reads on a domain's behalf, counted against its budget */
static void charge_read(struct mon_domain *d)
{
    d->xs_reads++;
    d->reads.tokens -= 1;
}

static char *dom_read(struct xenstats_monitor *m, struct mon_domain *d, const char *path, unsigned int *len)
{
    charge_read(d);
    return xs_read(m->xs, XBT_NULL, path, len);
}

static char **dom_directory(struct xenstats_monitor *m, struct mon_domain *d, const char *path, unsigned int *n)
{
    charge_read(d);
    return xs_directory(m->xs, XBT_NULL, path, n);
}

static void port_map(struct xenstats_monitor *m, int port, struct xenstats_pv_set *s)
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

static struct xenstats_pv_set *port_lookup(struct xenstats_monitor *m, int port)
{
    return port >= 0 && (size_t)port < m->by_port_len ? m->by_port[port] : NULL;
}

/*
 * Armed at the earliest deadline as an absolute time, so without reading
 * the clock: in a PV dom0 clock_gettime() is a real system call (about
 * 20 us under QEMU), and a sample used to read it five times.
 */
static uint64_t next_scan_at(const struct mon_domain *d);

static void arm_timer(struct xenstats_monitor *m)
{
    struct itimerspec its = {0};
    uint64_t earliest = 0;
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    for (d = m->domains; d; d = d->next) {
        /* scans wait for the outstanding answers (set_state re-arms) */
        uint64_t at = m->outstanding ? 0 : next_scan_at(d);

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

static bool live(const struct xenstats_pv_set *s)
{
    return s->state == XENSTATS_PV_SET_ACTIVE || s->state == XENSTATS_PV_SET_STALE ||
           s->state == XENSTATS_PV_SET_TIMED_OUT || s->state == XENSTATS_PV_SET_SAMPLING;
}

/* The provider's end of the channel is closed (Xen sends no event for it). */
static bool peer_gone(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    enum platform_evtchn_state st;

    if (s->port < 0)
        return false;

    return platform_evtchn_status(m->platform, m->evtchn, (uint32_t)s->port, &st) == 0 &&
           st != PLATFORM_EVTCHN_INTERDOMAIN;
}

/* ---- set lifecycle ------------------------------------------------------- */

static void set_detach(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{

    if (s->port >= 0) {
        port_map(m, s->port, NULL);
        platform_evtchn_unbind(m->platform, m->evtchn, (uint32_t)s->port);
        s->port = -1;
    }
    if (s->name_map)
        platform_grant_unmap(m->platform, (void *)s->name_map, s->keys.nr_pages);
    if (s->value_map)
        platform_grant_unmap(m->platform, (void *)s->value_map, s->keys.nr_pages);
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

/* Examine the set again at a growing interval: it may come back by itself. */
static void set_retry_later(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    s->backoff_ms = s->backoff_ms ? (s->backoff_ms * 2 < RETRY_MAX_MS ? s->backoff_ms * 2 : RETRY_MAX_MS)
                                  : RETRY_FIRST_MS;
    s->retry_at = monotonic_ns() + (uint64_t)s->backoff_ms * MS;
    m->timer_dirty = true;
}

static void set_reject(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t fingerprint, bool transient)
{
    bool again = s->state == XENSTATS_PV_SET_REJECTED && s->fingerprint == fingerprint;

    set_detach(m, s);
    set_state(m, s, XENSTATS_PV_SET_REJECTED);
    s->fingerprint = fingerprint;
    s->transient = transient;
    s->peer_closed = false;
    s->errors++;
    if (transient)
        set_retry_later(m, s);
    else
        s->retry_at = 0;
    /* one line per set and reason, not one per retry */
    if (!again)
        dom_log(m, s->domain, XENSTATS_LOG_WARNING, "set %s rejected: %s", s->path, s->reason);
}

static void set_withdraw(struct xenstats_monitor *m, struct xenstats_pv_set *s, const char *why)
{
    if (s->state != XENSTATS_PV_SET_WITHDRAWN)
        dom_log(m, s->domain, XENSTATS_LOG_INFO, "set %s withdrawn (%s)", s->path, why);
    set_detach(m, s);
    set_state(m, s, XENSTATS_PV_SET_WITHDRAWN);
    if (why != s->reason)
        set_reason(s, "%s", why);
    s->peer_closed = false;
    m->list_dirty = true;
}

/*
 * Read the set's keys.  Returns 0 with keys filled, -ENOENT when the set is
 * not ready (no event-channel), or -EINVAL with s->reason.  *fingerprint
 * covers everything read, so a set is only judged again when the guest
 * changed something (or a retry is due).
 */
static int read_keys(struct xenstats_monitor *m, struct xenstats_pv_set *s, struct pv_set_keys *keys,
                     uint64_t *fingerprint, char reason[PV_REASON_MAX])
{
    const char *names[PV_MAX_SET_KEYS];
    size_t name_lens[PV_MAX_SET_KEYS], value_lens[PV_MAX_SET_KEYS];
    char *values[PV_MAX_SET_KEYS];
    unsigned int n = 0, i;
    char **dir;
    int r;

    dir = dom_directory(m, s->domain, s->path, &n);
    if (!dir)
        return -ENOENT;
    *fingerprint = 0xcbf29ce484222325ULL;
    if (n > PV_MAX_SET_KEYS) {
        *fingerprint = fnv1a(*fingerprint, &n, sizeof(n));
        snprintf(reason, PV_REASON_MAX, "%u keys (at most %u)", n, PV_MAX_SET_KEYS);
        free(dir);
        return -E2BIG;
    }
    for (i = 0; i < n; i++) {
        char path[PATH_LEN + XENSTORE_REL_PATH_MAX];
        unsigned int len = 0;

        names[i] = dir[i];
        name_lens[i] = strnlen(dir[i], XENSTORE_REL_PATH_MAX);
        snprintf(path, sizeof(path), "%s/%s", s->path, dir[i]);
        values[i] = dom_read(m, s->domain, path, &len);
        value_lens[i] = values[i] ? len : 0;
        *fingerprint = fnv1a(*fingerprint, names[i], name_lens[i] + 1);
        if (values[i])
            *fingerprint = fnv1a(*fingerprint, values[i], value_lens[i]);
    }
    r = pv_parse_set_keys(names, name_lens, (const char *const *)values, value_lens, n, keys, reason);
    for (i = 0; i < n; i++)
        free(values[i]);
    free(dir);
    if (r < 0)
        return r;
    if (!keys->have_event_channel)
        return -ENOENT;
    return 0;
}

/* The parser's descriptors of s (nr_stats of them) into s's own block. */
static int keep_declarations(struct xenstats_pv_set *s, const struct pv_stat_desc *descs)
{
    size_t n = s->nr_stats, text = 0, head = n * (sizeof(*s->names) + sizeof(*s->numbers) + 2);
    bool any_ascii = false;
    char *at;

    for (size_t i = 0; i < n; i++) {
        text += strlen(descs[i].name) + 1;
        any_ascii |= descs[i].type == XEN_PV_STATS_TYPE_ASCII;
    }
    s->stat_block = calloc(1, head + text + 1);
    if (any_ascii)
        s->texts = calloc(n, sizeof(*s->texts));
    if (!s->stat_block || (any_ascii && !s->texts)) {
        free(s->stat_block);
        free(s->texts);
        s->stat_block = NULL;
        s->texts = NULL;
        s->nr_stats = 0;
        return -ENOMEM;
    }
    s->names = s->stat_block;
    s->numbers = (union pv_number *)(s->names + n);
    s->types = (uint8_t *)(s->numbers + n);
    s->valid = (bool *)(s->types + n);
    at = (char *)(s->valid + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(descs[i].name) + 1;

        s->types[i] = descs[i].type;
        s->names[i] = memcpy(at, descs[i].name, len);
        at += len;
    }
    return 0;
}

static int set_attach(struct xenstats_monitor *m, struct xenstats_pv_set *s, const struct pv_set_keys *keys)
{
    struct platform *pl = m->platform;
    struct pv_stat_desc *descs;
    uint8_t *name_copy;
    size_t bytes;
    int r;

    s->keys = *keys;
    bytes = (size_t)keys->nr_pages * XEN_PV_STATS_PAGE_SIZE;
    s->name_map = platform_grant_map(pl, s->domain->domid, keys->nr_pages, keys->name_type_ref, PROT_READ);
    if (!s->name_map) {
        set_reason(s, "cannot map name-type-ref grants: %s", strerror(errno));
        return -EAGAIN;
    }
    name_copy = bytes <= m->scratch_len ? m->scratch : NULL;
    if (!name_copy && grow_scratch(m, bytes) == 0)
        name_copy = m->scratch;
    descs = calloc(PV_MAX_STATS < keys->nr_pages * XEN_PV_STATS_PER_PAGE ? PV_MAX_STATS
                                                                          : keys->nr_pages * XEN_PV_STATS_PER_PAGE,
                   sizeof(*descs));
    if (!name_copy || !descs) {
        free(descs);
        set_reason(s, "out of memory");
        return -ENOMEM;
    }
    /* Copy once, then validate the copy: the guest may change the pages. */
    memcpy(name_copy, s->name_map, bytes);
    s->names_hash = page_hash(name_copy, bytes);
    r = pv_parse_name_pages(name_copy, keys->nr_pages, descs, s->reason);
    if (r < 0) {
        free(descs);
        return r;
    }
    s->nr_stats = (uint32_t)r;
    r = keep_declarations(s, descs);
    free(descs);
    if (r < 0) {
        set_reason(s, "out of memory");
        return r;
    }
    s->value_map = platform_grant_map(pl, s->domain->domid, keys->nr_pages, keys->value_ref, PROT_READ);
    if (!s->value_map) {
        set_reason(s, "cannot map val-ref grants: %s", strerror(errno));
        return -EAGAIN;
    }
    r = platform_evtchn_bind_interdomain(pl, m->evtchn, s->domain->domid, keys->event_channel);
    if (r < 0) {
        set_reason(s, "cannot bind event-channel %u: %s", keys->event_channel, strerror(-r));
        return -EAGAIN;
    }
    s->port = r;
    port_map(m, s->port, s);
    s->bind_event_due = true;
    s->bound_at = monotonic_ns();
    set_state(m, s, XENSTATS_PV_SET_ACTIVE);
    s->reason[0] = '\0';
    s->timeouts_in_row = 0;
    s->transient = s->peer_closed = false;
    s->retry_at = 0;
    s->backoff_ms = 0;
    dom_log(m, s->domain, XENSTATS_LOG_INFO, "monitoring set %s (%u statistics, %u pages)", s->path, s->nr_stats,
            keys->nr_pages);
    return 0;
}

static struct xenstats_pv_set *set_find(struct mon_domain *d, const char *provider_key, const char *key)
{
    struct xenstats_pv_set *s;

    for (s = d->sets; s; s = s->next)
        if (!strcmp(s->provider_key, provider_key) && !strcmp(s->key, key))
            return s;
    return NULL;
}

/*
 * The name a node's value gives (docs/pv-stats.md: keys cannot spell every
 * name), or the key itself when the value is missing or not a valid name.
 */
static void node_name(struct xenstats_monitor *m, struct mon_domain *d, const char *path, const char *key,
                      char name[XEN_PV_STATS_NAME_MAX + 1])
{
    unsigned int len = 0;
    char *v = dom_read(m, d, path, &len);

    if (v && len > 0 && len <= XEN_PV_STATS_NAME_MAX && strlen(v) == len && xenstats_pv_name_check(v) == 0)
        memcpy(name, v, len + 1);
    else
        snprintf(name, XEN_PV_STATS_NAME_MAX + 1, "%s", key);
    free(v);
}

static struct xenstats_pv_set *set_new(struct xenstats_monitor *m, struct mon_domain *d, const char *provider_key,
                                       const char *key)
{
    char ppath[PATH_LEN + XEN_PV_STATS_NAME_MAX + 2];
    struct xenstats_pv_set *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->domain = d;
    s->port = -1;
    s->state = XENSTATS_PV_SET_WITHDRAWN; /* not published yet */
    strcpy(s->provider_key, provider_key);
    strcpy(s->key, key);
    if (snprintf(s->path, sizeof(s->path), "%s/%s/%s", d->stats, provider_key, key) >= (int)sizeof(s->path)) {
        free(s);
        return NULL;
    }
    snprintf(ppath, sizeof(ppath), "%s/%s", d->stats, provider_key);
    node_name(m, d, ppath, provider_key, s->provider);
    node_name(m, d, s->path, key, s->name);
    s->dirty = true;
    s->next = d->sets;
    d->sets = s;
    m->list_dirty = true;
    return s;
}

/*
 * Look at one set again: attach, keep, or withdraw it.  A live set stays
 * only if every key is as it was when attached and the provider's end of
 * the channel is still bound to ours: a provider that died and came back
 * gets new grant references, and often the same port number.
 */
static void scan_set(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    char reason[PV_REASON_MAX];
    struct pv_set_keys keys;
    uint64_t fp = 0;
    bool was_peer_closed = s->peer_closed;
    int r;

    s->dirty = false;
    s->retry_at = 0;
    memset(&keys, 0, sizeof(keys));
    reason[0] = '\0';
    r = read_keys(m, s, &keys, &fp, reason);

    if (live(s)) {
        if (r == 0 && fp == s->fingerprint && !peer_gone(m, s))
            return;
        if (r == -ENOENT || r == -EAGAIN) {
            /* event-channel gone: withdrawn (seed); or changing under us */
            set_withdraw(m, s, "event-channel removed");
            return;
        }
        if (r == 0 && fp == s->fingerprint) {
            set_withdraw(m, s, "the provider closed its event channel");
            was_peer_closed = true;
        } else {
            set_withdraw(m, s, "keys changed");
        }
    }
    /* Not (or no longer) published, or changing under us (a key vanished
     * while event-channel was there): look again on the next watch event. */
    if (r == -ENOENT || r == -EAGAIN)
        return;
    /* judged on exactly these keys before, and not for a reason that passes */
    if (s->state == XENSTATS_PV_SET_REJECTED && fp == s->fingerprint && !s->transient)
        return;
    if (r < 0) {
        snprintf(s->reason, sizeof(s->reason), "%s", reason);
        set_reject(m, s, fp, false);
        m->list_dirty = true;
        return;
    }
    set_detach(m, s);
    r = set_attach(m, s, &keys);
    if (r == 0) {
        s->fingerprint = fp;
    } else if (was_peer_closed && fp == s->fingerprint && r == -EAGAIN) {
        /* the dead provider's keys, still there: wait for it quietly */
        set_detach(m, s);
        set_reason(s, "the provider closed its event channel");
        s->peer_closed = true;
        set_retry_later(m, s);
    } else {
        set_reject(m, s, fp, r == -EAGAIN || r == -ENOMEM);
    }
    m->list_dirty = true;
}

/* The sets of one domain's tree, listed; new ones are created (within budget). */
static void list_sets(struct xenstats_monitor *m, struct mon_domain *d, uint64_t now)
{
    struct xenstats_pv_set *s, **pp;
    unsigned int np = 0, i, j, ignored = 0, idle = 0;
    char **providers;

    /* sets not live (rejected, or listed without a usable event-channel)
     * are what a hostile guest can multiply: at most max_rejected_sets */
    for (s = d->sets; s; s = s->next) {
        s->seen = false;
        idle += !live(s);
    }
    providers = dom_directory(m, d, d->stats, &np);
    for (i = 0; providers && i < np; i++) {
        char path[PATH_LEN + XENSTORE_REL_PATH_MAX];
        unsigned int ns = 0;
        char **sets;

        if (i >= MAX_PROVIDERS) {
            if (!d->warned_providers)
                dom_log(m, d, XENSTATS_LOG_WARNING, "%u providers, only the first %u are monitored", np,
                        MAX_PROVIDERS);
            d->warned_providers = true;
            break;
        }
        if (!pv_key_ok(providers[i]))
            continue; /* no key xenstored would have accepted from us */
        snprintf(path, sizeof(path), "%s/%s", d->stats, providers[i]);
        sets = dom_directory(m, d, path, &ns);
        for (j = 0; sets && j < ns; j++) {
            if (j >= MAX_SETS) {
                if (!d->warned_sets)
                    dom_log(m, d, XENSTATS_LOG_WARNING, "provider with %u sets, only the first %u are monitored", ns,
                            MAX_SETS);
                d->warned_sets = true;
                break;
            }
            if (!pv_key_ok(sets[j]))
                continue;
            s = set_find(d, providers[i], sets[j]);
            if (!s) {
                /* a guest with many bad sets gets no more of our reads */
                if (idle >= m->opts.max_rejected_sets) {
                    ignored++;
                    continue;
                }
                s = set_new(m, d, providers[i], sets[j]);
                if (!s)
                    continue;
                idle++;
            }
            s->seen = true;
        }
        free(sets);
    }
    free(providers);
    if (ignored && !d->sets_ignored)
        dom_log(m, d, XENSTATS_LOG_WARNING, "%u sets not live: %u more sets ignored unread", idle, ignored);
    if (ignored) {
        /* list again later: room may come free (throttled: not soon) */
        over_budget(d, now, "rejected sets");
        d->structure_dirty = d->dirty = true;
        m->any_dirty = m->timer_dirty = true;
    }
    d->sets_ignored = ignored;

    /* Sets whose keys vanished without ceremony are withdrawn too. */
    for (pp = &d->sets; (s = *pp);) {
        if (!s->seen) {
            set_withdraw(m, s, s->state == XENSTATS_PV_SET_WITHDRAWN ? s->reason : "keys removed");
            *pp = s->next;
            set_detach(m, s);
            free(s);
            m->list_dirty = true;
            continue;
        }
        pp = &s->next;
    }
}

/*
 * One scan of a domain: list the tree if it changed, then examine the sets
 * marked dirty, as far as the read budget and this scan's share go.  What
 * is left stays dirty for the next scan.
 */
static void scan_domain(struct xenstats_monitor *m, struct mon_domain *d, size_t slice)
{
    uint64_t now = monotonic_ns(), reads_at_start;
    struct xenstats_pv_set *s;
    bool left = false;

    d->dirty = false;
    d->last_scan = now;
    d->rescans++;
    if (now - d->window_start >= 1000 * MS) {
        d->window_start = now;
        d->rescans_in_window = 0;
    }
    if (++d->rescans_in_window > m->opts.max_rescans_per_s)
        over_budget(d, now, "rescan");
    else if (!throttled(d, now))
        d->gap_ns = RESCAN_GAP_NS;
    bucket_fill(&d->reads, now, m->opts.max_reads_per_s, (double)m->opts.max_reads_per_s * READS_BURST_S);
    reads_at_start = d->xs_reads;

    if (d->structure_dirty) {
        d->structure_dirty = false;
        list_sets(m, d, now);
    }
    for (s = d->sets; s; s = s->next) {
        if (s->retry_at && s->retry_at <= now)
            s->dirty = true;
        if (!s->dirty)
            continue;
        if (d->reads.tokens < 1 || d->xs_reads - reads_at_start >= slice) {
            left = true;
            continue;
        }
        scan_set(m, s);
    }
    if (d->reads.tokens < 1) {
        /* come back when the bucket holds a scan's worth again */
        double missing = (double)READS_PER_SCAN - d->reads.tokens;

        over_budget(d, now, "xenstore read");
        d->not_before = now + (uint64_t)(missing / m->opts.max_reads_per_s * 1e9);
    }
    if (left) {
        d->dirty = true;
        m->any_dirty = true;
        m->timer_dirty = true;
    }
}

/* When a domain's next scan may run (0: nothing to do). */
static uint64_t next_scan_at(const struct mon_domain *d)
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

/* ---- domains ------------------------------------------------------------- */

static struct mon_domain *domain_find(struct xenstats_monitor *m, uint32_t domid)
{
    struct mon_domain *d;

    for (d = m->domains; d; d = d->next)
        if (d->domid == domid)
            return d;
    return NULL;
}

static int create_stats_node(struct xenstats_monitor *m, struct mon_domain *d)
{
    struct xs_permissions perms[2] = {
        {.id = d->domid, .perms = XS_PERM_NONE},            /* owner: the guest writes below */
        {.id = m->platform->self_domid, .perms = XS_PERM_READ},
    };
    char value[16];
    int n = snprintf(value, sizeof(value), "%u", m->platform->self_domid);

    if (!xs_write(m->xs, XBT_NULL, d->stats, value, (unsigned int)n))
        return negative_errno();
    if (!xs_set_permissions(m->xs, XBT_NULL, d->stats, perms, m->platform->self_domid == 0 ? 1 : 2))
        return negative_errno();
    return 0;
}

int xenstats_monitor_add_domain(struct xenstats_monitor *monitor, uint32_t domid)
{
    struct mon_domain *d;
    char *home;
    int r;

    if (domain_find(monitor, domid))
        return set_errno(-EEXIST);
    d = calloc(1, sizeof(*d));
    if (!d)
        return set_errno(-ENOMEM);
    d->monitor = monitor;
    d->domid = domid;
    d->gap_ns = RESCAN_GAP_NS;
    d->structure_dirty = true;
    home = xs_get_domain_path(monitor->xs, domid);
    if (!home) {
        free(d);
        return set_errno(negative_errno());
    }
    snprintf(d->stats, sizeof(d->stats), "%s/%s", home, XEN_PV_STATS_TOP);
    free(home);
    snprintf(d->token, sizeof(d->token), "xenstats-pv-%u", domid);
    if (monitor->opts.create_stats_node) {
        r = create_stats_node(monitor, d);
        if (r < 0) {
            log_error("domain %u: cannot create %s: %s", domid, d->stats, strerror(-r));
            free(d);
            return set_errno(r);
        }
    }
    /* The watch fires once at once: that first event triggers the scan. */
    if (!xs_watch(monitor->xs, d->stats, d->token)) {
        r = negative_errno();
        free(d);
        return set_errno(r);
    }
    d->next = monitor->domains;
    monitor->domains = d;
    monitor->by_domid_dirty = true;
    /* Attach what is already published now; the watch's first event
     * only causes a cheap rescan. */
    scan_domain(monitor, d, SIZE_MAX); /* as far as the burst goes */
    monitor->timer_dirty = true;
    return 0;
}

static void domain_free(struct xenstats_monitor *m, struct mon_domain *d, const char *why)
{
    while (d->sets) {
        struct xenstats_pv_set *s = d->sets;

        d->sets = s->next;
        set_withdraw(m, s, why);
        free(s);
    }
    free(d);
    m->list_dirty = true;
    m->by_domid_dirty = true;
}

int xenstats_monitor_remove_domain(struct xenstats_monitor *monitor, uint32_t domid)
{
    struct mon_domain **pp, *d;

    for (pp = &monitor->domains; *pp && (*pp)->domid != domid; pp = &(*pp)->next)
        ;
    d = *pp;
    if (!d)
        return set_errno(-ENOENT);
    *pp = d->next;
    xs_unwatch(monitor->xs, d->stats, d->token);
    domain_free(monitor, d, "no longer monitored");
    return 0;
}

/* @releaseDomain: drop the domains that are gone. */
static void reap_domains(struct xenstats_monitor *m)
{
    struct mon_domain **pp = &m->domains, *d;
    struct xenstats_domain_info info;

    while ((d = *pp)) {
        if (platform_domain_info(m->platform, d->domid, &info) == -ESRCH) {
            *pp = d->next;
            xs_unwatch(m->xs, d->stats, d->token);
            log_info("domain %u destroyed", d->domid);
            domain_free(m, d, "domain destroyed");
            continue;
        }
        pp = &d->next;
    }
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
    s->requested_at = now;
    s->deadline = now + (uint64_t)m->opts.sample_timeout_ms * MS;
    set_state(m, s, XENSTATS_PV_SET_SAMPLING);
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
    arm_timer(monitor);
    monitor->timer_dirty = false;
    return sent;
}

static void complete(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t now)
{
    size_t bytes = (size_t)s->keys.nr_pages * XEN_PV_STATS_PAGE_SIZE;
    char reason[PV_REASON_MAX];
    uint8_t *value_copy;
    uint32_t i, bad = 0;

    /* The provider refreshed the set before signalling: copy it, then decode the copy. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (bytes > m->scratch_len && grow_scratch(m, bytes) < 0) {
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
            dom_log(m, s->domain, XENSTATS_LOG_WARNING, "set %s: statistic '%s': %s", s->path, s->names[i],
                    reason);
    }
    if (bad)
        s->errors++;
    /* Names are never re-read, so rewriting them is harmless; say so once. */
    /* (every 4th sample: hashing the pages each time cost as much as the
     * rest of the sample; detection a few samples late is as good) */
    if (!s->names_rewritten_logged && (s->samples & 3) == 3 && page_hash(s->name_map, bytes) != s->names_hash) {
        s->names_rewritten_logged = true;
        s->errors++;
        dom_log(m, s->domain, XENSTATS_LOG_WARNING, "set %s rewrote its names after publishing (ignored)", s->path);
    }
    set_state(m, s, XENSTATS_PV_SET_ACTIVE);
    s->reason[0] = '\0';
    s->timeouts_in_row = 0;
    s->samples++;
    s->last_sample_ns = now;
    s->last_latency_ns = now - s->requested_at;
}

/* What one pending port means; false when it is to stay masked. */
static bool handle_event(struct xenstats_monitor *m, int port, uint64_t now)
{
    struct xenstats_pv_set *s = port_lookup(m, port);

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
            if (!s->masked)
                dom_log(m, s->domain, XENSTATS_LOG_WARNING,
                        "set %s floods its event channel; ignored until the next request", s->path);
            s->masked = true;
            return false;
        }
    }
    return true;
}

#define EVENT_BATCH 64

static void handle_events(struct xenstats_monitor *m)
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
            return;
        if (n < 0) {
            /* the event channel device (the host) is gone */
            log_error("event channels: %s", strerror(-n));
            m->broken = n;
            return;
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
}

static void handle_timeouts(struct xenstats_monitor *m)
{
    uint64_t now = monotonic_ns(), ticks;
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    m->timer_dirty = true;
    if (read(m->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
        log_debug("timerfd: %s", strerror(errno));
    for (d = m->domains; d; d = d->next) {
        for (s = d->sets; s; s = s->next) {
            if (s->retry_at && s->retry_at <= now) {
                s->dirty = d->dirty = m->any_dirty = true;
                continue;
            }
            if (s->state != XENSTATS_PV_SET_SAMPLING || now < s->deadline)
                continue;
            s->timeouts++;
            s->timeouts_in_row++;
            if (peer_gone(m, s)) {
                /* It may be restarting: its new keys can look like the old
                 * ones, so look again whatever the watches say. */
                set_withdraw(m, s, "the provider closed its event channel");
                s->peer_closed = true;
                set_retry_later(m, s);
                continue;
            }
            if (s->timeouts_in_row >= m->opts.stale_limit) {
                if (s->state != XENSTATS_PV_SET_TIMED_OUT)
                    dom_log(m, d, XENSTATS_LOG_WARNING, "set %s did not answer %u requests in a row", s->path,
                            s->timeouts_in_row);
                set_state(m, s, XENSTATS_PV_SET_TIMED_OUT);
            } else {
                set_state(m, s, XENSTATS_PV_SET_STALE);
            }
            set_reason(s, "no answer within %u ms", m->opts.sample_timeout_ms);
        }
    }
}

/* Copy the path segment at p (up to '/' or the end) into out; NULL when
 * it does not fit, else where it ends. */
static const char *path_segment(const char *p, char out[XENSTORE_REL_PATH_MAX + 1])
{
    size_t n = strcspn(p, "/");

    if (n > XENSTORE_REL_PATH_MAX)
        return NULL;
    memcpy(out, p, n);
    out[n] = '\0';
    return p + n;
}

/*
 * What a watch event under a domain's tree asks for: a change inside a set
 * (stats/P/S/key) means that set only, so one busy set never costs the
 * reads of every other set; anything nearer the top (the set's own node
 * created or removed, or stats/P) means listing again.
 */
static void mark_dirty(struct mon_domain *d, const char *path)
{
    size_t len = strlen(d->stats);
    char provider[XENSTORE_REL_PATH_MAX + 1], set[XENSTORE_REL_PATH_MAX + 1];
    const char *rest = path + len;
    struct xenstats_pv_set *s;

    d->dirty = true;
    if (strncmp(path, d->stats, len) || rest[0] != '/' || !(rest = path_segment(rest + 1, provider)) ||
        rest[0] != '/' || !(rest = path_segment(rest + 1, set)) || rest[0] != '/' ||
        !(s = set_find(d, provider, set))) {
        d->structure_dirty = true;
        return;
    }
    s->dirty = true;
}

static void handle_watches(struct xenstats_monitor *m)
{
    char **ev;
    int budget = 1024;

    while (budget-- > 0) {
        ev = xs_check_watch(m->xs);
        if (!ev) {
            if (errno != EAGAIN) {
                log_error("xenstore: %s", strerror(errno));
                m->broken = negative_errno();
            }
            break;
        }
        const char *path = ev[XS_WATCH_PATH];
        struct mon_domain *d;

        if (!strcmp(path, "@releaseDomain")) {
            reap_domains(m);
        } else {
            for (d = m->domains; d; d = d->next)
                if (!strcmp(ev[XS_WATCH_TOKEN], d->token)) {
                    mark_dirty(d, path);
                    m->timer_dirty = true;
                    m->any_dirty = true;
                }
        }
        free(ev);
    }
}

static void rescan_dirty(struct xenstats_monitor *m)
{
    uint64_t now = monotonic_ns();
    struct mon_domain *d;

    /* most dispatches carry answers, not xenstore changes: stay O(1); and
     * while requests are out, answers come first (round time) */
    if (!m->any_dirty || m->outstanding)
        return;
    m->any_dirty = false;
    for (d = m->domains; d; d = d->next) {
        if (d->dirty && now >= d->last_scan + d->gap_ns && now >= d->not_before)
            scan_domain(m, d, READS_PER_SCAN);
        if (d->dirty) {
            m->timer_dirty = true; /* come back when the gap has passed */
            m->any_dirty = true;
        }
    }
}

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
            handle_watches(monitor);
            break;
        case TAG_EVTCHN:
            handle_events(monitor);
            break;
        case TAG_TIMER:
            handle_timeouts(monitor);
            break;
        }
        handled++;
    }
    if (monitor->broken)
        return set_errno(monitor->broken);
    rescan_dirty(monitor);
    if (monitor->timer_dirty) {
        monitor->timer_dirty = false;
        arm_timer(monitor);
    }
    return handled;
}

size_t xenstats_monitor_pending(const struct xenstats_monitor *monitor)
{
    return monitor->outstanding;
}

int xenstats_monitor_sample(struct xenstats_monitor *monitor)
{
    uint64_t before = 0, after = 0;
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    for (d = monitor->domains; d; d = d->next)
        for (s = d->sets; s; s = s->next)
            before += s->samples;
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
    for (d = monitor->domains; d; d = d->next)
        for (s = d->sets; s; s = s->next)
            after += s->samples;
    return (int)(after - before);
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
    if (opts)
        memcpy(&m->opts, opts, opts->size < sizeof(m->opts) ? opts->size : sizeof(m->opts));
    m->opts.size = sizeof(m->opts);
    if (!m->opts.sample_timeout_ms)
        m->opts.sample_timeout_ms = 500;
    if (!m->opts.min_interval_ms)
        m->opts.min_interval_ms = 100;
    if (!m->opts.stale_limit)
        m->opts.stale_limit = 3;
    if (!m->opts.max_unsolicited)
        m->opts.max_unsolicited = 100;
    if (!m->opts.max_rejected_sets)
        m->opts.max_rejected_sets = 32;
    if (!m->opts.max_reads_per_s)
        m->opts.max_reads_per_s = 128;
    if (!m->opts.max_rescans_per_s)
        m->opts.max_rescans_per_s = 10;
    if (!m->opts.max_log_per_s)
        m->opts.max_log_per_s = 1;

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
        domain_free(monitor, d, "monitor stopped");
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

/* domain_find() in O(log n); falls back to the list when out of memory. */
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
                return domain_find(m, domid);
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
    return 0;
}
