/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: the snapshot decoding (lib/export's reader and top's
 * view) against the contract of
 * docs/agent-api.md and against hostile input, the share computation, the
 * sort orders, the URL splitter and the HTTP response decoder.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_files.h"

#include "top/format.h"
#include "top/http.h"
#include "top/snapshot.h"
#include "top/sort.h"
#include "top/xentop.h"

static char *read_fixture(const char *name, size_t *ret_len)
{
    return top_test_file("fixtures", name, ret_len);
}

static struct top_snapshot *parse_fixture(const char *name)
{
    struct top_snapshot *snap = NULL;
    char err[256] = "";
    size_t len;
    char *text = read_fixture(name, &len);
    int r = top_snapshot_parse(text, len, &snap, err, sizeof(err));

    if (r)
        fail_msg("%s: %d %s", name, r, err);
    free(text);
    return snap;
}

/* Parse a string expecting -EBADMSG and a reason containing `want`. */
static void expect_bad(const char *json, const char *want)
{
    struct top_snapshot *snap = NULL;
    char err[512] = "";
    int r = top_snapshot_parse(json, strlen(json), &snap, err, sizeof(err));

    if (r != -EBADMSG || !strstr(err, want))
        fail_msg("input %.80s: r=%d err='%s', wanted '%s'", json, r, err, want);
    assert_null(snap);
}

static bool printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return false;
    return true;
}

static void test_parse_contract(void **state)
{
    struct top_snapshot *snap = parse_fixture("snapshot-a.json");
    const struct top_domain *web;
    const struct top_set *tx;

    (void)state;
    assert_int_equal(snap->monotonic_ns, 100000000000ULL);
    assert_string_equal(snap->backend, "emu");
    assert_int_equal(snap->nr_domains, 3);
    assert_int_equal(snap->domains[0].domid, 0);
    assert_string_equal(snap->domains[0].vcpu_error, "a domain cannot map its own statistics");
    assert_int_equal(snap->domains[0].nr_vcpu_rows, 0);
    web = top_snapshot_find(snap, 1);
    assert_non_null(web);
    assert_string_equal(web->name, "web");
    assert_null(web->vcpu_error);
    assert_int_equal(web->nr_vcpu_rows, 2);
    assert_int_equal(web->vcpus[0].state, 0);
    assert_int_equal(web->vcpus[1].state, 2);
    assert_true(web->vcpus[0].time_valid[0]);
    assert_true(web->vcpus[0].time[0] == 10.0);
    assert_int_equal(web->vcpus[0].changes, 100);
    assert_int_equal(web->nr_sets, 2);
    /* The worst of active and rejected. */
    assert_int_equal(web->worst, TOP_SET_REJECTED);
    assert_string_equal(web->worst_state, "rejected");
    tx = &web->sets[0];
    assert_string_equal(tx->provider, "Network #0");
    assert_string_equal(tx->set, "Tx");
    assert_int_equal(tx->nr_stats, 5);
    assert_string_equal(tx->stats[0].value, "12345");
    assert_string_equal(tx->stats[1].value, "0.5");
    assert_string_equal(tx->stats[2].value, "NaN");
    assert_string_equal(tx->stats[3].value, "xen-netfront 1.0");
    assert_string_equal(tx->stats[4].value, "-");
    assert_true(tx->latency_valid);
    assert_false(web->sets[1].latency_valid);
    assert_string_equal(web->sets[1].reason, "bad name page");
    assert_null(top_snapshot_find(snap, 2));
    assert_non_null(top_snapshot_find(snap, 7));
    top_snapshot_free(snap);
}

