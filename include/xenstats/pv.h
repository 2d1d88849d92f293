/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats interface (seed 001, docs/pv-stats.md): providers in guests
 * publish sets of typed statistics in granted pages advertised in xenstore;
 * a monitor in the toolstack domain samples them over event channels.
 * Conventions: xenstats.h.
 */
#ifndef XENSTATS_PV_H
#define XENSTATS_PV_H

#include <stdbool.h>
#include <stdint.h>

#include <xenstats/abi/pv_stats.h>
#include <xenstats/xenstats.h>

#ifdef __cplusplus
extern "C" {
#endif

enum xenstats_pv_type {
    XENSTATS_PV_S64 = XEN_PV_STATS_TYPE_S64,
    XENSTATS_PV_U64 = XEN_PV_STATS_TYPE_U64,
    XENSTATS_PV_DOUBLE = XEN_PV_STATS_TYPE_DOUBLE,
    XENSTATS_PV_ASCII = XEN_PV_STATS_TYPE_ASCII,
};

/* "s64", "u64", "double", "ascii"; NULL for anything else. */
const char *xenstats_pv_type_name(unsigned int type);

/*
 * 0 if `name` is a valid provider, set or statistic name (1..62 printable
 * ASCII characters: letters, digits, punctuation, space), else -EINVAL.
 */
int xenstats_pv_name_check(const char *name);

/*
 * The xenstore key of a provider or set name.  xenstored only accepts
 * letters, digits and "-_@" in node names, so "Network #0" is published
 * under the key "Network_0" and the name itself becomes the node's value
 * (docs/pv-stats.md).  Runs of other characters become one '_'.
 * Returns 0 or -EINVAL (invalid name), -ENOBUFS.
 */
int xenstats_pv_name_key(const char *name, char *key, size_t len);

/* ---- provider (guest side) ---------------------------------------------- */

struct xenstats_provider;
struct xenstats_provider_set;

/*
 * Called on every sample request: set every value of the set (with the
 * xenstats_provider_set_* setters), then return 0; the provider then
 * signals the monitor.  A negative return skips the signal (the monitor
 * times out and marks the set stale).
 */
typedef int (*xenstats_provider_refresh_fn)(struct xenstats_provider_set *set, void *userdata);

struct xenstats_provider_opts {
    size_t size; /* sizeof(struct xenstats_provider_opts): see xenstats.h */
    /* Domain that monitors (grantee and event channel peer).  Default:
     * the value of the guest's `stats` node, else 0. */
    int32_t monitor_domid; /* -1: default */
    /* Bound on waiting for the monitor to close its port on withdrawal. */
    uint32_t withdraw_timeout_ms; /* 0: default 2000 */
};

/*
 * Create a provider named `name` (e.g. "Network #0") in the calling
 * process's domain.  Nothing is published until a set is.  NULL and errno:
 * EINVAL (bad name or opts), ENOENT (no `stats` node: the toolstack does not
 * monitor this domain), and the store's errors.  Free with
 * xenstats_provider_free(), which withdraws every set.
 */
struct xenstats_provider *xenstats_provider_new(struct xenstats_host *host, const char *name,
                                                const struct xenstats_provider_opts *opts);
void xenstats_provider_free(struct xenstats_provider *provider);

/* Domain the provider grants to and signals. */
uint32_t xenstats_provider_monitor_domid(const struct xenstats_provider *provider);

/*
 * Answer on one CPU: pin the calling thread (the one that will call
 * xenstats_provider_dispatch()) to `cpu` and deliver the provider's event
 * channels there, those bound already and every one bound later.  A request
 * then wakes one vCPU instead of two: Linux spreads event channels over the
 * vCPUs, and the one taking the interrupt wakes the provider's thread on
 * another (measured under QEMU, p50 of a 64-statistic sample: 1.0-1.6 ms
 * in six runs, 1.2-2.5 ms in six without).  On Xen guests the channels
 * are steered through /proc/irq/<N>/smp_affinity_list of the interrupts
 * named "evtchn:<the thread name at xenstats_provider_new()>" (root; other
 * channels of processes of the same name move too).  Returns 0; -EINVAL (no such
 * CPU), or the error of steering (e.g. -EACCES), the thread staying pinned.
 * The emulated host has no interrupts: pinning only.
 */
int xenstats_provider_set_cpu(struct xenstats_provider *provider, int cpu);

/*
 * Add a set named `name` (e.g. "Tx").  Statistics are declared, then the
 * set is published.  NULL and errno (EINVAL bad name, EEXIST).  The set
 * belongs to the provider.
 */
struct xenstats_provider_set *xenstats_provider_add_set(struct xenstats_provider *provider, const char *name,
                                                        xenstats_provider_refresh_fn refresh, void *userdata);

/* Declare a statistic before publishing; returns its index (>= 0). */
int xenstats_provider_set_declare(struct xenstats_provider_set *set, const char *name, enum xenstats_pv_type type);

/*
 * Publish: grant the name/type and value pages read-only to the monitor,
 * write `name-type-ref<N>` and `val-ref<N>`, then `event-channel` last.
 * The refresh callback runs once first so the first sample is meaningful.
 */
int xenstats_provider_set_publish(struct xenstats_provider_set *set);

/*
 * Withdraw: delete `event-channel`, wait (bounded) for the monitor to close
 * its port, remove the set's keys, and the provider's key when no set is
 * left.  Returns 0, or -ETIMEDOUT when the monitor did not close in time
 * (the keys are removed anyway).  The set is freed.
 */
int xenstats_provider_set_withdraw(struct xenstats_provider_set *set);

/* Setters, valid inside the refresh callback and before publishing.
 * -EINVAL: index out of range or of another type (or bad ASCII). */
int xenstats_provider_set_s64(struct xenstats_provider_set *set, unsigned int index, int64_t value);
int xenstats_provider_set_u64(struct xenstats_provider_set *set, unsigned int index, uint64_t value);
int xenstats_provider_set_double(struct xenstats_provider_set *set, unsigned int index, double value);
int xenstats_provider_set_ascii(struct xenstats_provider_set *set, unsigned int index, const char *value);

/* Number of statistics declared in the set. */
unsigned int xenstats_provider_set_count(const struct xenstats_provider_set *set);

/*
 * The provider's pollable fd: readable when a monitor asks for a sample, or
 * when xenstore has news for the provider (its domain was resumed).  Then
 * call xenstats_provider_dispatch(), which refreshes the sets asked for
 * and signals back, and after a save/restore, a migration or a lost key
 * publishes every set again (docs/pv-stats.md, "Lifecycle").  The fd stays
 * the same across all of that.  Returns the number of sets refreshed
 * (>= 0).
 */
int xenstats_provider_fd(const struct xenstats_provider *provider);
int xenstats_provider_dispatch(struct xenstats_provider *provider);

/* ---- monitor (toolstack side) -------------------------------------------- */

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
                                     masked until the next request; 0: default 100 */
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

#endif /* XENSTATS_PV_H */
