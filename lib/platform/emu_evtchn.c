/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * emu backend: event channels with libxenevtchn semantics.  A handle is a
 * connection to the emulator's hypercall socket (requests and replies)
 * plus an event socket the emulator gave it: one message per delivered
 * port, like a read() of /dev/xen/evtchn, so the event socket is the
 * handle's pollable fd, readable exactly when a port is pending.  The two
 * are separate so that a reply never hides behind an event or the other
 * way round.
 */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu_backend.h"
#include "util/util.h"

struct platform_evtchn {
    pthread_mutex_t lock; /* one request at a time on fd */
    int fd;
    int evfd;
};

/* Send a request that gets no reply (see EMU_HC_NO_REPLY). */
static int send_one_way(struct platform_evtchn *h, uint32_t op, uint32_t port)
{
    struct emu_hc_request req = {.op = op, .port = port, .flags = EMU_HC_NO_REPLY};
    ssize_t n;

    pthread_mutex_lock(&h->lock);
    do
        n = send(h->fd, &req, EMU_HC_REQUEST_HEADER, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    pthread_mutex_unlock(&h->lock);
    if (n < 0)
        return set_errno(errno == EPIPE || errno == ECONNRESET ? -ESRCH : negative_errno());
    return 0;
}

static void emu_evtchn_close(struct platform_evtchn *h)
{
    if (!h)
        return;
    /* The emulator closes every port of the handle; peers see it. */
    if (h->fd >= 0)
        close(h->fd);
    if (h->evfd >= 0)
        close(h->evfd);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

static struct platform_evtchn *emu_evtchn_open(struct platform *p)
{
    struct emu_hc_request req = {.op = EMU_HC_EVT_OPEN};
    struct platform_evtchn *h;
    struct emu_hc_reply reply;
    unsigned int nfds = 0;
    int r;

    h = calloc(1, sizeof(*h));
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->evfd = -1;
    h->fd = emu_hypercall_connect(p->self_domid);
    if (h->fd < 0) {
        r = h->fd;
        goto fail;
    }
    r = emu_hypercall_call(h->fd, &req, -1, &reply, &h->evfd, 1, &nfds);
    if (r >= 0 && nfds != 1)
        r = -EPROTO;
    if (r < 0)
        goto fail;
    /* pending() must never block, whoever else shares the description. */
    if (fcntl(h->evfd, F_SETFL, fcntl(h->evfd, F_GETFL) | O_NONBLOCK) < 0) {
        r = negative_errno();
        goto fail;
    }
    return h;
fail:
    emu_evtchn_close(h);
    set_errno(r);
    return NULL;
}

static int emu_evtchn_fd(struct platform_evtchn *h)
{
    return h->evfd;
}

/* The request socket and the event socket: the emulator closes the
 * handle's ports when the request socket's last reference goes. */
static int emu_evtchn_fds(struct platform_evtchn *h, int *ret_fds, size_t max)
{
    if (max < 2)
        return -ENOBUFS;
    ret_fds[0] = h->fd;
    ret_fds[1] = h->evfd;
    return 2;
}

static int call(struct platform_evtchn *h, uint32_t op, uint32_t domid, uint32_t port, struct emu_hc_reply *reply)
{
    struct emu_hc_request req = {.op = op, .domid = domid, .port = port};
    struct emu_hc_reply local;
    int r;

    pthread_mutex_lock(&h->lock);
    r = emu_hypercall_call(h->fd, &req, -1, reply ? reply : &local, NULL, 0, NULL);
    pthread_mutex_unlock(&h->lock);
    return set_errno(r);
}

static int emu_bind_unbound_port(struct platform_evtchn *h, uint32_t remote_domid)
{
    return call(h, EMU_HC_EVT_ALLOC_UNBOUND, remote_domid, 0, NULL);
}

static int emu_bind_interdomain(struct platform_evtchn *h, uint32_t remote_domid, uint32_t remote_port)
{
    return call(h, EMU_HC_EVT_BIND_INTERDOMAIN, remote_domid, remote_port, NULL);
}

/*
 * A round trip, unlike unmask: when EVTCHNOP_send returns on Xen the peer's
 * port is pending, and callers (tests of other handles, for one) may rely
 * on that order.
 */
static int emu_notify(struct platform_evtchn *h, uint32_t port)
{
    return call(h, EMU_HC_EVT_NOTIFY, 0, port, NULL);
}

static int emu_pending(struct platform_evtchn *h)
{
    uint32_t port;
    ssize_t n;

    do
        n = recv(h->evfd, &port, sizeof(port), MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return set_errno(errno == EWOULDBLOCK ? -EAGAIN : negative_errno());
    /* End of file: the emulator dropped the handle (domain destroyed). */
    if (n == 0)
        return set_errno(-ESRCH);
    if (n != (ssize_t)sizeof(port) || port > INT32_MAX)
        return set_errno(-EPROTO);
    return (int)port;
}

/*
 * A round's worth of messages in few system calls: sendmmsg() of the
 * requests (EMU_HC_BATCH ports each), recvmmsg() of the replies and of
 * the event socket.
 */
#define MANY_CHUNK 64

/* Send msgs[count] on fd: 0, or -errno of the first failure with *ret_sent how many went. */
static int send_all(int fd, struct mmsghdr *msgs, unsigned int count, unsigned int *ret_sent)
{
    unsigned int sent = 0;
    int r = 0;

    while (sent < count) {
        int n = sendmmsg(fd, msgs + sent, count - sent, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = errno == EPIPE || errno == ECONNRESET ? -ESRCH : negative_errno();
            break;
        }
        sent += (unsigned int)n;
    }
    *ret_sent = sent;
    return r;
}

/*
 * Pipelined: up to NOTIFY_WINDOW requests of EMU_HC_BATCH ports each, then
 * their replies, in order.  The window stays small so the replies (520
 * bytes each) fit the socket buffer: the emulator drops a client that
 * does not take its replies.
 */
#define NOTIFY_WINDOW 16

static int emu_notify_many(struct platform_evtchn *h, const uint32_t *ports, size_t count, int *ret_results)
{
    struct emu_hc_request reqs[NOTIFY_WINDOW];
    struct emu_hc_reply replies[NOTIFY_WINDOW];
    struct iovec iov[NOTIFY_WINDOW], riov[NOTIFY_WINDOW];
    struct mmsghdr msgs[NOTIFY_WINDOW], rmsgs[NOTIFY_WINDOW];
    size_t done = 0;
    int r = 0;

    pthread_mutex_lock(&h->lock);
    while (done < count && r == 0) {
        unsigned int nmsg = 0, sent = 0, got = 0, i;
        size_t at = done;

        for (; nmsg < NOTIFY_WINDOW && at < count; nmsg++) {
            uint32_t n = count - at < EMU_HC_BATCH ? (uint32_t)(count - at) : EMU_HC_BATCH;

            memset(&reqs[nmsg], 0, EMU_HC_REQUEST_HEADER);
            reqs[nmsg].op = EMU_HC_EVT_NOTIFY_MANY;
            reqs[nmsg].count = n;
            memcpy(reqs[nmsg].refs, ports + at, n * sizeof(uint32_t));
            iov[nmsg] = (struct iovec){.iov_base = &reqs[nmsg], .iov_len = EMU_HC_REQUEST_SIZE(n)};
            msgs[nmsg] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[nmsg], .msg_iovlen = 1}};
            riov[nmsg] = (struct iovec){.iov_base = &replies[nmsg], .iov_len = sizeof(replies[nmsg])};
            rmsgs[nmsg] = (struct mmsghdr){.msg_hdr = {.msg_iov = &riov[nmsg], .msg_iovlen = 1}};
            at += n;
        }
        int sent_r = send_all(h->fd, msgs, nmsg, &sent);

        while (got < sent && r == 0) {
            /* the first reply blocks; whatever else has arrived comes with it */
            int n = recvmmsg(h->fd, rmsgs + got, sent - got, MSG_WAITFORONE, NULL);

            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                r = n == 0 || errno == ECONNRESET ? -ESRCH : -EPROTO;
                break;
            }
            for (i = got; i < got + (unsigned int)n && r == 0; i++) {
                if (rmsgs[i].msg_len != sizeof(replies[i]))
                    r = rmsgs[i].msg_len == 0 ? -ESRCH : -EPROTO;
                else if (replies[i].result < 0 || replies[i].count != reqs[i].count)
                    r = replies[i].result < 0 ? replies[i].result : -EPROTO;
                else
                    for (uint32_t k = 0; k < reqs[i].count; k++)
                        ret_results[done + k] = (int32_t)replies[i].a[k];
                if (r == 0)
                    done += reqs[i].count;
            }
            got += (unsigned int)n;
        }
        if (!r)
            r = sent_r;
    }
    pthread_mutex_unlock(&h->lock);
    return set_errno(r);
}

