/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grant table and event channel engine.  Semantics and error numbers
 * are those a Linux guest sees through libxengntshr (gntalloc),
 * libxengnttab (gntdev) and libxenevtchn (/dev/xen/evtchn) on Xen; the
 * places where the emulation differs are in docs/emulator.md (part 2).
 * Every request is hostile until parsed: sizes are exact, counts bounded,
 * descriptors only where an operation takes one.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/loop.h"
#include "hyper_private.h"
#include "util/util.h"

#define SEALS_REQUIRED (F_SEAL_SHRINK | F_SEAL_SEAL)
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
#define SEALS_REFUSED (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)

struct hyper *hyper_new(struct emu_loop *loop)
{
    struct hyper *hy = calloc(1, sizeof(*hy));

    if (!hy) {
        errno = ENOMEM;
        return NULL;
    }
    hy->loop = loop;
    return hy;
}

static void domain_free(struct hy_domain *d);

void hyper_free(struct hyper *hy)
{
    if (!hy)
        return;
    while (hy->domains)
        hyper_domain_remove(hy, hy->domains->domid);
    if (hy->limbo) {
        while (hy->limbo->conns)
            hyper_conn_close(hy->limbo->conns);
        domain_free(hy->limbo);
    }
    free(hy);
}

struct hy_domain *hyper_domain_find(struct hyper *hy, uint32_t domid)
{
    struct hy_domain *d;

    for (d = hy->domains; d; d = d->next)
        if (d->domid == domid)
            return d;
    return NULL;
}

static struct hy_domain *domain_new(struct hyper *hy, uint32_t domid, uint32_t nr_ports)
{
    struct hy_domain *d = calloc(1, sizeof(*d));

    if (!d)
        return NULL;
    d->nr_ports = nr_ports;
    d->ports = calloc(d->nr_ports, sizeof(*d->ports));
    if (!d->ports) {
        free(d);
        return NULL;
    }
    d->hy = hy;
    d->domid = domid;
    d->lfd = -1;
    d->grant_cursor = HY_GRANT_RESERVED;
    return d;
}

static void domain_free(struct hy_domain *d)
{
    free(d->ports);
    free(d);
}

int hyper_domain_add(struct hyper *hy, uint32_t domid)
{
    struct hy_domain *d;

    if (hyper_domain_find(hy, domid))
        return -EEXIST;
    d = domain_new(hy, domid, domid == 0 ? HY_PORTS_DOM0 : HY_PORTS);
    if (!d)
        return -ENOMEM;
    d->next = hy->domains;
    hy->domains = d;
    return 0;
}

/* ---- what a connection keeps of the domain it was carried out of ------- */

static bool bit_test(const uint64_t *map, uint32_t bit, uint32_t nbits)
{
    return map && bit < nbits && (map[bit / 64] >> (bit % 64) & 1);
}

static void bit_clear(uint64_t *map, uint32_t bit, uint32_t nbits)
{
    if (map && bit < nbits)
        map[bit / 64] &= ~(1ULL << (bit % 64));
}

/* Set a bit, making the map on first use; false when out of memory (the
 * port or ref is then simply forgotten, as if never bound). */
static bool bit_set(uint64_t **map, uint32_t bit, uint32_t nbits)
{
    if (!*map && !(*map = calloc((nbits + 63) / 64, sizeof(**map))))
        return false;
    (*map)[bit / 64] |= 1ULL << (bit % 64);
    return true;
}

static bool any_bit(const uint64_t *map, uint32_t nbits, uint32_t *ret_bit)
{
    uint32_t i;

    for (i = 0; map && i < nbits; i++) {
        if (bit_test(map, i, nbits)) {
            *ret_bit = i;
            return true;
        }
    }
    return false;
}

static bool stale_port(const struct hy_conn *c, uint32_t port)
{
    return bit_test(c->stale_ports, port, HY_PORTS);
}

static bool stale_ref(const struct hy_conn *c, uint32_t ref)
{
    return bit_test(c->stale_refs, ref, HY_GRANT_ENTRIES);
}

/* What the Debian 6.1 guest kernel does here is `kernel BUG at
 * drivers/xen/evtchn.c:422` (its port-to-irq mapping did not survive the
 * resume); the emulator carries on, and counts it so tests can insist on 0. */
