/* SPDX-License-Identifier: MIT */
/*
 * Producer side of the vCPU statistics layout (vcpu_stats.h), for the
 * emulated host.  The hypervisor series has its own writer in Xen's style;
 * both follow the same rule: the layout and every sequence number live in
 * the writer's own memory, and the writer only stores to the region, never
 * reads it back, so whatever another party writes there can change only
 * what readers see, never where the writer stores.
 *
 * Header only, no allocation and no libc.  One writer per structure (a
 * vCPU record, or the domain section): updates need no atomic
 * read-modify-write, only ordered stores.
 *
 * Memory ordering: an environment may define, before including this file,
 *   XEN_VCPU_STATS_STORE32(p, v)  XEN_VCPU_STATS_STORE64(p, v)
 *     single-copy atomic stores,
 *   XEN_VCPU_STATS_WMB()
 *     a store-store barrier.
 * The defaults use the GCC/Clang __atomic builtins.
 *
 * Update protocol for one structure (what begin/end implement):
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

/* The time base a producer publishes (header fields of the same names). */
struct xen_vcpu_stats_time_base {
    uint32_t arch;        /* XEN_VCPU_STATS_ARCH_* */
    uint32_t tick_source; /* XEN_VCPU_STATS_TICK_* */
    uint32_t tick_domid;
    uint64_t tick_hz; /* 0 with XEN_VCPU_STATS_TICK_NONE */
};

/* The writer's own copy of the layout. */
struct xen_vcpu_stats_writer {
    unsigned char *region;
    uint64_t bytes;
    uint32_t nr_vcpus;
    uint32_t domain_offset;
    uint32_t offset;
    uint32_t stride;
};

/* One structure being written, with its sequence number kept here. */
struct xen_vcpu_stats_block {
    uint32_t *seq_word;
    uint64_t *counter;
    uint32_t seq;
    uint32_t nr_counters; /* indices set() accepts */
};

/* Where each part goes for a producer whose cache line is `line` bytes. */
static inline void xen_vcpu_stats_place(uint32_t line, uint32_t *ret_domain_offset, uint32_t *ret_offset,
                                        uint32_t *ret_stride)
{
    *ret_domain_offset = XEN_VCPU_STATS_ROUNDUP(XEN_VCPU_STATS_HEADER_SIZE, line);
    *ret_offset = XEN_VCPU_STATS_ROUNDUP(*ret_domain_offset + XEN_VCPU_STATS_DOMAIN_SIZE, line);
    *ret_stride = XEN_VCPU_STATS_ROUNDUP(XEN_VCPU_STATS_RECORD_SIZE, line);
}

/*
 * Bytes of a region holding nr_vcpus records, for a producer whose cache line
 * is `line` bytes (a multiple of XEN_VCPU_STATS_ALIGN, at most 4096).
 * Returns 0 when the arguments are invalid or the result does not fit in 32
 * bits.
 */
static inline uint64_t xen_vcpu_stats_region_bytes(uint32_t nr_vcpus, uint32_t line)
{
    uint32_t domain_offset, offset, stride;

    if (line == 0 || line % XEN_VCPU_STATS_ALIGN || line > 4096 || nr_vcpus == 0)
        return 0;
    xen_vcpu_stats_place(line, &domain_offset, &offset, &stride);
    if (offset + (uint64_t)stride * nr_vcpus > 0xffffffffULL)
        return 0;
    return offset + (uint64_t)stride * nr_vcpus;
}

static inline void xen_vcpu_stats_store_inactive(unsigned char *from, unsigned char *to)
{
    for (; from < to; from += 8)
        XEN_VCPU_STATS_STORE64((uint64_t *)from, XEN_VCPU_STATS_INACTIVE);
}

/*
 * Lay out `bytes` bytes at `region` (8-byte aligned) for nr_vcpus vCPUs:
 * every counter and all counter padding inactive, every seq 0, the magics,
 * reserved header bytes zero, the header written with its magic last so a
 * reader never accepts a half-initialised region.  `bytes` must be at least
 * xen_vcpu_stats_region_bytes(nr_vcpus, line) and a multiple of 8.
 * Returns 0, or -1 if the arguments are invalid (nothing is written then).
 */
