/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * emu backend: grant tables through the emulator's hypercall socket, with
 * libxengntshr / libxengnttab semantics.  Shared pages are a sealed memfd
 * the emulator keeps a reference to; a grantee maps the descriptor the
 * emulator hands back (read-only reopened for a read-only grant, so a
 * write faults).
 */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu_backend.h"
#include "util/util.h"

/* ---- grants ---------------------------------------------------------- */

/* One share_pages(): its refs, and which pages are still shared. */
struct share {
    struct share *next;
    uint8_t *addr;
    uint32_t count;
    uint32_t live;
    uint32_t *refs; /* refs[i] == UINT32_MAX once page i is unshared */
};

/* One map(): the refs to hand back on unmap(). */
struct mapping {
    struct mapping *next;
    uint8_t *addr;
    uint32_t count;
    uint32_t domid;
    uint32_t *refs;
};

struct emu_grants {
    pthread_mutex_t lock;
    int fd;
    struct share *shares;
    struct mapping *maps;
};

static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

/* The handle's connection, made on first use (locked on return). */
static int grants_lock(struct platform *p, struct emu_grants **ret)
{
    struct emu_grants *g;
    int fd;

    pthread_mutex_lock(&create_lock);
    g = p->grant_data;
    if (!g) {
        fd = emu_hypercall_connect(p->self_domid);
        if (fd < 0) {
            pthread_mutex_unlock(&create_lock);
            return fd;
        }
        g = calloc(1, sizeof(*g));
        if (!g) {
            close(fd);
            pthread_mutex_unlock(&create_lock);
            return -ENOMEM;
        }
        pthread_mutex_init(&g->lock, NULL);
        g->fd = fd;
        p->grant_data = g;
    }
    pthread_mutex_unlock(&create_lock);
    pthread_mutex_lock(&g->lock);
    *ret = g;
    return 0;
}

static int send_refs(struct emu_grants *g, uint32_t op, uint32_t domid, const uint32_t *refs, uint32_t count)
{
    struct emu_hc_request req = {.op = op, .domid = domid};
    struct emu_hc_reply reply;
    uint32_t done;
    int r = 0;

    for (done = 0; done < count; done += req.count) {
        int one;

        req.count = count - done < EMU_HC_BATCH ? count - done : EMU_HC_BATCH;
        memcpy(req.refs, refs + done, req.count * sizeof(uint32_t));
        one = emu_hypercall_call(g->fd, &req, -1, &reply, NULL, 0, NULL);
        if (one < 0 && r == 0)
            r = one; /* keep going: release what can be released */
    }
    return r;
}

