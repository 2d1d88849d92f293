/* SPDX-License-Identifier: MIT */
/*
 * Wire layout of the vCPU statistics resource
 * (XENMEM_resource_stats_table, id XENMEM_resource_stats_table_id_vcpustats),
 * version 2.
 *
 * This header is the project's copy of the layout.  The hypervisor series
 * carries the same layout in Xen's form (public/vcpu_stats.h); xen/check-abi.sh
 * compiles one probe against both and compares every constant and offset.
 * It depends on nothing beyond <stdint.h> and contains no code.
 *
 * Layout (all fields in the producer's native byte order, little endian on
 * every architecture Xen supports):
 *
 *   byte 0                      struct xen_vcpu_stats_header
 *   byte domain_offset          struct xen_vcpu_stats_domain (domain counters)
 *   byte offset + n * stride    struct xen_vcpu_stats, record of vCPU n,
 *                               n = 0 .. nr_vcpus - 1
 *
 * The first 16 bytes and the records are those of the layout first proposed
 * on xen-devel ("version 1"): a consumer that knows only magic, offset, size
 * and stride reads the records of a version 2 region unchanged.  Every
 * structure starts with its own magic: the header at byte 0; a record and
 * the domain section in their first word, at byte 4, because byte 0 is the
 * sequence number version 1 consumers read there (version 1 called that
 * word _pad and ignored it).
 *
 * Rules a producer follows:
 *   - header: offset >= domain_offset + domain_arch_offset +
 *     domain_arch_size; domain_offset >= header_size; size >= 8;
 *     stride >= vcpu_arch_offset + vcpu_arch_size; vcpu_arch_offset >= size;
 *     domain_arch_offset >= domain_size; every offset and size a multiple
 *     of 8; offset and stride multiples of XEN_VCPU_STATS_ALIGN, rounded up
 *     to the producer's cache line so that no two records and no record and
 *     the domain section share a line;
 *   - the header and every magic are written before the header's magic,
 *     which is written last, and none of them changes afterwards;
 *   - reserved bytes are zero: the header from header_size to
 *     domain_offset;
 *   - every counter slot that holds no live counter is inactive
 *     (XEN_VCPU_STATS_INACTIVE): unused counters, a record's bytes from
 *     size to vcpu_arch_offset and after the arch counters up to stride,
 *     the same in the domain section up to offset, and the region's tail
 *     after the last record;
 *   - seq (of a record or of the domain section) is odd while it is being
 *     written; the producer keeps seq and the layout in its own memory and
 *     only stores to the region, never reads it back;
 *   - a counter whose most significant bit is set is inactive; a counter
 *     that would overflow into that bit saturates at XEN_VCPU_STATS_INACTIVE
 *     and therefore reads as inactive from then on;
 *   - counters are only ever appended (a new index, a larger size); an
 *     index never changes meaning.  version changes only if a consumer
 *     could not read the region by these rules, never for an append.
 *
 * Rules a consumer follows:
 *   - validate the header against the size of its mapping before trusting
 *     any record, and the magic of the domain section and of every record;
 *   - a region is version 1 (only its first 16 bytes mean anything, and
 *     vCPU records' magics are not checked) when offset < 24 or version is
 *     below 2 or is XEN_VCPU_STATS_INACTIVE32 (version 1 fills the header's
 *     tail with the inactive marker; a producer written to the first
 *     proposal's text may leave it zero); otherwise every rule here holds;
 *   - treat a counter at byte o of a record as unknown to the producer when
 *     o + 8 > size (domain section: domain_size; arch counters:
 *     vcpu_arch_size or domain_arch_size, from the arch offset), and a
 *     header field at byte o as absent when o + its width > header_size;
 *   - read a record or the domain section with the sequence protocol
 *     (docs/vcpu-stats.md) and give up after a bounded number of retries.
 *
 * Time base.  The four runstate times only advance when the producer
 * updates the record (on every runstate change).  The time from then until
 * now belongs to the state named by the STATE counter.  A consumer brings a
 * running vCPU's times up to now with no hypercall:
 *
 *   now_ticks = the counter named by tick_source, read in domain tick_domid
 *               (x86: rdtsc; Arm: CNTVCT_EL0, the virtual count, which EL0
 *               may read)
 *   elapsed   = (now_ticks - UPDATE_TICKS) * 10^9 / tick_hz   [ns]
 *   counter[STATE] += elapsed                        (if now_ticks > ticks)
 *
 * The producer stamps UPDATE_TICKS at the same instant as UPDATE_TIME, in
 * the counter as domain tick_domid's user space reads it: Xen's system time
 * is not readable there, and on Arm a domain's CNTVCT_EL0 is the physical
 * count (which Xen uses) minus that domain's CNTVOFF, so the producer
 * subtracts that domain's offset (x86 PV: none; x86 HVM/PVH: adds its TSC
 * offset).  Only an interval is scaled, so neither the counter's base nor
 * the calibration of tick_hz drifts with uptime.  XEN_VCPU_STATS_TICK_NONE
 * (e.g. a TSC not synchronised between CPUs) or a reader in another domain:
 * the times are as of UPDATE_TIME, and the consumer needs the producer's
 * clock to project them.
 */
