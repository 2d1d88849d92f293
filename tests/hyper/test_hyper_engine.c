/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the grant/event channel engine, driven directly through
 * hyper_handle() without sockets: the bookkeeping the integration tests
 * can only see from outside (entries in use, deferred release, teardown
 * of a domain, event socket back-pressure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/hyper/hyper_private.h"

static int call(struct hy_conn *c, uint32_t op, uint32_t domid, uint32_t port, uint32_t flags, uint32_t count,
                const uint32_t *refs, int fd, struct emu_hc_reply *ret_reply, int *ret_fd)
{
    struct emu_hc_request req = {.op = op, .domid = domid, .port = port, .flags = flags, .count = count};
    bool with_refs = op == EMU_HC_GNT_UNSHARE || op == EMU_HC_GNT_MAP || op == EMU_HC_GNT_UNMAP ||
                     op == EMU_HC_EVT_NOTIFY_MANY || op == EMU_HC_EVT_UNMASK_MANY;
    struct emu_hc_reply reply;
    int out[EMU_HC_BATCH];
    unsigned int nout = 0, i;

    if (with_refs)
        memcpy(req.refs, refs, count * sizeof(uint32_t));
    assert_int_equal(hyper_handle(c, &req, with_refs ? EMU_HC_REQUEST_SIZE(count) : EMU_HC_REQUEST_HEADER,
                                  &fd, fd >= 0 ? 1 : 0, &reply, out, &nout),
                     0);
    for (i = 0; i < nout; i++) {
        if (ret_fd && i == 0)
            *ret_fd = out[i];
        else
            close(out[i]);
    }
    if (ret_reply)
        *ret_reply = reply;
    return reply.result;
}

static int memfd_pages(uint32_t pages)
{
    int fd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)pages * EMU_HC_PAGE_SIZE), 0);
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    return fd;
}

static void test_deferred_unshare(void **state)
{
    struct hyper *hy = hyper_new(NULL);
    struct hy_conn *granter, *grantee;
    struct emu_hc_reply reply;
    uint32_t refs[2];

    assert_int_equal(hyper_domain_add(hy, 1), 0);
    assert_int_equal(hyper_domain_add(hy, 2), 0);
    assert_int_equal(hyper_domain_add(hy, 2), -EEXIST);
    granter = hyper_conn_new(hy, 1, -1);
    grantee = hyper_conn_new(hy, 2, -1);
    assert_non_null(granter);
    assert_non_null(grantee);
    assert_int_equal(call(granter, EMU_HC_GNT_SHARE, 2, 0, 0, 2, NULL, memfd_pages(2), &reply, NULL), 0);
    memcpy(refs, reply.a, sizeof(refs));
    assert_int_equal(refs[0], HY_GRANT_RESERVED);
    assert_int_equal(hyper_grants_in_use(hy, 1), 2);
    /* read-only grant: no writable map */
    assert_int_equal(call(grantee, EMU_HC_GNT_MAP, 1, 0, EMU_HC_WRITABLE, 1, refs, -1, NULL, NULL), -EINVAL);
    assert_int_equal(call(grantee, EMU_HC_GNT_MAP, 1, 0, 0, 2, refs, -1, &reply, NULL), 0);
    assert_int_equal(reply.a[0], 0);
    assert_int_equal(reply.a[1], 0); /* one descriptor for both pages */
    assert_int_equal(reply.b[1], 1);
    /* the granter cannot map, and cannot unshare what is not its own */
    assert_int_equal(call(granter, EMU_HC_GNT_MAP, 1, 0, 0, 1, refs, -1, NULL, NULL), -EINVAL);
    assert_int_equal(call(grantee, EMU_HC_GNT_UNSHARE, 0, 0, 0, 1, refs, -1, NULL, NULL), -EINVAL);
    /* unshare while mapped: still in use until unmapped */
    assert_int_equal(call(granter, EMU_HC_GNT_UNSHARE, 0, 0, 0, 2, refs, -1, NULL, NULL), 0);
    assert_int_equal(hyper_grants_in_use(hy, 1), 2);
    assert_int_equal(call(grantee, EMU_HC_GNT_UNMAP, 1, 0, 0, 1, refs, -1, NULL, NULL), 0);
    assert_int_equal(hyper_grants_in_use(hy, 1), 1);
    assert_int_equal(call(grantee, EMU_HC_GNT_UNMAP, 1, 0, 0, 1, refs, -1, NULL, NULL), -EINVAL);
    hyper_conn_close(grantee); /* drops the other mapping */
    assert_int_equal(hyper_grants_in_use(hy, 1), 0);
    hyper_free(hy);
}

