/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/util.h"

static void test_parse_u64(void **state)
{
    uint64_t v = 77;

    (void)state;
    assert_int_equal(parse_u64("0", 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
    assert_int_equal(parse_u64("11", 10, &v), -ERANGE);
    assert_int_equal(parse_u64("2", 1, &v), -ERANGE); /* a digit above max */
    assert_int_equal(parse_u64("9", 8, &v), -ERANGE);
    v = 5;
    assert_int_equal(parse_u64("", 10, &v), -EINVAL);
    assert_int_equal(parse_u64("-1", 10, &v), -EINVAL);
    assert_int_equal(parse_u64(" 1", 10, &v), -EINVAL);
    assert_int_equal(parse_u64("1x", 10, &v), -EINVAL);
    assert_int_equal(parse_u64(NULL, 10, &v), -EINVAL);
    assert_int_equal(v, 5); /* untouched on failure */
}

static void test_parse_duration(void **state)
{
    uint64_t ns = 0;

    (void)state;
    assert_int_equal(parse_duration_ns("1", &ns), 0);
    assert_int_equal(ns, 1000000000);
    assert_int_equal(parse_duration_ns("1.5s", &ns), 0);
    assert_int_equal(ns, 1500000000);
    assert_int_equal(parse_duration_ns("250ms", &ns), 0);
    assert_int_equal(ns, 250000000);
    assert_int_equal(parse_duration_ns("0.001ms", &ns), 0);
    assert_int_equal(ns, 1000);
    assert_int_equal(parse_duration_ns("2m", &ns), 0);
    assert_int_equal(ns, 120000000000ULL);
    assert_int_equal(parse_duration_ns("7us", &ns), 0);
    assert_int_equal(ns, 7000);
    assert_int_equal(parse_duration_ns("1h", &ns), -EINVAL);
    assert_int_equal(parse_duration_ns("s", &ns), -EINVAL);
    assert_int_equal(parse_duration_ns("1.", &ns), -EINVAL);
    assert_int_equal(parse_duration_ns("-1", &ns), -EINVAL);
    assert_int_equal(parse_duration_ns("99999999999999999999", &ns), -ERANGE);
    assert_int_equal(parse_duration_ns("999999999999m", &ns), -ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_parse_duration),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
