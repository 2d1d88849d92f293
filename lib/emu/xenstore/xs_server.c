/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu/loop.h"
#include "util/util.h"
#include "xs_server.h"
#include "xs_wire.h"

struct outbuf {
    struct outbuf *next;
    size_t len;
    char data[];
};

struct client {
    struct client *next;
    struct xs_server *srv;
    int fd;
    uint32_t domid;
    bool dead;     /* close at the next chance (not from inside the store) */
    bool polling_out;
    uint32_t parked; /* its domain is suspended: not read, hears nothing (0: no) */
    struct xs_conn *xc;
    struct outbuf *out, **out_tail;
    size_t out_off, out_bytes;
    struct xs_wire_in in;
};

struct listener {
    struct listener *next;
    struct xs_server *srv;
    uint32_t domid;
    int fd;
    unsigned int nclients;
    struct sockaddr_un sa;
};

struct xs_server {
    struct xs_store *store;
    struct emu_loop *loop;
    struct listener *listeners;
    struct client *clients;
    unsigned int nclients;
    char dir[];
};

static struct listener *find_listener(struct xs_server *srv, uint32_t domid)
{
    struct listener *l;

    for (l = srv->listeners; l; l = l->next)
        if (l->domid == domid)
            return l;
    return NULL;
}

static void client_close(struct client *c)
{
    struct xs_server *srv = c->srv;
    struct listener *l = find_listener(srv, c->domid);
    struct client **pp;

    for (pp = &srv->clients; *pp != c; pp = &(*pp)->next)
        ;
    *pp = c->next;
    srv->nclients--;
    if (l)
        l->nclients--;
    emu_loop_remove(srv->loop, c->fd);
    close(c->fd);
    xs_conn_free(c->xc);
    while (c->out) {
        struct outbuf *o = c->out;

        c->out = o->next;
        free(o);
    }
    free(c);
}

/* Ask the loop to call us back soon, to close or to write. */
static void want_events(struct client *c, bool out)
{
    if (out == c->polling_out)
        return;
    if (emu_loop_modify(c->srv->loop, c->fd, (c->parked ? 0 : EPOLLIN) | (out ? EPOLLOUT : 0)) == 0)
        c->polling_out = out;
}

/* Shutting the socket down makes epoll report it (EPOLLHUP) even when its
 * send buffer is full, so the client's own callback runs and frees it:
 * never free a client from inside the store's event delivery. */
static void mark_dead(struct client *c)
{
    c->dead = true;
    shutdown(c->fd, SHUT_RDWR);
}

/* Write what the socket takes now. */
static void flush(struct client *c)
{
    while (c->out && !c->dead) {
        struct outbuf *o = c->out;
        ssize_t n = send(c->fd, o->data + c->out_off, o->len - c->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n < 0) {
            mark_dead(c);
            return;
        }
        c->out_off += (size_t)n;
        c->out_bytes -= (size_t)n;
        if (c->out_off == o->len) {
            c->out = o->next;
            if (!c->out)
                c->out_tail = &c->out;
            c->out_off = 0;
            free(o);
        }
    }
    want_events(c, c->out != NULL || c->dead);
}

static void queue(struct client *c, const struct xsd_sockmsg *hdr, const void *body)
{
    size_t len = sizeof(*hdr) + hdr->len;
    struct outbuf *o;

    /* a suspended guest's kernel hears nothing of its old domain going */
    if (c->dead || c->parked)
        return;
    /* A client that does not read its replies and events is dropped
     * rather than letting it pin the emulator's memory. */
    if (c->out_bytes + len > XS_SERVER_OUT_MAX) {
        log_warning("xenstore: domain %u client not reading, disconnecting", c->domid);
        mark_dead(c);
        return;
    }
    o = malloc(sizeof(*o) + len);
    if (!o) {
        mark_dead(c);
        return;
    }
    o->next = NULL;
    o->len = len;
    memcpy(o->data, hdr, sizeof(*hdr));
    memcpy(o->data + sizeof(*hdr), body, hdr->len);
    *c->out_tail = o;
    c->out_tail = &o->next;
    c->out_bytes += len;
    flush(c);
}