static void test_shares(void **state)
{
    struct top_snapshot *a = parse_fixture("snapshot-a.json"), *b = parse_fixture("snapshot-b.json");
    const struct top_domain *web, *db, *fresh, *dom0;

    (void)state;
    top_snapshot_rates(a, NULL);
    assert_false(a->have_rates);
    top_snapshot_rates(b, a);
    assert_true(b->have_rates);
    assert_true(b->elapsed == 2.0);
    web = top_snapshot_find(b, 1);
    /* vCPUs arrive out of order; they are matched by number. */
    assert_int_equal(web->vcpus[0].vcpu, 0);
    assert_true(web->vcpus[0].share_valid[0]);
    assert_float_equal(web->vcpus[0].share[0], 0.75, 1e-12);
    assert_float_equal(web->vcpus[0].share[1], 0.25, 1e-12);
    assert_float_equal(web->vcpus[0].share[2], 0.0, 1e-12);
    assert_float_equal(web->vcpus[0].changes_per_s, 5.0, 1e-12);
    assert_float_equal(web->vcpus[1].share[0], 0.25, 1e-12);
    assert_float_equal(web->vcpus[1].share[2], 0.5, 1e-12);
    assert_float_equal(web->vcpus[1].changes_per_s, 2.0, 1e-12);
    /* The domain: the mean share over its vCPUs, the sum of changes. */
    assert_float_equal(web->share[0], 0.5, 1e-12);
    assert_float_equal(web->share[1], 0.25, 1e-12);
    assert_float_equal(web->share[2], 0.25, 1e-12);
    assert_float_equal(web->share[3], 0.0, 1e-12);
    assert_true(web->rate_valid);
    assert_float_equal(web->changes_per_s, 7.0, 1e-12);
    assert_int_equal(web->worst, TOP_SET_STALE);
    /* Same domid, another name: a new domain, no interval yet. */
    db = top_snapshot_find(b, 7);
    assert_false(db->share_valid[0]);
    assert_false(db->rate_valid);
    fresh = top_snapshot_find(b, 9);
    assert_false(fresh->share_valid[0]);
    dom0 = top_snapshot_find(b, 0);
    assert_false(dom0->share_valid[0]);
    /* Rates are never computed backwards or over no time. */
    top_snapshot_rates(a, b);
    assert_false(a->have_rates);
    top_snapshot_rates(b, b);
    assert_false(b->have_rates);
    top_snapshot_free(a);
    top_snapshot_free(b);
}

/* parse_pair: two snapshots from JSON texts, the second's rates over the first */
static void parse_pair(const char *one, const char *two, struct top_snapshot **a, struct top_snapshot **b)
{
    char err[128];

    assert_int_equal(top_snapshot_parse(one, strlen(one), a, err, sizeof(err)), 0);
    assert_int_equal(top_snapshot_parse(two, strlen(two), b, err, sizeof(err)), 0);
    top_snapshot_rates(*b, *a);
}

/*
 * The host's clock and the snapshot's stamp are read at different moments:
 * 1.05 s between the stamps, 1.0 s on the clock the four times advanced
 * by. The shares are of the latter and add up to 100 %; a vCPU with a time
 * unknown falls back to the stamps' interval.
 */
static void test_shares_on_the_host_clock(void **state)
{
    const char *one = "{\"version\":1,\"monotonic_ns\":1000000000,\"domains\":[{\"domid\":1,\"name\":\"a\","
                      "\"vcpus\":[{\"vcpu\":0,\"running\":5,\"runnable\":1,\"blocked\":1,\"offline\":0},"
                      "{\"vcpu\":1,\"running\":5,\"runnable\":1,\"blocked\":null,\"offline\":0}]}]}";
    const char *two = "{\"version\":1,\"monotonic_ns\":2050000000,\"domains\":[{\"domid\":1,\"name\":\"a\","
                      "\"vcpus\":[{\"vcpu\":0,\"running\":5.25,\"runnable\":1,\"blocked\":1.75,\"offline\":0},"
                      "{\"vcpu\":1,\"running\":5.21,\"runnable\":1,\"blocked\":null,\"offline\":0}]}]}";
    struct top_snapshot *a = NULL, *b = NULL;
    const struct top_vcpu *v0, *v1;

    (void)state;
    parse_pair(one, two, &a, &b);
    v0 = &b->domains[0].vcpus[0];
    v1 = &b->domains[0].vcpus[1];
    assert_float_equal(v0->share[0], 0.25, 1e-9);
    assert_float_equal(v0->share[2], 0.75, 1e-9);
    assert_float_equal(v0->share[0] + v0->share[1] + v0->share[2] + v0->share[3], 1.0, 1e-9);
    assert_float_equal(v1->share[0], 0.21 / 1.05, 1e-9);
    assert_false(v1->share_valid[2]);
    top_snapshot_free(a);
    top_snapshot_free(b);
}