#ifndef XENSTATS_ABI_VCPU_STATS_H
#define XENSTATS_ABI_VCPU_STATS_H

#ifndef __XEN__
#include <stdint.h>
#endif

/*
 * A flexible array member, as Xen's public/xen.h spells it; C++ has none
 * (nor, pedantically, zero-size arrays): one element there, which moves no
 * offset.
 */
#ifndef XEN_FLEX_ARRAY_DIM
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define XEN_FLEX_ARRAY_DIM /* empty */
#elif defined(__GNUC__) && !defined(__cplusplus)
#define XEN_FLEX_ARRAY_DIM 0
#else
#define XEN_FLEX_ARRAY_DIM 1
#endif
#endif

/* Resource type and id for XENMEM_acquire_resource (Xen: public/memory.h). */
#define XEN_VCPU_STATS_RESOURCE_TYPE 3 /* XENMEM_resource_stats_table */
#define XEN_VCPU_STATS_RESOURCE_ID 0   /* ..._id_vcpustats */

/* Magics: each is the ASCII of a word, as it appears in a hex dump. */
#define XEN_VCPU_STATS_MAGIC 0xaabbccddU        /* header; version 1's too */
#define XEN_VCPU_STATS_DOMAIN_MAGIC 0x4d4f4478U /* "xDOM" */
#define XEN_VCPU_STATS_VCPU_MAGIC 0x55504376U   /* "vCPU" */

/* Layout version this header describes; see the consumer's rules. */
#define XEN_VCPU_STATS_VERSION 2U

/*
 * Granule of offset and stride.  It is not a cache line size: a producer
 * rounds offset and stride up to its own cache line size, which on every
 * architecture Xen supports is a multiple of 64 (64 on x86, 64 or 128 on
 * Arm).  Consumers only check this granule, so a producer on a machine with
 * 128 or 256 byte lines stays valid without changing the interface.
 */
#define XEN_VCPU_STATS_ALIGN 64U

/* Value of an inactive counter and of all counter padding. */
#define XEN_VCPU_STATS_INACTIVE 0xffffffffffffffffULL
/* A counter with this bit set is inactive (absent or overflowed). */
#define XEN_VCPU_STATS_INACTIVE_BIT 0x8000000000000000ULL
/* A 32-bit word of version 1's header tail: the inactive marker's half. */
#define XEN_VCPU_STATS_INACTIVE32 0xffffffffU

/* header.arch: whose arch-specific counters the arch blocks hold. */
#define XEN_VCPU_STATS_ARCH_NONE 0
#define XEN_VCPU_STATS_ARCH_X86 1
#define XEN_VCPU_STATS_ARCH_ARM 2

