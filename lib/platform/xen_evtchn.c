/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend: event channels through libxenevtchn (/dev/xen/evtchn), one
 * device handle per open().  The device's fd is made non-blocking so that
 * pending() answers -EAGAIN instead of waiting, as the platform contract
 * says.  A port's state comes from EVTCHNOP_status, made through
 * libxencall: a guest's provider asks it when it withdraws a set, and
 * libxencall, unlike libxenctrl, has a stable ABI and is in every guest.
 */
#include <fcntl.h>
#include <string.h>

#include "util/util.h"
#include "xen_backend.h"

struct platform_evtchn {
    struct platform *platform;
    xenevtchn_handle *xce;
};

static void xen_evtchn_close(struct platform_evtchn *h)
{
    if (!h)
        return;
    /* The driver unbinds every port of the handle; peers see them go. */
    if (h->xce)
        xenevtchn_close(h->xce);
    free(h);
}

static struct platform_evtchn *xen_evtchn_open(struct platform *p)
{
    struct platform_evtchn *h = calloc(1, sizeof(*h));
    int fd, r;

    if (!h)
        return set_errno(-ENOMEM), NULL;
    h->platform = p;
    h->xce = xenevtchn_open(xen_logger(p), 0);
    if (!h->xce) {
        r = errno ? -errno : -ENOENT;
        goto fail;
    }
    fd = xenevtchn_fd(h->xce);
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
        r = negative_errno();
        goto fail;
    }
    return h;
fail:
    xen_evtchn_close(h);
    set_errno(r);
    return NULL;
}

static int xen_evtchn_fd(struct platform_evtchn *h)
{
    return xenevtchn_fd(h->xce);
}

static int port_or_error(int port)
{
    return port < 0 ? set_errno(errno ? -errno : -EIO) : port;
}

static int xen_bind_unbound_port(struct platform_evtchn *h, uint32_t remote_domid)
{
    return port_or_error(xenevtchn_bind_unbound_port(h->xce, remote_domid));
}

static int xen_bind_interdomain(struct platform_evtchn *h, uint32_t remote_domid, uint32_t remote_port)
{
    return port_or_error(xenevtchn_bind_interdomain(h->xce, remote_domid, remote_port));
}

static int xen_notify(struct platform_evtchn *h, uint32_t port)
{
    return xenevtchn_notify(h->xce, port) < 0 ? set_errno(errno ? -errno : -EIO) : 0;
}

static int xen_pending(struct platform_evtchn *h)
{
    int port = xenevtchn_pending(h->xce);

    if (port >= 0)
        return port;
    return set_errno(errno == EWOULDBLOCK ? -EAGAIN : errno ? -errno : -EIO);
}

static int xen_unmask(struct platform_evtchn *h, uint32_t port)
{
    return xenevtchn_unmask(h->xce, port) < 0 ? set_errno(errno ? -errno : -EIO) : 0;
}

static int xen_unbind(struct platform_evtchn *h, uint32_t port)
{
    return xenevtchn_unbind(h->xce, port) < 0 ? set_errno(errno ? -errno : -EIO) : 0;
}

static int xen_status(struct platform_evtchn *h, uint32_t port, enum platform_evtchn_state *ret_state)
{
    xencall_handle *call = xen_call(h->platform);
    evtchn_status_t *st;
    int r = 0;

    if (!call)
        return negative_errno();
    /* The hypervisor reads and writes the argument: a hypercall buffer. */
    st = xencall_alloc_buffer(call, sizeof(*st));
    if (!st)
        return negative_errno();
    memset(st, 0, sizeof(*st));
    st->dom = DOMID_SELF;
    st->port = port;
    if (xencall2(call, __HYPERVISOR_event_channel_op, EVTCHNOP_status, (uint64_t)(uintptr_t)st) < 0) {
        r = set_errno(errno ? -errno : -EIO);
        goto out;
    }
    switch (st->status) {
    case EVTCHNSTAT_unbound:
        *ret_state = PLATFORM_EVTCHN_UNBOUND;
        break;
    case EVTCHNSTAT_interdomain:
        *ret_state = PLATFORM_EVTCHN_INTERDOMAIN;
        break;
    default:
        /* closed, or a kernel port (virq, ipi, pirq): none of ours */
        *ret_state = PLATFORM_EVTCHN_CLOSED;
        break;
    }
out:
    xencall_free_buffer(call, st);
    return r;
}

/* libxenevtchn's handle is the one open file of /dev/xen/evtchn. */
static int xen_evtchn_fds(struct platform_evtchn *h, int *ret_fds, size_t max)
{
    if (max < 1)
        return -ENOBUFS;
    ret_fds[0] = xenevtchn_fd(h->xce);
    return 1;
}

const struct platform_evtchn_ops xen_evtchn_ops = {
    .open = xen_evtchn_open,
    .close = xen_evtchn_close,
    .fd = xen_evtchn_fd,
    .bind_unbound_port = xen_bind_unbound_port,
    .bind_interdomain = xen_bind_interdomain,
    .notify = xen_notify,
    .pending = xen_pending,
    .unmask = xen_unmask,
    .unbind = xen_unbind,
    .status = xen_status,
    .fds = xen_evtchn_fds,
};
