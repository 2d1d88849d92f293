/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Platform layer: the one way to call a platform op.  Each wrapper reaches
 * the backend's ops table and calls through, so a caller never spells out
 * p->backend->table->op nor checks for a missing op itself.  The contracts
 * are the ops' own, in platform.h.
 *
 * A missing op, its table NULL or the member NULL, is decided here once:
 *  - an op returning int returns -EOPNOTSUPP;
 *  - an op returning a pointer returns NULL with errno EOPNOTSUPP;
 *  - an op returning nothing is skipped;
 *  - the optional batch ops of event channels (*_many) do what their
 *    comment in platform.h says instead, through the single-port op, so
 *    a caller never needs to know which backend has them.
 *
 * Included by platform.h: include that.
 */
#ifndef XENSTATS_PLATFORM_OPS_H
#define XENSTATS_PLATFORM_OPS_H

#ifndef XENSTATS_PLATFORM_H
#error "include platform/platform.h, not platform_ops.h"
#endif

/* The backend: p->backend set and opened; 0 or -errno. */
static inline int platform_open(struct platform *p, const struct platform_backend *backend)
{
    p->backend = backend;
    return backend->open ? backend->open(p) : -EOPNOTSUPP;
}

static inline void platform_close(struct platform *p)
{
    if (p->backend->close)
        p->backend->close(p);
}

static inline enum xenstats_backend platform_kind(const struct platform *p)
{
    return p->backend->kind;
}

/* Domains. */

static inline int platform_domain_list(struct platform *p, struct xenstats_domain_info **ret_domains,
                                       size_t *ret_count)
{
    const struct platform_domain_ops *ops = p->backend->domain;

    return ops && ops->list ? ops->list(p, ret_domains, ret_count) : -EOPNOTSUPP;
}

static inline int platform_domain_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    const struct platform_domain_ops *ops = p->backend->domain;

    return ops && ops->info ? ops->info(p, domid, ret_info) : -EOPNOTSUPP;
}

static inline int platform_domain_vcpu_info(struct platform *p, uint32_t domid, uint32_t vcpu,
                                            struct platform_vcpu_info *ret_info)
{
    const struct platform_domain_ops *ops = p->backend->domain;

    return ops && ops->vcpu_info ? ops->vcpu_info(p, domid, vcpu, ret_info) : -EOPNOTSUPP;
}

/* The host. */

static inline int platform_host_info(struct platform *p, struct xenstats_host_info *ret_info)
{
    const struct platform_host_ops *ops = p->backend->host;

    return ops && ops->info ? ops->info(p, ret_info) : -EOPNOTSUPP;
}

static inline int platform_host_pcpu_idle(struct platform *p, uint64_t *idle_ns, size_t max, size_t *ret_count)
{
    const struct platform_host_ops *ops = p->backend->host;

    return ops && ops->pcpu_idle ? ops->pcpu_idle(p, idle_ns, max, ret_count) : -EOPNOTSUPP;
}

static inline int platform_host_devices(struct platform *p, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs,
                                        struct xenstats_vbd **ret_vbds, size_t *ret_nr_vbds)
{
    const struct platform_host_ops *ops = p->backend->host;

    return ops && ops->devices ? ops->devices(p, ret_vifs, ret_nr_vifs, ret_vbds, ret_nr_vbds) : -EOPNOTSUPP;
}

/* Foreign resources. */

static inline int platform_resource_map(struct platform *p, uint32_t domid, unsigned int type, unsigned int id,
                                        struct platform_resource *ret_resource)
{
    const struct platform_resource_ops *ops = p->backend->resource;

    return ops && ops->map ? ops->map(p, domid, type, id, ret_resource) : -EOPNOTSUPP;
}

static inline void platform_resource_unmap(struct platform *p, struct platform_resource *resource)
{
    const struct platform_resource_ops *ops = p->backend->resource;

    if (ops && ops->unmap)
        ops->unmap(p, resource);
}

static inline int platform_resource_clock_ns(struct platform *p, uint64_t *ret_now)
{
    const struct platform_resource_ops *ops = p->backend->resource;

    return ops && ops->clock_ns ? ops->clock_ns(p, ret_now) : -EOPNOTSUPP;
}

/* xenstore. */

static inline struct xs_handle *platform_store_open(struct platform *p, unsigned long xs_open_flags)
{
    const struct platform_store_ops *ops = p->backend->store;

    if (!ops || !ops->open) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return ops->open(p, xs_open_flags);
}

/*
 * Whether the backend has every primitive a guest interface is made of:
 * xenstore, grant tables and event channels.
 */
static inline bool platform_has_store_grant_evtchn(const struct platform *p)
{
    return p->backend->store && p->backend->grant && p->backend->evtchn;
}

/* Grant tables. */

static inline void *platform_grant_share_pages(struct platform *p, uint32_t domid, uint32_t count, uint32_t *refs,
                                               int writable)
{
    const struct platform_grant_ops *ops = p->backend->grant;

    if (!ops || !ops->share_pages) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return ops->share_pages(p, domid, count, refs, writable);
}

