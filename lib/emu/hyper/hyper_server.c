/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transport of the grant/event channel engine: one SOCK_SEQPACKET socket
 * per domain, <run dir>/hypercall/<domid>, created with the domain and
 * removed with it.  The socket a process connects on is its domain.
 *
 * Requests are read without blocking, at most a few per wakeup so a
 * flooding client cannot starve the others; replies are sent without
 * blocking, and a client that does not read its replies (its socket full)
 * or sends a malformed message is disconnected, which releases all it held
 * as if the process had exited.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu/loop.h"
#include "hyper_private.h"
#include "util/util.h"

#define REQUESTS_PER_WAKEUP 16

/*
 * Module hooks get the host, not a place of their own to keep state in
 * for its whole life; the engine of a host exists while the host has
 * domains and is found through this list (the emulator is one thread).
 */
static struct hyper *registered;

static struct hyper *hyper_of(struct emu_host *host)
{
    struct hyper *hy;

    for (hy = registered; hy; hy = hy->next_registered)
        if (hy->host == host)
            return hy;
    return NULL;
}

static int dir_path(struct emu_host *host, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s", host->dir, EMU_HYPERCALL_DIR);

    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Once the host has no domain left nothing of the engine outlives it. */
static void release_if_empty(struct emu_host *host, struct hyper *hy)
{
    struct hyper **pp;
    char dir[PATH_MAX];

    if (hy->domains)
        return;
    for (pp = &registered; *pp; pp = &(*pp)->next_registered) {
        if (*pp == hy) {
            *pp = hy->next_registered;
            break;
        }
    }
    hyper_free(hy);
    if (dir_path(host, dir, sizeof(dir)) == 0)
        rmdir(dir);
}

static void on_request(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct hy_conn *c = data;
    int n;

    /* a suspended domain's process only wakes us by hanging up */
    if (c->parked) {
        hyper_conn_close(c);
        return;
    }
    for (n = 0; n < REQUESTS_PER_WAKEUP; n++) {
        /* One byte more than the largest request tells an oversized one. */
        unsigned char buf[sizeof(struct emu_hc_request) + 1];
        union {
            struct cmsghdr align;
            char space[CMSG_SPACE(sizeof(int))];
        } control;
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
        struct emu_hc_reply reply;
        int fds[1], out_fds[EMU_HC_BATCH];
        unsigned int nfds = 0, nout = 0, i;
        struct cmsghdr *cm;
        ssize_t len;
        bool bad;

        len = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (len < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (len == 0) {
            hyper_conn_hangup(c); /* the process closed its handle */
            return;
        }
        if (len < 0)
            goto disconnect;
        bad = mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC);
        for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                size_t k, count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                for (k = 0; k < count; k++) {
                    int got;

                    memcpy(&got, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
                    if (nfds < ARRAY_SIZE(fds))
                        fds[nfds++] = got;
                    else {
                        close(got);
                        bad = true;
                    }
                }
            } else {
                bad = true;
            }
        }
        if (bad) {
            for (i = 0; i < nfds; i++)
                close(fds[i]);
            log_debug("hypercall: domain %u: oversized message, disconnecting", c->dom->domid);
            goto disconnect;
        }
        if (hyper_handle(c, buf, (size_t)len, fds, nfds, &reply, out_fds, &nout) < 0) {
            log_debug("hypercall: domain %u: malformed request, disconnecting", c->dom->domid);
            goto disconnect;
        }
        if ((size_t)len >= EMU_HC_REQUEST_HEADER) {
            struct emu_hc_request head;

            memcpy(&head, buf, EMU_HC_REQUEST_HEADER);
            if ((head.op == EMU_HC_EVT_UNMASK || head.op == EMU_HC_EVT_UNMASK_MANY || head.op == EMU_HC_GNT_UNMAP) &&
                (head.flags & EMU_HC_NO_REPLY)) {
                for (i = 0; i < nout; i++)
                    close(out_fds[i]);
                continue;
            }
        }
        {
            union {
                struct cmsghdr align;
                char space[CMSG_SPACE(sizeof(int) * EMU_HC_BATCH)];
            } rcontrol;
            struct iovec riov = {.iov_base = &reply, .iov_len = sizeof(reply)};
            struct msghdr rmh = {.msg_iov = &riov, .msg_iovlen = 1};
            ssize_t sent;

            if (nout) {
                memset(&rcontrol, 0, sizeof(rcontrol));
                rmh.msg_control = &rcontrol;
                rmh.msg_controllen = CMSG_SPACE(sizeof(int) * nout);
                cm = CMSG_FIRSTHDR(&rmh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int) * nout);
                memcpy(CMSG_DATA(cm), out_fds, sizeof(int) * nout);
            }
            sent = sendmsg(fd, &rmh, MSG_DONTWAIT | MSG_NOSIGNAL);
            for (i = 0; i < nout; i++)
                close(out_fds[i]);
            if (sent != (ssize_t)sizeof(reply)) {
                log_debug("hypercall: domain %u: client does not take its replies, disconnecting",
                          c->dom->domid);
                goto disconnect;
            }
        }
    }
    return;