/* header.tick_source: the counter UPDATE_TICKS counts (see the time base). */
#define XEN_VCPU_STATS_TICK_NONE 0    /* no usable counter: ignore the ticks */
#define XEN_VCPU_STATS_TICK_X86_TSC 1 /* rdtsc */
#define XEN_VCPU_STATS_TICK_ARM_CNTVCT 2 /* CNTVCT_EL0 */

struct xen_vcpu_stats_header {
    /* Version 1: a consumer that knows only these reads the records. */
    uint32_t magic;  /* XEN_VCPU_STATS_MAGIC, written last */
    uint32_t offset; /* byte offset of vCPU 0's record */
    uint32_t size;   /* bytes of a record the producer fills (seq included) */
    uint32_t stride; /* distance between two records */
    /* Version 2. */
    uint32_t header_size;        /* bytes of this header the producer fills */
    uint32_t version;            /* XEN_VCPU_STATS_VERSION */
    uint32_t nr_vcpus;           /* records: the domain's max_vcpus */
    uint32_t arch;               /* XEN_VCPU_STATS_ARCH_* */
    uint32_t domain_offset;      /* byte offset of the domain section */
    uint32_t domain_size;        /* bytes of it the producer fills */
    uint32_t domain_arch_offset; /* arch counters, from domain_offset */
    uint32_t domain_arch_size;   /* bytes of them */
    uint32_t vcpu_arch_offset;   /* arch counters, from a record's start */
    uint32_t vcpu_arch_size;     /* bytes of them */
    uint32_t tick_source;        /* XEN_VCPU_STATS_TICK_* */
    uint32_t tick_domid;         /* domain whose counter UPDATE_TICKS is */
    uint64_t tick_hz;            /* ticks per second; 0 with TICK_NONE */
};

/*
 * A record (struct xen_vcpu_stats) and the domain section
 * (struct xen_vcpu_stats_domain) share one shape: a sequence number, a
 * magic, then 64-bit counters from byte 8, so that one reader and one
 * writer serve both.
 */
#define XEN_VCPU_STATS_COUNTER_OFFSET(idx) (8U + 8U * (uint32_t)(idx))

/*
 * vCPU counter indices.  The first four follow Xen's RUNSTATE_* numbering so
 * that counter[state] is the time spent in that state.
 */
#define XEN_VCPU_STATS_RUNNING_TIME 0  /* ns in RUNSTATE_running */
#define XEN_VCPU_STATS_RUNNABLE_TIME 1 /* ns in RUNSTATE_runnable */
#define XEN_VCPU_STATS_BLOCKED_TIME 2  /* ns in RUNSTATE_blocked */
#define XEN_VCPU_STATS_OFFLINE_TIME 3  /* ns in RUNSTATE_offline */
#define XEN_VCPU_STATS_STATE_CHANGES 4 /* number of runstate changes */
#define XEN_VCPU_STATS_STATE 5         /* current RUNSTATE_* value */
#define XEN_VCPU_STATS_UPDATE_TIME 6   /* producer's clock (ns) the times are
                                          accounted up to */
#define XEN_VCPU_STATS_UPDATE_TICKS 7  /* the time base's counter, at the same
                                          instant as UPDATE_TIME (v2) */
#define XEN_VCPU_STATS_NR_COUNTERS 8

/* Xen's runstates (public/vcpu.h RUNSTATE_*), for readers without it. */
#define XEN_VCPU_STATS_RUNSTATE_RUNNING 0
#define XEN_VCPU_STATS_RUNSTATE_RUNNABLE 1
#define XEN_VCPU_STATS_RUNSTATE_BLOCKED 2
#define XEN_VCPU_STATS_RUNSTATE_OFFLINE 3

struct xen_vcpu_stats {
    uint32_t seq;   /* odd: update in progress */
    uint32_t magic; /* XEN_VCPU_STATS_VCPU_MAGIC (version 1: _pad) */
    uint64_t counter[XEN_FLEX_ARRAY_DIM];
};

