/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Grant tables and event channels of the emulated host: the emulator acting
 * as the hypervisor.  Two layers:
 *
 *  - the engine (hyper_*): per-domain grant tables and port tables,
 *    connections as the emulator's view of a process's handles, and
 *    hyper_handle() executing one request; no sockets of its own apart from
 *    the event sockets it creates, so unit tests and the fuzzer drive it
 *    directly;
 *  - the transport (emu_hyper_register()): the per-domain hypercall
 *    sockets on the emulator's loop (protocol in emu/proto/hypercall.h).
 *
 * Everything runs on the emulator's single thread.
 */
#ifndef XENSTATS_EMU_HYPER_H
#define XENSTATS_EMU_HYPER_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/proto/hypercall.h"

struct emu_host;
struct emu_loop;
struct hyper;
struct hy_conn;

/* Per-domain grant table: entries 0..7 are reserved as on Xen. */
#define HY_GRANT_ENTRIES 4096u
#define HY_GRANT_RESERVED 8u
/* Per-domain event channel ports; port 0 is reserved as on Xen. */
#define HY_PORTS 1024u       /* a guest's ports, as xl's max_event_channels default */
#define HY_PORTS_DOM0 32768u /* the control domain's: it binds one per monitored set */
/* Files a domain's grants may keep open in the emulator: the pages of one
 * share_pages() call are one file, so this bounds the emulator's
 * descriptors per domain, not the pages (ENOSPC beyond). */
#define HY_MEMFDS_PER_DOMAIN 256u
/* Bounds of one connection. */
#define HY_CONNS_PER_DOMAIN 256u
#define HY_MAPS_PER_CONN 4096u        /* a guest connection's mapped pages */
#define HY_MAPS_PER_CONN_DOM0 262144u /* Domain-0 maps two pages per monitored set */

/*
 * Register the grant/event channel module with the emulated host: every
 * domain gets its hypercall socket when created.  Call once, after
 * host->loop is set and before the first domain is created.
 */
int emu_hyper_register(struct emu_host *host);
/* Stale-evtchn bugs (hyper_unpark()) of domid, or of every domain since
 * the emulator started (UINT32_MAX). */
uint64_t emu_hyper_stale_bugs(struct emu_host *host, uint32_t domid);
/* Grant entries in use in every domain (the leak checks). */
uint64_t emu_hyper_grants_in_use(struct emu_host *host);

/* ---- the engine ------------------------------------------------------ */

/* NULL and errno.  loop may be NULL (no event socket back-pressure). */
struct hyper *hyper_new(struct emu_loop *loop);
/* Closes every connection and forgets every domain; accepts NULL. */
void hyper_free(struct hyper *hy);

/* Domains known to the engine; -EEXIST, -ENOMEM. */
int hyper_domain_add(struct hyper *hy, uint32_t domid);
/* Closes the domain's connections (peers see their ports close), drops
 * its grants; other domains' mappings of them stay valid memory. */
void hyper_domain_remove(struct hyper *hy, uint32_t domid);

/* A connection of a process in domid.  fd is owned (closed with the
 * connection; -1 for none).  NULL and errno (ESRCH, EMFILE: too many). */
struct hy_conn *hyper_conn_new(struct hyper *hy, uint32_t domid, int fd);
/* Releases everything the connection held, as a process exit does. */
void hyper_conn_close(struct hy_conn *c);

/*
 * Carry the connections of domid out of it, as its domain is saved,
 * migrated or rebooted (before hyper_domain_remove()): their ports close
 * (peers see them unbound) and are remembered as stale, their grants are
 * remembered as stale refs (the domain's removal frees the entries), and
 * they wait under `image` (> 0), their requests unread, until
 * hyper_unpark().  peer(fd, arg) is told each connection's socket.
 */
/* peer(fd, arg) for each connection of domid, left as it is. */
void hyper_domain_peers(struct hyper *hy, uint32_t domid, void (*peer)(int fd, void *arg), void *arg);
void hyper_domain_park(struct hyper *hy, uint32_t domid, uint32_t image, void (*peer)(int fd, void *arg),
                       void *arg);
/*
 * Give the connections waiting under image to domid, which acts as their
 * domain from now on; UINT32_MAX closes them.  A stale port is dead:
 * notify returns 0 and delivers nothing, unbind returns 0 and counts a
 * stale-evtchn bug (a Linux 6.1 guest's kernel BUGs there), as does a
 * handle closed by its process while it holds one.  Unsharing a stale ref
 * succeeds and frees nothing.
 */
void hyper_unpark(struct hyper *hy, uint32_t image, uint32_t domid);
/* The process closed its connection (end of file): counts a stale-evtchn
 * bug if it held a stale port, then hyper_conn_close(). */
void hyper_conn_hangup(struct hy_conn *c);
/* Stale-evtchn bugs of domid (0 for an unknown domain), and of all. */
uint64_t hyper_stale_bugs(struct hyper *hy, uint32_t domid);
uint64_t hyper_stale_bugs_total(struct hyper *hy);

/*
 * Execute one raw request (len bytes, as received) with the nfds
 * descriptors that came with it (always consumed: kept or closed).
 * Fills *reply; descriptors to send with the reply go to out_fds
 * (*ret_nout of them, at most EMU_HC_BATCH) and must be closed by the
 * caller after sending.  Returns 0, or -EPROTO when the message is
 * malformed (the transport disconnects such a client; reply->result is
 * then -EINVAL as well).
 */
int hyper_handle(struct hy_conn *c, const void *msg, size_t len, int *fds, unsigned int nfds,
                 struct emu_hc_reply *reply, int *out_fds, unsigned int *ret_nout);

/* Validate a request's framing; 0 or -EPROTO.  Pure: the fuzz target's
 * first layer. */
int hyper_parse(const void *msg, size_t len, unsigned int nfds, struct emu_hc_request *ret_req);

/* For tests: grant entries in use in domid (-ESRCH), connections. */
int hyper_grants_in_use(struct hyper *hy, uint32_t domid);
unsigned int hyper_nr_conns(struct hyper *hy);

#endif
