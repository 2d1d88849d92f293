/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vcpustats-check's vs-getinfo comparison (tests/e2e/vs-getinfo.h): a
 * record's running time against xc_vcpu_getinfo()'s cpu_time, read after
 * it.  A running vCPU's counter may be ahead of cpu_time by the pCPUs'
 * NOW() skew, never by more.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_skew_seen),
        cmocka_unit_test(test_running_counter_far_ahead),
        cmocka_unit_test(test_running_tolerance),
        cmocka_unit_test(test_not_running_exact),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