static void emit_reply(void *data, const struct xsd_sockmsg *hdr, const void *body)
{
    queue(data, hdr, body);
}

static void emit_event(void *data, const char *path, const char *token)
{
    static char body[XENSTORE_PAYLOAD_MAX];
    struct xsd_sockmsg hdr;

    if (xs_wire_event(path, token, &hdr, body) == 0)
        queue(data, &hdr, body);
}

static void client_event(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct client *c = data;
    unsigned int served = 0;

    if (c->dead) {
        client_close(c);
        return;
    }
    if (events & EPOLLOUT)
        flush(c);
    if (c->parked && (events & (EPOLLHUP | EPOLLERR)))
        c->dead = true; /* the process went while its domain was suspended */
    if (c->parked || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        goto out;
    while (served < XS_SERVER_BURST && !c->dead) {
        size_t want = xs_wire_in_want(&c->in);
        ssize_t n = recv(fd, c->in.u.raw + c->in.used, want, MSG_DONTWAIT);
        int r;

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n <= 0) { /* EOF, maybe half a message: just forget it */
            client_close(c);
            return;
        }
        r = xs_wire_in_added(&c->in, (size_t)n);
        if (r < 0) {
            log_warning("xenstore: domain %u client sent a %u-byte message, disconnecting", c->domid,
                        c->in.u.hdr.len);
            client_close(c);
            return;
        }
        if (r == 0)
            continue;
        xs_wire_handle(c->xc, &c->in.u.hdr, c->in.u.raw + sizeof(struct xsd_sockmsg), emit_reply, c);
        xs_wire_in_reset(&c->in);
        served++;
    }
out:
    if (c->dead)
        client_close(c);
}

