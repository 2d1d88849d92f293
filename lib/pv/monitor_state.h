/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor, the bottom layer: the state every part shares (the
 * monitor, its domains and their sets) and the set's state machine over
 * it (monitor_state.c): states, reasons, withdraw, reject and retry, the
 * release of a set's mappings and port, per-domain budgets and the
 * rate-limited log.  The monitor's files call only downward:
 *
 *   monitor.c            the object, its event loop and inspection
 *   monitor_discovery.c  the xenstore trees: sets found, attached and
 *                        withdrawn (monitor_discovery.h)
 *   monitor_sample.c     requests, answers, deadlines and the timer
 *                        (monitor_sample.h)
 *   monitor_state.c      this header's functions, calling no other part
 *
 * Discovery and sampling do not call each other: what one does that the
 * other must see (a set withdrawn, a retry due, the timer to re-arm) is
 * state here.  scripts/check-layers.sh checks it.
 */
#ifndef XENSTATS_PV_MONITOR_STATE_H
#define XENSTATS_PV_MONITOR_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xenstats/pv_monitor.h>

#include "platform/platform.h"
#include "pv/parse.h"
#include "util/util.h"

#define PATH_LEN 512
#define MS 1000000ULL
/* a set just bound is not asked before its bind's own event came (or this) */
#define BIND_EVENT_GRACE_NS (50 * MS)

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
    bool urgent;          /* live, and its event-channel key changed: a withdrawal or a restart */
    bool transient;       /* rejected for a failure that can pass (map, bind): retried */
    bool capped;          /* rejected for want of room under the domain's caps */
    bool peer_closed;     /* withdrawn because the provider's end of the channel closed */
    uint64_t retry_at;    /* examine again then, whatever the watches say; 0: never */
    uint32_t backoff_ms;

    struct pv_set_keys keys;
    const uint8_t *name_map, *value_map; /* read-only grant mappings; name_map only while attaching */
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
    bool flood_logged; /* said once: a flooder is masked every request */
    /* Binding sets our new port pending (as EVTCHNOP_bind_interdomain
     * does, for a notification sent before the bind): that event is no
     * answer and no misbehaviour. */
    bool bind_event_due;
    uint64_t bound_at; /* CLOCK_MONOTONIC of the attach: where its counters start (_created) */
    bool names_rewritten_logged;
    bool names_due;            /* answered with its name check due: in its domain's next batch */
    uint64_t names_checked_at; /* `samples` at the last check of the name pages */

    uint64_t requested_at, deadline;
    enum xenstats_pv_set_state before_request; /* restored if the domain was paused */
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
    bool urgent;          /* some set is urgent */
    uint64_t last_scan;
    uint64_t not_before; /* no scan before this: the read budget refills */
    uint64_t gap_ns;     /* between scans; grows while throttled */
    struct xenstats_pv_set *sets;
    bool warned_providers, warned_sets;
    /* paused (xl pause, or saving): not asked, and no timeout counted */
    bool paused;
    /* some set's name check is due: queued on the monitor's names_due
     * (only while its events are handled: empty outside) */
    bool names_due;
    struct mon_domain *names_due_next;

    /* budgets */
    struct bucket reads, logs;
    uint64_t window_start;
    uint32_t rescans_in_window;
    uint64_t throttled_until;
    uint32_t nr_rejected, sets_ignored, log_pending_suppressed;
    /* the caps (max_live_sets, max_mapped_pages): what is held now, and the sets refused for them */
    uint32_t live_sets, mapped_pages, sets_capped;
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
    unsigned int introduced; /* @introduceDomain events not yet told */
    int broken; /* -errno once xenstore or the event channel device is gone */
    size_t outstanding;  /* sets in the sampling state */
    uint64_t answers;    /* samples taken, all sets, ever: counts a round's
                          * answers even when a set goes during it */
    bool any_dirty;      /* some domain waits for a rescan */
    bool any_urgent;     /* some domain has an urgent set */
    bool timer_dirty;    /* deadlines or rescans changed: re-arm the timer */
    struct mon_domain *names_due; /* domains with name checks due (mon_handle_events) */
    /* private copies of guest pages live here only while being parsed or
     * decoded: one buffer for all sets keeps a monitor of thousands small */
    uint8_t *scratch;
    size_t scratch_len;
};

static inline bool throttled(const struct mon_domain *d, uint64_t now)
{
    return d->throttled_until > now;
}

static inline bool live(const struct xenstats_pv_set *s)
{
    return s->state == XENSTATS_PV_SET_ACTIVE || s->state == XENSTATS_PV_SET_STALE ||
           s->state == XENSTATS_PV_SET_TIMED_OUT || s->state == XENSTATS_PV_SET_SAMPLING;
}

/* ---- the set's state machine --------------------------------------------- */

/* Every state change goes here: it keeps the counts of outstanding
 * requests and rejected sets exact. */
void mon_set_state(struct xenstats_monitor *m, struct xenstats_pv_set *s, enum xenstats_pv_set_state state);
void mon_set_reason(struct xenstats_pv_set *s, const char *fmt, ...) XS_PRINTF(2, 3);
/* Release what the set holds (grant mappings, port, declarations); its
 * state is left as it is. */
void mon_set_detach(struct xenstats_monitor *m, struct xenstats_pv_set *s);
/* Withdrawn, with `why` as its reason (which may be s->reason). */
void mon_set_withdraw(struct xenstats_monitor *m, struct xenstats_pv_set *s, const char *why);
/* Rejected for s->reason, judged on the keys of `fingerprint`; a transient
 * rejection (a map or bind that may pass) is retried. */
void mon_set_reject(struct xenstats_monitor *m, struct xenstats_pv_set *s, uint64_t fingerprint, bool transient);
/* Examine the set again at a growing interval, whatever the watches say. */
void mon_set_retry_later(struct xenstats_monitor *m, struct xenstats_pv_set *s);
/* Whether the provider's end of the set's channel is closed. */
bool mon_peer_gone(struct xenstats_monitor *m, struct xenstats_pv_set *s);

/* The set bound to a local port, for the events (NULL: none). */
void mon_port_map(struct xenstats_monitor *m, int port, struct xenstats_pv_set *s);
struct xenstats_pv_set *mon_port_lookup(struct xenstats_monitor *m, int port);

/* ---- budgets and the log ------------------------------------------------- */

void mon_bucket_fill(struct bucket *b, uint64_t now, double rate, double burst);
/* A budget of d ran out: `which` names a budget of work (the domain is
 * throttled), NULL the log's. */
void mon_over_budget(struct mon_domain *d, uint64_t now, const char *which);
/* A line about d, within d's log budget. */
void mon_dom_log(struct xenstats_monitor *m, struct mon_domain *d, enum xenstats_log_level level, const char *fmt,
                 ...) XS_PRINTF(4, 5);
/* When d's next scan may run, as retries and budgets allow (0: nothing to do). */
uint64_t mon_next_scan_at(const struct mon_domain *d);

/* ---- guest pages --------------------------------------------------------- */

/* Grow the monitor's scratch buffer to `bytes`; 0 or -ENOMEM. */
int mon_grow_scratch(struct xenstats_monitor *m, size_t bytes);
/* A fast hash of whole pages: detects rewritten names. */
uint64_t mon_page_hash(const volatile uint8_t *pages, size_t bytes);

#endif /* XENSTATS_PV_MONITOR_STATE_H */
