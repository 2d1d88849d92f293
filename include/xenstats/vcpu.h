/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of the vCPU statistics resource (docs/vcpu-stats.md): layout
 * versions 1 and 2.
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

/* Domain counters this build knows (XEN_VCPU_STATS_DOMAIN_*). */
#define XENSTATS_VCPU_DOMAIN_NR_COUNTERS XEN_VCPU_STATS_DOMAIN_NR_COUNTERS

/*
 * Validated header of a region.  A version 1 region (the first 16 bytes
 * only) leaves every field after nr_vcpus 0.
 */
struct xenstats_vcpu_layout {
    uint32_t offset;
    uint32_t size;
    uint32_t stride;
    uint32_t nr_vcpus;      /* v1: records that fit in the mapping; v2: the header's */
    uint32_t version;       /* 1, or the header's (2 or later); 0: a hypercall map */
    uint32_t header_size;   /* v2 */
    uint32_t arch;          /* XEN_VCPU_STATS_ARCH_* */
    uint32_t domain_offset; /* the domain section, 0 if none */
    uint32_t domain_size;
    uint32_t domain_arch_offset, domain_arch_size; /* from domain_offset */
    uint32_t vcpu_arch_offset, vcpu_arch_size;     /* from a record's start */
    uint32_t tick_source;   /* XEN_VCPU_STATS_TICK_* (NONE if tick_hz is 0) */
    uint32_t tick_domid;
    uint64_t tick_hz;
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

/*
 * One consistent copy of the domain section (version 2), read like
 * xenstats_vcpu_sample.  The counters are gauges kept current by the
 * producer; no staleness rule applies.
 */
struct xenstats_vcpu_domain_sample {
    uint64_t raw[XENSTATS_VCPU_DOMAIN_NR_COUNTERS];
    uint32_t seq;
    uint32_t retries;
    uint32_t nr_present;
};

static inline enum xenstats_counter_status
xenstats_vcpu_domain_status(const struct xenstats_vcpu_domain_sample *sample, unsigned int idx)
{
    if (idx >= XENSTATS_VCPU_DOMAIN_NR_COUNTERS || idx >= sample->nr_present)
        return XENSTATS_COUNTER_UNKNOWN;
    return sample->raw[idx] & XEN_VCPU_STATS_INACTIVE_BIT ? XENSTATS_COUNTER_INACTIVE : XENSTATS_COUNTER_VALID;
}

/* The domain counter's value when it is VALID, else 0. */
static inline uint64_t xenstats_vcpu_domain_value(const struct xenstats_vcpu_domain_sample *sample,
                                                  unsigned int idx)
{
    return xenstats_vcpu_domain_status(sample, idx) == XENSTATS_COUNTER_VALID ? sample->raw[idx] : 0;
}

/* Bounds on a snapshot's retries when none is set (see set_max_retries). */
#define XENSTATS_VCPU_DEFAULT_MAX_RETRIES 1000

/*
 * Check a region of `len` bytes at `mem` (8-byte aligned) before trusting
 * it: magic, offset at least 16, size at least 8, stride at least size, all
 * three multiples of 8, no overflow, and at least one whole record inside
 * the mapping.  Version 1 (docs/vcpu-stats.md tells it from 2): records
 * that do not fit whole are not counted in nr_vcpus.  Version 2: also
 * offset and stride multiples of XEN_VCPU_STATS_ALIGN, the header's size, the domain section and the arch blocks
 * inside their bounds, the reserved header bytes zero, nr_vcpus at least 1
 * and all its records inside the mapping, and the magic of the domain
 * section and of every record.
 * Returns 0, -EBADMSG (a magic wrong), -EINVAL (inconsistent header) or
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
 * Copy the domain section (version 2) consistently.  Returns 0, -ENODATA
 * (the map has no domain section: a version 1 region, or a hypercall map)
 * or -EBUSY.
 */
int xenstats_vcpu_map_snapshot_domain(struct xenstats_vcpu_map *map, struct xenstats_vcpu_domain_sample *ret_sample);

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
 * -EOPNOTSUPP when the map has no live producer (a dump file).  Xen's NOW()
 * cannot be read from dom0: with a version 2 time base this process can use
 * (its counter, stamped for domain 0, where xenstats runs), it is the
 * UPDATE_TIME of the latest record read brought forward by the counter's
 * ticks since its UPDATE_TICKS; otherwise the backend's clock plus an
 * offset learned from the UPDATE_TIMEs the host's maps have read: never
 * ahead of the producer, never behind a time already read
 * (docs/xen-host.md).  Take it after the snapshot it projects.
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
/* Name of domain counter idx ("tot_pages", ...), NULL if unknown. */
const char *xenstats_vcpu_domain_counter_name(unsigned int idx);
/* Name of a runstate ("running", ...), NULL if out of range. */
const char *xenstats_vcpu_runstate_name(uint64_t state);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_VCPU_H */