/* A guest's handles carried from domain 1 to domain 3 (a migration). */
static void test_park(void **state)
{
    struct hyper *hy = hyper_new(NULL);
    struct hy_conn *g, *z, *fresh;
    struct emu_hc_reply reply;
    uint32_t old_ref, port;
    int evfd = -1, zfd = -1, ffd = -1, zport, fport;

    hyper_domain_add(hy, 0);
    hyper_domain_add(hy, 1);
    g = hyper_conn_new(hy, 1, -1);
    z = hyper_conn_new(hy, 0, -1);
    assert_int_equal(call(g, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &evfd), 0);
    assert_int_equal(call(z, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &zfd), 0);
    port = (uint32_t)call(g, EMU_HC_EVT_ALLOC_UNBOUND, 0, 0, 0, 0, NULL, -1, NULL, NULL);
    zport = call(z, EMU_HC_EVT_BIND_INTERDOMAIN, 1, port, 0, 0, NULL, -1, NULL, NULL);
    assert_true(zport > 0);
    assert_int_equal(call(g, EMU_HC_GNT_SHARE, 0, 0, 0, 1, NULL, memfd_pages(1), &reply, NULL), 0);
    old_ref = reply.a[0];

    hyper_domain_park(hy, 1, 7, NULL, NULL);
    hyper_domain_remove(hy, 1);
    assert_int_equal(hyper_nr_conns(hy), 2); /* kept */
    assert_int_equal(call(z, EMU_HC_EVT_STATUS, 0, (uint32_t)zport, 0, 0, NULL, -1, &reply, NULL), 0);
    assert_int_equal(reply.a[0], EMU_HC_EVTCHN_UNBOUND);
    hyper_domain_add(hy, 3);
    hyper_unpark(hy, 7, 3);
    assert_ptr_equal(g->dom, hyper_domain_find(hy, 3));

    /* a new handle in 3 gets the stale port's number; the stale one is dead */
    fresh = hyper_conn_new(hy, 3, -1);
    assert_int_equal(call(fresh, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &ffd), 0);
    fport = call(fresh, EMU_HC_EVT_ALLOC_UNBOUND, 0, 0, 0, 0, NULL, -1, NULL, NULL);
    assert_int_equal(fport, (int)port);
    assert_int_equal(call(g, EMU_HC_EVT_NOTIFY, 0, port, 0, 0, NULL, -1, NULL, NULL), 0);
    assert_int_equal(call(g, EMU_HC_EVT_NOTIFY_MANY, 0, 0, 0, 1, &port, -1, &reply, NULL), 0);
    assert_int_equal(reply.a[0], 0);
    assert_int_equal(hyper_stale_bugs_total(hy), 0);
    assert_int_equal(call(g, EMU_HC_EVT_UNBIND, 0, port, 0, 0, NULL, -1, NULL, NULL), 0);
    assert_int_equal(hyper_stale_bugs(hy, 3), 1);
    assert_int_equal(call(g, EMU_HC_EVT_UNBIND, 0, port, 0, 0, NULL, -1, NULL, NULL), -ENOTCONN);
    assert_int_equal(call(fresh, EMU_HC_EVT_STATUS, 0, port, 0, 0, NULL, -1, &reply, NULL), 0);
    assert_int_equal(reply.a[0], EMU_HC_EVTCHN_UNBOUND); /* the new one's port is untouched */

    /* grants: new shares are 3's and never the old ref; its unshare frees nothing */
    assert_int_equal(call(g, EMU_HC_GNT_SHARE, 0, 0, 0, 1, NULL, memfd_pages(1), &reply, NULL), 0);
    assert_int_not_equal(reply.a[0], old_ref);
    assert_int_equal(call(z, EMU_HC_GNT_MAP, 3, 0, 0, 1, &old_ref, -1, NULL, NULL), -EINVAL);
    assert_int_equal(call(g, EMU_HC_GNT_UNSHARE, 0, 0, 0, 1, &old_ref, -1, NULL, NULL), 0);
    assert_int_equal(hyper_grants_in_use(hy, 3), 1);
    assert_int_equal(call(g, EMU_HC_GNT_UNSHARE, 0, 0, 0, 1, &old_ref, -1, NULL, NULL), -EINVAL);

    /* parked and never resumed: closed, and not counted */
    hyper_domain_park(hy, 3, 8, NULL, NULL);
    hyper_unpark(hy, 8, UINT32_MAX);
    assert_int_equal(hyper_nr_conns(hy), 1);
    assert_int_equal(hyper_stale_bugs_total(hy), 1);
    close(evfd);
    close(zfd);
    close(ffd);
    hyper_free(hy);
}