disconnect:
    hyper_conn_close(c);
}

static void on_accept(struct emu_loop *loop, int lfd, uint32_t events, void *data)
{
    struct hy_domain *d = data;
    struct hy_conn *c;
    int fd;

    fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    c = hyper_conn_new(d->hy, d->domid, fd);
    if (!c) {
        log_warning("hypercall: domain %u: refusing a connection: %s", d->domid, strerror(errno));
        close(fd);
        return;
    }
    if (emu_loop_add(loop, fd, EPOLLIN, on_request, c) < 0)
        hyper_conn_close(c);
}

static int domain_created(struct emu_host *host, struct emu_domain *ed, void *data)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct hyper *hy = hyper_of(host);
    struct hy_domain *d;
    char dir[PATH_MAX];
    int fd, r;

    if (!host->loop)
        return -EINVAL;
    r = dir_path(host, dir, sizeof(dir));
    if (r < 0)
        return r;
    if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%u", dir, ed->domid) >= (int)sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    if (!hy) {
        hy = hyper_new(host->loop);
        if (!hy)
            return negative_errno();
        hy->host = host;
        hy->next_registered = registered;
        registered = hy;
    }
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        r = negative_errno();
        release_if_empty(host, hy);
        return r;
    }
    r = hyper_domain_add(hy, ed->domid);
    if (r < 0) {
        release_if_empty(host, hy);
        return r;
    }
    d = hyper_domain_find(hy, ed->domid);
    unlink(sa.sun_path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        r = negative_errno();
        goto fail;
    }
    /* Only the host owner's processes join domains. */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 || listen(fd, 64) < 0) {
        r = negative_errno();
        close(fd);
        unlink(sa.sun_path);
        goto fail;
    }
    r = emu_loop_add(host->loop, fd, EPOLLIN, on_accept, d);
    if (r < 0) {
        close(fd);
        unlink(sa.sun_path);
        goto fail;
    }
    d->lfd = fd;
    strcpy(d->path, sa.sun_path);
    return 0;
fail:
    hyper_domain_remove(hy, ed->domid);
    release_if_empty(host, hy);
    return r;
}

static void domain_destroyed(struct emu_host *host, struct emu_domain *ed, void *data)
{
    struct hyper *hy = hyper_of(host);
    struct hy_domain *d = hy ? hyper_domain_find(hy, ed->domid) : NULL;

    if (!d)
        return;
    if (d->lfd >= 0) {
        emu_loop_remove(hy->loop, d->lfd);
        close(d->lfd);
        unlink(d->path);
    }
    hyper_domain_remove(hy, ed->domid);
    release_if_empty(host, hy);
}

static void domain_peers(struct emu_host *host, struct emu_domain *ed, struct emu_image *image, void *data)
{
    struct hyper *hy = hyper_of(host);

    if (hy)
        hyper_domain_peers(hy, ed->domid, emu_image_add_peer, image);
}

static void domain_suspend(struct emu_host *host, struct emu_domain *ed, struct emu_image *image, void *data)
{
    struct hyper *hy = hyper_of(host);

    if (hy)
        hyper_domain_park(hy, ed->domid, image->id, emu_image_add_peer, image);
}

static void domain_resume(struct emu_host *host, struct emu_image *image, struct emu_domain *ed, void *data)
{
    struct hyper *hy = hyper_of(host);

    if (hy)
        hyper_unpark(hy, image->id, ed ? ed->domid : UINT32_MAX);
}

uint64_t emu_hyper_stale_bugs(struct emu_host *host, uint32_t domid)
{
    struct hyper *hy = hyper_of(host);

    if (!hy)
        return 0;
    return domid == UINT32_MAX ? hyper_stale_bugs_total(hy) : hyper_stale_bugs(hy, domid);
}

uint64_t emu_hyper_grants_in_use(struct emu_host *host)
{
    struct hyper *hy = hyper_of(host);
    struct hy_domain *d;
    uint64_t n = 0;

    for (d = hy ? hy->domains : NULL; d; d = d->next)
        n += d->grants_used;
    return n;
}

int emu_hyper_register(struct emu_host *host)
{
    const struct emu_module module = {
        .name = "hypercall",
        .created = domain_created,
        .destroyed = domain_destroyed,
        .suspend = domain_suspend,
        .peers = domain_peers,
        .resume = domain_resume,
    };

    struct rlimit lim;

    /* Every domain's connections and granted files are descriptors of
     * this one process: take all the kernel allows, so one busy domain
     * does not leave the others without. */
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    return emu_host_add_module(host, &module);
}
