/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of the vCPU statistics resource (docs/vcpu-stats.md).
 *
 * A map is a validated, read-only view of one domain's region.  Snapshots are
 * lock-free: a record is copied under its sequence number and the copy is
 * retried a bounded number of times; a writer that never finishes makes the
 * snapshot fail with -EBUSY instead of hanging.  Conventions: xenstats.h.
 */
#ifndef XENSTATS_VCPU_H
#define XENSTATS_VCPU_H

#include <xenstats/abi/vcpu_stats.h>
#include <xenstats/xenstats.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counters this build of the library knows (the ABI's counter indices). */
#define XENSTATS_VCPU_NR_COUNTERS XEN_VCPU_STATS_NR_COUNTERS
/* Xen's runstates (running, runnable, blocked, offline): the first counters
 * are the times spent in each. */
#define XENSTATS_VCPU_NR_RUNSTATES (XEN_VCPU_STATS_RUNSTATE_OFFLINE + 1)

enum xenstats_counter_status {
    XENSTATS_COUNTER_VALID = 0,    /* value holds the counter */
    XENSTATS_COUNTER_INACTIVE = 1, /* producer marks it inactive or overflowed */
    XENSTATS_COUNTER_UNKNOWN = 2,  /* producer's records are too short for it */
};

/* Validated header of a region. */
struct xenstats_vcpu_layout {
    uint32_t offset;
    uint32_t size;
    uint32_t stride;
    uint32_t nr_vcpus; /* records that fit in the mapping */
};

/*
 * One consistent copy of a record.  raw[] holds the counters as the producer
 * wrote them (inactive ones with their top bit set); read them through
 * xenstats_vcpu_sample_status() and xenstats_vcpu_sample_value().  Decoding
 * on access keeps a snapshot as cheap as a copy.
 */
struct xenstats_vcpu_sample {
    uint64_t raw[XENSTATS_VCPU_NR_COUNTERS];
    uint32_t seq;        /* even sequence number the copy was taken under */
    uint32_t retries;    /* attempts beyond the first */
    uint32_t nr_present; /* leading counters the producer's records hold */
};

static inline enum xenstats_counter_status xenstats_vcpu_sample_status(const struct xenstats_vcpu_sample *sample,
                                                                       unsigned int idx)
{
    if (idx >= XENSTATS_VCPU_NR_COUNTERS || idx >= sample->nr_present)
        return XENSTATS_COUNTER_UNKNOWN;
    return sample->raw[idx] & XEN_VCPU_STATS_INACTIVE_BIT ? XENSTATS_COUNTER_INACTIVE : XENSTATS_COUNTER_VALID;
}

/* The counter's value when it is VALID, else 0. */
static inline uint64_t xenstats_vcpu_sample_value(const struct xenstats_vcpu_sample *sample, unsigned int idx)
{
    return xenstats_vcpu_sample_status(sample, idx) == XENSTATS_COUNTER_VALID ? sample->raw[idx] : 0;
}

/* Bounds on a snapshot's retries when none is set (see set_max_retries). */
#define XENSTATS_VCPU_DEFAULT_MAX_RETRIES 1000

/*
 * Check a region of `len` bytes at `mem` before trusting it: magic, offset at
 * least the header size, size at least 8, stride at least size, offset and
 * stride multiples of XEN_VCPU_STATS_ALIGN, no overflow, and at least one
 * whole record inside the mapping.  Records that do not fit whole are not
 * counted in nr_vcpus.
 * Returns 0, -EBADMSG (bad magic), -EINVAL (inconsistent header) or
 * -ERANGE (records outside the mapping).
 */
int xenstats_vcpu_layout_parse(const void *mem, size_t len, struct xenstats_vcpu_layout *ret_layout);

struct xenstats_vcpu_map;

/*
 * Map the vCPU statistics of `domid` read-only.  Errors: -ESRCH (no such
 * domain), -EOPNOTSUPP (the host does not provide the resource for it),
 * -EPERM/-EACCES (not privileged over it), -EBADMSG/-EINVAL/-ERANGE (region
 * malformed).  Caller frees with xenstats_vcpu_map_close().
 */
struct xenstats_vcpu_map *xenstats_vcpu_map_open(struct xenstats_host *host, uint32_t domid);

/*
 * A map over a region dump in a file (as written by `xenstats emu dump`).
 * The file is read into private memory and validated like a live region.
 */
struct xenstats_vcpu_map *xenstats_vcpu_map_open_file(const char *path);

/*
 * A map over caller-owned memory of `len` bytes that stays valid until the
 * map is closed.  Used by tests and embedders with their own mapping.
 */