static inline int xen_vcpu_stats_init(struct xen_vcpu_stats_writer *w, void *region, uint64_t bytes,
                                      uint32_t nr_vcpus, uint32_t line,
                                      const struct xen_vcpu_stats_time_base *time)
{
    struct xen_vcpu_stats_header *h = (struct xen_vcpu_stats_header *)region;
    uint64_t need = xen_vcpu_stats_region_bytes(nr_vcpus, line);
    unsigned char *base = (unsigned char *)region;
    uint32_t v, i;

    if (!need || bytes < need || bytes % 8)
        return -1;
    w->region = base;
    w->bytes = bytes;
    w->nr_vcpus = nr_vcpus;
    xen_vcpu_stats_place(line, &w->domain_offset, &w->offset, &w->stride);

    XEN_VCPU_STATS_STORE32(&h->magic, 0U);
    XEN_VCPU_STATS_WMB();
    XEN_VCPU_STATS_STORE32(&h->offset, w->offset);
    XEN_VCPU_STATS_STORE32(&h->size, XEN_VCPU_STATS_RECORD_SIZE);
    XEN_VCPU_STATS_STORE32(&h->stride, w->stride);
    XEN_VCPU_STATS_STORE32(&h->header_size, XEN_VCPU_STATS_HEADER_SIZE);
    XEN_VCPU_STATS_STORE32(&h->version, XEN_VCPU_STATS_VERSION);
    XEN_VCPU_STATS_STORE32(&h->nr_vcpus, nr_vcpus);
    XEN_VCPU_STATS_STORE32(&h->arch, time->arch);
    XEN_VCPU_STATS_STORE32(&h->domain_offset, w->domain_offset);
    XEN_VCPU_STATS_STORE32(&h->domain_size, XEN_VCPU_STATS_DOMAIN_SIZE);
    /* No arch counters yet: empty blocks right after the common ones. */
    XEN_VCPU_STATS_STORE32(&h->domain_arch_offset, XEN_VCPU_STATS_DOMAIN_SIZE);
    XEN_VCPU_STATS_STORE32(&h->domain_arch_size, 0U);
    XEN_VCPU_STATS_STORE32(&h->vcpu_arch_offset, XEN_VCPU_STATS_RECORD_SIZE);
    XEN_VCPU_STATS_STORE32(&h->vcpu_arch_size, 0U);
    XEN_VCPU_STATS_STORE32(&h->tick_source, time->tick_source);
    XEN_VCPU_STATS_STORE32(&h->tick_domid, time->tick_domid);
    XEN_VCPU_STATS_STORE64(&h->tick_hz, time->tick_source == XEN_VCPU_STATS_TICK_NONE ? 0 : time->tick_hz);
    for (i = XEN_VCPU_STATS_HEADER_SIZE; i < w->domain_offset; i += 8)
        XEN_VCPU_STATS_STORE64((uint64_t *)(base + i), 0ULL);

    xen_vcpu_stats_store_inactive(base + w->domain_offset, base + w->offset);
    XEN_VCPU_STATS_STORE32((uint32_t *)(base + w->domain_offset), 0U);
    XEN_VCPU_STATS_STORE32((uint32_t *)(base + w->domain_offset + 4), XEN_VCPU_STATS_DOMAIN_MAGIC);
    xen_vcpu_stats_store_inactive(base + w->offset, base + bytes);
    for (v = 0; v < nr_vcpus; v++) {
        struct xen_vcpu_stats *r = (struct xen_vcpu_stats *)(base + w->offset + (uint64_t)v * w->stride);

        XEN_VCPU_STATS_STORE32(&r->seq, 0U);
        XEN_VCPU_STATS_STORE32(&r->magic, XEN_VCPU_STATS_VCPU_MAGIC);
    }
    XEN_VCPU_STATS_WMB();
    XEN_VCPU_STATS_STORE32(&h->magic, XEN_VCPU_STATS_MAGIC);
    return 0;
}

/* The writer of vCPU `vcpu`'s record (vcpu < nr_vcpus), seq 0 as init left it. */
static inline void xen_vcpu_stats_vcpu_block(const struct xen_vcpu_stats_writer *w, uint32_t vcpu,
                                             struct xen_vcpu_stats_block *ret_block)
{
    struct xen_vcpu_stats *r = (struct xen_vcpu_stats *)(w->region + w->offset + (uint64_t)vcpu * w->stride);

    ret_block->seq_word = &r->seq;
    ret_block->counter = r->counter;
    ret_block->seq = 0;
    ret_block->nr_counters = XEN_VCPU_STATS_NR_COUNTERS;
}

/* The writer of the domain section, seq 0 as init left it. */
static inline void xen_vcpu_stats_domain_block(const struct xen_vcpu_stats_writer *w,
                                               struct xen_vcpu_stats_block *ret_block)
{
    struct xen_vcpu_stats_domain *d = (struct xen_vcpu_stats_domain *)(w->region + w->domain_offset);

    ret_block->seq_word = &d->seq;
    ret_block->counter = d->counter;
    ret_block->seq = 0;
    ret_block->nr_counters = XEN_VCPU_STATS_DOMAIN_NR_COUNTERS;
}

/* Start an update: seq becomes odd. */
static inline void xen_vcpu_stats_begin(struct xen_vcpu_stats_block *b)
{
    XEN_VCPU_STATS_STORE32(b->seq_word, ++b->seq);
    XEN_VCPU_STATS_WMB();
}

/* Finish an update: seq becomes even and the new values are published. */
static inline void xen_vcpu_stats_end(struct xen_vcpu_stats_block *b)
{
    XEN_VCPU_STATS_WMB();
    XEN_VCPU_STATS_STORE32(b->seq_word, ++b->seq);
}

/*
 * Store counter idx (ignored past the structure's counters).  A value with
 * the top bit set cannot be told from the inactive marker, so it saturates
 * to XEN_VCPU_STATS_INACTIVE: an overflowed counter reads as inactive, as
 * the layout specifies.
 */
static inline void xen_vcpu_stats_set(struct xen_vcpu_stats_block *b, unsigned int idx, uint64_t value)
{
    if (idx >= b->nr_counters)
        return;
    if (value & XEN_VCPU_STATS_INACTIVE_BIT)
        value = XEN_VCPU_STATS_INACTIVE;
    XEN_VCPU_STATS_STORE64(&b->counter[idx], value);
}

static inline void xen_vcpu_stats_set_inactive(struct xen_vcpu_stats_block *b, unsigned int idx)
{
    xen_vcpu_stats_set(b, idx, XEN_VCPU_STATS_INACTIVE);
}

#endif /* XENSTATS_ABI_VCPU_STATS_WRITER_H */