static int emu_pending_many(struct platform_evtchn *h, uint32_t *ret_ports, size_t max)
{
    struct mmsghdr msgs[MANY_CHUNK];
    struct iovec iov[MANY_CHUNK];
    unsigned int want = max < MANY_CHUNK ? (unsigned int)max : MANY_CHUNK, i;
    int n;

    if (!want)
        return set_errno(-EINVAL);
    for (i = 0; i < want; i++) {
        iov[i] = (struct iovec){.iov_base = &ret_ports[i], .iov_len = sizeof(ret_ports[i])};
        msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
    }
    do
        n = recvmmsg(h->evfd, msgs, want, MSG_DONTWAIT, NULL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return set_errno(errno == EWOULDBLOCK ? -EAGAIN : negative_errno());
    if (n == 0)
        return set_errno(-EAGAIN);
    for (i = 0; i < (unsigned int)n; i++) {
        /* End of file: the emulator dropped the handle (domain destroyed). */
        if (msgs[i].msg_len == 0)
            return i ? (int)i : set_errno(-ESRCH);
        if (msgs[i].msg_len != sizeof(uint32_t) || ret_ports[i] > INT32_MAX)
            return i ? (int)i : set_errno(-EPROTO);
    }
    return n;
}

static int emu_unmask_many(struct platform_evtchn *h, const uint32_t *ports, size_t count)
{
    struct emu_hc_request reqs[NOTIFY_WINDOW];
    struct mmsghdr msgs[NOTIFY_WINDOW];
    struct iovec iov[NOTIFY_WINDOW];
    size_t done = 0;
    int r = 0;

    pthread_mutex_lock(&h->lock);
    while (done < count && r == 0) {
        unsigned int nmsg = 0, sent;

        for (; nmsg < NOTIFY_WINDOW && done < count; nmsg++) {
            uint32_t n = count - done < EMU_HC_BATCH ? (uint32_t)(count - done) : EMU_HC_BATCH;

            memset(&reqs[nmsg], 0, EMU_HC_REQUEST_HEADER);
            reqs[nmsg].op = EMU_HC_EVT_UNMASK_MANY;
            reqs[nmsg].flags = EMU_HC_NO_REPLY;
            reqs[nmsg].count = n;
            memcpy(reqs[nmsg].refs, ports + done, n * sizeof(uint32_t));
            iov[nmsg] = (struct iovec){.iov_base = &reqs[nmsg], .iov_len = EMU_HC_REQUEST_SIZE(n)};
            msgs[nmsg] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[nmsg], .msg_iovlen = 1}};
            done += n;
        }
        r = send_all(h->fd, msgs, nmsg, &sent);
    }
    pthread_mutex_unlock(&h->lock);
    return set_errno(r);
}

