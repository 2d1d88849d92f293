/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * emu backend: the hypercall socket client.  A connection to the emulated
 * hypervisor's socket of a domain (found again under its new domid after
 * a migration or restore); a request and its reply are one packet each,
 * descriptors (a grant's pages, an event channel's eventfd) passed beside
 * them.  The grant and event channel ops
 * (emu_grant.c, emu_evtchn.c) call it; the wire format is the emulator's
 * protocol (lib/emu/proto/hypercall.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu_backend.h"
#include "util/util.h"

static int connect_domain(const char *dir, uint32_t domid, struct sockaddr_un *sa)
{
    int fd, r;

    if (snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s/%u", dir, EMU_HYPERCALL_DIR, domid) >=
        (int)sizeof(sa->sun_path))
        return -ENAMETOOLONG;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return negative_errno();
    if (connect(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0) {
        r = errno == ENOENT || errno == ECONNREFUSED ? -ESRCH : negative_errno();
        close(fd);
        return r;
    }
    return fd;
}

int emu_hypercall_connect(uint32_t domid)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[PATH_MAX];
    uint32_t now;
    int r;

    r = emu_run_dir(dir, sizeof(dir));
    if (r < 0)
        return r;
    r = connect_domain(dir, domid, &sa);
    /* the domain was migrated, restored or rebooted: its processes are
     * the new domain's */
    if (r == -ESRCH && (now = emu_domid_follow(dir, domid)) != domid)
        r = connect_domain(dir, now, &sa);
    if (r < 0)
        log_error("cannot reach the emulated hypervisor at %s: %s", sa.sun_path, strerror(-r));
    return r;
}

int emu_hypercall_call(int fd, const struct emu_hc_request *req, int send_fd, struct emu_hc_reply *ret_reply,
                       int *ret_fds, unsigned int max_fds, unsigned int *ret_nfds)
{
    union {
        struct cmsghdr align;
        char space[CMSG_SPACE(sizeof(int) * EMU_HC_BATCH)];
    } control;
    size_t len = req->op == EMU_HC_GNT_UNSHARE || req->op == EMU_HC_GNT_MAP || req->op == EMU_HC_GNT_UNMAP
                     ? EMU_HC_REQUEST_SIZE(req->count)
                     : EMU_HC_REQUEST_HEADER;
    struct iovec iov = {.iov_base = (void *)req, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    struct emu_hc_reply reply;
    struct cmsghdr *cm;
    unsigned int n = 0, i;
    ssize_t got;
    int r;

    if (send_fd >= 0) {
        memset(&control, 0, sizeof(control));
        mh.msg_control = &control;
        mh.msg_controllen = CMSG_SPACE(sizeof(int));
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &send_fd, sizeof(int));
    }
    while (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0) {
        if (errno != EINTR)
            return errno == EPIPE || errno == ECONNRESET ? -ESRCH : negative_errno();
    }
    memset(&mh, 0, sizeof(mh));
    iov.iov_base = &reply;
    iov.iov_len = sizeof(reply);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = &control;
    mh.msg_controllen = sizeof(control);
    do
        got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return errno == ECONNRESET ? -ESRCH : negative_errno();
    if (got == 0)
        return -ESRCH;
    r = got == (ssize_t)sizeof(reply) && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ? 0 : -EPROTO;
    for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        size_t k, count;

        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (k = 0; k < count; k++) {
            int got_fd;

            memcpy(&got_fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
            if (n < max_fds && r == 0)
                ret_fds[n++] = got_fd;
            else
                close(got_fd);
        }
    }
    if (r == 0 && reply.result < 0 && n) {
        r = -EPROTO; /* descriptors with an error: not from our emulator */
    }
    if (r < 0) {
        for (i = 0; i < n; i++)
            close(ret_fds[i]);
        return r;
    }
    *ret_reply = reply;
    if (ret_nfds)
        *ret_nfds = n;
    return reply.result;
}
