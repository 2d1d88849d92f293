/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Platform layer: one ops table per Xen primitive, implemented by a backend
 * (emu: the emulated host; xen: libxen*).  Everything above this layer is
 * backend-agnostic.  Return values follow xenstats.h (0 or -errno), with the
 * error numbers the corresponding libxen* call gives on Xen.
 */
#ifndef XENSTATS_PLATFORM_H
#define XENSTATS_PLATFORM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xenstats/xenstats.h>

struct platform;

/* One vCPU as xc_vcpu_getinfo() tells it (XEN_DOMCTL_getvcpuinfo). */
struct platform_vcpu_info {
    uint64_t cpu_time_ns; /* time spent running, up to the call */
    uint32_t cpu;         /* pCPU it runs or last ran on */
    bool online, blocked, running;
};

/* Domain list and information (libxenctrl's xc_domain_getinfolist). */
struct platform_domain_ops {
    int (*list)(struct platform *p, struct xenstats_domain_info **ret_domains, size_t *ret_count);
    int (*info)(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info);
    /*
     * One vCPU through a hypercall, the fallback for hosts without the
     * vCPU statistics resource (lib/vcpu/hypercall.c).  NULL when the
     * backend has no such call.  -ESRCH no domain, -EINVAL/-ESRCH no such
     * vCPU, -EPERM not privileged.
     */
    int (*vcpu_info)(struct platform *p, uint32_t domid, uint32_t vcpu, struct platform_vcpu_info *ret_info);
};

/*
 * The hypervisor, the machine and the guests' backend devices in dom0.
 * Any op may be NULL: the public call then returns -EOPNOTSUPP.
 */
