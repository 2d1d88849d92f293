/* SPDX-License-Identifier: MIT */
/*
 * Producer side of the vCPU statistics layout (vcpu_stats.h).
 *
 * Header only, no allocation and no libc, so the hypervisor patch and the
 * emulated host run the same code.  One writer per record: the writer of a
 * record is the only one to store into it, so updates need no atomic
 * read-modify-write, only ordered stores.
 *
 * Memory ordering: an environment may define, before including this file,
 *   XEN_VCPU_STATS_STORE32(p, v)  XEN_VCPU_STATS_STORE64(p, v)
 *     single-copy atomic stores (Xen: write_atomic),
 *   XEN_VCPU_STATS_WMB()
 *     a store-store barrier (Xen: smp_wmb).
 * The defaults use the GCC/Clang __atomic builtins.
 *
 * Update protocol for one record (what begin/end implement):
 *   seq = seq + 1 (odd); wmb; store counters; wmb; seq = seq + 1 (even).
 */
#ifndef XENSTATS_ABI_VCPU_STATS_WRITER_H
#define XENSTATS_ABI_VCPU_STATS_WRITER_H

#include "vcpu_stats.h"

#ifndef XEN_VCPU_STATS_STORE32
#define XEN_VCPU_STATS_STORE32(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#endif
#ifndef XEN_VCPU_STATS_STORE64
#define XEN_VCPU_STATS_STORE64(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#endif
#ifndef XEN_VCPU_STATS_WMB
#define XEN_VCPU_STATS_WMB() __atomic_thread_fence(__ATOMIC_RELEASE)
#endif

/*
 * Bytes of a region holding nr_vcpus records, for a producer whose cache line
 * is `line` bytes (a multiple of XEN_VCPU_STATS_ALIGN).  Returns 0 when the
 * arguments are invalid or the result does not fit in 32 bits.
 */
static inline uint64_t xen_vcpu_stats_region_bytes(uint32_t nr_vcpus, uint32_t line)
{
    uint64_t offset, stride;

    if (line == 0 || line % XEN_VCPU_STATS_ALIGN)
        return 0;
    offset = XEN_VCPU_STATS_ROUNDUP((uint64_t)sizeof(struct xen_vcpu_stats_header), line);
    stride = XEN_VCPU_STATS_ROUNDUP((uint64_t)XEN_VCPU_STATS_RECORD_SIZE, line);
    if (offset + stride * nr_vcpus > 0xffffffffULL)
        return 0;
    return offset + stride * nr_vcpus;
}

static inline struct xen_vcpu_stats *xen_vcpu_stats_record(void *region, uint32_t vcpu)
{
    const struct xen_vcpu_stats_header *h = (const struct xen_vcpu_stats_header *)region;

    return (struct xen_vcpu_stats *)((unsigned char *)region + h->offset + (uint64_t)vcpu * h->stride);
}

/*
 * Lay out `bytes` bytes at `region` for nr_vcpus vCPUs: every counter and all
 * padding inactive, every seq 0, header written with the magic last so a
 * reader never accepts a half-initialised region.  `bytes` must be at least
 * xen_vcpu_stats_region_bytes(nr_vcpus, line) and a multiple of 8; the tail
 * beyond the last record is filled with the inactive marker too.
 * Returns 0, or -1 if the arguments are invalid (nothing is written then).
 */
static inline int xen_vcpu_stats_init(void *region, uint64_t bytes, uint32_t nr_vcpus, uint32_t line)
{
    struct xen_vcpu_stats_header *h = (struct xen_vcpu_stats_header *)region;
    uint64_t need = xen_vcpu_stats_region_bytes(nr_vcpus, line);
    uint64_t *word = (uint64_t *)region;
    uint64_t i;
    uint32_t v;

    if (!need || bytes < need || bytes % 8)
        return -1;

    XEN_VCPU_STATS_STORE32(&h->magic, 0U);
    XEN_VCPU_STATS_WMB();
    for (i = 1; i < bytes / 8; i++)
        XEN_VCPU_STATS_STORE64(&word[i], XEN_VCPU_STATS_INACTIVE);
    h->offset = (uint32_t)XEN_VCPU_STATS_ROUNDUP((uint32_t)sizeof(*h), line);
    h->size = XEN_VCPU_STATS_RECORD_SIZE;
    h->stride = (uint32_t)XEN_VCPU_STATS_ROUNDUP(XEN_VCPU_STATS_RECORD_SIZE, line);
    for (v = 0; v < nr_vcpus; v++) {
        struct xen_vcpu_stats *r = xen_vcpu_stats_record(region, v);

        XEN_VCPU_STATS_STORE32(&r->seq, 0U);
        XEN_VCPU_STATS_STORE32(&r->_pad, 0xffffffffU);
    }
    XEN_VCPU_STATS_WMB();
    XEN_VCPU_STATS_STORE32(&h->magic, XEN_VCPU_STATS_MAGIC);
    return 0;
}

/* Start an update of one record: seq becomes odd. */
static inline void xen_vcpu_stats_begin(struct xen_vcpu_stats *r)
{
    XEN_VCPU_STATS_STORE32(&r->seq, r->seq + 1U);
    XEN_VCPU_STATS_WMB();
}

/* Finish an update: seq becomes even and the new values are published. */
static inline void xen_vcpu_stats_end(struct xen_vcpu_stats *r)
{
    XEN_VCPU_STATS_WMB();
    XEN_VCPU_STATS_STORE32(&r->seq, r->seq + 1U);
}

/*
 * Store a counter.  A value with the top bit set cannot be told from the
 * inactive marker, so it saturates to XEN_VCPU_STATS_INACTIVE: an overflowed
 * counter reads as inactive, as the layout specifies.
 */
static inline void xen_vcpu_stats_set(struct xen_vcpu_stats *r, unsigned int idx, uint64_t value)
{
    if (value & XEN_VCPU_STATS_INACTIVE_BIT)
        value = XEN_VCPU_STATS_INACTIVE;
    XEN_VCPU_STATS_STORE64(&r->counter[idx], value);
}

static inline void xen_vcpu_stats_set_inactive(struct xen_vcpu_stats *r, unsigned int idx)
{
    XEN_VCPU_STATS_STORE64(&r->counter[idx], XEN_VCPU_STATS_INACTIVE);
}

/* Add to a counter, saturating; an inactive counter stays inactive. */
static inline void xen_vcpu_stats_add(struct xen_vcpu_stats *r, unsigned int idx, uint64_t delta)
{
    uint64_t old = r->counter[idx]; /* only this writer stores it */

    if ((old & XEN_VCPU_STATS_INACTIVE_BIT) || (delta & XEN_VCPU_STATS_INACTIVE_BIT))
        xen_vcpu_stats_set_inactive(r, idx);
    else
        xen_vcpu_stats_set(r, idx, old + delta); /* both < 2^63: no wrap */
}

#endif /* XENSTATS_ABI_VCPU_STATS_WRITER_H */
