/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside the vCPU map: the part every map shares and the ops table of its
 * source.  A source is one way of getting samples: a region (reader.c:
 * shared memory, a dump file or a caller's buffer, read under the
 * sequence protocol) or a hypercall per vCPU (hypercall.c).  map.c checks
 * the arguments of the public API once and calls the source's op; each
 * source allocates its own struct with the map as its first member.
 */
#ifndef XENSTATS_VCPU_READER_H
#define XENSTATS_VCPU_READER_H

#include <xenstats/vcpu.h>

struct xenstats_vcpu_map;

struct vcpu_source_ops {
    enum xenstats_vcpu_source source;
    /* Samples of vCPUs first..first+count-1, all in the layout's range. */
    int (*snapshot)(struct xenstats_vcpu_map *map, uint32_t first, uint32_t count,
                    struct xenstats_vcpu_sample *ret_samples);
    /* The domain section; NULL when the source has none. */
    int (*snapshot_domain)(struct xenstats_vcpu_map *map, struct xenstats_vcpu_domain_sample *ret_sample);
    /* The region into buf, len >= xenstats_vcpu_map_dump_size(); NULL when
     * the source has no region. */
    int (*dump)(struct xenstats_vcpu_map *map, void *buf, size_t len);
    /* The producer's clock (xenstats_vcpu_map_clock()). */
    int (*clock)(struct xenstats_vcpu_map *map, uint64_t *ret_now);
    /* Release what the source holds and the map itself. */
    void (*close)(struct xenstats_vcpu_map *map);
};

struct xenstats_vcpu_map {
    const struct vcpu_source_ops *ops;
    struct xenstats_vcpu_layout layout; /* a hypercall source: size and nr_vcpus only */
    uint32_t max_retries;
};

/*
 * Copy one record of `size` bytes (the header's size) under its sequence
 * number, as a reader that knows `nr_known` counters.  Counters past
 * nr_known or past size are UNKNOWN.  Returns 0 or -EBUSY after
 * max_retries + 1 attempts.  Exposed for tests of old/new reader
 * compatibility.
 */
int vcpu_record_read(const unsigned char *record, uint32_t size, unsigned int nr_known, uint32_t max_retries,
                     struct xenstats_vcpu_sample *ret_sample);

/*
 * The hypercall fallback (hypercall.c).  vcpu_sample_from_info() turns
 * what the call gives into a sample stamped `stamp`; vcpu_hypercall_read()
 * makes the call for one vCPU.
 */
struct platform_vcpu_info;
void vcpu_sample_from_info(const struct platform_vcpu_info *info, uint64_t stamp,
                           struct xenstats_vcpu_sample *ret_sample);
int vcpu_hypercall_read(struct xenstats_host *host, uint32_t domid, uint32_t vcpu,
                        struct xenstats_vcpu_sample *ret_sample);

#endif
