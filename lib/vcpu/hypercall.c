/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vCPU statistics on a host without the resource: one hypercall per vCPU
 * (XEN_DOMCTL_getvcpuinfo through the backend's vcpu_info op), turned
 * into the same samples a region gives, so that readers do not care.
 * What the call cannot tell (time runnable, blocked or offline, state
 * changes) is INACTIVE: absent, never zero.
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
