/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emu backend's grant and event channel ops from several threads at
 * once (suite concurrency, also run under TSan): threads sharing, mapping
 * and unsharing through the same two host handles (domains 1 and 2, one
 * hypercall connection each, made on first use by whichever thread comes
 * first), while two more threads ping-pong events.  Against a running
 * `xenstats emu` with domains 1 and 2 (test_hyper.sh).
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "platform/platform.h"
#include "util/util.h"

#define GRANT_THREADS 4
#define ROUNDS 300
#define PINGS 300

static struct platform *p1, *p2;
static atomic_int failures;
static atomic_int ping_port, pong_port;

static void failed(const char *what, int err)
{
    fprintf(stderr, "FAIL: %s: %s\n", what, strerror(err));
    atomic_fetch_add(&failures, 1);
}

static struct platform *join(const char *domid)
{
    struct xenstats_host *host;

    setenv("XENSTATS_EMU_DOMID", domid, 1);
    host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    if (!host) {
        perror("join");
        exit(1);
    }
    return &host->platform;
}

static void *grant_worker(void *arg)
{
    uint8_t tag = (uint8_t)(uintptr_t)arg;

    for (int i = 0; i < ROUNDS; i++) {
        uint32_t refs[3];
        uint8_t *mem = platform_grant_share_pages(p1, 2, 3, refs, 1), *map;

        if (!mem) {
            failed("share", errno);
            return NULL;
        }
        mem[4096 * 2 + 1] = tag;
        map = platform_grant_map(p2, 1, 3, refs, PROT_READ | PROT_WRITE);
        if (!map) {
            failed("map", errno);
            return NULL;
        }
        if (map[4096 * 2 + 1] != tag)
            failed("page content", EIO);
        map[5] = (uint8_t)i;
        if (mem[5] != (uint8_t)i)
            failed("write back", EIO);
        if (platform_grant_unmap(p2, map, 3) < 0 || platform_grant_unshare(p1, mem, 3) < 0)
            failed("unmap/unshare", errno);
    }
    return NULL;
}

static int wait_port(struct platform *p, struct platform_evtchn *h)
{
    struct pollfd pfd = {.fd = platform_evtchn_fd(p, h), .events = POLLIN};
    int port;

    while ((port = platform_evtchn_pending(p, h)) == -EAGAIN)
        if (poll(&pfd, 1, 5000) != 1)
            return -ETIMEDOUT;
    return port;
}

/* Domain 1: allocates, then notifies and waits PINGS times. */
static void *pinger(void *arg)
{
    struct platform_evtchn *h = platform_evtchn_open(p1);
    int port;

    if (!h) {
        failed("open", errno);
        return NULL;
    }
    port = platform_evtchn_bind_unbound_port(p1, h, 2);
    atomic_store(&ping_port, port);
    /* Only the binder's port is pending after the bind, not ours. */
    while (atomic_load(&pong_port) == 0)
        usleep(1000);
    for (int i = 0; i < PINGS; i++) {
        if (platform_evtchn_notify(p1, h, (uint32_t)port) < 0 || wait_port(p1, h) != port) {
            failed("ping", ETIMEDOUT);
            break;
        }
        platform_evtchn_unmask(p1, h, (uint32_t)port);
    }
    platform_evtchn_close(p1, h);
    return NULL;
}

static void *ponger(void *arg)
{
    struct platform_evtchn *h = platform_evtchn_open(p2);
    int port, remote;

    if (!h) {
        failed("open", errno);
        return NULL;
    }
    while ((remote = atomic_load(&ping_port)) == 0)
        usleep(1000);
    port = platform_evtchn_bind_interdomain(p2, h, 1, (uint32_t)remote);
    if (port < 0 || wait_port(p2, h) != port) {
        failed("bind", -port);
        atomic_store(&pong_port, -1);
        platform_evtchn_close(p2, h);
        return NULL;
    }
    platform_evtchn_unmask(p2, h, (uint32_t)port);
    atomic_store(&pong_port, port);
    for (int i = 0; i < PINGS; i++) {
        if (wait_port(p2, h) != port) {
            failed("pong", ETIMEDOUT);
            break;
        }
        platform_evtchn_unmask(p2, h, (uint32_t)port);
        platform_evtchn_notify(p2, h, (uint32_t)port);
    }
    platform_evtchn_close(p2, h);
    return NULL;
}

int main(void)
{
    pthread_t t[GRANT_THREADS + 2];
    int i;

    p1 = join("1");
    p2 = join("2");
    for (i = 0; i < GRANT_THREADS; i++)
        pthread_create(&t[i], NULL, grant_worker, (void *)(uintptr_t)(0x40 + i));
    pthread_create(&t[i++], NULL, pinger, NULL);
    pthread_create(&t[i++], NULL, ponger, NULL);
    while (i-- > 0)
        pthread_join(t[i], NULL);
    xenstats_host_close((struct xenstats_host *)p1);
    xenstats_host_close((struct xenstats_host *)p2);
    if (atomic_load(&failures))
        return 1;
    printf("ok - %d threads sharing and mapping through shared handles, %d event round trips\n", GRANT_THREADS,
           PINGS);
    return 0;
}
