/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals of the grant/event channel engine, shared with its transport. */
#ifndef XENSTATS_EMU_HYPER_PRIVATE_H
#define XENSTATS_EMU_HYPER_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/emu.h"
#include "hyper.h"

/* A granted memfd, shared by the entries that point into it. */
struct hy_memfd {
    int fd;
    uint32_t users; /* grant entries pointing here */
};

/* One connection's mappings of one grant entry. */
struct hy_mapping {
    struct hy_mapping *conn_prev, *conn_next; /* the mapping connection's list */
    struct hy_mapping *grant_next;            /* the entry's list of mappers */
    struct hy_conn *conn;
    struct hy_domain *granter;
    uint32_t ref;
    uint32_t count;
};

struct hy_grant {
    struct hy_memfd *mem; /* NULL: entry free */
    struct hy_conn *owner; /* NULL: unshared, kept only while still mapped */
    struct hy_mapping *mappers;
    uint32_t page;
    uint32_t grantee;
    uint32_t mapcount;
    bool writable;
};

struct hy_port {
    struct hy_conn *conn; /* the handle that bound it */
    struct hy_port *queue_next;
    uint32_t port;
    uint32_t remote_domid;
    uint32_t remote_port;
    enum emu_hc_evtchn_state state;
    bool pending; /* notified since last delivered */
    bool masked;  /* delivered, not unmasked yet */
    bool queued;  /* waiting for room in the event socket */
};

struct hy_domain {
    struct hy_domain *next;
    struct hyper *hy;
    uint32_t domid;
    struct hy_conn *conns;
    unsigned int nr_conns;
    uint32_t grants_used;
    uint32_t grant_cursor;
    uint32_t nr_memfds;
    int lfd; /* transport: the listening hypercall socket, or -1 */
    char path[108];
    struct hy_port **ports; /* nr_ports entries; port 0 is never used */
    uint32_t nr_ports;
    uint64_t stale_bugs; /* unbinds and closes of ports bound before a migration */
    struct hy_grant grants[HY_GRANT_ENTRIES];
};

struct hy_conn {
    struct hy_conn *next;
    struct hy_domain *dom;
    int fd;   /* the hypercall connection, or -1 */
    int evfd; /* emulator's end of the event socket, -1 before EVT_OPEN */
    bool ev_watched;
    struct hy_port *queue_head, *queue_tail;
    struct hy_mapping *mappings;
    uint32_t nr_mapped;
    uint32_t parked; /* the image keeping it while its domain is suspended, 0: none */
    /* ports and refs of a domain this connection was carried out of
     * (hyper_domain_park()): bitmaps, NULL until then */
    uint64_t *stale_ports;
    uint64_t *stale_refs;
};

struct hyper {
    struct emu_loop *loop;
    struct hy_domain *domains;
    unsigned int nr_conns;
    /* connections carried out of their domain, waiting for the next one
     * (no ports, no grants; in no list of domains) */
    struct hy_domain *limbo;
    uint64_t stale_bugs; /* every domain's, since the engine started */
    /* transport */
    struct hyper *next_registered;
    struct emu_host *host;
};

struct hy_domain *hyper_domain_find(struct hyper *hy, uint32_t domid);

#endif
