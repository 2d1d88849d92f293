/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The HTTP admission policy (agent/web/http_guard.c) on its own. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/web/http_guard.h"

#define S 1000000000ULL

static struct sockaddr_in addr(const char *ip)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(1234)};

    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

/* A real socket, so that eviction's shutdown can be seen (the peer stays
 * open until the process ends: only our end's shutdown makes send fail). */
static int sock(void)
{
    int sv[2];

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    return sv[0];
}

static bool is_shut(int fd)
{
    char c;

    return send(fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EPIPE;
}

struct client {
    struct http_guard_conn *c;
    int fd;
};

static struct client conn(struct http_guard *g, const char *ip, uint64_t now)
{
    struct sockaddr_in a = addr(ip);
    struct client k = {.fd = -1};

    if (!http_guard_admit(g, (struct sockaddr *)&a, sizeof(a), now))
        return k;
    k.fd = sock();
    k.c = http_guard_opened(g, k.fd, (struct sockaddr *)&a, sizeof(a), now);
    assert_non_null(k.c);
    return k;
}

static void test_slow_openers_make_room(void **state)
{
    struct http_guard_limits l = {.max_connections = 100, .max_per_client = 4, .grace_ns = S};
    struct http_guard *g = http_guard_new(&l);
    struct client slow[4], scraper, other;
    struct http_guard_stats st;

    (void)state;
    for (int i = 0; i < 4; i++)
        slow[i] = conn(g, "127.0.0.1", (uint64_t)i); /* never send a request */
    /* the same address, after the grace time: the oldest slow one goes */
    scraper = conn(g, "127.0.0.1", 2 * S);
    assert_non_null(scraper.c);
    assert_true(is_shut(slow[0].fd));
    assert_false(is_shut(slow[1].fd));
    http_guard_closed(g, slow[0].c); /* the server reaps it */
    /* another address is not counted against this one */
    other = conn(g, "127.0.0.2", 2 * S);
    assert_non_null(other.c);
    http_guard_get_stats(g, &st);
    assert_int_equal(st.evicted, 1);
    assert_int_equal(st.open, 5);
    assert_int_equal(st.refused, 0);
    http_guard_free(g);
    for (int i = 0; i < 4; i++)
        close(slow[i].fd);
    close(scraper.fd);
    close(other.fd);
}

static void test_answering_is_never_closed(void **state)
{
    struct http_guard_limits l = {.max_connections = 100, .max_per_client = 2, .grace_ns = S};
    struct http_guard *g = http_guard_new(&l);
    struct client a = conn(g, "10.0.0.1", 0), b = conn(g, "10.0.0.1", 0), c;

    (void)state;
    http_guard_busy(a.c, 0);
    http_guard_busy(b.c, 0);
    c = conn(g, "10.0.0.1", 2 * S); /* both answering: let in above the cap */
    assert_non_null(c.c);
    assert_false(is_shut(a.fd) || is_shut(b.fd));
    http_guard_closed(g, c.c);
    close(c.fd);
    /* one answered and idles now: it is the one to go */
    http_guard_done(b.c, 3 * S);
    c = conn(g, "10.0.0.1", 3 * S);
    assert_non_null(c.c);
    assert_true(is_shut(b.fd));
    assert_false(is_shut(a.fd));
    http_guard_closed(g, b.c);
    /* a response not read for 4 grace times gives way too */
    http_guard_busy(c.c, 3 * S);
    struct client d = conn(g, "10.0.0.1", 5 * S);
    assert_non_null(d.c);
    assert_true(is_shut(a.fd));
    assert_false(is_shut(c.fd));
    http_guard_free(g);
    close(a.fd);
    close(b.fd);
    close(c.fd);
    close(d.fd);
}

static void test_burst_pushes_out_oldest(void **state)
{
    struct http_guard_limits l = {.max_connections = 100, .max_per_client = 3, .grace_ns = S, .protect_ns = S / 20};
    struct http_guard *g = http_guard_new(&l);
    struct client k[6], late;

    (void)state;
    /* three 100 ms apart, then a burst: within the grace time, past the
     * protection, each new one pushes out the oldest */
    for (int i = 0; i < 3; i++)
        k[i] = conn(g, "127.0.0.1", (uint64_t)i * S / 10);
    for (int i = 3; i < 6; i++) {
        k[i] = conn(g, "127.0.0.1", 3 * S / 10 + (uint64_t)i);
        assert_non_null(k[i].c);
    }
    for (int i = 0; i < 3; i++)
        assert_true(is_shut(k[i].fd));
    for (int i = 3; i < 6; i++)
        assert_false(is_shut(k[i].fd));
    /* the burst's own connections are protected: the next comes in above
     * the cap, and the hard cap (here 2 * 100) is what refuses */
    late = conn(g, "127.0.0.1", 3 * S / 10 + 100);
    assert_non_null(late.c);
    assert_false(is_shut(k[3].fd));
    http_guard_free(g);
    close(late.fd);
    for (int i = 0; i < 6; i++)
        close(k[i].fd);
}

static void test_hard_cap(void **state)
{
    struct http_guard_limits l = {.max_connections = 2, .max_per_client = 2, .grace_ns = S, .hard_max = 3};
    struct http_guard *g = http_guard_new(&l);
    struct client k[4];
    struct http_guard_stats st;

    (void)state;
    for (int i = 0; i < 4; i++)
        k[i] = conn(g, "10.0.0.9", (uint64_t)i); /* all protected */
    assert_non_null(k[2].c);
    assert_null(k[3].c);
    http_guard_get_stats(g, &st);
    assert_int_equal(st.refused, 1);
    assert_int_equal(st.open, 3);
    http_guard_free(g);
    for (int i = 0; i < 3; i++)
        close(k[i].fd);
}

static void test_global_cap(void **state)
{
    struct http_guard_limits l = {.max_connections = 3, .max_per_client = 3, .grace_ns = S};
    struct http_guard *g = http_guard_new(&l);
    struct client a = conn(g, "10.0.0.1", 0), b = conn(g, "10.0.0.2", 0), c = conn(g, "10.0.0.3", 0), d;
    struct http_guard_stats st;

    (void)state;
    http_guard_busy(b.c, 0);
    http_guard_done(b.c, 10);
    http_guard_busy(c.c, 0);
    d = conn(g, "10.0.0.4", 2 * S);
    assert_non_null(d.c);
    assert_true(is_shut(a.fd)); /* slow first, before b (idle) */
    assert_false(is_shut(b.fd) || is_shut(c.fd));
    http_guard_get_stats(g, &st);
    assert_int_equal(st.open, 3);
    http_guard_closed(g, NULL);
    http_guard_free(g);
    http_guard_free(NULL);
    close(a.fd);
    close(b.fd);
    close(c.fd);
    close(d.fd);
}

/* A response in flight past its total deadline is cut, whatever it reads; others are not. */
static void test_deadline(void **state)
{
    struct http_guard *g = http_guard_new(NULL);
    struct http_guard_stats st;
    struct client slow = conn(g, "127.0.0.1", 0), quick = conn(g, "127.0.0.1", 0), idle = conn(g, "127.0.0.1", 0);

    (void)state;
    http_guard_busy(slow.c, 1 * S);
    http_guard_busy(quick.c, 1 * S);
    http_guard_done(quick.c, 2 * S);
    assert_int_equal(http_guard_expire(g, 30 * S, 30 * S), 0); /* 29 s in flight */
    assert_false(is_shut(slow.fd));
    assert_int_equal(http_guard_expire(g, 31 * S, 30 * S), 1);
    assert_true(is_shut(slow.fd));
    assert_false(is_shut(quick.fd)); /* answered, then idle: the idle timeout's business */
    assert_false(is_shut(idle.fd));
    assert_int_equal(http_guard_expire(g, 60 * S, 30 * S), 0); /* cut once */
    http_guard_get_stats(g, &st);
    assert_int_equal(st.expired, 1);
    assert_int_equal(st.open, 2);
    http_guard_closed(g, slow.c);
    http_guard_closed(g, quick.c);
    http_guard_closed(g, idle.c);
    http_guard_free(g);
}

/* The responses that hold a tag are cut together; an answered one forgets its tag. */
static void test_cut_by_tag(void **state)
{
    struct http_guard *g = http_guard_new(NULL);
    struct http_guard_stats st;
    int old_sample, new_sample;
    struct client a = conn(g, "127.0.0.1", 0), b = conn(g, "127.0.0.2", 0), c = conn(g, "127.0.0.1", 0),
                  d = conn(g, "127.0.0.1", 0);

    (void)state;
    http_guard_busy(a.c, S);
    http_guard_tag(a.c, &old_sample);
    http_guard_busy(b.c, S);
    http_guard_tag(b.c, &old_sample);
    http_guard_busy(c.c, S);
    http_guard_tag(c.c, &new_sample);
    http_guard_busy(d.c, S);
    http_guard_tag(d.c, &old_sample);
    http_guard_done(d.c, 2 * S);
    assert_int_equal(http_guard_cut(g, NULL), 0);
    assert_int_equal(http_guard_cut(g, &old_sample), 2);
    assert_true(is_shut(a.fd));
    assert_true(is_shut(b.fd));
    assert_false(is_shut(c.fd));
    assert_false(is_shut(d.fd));
    assert_int_equal(http_guard_cut(g, &old_sample), 0);
    http_guard_get_stats(g, &st);
    assert_int_equal(st.cut, 2);
    assert_int_equal(st.open, 2);
    http_guard_closed(g, a.c);
    http_guard_closed(g, b.c);
    http_guard_closed(g, c.c);
    http_guard_closed(g, d.c);
    http_guard_get_stats(g, &st);
    assert_int_equal(st.open, 0);
    http_guard_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_openers_make_room),
        cmocka_unit_test(test_answering_is_never_closed),
        cmocka_unit_test(test_burst_pushes_out_oldest),
        cmocka_unit_test(test_global_cap),
        cmocka_unit_test(test_hard_cap),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_cut_by_tag),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
