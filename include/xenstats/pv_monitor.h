/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor (docs/pv-stats.md), for the toolstack domain: find the
 * sets the guests' providers publish, map them read-only and sample them
 * over event channels, each guest within its budgets.  Conventions:
 * xenstats.h.
 */
#ifndef XENSTATS_PV_MONITOR_H
#define XENSTATS_PV_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xenstats/pv_common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xenstats_monitor;
struct xenstats_pv_set;

enum xenstats_pv_set_state {
    XENSTATS_PV_SET_ACTIVE = 0,    /* mapped and answering */
    XENSTATS_PV_SET_SAMPLING = 1,  /* a sample request is outstanding */
    XENSTATS_PV_SET_STALE = 2,     /* the last request timed out: values are old */
    XENSTATS_PV_SET_TIMED_OUT = 3, /* several requests in a row timed out */
    XENSTATS_PV_SET_REJECTED = 4,  /* the guest's data is invalid: see reason */
    XENSTATS_PV_SET_WITHDRAWN = 5, /* the provider withdrew (or the domain died) */
};
#define XENSTATS_PV_NR_SET_STATES (XENSTATS_PV_SET_WITHDRAWN + 1)

const char *xenstats_pv_set_state_name(enum xenstats_pv_set_state state);

struct xenstats_monitor_opts {
    size_t size;                  /* sizeof(struct xenstats_monitor_opts): see xenstats.h */
    uint32_t sample_timeout_ms;   /* 0: default 500 */
    uint32_t min_interval_ms;     /* requests closer than this are skipped; 0: default 100 */
    uint32_t stale_limit;         /* timeouts in a row before TIMED_OUT; 0: default 3 */
    uint32_t max_unsolicited;     /* unrequested events per second before the port is
                                     masked until the next request; 0: default 4 */
    bool create_stats_node;       /* play the toolstack: create each domain's `stats` */
    /*
     * Per-domain budgets (docs/pv-stats.md, "Budgets"): what one guest may
     * cost the monitor.  A domain over any of them is marked throttled and
     * rescanned less often; no other domain is affected.
     */
    uint32_t max_rejected_sets;   /* sets kept that are not live (rejected, or without
                                     a usable event-channel); further sets are
                                     ignored unread; 0: default 32 */
    uint32_t max_reads_per_s;     /* xenstore reads, sustained (bursts of 4 s' worth);
                                     0: default 128 */
    uint32_t max_rescans_per_s;   /* 0: default 10 */
    uint32_t max_log_per_s;       /* log lines, sustained (bursts of 32); the rest are
                                     counted and reported; 0: default 1 */
    /*
     * Caps on what one domain holds of dom0's: its live sets (one event
     * channel each) and the value pages mapped for them.  A set past
     * either is rejected (retried later, as room may come free) and the
     * domain marked throttled.  The defaults are far above what a real
     * guest publishes; an administrator who raises xenstored's quotas no
     * longer raises these with them.
     */
    uint32_t max_live_sets;       /* 0: default 256 */
    uint32_t max_mapped_pages;    /* 0: default 1024 (4 MiB) */
};

/*
 * A monitor in the calling (toolstack) domain.  NULL and errno (EINVAL:
 * opts that break the rule in xenstats.h).  It runs on its own epoll set:
 * poll xenstats_monitor_fd() and call xenstats_monitor_dispatch() when
 * readable (or call dispatch with a timeout).  Free with
 * xenstats_monitor_free(): every port is closed so providers see the
 * monitor leave.
 */
struct xenstats_monitor *xenstats_monitor_new(struct xenstats_host *host, const struct xenstats_monitor_opts *opts);
void xenstats_monitor_free(struct xenstats_monitor *monitor);
int xenstats_monitor_fd(const struct xenstats_monitor *monitor);

/* Start or stop watching a domain's `stats` subtree. */
int xenstats_monitor_add_domain(struct xenstats_monitor *monitor, uint32_t domid);
int xenstats_monitor_remove_domain(struct xenstats_monitor *monitor, uint32_t domid);

/*
 * Handle whatever is ready (xenstore watches, provider signals, timeouts),
 * waiting up to timeout_ms (0: do not wait; -1: until something happens).
 * Returns the number of events handled (>= 0), or a negative errno once
 * xenstore or the event channel device is gone (the monitor is then of no
 * further use: free it).
 */