static void test_counter_going_backwards(void **state)
{
    const char *one = "{\"version\":1,\"monotonic_ns\":1000000000,\"domains\":[{\"domid\":1,\"name\":\"a\","
                      "\"vcpus\":[{\"vcpu\":0,\"running\":5,\"runnable\":1,\"blocked\":1,\"offline\":0,"
                      "\"state_changes\":9}]}]}";
    const char *two = "{\"version\":1,\"monotonic_ns\":2000000000,\"domains\":[{\"domid\":1,\"name\":\"a\","
                      "\"vcpus\":[{\"vcpu\":0,\"running\":4,\"runnable\":1.5,\"blocked\":null,\"offline\":0,"
                      "\"state_changes\":3}]}]}";
    struct top_snapshot *a = NULL, *b = NULL;

    (void)state;
    parse_pair(one, two, &a, &b);
    assert_false(b->domains[0].vcpus[0].share_valid[0]); /* went backwards */
    assert_true(b->domains[0].vcpus[0].share_valid[1]);
    assert_float_equal(b->domains[0].vcpus[0].share[1], 0.5, 1e-12);
    assert_false(b->domains[0].vcpus[0].share_valid[2]); /* null now */
    assert_false(b->domains[0].vcpus[0].rate_valid);
    assert_false(b->domains[0].rate_valid);
    top_snapshot_free(a);
    top_snapshot_free(b);
}

static void test_sort(void **state)
{
    struct top_snapshot *a = parse_fixture("snapshot-a.json"), *b = parse_fixture("snapshot-b.json");
    size_t order[4];
    enum top_sort_key key;

    (void)state;
    top_snapshot_rates(b, a);
    top_sort(b, TOP_SORT_DOMID, false, order);
    assert_int_equal(b->domains[order[0]].domid, 0);
    assert_int_equal(b->domains[order[3]].domid, 9);
    top_sort(b, TOP_SORT_DOMID, true, order);
    assert_int_equal(b->domains[order[0]].domid, 9);
    /* Figures biggest first; unknown ones last, in domid order. */
    top_sort(b, TOP_SORT_RUNNING, false, order);
    assert_int_equal(b->domains[order[0]].domid, 1);
    assert_int_equal(b->domains[order[1]].domid, 0);
    assert_int_equal(b->domains[order[2]].domid, 7);
    assert_int_equal(b->domains[order[3]].domid, 9);
    /* Reversed: smallest first, unknown ones still last. */
    top_sort(b, TOP_SORT_RUNNING, true, order);
    assert_int_equal(b->domains[order[0]].domid, 1);
    assert_int_equal(b->domains[order[1]].domid, 0);
    /* as xentop: case does not count */
    top_sort(b, TOP_SORT_NAME, false, order);
    assert_string_equal(b->domains[order[0]].name, "db-reborn");
    assert_string_equal(b->domains[order[1]].name, "Domain-0");
    top_sort(b, TOP_SORT_WORST, false, order);
    assert_int_equal(b->domains[order[0]].domid, 1);
    assert_int_equal(top_sort_parse("runnable", &key), 0);
    assert_int_equal(key, TOP_SORT_RUNNABLE);
    assert_int_equal(top_sort_parse("cpu", &key), -EINVAL);
    top_snapshot_free(a);
    top_snapshot_free(b);
}

static void test_hostile_strings(void **state)
{
    struct top_snapshot *snap = parse_fixture("hostile.json");
    const struct top_domain *d = &snap->domains[0];
    const struct top_set *set = &d->sets[0];
    size_t i;

    (void)state;
    assert_true(printable(d->name));
    assert_string_equal(d->name, "evil\\x1b[2J\\x1b]0;pwned\\x07\\x0d\\x0aname\\\\x");
    assert_int_equal(d->vcpus[0].state, -1); /* unknown state, not trusted */
    assert_false(d->vcpus[0].time_valid[1]);
    assert_string_equal(set->provider, "P\\x00rov");
    assert_string_equal(set->set, "S\\xc2\\x9b1m");
    assert_int_equal(set->severity, TOP_SET_UNKNOWN);
    assert_true(printable(set->state));
    assert_true(printable(set->reason));
    for (i = 0; i < set->nr_stats; i++) {
        assert_true(printable(set->stats[i].name));
        assert_true(printable(set->stats[i].value));
    }
    assert_string_equal(set->stats[1].value, "18446744073709551615");
    assert_string_equal(set->stats[2].value, "-5");
    assert_string_equal(set->stats[3].value, "+Inf");
    top_snapshot_free(snap);
}

