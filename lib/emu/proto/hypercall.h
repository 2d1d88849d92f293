/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulated host's "hypercall" socket: how a process of an emulated
 * domain asks the emulator for grant table and event channel operations.
 *
 * Each domain has a SOCK_SEQPACKET socket <run dir>/hypercall/<domid>; the
 * socket a process connects on decides the domain the emulator treats it
 * as.  Every message is one struct emu_hc_request, exactly
 * EMU_HC_REQUEST_SIZE(count) bytes long, answered by exactly one struct
 * emu_hc_reply (always the full struct).  File descriptors travel as
 * SCM_RIGHTS: a memfd with EMU_HC_GNT_SHARE, the mapped memory with the
 * reply to EMU_HC_GNT_MAP, the event socket with the reply to
 * EMU_HC_EVT_OPEN.  docs/emulator.md (part 2) describes each
 * operation.  Part of the emulator's protocol (lib/emu/proto/), shared by
 * the server (lib/emu/hyper) and the client (the emu backend in
 * lib/platform), which include nothing of each other.
 */
#ifndef XENSTATS_EMU_PROTO_HYPERCALL_H
#define XENSTATS_EMU_PROTO_HYPERCALL_H

#include <stddef.h>
#include <stdint.h>

#define EMU_HYPERCALL_DIR "hypercall"

/* Grant pages are Xen's 4 KiB pages whatever the host's page size. */
#define EMU_HC_PAGE_SIZE 4096u
/* Refs carried by one share/unshare/map/unmap message; the client splits. */
#define EMU_HC_BATCH 64u
/* Xen's DOMID_SELF, accepted wherever a remote domain is named. */
#define EMU_HC_DOMID_SELF 0x7ff0u

enum emu_hc_op {
    EMU_HC_GNT_SHARE = 1,     /* domid=grantee, flags, first_page, count; 1 fd */
    EMU_HC_GNT_UNSHARE = 2,   /* count, refs */
    EMU_HC_GNT_MAP = 3,       /* domid=granter, flags, count, refs */
    EMU_HC_GNT_UNMAP = 4,     /* domid=granter, count, refs */
    EMU_HC_EVT_OPEN = 5,      /* makes the connection an event channel handle */
    EMU_HC_EVT_ALLOC_UNBOUND = 6,    /* domid=remote */
    EMU_HC_EVT_BIND_INTERDOMAIN = 7, /* domid=remote, port=remote port */
    EMU_HC_EVT_NOTIFY = 8,    /* port */
    EMU_HC_EVT_UNMASK = 9,    /* port */
    EMU_HC_EVT_UNBIND = 10,   /* port */
    EMU_HC_EVT_STATUS = 11,   /* port */
    /* NOTIFY and UNMASK of count ports (the refs): a round's requests in
     * a few messages instead of one each */
    EMU_HC_EVT_NOTIFY_MANY = 12, /* count, ports; a[i] the result of ports[i] */
    EMU_HC_EVT_UNMASK_MANY = 13, /* count, ports */
};

#define EMU_HC_WRITABLE 1u /* share: grantee may write; map: map writable */
/* unmask, unmask-many: one-way, no reply: unmask of a port not the handle's is ignored
 * as a write to /dev/xen/evtchn is, so there is nothing to answer; saves a
 * round trip to the emulator per delivered event.  unmap: likewise, as
 * munmap() of a gntdev mapping reports nothing of the hypervisor's; saves
 * the PV monitor a round trip per name page it checks. */
#define EMU_HC_NO_REPLY 2u

struct emu_hc_request {
    uint32_t op;
    uint32_t domid;
    uint32_t port;
    uint32_t flags;
    uint32_t first_page; /* share: first page of the range in the memfd */
    uint32_t count;      /* refs that follow (share: pages to grant) */
    uint32_t refs[EMU_HC_BATCH];
};

#define EMU_HC_REQUEST_HEADER offsetof(struct emu_hc_request, refs)
/* Size of a request carrying `count` refs.  Share carries none: the
 * emulator returns the refs it allocated. */
#define EMU_HC_REQUEST_SIZE(count) (EMU_HC_REQUEST_HEADER + (size_t)(count) * sizeof(uint32_t))

struct emu_hc_reply {
    int32_t result; /* >= 0 (a port for bind operations) or -errno */
    uint32_t count;
    /* share: the refs; map: index of each ref's fd among the passed fds;
     * status: state, remote domid, remote port */
    uint32_t a[EMU_HC_BATCH];
    /* map: page of each ref within its fd */
    uint32_t b[EMU_HC_BATCH];
};

/*
 * A port's state in the reply to EMU_HC_EVT_STATUS (a[0]).  The wire's own
 * values: the client translates them to its API's, so that the protocol
 * does not change when that API does.
 */
enum emu_hc_evtchn_state {
    EMU_HC_EVTCHN_CLOSED = 0,      /* no such port bound by the domain */
    EMU_HC_EVTCHN_UNBOUND = 1,     /* allocated, no peer yet, or peer closed */
    EMU_HC_EVTCHN_INTERDOMAIN = 2, /* connected to a peer */
};

/* Messages on the event socket (emulator to client): one uint32_t port. */

#endif
