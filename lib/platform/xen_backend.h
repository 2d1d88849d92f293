/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend internals shared by xen.c, xen_ctrl.c, xen_domain.c,
 * xen_host.c, xen_grant.c and xen_evtchn.c.  Every libxen* handle is
 * opened on first use: a guest has no privcmd device for libxenctrl or
 * foreign memory but still shares grants and binds event channels, so
 * nothing is opened that the caller never needs.  libxenctrl itself is loaded on first use
 * (xen_ctrl.c); its header is included for its types only.
 */
#ifndef XENSTATS_XEN_BACKEND_H
#define XENSTATS_XEN_BACKEND_H

#include <pthread.h>

#include <xencall.h>
#include <xenctrl.h>
#include <xenevtchn.h>
#include <xenforeignmemory.h>
#include <xengnttab.h>
#include <xentoollog.h>

#include "backend_devices.h"
#include "platform.h"

/* Routes libxen* messages to the library's log instead of stderr. */
struct xen_logger {
    xentoollog_logger vtable;
};

/* The libxenctrl calls the backend makes, resolved from the loaded library. */
struct xen_ctrl {
    typeof(xc_interface_open) *interface_open;
    typeof(xc_interface_close) *interface_close;
    typeof(xc_domain_getinfolist) *domain_getinfolist;
    typeof(xc_vcpu_getinfo) *vcpu_getinfo;
    typeof(xc_version) *version;
    typeof(xc_sched_id) *sched_id;
    typeof(xc_physinfo) *physinfo;
    typeof(xc_getcpuinfo) *getcpuinfo;
};

/*
 * libxenctrl's calls, loading the library on the first call (thread-safe,
 * once per process; never unloaded).  NULL and errno ELIBACC when it is
 * not installed, ELIBBAD when it lacks a call.
 */
const struct xen_ctrl *xen_ctrl_load(void);

struct xen_share;

struct xen {
    pthread_mutex_t lock; /* the lazy opens and the share list */
    struct xen_logger logger;
    const struct xen_ctrl *ctrl; /* set with xc */
    xc_interface *xc;
    xencall_handle *call; /* EVTCHNOP_status: the guest needs it too */
    xenforeignmemory_handle *fmem;
    struct xs_handle *xs; /* domain names */
    xengnttab_handle *gnttab;
    xengntshr_handle *gntshr;
    struct xen_share *shares;
    struct backend_devices_cache devices; /* vbd names: xenstore asked about new ones only */
};

static inline struct xen *xen_of(struct platform *p)
{
    return p->backend_data;
}

/*
 * The backend's libxenctrl handle and the calls to make on it, both
 * loaded or opened on first use; NULL and errno (ELIBACC: no libxenctrl).
 */
xc_interface *xen_xc(struct platform *p, const struct xen_ctrl **ret_ctrl);
/* The backend's libxencall handle (stable ABI), opened on first use; NULL and errno. */
xencall_handle *xen_call(struct platform *p);
xentoollog_logger *xen_logger(struct platform *p);
/* Release the grant handles and forget the shares (xen_grant.c). */
void xen_grant_release(struct xen *x);

/* One domain's figures (the domain ops' info, xen_domain.c): 0, or -ESRCH
 * and the errors of libxenctrl. */
int xen_domain_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info);
/* The backend's libxenstore handle (domain names, device names); NULL if none. */
struct xs_handle *xen_store(struct platform *p);

extern const struct platform_domain_ops xen_domain_ops;
extern const struct platform_host_ops xen_host_ops;
extern const struct platform_grant_ops xen_grant_ops;
extern const struct platform_evtchn_ops xen_evtchn_ops;

#endif
