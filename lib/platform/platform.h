/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Platform layer: one ops table per Xen primitive, implemented by a backend
 * (emu: the emulated host; xen: libxen*).  Everything above this layer is
 * backend-agnostic.  Return values follow xenstats.h (0 or -errno), with the
 * error numbers the corresponding libxen* call gives on Xen.
 */
#ifndef XENSTATS_PLATFORM_H
#define XENSTATS_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include <xenstats/xenstats.h>

struct platform;

/* Domain list and information (libxenctrl's xc_domain_getinfolist). */
struct platform_domain_ops {
    int (*list)(struct platform *p, struct xenstats_domain_info **ret_domains, size_t *ret_count);
    int (*info)(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info);
};

/*
 * A mapped foreign resource (libxenforeignmemory's map_resource): read-only
 * view of `len` bytes, released with unmap().
 */
struct platform_resource {
    const void *addr;
    size_t len;
    void *backend_data;
};

struct platform_resource_ops {
    /*
     * Map resource (type, id) of domid read-only.  -EPERM when the caller
     * is not privileged over domid or domid is the caller itself (Xen
     * refuses acquire_resource on one's own domain), -ESRCH no domain,
     * -EOPNOTSUPP unknown resource type.
     */
    int (*map)(struct platform *p, uint32_t domid, unsigned int type, unsigned int id,
               struct platform_resource *ret_resource);
    void (*unmap)(struct platform *p, struct platform_resource *resource);
    /* The clock producers stamp UPDATE_TIME with, in ns. */
    int (*clock_ns)(struct platform *p, uint64_t *ret_now);
};

struct platform_backend {
    const char *name;
    enum xenstats_backend kind;
    int (*open)(struct platform *p);
    void (*close)(struct platform *p);
    const struct platform_domain_ops *domain;
    const struct platform_resource_ops *resource;
};

struct platform {
    const struct platform_backend *backend;
    uint32_t self_domid;
    void *backend_data;
};

extern const struct platform_backend platform_backend_emu;

/* struct xenstats_host is the public face of struct platform. */
struct xenstats_host {
    struct platform platform;
};

#endif /* XENSTATS_PLATFORM_H */