struct xenstats_vcpu_map *xenstats_vcpu_map_open_memory(const void *mem, size_t len);

void xenstats_vcpu_map_close(struct xenstats_vcpu_map *map);

const struct xenstats_vcpu_layout *xenstats_vcpu_map_layout(const struct xenstats_vcpu_map *map);
uint32_t xenstats_vcpu_map_nr_vcpus(const struct xenstats_vcpu_map *map);

/* Retries one record's copy may take before -EBUSY (0 = no retry). */
void xenstats_vcpu_map_set_max_retries(struct xenstats_vcpu_map *map, uint32_t max_retries);

/*
 * Copy vCPU `vcpu`'s record consistently.  Returns 0, -ENOENT (no such
 * vCPU) or -EBUSY (the writer kept the record busy for every retry).
 */
int xenstats_vcpu_map_snapshot(struct xenstats_vcpu_map *map, uint32_t vcpu, struct xenstats_vcpu_sample *ret_sample);

/*
 * Snapshot vCPUs 0..count-1 into ret_samples[] (count at most nr_vcpus).
 * Each record is consistent on its own; records are taken one after the
 * other, not atomically as a set.
 */
int xenstats_vcpu_map_snapshot_all(struct xenstats_vcpu_map *map, struct xenstats_vcpu_sample *ret_samples,
                                   uint32_t count);

/*
 * Copy the region into `buf` (at least xenstats_vcpu_map_dump_size() bytes)
 * with every record taken consistently, for writing a dump file.
 */
size_t xenstats_vcpu_map_dump_size(const struct xenstats_vcpu_map *map);
int xenstats_vcpu_map_dump(struct xenstats_vcpu_map *map, void *buf, size_t len);

/*
 * The staleness rule: the four runstate times of a sample are accounted up
 * to its UPDATE_TIME; the time from then to `now` (the producer's clock, see
 * xenstats_vcpu_map_clock()) belongs to the state in STATE.  Fill
 * ret_times[] with the times as of `now`.  Returns 0, or -ENODATA when the
 * sample lacks a counter the rule needs (times are then copied unprojected,
 * with inactive/unknown ones as 0).
 */
int xenstats_vcpu_sample_project(const struct xenstats_vcpu_sample *sample, uint64_t now,
                                 uint64_t ret_times[XENSTATS_VCPU_NR_RUNSTATES]);

/*
 * Current time of the producer's clock in ns, for the staleness rule.
 * -EOPNOTSUPP when the map has no live producer (a dump file).  Where the
 * producer's clock cannot be read (Xen's NOW() from dom0), it is the
 * backend's clock plus an offset learned from the UPDATE_TIMEs the host's
 * maps have read: never ahead of the producer, never behind a time already
 * read (docs/xen-host.md); take it after the snapshot it projects.
 */
int xenstats_vcpu_map_clock(struct xenstats_vcpu_map *map, uint64_t *ret_now);

/*
 * ---- Fallback for hosts without the resource (every stock Xen) ----------
 * A map whose snapshots make one hypercall per vCPU (xc_vcpu_getinfo() on
 * Xen) instead of reading a shared region.  Its samples hold RUNNING_TIME
 * (the vCPU's running time up to the call), STATE (from the online,
 * blocked and running flags) and UPDATE_TIME (the map's clock at the
 * call); every other counter is INACTIVE, never zero.  The staleness rule
 * and xenstats_vcpu_map_clock() work as for a region; dumps do not
 * (-EOPNOTSUPP).  Errors: -ESRCH (no such domain), -EOPNOTSUPP (the host
 * has no such call: the emulated host), -EPERM/-EACCES (not privileged).
 * Caller frees with xenstats_vcpu_map_close().
 */
struct xenstats_vcpu_map *xenstats_vcpu_map_open_hypercall(struct xenstats_host *host, uint32_t domid);

enum xenstats_vcpu_source {
    XENSTATS_VCPU_SOURCE_NONE = 0,      /* no map: never a map's source, for its users */
    XENSTATS_VCPU_SOURCE_RESOURCE = 1,  /* a region: shared memory, a file, a buffer */
    XENSTATS_VCPU_SOURCE_HYPERCALL = 2, /* xenstats_vcpu_map_open_hypercall() */
};
enum xenstats_vcpu_source xenstats_vcpu_map_source(const struct xenstats_vcpu_map *map);

/* Name of counter idx ("running_time", ...), NULL if unknown. */
const char *xenstats_vcpu_counter_name(unsigned int idx);
/* Name of a runstate ("running", ...), NULL if out of range. */
const char *xenstats_vcpu_runstate_name(uint64_t state);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_VCPU_H */