static inline int platform_grant_unshare(struct platform *p, void *addr, uint32_t count)
{
    const struct platform_grant_ops *ops = p->backend->grant;

    return ops && ops->unshare ? ops->unshare(p, addr, count) : -EOPNOTSUPP;
}

static inline void *platform_grant_map(struct platform *p, uint32_t domid, uint32_t count, const uint32_t *refs,
                                       int prot)
{
    const struct platform_grant_ops *ops = p->backend->grant;

    if (!ops || !ops->map) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return ops->map(p, domid, count, refs, prot);
}

static inline int platform_grant_unmap(struct platform *p, void *addr, uint32_t count)
{
    const struct platform_grant_ops *ops = p->backend->grant;

    return ops && ops->unmap ? ops->unmap(p, addr, count) : -EOPNOTSUPP;
}

/* Event channels: p is the platform the handle h was opened on. */

static inline struct platform_evtchn *platform_evtchn_open(struct platform *p)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    if (!ops || !ops->open) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return ops->open(p);
}

static inline void platform_evtchn_close(struct platform *p, struct platform_evtchn *h)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    if (ops && ops->close)
        ops->close(h);
}

static inline int platform_evtchn_fd(struct platform *p, struct platform_evtchn *h)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->fd ? ops->fd(h) : -EOPNOTSUPP;
}

static inline int platform_evtchn_fds(struct platform *p, struct platform_evtchn *h, int *ret_fds, size_t max)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->fds ? ops->fds(h, ret_fds, max) : -EOPNOTSUPP;
}

static inline int platform_evtchn_bind_unbound_port(struct platform *p, struct platform_evtchn *h,
                                                    uint32_t remote_domid)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->bind_unbound_port ? ops->bind_unbound_port(h, remote_domid) : -EOPNOTSUPP;
}

static inline int platform_evtchn_bind_interdomain(struct platform *p, struct platform_evtchn *h,
                                                   uint32_t remote_domid, uint32_t remote_port)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->bind_interdomain ? ops->bind_interdomain(h, remote_domid, remote_port) : -EOPNOTSUPP;
}

static inline int platform_evtchn_notify(struct platform *p, struct platform_evtchn *h, uint32_t port)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->notify ? ops->notify(h, port) : -EOPNOTSUPP;
}

/* Without notify_many: notify() for each port, and 0. */
static inline int platform_evtchn_notify_many(struct platform *p, struct platform_evtchn *h, const uint32_t *ports,
                                              size_t count, int *ret_results)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    if (ops && ops->notify_many)
        return ops->notify_many(h, ports, count, ret_results);
    for (size_t i = 0; i < count; i++)
        ret_results[i] = platform_evtchn_notify(p, h, ports[i]);
    return 0;
}

static inline int platform_evtchn_pending(struct platform *p, struct platform_evtchn *h)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->pending ? ops->pending(h) : -EOPNOTSUPP;
}

/*
 * Without pending_many: one pending(), so at most one port a call; the
 * caller calls again until -EAGAIN as it would with pending_many.
 */
static inline int platform_evtchn_pending_many(struct platform *p, struct platform_evtchn *h, uint32_t *ret_ports,
                                               size_t max)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;
    int port;

    if (ops && ops->pending_many)
        return ops->pending_many(h, ret_ports, max);
    if (!max)
        return -EINVAL;
    port = platform_evtchn_pending(p, h);
    if (port < 0)
        return port;
    ret_ports[0] = (uint32_t)port;
    return 1;
}

static inline int platform_evtchn_unmask(struct platform *p, struct platform_evtchn *h, uint32_t port)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->unmask ? ops->unmask(h, port) : -EOPNOTSUPP;
}

/* Without unmask_many: unmask() each port; the first error, or 0. */
static inline int platform_evtchn_unmask_many(struct platform *p, struct platform_evtchn *h, const uint32_t *ports,
                                              size_t count)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;
    int r = 0;

    if (ops && ops->unmask_many)
        return ops->unmask_many(h, ports, count);
    for (size_t i = 0; i < count; i++) {
        int one = platform_evtchn_unmask(p, h, ports[i]);

        if (one < 0 && r == 0)
            r = one;
    }
    return r;
}

static inline int platform_evtchn_unbind(struct platform *p, struct platform_evtchn *h, uint32_t port)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->unbind ? ops->unbind(h, port) : -EOPNOTSUPP;
}

static inline int platform_evtchn_status(struct platform *p, struct platform_evtchn *h, uint32_t port,
                                         enum platform_evtchn_state *ret_state)
{
    const struct platform_evtchn_ops *ops = p->backend->evtchn;

    return ops && ops->status ? ops->status(h, port, ret_state) : -EOPNOTSUPP;
}

#endif /* XENSTATS_PLATFORM_OPS_H */