struct platform_host_ops {
    int (*info)(struct platform *p, struct xenstats_host_info *ret_info);
    int (*pcpu_idle)(struct platform *p, uint64_t *idle_ns, size_t max, size_t *ret_count);
    int (*devices)(struct platform *p, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs,
                   struct xenstats_vbd **ret_vbds, size_t *ret_nr_vbds);
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

/*
 * Whether map()'s error `r` means "this host has no such resource", as
 * each Xen answers an unknown type when the first frame is asked:
 * EOPNOTSUPP up to 4.17 (4.17.7's size query instead "succeeds" with a
 * garbage size, which is why no size is ever asked), EINVAL from 4.18.x,
 * 4.19.x and 4.20 (resource_max_frames() returns 0 for an unknown type),
 * ENOSYS from a hypervisor without XENMEM_acquire_resource, and ENOTTY
 * from a privcmd driver without the ioctl when libxenforeignmemory passes
 * it through.  lib/vcpu/reader.c turns all of them into -EOPNOTSUPP.
 */
static inline bool platform_resource_absent(int r)
{
    return r == -EOPNOTSUPP || r == -EINVAL || r == -ENOSYS || r == -ENOTTY;
}

struct platform_resource_ops {
    /*
     * Map resource (type, id) of domid read-only.  -EPERM when the caller
     * is not privileged over domid or domid is the caller itself (Xen
     * refuses acquire_resource on one's own domain), -ESRCH no domain.
     * An unknown resource type gets what the hypervisor answers, which
     * depends on its version (platform_resource_absent()).
     */
    int (*map)(struct platform *p, uint32_t domid, unsigned int type, unsigned int id,
               struct platform_resource *ret_resource);
    void (*unmap)(struct platform *p, struct platform_resource *resource);
    /* The clock producers stamp UPDATE_TIME with, in ns. */
    int (*clock_ns)(struct platform *p, uint64_t *ret_now);
};

/*
 * xenstore: access goes through Debian's libxenstore in every backend.  The
 * backend only says where the caller's store is: on Xen the default
 * (xenstored socket or /dev/xen/xenbus), on the emulated host the socket of
 * the caller's domain, which decides the domain the store sees.
 */
struct xs_handle;
struct platform_store_ops {
    /* An xs_open()ed handle for the caller's domain; NULL and errno. */
    struct xs_handle *(*open)(struct platform *p, unsigned long xs_open_flags);
};

/*
 * Grant tables: xengntshr (share) and xengnttab (map) semantics.
 * Error numbers are the ones those libraries give on Xen.  Pages are Xen's
 * 4 KiB pages.  Safe to call from several threads.
 */
struct platform_grant_ops {
    /*
     * Share `count` fresh zeroed pages with `domid`, writable by the grantee
     * iff `writable`.  Fills refs[count]; returns the caller's (always
     * writable) mapping of the pages, or NULL and errno (ENOSPC: grant
     * table full).  As on Xen the grantee need not exist yet.
     */
    void *(*share_pages)(struct platform *p, uint32_t domid, uint32_t count, uint32_t *refs, int writable);
    /*
     * Revoke and unmap pages from share_pages() (any page range of one
     * share).  A page the grantee still maps stays in use, and its ref
     * taken, until the grantee unmaps it (gntalloc's deferred release);
     * see docs/emulator.md (part 2).  -EINVAL: not a shared range.
     */
    int (*unshare)(struct platform *p, void *addr, uint32_t count);
    /*
     * Map `count` grants of `domid` contiguously, PROT_READ or
     * PROT_READ|PROT_WRITE.  NULL and errno: EINVAL for every refused
     * grant, as gntdev reports them (no such domain, bad or free ref, ref
     * granted to another domain, write wanted on a read-only grant);
     * ENOMEM over the emulator's per-handle limit of mapped pages.
     */
    void *(*map)(struct platform *p, uint32_t domid, uint32_t count, const uint32_t *refs, int prot);
    /* Unmap exactly an (addr, count) that map() returned; -EINVAL else. */
    int (*unmap)(struct platform *p, void *addr, uint32_t count);
};

/* Event channels: xenevtchn semantics, one handle per open(). */
struct platform_evtchn;
enum platform_evtchn_state {
    PLATFORM_EVTCHN_CLOSED = 0,      /* no such port bound here */
    PLATFORM_EVTCHN_UNBOUND = 1,     /* allocated, no peer yet, or peer closed */
    PLATFORM_EVTCHN_INTERDOMAIN = 2, /* connected to a peer */
};
struct platform_evtchn_ops {
    struct platform_evtchn *(*open)(struct platform *p); /* NULL and errno */
    void (*close)(struct platform_evtchn *h);            /* accepts NULL */
    int (*fd)(struct platform_evtchn *h);                /* readable when an event is pending */
    /*
     * Return a local port (>= 0) or -errno: -ENOSPC no free port;
     * bind_interdomain: -ESRCH no such domain, -EINVAL remote port not
     * unbound for the caller's domain.  A freshly bound interdomain port
     * is pending at once (Xen's guard against lost notifications).
     */
    int (*bind_unbound_port)(struct platform_evtchn *h, uint32_t remote_domid);
    int (*bind_interdomain)(struct platform_evtchn *h, uint32_t remote_domid, uint32_t remote_port);
    /* -ENOTCONN: not a port of this handle; to an unbound port: dropped, 0. */
    int (*notify)(struct platform_evtchn *h, uint32_t port);
    /*
     * Optional (NULL: call notify() for each): notify every port of
     * ports[count], each result in ret_results[]; returns 0, or -errno when
     * the handle itself failed.  Lets a monitor of thousands of sets send
     * a round of requests without one round trip each.
     */
    int (*notify_many)(struct platform_evtchn *h, const uint32_t *ports, size_t count, int *ret_results);
    /*
     * Next pending port, masked until unmask(); -EAGAIN when none.
     * Notifications while masked coalesce into one delivery at unmask().
     */
    int (*pending)(struct platform_evtchn *h);
    /*
     * Optional (NULL: its wrapper takes one port a call from pending(),
     * so the caller's loop until -EAGAIN is the same): up to `max` pending
     * ports into ret_ports[], each masked as by pending(); returns how many
     * (> 0), -EAGAIN when none, or -errno as pending().  One system call
     * for a round's thousands of answers rather than one each.
     */
    int (*pending_many)(struct platform_evtchn *h, uint32_t *ret_ports, size_t max);
    int (*unmask)(struct platform_evtchn *h, uint32_t port); /* other ports: ignored */
    /* Optional (NULL: unmask() each): unmask every port of ports[count]. */
    int (*unmask_many)(struct platform_evtchn *h, const uint32_t *ports, size_t count);
    int (*unbind)(struct platform_evtchn *h, uint32_t port); /* -ENOTCONN as notify */
    /*
     * State of a local port of the caller's domain, as EVTCHNOP_status
     * tells it (-EINVAL beyond the domain's ports).  When the peer closes
     * its end the port goes back to UNBOUND; no event announces it.
     */
    int (*status)(struct platform_evtchn *h, uint32_t port, enum platform_evtchn_state *ret_state);
    /*
     * Every fd the handle is made of, into ret_fds[max]; returns how many.
     * A handle whose ports went stale in a resume must never be closed (a
     * Linux guest's kernel BUGs on it), so a process that exits hands
     * exactly these fds to a process that keeps them (lib/pv/provider.c).
     */
    int (*fds)(struct platform_evtchn *h, int *ret_fds, size_t max);
};

struct platform_backend {
    const char *name;
    enum xenstats_backend kind;
    int (*open)(struct platform *p);
    void (*close)(struct platform *p);
    const struct platform_domain_ops *domain;
    const struct platform_host_ops *host;       /* NULL: no host figures */
    const struct platform_resource_ops *resource;
    /* Both backends have all three; a test double may leave them NULL,
     * and the PV provider and monitor then fail with ENOTSUP. */
    const struct platform_store_ops *store;
    const struct platform_grant_ops *grant;
    const struct platform_evtchn_ops *evtchn;
};

struct platform {
    const struct platform_backend *backend;
    uint32_t self_domid;
    void *backend_data;
    void *grant_data; /* the backend's grant state, made on first use */
};

extern const struct platform_backend platform_backend_emu;
extern const struct platform_backend platform_backend_xen;

/* struct xenstats_host is the public face of struct platform. */
struct xenstats_host {
    struct platform platform;
    /*
     * Producer clock - backend clock, learned from the regions read (a lower
     * bound: every UPDATE_TIME seen was stamped before any later clock
     * reading).  0 where both are one clock (the emulated host); on Xen,
     * the time Xen ran before dom0's kernel started CLOCK_MONOTONIC_RAW.
     */
    int64_t region_clock_offset;
    struct xs_handle *xs; /* xenstats_host_read_domain_key()'s, opened on first use */
};

/* Every call of an op goes through its wrapper there. */
#include "platform_ops.h"

#endif /* XENSTATS_PLATFORM_H */
