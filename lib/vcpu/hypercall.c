/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vCPU statistics on a host without the resource: one hypercall per vCPU
 * (XEN_DOMCTL_getvcpuinfo through the backend's vcpu_info op), turned
 * into the same samples a region gives, so that readers do not care.
 * What the call cannot tell (time runnable, blocked or offline, state
 * changes) is INACTIVE: absent, never zero.  The hypercall source of the
 * vCPU map (reader.h).
 */
#include <string.h>

#include "platform/platform.h"
#include "util/util.h"
#include "vcpu/reader.h"

void vcpu_sample_from_info(const struct platform_vcpu_info *info, uint64_t stamp,
                           struct xenstats_vcpu_sample *ret_sample)
{
    struct xenstats_vcpu_sample s;
    uint64_t state;
    unsigned int i;

    memset(&s, 0, sizeof(s));
    for (i = 0; i < XENSTATS_VCPU_NR_COUNTERS; i++)
        s.raw[i] = XEN_VCPU_STATS_INACTIVE;
    /* A vCPU that is running may also be marked blocked while it blocks:
     * running wins, as the scheduler still has it on a pCPU. */
    if (!info->online)
        state = XEN_VCPU_STATS_RUNSTATE_OFFLINE;
    else if (info->running)
        state = XEN_VCPU_STATS_RUNSTATE_RUNNING;
    else if (info->blocked)
        state = XEN_VCPU_STATS_RUNSTATE_BLOCKED;
    else
        state = XEN_VCPU_STATS_RUNSTATE_RUNNABLE;
    /* Xen accounts cpu_time up to the call; a value in the inactive bit
     * cannot be a time and stays inactive. */
    if (!(info->cpu_time_ns & XEN_VCPU_STATS_INACTIVE_BIT))
        s.raw[XEN_VCPU_STATS_RUNNING_TIME] = info->cpu_time_ns;
    s.raw[XEN_VCPU_STATS_STATE] = state;
    if (!(stamp & XEN_VCPU_STATS_INACTIVE_BIT))
        s.raw[XEN_VCPU_STATS_UPDATE_TIME] = stamp;
    s.nr_present = XENSTATS_VCPU_NR_COUNTERS;
    *ret_sample = s;
}

int vcpu_hypercall_read(struct xenstats_host *host, uint32_t domid, uint32_t vcpu,
                        struct xenstats_vcpu_sample *ret_sample)
{
    struct platform *p = &host->platform;
    struct platform_vcpu_info info;
    uint64_t before, after;
    int r;

    /* The hypervisor reads its clock somewhere inside the call: stamp the
     * sample with the middle of it, on the clock the map's readers use. */
    r = platform_resource_clock_ns(p, &before);
    if (r < 0)
        return r;
    r = platform_domain_vcpu_info(p, domid, vcpu, &info);
    if (r < 0)
        return r;
    r = platform_resource_clock_ns(p, &after);
    if (r < 0)
        return r;
    vcpu_sample_from_info(&info, before + (after - before) / 2, ret_sample);
    return 0;
}

struct hypercall_map {
    struct xenstats_vcpu_map map; /* first: the public handle */
    struct xenstats_host *host;
    uint32_t domid;
};

static struct hypercall_map *hypercall_of(struct xenstats_vcpu_map *map)
{
    return (struct hypercall_map *)map;
}

static int hypercall_snapshot(struct xenstats_vcpu_map *map, uint32_t first, uint32_t count,
                              struct xenstats_vcpu_sample *ret_samples)
{
    struct hypercall_map *h = hypercall_of(map);
    uint32_t i;

    for (i = 0; i < count; i++) {
        int r = vcpu_hypercall_read(h->host, h->domid, first + i, &ret_samples[i]);

        if (r < 0)
            return r;
    }
    return 0;
}

/* The samples are stamped with the backend's clock: no offset to learn. */
static int hypercall_clock(struct xenstats_vcpu_map *map, uint64_t *ret_now)
{
    struct hypercall_map *h = hypercall_of(map);

    return platform_resource_clock_ns(&h->host->platform, ret_now);
}

static void hypercall_close(struct xenstats_vcpu_map *map)
{
    free(hypercall_of(map));
}

static const struct vcpu_source_ops hypercall_ops = {
    .source = XENSTATS_VCPU_SOURCE_HYPERCALL,
    .snapshot = hypercall_snapshot,
    .dump = NULL, /* no region */
    .clock = hypercall_clock,
    .close = hypercall_close,
};

/* A map with no region: its layout only carries the vCPU count. */
struct xenstats_vcpu_map *xenstats_vcpu_map_open_hypercall(struct xenstats_host *host, uint32_t domid)
{
    struct platform *p = &host->platform;
    struct xenstats_domain_info info;
    struct xenstats_vcpu_sample probe;
    struct hypercall_map *h;
    int r;

    r = platform_domain_info(p, domid, &info);
    if (r < 0)
        return set_errno(r), NULL;
    /* Ask once now, so that a refusal shows at open, not at the first sample. */
    r = vcpu_hypercall_read(host, domid, 0, &probe);
    if (r < 0)
        return set_errno(r), NULL;
    h = calloc(1, sizeof(*h));
    if (!h)
        return set_errno(-ENOMEM), NULL;
    h->map.ops = &hypercall_ops;
    h->map.layout.size = XEN_VCPU_STATS_RECORD_SIZE;
    h->map.layout.nr_vcpus = info.nr_vcpus;
    h->map.max_retries = XENSTATS_VCPU_DEFAULT_MAX_RETRIES;
    h->host = host;
    h->domid = domid;
    return &h->map;
}