static void test_huge_string(void **state)
{
    const size_t n = 8u << 20;
    const char *head = "{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"name\":\"";
    const char *tail = "\"}]}";
    char *json = malloc(strlen(head) + n + strlen(tail) + 1), err[128];
    struct top_snapshot *snap = NULL;
    size_t len;

    (void)state;
    assert_non_null(json);
    strcpy(json, head);
    len = strlen(head);
    memset(json + len, 'A', n);
    /* a control character, escaped in the JSON: escaped in the render too */
    memcpy(json + len + 1, "\\u001b", 6);
    len += n;
    strcpy(json + len, tail);
    len += strlen(tail);
    assert_int_equal(top_snapshot_parse(json, len, &snap, err, sizeof(err)), 0);
    assert_true(printable(snap->domains[0].name));
    assert_memory_equal(snap->domains[0].name, "A\\x1bAA", 7);
    assert_true(strlen(snap->domains[0].name) <= TOP_MAX_STRING + 3);
    assert_string_equal(snap->domains[0].name + strlen(snap->domains[0].name) - 3, "...");
    top_snapshot_free(snap);
    snap = NULL;
    /* raw, it is not JSON (RFC 8259), whichever json-c (0.16 took it, 0.18 not) */
    json[strlen(head) + 1] = '\x1b';
    assert_int_equal(top_snapshot_parse(json, len, &snap, err, sizeof(err)), -EBADMSG);
    assert_non_null(strstr(err, "raw control character"));
    assert_null(snap);
    free(json);
}

static void test_malformed(void **state)
{
    char deep[4096];
    size_t i;

    (void)state;
    expect_bad("", "truncated");
    expect_bad("{\"version\":1,", "truncated");
    expect_bad("not json", "not JSON");
    expect_bad("null", "not JSON");
    expect_bad("[1,2]", "expected an object");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[]} trailing", "not JSON");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[]} {}", "not JSON");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[],}", "not JSON");
    expect_bad("{\"monotonic_ns\":1,\"domains\":[]}", "version: missing");
    expect_bad("{\"version\":2,\"monotonic_ns\":1,\"domains\":[]}", "not a version");
    expect_bad("{\"version\":\"1\",\"monotonic_ns\":1,\"domains\":[]}", "version: expected an integer");
    expect_bad("{\"version\":1,\"domains\":[]}", "monotonic_ns: missing");
    expect_bad("{\"version\":1,\"monotonic_ns\":-1,\"domains\":[]}", "monotonic_ns: negative");
    expect_bad("{\"version\":1,\"monotonic_ns\":1.5,\"domains\":[]}", "monotonic_ns: expected an integer");
    expect_bad("{\"version\":1,\"monotonic_ns\":1}", "domains: missing");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":{}}", "domains: expected an array");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[7]}", "domains[0]: expected an object");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"name\":\"x\"}]}", "domains[0].domid: missing");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":null}]}", "domid: must not be null");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":99999999999}]}", "out of range");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"name\":5}]}",
               "domains[0].name: expected a string");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1},{\"domid\":1}]}", "listed twice");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":0,\"running\":\"1\"}]}]}",
               "domains[0].vcpus[0].running: expected a number or null");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":0,\"running\":-1}]}]}",
               "non-negative");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":0},{\"vcpu\":0}]}]}",
               "vCPU 0 listed twice");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":99999}]}]}",
               "out of range");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":0,\"state\":1}]}]}",
               "state: expected a string or null");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"pv_sets\":[{\"set\":\"a\",\"state\":\"active\"}]}]}",
               "pv_sets[0].provider: missing");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"pv_sets\":[{\"provider\":\"p\",\"set\":\"a\","
               "\"state\":\"active\",\"stats\":[{\"name\":\"n\",\"value\":[1]}]}]}]}",
               "pv_sets[0].stats[0].value: expected a number, a string or null");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"pv_sets\":[{\"provider\":\"p\",\"set\":\"a\","
               "\"state\":\"active\",\"samples\":-3}]}]}",
               "samples: negative");
    /* Fails after the sets were counted, before they were parsed: freed cleanly. */
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":\"x\"}],"
               "\"pv_sets\":[{},{}]}]}",
               "domains[0].vcpus[0].vcpu: expected an integer");
    /* Nesting deeper than the tokenizer allows. */
    for (i = 0; i < 2000; i++)
        deep[i] = '[';
    deep[i] = '\0';
    expect_bad(deep, "not JSON");
}

