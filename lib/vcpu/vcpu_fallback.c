/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vCPU statistics on hosts without XENMEM_resource_stats_table: the reader
 * turns every stock Xen's refusal (EOPNOTSUPP up to 4.17, EINVAL from
 * 4.18, ENOSYS, ENOTTY: platform_resource_absent()) into EOPNOTSUPP
 * (xenforeignmemory_resource_size() is not asked: it lies on 4.17.7), and
 * the tools fall back to one xc_vcpu_getinfo() per vCPU.  The words for
 * every error of opening are here too, so that the tools say the same.
 */
#include <errno.h>
#include <stdbool.h>

#include "util/util.h"
#include "vcpu_fallback.h"

struct xenstats_vcpu_map *tool_vcpu_map_open(struct xenstats_host *host, uint32_t domid)
{
    static bool said_unsupported, said_self;
    struct xenstats_vcpu_map *map;
    bool self;
    int err;

    map = xenstats_vcpu_map_open(host, domid);
    if (map)
        return map;
    err = errno;
    /* Our own domain's table is asked for as DOMID_SELF: a hypervisor
     * without the series refuses that with ESRCH, an older series with
     * EPERM, a patched Xen that lets only the hardware domain map its own
     * table with EPERM too.  Whatever the refusal, the hypercall still
     * gives our own vCPUs' running time, as xentop shows it. */
    self = domid == xenstats_host_self_domid(host) && xenstats_host_backend(host) == XENSTATS_BACKEND_XEN;
    if (err != EOPNOTSUPP && !self) {
        errno = err;
        return NULL;
    }
    map = xenstats_vcpu_map_open_hypercall(host, domid);
    if (!map) {
        /* the emulated host has no such call: keep the region's answer */
        errno = err;
        return NULL;
    }
    if (err == EOPNOTSUPP && !said_unsupported) {
        log_warning("this host does not provide vCPU statistics (XENMEM_resource_stats_table unsupported): "
                    "falling back to xc_vcpu_getinfo(), running time and state only");
        said_unsupported = true;
    } else if (self && !said_self) {
        log_info("domain %u is this domain: its vCPU statistics come from xc_vcpu_getinfo()", domid);
        said_self = true;
    }
    return map;
}

const char *tool_vcpu_open_error(int err)
{
    switch (err) {
    case -EOPNOTSUPP:
        return "the host does not provide vCPU statistics for it (XENMEM_resource_stats_table unsupported)";
    case -EPERM:
    case -EACCES:
        return "permission denied (only the control domain may map another domain's vCPU statistics, "
               "and not its own)";
    case -EBADMSG:
        return "malformed vCPU statistics region: bad magic";
    case -EINVAL:
        return "malformed vCPU statistics region: inconsistent header";
    case -ERANGE:
        return "malformed vCPU statistics region: records beyond the mapping";
    default:
        return xenstats_strerror(err);
    }
}