static int emu_unmask(struct platform_evtchn *h, uint32_t port)
{
    return send_one_way(h, EMU_HC_EVT_UNMASK, port);
}

static int emu_unbind(struct platform_evtchn *h, uint32_t port)
{
    return call(h, EMU_HC_EVT_UNBIND, 0, port, NULL);
}

/* The wire's state (emu/proto/hypercall.h) as the platform API's; -EPROTO for a state the protocol lacks. */
static int state_from_wire(uint32_t wire, enum platform_evtchn_state *ret_state)
{
    switch (wire) {
    case EMU_HC_EVTCHN_CLOSED:
        *ret_state = PLATFORM_EVTCHN_CLOSED;
        return 0;
    case EMU_HC_EVTCHN_UNBOUND:
        *ret_state = PLATFORM_EVTCHN_UNBOUND;
        return 0;
    case EMU_HC_EVTCHN_INTERDOMAIN:
        *ret_state = PLATFORM_EVTCHN_INTERDOMAIN;
        return 0;
    }
    return -EPROTO;
}

static int emu_status(struct platform_evtchn *h, uint32_t port, enum platform_evtchn_state *ret_state)
{
    struct emu_hc_reply reply;
    int r;

    r = call(h, EMU_HC_EVT_STATUS, 0, port, &reply);
    if (r < 0)
        return r;
    if (reply.count < 1)
        return set_errno(-EPROTO);
    return set_errno(state_from_wire(reply.a[0], ret_state));
}

const struct platform_evtchn_ops emu_evtchn_ops = {
    .open = emu_evtchn_open,
    .close = emu_evtchn_close,
    .fd = emu_evtchn_fd,
    .bind_unbound_port = emu_bind_unbound_port,
    .bind_interdomain = emu_bind_interdomain,
    .notify = emu_notify,
    .notify_many = emu_notify_many,
    .pending = emu_pending,
    .pending_many = emu_pending_many,
    .unmask = emu_unmask,
    .unmask_many = emu_unmask_many,
    .unbind = emu_unbind,
    .status = emu_status,
    .fds = emu_evtchn_fds,
};
