/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: the model shared by its parts.  A snapshot is what the
 * agent's /api/v1/snapshot says (docs/agent-api.md), or what the direct
 * mode reads in-process, reduced to what the view shows.  Every string in
 * it has been escaped (top_escape()) so it holds printable ASCII only:
 * guest-chosen names can never reach the terminal as control sequences.
 */
#ifndef XENSTATS_TOP_H
#define XENSTATS_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/export.h"

/* Bounds on what one snapshot may hold; larger is rejected as malformed. */
#define TOP_MAX_DOMAINS 65536
#define TOP_MAX_VCPUS 16384
#define TOP_MAX_SETS 4096
#define TOP_MAX_STATS 65536
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
 * Parse the agent's JSON snapshot of `len` bytes, validating every member it
 * uses (types, ranges, bounds above).  Returns 0 and a snapshot the caller
 * frees with top_snapshot_free(), or -EBADMSG with a reason such as
 * "domains[2].vcpus[0].running: expected a number or null" in err, or
 * -ENOMEM.
 */
int top_snapshot_parse(const char *text, size_t len, struct top_snapshot **ret_snapshot, char *err, size_t errlen);

/* A snapshot of nothing, to be filled by a source; NULL when out of memory. */
struct top_snapshot *top_snapshot_new(void);

/*
 * Sort domains by domid and vCPUs by number, compute each domain's worst
 * PV set state.  -EBADMSG with a reason for duplicate domids or vCPUs.
 */
int top_snapshot_finish(struct top_snapshot *snap, char *err, size_t errlen);

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

/* Sort keys of the domain list. */
enum top_sort_key {
    TOP_SORT_DOMID = 0,
    TOP_SORT_NAME,
    TOP_SORT_VCPUS,
    TOP_SORT_RUNNING,
    TOP_SORT_RUNNABLE,
    TOP_SORT_BLOCKED,
    TOP_SORT_OFFLINE,
    TOP_SORT_CHANGES,
    TOP_SORT_SETS,
    TOP_SORT_WORST,
    TOP_NR_SORT_KEYS,
};

struct top_sort_info {
    const char *name; /* for --sort */
    int key;          /* its key in the live view */
    bool descending;  /* natural order: biggest first for figures */
};
extern const struct top_sort_info top_sort_keys[TOP_NR_SORT_KEYS];

/* Parse a --sort name; -EINVAL when unknown. */
int top_sort_parse(const char *name, enum top_sort_key *ret_key);

/*
 * Order of the domains to show: fills order[0..nr_domains-1] with indexes
 * into snap->domains, sorted by `key` (its natural order, reversed when
 * `reverse`), ties broken by domid.  Invalid figures sort last.
 */
void top_sort(const struct top_snapshot *snap, enum top_sort_key key, bool reverse, size_t *order);

/* ---- data sources ------------------------------------------------------ */

struct top_source;

/*
 * The agent at `url` (http://host[:port][/prefix]; /api/v1/snapshot is
 * appended), or the host in-process with `direct`.  NULL and a reason.
 */
struct top_source *top_source_open_url(const char *url, char *err, size_t errlen);
struct top_source *top_source_open_direct(char *err, size_t errlen);
void top_source_close(struct top_source *src);

/* The source as the user named it, for titles and messages. */
const char *top_source_name(const struct top_source *src);
bool top_source_is_direct(const struct top_source *src);

/*
 * Take one snapshot.  Returns 0, or a negative errno with a reason in err:
 * -ECONNREFUSED/-EHOSTUNREACH/-ETIMEDOUT... (agent unreachable), -EPROTO
 * (not a valid HTTP answer or an HTTP error status), -EBADMSG (bad JSON or
 * a snapshot that breaks the contract).
 */
int top_source_fetch(struct top_source *src, struct top_snapshot **ret_snapshot, char *err, size_t errlen);

/* ---- HTTP (top_http.c) ---------------------------------------------------- */

struct top_url {
    char host[256]; /* without brackets for IPv6 */
    char port[8];
    char path[1024]; /* begins with '/' */
};

/*
 * Split an http:// URL (or HOST[:PORT][/PATH], taken as one); the path is
 * the URL's own with its trailing '/' removed and `suffix` appended (unless
 * it already ends with it).
 * -EINVAL with a reason.
 */
int top_url_parse(const char *url, const char *suffix, struct top_url *ret_url, char *err, size_t errlen);

/* Largest body top_http_get() accepts. */
#define TOP_HTTP_MAX_BODY (256u << 20)

/*
 * GET url with HTTP/1.1 and Connection: close, all within timeout_ms; a
 * signal that sets *cancel (may be NULL) ends it early with -EINTR.
 * Returns 0 and a NUL-terminated body the caller frees, or a negative errno
 * with a reason (see top_source_fetch()).
 */
int top_http_get(const struct top_url *url, int timeout_ms, const volatile int *cancel, char **ret_body,
                 size_t *ret_len, char *err, size_t errlen);

/*
 * Decode an HTTP response of `len` bytes in place: check the status line,
 * undo chunked transfer encoding, honour Content-Length.  buf must have
 * room for a NUL at buf[len].  On success the body and its length describe the
 * NUL-terminated body inside buf.  Exposed for tests.
 */
int top_http_parse_response(char *buf, size_t len, char **ret_body, size_t *ret_len, char *err, size_t errlen);

/* ---- output ---------------------------------------------------------- */

/*
 * Width of the NAME column: the longest name, at least 5, at most `cap`
 * (names cut to fit end in '~').
 */
int top_name_width(const struct top_snapshot *snap, int cap);

/*
 * The domain list's header and rows as text, columns separated by spaces.
 * The header marks the sort column (`sort` >= 0) with '*'; with `batch`,
 * spaces inside names are written \x20 so every column is one word.
 */
void top_format_header(char *buf, size_t len, int name_width, int sort);
void top_format_row(char *buf, size_t len, const struct top_domain *d, int name_width, bool batch);

/* Batch mode: the header line and one line per domain, in `order`. */
void top_print_batch(FILE *out, const struct top_snapshot *snap, const size_t *order);

/*
 * Batch mode as `xentop -b` prints it: its header and one line per domain
 * with its columns, widths and units, so scripts that parse xentop can
 * read this instead.
 */
void top_print_xentop(FILE *out, const struct top_snapshot *snap, const size_t *order);

struct top_ui_options {
    uint64_t delay_ns;
    uint64_t iterations; /* 0: until quit */
    enum top_sort_key sort;
    bool reverse;
};

/* The live view until q, a signal or the iterations are done; exit status. */
int top_ui_run(struct top_source *src, struct top_snapshot *first, const struct top_ui_options *opts);

#endif
