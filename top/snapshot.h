/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top's view (top_snapshot.c) of a snapshot of lib/export's model
 * (struct export_snapshot: what the agent's /api/v1/snapshot says, read by
 * export_snapshot_read_json(), or what the direct mode collects
 * in-process): what the screen shows, as text and figures, with the rates
 * of the last interval.  Every string in it has been escaped (top_escape())
 * so it holds printable ASCII only: guest-chosen names can never reach the
 * terminal as control sequences.
 */
#ifndef XENSTATS_TOP_SNAPSHOT_H
#define XENSTATS_TOP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export/export.h"

/* Escaped strings are cut to this many bytes (plus "..."). */
#define TOP_MAX_STRING 200

/* PV set states, in the order the view ranks them "worse". */
enum top_set_severity {
    TOP_SET_ACTIVE = 0,
    TOP_SET_SAMPLING,
    TOP_SET_WITHDRAWN,
    TOP_SET_STALE,
    TOP_SET_TIMED_OUT,
    TOP_SET_REJECTED,
    TOP_SET_UNKNOWN, /* a state this build does not know: shown as is */
};

struct top_vcpu {
    uint32_t vcpu;
    int state; /* 0..3 (running..offline) or -1 when unknown */
    bool time_valid[XENSTATS_VCPU_NR_RUNSTATES];
    double time[XENSTATS_VCPU_NR_RUNSTATES]; /* cumulative seconds */
    bool changes_valid;
    uint64_t changes;
    /* Of the last interval, filled by top_snapshot_rates(). */
    bool share_valid[XENSTATS_VCPU_NR_RUNSTATES];
    double share[XENSTATS_VCPU_NR_RUNSTATES]; /* 0..1 of the interval */
    bool rate_valid;
    double changes_per_s;
};

struct top_stat {
    char *name, *type, *value; /* value rendered as text; "-" when null */
};

struct top_set {
    char *provider, *set, *state, *reason;
    enum top_set_severity severity;
    uint64_t samples, timeouts, errors;
    bool latency_valid;
    double latency; /* seconds */
    size_t nr_stats;
    struct top_stat *stats;
};

struct top_domain {
    uint32_t domid;
    char *name;
    uint32_t nr_vcpus;
    char *vcpu_source, *vcpu_error; /* vcpu_error NULL when none */
    size_t nr_vcpu_rows;
    struct top_vcpu *vcpus;
    size_t nr_sets;
    struct top_set *sets;
    enum top_set_severity worst; /* TOP_SET_ACTIVE when there is no set */
    const char *worst_state;     /* points into sets[], or NULL without sets */
    /*
     * xentop's state flags, "dsbcpr" with '-' for each not set (dying,
     * shutdown, blocked, crashed, paused, running); "?" when the snapshot
     * does not say.
     */
    char state[8];
    /*
     * The FIGUREs of metrics.def: the domain's own, and for vif and vbd
     * figures the sum over its devices; seconds for time figures.
     */
    bool fig_valid[EXPORT_FIG_COUNT];
    double fig[EXPORT_FIG_COUNT];
    size_t nr_vifs, nr_vbds;
    /* Of the last interval: CPU time over elapsed time, 100 = one pCPU (xentop's CPU%). */
    bool cpu_pct_valid;
    double cpu_pct;
    /* Of the last interval (top_snapshot_rates()): the mean over vCPUs. */
    bool share_valid[XENSTATS_VCPU_NR_RUNSTATES];
    double share[XENSTATS_VCPU_NR_RUNSTATES];
    bool rate_valid;
    double changes_per_s; /* all vCPUs together */
};

struct top_snapshot {
    uint64_t monotonic_ns;
    double time;     /* Unix seconds of the sample; 0 when unknown */
    double interval; /* the producer's sampling interval; 0 when unknown */
    char *backend;
    char *xen_version; /* NULL when the host does not say */
    bool fig_valid[EXPORT_FIG_COUNT]; /* the host's FIGUREs */
    double fig[EXPORT_FIG_COUNT];
    bool have_rates;
    double elapsed; /* seconds since the snapshot the rates come from */
    size_t nr_domains;
    struct top_domain *domains; /* sorted by domid, no duplicates */
};

/*
 * Escape `len` bytes of untrusted text into a new string of printable ASCII:
 * backslash as "\\", other bytes outside 0x20..0x7e as "\xHH"; cut to
 * TOP_MAX_STRING bytes with "..." appended.  NULL only when out of memory.
 */
char *top_escape(const char *s, size_t len);

/*
 * Write the reason for a failure into err (nothing when err is NULL or
 * errlen 0), as every function of top with an err parameter does; returns
 * r, so that `return top_reason(err, errlen, -EINVAL, ...)` says and fails
 * in one step.
 */
int top_reason(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Severity of a state name (as the agent spells it). */
enum top_set_severity top_set_severity_of(const char *state);

/*
 * The view of snapshot s: 0 and a view the caller frees with
 * top_snapshot_free() (s is not kept), or -ENOMEM with a reason in err.
 */
int top_snapshot_view(const struct export_snapshot *s, struct top_snapshot **ret_snapshot, char *err, size_t errlen);

/*
 * The view of the agent's JSON snapshot of `len` bytes, read by
 * export_snapshot_read_json() (which validates every member: types,
 * ranges, bounds).  Returns 0 and a view the caller frees with
 * top_snapshot_free(), or -EBADMSG with a reason such as
 * "domains[2].vcpus[0].running: expected a number or null" in err, or
 * -ENOMEM.
 */
int top_snapshot_parse(const char *text, size_t len, struct top_snapshot **ret_snapshot, char *err, size_t errlen);

void top_snapshot_free(struct top_snapshot *snap);

/*
 * Fill the interval figures of `cur` from `prev` (taken earlier): per vCPU,
 * the delta of each runstate time over the delta of monotonic_ns, and state
 * changes per second; per domain, the mean share over its vCPUs and the sum
 * of changes per second.  A domain is matched by domid and name, a vCPU by
 * number; a figure whose counter went backwards or was missing in either
 * snapshot stays invalid.  Nothing is computed when prev is NULL or not
 * older than cur.
 */
void top_snapshot_rates(struct top_snapshot *cur, const struct top_snapshot *prev);

const struct top_domain *top_snapshot_find(const struct top_snapshot *snap, uint32_t domid);

#endif