static void stale_bug(struct hy_conn *c, const char *what, uint32_t port)
{
    c->dom->stale_bugs++;
    c->dom->hy->stale_bugs++;
    log_warning("domain %u: %s event channel %u bound before the migration: a Linux 6.1 guest hits kernel BUG "
                "at drivers/xen/evtchn.c:422 here",
                c->dom->domid, what, port);
}

/* ---- grants ---------------------------------------------------------- */

static void memfd_put(struct hy_domain *d, struct hy_memfd *m)
{
    if (m && --m->users == 0) {
        close(m->fd);
        free(m);
        d->nr_memfds--;
    }
}

static void grant_free(struct hy_domain *d, struct hy_grant *g)
{
    memfd_put(d, g->mem);
    memset(g, 0, sizeof(*g));
    d->grants_used--;
}

/*
 * The granter gives the page up.  As with gntalloc on Xen, an entry still
 * mapped by the grantee stays in use (and mappable) until the last mapping
 * goes; only then is the ref free again.
 */
static void grant_revoke(struct hy_domain *d, struct hy_grant *g)
{
    g->owner = NULL;
    if (g->mapcount == 0)
        grant_free(d, g);
}

static void mapping_unlink_conn(struct hy_mapping *m)
{
    if (m->conn_prev)
        m->conn_prev->conn_next = m->conn_next;
    else
        m->conn->mappings = m->conn_next;
    if (m->conn_next)
        m->conn_next->conn_prev = m->conn_prev;
    m->conn->nr_mapped -= m->count;
}

static void mapping_unlink_grant(struct hy_grant *g, struct hy_mapping *m)
{
    struct hy_mapping **pp;

    for (pp = &g->mappers; *pp; pp = &(*pp)->grant_next) {
        if (*pp == m) {
            *pp = m->grant_next;
            break;
        }
    }
    g->mapcount -= m->count;
}

static struct hy_mapping *mapping_find(struct hy_grant *g, struct hy_conn *c)
{
    struct hy_mapping *m;

    for (m = g->mappers; m; m = m->grant_next)
        if (m->conn == c)
            return m;
    return NULL;
}

/* Drop one mapping object entirely (its connection closed or unmapped). */
static void mapping_release(struct hy_mapping *m)
{
    struct hy_domain *d = m->granter;
    struct hy_grant *g = &d->grants[m->ref];

    mapping_unlink_conn(m);
    mapping_unlink_grant(g, m);
    if (!g->owner && g->mapcount == 0)
        grant_free(d, g);
    free(m);
}

static int check_memfd(int fd, uint64_t need)
{
    struct stat st;
    int seals;

    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return -EBADF;
    /* Only a sealed memfd cannot shrink under a mapping (SIGBUS in the
     * grantee) or gain a write seal that would break writable maps. */
    seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & SEALS_REQUIRED) != SEALS_REQUIRED || (seals & SEALS_REFUSED))
        return -EBADF;
    if ((uint64_t)st.st_size < need)
        return -EINVAL;
    /* A writable grant must be writable through this very file. */
    if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR)
        return -EBADF;
    return 0;
}