int xenstats_monitor_dispatch(struct xenstats_monitor *monitor, int timeout_ms);

/*
 * Ask every active set for a sample (sets whose last request is younger
 * than min_interval are skipped).  Returns the number of requests sent.
 */
int xenstats_monitor_request_all(struct xenstats_monitor *monitor);

/*
 * Request a sample of every set and dispatch until all answered or timed
 * out.  Returns the number of sets that answered, or a negative errno as
 * xenstats_monitor_dispatch().
 */
int xenstats_monitor_sample(struct xenstats_monitor *monitor);

/* Requests still outstanding (sets in the sampling state). */
size_t xenstats_monitor_pending(const struct xenstats_monitor *monitor);
/*
 * How many times xenstore announced a new domain (@introduceDomain) since
 * the last call: a caller that adds domains with
 * xenstats_monitor_add_domain() when it lists them can list them at once,
 * so that a restored or migrated guest's sets are back within one interval.
 */
unsigned int xenstats_monitor_domains_introduced(struct xenstats_monitor *monitor);

/* Sets currently known (withdrawn ones linger until the next dispatch). */
size_t xenstats_monitor_nr_sets(const struct xenstats_monitor *monitor);
/* The i-th set, valid until the next dispatch/add/remove call. */
const struct xenstats_pv_set *xenstats_monitor_set(const struct xenstats_monitor *monitor, size_t i);

/* A monitored set, as the monitor sees it. */
struct xenstats_pv_set_info {
    uint32_t domid;
    const char *provider;
    const char *set;
    enum xenstats_pv_set_state state;
    const char *reason;     /* why rejected/withdrawn/stale, or "" */
    uint32_t nr_stats;
    uint64_t samples;       /* answered requests */
    uint64_t timeouts;
    uint64_t errors;        /* bad values, unsolicited events, ... */
    uint64_t last_sample_ns; /* CLOCK_MONOTONIC of the last good sample, 0 if none */
    uint64_t last_latency_ns;
};
void xenstats_pv_set_get_info(const struct xenstats_pv_set *set, struct xenstats_pv_set_info *ret_info);
/*
 * CLOCK_MONOTONIC of when the set was attached (its keys mapped and bound),
 * where its counters start: a provider publishing again (restarted, or
 * after its domain was restored) starts them again.  0 when not live.
 * (OpenMetrics' `_created`.)
 */
uint64_t xenstats_pv_set_attached_ns(const struct xenstats_pv_set *set);

/* What a monitored domain has cost the monitor, against its budgets. */
struct xenstats_pv_domain_info {
    uint32_t domid;
    bool throttled;            /* over a budget in the last 10 s: rescanned less often */
    uint32_t sets_rejected;    /* rejected sets kept now */
    uint32_t sets_ignored;     /* sets listed but not examined (over max_rejected_sets) */
    uint64_t rescans;          /* examinations of the domain's `stats` tree */
    uint64_t xenstore_reads;
    uint64_t budget_exceeded;  /* times a budget was found exhausted */
    uint64_t log_suppressed;   /* log lines dropped by the log budget */
    uint32_t live_sets;        /* sets bound now (one event channel each), at most max_live_sets */
    uint32_t mapped_pages;     /* their value pages mapped now, at most max_mapped_pages */
    uint32_t sets_capped;      /* sets rejected now for want of room under those caps */
};
/*
 * Fill *ret_info for a monitored domain.  Returns 0, or -ENOENT (and errno)
 * when the domain is not monitored; *ret_info is then untouched.
 */
int xenstats_monitor_domain_info(const struct xenstats_monitor *monitor, uint32_t domid,
                                 struct xenstats_pv_domain_info *ret_info);

/* One statistic of the last good sample. */
struct xenstats_pv_stat {
    const char *name;
    enum xenstats_pv_type type;
    bool valid; /* false: no sample yet, or this value was malformed */
    /* value.ascii of an ASCII statistic is never NULL ("" when not valid) */
    union {
        int64_t s64;
        uint64_t u64;
        double dbl;
        const char *ascii;
    } value;
};
/* Statistic i (< nr_stats) of the set, valid until the next dispatch. */
int xenstats_pv_set_get_stat(const struct xenstats_pv_set *set, uint32_t i, struct xenstats_pv_stat *ret_stat);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_PV_MONITOR_H */
