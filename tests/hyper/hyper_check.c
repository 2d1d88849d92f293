/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cross-process checks of the emulated grant tables and event channels
 * against a running `xenstats emu` (started by test_hyper.sh with domains
 * 1 and 2).  Every actor is a separate process that joins its domain the
 * way any program does: XENSTATS_EMU_DOMID, then the platform layer.
 *
 *   hyper_check grants|evtchn|hostile|leak
 *
 * Prints one "ok N - what" line per check; the first failure prints
 * "FAIL: ..." and exits 1.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/proto/hypercall.h"
#include "emu/proto/run_dir.h"
#include "../integration/emu_actor.h"
#include "platform/emu_backend.h"
#include "platform/platform.h"
#include "util/util.h"

#define HY_LIMIT_CHUNKS 100

static void leave(struct platform *p)
{
    xenstats_host_close((struct xenstats_host *)p);
}

/* A child process running fn; channel is a socketpair end for both sides. */
struct actor {
    pid_t pid;
    int fd;
};

static struct actor spawn(void (*fn)(int fd, void *arg), void *arg)
{
    struct actor a;
    int sv[2];

    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    fflush(stdout);
    a.pid = fork();
    CHECK(a.pid >= 0, "fork");
    if (a.pid == 0) {
        close(sv[0]);
        fn(sv[1], arg);
        exit(0);
    }
    close(sv[1]);
    a.fd = sv[0];
    return a;
}