static int gnt_share(struct hy_conn *c, const struct emu_hc_request *req, int memfd, struct emu_hc_reply *reply)
{
    struct hy_domain *d = c->dom;
    struct hy_memfd *m;
    uint32_t i, ref;
    int r;

    if (req->count == 0 || req->domid > XENSTATS_DOMID_MAX || req->flags & ~EMU_HC_WRITABLE)
        return -EINVAL;
    r = check_memfd(memfd, ((uint64_t)req->first_page + req->count) * EMU_HC_PAGE_SIZE);
    if (r < 0)
        return r;
    if (HY_GRANT_ENTRIES - HY_GRANT_RESERVED - d->grants_used < req->count || d->nr_memfds >= HY_MEMFDS_PER_DOMAIN)
        return -ENOSPC;
    /* This connection's stale refs are not handed out to it again, so an
     * unshare of one can never end a new grant; count what is left. */
    if (c->stale_refs) {
        uint32_t usable = 0;

        for (ref = HY_GRANT_RESERVED; ref < HY_GRANT_ENTRIES && usable < req->count; ref++)
            usable += !d->grants[ref].mem && !stale_ref(c, ref);
        if (usable < req->count)
            return -ENOSPC;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    m->fd = memfd;
    d->nr_memfds++;
    /* Allocate round-robin so a stale ref is unlikely to name a new page. */
    for (i = 0, ref = d->grant_cursor; i < req->count; ref++) {
        struct hy_grant *g;

        if (ref >= HY_GRANT_ENTRIES)
            ref = HY_GRANT_RESERVED;
        g = &d->grants[ref];
        if (g->mem || stale_ref(c, ref))
            continue;
        g->mem = m;
        g->owner = c;
        g->page = req->first_page + i;
        g->grantee = req->domid;
        g->writable = req->flags & EMU_HC_WRITABLE;
        m->users++;
        d->grants_used++;
        reply->a[i++] = ref;
    }
    d->grant_cursor = ref;
    reply->count = req->count;
    return 0;
}

static int gnt_unshare(struct hy_conn *c, const struct emu_hc_request *req)
{
    struct hy_domain *d = c->dom;
    uint32_t i;

    for (i = 0; i < req->count; i++)
        if (req->refs[i] >= HY_GRANT_ENTRIES || (d->grants[req->refs[i]].owner != c && !stale_ref(c, req->refs[i])))
            return -EINVAL;
    for (i = 0; i < req->count; i++) {
        struct hy_grant *g = &d->grants[req->refs[i]];

        /* a page shared before the migration: its grant went with the
         * old domain; gntalloc's munmap of it just succeeds */
        if (stale_ref(c, req->refs[i]))
            bit_clear(c->stale_refs, req->refs[i], HY_GRANT_ENTRIES);
        else if (g->owner == c) /* a ref listed twice */
            grant_revoke(d, g);
    }
    return 0;
}

/* An fd to hand to the grantee: the memfd itself, or a read-only reopening
 * through which no PROT_WRITE mapping can be made. */
static int grantee_fd(struct hy_memfd *m, bool writable)
{
    char path[64];
    int fd;

    if (writable)
        return m->fd;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", m->fd);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? negative_errno() : fd;
}

static int gnt_map(struct hy_conn *c, const struct emu_hc_request *req, struct emu_hc_reply *reply, int *out_fds,
                   unsigned int *ret_nout)
{
    struct hy_memfd *sent[EMU_HC_BATCH];
    bool writable = req->flags & EMU_HC_WRITABLE;
    struct hy_domain *gd;
    unsigned int nout = 0, j;
    uint32_t i;
    int r;

    if (req->flags & ~EMU_HC_WRITABLE)
        return -EINVAL;
    /* gntdev turns every failed map (bad domain, bad ref, not the grantee,
     * write to a read-only grant) into EINVAL. */
    gd = hyper_domain_find(c->dom->hy, req->domid == EMU_HC_DOMID_SELF ? c->dom->domid : req->domid);
    if (!gd)
        return -EINVAL;
    for (i = 0; i < req->count; i++) {
        uint32_t ref = req->refs[i];
        struct hy_grant *g = ref < HY_GRANT_ENTRIES ? &gd->grants[ref] : NULL;

        if (!g || !g->mem || g->grantee != c->dom->domid || (writable && !g->writable))
            return -EINVAL;
    }
    if (c->nr_mapped + req->count > (c->dom->domid == 0 ? HY_MAPS_PER_CONN_DOM0 : HY_MAPS_PER_CONN))
        return -ENOMEM;
    for (i = 0; i < req->count; i++) {
        struct hy_grant *g = &gd->grants[req->refs[i]];

        for (j = 0; j < nout && sent[j] != g->mem; j++)
            ;
        if (j == nout) {
            r = grantee_fd(g->mem, writable);
            if (r < 0)
                goto fail;
            sent[nout] = g->mem;
            /* Writable: the memfd itself, which the engine keeps. */
            out_fds[nout++] = writable ? fcntl(r, F_DUPFD_CLOEXEC, 3) : r;
            if (out_fds[nout - 1] < 0) {
                r = negative_errno();
                nout--;
                goto fail;
            }
        }
        reply->a[i] = j;
        reply->b[i] = g->page;
    }
    /* Every mapping object first, so that nothing is half recorded. */
    for (i = 0; i < req->count; i++) {
        struct hy_grant *g = &gd->grants[req->refs[i]];
        struct hy_mapping *m;

        if (mapping_find(g, c))
            continue;
        m = calloc(1, sizeof(*m));
        if (!m) {
            r = -ENOMEM;
            goto fail_mappings;
        }
        m->conn = c;
        m->granter = gd;
        m->ref = req->refs[i];
        m->grant_next = g->mappers;
        g->mappers = m;
        m->conn_next = c->mappings;
        if (c->mappings)
            c->mappings->conn_prev = m;
        c->mappings = m;
    }
    for (i = 0; i < req->count; i++) {
        struct hy_grant *g = &gd->grants[req->refs[i]];

        mapping_find(g, c)->count++;
        g->mapcount++;
        c->nr_mapped++;
    }
    reply->count = req->count;
    *ret_nout = nout;
    return 0;
fail_mappings:
    for (i = 0; i < req->count; i++) {
        struct hy_mapping *m = mapping_find(&gd->grants[req->refs[i]], c);

        if (m && m->count == 0)
            mapping_release(m);
    }
fail:
    while (nout > 0)
        close(out_fds[--nout]);
    return r;
}

static int gnt_unmap(struct hy_conn *c, const struct emu_hc_request *req)
{
    struct hy_domain *gd;
    uint32_t i;

    gd = hyper_domain_find(c->dom->hy, req->domid == EMU_HC_DOMID_SELF ? c->dom->domid : req->domid);
    /* The granter died: its entries, and our mappings of them, are gone;
     * the memory stays valid until the process unmaps it. */
    if (!gd)
        return 0;
    for (i = 0; i < req->count; i++) {
        uint32_t ref = req->refs[i];
        struct hy_mapping *m;

        if (ref >= HY_GRANT_ENTRIES || !(m = mapping_find(&gd->grants[ref], c)))
            return -EINVAL;
        m->count--;
        c->nr_mapped--;
        gd->grants[ref].mapcount--;
        if (m->count == 0)
            mapping_release(m);
    }
    return 0;
}

/* ---- event channels -------------------------------------------------- */

static void ev_flush(struct hy_conn *c);

static void on_event_socket(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct hy_conn *c = data;

    if (events & (EPOLLHUP | EPOLLERR)) {
        /* The process dropped its end: nobody will read the ports. */
        while (c->queue_head) {
            c->queue_head->queued = false;
            c->queue_head = c->queue_head->queue_next;
        }
        c->queue_tail = NULL;
    }
    ev_flush(c);
}

static void ev_watch(struct hy_conn *c, bool want)
{
    struct emu_loop *loop = c->dom->hy->loop;

    if (!loop || c->ev_watched == want)
        return;
    if (want) {
        if (emu_loop_add(loop, c->evfd, EPOLLOUT, on_event_socket, c) == 0)
            c->ev_watched = true;
    } else {
        emu_loop_remove(loop, c->evfd);
        c->ev_watched = false;
    }
}

static void ev_flush(struct hy_conn *c)
{
    while (c->queue_head) {
        struct hy_port *p = c->queue_head;
        uint32_t port = p->port;

        if (send(c->evfd, &port, sizeof(port), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
                ev_watch(c, true);
                return;
            }
            /* EPIPE and friends: the process is gone or closed its end;
             * forget the port like the kernel's ring would be forgotten. */
        }
        c->queue_head = p->queue_next;
        if (!c->queue_head)
            c->queue_tail = NULL;
        p->queued = false;
        p->queue_next = NULL;
    }
    ev_watch(c, false);
}

/* As the Linux evtchn driver's upcall: the port is masked until the
 * process unmasks it, and goes into its ring (our event socket). */
static void ev_deliver(struct hy_port *p)
{
    struct hy_conn *c = p->conn;

    p->pending = false;
    p->masked = true;
    if (p->queued)
        return;
    p->queued = true;
    p->queue_next = NULL;
    if (c->queue_tail)
        c->queue_tail->queue_next = p;
    else
        c->queue_head = p;
    c->queue_tail = p;
    ev_flush(c);
}

static void ev_set_pending(struct hy_port *p)
{
    if (p->pending)
        return; /* coalesces, as Xen's pending bit does */
    p->pending = true;
    if (!p->masked)
        ev_deliver(p);
}

static void ev_dequeue(struct hy_port *p)
{
    struct hy_conn *c = p->conn;
    struct hy_port **pp, *prev = NULL;

    if (!p->queued)
        return;
    for (pp = &c->queue_head; *pp; prev = *pp, pp = &(*pp)->queue_next) {
        if (*pp == p) {
            *pp = p->queue_next;
            if (c->queue_tail == p)
                c->queue_tail = prev;
            break;
        }
    }
    p->queued = false;
}

static struct hy_port *peer_of(struct hy_port *p)
{
    struct hy_domain *rd = hyper_domain_find(p->conn->dom->hy, p->remote_domid);

    if (p->state != EMU_HC_EVTCHN_INTERDOMAIN || !rd || p->remote_port >= rd->nr_ports)
        return NULL;
    return rd->ports[p->remote_port];
}

/* EVTCHNOP_close: the peer's port falls back to unbound, accepting a new
 * binding from us.  Xen sends the peer no event for it, and neither do we:
 * code that works here must also work there (it polls status()). */
static void ev_close(struct hy_domain *d, struct hy_port *p)
{
    struct hy_port *peer = peer_of(p);

    if (peer) {
        peer->state = EMU_HC_EVTCHN_UNBOUND;
        peer->remote_domid = d->domid;
        peer->remote_port = 0;
    }
    ev_dequeue(p);
    d->ports[p->port] = NULL;
    free(p);
}

static int ev_alloc(struct hy_conn *c, uint32_t state, uint32_t remote_domid, struct hy_port **ret)
{
    struct hy_domain *d = c->dom;
    struct hy_port *p;
    uint32_t port;

    for (port = 1; port < d->nr_ports && d->ports[port]; port++)
        ;
    if (port == d->nr_ports)
        return -ENOSPC;
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->conn = c;
    p->port = port;
    p->state = state;
    p->remote_domid = remote_domid;
    d->ports[port] = p;
    /* bound again on the handle that held it stale: live from now on */
    bit_clear(c->stale_ports, port, HY_PORTS);
    *ret = p;
    return 0;
}

static int ev_open(struct hy_conn *c, int *out_fds, unsigned int *ret_nout)
{
    int sv[2];

    if (c->evfd >= 0)
        return -EEXIST;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
        return negative_errno();
    /* Ports only flow to the process; refuse its writes at the source. */
    shutdown(sv[0], SHUT_RD);
    c->evfd = sv[0];
    out_fds[0] = sv[1];
    *ret_nout = 1;
    return 0;
}

/* The port `port` if this handle bound it: the evtchn driver answers
 * EINVAL beyond the domain's ports and ENOTCONN for another's. */
static int own_port(struct hy_conn *c, uint32_t port, struct hy_port **ret)
{
    if (port >= c->dom->nr_ports)
        return -EINVAL;
    if (!c->dom->ports[port] || c->dom->ports[port]->conn != c)
        return -ENOTCONN;
    *ret = c->dom->ports[port];
    return 0;
}

static int evtchn_op(struct hy_conn *c, const struct emu_hc_request *req, struct emu_hc_reply *reply)
{
    struct hy_domain *d = c->dom, *rd;
    struct hy_port *p, *rp;
    uint32_t remote = req->domid == EMU_HC_DOMID_SELF ? d->domid : req->domid;
    int r;

    if (c->evfd < 0)
        return -EBADF; /* not an event channel handle */
    switch (req->op) {
    case EMU_HC_EVT_ALLOC_UNBOUND:
        /* Xen records the remote domid without checking it exists. */
        if (remote > XENSTATS_DOMID_MAX)
            return -EINVAL;
        r = ev_alloc(c, EMU_HC_EVTCHN_UNBOUND, remote, &p);
        return r < 0 ? r : (int)p->port;
    case EMU_HC_EVT_BIND_INTERDOMAIN:
        rd = remote <= XENSTATS_DOMID_MAX ? hyper_domain_find(d->hy, remote) : NULL;
        if (!rd)
            return -ESRCH;
        if (req->port >= rd->nr_ports)
            return -EINVAL;
        rp = rd->ports[req->port];
        if (!rp || rp->state != EMU_HC_EVTCHN_UNBOUND || rp->remote_domid != d->domid)
            return -EINVAL;
        r = ev_alloc(c, EMU_HC_EVTCHN_INTERDOMAIN, rd->domid, &p);
        if (r < 0)
            return r;
        p->remote_port = rp->port;
        rp->state = EMU_HC_EVTCHN_INTERDOMAIN;
        rp->remote_domid = d->domid;
        rp->remote_port = p->port;
        /* Xen marks the new local port pending: notifications sent to the
         * unbound remote port may have been lost. */
        ev_set_pending(p);
        return (int)p->port;
    case EMU_HC_EVT_NOTIFY:
        /* a port of the old domain: Xen's send on it succeeds, nobody hears */
        if (stale_port(c, req->port))
            return 0;
        r = own_port(c, req->port, &p);
        if (r < 0)
            return r;
        rp = peer_of(p);
        if (rp) /* an unbound port drops the notification silently */
            ev_set_pending(rp);
        return 0;
    case EMU_HC_EVT_NOTIFY_MANY:
        /* each as EMU_HC_EVT_NOTIFY, its result in a[i] */
        for (uint32_t i = 0; i < req->count; i++) {
            if (stale_port(c, req->refs[i]))
                r = 0;
            else if ((r = own_port(c, req->refs[i], &p)) == 0 && (rp = peer_of(p)))
                ev_set_pending(rp);
            reply->a[i] = (uint32_t)r;
        }
        reply->count = req->count;
        return 0;
    case EMU_HC_EVT_UNMASK:
        /* Like a write to /dev/xen/evtchn: ports not ours are ignored. */
        if (own_port(c, req->port, &p) == 0 && p->masked) {
            p->masked = false;
            if (p->pending)
                ev_deliver(p);
        }
        return 0;
    case EMU_HC_EVT_UNMASK_MANY:
        /* the write of several ports at once to /dev/xen/evtchn */
        for (uint32_t i = 0; i < req->count; i++) {
            if (own_port(c, req->refs[i], &p) == 0 && p->masked) {
                p->masked = false;
                if (p->pending)
                    ev_deliver(p);
            }
        }
        return 0;
    case EMU_HC_EVT_UNBIND:
        /* never close the port of the same number someone bound since */
        if (stale_port(c, req->port)) {
            bit_clear(c->stale_ports, req->port, HY_PORTS);
            stale_bug(c, "unbind of", req->port);
            return 0;
        }
        r = own_port(c, req->port, &p);
        if (r < 0)
            return r;
        ev_close(d, p);
        return 0;
    case EMU_HC_EVT_STATUS:
        /* EVTCHNOP_status covers every port of the domain. */
        if (req->port >= d->nr_ports)
            return -EINVAL;
        p = d->ports[req->port];
        reply->count = 3;
        reply->a[0] = p ? p->state : EMU_HC_EVTCHN_CLOSED;
        reply->a[1] = p ? p->remote_domid : 0;
        reply->a[2] = p ? p->remote_port : 0;
        return 0;
    default:
        return -ENOSYS;
    }
}

/* ---- connections ----------------------------------------------------- */

struct hy_conn *hyper_conn_new(struct hyper *hy, uint32_t domid, int fd)
{
    struct hy_domain *d = hyper_domain_find(hy, domid);
    struct hy_conn *c;

    if (!d) {
        errno = ESRCH;
        return NULL;
    }
    if (d->nr_conns >= HY_CONNS_PER_DOMAIN) {
        errno = EMFILE;
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    c->dom = d;
    c->fd = fd;
    c->evfd = -1;
    c->next = d->conns;
    d->conns = c;
    d->nr_conns++;
    hy->nr_conns++;
    return c;
}

void hyper_conn_close(struct hy_conn *c)
{
    struct hy_domain *d;
    struct hy_conn **pp;
    uint32_t i;

    if (!c)
        return;
    d = c->dom;
    /* As a process exit: its ports close (peers see it), its grants are
     * revoked (deferred while mapped), its mappings go. */
    for (i = 1; i < d->nr_ports; i++)
        if (d->ports[i] && d->ports[i]->conn == c)
            ev_close(d, d->ports[i]);
    for (i = HY_GRANT_RESERVED; i < HY_GRANT_ENTRIES; i++)
        if (d->grants[i].mem && d->grants[i].owner == c)
            grant_revoke(d, &d->grants[i]);
    while (c->mappings)
        mapping_release(c->mappings);
    if (c->evfd >= 0) {
        ev_watch(c, false);
        close(c->evfd);
    }
    free(c->stale_ports);
    free(c->stale_refs);
    if (c->fd >= 0) {
        if (d->hy->loop)
            emu_loop_remove(d->hy->loop, c->fd);
        close(c->fd);
    }
    for (pp = &d->conns; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    d->nr_conns--;
    d->hy->nr_conns--;
    free(c);
}

void hyper_domain_remove(struct hyper *hy, uint32_t domid)
{
    struct hy_domain **pp, *d;
    uint32_t i;

    for (pp = &hy->domains; *pp && (*pp)->domid != domid; pp = &(*pp)->next)
        ;
    d = *pp;
    if (!d)
        return;
    while (d->conns)
        hyper_conn_close(d->conns);
    /* Entries still mapped by other domains: their memory stays valid in
     * those processes (the kernel holds the memfd), the bookkeeping goes. */
    for (i = HY_GRANT_RESERVED; i < HY_GRANT_ENTRIES; i++) {
        struct hy_grant *g = &d->grants[i];

        while (g->mappers) {
            struct hy_mapping *m = g->mappers;

            g->mappers = m->grant_next;
            mapping_unlink_conn(m);
            free(m);
        }
        if (g->mem)
            grant_free(d, g);
    }
    *pp = d->next;
    domain_free(d);
}

static void conn_unlink(struct hy_conn *c)
{
    struct hy_conn **pp;

    for (pp = &c->dom->conns; *pp != c; pp = &(*pp)->next)
        ;
    *pp = c->next;
    c->dom->nr_conns--;
}

static void conn_link(struct hy_conn *c, struct hy_domain *d)
{
    c->dom = d;
    c->next = d->conns;
    d->conns = c;
    d->nr_conns++;
}

static void conn_poll(struct hy_conn *c, uint32_t events)
{
    if (c->dom->hy->loop && c->fd >= 0)
        emu_loop_modify(c->dom->hy->loop, c->fd, events);
}

void hyper_domain_peers(struct hyper *hy, uint32_t domid, void (*peer)(int fd, void *arg), void *arg)
{
    struct hy_domain *d = hyper_domain_find(hy, domid);
    struct hy_conn *c;

    for (c = d ? d->conns : NULL; c; c = c->next)
        if (c->fd >= 0)
            peer(c->fd, arg);
}

void hyper_domain_park(struct hyper *hy, uint32_t domid, uint32_t image, void (*peer)(int fd, void *arg),
                       void *arg)
{
    struct hy_domain *d = hyper_domain_find(hy, domid);
    uint32_t i;

    if (!d || !image)
        return;
    if (!hy->limbo && !(hy->limbo = domain_new(hy, UINT32_MAX, 1)))
        return; /* out of memory: they die with the domain */
    while (d->conns) {
        struct hy_conn *c = d->conns;

        for (i = 1; i < d->nr_ports; i++) {
            struct hy_port *p = d->ports[i];

            if (p && p->conn == c) {
                bit_set(&c->stale_ports, i, HY_PORTS);
                ev_close(d, p);
            }
        }
        for (i = HY_GRANT_RESERVED; i < HY_GRANT_ENTRIES; i++)
            if (d->grants[i].mem && d->grants[i].owner == c)
                bit_set(&c->stale_refs, i, HY_GRANT_ENTRIES);
        conn_unlink(c);
        conn_link(c, hy->limbo);
        c->parked = image;
        /* a suspended guest makes no hypercalls: nothing is read until it
         * resumes; a hang-up is still reported (and closes it) */
        conn_poll(c, 0);
        if (peer && c->fd >= 0)
            peer(c->fd, arg);
    }
}

void hyper_unpark(struct hyper *hy, uint32_t image, uint32_t domid)
{
    struct hy_domain *d = domid == UINT32_MAX ? NULL : hyper_domain_find(hy, domid);
    struct hy_conn *c, *next;

    if (!hy->limbo)
        return;
    for (c = hy->limbo->conns; c; c = next) {
        next = c->next;
        if (c->parked != image)
            continue;
        if (!d) {
            hyper_conn_close(c);
            continue;
        }
        conn_unlink(c);
        conn_link(c, d);
        c->parked = 0;
        conn_poll(c, EPOLLIN);
    }
}

void hyper_conn_hangup(struct hy_conn *c)
{
    uint32_t port;

    if (c && !c->parked && any_bit(c->stale_ports, HY_PORTS, &port))
        stale_bug(c, "close of a handle holding", port);
    hyper_conn_close(c);
}

uint64_t hyper_stale_bugs(struct hyper *hy, uint32_t domid)
{
    struct hy_domain *d = hyper_domain_find(hy, domid);

    return d ? d->stale_bugs : 0;
}

uint64_t hyper_stale_bugs_total(struct hyper *hy)
{
    return hy->stale_bugs;
}

int hyper_grants_in_use(struct hyper *hy, uint32_t domid)
{
    struct hy_domain *d = hyper_domain_find(hy, domid);

    return d ? (int)d->grants_used : -ESRCH;
}

unsigned int hyper_nr_conns(struct hyper *hy)
{
    return hy->nr_conns;
}

/* ---- requests -------------------------------------------------------- */

int hyper_parse(const void *msg, size_t len, unsigned int nfds, struct emu_hc_request *ret_req)
{
    struct emu_hc_request req;
    bool takes_refs, takes_fd;

    if (len < EMU_HC_REQUEST_HEADER || len > sizeof(req))
        return -EPROTO;
    memset(&req, 0, sizeof(req));
    memcpy(&req, msg, len);
    if (req.op < EMU_HC_GNT_SHARE || req.op > EMU_HC_EVT_UNMASK_MANY)
        return -EPROTO;
    takes_refs = req.op == EMU_HC_GNT_UNSHARE || req.op == EMU_HC_GNT_MAP || req.op == EMU_HC_GNT_UNMAP ||
                 req.op == EMU_HC_EVT_NOTIFY_MANY || req.op == EMU_HC_EVT_UNMASK_MANY;
    takes_fd = req.op == EMU_HC_GNT_SHARE;
    if (takes_refs) {
        if (req.count == 0 || req.count > EMU_HC_BATCH || len != EMU_HC_REQUEST_SIZE(req.count))
            return -EPROTO;
    } else if (len != EMU_HC_REQUEST_HEADER) {
        return -EPROTO;
    }
    if (req.op == EMU_HC_GNT_SHARE && (req.count == 0 || req.count > EMU_HC_BATCH))
        return -EPROTO;
    if (nfds != (takes_fd ? 1u : 0u))
        return -EPROTO;
    *ret_req = req;
    return 0;
}

int hyper_handle(struct hy_conn *c, const void *msg, size_t len, int *fds, unsigned int nfds,
                 struct emu_hc_reply *reply, int *out_fds, unsigned int *ret_nout)
{
    struct emu_hc_request req;
    unsigned int i;
    int r;

    memset(reply, 0, sizeof(*reply));
    *ret_nout = 0;
    r = hyper_parse(msg, len, nfds, &req);
    if (r < 0) {
        for (i = 0; i < nfds; i++)
            close(fds[i]);
        reply->result = -EINVAL;
        return r;
    }
    switch (req.op) {
    case EMU_HC_GNT_SHARE:
        r = gnt_share(c, &req, fds[0], reply);
        if (r < 0)
            close(fds[0]); /* on success the entries own it */
        break;
    case EMU_HC_GNT_UNSHARE:
        r = gnt_unshare(c, &req);
        break;
    case EMU_HC_GNT_MAP:
        r = gnt_map(c, &req, reply, out_fds, ret_nout);
        break;
    case EMU_HC_GNT_UNMAP:
        r = gnt_unmap(c, &req);
        break;
    case EMU_HC_EVT_OPEN:
        r = ev_open(c, out_fds, ret_nout);
        break;
    default:
        r = evtchn_op(c, &req, reply);
        break;
    }
    reply->result = r;
    return 0;
}
