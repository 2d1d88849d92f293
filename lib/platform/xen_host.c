/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend: the hypervisor's figures of the host (xc_version,
 * xc_physinfo, xc_sched_id, xc_getcpuinfo), named and formatted as
 * `xl info` shows them, and the guests' backend devices from dom0's sysfs.
 */
#include <stdio.h>
#include <string.h>

#include "backend_devices.h"
#include "util/util.h"
#include "xen_backend.h"

#define XEN_PAGE_KIB 4u

/* libxl_scheduler_to_string(), which `xl info` prints as xen_scheduler. */
static const char *scheduler_name(int id)
{
    switch (id) {
    case XEN_SCHEDULER_CREDIT:
        return "credit";
    case XEN_SCHEDULER_CREDIT2:
        return "credit2";
    case XEN_SCHEDULER_ARINC653:
        return "arinc653";
    case XEN_SCHEDULER_RTDS:
        return "rtds";
    case XEN_SCHEDULER_NULL:
        return "null";
    case 4: /* XEN_SCHEDULER_SEDF, removed from Xen's headers */
        return "sedf";
    default:
        return "unknown";
    }
}

static int xen_host_info(struct platform *p, struct xenstats_host_info *ret_info)
{
    const struct xen_ctrl *ctrl;
    xc_interface *xc = xen_xc(p, &ctrl);
    struct xenstats_host_info info = {0};
    xen_extraversion_t extra;
    xc_physinfo_t phys;
    int version, sched;

    if (!xc)
        return negative_errno();
    /* `xl info`'s xen_version: major.minor then the extra version as is */
    version = ctrl->version(xc, XENVER_version, NULL);
    if (version < 0)
        return negative_errno();
    memset(extra, 0, sizeof(extra));
    if (ctrl->version(xc, XENVER_extraversion, &extra) < 0)
        return negative_errno();
    extra[sizeof(extra) - 1] = '\0';
    snprintf(info.xen_version, sizeof(info.xen_version), "%d.%d%s", version >> 16, version & 0xffff, extra);
    if (ctrl->sched_id(xc, &sched) < 0)
        return negative_errno();
    snprintf(info.scheduler, sizeof(info.scheduler), "%s", scheduler_name(sched));
    memset(&phys, 0, sizeof(phys));
    if (ctrl->physinfo(xc, &phys) < 0)
        return negative_errno();
    info.nr_pcpus = phys.nr_cpus;
    info.cpu_khz = phys.cpu_khz;
    info.total_memory_kib = (uint64_t)phys.total_pages * XEN_PAGE_KIB;
    info.free_memory_kib = (uint64_t)phys.free_pages * XEN_PAGE_KIB;
    info.scrub_memory_kib = (uint64_t)phys.scrub_pages * XEN_PAGE_KIB;
    *ret_info = info;
    return 0;
}

static int xen_pcpu_idle(struct platform *p, uint64_t *idle_ns, size_t max, size_t *ret_count)
{
    const struct xen_ctrl *ctrl;
    xc_interface *xc = xen_xc(p, &ctrl);
    xc_cpuinfo_t *cpus;
    int n = 0, i, want = max > 4096 ? 4096 : (int)max;

    if (!xc)
        return negative_errno();
    if (want == 0) {
        *ret_count = 0;
        return 0;
    }
    cpus = calloc((size_t)want, sizeof(*cpus));
    if (!cpus)
        return -ENOMEM;
    if (ctrl->getcpuinfo(xc, want, cpus, &n) < 0) {
        int r = negative_errno();

        free(cpus);
        return r;
    }
    for (i = 0; i < n && i < want; i++)
        idle_ns[i] = cpus[i].idletime;
    *ret_count = (size_t)i;
    free(cpus);
    return 0;
}

/* netback and blkback publish in dom0's own sysfs and procfs; names from its store. */
static int xen_devices(struct platform *p, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs,
                       struct xenstats_vbd **ret_vbds, size_t *ret_nr_vbds)
{
    static const struct backend_tree tree = {
        .root = "/sys", .net_dev = "/proc/net/dev", .netback = backend_netback_ethtool};
    struct xs_handle *xs = xen_store(p);

    /* without the store the names fall back to devids: not remembered then */
    return backend_devices_scan(&tree, xs, xs ? &xen_of(p)->devices : NULL, ret_vifs, ret_nr_vifs, ret_vbds,
                                ret_nr_vbds);
}

const struct platform_host_ops xen_host_ops = {
    .info = xen_host_info,
    .pcpu_idle = xen_pcpu_idle,
    .devices = xen_devices,
};