/* Wait for the actor; returns its exit status or 128+signal. */
static int reap(struct actor *a)
{
    int status;

    close(a->fd);
    CHECK(waitpid(a->pid, &status, 0) == a->pid, "waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void put(int fd, const void *buf, size_t len)
{
    CHECK(send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len, "send to peer");
}

static void get(int fd, void *buf, size_t len)
{
    ssize_t n = recv(fd, buf, len, 0);

    CHECK(n == (ssize_t)len, "recv from peer (%zd of %zu)", n, len);
}

static void put_u32(int fd, uint32_t v)
{
    put(fd, &v, sizeof(v));
}

static uint32_t get_u32(int fd)
{
    uint32_t v;

    get(fd, &v, sizeof(v));
    return v;
}

/* ---- grants ---------------------------------------------------------- */

struct share_arg {
    uint32_t grantee, count;
    int writable;
};

/* Shares pages, sends the refs, then obeys one-byte commands:
 * 'w' offset byte: write; 'r' offset: send the byte back; 'u': unshare;
 * 'q': quit (without unsharing: the exit revokes). */
static void granter(int fd, void *argp)
{
    struct share_arg *arg = argp;
    struct platform *p = join(1);
    uint32_t refs[256];
    uint8_t *mem;

    mem = platform_grant_share_pages(p, arg->grantee, arg->count, refs, arg->writable);
    CHECK(mem, "share_pages");
    for (uint32_t i = 0; i < arg->count; i++)
        mem[(size_t)i * 4096] = (uint8_t)(0xa0 + i);
    put(fd, refs, arg->count * sizeof(uint32_t));
    for (;;) {
        uint8_t cmd;
        uint32_t off, v;

        get(fd, &cmd, 1);
        switch (cmd) {
        case 'w':
            off = get_u32(fd);
            v = get_u32(fd);
            mem[off] = (uint8_t)v;
            put_u32(fd, 0);
            break;
        case 'r':
            off = get_u32(fd);
            put_u32(fd, mem[off]);
            break;
        case 'u':
            put_u32(fd, (uint32_t)platform_grant_unshare(p, mem, arg->count));
            break;
        case 'q':
            exit(0);
        default:
            exit(2);
        }
    }
}

static void cmd_write(int fd, uint32_t off, uint8_t v)
{
    put(fd, "w", 1);
    put_u32(fd, off);
    put_u32(fd, v);
    CHECK(get_u32(fd) == 0, "remote write");
}

static uint8_t cmd_read(int fd, uint32_t off)
{
    put(fd, "r", 1);
    put_u32(fd, off);
    return (uint8_t)get_u32(fd);
}

/* Runs in a child of the mapping process: must die of SIGSEGV. */
static void write_readonly(int fd, void *mem)
{
    (void)fd;
    /* The kernel's verdict, not a sanitizer's report of it. */
    signal(SIGSEGV, SIG_DFL);
    ((volatile uint8_t *)mem)[0] = 1;
    exit(0);
}

struct map_arg {
    uint32_t domid;
    const uint32_t *refs;
    uint32_t count;
    int prot;
    int want_errno; /* 0: must succeed */
};

static void try_map(int fd, void *argp)
{
    struct map_arg *arg = argp;
    struct platform *p = join(arg->domid);
    void *mem = platform_grant_map(p, 1, arg->count, arg->refs, arg->prot);

    if (arg->want_errno) {
        CHECK(!mem && errno == arg->want_errno, "map from domain %u: want errno %d", arg->domid, arg->want_errno);
    } else {
        CHECK(mem, "map from domain %u", arg->domid);
        CHECK(platform_grant_unmap(p, mem, arg->count) == 0, "unmap");
    }
    leave(p);
}

static void expect_map(uint32_t domid, const uint32_t *refs, uint32_t count, int prot, int want_errno)
{
    struct map_arg arg = {domid, refs, count, prot, want_errno};
    struct actor a = spawn(try_map, &arg);

    CHECK(reap(&a) == 0, "map check in domain %u", domid);
}

static void check_grants(void)
{
    struct share_arg rw = {.grantee = 2, .count = 3, .writable = 1}, ro = {.grantee = 2, .count = 2};
    struct platform *p2 = join(2);
    struct actor a, b, c;
    uint32_t refs[256], bad[1];
    uint8_t *mem;

    /* live both ways */
    a = spawn(granter, &rw);
    get(a.fd, refs, rw.count * sizeof(uint32_t));
    CHECK(refs[0] >= 8 && refs[0] < 4096, "refs skip Xen's reserved entries (got %u)", refs[0]);
    mem = platform_grant_map(p2, 1, rw.count, refs, PROT_READ | PROT_WRITE);
    CHECK(mem, "grantee maps writable");
    CHECK(mem[0] == 0xa0 && mem[4096] == 0xa1 && mem[8192] == 0xa2, "grantee sees the granter's bytes, in order");
    cmd_write(a.fd, 4096 + 7, 0x5a);
    CHECK(mem[4096 + 7] == 0x5a, "granter's later write visible to grantee");
    mem[8192 + 9] = 0xc3;
    CHECK(cmd_read(a.fd, 8192 + 9) == 0xc3, "grantee's write visible to granter");
    pass("grants: shared memory is live both ways across processes");

    /* only the grantee maps */
    expect_map(0, refs, 1, PROT_READ, EINVAL);
    expect_map(1, refs, 1, PROT_READ, EINVAL);
    expect_map(2, refs, 1, PROT_READ, 0);
    pass("grants: only the named grantee maps (others: EINVAL)");

    bad[0] = 4095;
    CHECK(!platform_grant_map(p2, 1, 1, bad, PROT_READ) && errno == EINVAL, "free ref: EINVAL");
    bad[0] = 5000;
    CHECK(!platform_grant_map(p2, 1, 1, bad, PROT_READ) && errno == EINVAL, "ref beyond the table: EINVAL");
    bad[0] = 3;
    CHECK(!platform_grant_map(p2, 1, 1, bad, PROT_READ) && errno == EINVAL, "reserved ref: EINVAL");
    CHECK(!platform_grant_map(p2, 999, 1, refs, PROT_READ) && errno == EINVAL, "no such domain: EINVAL");
    CHECK(platform_grant_unmap(p2, mem, 2) == -EINVAL, "unmap with another count: EINVAL");
    CHECK(platform_grant_unmap(p2, mem + 4096, 1) == -EINVAL, "unmap of another address: EINVAL");
    pass("grants: bad refs, domains and unmaps refused with gnttab's EINVAL");

    /* unshare while mapped: deferred, as gntalloc on Xen */
    put(a.fd, "u", 1);
    CHECK(get_u32(a.fd) == 0, "unshare while mapped");
    CHECK(mem[4096 + 7] == 0x5a, "mapping still valid after unshare");
    mem[0] = 0x11;
    CHECK(mem[0] == 0x11, "still writable");
    {
        void *again = platform_grant_map(p2, 1, 1, refs, PROT_READ);

        CHECK(again, "an unshared ref still mapped stays in use, mappable");
        CHECK(platform_grant_unmap(p2, again, 1) == 0, "unmap again");
    }
    CHECK(platform_grant_unmap(p2, mem, rw.count) == 0, "unmap");
    CHECK(!platform_grant_map(p2, 1, 1, refs, PROT_READ) && errno == EINVAL, "after the last unmap the ref is gone");
    put(a.fd, "q", 1);
    CHECK(reap(&a) == 0, "granter");
    pass("grants: unshare while mapped keeps the page until the grantee unmaps");

    /* read-only stays read-only */
    b = spawn(granter, &ro);
    get(b.fd, refs, ro.count * sizeof(uint32_t));
    CHECK(!platform_grant_map(p2, 1, ro.count, refs, PROT_READ | PROT_WRITE) && errno == EINVAL,
          "writable map of a read-only grant: EINVAL");
    mem = platform_grant_map(p2, 1, ro.count, refs, PROT_READ);
    CHECK(mem && mem[4096] == 0xa1, "read-only map");
    CHECK(mprotect(mem, 4096, PROT_READ | PROT_WRITE) == -1 && errno == EACCES, "mprotect to writable: EACCES");
    c = spawn(write_readonly, mem);
    CHECK(reap(&c) == 128 + SIGSEGV, "a write to the read-only mapping faults");
    cmd_write(b.fd, 5, 0x77);
    CHECK(mem[5] == 0x77, "read-only mapping still sees the granter's writes");
    pass("grants: read-only grants map read-only; a write faults with SIGSEGV");

    /* the granter's exit revokes; our mapping stays readable */
    put(b.fd, "q", 1);
    CHECK(reap(&b) == 0, "granter exit");
    CHECK(mem[5] == 0x77, "memory valid after the granter exited");
    CHECK(platform_grant_unmap(p2, mem, ro.count) == 0, "unmap after granter exit");
    CHECK(!platform_grant_map(p2, 1, 1, refs, PROT_READ) && errno == EINVAL, "refs of an exited granter: EINVAL");
    pass("grants: a granter's exit revokes its grants, mappings stay valid");

    /* many pages, several messages */
    {
        struct share_arg big = {.grantee = 2, .count = 200, .writable = 0};

        a = spawn(granter, &big);
        get(a.fd, refs, big.count * sizeof(uint32_t));
        mem = platform_grant_map(p2, 1, big.count, refs, PROT_READ);
        CHECK(mem, "map 200 pages");
        for (uint32_t i = 0; i < big.count; i++)
            CHECK(mem[(size_t)i * 4096] == (uint8_t)(0xa0 + i), "page %u in place", i);
        CHECK(platform_grant_unmap(p2, mem, big.count) == 0, "unmap 200");
        put(a.fd, "q", 1);
        CHECK(reap(&a) == 0, "granter");
        pass("grants: 200 pages shared and mapped contiguously in order");
    }
    leave(p2);
}

static void check_grant_limits(void)
{
    static uint32_t all_refs[4088];
    struct platform *p1 = join(1);
    void *mems[HY_LIMIT_CHUNKS];
    uint32_t refs[64];
    unsigned int n = 0, total = 0;

    /* 4096 entries, 8 reserved: 4088 shareable pages per domain. */
    while (n < HY_LIMIT_CHUNKS && (mems[n] = platform_grant_share_pages(p1, 2, 50, refs, 0)))
        n++, total += 50;
    CHECK(n < HY_LIMIT_CHUNKS && errno == ENOSPC, "table full: ENOSPC");
    CHECK(total == 4050, "%u pages shared before ENOSPC", total);
    CHECK(platform_grant_share_pages(p1, 2, 38, refs, 0), "the last 38 entries");
    CHECK(!platform_grant_share_pages(p1, 2, 1, refs, 0) && errno == ENOSPC, "one more: ENOSPC");
    CHECK(platform_grant_unshare(p1, mems[0], 50) == 0, "unshare frees entries");
    mems[0] = platform_grant_share_pages(p1, 2, 50, refs, 0);
    CHECK(mems[0], "share again after unshare");
    CHECK(platform_grant_unshare(p1, (uint8_t *)mems[1] + 4096, 1) == 0, "unshare one page of a share");
    CHECK(platform_grant_share_pages(p1, 2, 1, refs, 0), "that entry is free again");
    CHECK(platform_grant_unshare(p1, (uint8_t *)mems[1] + 100, 1) == -EINVAL, "unaligned unshare: EINVAL");
    CHECK(platform_grant_unshare(p1, refs, 1) == -EINVAL, "unshare of unshared memory: EINVAL");
    leave(p1); /* revokes all */
    p1 = join(1);
    mems[0] = platform_grant_share_pages(p1, 2, 4088, all_refs, 0);
    CHECK(mems[0], "closing the handle revoked every grant");
    leave(p1);
    pass("grants: per-domain table of 4088 shareable entries, ENOSPC beyond, freed by unshare and close");

    /* each share is one file kept open in the emulator: bounded too */
    p1 = join(1);
    for (n = 0; n < 300 && platform_grant_share_pages(p1, 2, 1, refs, 0); n++)
        ;
    CHECK(n == 256 && errno == ENOSPC, "256 separate shares, then ENOSPC (got %u)", n);
    leave(p1);
    pass("grants: at most 256 separate shares per domain (the emulator's descriptors), ENOSPC beyond");
}

/* ---- event channels -------------------------------------------------- */

static int wait_port(struct platform *p, struct platform_evtchn *h, int timeout_ms)
{
    struct pollfd pfd = {.fd = platform_evtchn_fd(p, h), .events = POLLIN};

    if (poll(&pfd, 1, timeout_ms) != 1)
        return -ETIMEDOUT;
    return platform_evtchn_pending(p, h);
}

/* Domain 2's side: bind to (1, port), then echo every event back. */
static void echo_peer(int fd, void *arg)
{
    struct platform *p = join(2);
    struct platform_evtchn *h = platform_evtchn_open(p);
    uint32_t remote = get_u32(fd);
    int port, got;

    CHECK(h, "open");
    port = platform_evtchn_bind_interdomain(p, h, 1, remote);
    CHECK(port > 0, "bind_interdomain");
    /* Xen marks a fresh interdomain port pending. */
    got = wait_port(p, h, 2000);
    CHECK(got == port, "bind leaves the local port pending (got %d)", got);
    CHECK(platform_evtchn_unmask(p, h, (uint32_t)port) == 0, "unmask");
    put_u32(fd, (uint32_t)port);
    for (;;) {
        uint32_t n = get_u32(fd);

        if (n == 0)
            break;
        for (uint32_t i = 0; i < n; i++) {
            got = wait_port(p, h, 2000);
            CHECK(got == port, "event %u from domain 1 (got %d)", i, got);
            CHECK(platform_evtchn_unmask(p, h, (uint32_t)port) == 0, "unmask");
            CHECK(platform_evtchn_notify(p, h, (uint32_t)port) == 0, "notify back");
        }
        put_u32(fd, 0);
    }
    platform_evtchn_close(p, h);
    leave(p);
}

static void check_evtchn(void)
{
    struct platform *p1 = join(1);
    struct platform_evtchn *h = platform_evtchn_open(p1), *h2;
    enum platform_evtchn_state st;
    struct actor a;
    int port, peer_port, got;

    CHECK(h, "open");
    port = platform_evtchn_bind_unbound_port(p1, h, 2);
    CHECK(port > 0, "alloc unbound");
    CHECK(platform_evtchn_status(p1, h, (uint32_t)port, &st) == 0 && st == PLATFORM_EVTCHN_UNBOUND, "unbound");
    a = spawn(echo_peer, NULL);
    put_u32(a.fd, (uint32_t)port);
    peer_port = (int)get_u32(a.fd);
    CHECK(peer_port > 0, "peer port");
    CHECK(platform_evtchn_status(p1, h, (uint32_t)port, &st) == 0 && st == PLATFORM_EVTCHN_INTERDOMAIN, "interdomain");
    CHECK(platform_evtchn_pending(p1, h) == -EAGAIN, "nothing pending before any notify");
    put_u32(a.fd, 100);
    for (int i = 0; i < 100; i++) {
        CHECK(platform_evtchn_notify(p1, h, (uint32_t)port) == 0, "notify");
        got = wait_port(p1, h, 2000);
        CHECK(got == port, "echo %d came back (got %d)", i, got);
        CHECK(platform_evtchn_unmask(p1, h, (uint32_t)port) == 0, "unmask");
    }
    CHECK(get_u32(a.fd) == 0, "peer done");
    pass("evtchn: 100 notifications each way between two processes, pollable fd");

    /* one more round trip, then the peer exits */
    put_u32(a.fd, 1);
    CHECK(platform_evtchn_notify(p1, h, (uint32_t)port) == 0, "notify");
    CHECK(wait_port(p1, h, 2000) == port, "echo");
    CHECK(get_u32(a.fd) == 0, "peer done");
    put_u32(a.fd, 0);
    CHECK(reap(&a) == 0, "peer exit");
    CHECK(platform_evtchn_status(p1, h, (uint32_t)port, &st) == 0 && st == PLATFORM_EVTCHN_UNBOUND,
          "peer's exit closes its port: ours is unbound again");
    CHECK(platform_evtchn_notify(p1, h, (uint32_t)port) == 0, "notify to an unbound port is dropped silently");
    pass("evtchn: a peer's exit is seen as the port going back to unbound");
    CHECK(platform_evtchn_unmask(p1, h, (uint32_t)port) == 0, "unmask");
    CHECK(platform_evtchn_pending(p1, h) == -EAGAIN, "nothing further");

    /* masked delivery coalesces: same domain, loopback through two handles */
    h2 = platform_evtchn_open(p1);
    CHECK(h2, "second handle");
    {
        int lp = platform_evtchn_bind_unbound_port(p1, h, 1), rp;

        CHECK(lp > 0, "loopback alloc");
        rp = platform_evtchn_bind_interdomain(p1, h2, EMU_HC_DOMID_SELF, (uint32_t)lp);
        CHECK(rp > 0, "loopback bind (DOMID_SELF)");
        CHECK(wait_port(p1, h2, 2000) == rp, "bind pending");
        /* rp stays masked: five notifications must come as one */
        for (int i = 0; i < 5; i++)
            CHECK(platform_evtchn_notify(p1, h, (uint32_t)lp) == 0, "notify %d", i);
        CHECK(platform_evtchn_pending(p1, h2) == -EAGAIN, "nothing delivered while masked");
        CHECK(platform_evtchn_unmask(p1, h2, (uint32_t)rp) == 0, "unmask");
        CHECK(wait_port(p1, h2, 2000) == rp, "one delivery after unmask");
        CHECK(platform_evtchn_unmask(p1, h2, (uint32_t)rp) == 0, "unmask");
        CHECK(wait_port(p1, h2, 100) == -ETIMEDOUT, "and only one");
        pass("evtchn: notifications to a masked port coalesce into one delivery at unmask");

        CHECK(platform_evtchn_notify(p1, h, (uint32_t)rp) == -ENOTCONN, "notify on another handle's port: ENOTCONN");
        CHECK(platform_evtchn_unbind(p1, h, (uint32_t)rp) == -ENOTCONN, "unbind another handle's port: ENOTCONN");
        CHECK(platform_evtchn_notify(p1, h, 5000) == -EINVAL, "notify beyond the ports: EINVAL");
        CHECK(platform_evtchn_unmask(p1, h, 5000) == 0, "unmask of a stranger port is ignored");
        CHECK(platform_evtchn_status(p1, h, 5000, &st) == -EINVAL, "status beyond the ports: EINVAL");
        CHECK(platform_evtchn_status(p1, h, 1000, &st) == 0 && st == PLATFORM_EVTCHN_CLOSED,
              "status of a free port: closed");
        CHECK(platform_evtchn_unbind(p1, h2, (uint32_t)rp) == 0, "unbind");
        CHECK(platform_evtchn_unbind(p1, h2, (uint32_t)rp) == -ENOTCONN, "unbind twice: ENOTCONN");
        CHECK(platform_evtchn_status(p1, h, (uint32_t)lp, &st) == 0 && st == PLATFORM_EVTCHN_UNBOUND,
              "unbind seen by the peer");
        rp = platform_evtchn_bind_interdomain(p1, h2, 1, (uint32_t)lp);
        CHECK(rp > 0, "the closer's domain may bind the port again, as on Xen");
        CHECK(platform_evtchn_unbind(p1, h, (uint32_t)lp) == 0 && platform_evtchn_unbind(p1, h2, (uint32_t)rp) == 0,
              "unbind both");
        pass("evtchn: ENOTCONN/EINVAL for foreign and bad ports; unbind seen by the peer; rebinding");
    }

    /* binding checks */
    {
        struct platform *p0 = join(0);
        struct platform_evtchn *h0 = platform_evtchn_open(p0);
        int for2 = platform_evtchn_bind_unbound_port(p1, h, 2);

        CHECK(h0 && for2 > 0, "dom0 handle and a port for domain 2");
        CHECK(platform_evtchn_bind_interdomain(p0, h0, 1, (uint32_t)for2) == -EINVAL, "wrong domain binding: EINVAL");
        CHECK(platform_evtchn_bind_interdomain(p0, h0, 1, 1000) == -EINVAL, "binding a free port: EINVAL");
        CHECK(platform_evtchn_bind_interdomain(p0, h0, 1, 100000) == -EINVAL, "binding beyond the ports: EINVAL");
        CHECK(platform_evtchn_bind_interdomain(p0, h0, 999, 1) == -ESRCH, "binding to no domain: ESRCH");
        CHECK(platform_evtchn_bind_interdomain(p0, h0, 1, (uint32_t)port) == -EINVAL,
              "port unbound for domain 2, not 0: EINVAL");
        CHECK(platform_evtchn_unbind(p1, h, (uint32_t)for2) == 0, "unbind");
        platform_evtchn_close(p0, h0);
        leave(p0);
        pass("evtchn: binding from the wrong domain or to a non-unbound port: EINVAL; no domain: ESRCH");
    }

    /* port limit: 1023 ports per domain (port 0 reserved) */
    {
        int n = 0, last;

        CHECK(platform_evtchn_unbind(p1, h, (uint32_t)port) == 0, "unbind");
        while ((last = platform_evtchn_bind_unbound_port(p1, h2, 2)) > 0)
            n++;
        CHECK(last == -ENOSPC, "ENOSPC when the ports run out (got %d)", last);
        CHECK(n == 1023, "1023 ports (got %d)", n);
        platform_evtchn_close(p1, h2); /* frees them all */
        CHECK(platform_evtchn_bind_unbound_port(p1, h, 2) == 1, "closing a handle frees its ports; lowest first");
        pass("evtchn: 1023 ports per domain, ENOSPC beyond, freed by closing the handle");
    }
    platform_evtchn_close(p1, h);
    leave(p1);
}

/* ---- hostile clients ------------------------------------------------- */

static int raw_connect(uint32_t domid)
{
    int fd = emu_hypercall_connect(domid);

    CHECK(fd >= 0, "raw connect");
    return fd;
}

/* The emulator hung up on fd (after whatever we sent). */
static bool hung_up(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    char buf[1024];

    for (int i = 0; i < 100000; i++) {
        if (poll(&pfd, 1, 2000) != 1)
            return false;
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return true;
        if (n < 0 && errno != EAGAIN)
            return false;
    }
    return false;
}

static void still_serving(void)
{
    struct platform *p = join(2);
    struct platform_evtchn *h = platform_evtchn_open(p);

    CHECK(h && platform_evtchn_bind_unbound_port(p, h, 1) > 0, "another client still served");
    platform_evtchn_close(p, h);
    leave(p);
}

static int raw_share(int fd, int memfd, uint32_t count)
{
    struct emu_hc_request req = {.op = EMU_HC_GNT_SHARE, .domid = 2, .count = count};
    struct emu_hc_reply reply;

    return emu_hypercall_call(fd, &req, memfd, &reply, NULL, 0, NULL);
}

static void check_hostile(void)
{
    struct emu_hc_request req;
    uint8_t junk[2048];
    int fd, memfd;

    fd = raw_connect(1);
    memset(junk, 0xee, sizeof(junk));
    CHECK(send(fd, junk, 7, 0) == 7, "send garbage");
    CHECK(hung_up(fd), "garbage: disconnected");
    close(fd);
    still_serving();
    pass("hostile: a garbage message gets the client disconnected, others keep working");

    fd = raw_connect(1);
    CHECK(send(fd, junk, sizeof(junk), 0) == (ssize_t)sizeof(junk), "send oversized");
    CHECK(hung_up(fd), "oversized: disconnected");
    close(fd);
    fd = raw_connect(1);
    memset(&req, 0, sizeof(req));
    req.op = EMU_HC_GNT_MAP;
    req.count = 3;
    CHECK(send(fd, &req, EMU_HC_REQUEST_SIZE(2), 0) > 0, "send short");
    CHECK(hung_up(fd), "count/size mismatch: disconnected");
    close(fd);
    fd = raw_connect(1);
    req.op = 999;
    CHECK(send(fd, &req, EMU_HC_REQUEST_HEADER, 0) > 0, "send unknown op");
    CHECK(hung_up(fd), "unknown op: disconnected");
    close(fd);
    fd = raw_connect(1);
    memset(&req, 0, sizeof(req));
    req.op = EMU_HC_EVT_STATUS;
    memfd = memfd_create("x", MFD_CLOEXEC);
    {
        struct emu_hc_reply reply;

        CHECK(emu_hypercall_call(fd, &req, memfd, &reply, NULL, 0, NULL) == -ESRCH, "fd where none expected");
    }
    close(memfd);
    close(fd);
    still_serving();
    pass("hostile: oversized, mis-sized, unknown and fd-carrying requests disconnect the client");

    fd = raw_connect(1);
    {
        int pfd[2];

        CHECK(pipe(pfd) == 0, "pipe");
        CHECK(raw_share(fd, pfd[0], 1) == -EBADF, "share of a pipe: EBADF");
        close(pfd[0]);
        close(pfd[1]);
    }
    memfd = memfd_create("x", MFD_CLOEXEC);
    CHECK(ftruncate(memfd, 4096) == 0, "ftruncate");
    CHECK(raw_share(fd, memfd, 1) == -EBADF, "share of an unsealed memfd: EBADF");
    close(memfd);
    memfd = memfd_create("x", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CHECK(ftruncate(memfd, 4096) == 0 && fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0, "seal");
    CHECK(raw_share(fd, memfd, 2) == -EINVAL, "share beyond the memfd's end: EINVAL");
    CHECK(raw_share(fd, memfd, 1) == 0, "a sealed memfd is accepted");
    close(memfd);
    memset(&req, 0, sizeof(req));
    req.op = EMU_HC_EVT_NOTIFY;
    {
        struct emu_hc_reply reply;

        CHECK(emu_hypercall_call(fd, &req, -1, &reply, NULL, 0, NULL) == -EBADF,
              "event channel op before EVT_OPEN: EBADF");
    }
    close(fd);
    pass("hostile: shares of pipes, unsealed or short memfds refused");

    /* a flood of requests without reading a reply */
    fd = raw_connect(1);
    {
        int sent = 0, err = 0;

        memset(&req, 0, sizeof(req));
        req.op = EMU_HC_EVT_STATUS;
        while (sent < 1000000) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};

            if (send(fd, &req, EMU_HC_REQUEST_HEADER, MSG_DONTWAIT | MSG_NOSIGNAL) > 0) {
                if (++sent == 1000)
                    still_serving();
                continue;
            }
            err = errno;
            if (err != EAGAIN || poll(&pfd, 1, 5000) != 1)
                break;
        }
        CHECK(err == EPIPE || err == ECONNRESET, "flooder disconnected (sent %d, errno %d)", sent, err);
        still_serving();
    }
    close(fd);
    pass("hostile: a client flooding without reading replies is disconnected; others served meanwhile");

    /* too many connections */
    {
        int fds[300], n, refused = 0;

        for (n = 0; n < 300; n++)
            fds[n] = raw_connect(2);
        usleep(300000);
        for (n = 0; n < 300; n++) {
            struct pollfd pfd = {.fd = fds[n], .events = POLLIN};

            if (poll(&pfd, 1, 0) == 1)
                refused++; /* closed by the emulator */
        }
        CHECK(refused > 0, "connections beyond the per-domain limit are closed");
        for (n = 0; n < 300; n++)
            close(fds[n]);
        usleep(200000);
        still_serving();
        pass("hostile: connections beyond 256 per domain are refused, service resumes after");
    }
}

/* ---- leaks ----------------------------------------------------------- */

static pid_t emulator_pid(void)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], *text = NULL;
    uint64_t pid;

    CHECK(emu_run_dir(dir, sizeof(dir)) == 0, "run dir");
    snprintf(path, sizeof(path), "%s/emu.pid", dir);
    CHECK(read_small_file(path, 32, &text, NULL) == 0, "pid file");
    text[strcspn(text, "\n")] = '\0';
    CHECK(parse_u64(text, INT_MAX, &pid) == 0, "pid");
    free(text);
    return (pid_t)pid;
}

