/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Grant tables and event channels of the emulated host, through the
 * platform layer as the PV stats code uses them.  No goal: baselines.
 *
 *   evtchn    round-trip latency between two processes (domain 0 and a
 *             guest): notify, the peer wakes in poll(), takes the port,
 *             unmasks, notifies back; p50/p99 over N round trips;
 *   grant     map+unmap of one read-only page granted by the guest, and
 *             of an 8-page set (a PV stats set of 4 name + 4 value pages),
 *             mean time per map+unmap pair.
 *
 *   xenstats emu -D name=bench &            # in one shell
 *   ./bench/bench_hyper [ROUNDTRIPS] [GUEST_DOMID]   (defaults 20000, 1)
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/platform.h"
#include "util/util.h"

static struct platform *join(uint32_t domid)
{
    struct xenstats_host *host;
    char text[16];

    snprintf(text, sizeof(text), "%u", domid);
    setenv("XENSTATS_EMU_DOMID", text, 1);
    host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    if (!host) {
        fprintf(stderr, "bench_hyper: cannot join domain %u: %s (is `xenstats emu -D name=bench` running?)\n",
                domid, strerror(errno));
        exit(1);
    }
    return &host->platform;
}

static int wait_event(struct platform *p, struct platform_evtchn *h)
{
    struct pollfd pfd = {.fd = platform_evtchn_fd(p, h), .events = POLLIN};
    int port;

    while ((port = platform_evtchn_pending(p, h)) == -EAGAIN)
        if (poll(&pfd, 1, 5000) != 1)
            return -ETIMEDOUT;
    return port;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The guest: binds to dom0's port, echoes every event until told to stop
 * (the pipe closes). */
static void echo(uint32_t guest, int ctl)
{
    struct platform *p = join(guest);
    struct platform_evtchn *h = platform_evtchn_open(p);
    uint32_t remote;
    int port;

    if (!h || recv(ctl, &remote, sizeof(remote), 0) != sizeof(remote))
        exit(1);
    port = platform_evtchn_bind_interdomain(p, h, 0, remote);
    if (port < 0 || wait_event(p, h) != port || platform_evtchn_unmask(p, h, (uint32_t)port) < 0)
        exit(1);
    if (send(ctl, &port, sizeof(port), 0) != sizeof(port))
        exit(1);
    for (;;) {
        if (wait_event(p, h) != port)
            exit(0); /* dom0 went away */
        platform_evtchn_unmask(p, h, (uint32_t)port);
        platform_evtchn_notify(p, h, (uint32_t)port);
    }
}

static void bench_evtchn(uint32_t guest, unsigned int n)
{
    struct platform *p = join(0);
    struct platform_evtchn *h = platform_evtchn_open(p);
    uint64_t *lat = calloc(n, sizeof(uint64_t));
    int sv[2], port, peer;
    pid_t pid;

    if (!h || !lat || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
        perror("bench_hyper: setup");
        exit(1);
    }
    port = platform_evtchn_bind_unbound_port(p, h, guest);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        echo(guest, sv[1]);
        exit(0);
    }
    close(sv[1]);
    if (port < 0 || send(sv[0], &port, sizeof(port), 0) != sizeof(port) ||
        recv(sv[0], &peer, sizeof(peer), 0) != sizeof(peer)) {
        fprintf(stderr, "bench_hyper: binding failed\n");
        exit(1);
    }
    for (unsigned int i = 0; i < n; i++) {
        uint64_t t0 = monotonic_ns();

        if (platform_evtchn_notify(p, h, (uint32_t)port) < 0 || wait_event(p, h) != port) {
            fprintf(stderr, "bench_hyper: round trip %u lost\n", i);
            exit(1);
        }
        platform_evtchn_unmask(p, h, (uint32_t)port);
        lat[i] = monotonic_ns() - t0;
    }
    platform_evtchn_close(p, h);
    close(sv[0]);
    waitpid(pid, NULL, 0);
    qsort(lat, n, sizeof(*lat), compare_u64);
    printf("evtchn round trip (2 processes, notify->poll->pending->unmask->notify back), %u samples:\n", n);
    printf("  p50 %.1f us   p99 %.1f us   max %.1f us\n", lat[n / 2] / 1e3, lat[(size_t)n * 99 / 100] / 1e3,
           lat[n - 1] / 1e3);
    free(lat);
    xenstats_host_close((struct xenstats_host *)p);
}

static void bench_grant(uint32_t guest, unsigned int pages, unsigned int rounds)
{
    struct platform *pg, *p0;
    uint32_t refs[8];
    uint8_t *shared;
    uint64_t t0, t1;
    pid_t pid;
    int sv[2];

    /* The guest grants in its own process; dom0 maps. */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
        exit(1);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        char c;

        close(sv[0]);
        pg = join(guest);
        shared = platform_grant_share_pages(pg, 0, pages, refs, 0);
        if (!shared || send(sv[1], refs, pages * sizeof(uint32_t), 0) < 0)
            exit(1);
        (void)!recv(sv[1], &c, 1, 0); /* until dom0 is done */
        exit(0);
    }
    close(sv[1]);
    if (recv(sv[0], refs, sizeof(refs), 0) != (ssize_t)(pages * sizeof(uint32_t))) {
        fprintf(stderr, "bench_hyper: sharing failed\n");
        exit(1);
    }
    p0 = join(0);
    t0 = monotonic_ns();
    for (unsigned int i = 0; i < rounds; i++) {
        void *m = platform_grant_map(p0, guest, pages, refs, PROT_READ);

        if (!m || platform_grant_unmap(p0, m, pages) < 0) {
            fprintf(stderr, "bench_hyper: map failed: %s\n", strerror(errno));
            exit(1);
        }
    }
    t1 = monotonic_ns();
    printf("grant map+unmap of %u read-only page%s: %.1f us per pair (%u pairs)\n", pages, pages > 1 ? "s" : "",
           (double)(t1 - t0) / rounds / 1e3, rounds);
    xenstats_host_close((struct xenstats_host *)p0);
    close(sv[0]);
    waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    uint64_t n = 20000, guest = 1;

    if ((argc > 1 && (parse_u64(argv[1], 10000000, &n) < 0 || n < 100)) ||
        (argc > 2 && parse_u64(argv[2], XENSTATS_DOMID_MAX, &guest) < 0) || argc > 3) {
        fprintf(stderr, "usage: %s [ROUNDTRIPS >= 100] [GUEST_DOMID]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    bench_evtchn((uint32_t)guest, (unsigned int)n);
    bench_grant((uint32_t)guest, 1, (unsigned int)n / 2);
    bench_grant((uint32_t)guest, 8, (unsigned int)n / 4);
    return 0;
}