static void test_domain_teardown(void **state)
{
    struct hyper *hy = hyper_new(NULL);
    struct hy_conn *a, *b;
    struct emu_hc_reply reply;
    uint32_t ref;
    int evfd = -1, port, peer;

    hyper_domain_add(hy, 1);
    hyper_domain_add(hy, 2);
    a = hyper_conn_new(hy, 1, -1);
    b = hyper_conn_new(hy, 2, -1);
    assert_int_equal(call(a, EMU_HC_EVT_ALLOC_UNBOUND, 2, 0, 0, 0, NULL, -1, NULL, NULL), -EBADF);
    assert_int_equal(call(a, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &evfd), 0);
    assert_true(evfd >= 0);
    close(evfd);
    assert_int_equal(call(a, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, NULL), -EEXIST);
    assert_int_equal(call(b, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &evfd), 0);
    port = call(a, EMU_HC_EVT_ALLOC_UNBOUND, 2, 0, 0, 0, NULL, -1, NULL, NULL);
    assert_int_equal(port, 1);
    peer = call(b, EMU_HC_EVT_BIND_INTERDOMAIN, 1, (uint32_t)port, 0, 0, NULL, -1, NULL, NULL);
    assert_int_equal(peer, 1);
    assert_int_equal(call(b, EMU_HC_GNT_SHARE, 1, 0, EMU_HC_WRITABLE, 1, NULL, memfd_pages(1), &reply, NULL), 0);
    ref = reply.a[0];
    assert_int_equal(call(a, EMU_HC_GNT_MAP, 2, 0, EMU_HC_WRITABLE, 1, &ref, -1, NULL, NULL), 0);
    /* domain 2 goes: a's port falls back to unbound for domain 2, the
     * mapping's bookkeeping goes, unmap of it is fine */
    hyper_domain_remove(hy, 2);
    assert_int_equal(call(a, EMU_HC_EVT_STATUS, 0, (uint32_t)port, 0, 0, NULL, -1, &reply, NULL), 0);
    assert_int_equal(reply.a[0], EMU_HC_EVTCHN_UNBOUND);
    assert_int_equal(reply.a[1], 2);
    assert_int_equal(a->nr_mapped, 0);
    assert_int_equal(call(a, EMU_HC_GNT_UNMAP, 2, 0, 0, 1, &ref, -1, NULL, NULL), 0);
    assert_int_equal(call(a, EMU_HC_GNT_MAP, 2, 0, 0, 1, &ref, -1, NULL, NULL), -EINVAL);
    assert_int_equal(hyper_nr_conns(hy), 1);
    /* the destroyed domain's event socket reads end of file */
    {
        uint32_t got[4];

        assert_int_equal(recv(evfd, got, sizeof(got), MSG_DONTWAIT), 4); /* the bind event */
        assert_int_equal(recv(evfd, got, sizeof(got), MSG_DONTWAIT), 0);
    }
    close(evfd);
    hyper_free(hy);
}

static void test_event_backpressure(void **state)
{
    struct hyper *hy = hyper_new(NULL);
    struct hy_conn *a, *b;
    int evfd = -1, n, got = 0;
    uint32_t port;

    hyper_domain_add(hy, 1);
    a = hyper_conn_new(hy, 1, -1);
    b = hyper_conn_new(hy, 1, -1);
    assert_int_equal(call(a, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, NULL), 0);
    assert_int_equal(call(b, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &evfd), 0);
    /* a small event socket, whatever the host's defaults */
    n = 4096;
    assert_int_equal(setsockopt(b->evfd, SOL_SOCKET, SO_SNDBUF, &n, sizeof(n)), 0);
    /* 511 loopback pairs: each bind delivers one event to b, more than the
     * event socket holds; the rest waits in the engine, none is lost */
    for (n = 0; n < 511; n++) {
        int lp = call(a, EMU_HC_EVT_ALLOC_UNBOUND, 1, 0, 0, 0, NULL, -1, NULL, NULL);

        assert_true(lp > 0);
        assert_true(call(b, EMU_HC_EVT_BIND_INTERDOMAIN, EMU_HC_DOMID_SELF, (uint32_t)lp, 0, 0, NULL, -1, NULL,
                         NULL) > 0);
    }
    assert_non_null(b->queue_head);
    for (;;) {
        while (recv(evfd, &port, sizeof(port), MSG_DONTWAIT) == sizeof(port))
            got++;
        if (!b->queue_head)
            break;
        /* without a loop, a new delivery is what flushes the queue */
        assert_int_equal(call(b, EMU_HC_EVT_UNMASK, 0, port, 0, 0, NULL, -1, NULL, NULL), 0);
        assert_int_equal(call(a, EMU_HC_EVT_NOTIFY, 0, port - 1, 0, 0, NULL, -1, NULL, NULL), 0);
    }
    assert_true(got >= 511);
    assert_int_equal(call(a, EMU_HC_EVT_ALLOC_UNBOUND, 1, 0, 0, 0, NULL, -1, NULL, NULL), 1023);
    assert_int_equal(call(a, EMU_HC_EVT_ALLOC_UNBOUND, 1, 0, 0, 0, NULL, -1, NULL, NULL), -ENOSPC);
    hyper_conn_close(b);
    hyper_conn_close(a);
    close(evfd);
    hyper_free(hy);
}