static unsigned int fd_count(pid_t pid)
{
    char path[64];
    unsigned int n = 0;
    DIR *d;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    d = opendir(path);
    CHECK(d, "open %s", path);
    while (readdir(d))
        n++;
    closedir(d);
    return n - 2;
}

static long rss_kb(pid_t pid)
{
    char path[64], *text = NULL, *line;
    long kb = -1;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    CHECK(read_small_file(path, 1 << 16, &text, NULL) == 0, "status");
    line = strstr(text, "VmRSS:");
    if (line)
        kb = strtol(line + 6, NULL, 10);
    free(text);
    return kb;
}

static void cycles(unsigned int n)
{
    struct platform *p1 = join(1), *p2;
    struct platform_evtchn *h1 = platform_evtchn_open(p1), *h2;
    uint32_t ref;

    p2 = join(2);
    h2 = platform_evtchn_open(p2);
    CHECK(h1 && h2, "handles");
    for (unsigned int i = 0; i < n; i++) {
        uint8_t *mem = platform_grant_share_pages(p1, 2, 1, &ref, 1), *map;
        int lp, rp;

        CHECK(mem, "share %u", i);
        map = platform_grant_map(p2, 1, 1, &ref, PROT_READ | PROT_WRITE);
        CHECK(map, "map %u", i);
        CHECK(platform_grant_unmap(p2, map, 1) == 0 && platform_grant_unshare(p1, mem, 1) == 0, "unmap/unshare %u", i);
        lp = platform_evtchn_bind_unbound_port(p1, h1, 2);
        rp = platform_evtchn_bind_interdomain(p2, h2, 1, (uint32_t)lp);
        CHECK(lp > 0 && rp > 0, "bind %u", i);
        CHECK(platform_evtchn_notify(p1, h1, (uint32_t)lp) == 0, "notify %u", i);
        CHECK(platform_evtchn_unbind(p2, h2, (uint32_t)rp) == 0 && platform_evtchn_unbind(p1, h1, (uint32_t)lp) == 0,
              "unbind %u", i);
        while (platform_evtchn_pending(p2, h2) >= 0)
            ;
        if (i % 100 == 0) { /* and connect/disconnect, 1 in 100 with work left behind */
            struct platform_evtchn *h3 = platform_evtchn_open(p2);

            CHECK(h3 && platform_evtchn_bind_unbound_port(p1, h3, 1) > 0, "connect %u", i);
            platform_evtchn_close(p1, h3);
        }
        {
            int fd = emu_hypercall_connect(1);

            CHECK(fd >= 0, "connect");
            close(fd);
        }
    }
    platform_evtchn_close(p1, h1);
    platform_evtchn_close(p2, h2);
    leave(p1);
    leave(p2);
}

