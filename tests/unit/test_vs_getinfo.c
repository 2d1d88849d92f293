/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vcpustats-check's vs-getinfo comparison (tests/e2e/vs-getinfo.h): a
 * record's running time against xc_vcpu_getinfo()'s cpu_time, read after
 * it.  A running vCPU's counter may be ahead of cpu_time by the pCPUs'
 * NOW() skew, never by more.  And xenstat-check's comparison of
 * libxenstat's running time with the getvcpuinfo reads before and after
 * its call (vs_bracket_ok()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vs-getinfo.h"

#define MS 1000000LL

/* the line of a master boot under QEMU TCG (issue 32's closing note) */
static void test_running_skew_seen(void **state)
{
    /* counter 2.4 ms ahead of the cpu_time read after it; proj 2.395 ms behind */
    uint64_t cpu = 85054297000ULL, counter = cpu + 2400000;
    int64_t proj = 85051902000LL, tol = 52 * MS;

    (void)state;
    assert_true(vs_getinfo_ok(1, counter, proj, cpu, tol));
    assert_true(vs_getinfo_ok(1, cpu + VS_GETINFO_PCPU_SKEW_NS, proj, cpu, tol));
}

static void test_running_counter_far_ahead(void **state)
{
    uint64_t cpu = 85054297000ULL;
    int64_t proj = (int64_t)cpu, tol = 52 * MS;

    (void)state;
    /* proj within the tolerance, but the counter ahead by more than the skew */
    assert_false(vs_getinfo_ok(1, cpu + VS_GETINFO_PCPU_SKEW_NS + 1, proj, cpu, tol));
    assert_false(vs_getinfo_ok(1, cpu + 11 * MS, proj, cpu, tol));
    assert_false(vs_getinfo_ok(1, cpu + 50 * MS, proj, cpu, tol));
    assert_false(vs_getinfo_ok(1, cpu + 1000 * MS, proj, cpu, tol));
}

static void test_running_tolerance(void **state)
{
    uint64_t cpu = 10000 * MS;
    int64_t tol = 5 * MS;

    (void)state;
    assert_true(vs_getinfo_ok(1, cpu - 20 * MS, (int64_t)cpu - 5 * MS, cpu, tol));
    assert_true(vs_getinfo_ok(1, cpu - 20 * MS, (int64_t)cpu + 5 * MS, cpu, tol));
    assert_false(vs_getinfo_ok(1, cpu - 20 * MS, (int64_t)cpu - 5 * MS - 1, cpu, tol));
    assert_false(vs_getinfo_ok(1, cpu - 20 * MS, (int64_t)cpu + 5 * MS + 1, cpu, tol));
    /* a counter far behind is the tolerance's business, not the skew's */
    assert_true(vs_getinfo_ok(1, 0, (int64_t)cpu, cpu, tol));
}

static void test_not_running_exact(void **state)
{
    uint64_t cpu = 777 * MS;

    (void)state;
    assert_true(vs_getinfo_ok(0, cpu, (int64_t)cpu, cpu, 0));
    /* no skew for a vCPU that is not running: nothing brings it up to now */
    assert_false(vs_getinfo_ok(0, cpu + 1, (int64_t)cpu + 1, cpu, 0));
    assert_false(vs_getinfo_ok(0, cpu - 1, (int64_t)cpu - 1, cpu, 0));
}

/*
 * The tools series' boot of 00:59 (issue 32): an idle domU's vCPU 0,
 * blocked when libxenstat read it, then ran 503 ms before the getvcpuinfo
 * read after the call.  One read after the call cannot tell that from a
 * library 503 ms behind; the reads before and after it can.
 */
static void test_bracket_ran_meanwhile(void **state)
{
    uint64_t lib = 114531000000ULL, after = lib + 502979000ULL;
    int64_t tol = 20 * MS;

    (void)state;
    /* blocked until the call, ran after it: in the bracket */
    assert_true(vs_bracket_ok(lib, lib, after, tol));
    /* ran before the call too: still in it */
    assert_true(vs_bracket_ok(lib - 300 * MS, lib, after, tol));
    /* the library 503 ms behind a vCPU that ran before its call: out */
    assert_false(vs_bracket_ok(after, after - 502979000ULL, after + 1 * MS, tol));
    /* the library ahead of what getvcpuinfo said after its call: out */
    assert_false(vs_bracket_ok(lib, after + tol + 1, after, tol));
}

static void test_bracket_tolerance(void **state)
{
    uint64_t before = 5000 * MS, after = before + 40 * MS;
    int64_t tol = 10 * MS;

    (void)state;
    assert_true(vs_bracket_ok(before, before - 10 * MS, after, tol));
    assert_true(vs_bracket_ok(before, after + 10 * MS, after, tol));
    assert_false(vs_bracket_ok(before, before - 10 * MS - 1, after, tol));
    assert_false(vs_bracket_ok(before, after + 10 * MS + 1, after, tol));
    /* the two getvcpuinfo reads out of order by the pCPUs' skew */
    assert_true(vs_bracket_ok(after, before + 1, before, tol));
}

static void test_bracket_did_not_run(void **state)
{
    uint64_t t = 22010000000ULL;

    (void)state;
    /* not run between the reads: exactly that time, no tolerance */
    assert_true(vs_bracket_ok(t, t, t, 20 * MS));
    assert_false(vs_bracket_ok(t, t + 1, t, 20 * MS));
    assert_false(vs_bracket_ok(t, t - 1, t, 20 * MS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_skew_seen),
        cmocka_unit_test(test_running_counter_far_ahead),
        cmocka_unit_test(test_running_tolerance),
        cmocka_unit_test(test_not_running_exact),
        cmocka_unit_test(test_bracket_ran_meanwhile),
        cmocka_unit_test(test_bracket_tolerance),
        cmocka_unit_test(test_bracket_did_not_run),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