/* NOTIFY_MANY and UNMASK_MANY: each port as its own NOTIFY or UNMASK would be. */
static void test_many_ports(void **state)
{
    struct hyper *hy = hyper_new(NULL);
    struct hy_conn *a, *b;
    struct emu_hc_reply reply;
    uint32_t ports[4], peers[3], got[8];
    int evfd = -1, i;

    hyper_domain_add(hy, 1);
    hyper_domain_add(hy, 2);
    a = hyper_conn_new(hy, 1, -1);
    b = hyper_conn_new(hy, 2, -1);
    assert_int_equal(call(a, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, NULL), 0);
    assert_int_equal(call(b, EMU_HC_EVT_OPEN, 0, 0, 0, 0, NULL, -1, NULL, &evfd), 0);
    for (i = 0; i < 3; i++) {
        int lp = call(a, EMU_HC_EVT_ALLOC_UNBOUND, 2, 0, 0, 0, NULL, -1, NULL, NULL);

        assert_true(lp > 0);
        ports[i] = (uint32_t)lp;
        peers[i] = (uint32_t)call(b, EMU_HC_EVT_BIND_INTERDOMAIN, 1, ports[i], 0, 0, NULL, -1, NULL, NULL);
    }
    /* the bind events: each peer port pending, and masked until unmasked */
    for (i = 0; i < 3; i++)
        assert_int_equal(recv(evfd, &got[i], sizeof(got[i]), MSG_DONTWAIT), 4);
    ports[3] = 999; /* not a port of a's: -ENOTCONN, as NOTIFY */
    assert_int_equal(call(a, EMU_HC_EVT_NOTIFY_MANY, 0, 0, 0, 4, ports, -1, &reply, NULL), 0);
    assert_int_equal(reply.count, 4);
    for (i = 0; i < 3; i++)
        assert_int_equal((int32_t)reply.a[i], 0);
    assert_int_equal((int32_t)reply.a[3], -ENOTCONN);
    assert_int_equal(recv(evfd, got, sizeof(got[0]), MSG_DONTWAIT), -1); /* still masked */
    /* one-way: no reply is asked for, and ports not b's are ignored */
    assert_int_equal(call(b, EMU_HC_EVT_UNMASK_MANY, 0, 0, EMU_HC_NO_REPLY, 3, peers, -1, NULL, NULL), 0);
    for (i = 0; i < 3; i++) {
        assert_int_equal(recv(evfd, &got[i], sizeof(got[i]), MSG_DONTWAIT), 4);
        assert_int_equal(got[i], peers[i]);
    }
    ports[0] = 998;
    assert_int_equal(call(b, EMU_HC_EVT_UNMASK_MANY, 0, 0, 0, 1, ports, -1, NULL, NULL), 0);
    hyper_conn_close(b);
    hyper_conn_close(a);
    close(evfd);
    hyper_free(hy);
}

static void test_parse(void **state)
{
    struct emu_hc_request req = {.op = EMU_HC_GNT_MAP, .count = 2}, out;

    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_SIZE(2), 0, &out), 0);
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_SIZE(2), 1, &out), -EPROTO);
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_SIZE(1), 0, &out), -EPROTO);
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_HEADER - 1, 0, &out), -EPROTO);
    req.count = EMU_HC_BATCH + 1;
    assert_int_equal(hyper_parse(&req, sizeof(req), 0, &out), -EPROTO);
    req.op = EMU_HC_GNT_SHARE;
    req.count = 1;
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_HEADER, 0, &out), -EPROTO);
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_HEADER, 1, &out), 0);
    req.op = 0;
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_HEADER, 0, &out), -EPROTO);
    /* the many-port operations carry their ports as refs: 1 to 64 */
    req.op = EMU_HC_EVT_NOTIFY_MANY;
    req.count = 0;
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_HEADER, 0, &out), -EPROTO);
    req.count = 3;
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_SIZE(3), 0, &out), 0);
    req.op = EMU_HC_EVT_UNMASK_MANY;
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_SIZE(2), 0, &out), -EPROTO);
    req.op = EMU_HC_EVT_UNMASK_MANY + 1;
    assert_int_equal(hyper_parse(&req, EMU_HC_REQUEST_HEADER, 0, &out), -EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deferred_unshare),
        cmocka_unit_test(test_domain_teardown),
        cmocka_unit_test(test_park),
        cmocka_unit_test(test_event_backpressure),
        cmocka_unit_test(test_many_ports),
        cmocka_unit_test(test_parse),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