static void check_leak(void)
{
    pid_t pid = emulator_pid();
    unsigned int fds0, fds1;
    long rss0, rss1;

    cycles(1000); /* warm the allocator up */
    usleep(100000);
    fds0 = fd_count(pid);
    rss0 = rss_kb(pid);
    cycles(10000);
    usleep(200000);
    fds1 = fd_count(pid);
    rss1 = rss_kb(pid);
    printf("# emulator fds %u -> %u, RSS %ld -> %ld KiB\n", fds0, fds1, rss0, rss1);
    CHECK(fds1 == fds0, "fd count %u -> %u", fds0, fds1);
    /* Under ASan freed memory sits in quarantine, so RSS says nothing;
     * LeakSanitizer checks the emulator's memory when it exits instead. */
    if (!getenv("HYPER_SANITIZED"))
        CHECK(rss1 - rss0 < 1024, "RSS grew %ld KiB", rss1 - rss0);
    pass("no leaks: 10,000 share/map/unmap/unshare, bind/notify/unbind and connect/disconnect cycles");
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";

    signal(SIGPIPE, SIG_IGN);
    if (!strcmp(what, "grants")) {
        check_grants();
        check_grant_limits();
    } else if (!strcmp(what, "evtchn")) {
        check_evtchn();
    } else if (!strcmp(what, "hostile")) {
        check_hostile();
    } else if (!strcmp(what, "leak")) {
        check_leak();
    } else {
        fprintf(stderr, "usage: %s grants|evtchn|hostile|leak\n", argv[0]);
        return 2;
    }
    return 0;
}