static void test_escape(void **state)
{
    char *s;

    (void)state;
    s = top_escape("a\\b\x7f\xff", 5);
    assert_string_equal(s, "a\\\\b\\x7f\\xff");
    free(s);
    s = top_escape("", 0);
    assert_string_equal(s, "");
    free(s);
}

static void test_url(void **state)
{
    struct top_url u;
    char err[128];

    (void)state;
    assert_int_equal(top_url_parse("http://127.0.0.1:9740", "/api/v1/snapshot", &u, err, sizeof(err)), 0);
    assert_string_equal(u.host, "127.0.0.1");
    assert_string_equal(u.port, "9740");
    assert_string_equal(u.path, "/api/v1/snapshot");
    assert_int_equal(top_url_parse("HTTP://agent.example/prefix/", "/api/v1/snapshot", &u, err, sizeof(err)), 0);
    assert_string_equal(u.port, "80");
    assert_string_equal(u.path, "/prefix/api/v1/snapshot");
    assert_int_equal(top_url_parse("http://[::1]:80/api/v1/snapshot", "/api/v1/snapshot", &u, err, sizeof(err)), 0);
    assert_string_equal(u.host, "::1");
    assert_string_equal(u.path, "/api/v1/snapshot");
    assert_int_equal(top_url_parse("localhost:9740", "/api/v1/snapshot", &u, err, sizeof(err)), 0);
    assert_string_equal(u.host, "localhost");
    assert_string_equal(u.port, "9740");
    assert_string_equal(u.path, "/api/v1/snapshot");
    assert_int_equal(top_url_parse("[::1]:9740", "/s", &u, err, sizeof(err)), 0);
    assert_string_equal(u.host, "::1");
    assert_int_equal(top_url_parse("https://x", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "https"));
    assert_int_equal(top_url_parse("ftp://x", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("x:y:z", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://x:0", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://x:70000", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://x:12a", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://[::1", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://x/a b", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://x/a\r\nHost: y", "/s", &u, err, sizeof(err)), -EINVAL);
    assert_int_equal(top_url_parse("http://x/?q=1", "/s", &u, err, sizeof(err)), -EINVAL);
}

/* Decode a response held in a fresh buffer with room for the NUL. */
static int decode(const char *response, char **ret_copy, char **ret_body, size_t *ret_len, char *err, size_t errlen)
{
    *ret_copy = strdup(response);
    assert_non_null(*ret_copy);
    return top_http_parse_response(*ret_copy, strlen(response), ret_body, ret_len, err, errlen);
}

static void test_http_response(void **state)
{
    char *copy, *body, err[256];
    size_t len;

    (void)state;
    assert_int_equal(decode("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello world", &copy, &body, &len, err,
                            sizeof(err)),
                     0);
    assert_int_equal(len, 5);
    assert_string_equal(body, "hello");
    free(copy);
    assert_int_equal(decode("HTTP/1.0 200 OK\r\nServer: x\r\n\r\n{}\n", &copy, &body, &len, err, sizeof(err)), 0);
    assert_string_equal(body, "{}\n");
    free(copy);
    assert_int_equal(decode("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\nA;x=y\r\n0123456789\r\n"
                            "0\r\n\r\n",
                            &copy, &body, &len, err, sizeof(err)),
                     0);
    assert_string_equal(body, "abc0123456789");
    assert_int_equal(len, 13);
    free(copy);
    assert_int_equal(decode("HTTP/1.1 404 Not Found\r\n\r\n", &copy, &body, &len, err, sizeof(err)), -EPROTO);
    assert_string_equal(err, "HTTP status 404 Not Found");
    free(copy);
    assert_int_equal(decode("HTTP/1.1 500 \x1b[2Jevil\r\n\r\n", &copy, &body, &len, err, sizeof(err)), -EPROTO);
    assert_true(printable(err));
    free(copy);
    assert_int_equal(decode("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort", &copy, &body, &len, err,
                            sizeof(err)),
                     -EPROTO);
    assert_non_null(strstr(err, "truncated"));
    free(copy);
    assert_int_equal(decode("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", &copy, &body, &len,
                            err, sizeof(err)),
                     -EPROTO);
    free(copy);
    assert_int_equal(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\nab", &copy, &body,
                            &len, err, sizeof(err)),
                     -EPROTO);
    free(copy);
    assert_int_equal(decode("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx", &copy, &body, &len, err,
                            sizeof(err)),
                     -EPROTO);
    free(copy);
    assert_int_equal(decode("SSH-2.0-OpenSSH\r\n\r\n", &copy, &body, &len, err, sizeof(err)), -EPROTO);
    free(copy);
    assert_int_equal(decode("", &copy, &body, &len, err, sizeof(err)), -EPROTO);
    assert_non_null(strstr(err, "closed"));
    free(copy);
}

static void test_batch_format(void **state)
{
    struct top_snapshot *a = parse_fixture("snapshot-a.json"), *b = parse_fixture("snapshot-b.json");
    char row[1024];
    int width;

    (void)state;
    top_snapshot_rates(b, a);
    width = top_name_width(b, 24);
    assert_int_equal(width, 9); /* "db-reborn" */
    top_format_header(row, sizeof(row), width, TOP_SORT_RUNNING);
    assert_non_null(strstr(row, "RUN%*"));
    top_format_row(row, sizeof(row), top_snapshot_find(b, 1), width, true);
    /* CPU%: 1.5 s of CPU time in the 2 s between the snapshots */
    assert_string_equal(row, "     1 web       ----pr   75.0      22    512M    1.0G     2   50.0   25.0   25.0    0.0     7.0"
                             "     2 stale");
    top_format_row(row, sizeof(row), top_snapshot_find(b, 9), width, true);
    assert_string_equal(row, "     9 new            ?      -       -       -       -     1      -      -      -      -       -"
                             "     0 -");
    top_snapshot_free(a);
    top_snapshot_free(b);
}

/* The agent's JSON as xentop -b lays it out: --batch --xentop from an agent. */
static struct xentop_node *xentop_fixture(const char *name)
{
    struct export_snapshot *s = NULL;
    struct xentop_node *node = NULL;
    char err[256] = "";
    size_t len;
    char *text = read_fixture(name, &len);

    if (export_snapshot_read_json(text, len, &s, err, sizeof(err)) < 0)
        fail_msg("%s: %s", name, err);
    assert_int_equal(xentop_node_from_snapshot(s, &node), 0);
    export_snapshot_unref(s);
    free(text);
    return node;
}

static void test_xentop_format(void **state)
{
    struct xentop_node *a = xentop_fixture("snapshot-a.json"), *b = xentop_fixture("snapshot-b.json");
    struct xentop_options opts = {0};
    struct xentop_state st;
    char *text = NULL, *line;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    assert_non_null(out);
    xentop_state_init(&st);
    assert_int_equal(xentop_print_round(out, b, a, &opts, &st), 0);
    fclose(out);
    line = strtok(text, "\n");
    assert_string_equal(line, "      NAME  STATE   CPU(sec) CPU(%)     MEM(k) MEM(%)  MAXMEM(k) MAXMEM(%) VCPUS NETS "
                              "NETTX(k) NETRX(k) VBDS   VBD_OO   VBD_RD   VBD_WR  VBD_RSECT  VBD_WSECT SSID");
    /* by name, case ignored; db-reborn is new: CPU(%) 0.0 */
    line = strtok(NULL, "\n");
    assert_string_equal(line, " db-reborn ------          0    0.0          0    0.0   no limit       n/a     1    0        0"
                              "        0    0        0        0        0          0          0    0");
    line = strtok(NULL, "\n");
    assert_string_equal(line, "  Domain-0 ------          0    0.0          0    0.0   no limit       n/a     2    0        0"
                              "        0    0        0        0        0          0          0    0");
    line = strtok(NULL, "\n");
    assert_string_equal(line, "       new ------          0    0.0          0    0.0   no limit       n/a     1    0        0"
                              "        0    0        0        0        0          0          0    0");
    line = strtok(NULL, "\n");
    assert_string_equal(line, "       web ----pr         21   75.0     524288   12.5    1048576      25.0     2    2       20"
                              "        3    1        0       67       64      16408      16384    0");
    free(text);
    xentop_node_free(a);
    xentop_node_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_contract),
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_shares_on_the_host_clock),
        cmocka_unit_test(test_counter_going_backwards),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_hostile_strings),
        cmocka_unit_test(test_huge_string),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_http_response),
        cmocka_unit_test(test_batch_format),
        cmocka_unit_test(test_xentop_format),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
