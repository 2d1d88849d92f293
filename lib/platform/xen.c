/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend: the platform ops on a real Xen host, straight onto Debian's
 * libxen* 4.17 (libxenctrl, loaded on first use by xen_ctrl.c,
 * libxenforeignmemory, libxenstore; domains in xen_domain.c, the host in
 * xen_host.c, grants and event channels in xen_grant.c and xen_evtchn.c).
 * See docs/xen-host.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <xenstore.h>

#include <xenstats/abi/vcpu_stats.h>

#include "util/util.h"
#include "xen_backend.h"

#define XEN_PAGE 4096u
/* Enough for 2^16 vCPUs of a 4 KiB stride: a header asking for more is
 * not believed, and the reader then finds the records outside the map. */
#define MAX_RESOURCE_FRAMES 65536u

/* ---- libxen* messages go to our log ------------------------------------ */

static void logger_vmessage(struct xentoollog_logger *logger, xentoollog_level level, int errnoval,
                            const char *context, const char *format, va_list al) __attribute__((format(printf, 5, 0)));
static void logger_vmessage(struct xentoollog_logger *logger, xentoollog_level level, int errnoval,
                            const char *context, const char *format, va_list al)
{
    char text[512];

    (void)logger;
    vsnprintf(text, sizeof(text), format, al);
    /* libxen* report every failed call as an error; the caller decides
     * whether it is one (EOPNOTSUPP from map_resource is expected). */
    if (level >= XTL_ERROR)
        log_debug("%s: %s%s%s", context ? context : "libxen", text, errnoval >= 0 ? ": " : "",
                  errnoval >= 0 ? strerror(errnoval) : "");
}

static void logger_destroy(struct xentoollog_logger *logger)
{
    (void)logger; /* embedded in struct xen */
}

xentoollog_logger *xen_logger(struct platform *p)
{
    return &xen_of(p)->logger.vtable;
}

xc_interface *xen_xc(struct platform *p, const struct xen_ctrl **ret_ctrl)
{
    const struct xen_ctrl *ctrl = xen_ctrl_load();
    struct xen *x = xen_of(p);
    xc_interface *xc;

    if (!ctrl)
        return NULL;
    pthread_mutex_lock(&x->lock);
    if (!x->xc) {
        x->xc = ctrl->interface_open(&x->logger.vtable, &x->logger.vtable, 0);
        x->ctrl = ctrl;
    }
    xc = x->xc;
    pthread_mutex_unlock(&x->lock);
    if (!xc) {
        if (!errno)
            errno = EACCES;
        return NULL;
    }
    *ret_ctrl = ctrl;
    return xc;
}

xencall_handle *xen_call(struct platform *p)
{
    struct xen *x = xen_of(p);
    xencall_handle *call;

    pthread_mutex_lock(&x->lock);
    if (!x->call)
        x->call = xencall_open(&x->logger.vtable, 0);
    call = x->call;
    pthread_mutex_unlock(&x->lock);
    if (!call && !errno)
        errno = EACCES;
    return call;
}

static xenforeignmemory_handle *xen_fmem(struct platform *p)
{
    struct xen *x = xen_of(p);
    xenforeignmemory_handle *fmem;

    pthread_mutex_lock(&x->lock);
    if (!x->fmem)
        x->fmem = xenforeignmemory_open(&x->logger.vtable, 0);
    fmem = x->fmem;
    pthread_mutex_unlock(&x->lock);
    if (!fmem && !errno)
        errno = EACCES;
    return fmem;
}

static struct xs_handle *xen_xs(struct platform *p)
{
    struct xen *x = xen_of(p);
    struct xs_handle *xs;

    pthread_mutex_lock(&x->lock);
    if (!x->xs)
        x->xs = xs_open(0);
    xs = x->xs;
    pthread_mutex_unlock(&x->lock);
    return xs;
}

struct xs_handle *xen_store(struct platform *p)
{
    return xen_xs(p);
}

/* ---- open / close ------------------------------------------------------- */

/*
 * Our domid: xenstored resolves the relative path "domid" in the caller's
 * home (/local/domain/<id>/domid, written by the toolstack, or by
 * xen-init-dom0 for dom0).  Without a store, a host with privcmd is most
 * likely dom0, but a guest can load privcmd too: say we guessed.
 */
static uint32_t find_self_domid(struct platform *p)
{
    struct xs_handle *xs = xen_xs(p);
    unsigned int len = 0;
    uint64_t domid;
    char *text;

    text = xs ? xs_read(xs, XBT_NULL, "domid", &len) : NULL;
    if (text && len < 16 && parse_u64(text, XENSTATS_DOMID_MAX, &domid) == 0) {
        free(text);
        return (uint32_t)domid;
    }
    free(text);
    log_debug("xen: cannot read our domid from xenstore; assuming the control domain (0)");
    return 0;
}

static int xen_open(struct platform *p)
{
    struct xen *x = calloc(1, sizeof(*x));

    if (!x)
        return -ENOMEM;
    pthread_mutex_init(&x->lock, NULL);
    backend_devices_cache_init(&x->devices);
    x->logger.vtable.vmessage = logger_vmessage;
    x->logger.vtable.destroy = logger_destroy;
    p->backend_data = x;
    p->self_domid = find_self_domid(p);
    return 0;
}

static void xen_close(struct platform *p)
{
    struct xen *x = xen_of(p);

    if (!x)
        return;
    xen_grant_release(x);
    if (x->xs)
        xs_close(x->xs);
    if (x->fmem)
        xenforeignmemory_close(x->fmem);
    if (x->call)
        xencall_close(x->call);
    if (x->xc)
        x->ctrl->interface_close(x->xc);
    backend_devices_cache_fini(&x->devices);
    pthread_mutex_destroy(&x->lock);
    free(x);
    p->backend_data = NULL;
}