/*
 * Domain counter indices.  Each is a figure xentop shows and a toolstack
 * otherwise makes XEN_DOMCTL_getdomaininfo for, that Xen keeps per domain
 * (not as a sum over vCPUs, which a reader takes from the records) and
 * changes under one lock.  Pages are of 4 KiB (XEN_PAGE_SIZE).
 */
#define XEN_VCPU_STATS_DOMAIN_TOT_PAGES 0         /* pages the domain holds */
#define XEN_VCPU_STATS_DOMAIN_MAX_PAGES 1         /* the most it may hold */
#define XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES 2 /* claimed, not yet held */
#define XEN_VCPU_STATS_DOMAIN_NR_COUNTERS 3

struct xen_vcpu_stats_domain {
    uint32_t seq;   /* odd: update in progress */
    uint32_t magic; /* XEN_VCPU_STATS_DOMAIN_MAGIC */
    uint64_t counter[XEN_FLEX_ARRAY_DIM];
};

/* What this version of the header produces. */
#define XEN_VCPU_STATS_HEADER_SIZE 72U
#define XEN_VCPU_STATS_RECORD_SIZE XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_NR_COUNTERS)
#define XEN_VCPU_STATS_DOMAIN_SIZE XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_DOMAIN_NR_COUNTERS)
/* Version 1's header: the first four fields. */
#define XEN_VCPU_STATS_HEADER_SIZE_V1 16U

/* Round up to the granule; x must not be near UINT32_MAX. */
#define XEN_VCPU_STATS_ROUNDUP(x, a) ((((x) + (a) - 1U) / (a)) * (a))

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define XEN_VCPU_STATS_ASSERT_(c, m) _Static_assert(c, #m)
#else
#define XEN_VCPU_STATS_ASSERT_(c, m) typedef char xen_vcpu_stats_assert_##m[(c) ? 1 : -1]
#endif
#define XEN_VCPU_STATS_AT_(s, f, o) XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct s, f) == (o), s##_##f##_at_##o)

XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, magic, 0);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, offset, 4);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, size, 8);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, stride, 12);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, header_size, 16);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, version, 20);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, nr_vcpus, 24);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, arch, 28);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, domain_offset, 32);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, domain_size, 36);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, domain_arch_offset, 40);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, domain_arch_size, 44);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, vcpu_arch_offset, 48);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, vcpu_arch_size, 52);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, tick_source, 56);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, tick_domid, 60);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_header, tick_hz, 64);
XEN_VCPU_STATS_ASSERT_(sizeof(struct xen_vcpu_stats_header) == XEN_VCPU_STATS_HEADER_SIZE, header_size);

XEN_VCPU_STATS_AT_(xen_vcpu_stats, seq, 0);
XEN_VCPU_STATS_AT_(xen_vcpu_stats, magic, 4);
XEN_VCPU_STATS_AT_(xen_vcpu_stats, counter, 8);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_domain, seq, 0);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_domain, magic, 4);
XEN_VCPU_STATS_AT_(xen_vcpu_stats_domain, counter, 8);

/* Counter offsets: the ones version 1 fixed, then the appended ones. */
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_RUNNING_TIME) == 8, running_at_8);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_RUNNABLE_TIME) == 16, runnable_at_16);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_BLOCKED_TIME) == 24, blocked_at_24);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_OFFLINE_TIME) == 32, offline_at_32);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_STATE_CHANGES) == 40, changes_at_40);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_STATE) == 48, state_at_48);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_UPDATE_TIME) == 56, update_time_at_56);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_UPDATE_TICKS) == 64, update_ticks_at_64);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_RECORD_SIZE == 72, record_size);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_DOMAIN_TOT_PAGES) == 8, tot_pages_at_8);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_DOMAIN_MAX_PAGES) == 16, max_pages_at_16);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES) == 24,
                       outstanding_pages_at_24);
XEN_VCPU_STATS_ASSERT_(XEN_VCPU_STATS_DOMAIN_SIZE == 32, domain_size);

#undef XEN_VCPU_STATS_AT_
#undef XEN_VCPU_STATS_ASSERT_

#endif /* XENSTATS_ABI_VCPU_STATS_H */
