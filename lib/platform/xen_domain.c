/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend: the domain ops.  The list and one domain's record from
 * getdomaininfo (libxenctrl, loaded on first use), their figures named and
 * formatted as `xl list` shows them, names from xenstore, and one vCPU's
 * record from getvcpuinfo.
 */
#include <stdio.h>
#include <string.h>
#include <xenstore.h>

#include "util/util.h"
#include "xen_backend.h"

#define XEN_PAGE_KIB 4u
/* Xen's max_pages is an unsigned int (4.17): its largest value, what a
 * domain without XEN_DOMCTL_max_mem has, means no limit. */
#define XEN_MAX_PAGES_UNLIMITED 0xffffffffULL
#define GETINFO_BATCH 256u

/* The figures of one getdomaininfo record beyond domid, name, vCPUs. */
static void fill_figures(const xc_domaininfo_t *di, struct xenstats_domain_info *ret_info)
{
    uint32_t flags = 0;

    if (di->flags & XEN_DOMINF_running)
        flags |= XENSTATS_DOMAIN_RUNNING;
    if (di->flags & XEN_DOMINF_blocked)
        flags |= XENSTATS_DOMAIN_BLOCKED;
    if (di->flags & XEN_DOMINF_paused)
        flags |= XENSTATS_DOMAIN_PAUSED;
    if (di->flags & XEN_DOMINF_dying)
        flags |= XENSTATS_DOMAIN_DYING;
    if (di->flags & XEN_DOMINF_shutdown) {
        flags |= XENSTATS_DOMAIN_SHUTDOWN;
        ret_info->shutdown_reason = (di->flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask;
        /* libxl's "crashed": shut down with SHUTDOWN_crash */
        if (ret_info->shutdown_reason == XENSTATS_SHUTDOWN_CRASH)
            flags |= XENSTATS_DOMAIN_CRASHED;
    }
    ret_info->flags = flags;
    memcpy(ret_info->uuid, di->handle, sizeof(ret_info->uuid));
    ret_info->nr_online_vcpus = di->nr_online_vcpus;
    ret_info->cpu_time_ns = di->cpu_time;
    ret_info->memory_kib = (uint64_t)di->tot_pages * XEN_PAGE_KIB;
    ret_info->max_memory_kib =
        di->max_pages >= XEN_MAX_PAGES_UNLIMITED ? XENSTATS_KIB_UNLIMITED : (uint64_t)di->max_pages * XEN_PAGE_KIB;
    ret_info->shared_kib = (uint64_t)di->shr_pages * XEN_PAGE_KIB;
    ret_info->outstanding_kib = (uint64_t)di->outstanding_pages * XEN_PAGE_KIB;
}

_Static_assert(sizeof(((xc_domaininfo_t *)0)->handle) == sizeof(((struct xenstats_domain_info *)0)->uuid),
               "the domain handle is the UUID");

static void domain_name(struct platform *p, uint32_t domid, char *buf, size_t len)
{
    struct xs_handle *xs = xen_store(p);
    char path[64];
    unsigned int n = 0;
    char *name = NULL;
    size_t i;

    snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
    if (xs)
        name = xs_read(xs, XBT_NULL, path, &n);
    /* The toolstack writes the name, but keep to printable bytes anyway:
     * it ends up in labels and terminals. */
    if (name && n > 0) {
        for (i = 0; i < n && i + 1 < len; i++)
            buf[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
        buf[i] = '\0';
    } else {
        snprintf(buf, len, domid == 0 ? "Domain-0" : "domain-%u", domid);
    }
    free(name);
}

static void fill_info(struct platform *p, const xc_domaininfo_t *di, struct xenstats_domain_info *ret_info)
{
    memset(ret_info, 0, sizeof(*ret_info));
    ret_info->domid = di->domain;
    ret_info->nr_vcpus = di->max_vcpu_id + 1;
    domain_name(p, di->domain, ret_info->name, sizeof(ret_info->name));
    fill_figures(di, ret_info);
}

int xen_domain_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    const struct xen_ctrl *ctrl;
    xc_interface *xc = xen_xc(p, &ctrl);
    xc_domaininfo_t di;
    int n;

    if (!xc)
        return negative_errno();
    if (domid >= DOMID_FIRST_RESERVED)
        return -ESRCH;
    /* getinfolist returns the first domain at or after domid. */
    n = ctrl->domain_getinfolist(xc, domid, 1, &di);
    if (n < 0)
        return negative_errno();
    if (n == 0 || di.domain != domid)
        return -ESRCH;
    fill_info(p, &di, ret_info);
    return 0;
}

static int xen_domain_list(struct platform *p, struct xenstats_domain_info **ret_domains, size_t *ret_count)
{
    struct xenstats_domain_info *list = NULL, *grown;
    const struct xen_ctrl *ctrl;
    xc_interface *xc = xen_xc(p, &ctrl);
    xc_domaininfo_t *batch = NULL;
    size_t count = 0;
    uint32_t next = 0;
    int n, i, r = 0;

    if (!xc)
        return negative_errno();
    batch = calloc(GETINFO_BATCH, sizeof(*batch));
    if (!batch)
        return -ENOMEM;
    /* Domains come sorted by domid, a batch at a time. */
    for (;;) {
        n = ctrl->domain_getinfolist(xc, next, GETINFO_BATCH, batch);
        if (n < 0) {
            r = negative_errno();
            goto out;
        }
        if (n == 0)
            break;
        grown = realloc(list, (count + (size_t)n) * sizeof(*list));
        if (!grown) {
            r = -ENOMEM;
            goto out;
        }
        list = grown;
        /* dying ones too: an operator sees a domain that does not go away
         * (its state says dying) until Xen lets go of it */
        for (i = 0; i < n; i++)
            fill_info(p, &batch[i], &list[count++]);
        next = batch[n - 1].domain + 1u;
        if ((unsigned int)n < GETINFO_BATCH || next >= DOMID_FIRST_RESERVED)
            break;
    }
    *ret_domains = list ? list : calloc(1, sizeof(*list));
    if (!*ret_domains) {
        r = -ENOMEM;
        goto out;
    }
    *ret_count = count;
    list = NULL;
out:
    free(list);
    free(batch);
    return r;
}

static int xen_vcpu_info(struct platform *p, uint32_t domid, uint32_t vcpu, struct platform_vcpu_info *ret_info)
{
    const struct xen_ctrl *ctrl;
    xc_interface *xc = xen_xc(p, &ctrl);
    xc_vcpuinfo_t vi;

    if (!xc)
        return negative_errno();
    memset(&vi, 0, sizeof(vi));
    if (ctrl->vcpu_getinfo(xc, domid, vcpu, &vi) < 0)
        return negative_errno();
    ret_info->cpu_time_ns = vi.cpu_time;
    ret_info->cpu = vi.cpu;
    ret_info->online = vi.online;
    ret_info->blocked = vi.blocked;
    ret_info->running = vi.running;
    return 0;
}

const struct platform_domain_ops xen_domain_ops = {
    .list = xen_domain_list,
    .info = xen_domain_info,
    .vcpu_info = xen_vcpu_info,
};