/* ---- foreign resources ---------------------------------------------------- */

/*
 * Frames the vCPU statistics of a domain with nr_vcpus vCPUs need, from a
 * first frame's header; 0 when the header is not believable (the reader
 * rejects it, with the right error, from the single frame).
 */
static unsigned long stats_frames(const void *first, uint32_t nr_vcpus)
{
    const struct xen_vcpu_stats_header *h = first;
    uint64_t bytes;

    if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) != XEN_VCPU_STATS_MAGIC)
        return 0;
    bytes = (uint64_t)__atomic_load_n(&h->offset, __ATOMIC_RELAXED) +
            (uint64_t)nr_vcpus * __atomic_load_n(&h->stride, __ATOMIC_RELAXED);
    bytes = (bytes + XEN_PAGE - 1) / XEN_PAGE;
    return bytes && bytes <= MAX_RESOURCE_FRAMES ? (unsigned long)bytes : 0;
}

static int map_frames(xenforeignmemory_handle *fmem, uint32_t domid, unsigned int type, unsigned int id,
                      unsigned long frames, struct platform_resource *ret_resource)
{
    xenforeignmemory_resource_handle *fres;
    void *addr = NULL;

    fres = xenforeignmemory_map_resource(fmem, (domid_t)domid, type, id, 0, frames, &addr, PROT_READ, 0);
    if (!fres)
        return errno ? negative_errno() : -EIO;
    ret_resource->addr = addr;
    ret_resource->len = (size_t)frames * XEN_PAGE;
    ret_resource->backend_data = fres;
    return 0;
}

/*
 * xenforeignmemory_resource_size() is never asked: on Xen 4.17.7 it
 * succeeds with a garbage size for a type the hypervisor does not know.
 * The first frame is mapped instead (its error is the real answer:
 * EOPNOTSUPP up to 4.17, EINVAL from 4.18; see platform_resource_absent()),
 * and for the vCPU statistics its header says how many frames the
 * domain's records take.  Once the first frame is there, a refusal of the
 * whole is not "no such resource": the header claims frames the
 * hypervisor does not have (-ERANGE).
 */
static int xen_resource_map(struct platform *p, uint32_t domid, unsigned int type, unsigned int id,
                            struct platform_resource *ret_resource)
{
    xenforeignmemory_handle *fmem = xen_fmem(p);
    struct platform_resource first, whole;
    struct xenstats_domain_info info;
    unsigned long frames;
    uint32_t mapid;
    int r;

    if (!fmem)
        return negative_errno();
    /* Our own domain's frames are mapped as DOMID_SELF: Linux hands the
     * domid on to mmu_update as the frames' owner, and Xen refuses a
     * foreign owner that is the caller itself.  (An unpatched Xen refuses
     * both with EPERM; the vCPU fallback takes it from there.) */
    mapid = domid == p->self_domid ? DOMID_SELF : domid;
    r = map_frames(fmem, mapid, type, id, 1, &first);
    if (r < 0)
        return r;
    if (type != XEN_VCPU_STATS_RESOURCE_TYPE || id != XEN_VCPU_STATS_RESOURCE_ID ||
        xen_domain_info(p, domid, &info) < 0 || (frames = stats_frames(first.addr, info.nr_vcpus)) <= 1) {
        *ret_resource = first;
        return 0;
    }
    r = map_frames(fmem, mapid, type, id, frames, &whole);
    xenforeignmemory_unmap_resource(fmem, first.backend_data);
    if (r < 0)
        return platform_resource_absent(r) ? -ERANGE : r;
    *ret_resource = whole;
    return 0;
}

static void xen_resource_unmap(struct platform *p, struct platform_resource *resource)
{
    struct xen *x = xen_of(p);

    if (resource->backend_data && x->fmem)
        xenforeignmemory_unmap_resource(x->fmem, resource->backend_data);
    resource->backend_data = NULL;
    resource->addr = NULL;
}

/*
 * Xen system time (the hypervisor's NOW(), which stamps UPDATE_TIME) is
 * not readable from user space.  A PV kernel's clocksource *is* Xen system
 * time, so CLOCK_MONOTONIC_RAW runs at its rate, but from an offset set at
 * the kernel's boot.  For the hypercall fallback that offset cancels out:
 * its UPDATE_TIME is stamped with this same clock (lib/vcpu/hypercall.c).
 * For a hypervisor's region it does not: see docs/xen-host.md.
 */
static int xen_clock_ns(struct platform *p, uint64_t *ret_now)
{
    struct timespec ts;

    (void)p;
    if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) < 0)
        return negative_errno();
    *ret_now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    return 0;
}

/* ---- store ------------------------------------------------------------------ */

/* xenstored's socket in the domain that runs it, else /dev/xen/xenbus:
 * libxenstore's own choice. */
static struct xs_handle *xen_store_open(struct platform *p, unsigned long xs_open_flags)
{
    (void)p;
    return xs_open(xs_open_flags);
}

static const struct platform_resource_ops xen_resource_ops = {
    .map = xen_resource_map,
    .unmap = xen_resource_unmap,
    .clock_ns = xen_clock_ns,
};

static const struct platform_store_ops xen_store_ops = {
    .open = xen_store_open,
};

const struct platform_backend platform_backend_xen = {
    .name = "xen",
    .kind = XENSTATS_BACKEND_XEN,
    .open = xen_open,
    .close = xen_close,
    .domain = &xen_domain_ops,
    .host = &xen_host_ops,
    .resource = &xen_resource_ops,
    .store = &xen_store_ops,
    .grant = &xen_grant_ops,
    .evtchn = &xen_evtchn_ops,
};
