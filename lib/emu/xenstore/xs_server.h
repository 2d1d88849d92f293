/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The xenstore wire server of the emulated host: one listening UNIX socket
 * per domain at <dir>/<domid>; the socket a client connects on decides its
 * domain.  Everything runs on the emulator's event loop and never blocks:
 * a client that announces an oversized message, or lets more than
 * XS_SERVER_OUT_MAX bytes of replies and events pile up unread, is
 * disconnected; nothing a client does stalls the others.
 */
#ifndef XENSTATS_EMU_XS_SERVER_H
#define XENSTATS_EMU_XS_SERVER_H

#include <stdint.h>

#include "xs_store.h"

#define XS_SERVER_OUT_MAX (256 * 1024)    /* unread output per client */
#define XS_SERVER_CLIENTS_PER_DOMAIN 128  /* connections per domain */
#define XS_SERVER_CLIENTS_MAX 16384       /* connections in all: a host of 1000+ domains */
#define XS_SERVER_BURST 32                /* requests served per wake-up */

struct emu_loop;
struct xs_server;

/* dir is created if missing.  NULL and errno. */
struct xs_server *xs_server_new(struct xs_store *store, struct emu_loop *loop, const char *dir);
/* Closes every client and socket, removes the sockets and dir.  Accepts NULL. */
void xs_server_free(struct xs_server *srv);

/* Listen on <dir>/<domid>.  -EEXIST, -ENAMETOOLONG, or socket errors. */
int xs_server_add_domain(struct xs_server *srv, uint32_t domid);
/* Stop listening for domid and disconnect its clients. */
void xs_server_remove_domain(struct xs_server *srv, uint32_t domid);

/*
 * Domain domid is suspended: its clients stay connected but are not read
 * and hear nothing, kept under image (> 0) until xs_server_unpark();
 * peer(fd, arg) is told each one's socket.  Call before removing domid.
 */
/* peer(fd, arg) for each connection of domid, left as it is. */
void xs_server_peers(struct xs_server *srv, uint32_t domid, void (*peer)(int fd, void *arg), void *arg);
void xs_server_park(struct xs_server *srv, uint32_t domid, uint32_t image, void (*peer)(int fd, void *arg),
                    void *arg);
/* The clients kept under image act as domid from now on (xs_conn_move()),
 * every watch of theirs firing once; UINT32_MAX (or a failed move) closes them. */
void xs_server_unpark(struct xs_server *srv, uint32_t image, uint32_t domid);

#endif