/* The same, one-way (EMU_HC_NO_REPLY): 0, or -ESRCH when the connection is gone. */
static int send_refs_one_way(struct emu_grants *g, uint32_t op, uint32_t domid, const uint32_t *refs,
                             uint32_t count)
{
    struct emu_hc_request req = {.op = op, .domid = domid, .flags = EMU_HC_NO_REPLY};
    uint32_t done;
    ssize_t n;

    for (done = 0; done < count; done += req.count) {
        req.count = count - done < EMU_HC_BATCH ? count - done : EMU_HC_BATCH;
        memcpy(req.refs, refs + done, req.count * sizeof(uint32_t));
        do
            n = send(g->fd, &req, EMU_HC_REQUEST_SIZE(req.count), MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return errno == EPIPE || errno == ECONNRESET ? -ESRCH : negative_errno();
    }
    return 0;
}

static void *emu_share_pages(struct platform *p, uint32_t domid, uint32_t count, uint32_t *refs, int writable)
{
    struct emu_grants *g;
    struct share *s = NULL;
    void *addr = MAP_FAILED;
    size_t len;
    uint32_t done = 0;
    int memfd = -1, r;

    if (count == 0 || count > UINT32_MAX / EMU_HC_PAGE_SIZE)
        return set_errno(-EINVAL), NULL;
    r = grants_lock(p, &g);
    if (r < 0)
        return set_errno(r), NULL;
    len = (size_t)count * EMU_HC_PAGE_SIZE;
    s = calloc(1, sizeof(*s));
    if (s)
        s->refs = calloc(count, sizeof(uint32_t));
    if (!s || !s->refs) {
        r = -ENOMEM;
        goto fail;
    }
    /* Sealed so that neither side can shrink the pages under a mapping. */
    memfd = memfd_create("xenstats-grant", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd < 0 || ftruncate(memfd, (off_t)len) < 0 ||
        fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        r = negative_errno();
        goto fail;
    }
    addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (addr == MAP_FAILED) {
        r = negative_errno();
        goto fail;
    }
    while (done < count) {
        struct emu_hc_request req = {.op = EMU_HC_GNT_SHARE, .domid = domid, .first_page = done};
        struct emu_hc_reply reply;

        req.flags = writable ? EMU_HC_WRITABLE : 0;
        req.count = count - done < EMU_HC_BATCH ? count - done : EMU_HC_BATCH;
        r = emu_hypercall_call(g->fd, &req, memfd, &reply, NULL, 0, NULL);
        if (r < 0)
            goto fail;
        if (reply.count != req.count) {
            r = -EPROTO;
            goto fail;
        }
        memcpy(s->refs + done, reply.a, req.count * sizeof(uint32_t));
        done += req.count;
    }
    close(memfd);
    s->addr = addr;
    s->count = count;
    s->live = count;
    s->next = g->shares;
    g->shares = s;
    memcpy(refs, s->refs, count * sizeof(uint32_t));
    pthread_mutex_unlock(&g->lock);
    return addr;
fail:
    if (done)
        send_refs(g, EMU_HC_GNT_UNSHARE, 0, s->refs, done);
    if (addr != MAP_FAILED)
        munmap(addr, len);
    if (memfd >= 0)
        close(memfd);
    if (s)
        free(s->refs);
    free(s);
    pthread_mutex_unlock(&g->lock);
    set_errno(r);
    return NULL;
}

static int emu_unshare(struct platform *p, void *addr, uint32_t count)
{
    struct emu_grants *g;
    struct share **pp, *s;
    uint32_t first, i, n = 0;
    uint32_t *refs = NULL;
    int r;

    r = grants_lock(p, &g);
    if (r < 0)
        return set_errno(r);
    for (pp = &g->shares; (s = *pp); pp = &s->next) {
        uint8_t *a = addr;

        if (a >= s->addr && a < s->addr + (size_t)s->count * EMU_HC_PAGE_SIZE &&
            (size_t)(a - s->addr) % EMU_HC_PAGE_SIZE == 0)
            break;
    }
    first = s ? (uint32_t)(((uint8_t *)addr - s->addr) / EMU_HC_PAGE_SIZE) : 0;
    if (!s || count == 0 || count > s->count - first) {
        r = -EINVAL;
        goto out;
    }
    refs = calloc(count, sizeof(uint32_t));
    if (!refs) {
        r = -ENOMEM;
        goto out;
    }
    for (i = first; i < first + count; i++) {
        if (s->refs[i] != UINT32_MAX) {
            refs[n++] = s->refs[i];
            s->refs[i] = UINT32_MAX;
        }
    }
    /* As gntshr: our mapping goes; a page the grantee still maps stays in
     * use there until it unmaps. */
    r = n ? send_refs(g, EMU_HC_GNT_UNSHARE, 0, refs, n) : 0;
    munmap(addr, (size_t)count * EMU_HC_PAGE_SIZE);
    s->live -= n;
    if (s->live == 0) {
        *pp = s->next;
        free(s->refs);
        free(s);
    }
out:
    free(refs);
    pthread_mutex_unlock(&g->lock);
    return set_errno(r);
}

static void *emu_map(struct platform *p, uint32_t domid, uint32_t count, const uint32_t *refs, int prot)
{
    bool writable = prot & PROT_WRITE;
    struct mapping *m = NULL;
    struct emu_grants *g;
    uint8_t *addr = MAP_FAILED;
    uint32_t done = 0;
    size_t len;
    int r;

    if (count == 0 || count > UINT32_MAX / EMU_HC_PAGE_SIZE || (prot & ~(PROT_READ | PROT_WRITE)))
        return set_errno(-EINVAL), NULL;
    r = grants_lock(p, &g);
    if (r < 0)
        return set_errno(r), NULL;
    len = (size_t)count * EMU_HC_PAGE_SIZE;
    m = calloc(1, sizeof(*m));
    if (m)
        m->refs = malloc(count * sizeof(uint32_t));
    if (!m || !m->refs) {
        r = -ENOMEM;
        goto fail;
    }
    memcpy(m->refs, refs, count * sizeof(uint32_t));
    /* One contiguous range, filled page by page from the granted files. */
    addr = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (addr == MAP_FAILED) {
        r = negative_errno();
        goto fail;
    }
    while (done < count) {
        struct emu_hc_request req = {.op = EMU_HC_GNT_MAP, .domid = domid};
        struct emu_hc_reply reply;
        int fds[EMU_HC_BATCH];
        unsigned int nfds = 0, i;

        req.flags = writable ? EMU_HC_WRITABLE : 0;
        req.count = count - done < EMU_HC_BATCH ? count - done : EMU_HC_BATCH;
        memcpy(req.refs, refs + done, req.count * sizeof(uint32_t));
        r = emu_hypercall_call(g->fd, &req, -1, &reply, fds, EMU_HC_BATCH, &nfds);
        if (r < 0)
            goto fail;
        done += req.count;
        for (i = 0; r == 0 && i < req.count; i++) {
            uint8_t *page = addr + ((size_t)done - req.count + i) * EMU_HC_PAGE_SIZE;

            if (reply.count != req.count || reply.a[i] >= nfds)
                r = -EPROTO;
            else if (mmap(page, EMU_HC_PAGE_SIZE, prot, MAP_SHARED | MAP_FIXED, fds[reply.a[i]],
                          (off_t)reply.b[i] * EMU_HC_PAGE_SIZE) == MAP_FAILED)
                r = negative_errno();
        }
        for (i = 0; i < nfds; i++)
            close(fds[i]);
        if (r < 0)
            goto fail;
    }
    m->addr = addr;
    m->count = count;
    m->domid = domid;
    m->next = g->maps;
    g->maps = m;
    pthread_mutex_unlock(&g->lock);
    return addr;
fail:
    if (done)
        send_refs(g, EMU_HC_GNT_UNMAP, domid, refs, done);
    if (addr != MAP_FAILED)
        munmap(addr, len);
    if (m)
        free(m->refs);
    free(m);
    pthread_mutex_unlock(&g->lock);
    set_errno(r);
    return NULL;
}

static int emu_unmap(struct platform *p, void *addr, uint32_t count)
{
    struct emu_grants *g;
    struct mapping **pp, *m;
    int r;

    r = grants_lock(p, &g);
    if (r < 0)
        return set_errno(r);
    for (pp = &g->maps; (m = *pp) && m->addr != addr; pp = &m->next)
        ;
    /* gnttab wants back exactly what map() gave. */
    if (!m || m->count != count) {
        pthread_mutex_unlock(&g->lock);
        return set_errno(-EINVAL);
    }
    *pp = m->next;
    munmap(m->addr, (size_t)m->count * EMU_HC_PAGE_SIZE);
    /* nothing to wait for: the pages are gone from this process already */
    r = send_refs_one_way(g, EMU_HC_GNT_UNMAP, m->domid, m->refs, m->count);
    free(m->refs);
    free(m);
    pthread_mutex_unlock(&g->lock);
    /* The memory is unmapped whatever the emulator said: only a broken
     * connection is worth reporting, and the emulator released it then. */
    return set_errno(r == -ESRCH ? 0 : r);
}

void emu_grant_release(struct platform *p)
{
    struct emu_grants *g = p->grant_data;

    if (!g)
        return;
    /* Closing the connection revokes our grants and drops our mappings in
     * the emulator, as closing the gntshr/gnttab devices does. */
    close(g->fd);
    while (g->shares) {
        struct share *s = g->shares;
        uint32_t i;

        g->shares = s->next;
        for (i = 0; i < s->count; i++)
            if (s->refs[i] != UINT32_MAX)
                munmap(s->addr + (size_t)i * EMU_HC_PAGE_SIZE, EMU_HC_PAGE_SIZE);
        free(s->refs);
        free(s);
    }
    while (g->maps) {
        struct mapping *m = g->maps;

        g->maps = m->next;
        munmap(m->addr, (size_t)m->count * EMU_HC_PAGE_SIZE);
        free(m->refs);
        free(m);
    }
    pthread_mutex_destroy(&g->lock);
    free(g);
    p->grant_data = NULL;
}

const struct platform_grant_ops emu_grant_ops = {
    .share_pages = emu_share_pages,
    .unshare = emu_unshare,
    .map = emu_map,
    .unmap = emu_unmap,
};