static void accept_one(struct emu_loop *loop, struct listener *l, int fd)
{
    struct xs_server *srv = l->srv;
    struct client *c;

    if (srv->nclients >= XS_SERVER_CLIENTS_MAX || l->nclients >= XS_SERVER_CLIENTS_PER_DOMAIN) {
        log_warning("xenstore: domain %u: too many connections, refusing one", l->domid);
        close(fd);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        goto fail;
    c->srv = srv;
    c->fd = fd;
    c->domid = l->domid;
    c->out_tail = &c->out;
    c->xc = xs_conn_new(srv->store, l->domid, emit_event, c);
    if (!c->xc)
        goto fail;
    if (emu_loop_add(loop, fd, EPOLLIN, client_event, c) < 0)
        goto fail;
    c->next = srv->clients;
    srv->clients = c;
    srv->nclients++;
    l->nclients++;
    return;
fail:
    if (c)
        xs_conn_free(c->xc);
    free(c);
    close(fd);
}

static void accept_clients(struct emu_loop *loop, int lfd, uint32_t events, void *data)
{
    unsigned int i;

    /* A few per wake-up: a connection storm must not starve the others. */
    for (i = 0; i < XS_SERVER_BURST; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
            return;
        accept_one(loop, data, fd);
    }
}

struct xs_server *xs_server_new(struct xs_store *store, struct emu_loop *loop, const char *dir)
{
    size_t l = strlen(dir);
    struct xs_server *srv;

    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return NULL;
    srv = calloc(1, sizeof(*srv) + l + 1);
    if (!srv) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(srv->dir, dir, l + 1);
    srv->store = store;
    srv->loop = loop;
    return srv;
}

static void listener_close(struct xs_server *srv, struct listener *l)
{
    struct listener **pp;

    for (pp = &srv->listeners; *pp != l; pp = &(*pp)->next)
        ;
    *pp = l->next;
    emu_loop_remove(srv->loop, l->fd);
    close(l->fd);
    unlink(l->sa.sun_path);
    free(l);
}

void xs_server_free(struct xs_server *srv)
{
    if (!srv)
        return;
    while (srv->clients)
        client_close(srv->clients);
    while (srv->listeners)
        listener_close(srv, srv->listeners);
    rmdir(srv->dir);
    free(srv);
}

int xs_server_add_domain(struct xs_server *srv, uint32_t domid)
{
    struct listener *l;
    int r;

    if (find_listener(srv, domid))
        return -EEXIST;
    l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->srv = srv;
    l->domid = domid;
    l->sa.sun_family = AF_UNIX;
    r = snprintf(l->sa.sun_path, sizeof(l->sa.sun_path), "%s/%u", srv->dir, domid);
    if (r < 0 || (size_t)r >= sizeof(l->sa.sun_path)) {
        free(l);
        return -ENAMETOOLONG;
    }
    unlink(l->sa.sun_path); /* left by an emulator that died */
    l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (l->fd < 0) {
        r = negative_errno();
        free(l);
        return r;
    }
    /* Every domain runs as the host's user; the socket only tells domains
     * apart, it is not a security boundary (docs/emulator.md). */
    if (bind(l->fd, (struct sockaddr *)&l->sa, sizeof(l->sa)) < 0 || chmod(l->sa.sun_path, 0600) < 0 ||
        listen(l->fd, 64) < 0) {
        r = negative_errno();
        goto fail;
    }
    r = emu_loop_add(srv->loop, l->fd, EPOLLIN, accept_clients, l);
    if (r < 0)
        goto fail;
    l->next = srv->listeners;
    srv->listeners = l;
    return 0;
fail:
    close(l->fd);
    unlink(l->sa.sun_path);
    free(l);
    return r;
}

void xs_server_remove_domain(struct xs_server *srv, uint32_t domid)
{
    struct listener *l = find_listener(srv, domid);
    struct client *c, *next;

    for (c = srv->clients; c; c = next) {
        next = c->next;
        if (c->domid == domid && !c->parked)
            client_close(c);
    }
    if (l)
        listener_close(srv, l);
}

static void set_polling(struct client *c)
{
    uint32_t events = (c->parked ? 0 : EPOLLIN) | (c->polling_out ? EPOLLOUT : 0);

    emu_loop_modify(c->srv->loop, c->fd, events);
}

void xs_server_peers(struct xs_server *srv, uint32_t domid, void (*peer)(int fd, void *arg), void *arg)
{
    struct client *c;

    for (c = srv->clients; c; c = c->next)
        if (c->domid == domid && !c->parked && !c->dead)
            peer(c->fd, arg);
}

void xs_server_park(struct xs_server *srv, uint32_t domid, uint32_t image, void (*peer)(int fd, void *arg),
                    void *arg)
{
    struct listener *l = find_listener(srv, domid);
    struct client *c;

    for (c = srv->clients; c && image; c = c->next) {
        if (c->domid != domid || c->parked || c->dead)
            continue;
        c->parked = image;
        if (l)
            l->nclients--;
        set_polling(c);
        if (peer)
            peer(c->fd, arg);
    }
}

void xs_server_unpark(struct xs_server *srv, uint32_t image, uint32_t domid)
{
    struct listener *l = domid == UINT32_MAX ? NULL : find_listener(srv, domid);
    struct client *c, *next;

    for (c = srv->clients; c; c = next) {
        next = c->next;
        if (c->parked != image || !image)
            continue;
        if (!l || xs_conn_move(c->xc, domid) < 0) {
            c->parked = 0; /* not counted on any listener any more */
            c->domid = UINT32_MAX;
            client_close(c);
            continue;
        }
        c->parked = 0;
        c->domid = domid;
        l->nclients++;
        set_polling(c);
        /* the resumed kernel registers its watches again: each fires once */
        xst_fire_all_watches(c->xc);
    }
}
