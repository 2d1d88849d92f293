/* SPDX-License-Identifier: MIT */
/*
 * Wire layout of the vCPU statistics resource
 * (XENMEM_resource_stats_table, id XENMEM_resource_stats_table_id_vcpustats).
 *
 * This header is the single source of truth for the layout.  It is shared by
 * the hypervisor patch, the emulated host and the readers, so it depends on
 * nothing beyond <stdint.h> (or on a hypervisor that provides the same fixed
 * width types) and contains no code.
 *
 * Layout (all fields little endian, as the producer's native order):
 *
 *   byte 0:                     struct xen_vcpu_stats_header
 *   byte offset + n * stride:   struct xen_vcpu_stats record of vCPU n
 *
 * Rules a producer follows:
 *   - offset >= sizeof(header), size >= 8, stride >= size; offset and stride
 *     are multiples of XEN_VCPU_STATS_ALIGN (see below);
 *   - every byte that is not a live counter is filled with
 *     XEN_VCPU_STATS_INACTIVE: the header's tail up to offset, unused
 *     counters and the tail of each record up to stride;
 *   - seq is odd while the record is being written;
 *   - a counter whose most significant bit is set is inactive; a counter
 *     that would overflow into that bit saturates at XEN_VCPU_STATS_INACTIVE
 *     and therefore reads as inactive from then on.
 *
 * Rules a consumer follows:
 *   - validate the header against the size of its mapping before trusting
 *     any record;
 *   - treat a counter at byte offset o of a record as unknown to the producer
 *     when o + 8 > size;
 *   - read a record with the sequence protocol (docs/vcpu-stats.md) and give
 *     up after a bounded number of retries.
 *
 * The four runstate times only advance when the producer updates the record
 * (on every runstate change).  A consumer that wants figures as of "now"
 * applies the staleness rule: the time between update_time and now belongs
 * to the state named by the state counter (see docs/vcpu-stats.md).
 */
#ifndef XENSTATS_ABI_VCPU_STATS_H
#define XENSTATS_ABI_VCPU_STATS_H

#ifndef __XEN__
#include <stdint.h>
#endif

#define XEN_VCPU_STATS_MAGIC 0xaabbccddU

/* Resource type and id for XENMEM_acquire_resource. */
#define XEN_VCPU_STATS_RESOURCE_TYPE 3 /* XENMEM_resource_stats_table */
#define XEN_VCPU_STATS_RESOURCE_ID 0   /* ..._id_vcpustats */

/*
 * Granule of offset and stride.  It is not a cache line size: a producer
 * rounds offset and stride up to its own cache line size, which on every
 * architecture Xen supports is a multiple of 64 (64 on x86, 64 or 128 on
 * Arm).  Consumers only check this granule, so a producer on a machine with
 * 128 or 256 byte lines stays valid without changing the interface.
 */
#define XEN_VCPU_STATS_ALIGN 64U

/* Value of an inactive counter and of all padding. */
#define XEN_VCPU_STATS_INACTIVE 0xffffffffffffffffULL
/* A counter with this bit set is inactive (absent or overflowed). */
#define XEN_VCPU_STATS_INACTIVE_BIT 0x8000000000000000ULL

struct xen_vcpu_stats_header {
    uint32_t magic;  /* XEN_VCPU_STATS_MAGIC */
    uint32_t offset; /* byte offset of vCPU 0's record */
    uint32_t size;   /* bytes of a record the producer fills (seq included) */
    uint32_t stride; /* distance between two records */
};

/*
 * Counter indices.  The first four follow Xen's RUNSTATE_* numbering so that
 * counter[state] is the time spent in that state.  New counters are only ever
 * appended.
 */
enum xen_vcpu_stats_counter {
    XEN_VCPU_STATS_RUNNING_TIME = 0,  /* ns in RUNSTATE_running */
    XEN_VCPU_STATS_RUNNABLE_TIME = 1, /* ns in RUNSTATE_runnable */
    XEN_VCPU_STATS_BLOCKED_TIME = 2,  /* ns in RUNSTATE_blocked */
    XEN_VCPU_STATS_OFFLINE_TIME = 3,  /* ns in RUNSTATE_offline */
    XEN_VCPU_STATS_STATE_CHANGES = 4, /* number of runstate changes */
    XEN_VCPU_STATS_STATE = 5,         /* current RUNSTATE_* value */
    XEN_VCPU_STATS_UPDATE_TIME = 6,   /* producer clock (ns) the times are
                                         accounted up to */
    XEN_VCPU_STATS_NR_COUNTERS = 7
};

/* Xen's runstates, as in public/vcpu.h. */
#define XEN_VCPU_STATS_RUNSTATE_RUNNING 0
#define XEN_VCPU_STATS_RUNSTATE_RUNNABLE 1
#define XEN_VCPU_STATS_RUNSTATE_BLOCKED 2
#define XEN_VCPU_STATS_RUNSTATE_OFFLINE 3

struct xen_vcpu_stats {
    uint32_t seq; /* odd: update in progress */
    uint32_t _pad;
    uint64_t counter[XEN_VCPU_STATS_NR_COUNTERS];
};

#define XEN_VCPU_STATS_COUNTER_OFFSET(idx) (8U + 8U * (uint32_t)(idx))

/* Round up to the granule; x must not be near UINT32_MAX. */
#define XEN_VCPU_STATS_ROUNDUP(x, a) ((((x) + (a) - 1U) / (a)) * (a))

/* Layout this version of the header produces. */
#define XEN_VCPU_STATS_RECORD_SIZE ((uint32_t)sizeof(struct xen_vcpu_stats))

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define XEN_VCPU_STATS_ASSERT_(c, m) _Static_assert(c, #m)
#else
#define XEN_VCPU_STATS_ASSERT_(c, m) typedef char xen_vcpu_stats_assert_##m[(c) ? 1 : -1]
#endif

XEN_VCPU_STATS_ASSERT_(sizeof(struct xen_vcpu_stats_header) == 16, header_size);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats_header, magic) == 0, magic_at_0);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats_header, offset) == 4, offset_at_4);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats_header, size) == 8, size_at_8);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats_header, stride) == 12, stride_at_12);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, seq) == 0, seq_at_0);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, _pad) == 4, pad_at_4);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter) == 8, counters_at_8);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_RUNNING_TIME]) == 8,
                       running_at_8);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_RUNNABLE_TIME]) == 16,
                       runnable_at_16);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_BLOCKED_TIME]) == 24,
                       blocked_at_24);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_OFFLINE_TIME]) == 32,
                       offline_at_32);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_STATE_CHANGES]) == 40,
                       changes_at_40);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_STATE]) == 48,
                       state_at_48);
XEN_VCPU_STATS_ASSERT_(__builtin_offsetof(struct xen_vcpu_stats, counter[XEN_VCPU_STATS_UPDATE_TIME]) == 56,
                       update_time_at_56);
XEN_VCPU_STATS_ASSERT_(sizeof(struct xen_vcpu_stats) == 64, record_size);

#undef XEN_VCPU_STATS_ASSERT_

#endif /* XENSTATS_ABI_VCPU_STATS_H */
