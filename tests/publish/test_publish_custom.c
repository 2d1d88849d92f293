/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The custom-set format of `xenstats publish --custom`: values and errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/guest_stats.h"
#include "guest/text.h"
#include "util/util.h"

static char fixtures[4096];

static const struct guest_stat *stat_of(const struct guest_custom_set *set, const char *name, enum guest_stat_type type)
{
    const struct guest_stat *st = guest_stats_find(&set->stats, name, 0);

    if (!st)
        fail_msg("no statistic '%s'", name);
    assert_int_equal(st->type, type);
    return st;
}

static void test_good(void **state)
{
    struct guest_custom c;
    const struct guest_custom_set *web, *batch;
    char path[4200], err[256];

    (void)state;
    guest_custom_init(&c);
    snprintf(path, sizeof(path), "%s/custom-good.txt", fixtures);
    assert_int_equal(guest_read_custom(path, &c, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_int_equal(c.count, 2);
    web = guest_custom_find(&c, "web app");
    batch = guest_custom_find(&c, "batch");
    assert_non_null(web);
    assert_non_null(batch);
    assert_int_equal(web->line, 4);
    assert_int_equal(web->stats.count, 6);
    assert_true(stat_of(web, "requests_total", GUEST_STAT_U64)->value.u64 == 1234);
    assert_true(stat_of(web, "queue_delta", GUEST_STAT_S64)->value.s64 == -3);
    assert_true(stat_of(web, "temperature_celsius", GUEST_STAT_DOUBLE)->value.dbl == 21.5);
    assert_string_equal(stat_of(web, "version", GUEST_STAT_ASCII)->value.ascii, "1.2.3 beta");
    assert_true(stat_of(web, "max", GUEST_STAT_U64)->value.u64 == UINT64_MAX);
    assert_true(stat_of(web, "min", GUEST_STAT_S64)->value.s64 == INT64_MIN);
    assert_true(stat_of(batch, "progress", GUEST_STAT_DOUBLE)->value.dbl == 0.75);
    assert_string_equal(stat_of(batch, "empty", GUEST_STAT_ASCII)->value.ascii, "");
    assert_null(guest_custom_find(&c, "nope"));

    /* Parsing again replaces the result. */
    assert_int_equal(guest_parse_custom("[x]\r\nu64 a 1\r\ndouble b -inf", 27, "t", &c, err, sizeof(err)), 0);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.set[0].stats.count, 2);
    assert_true(stat_of(&c.set[0], "b", GUEST_STAT_DOUBLE)->value.dbl < -1e308);
    guest_custom_free(&c);
    guest_custom_free(NULL);
}

static void test_errors(void **state)
{
    static const struct {
        const char *text, *error;
    } cases[] = {
        {"u64 a 1\n", "t:1: statistic before the first '[set name]'"},
        {"[a]\nu64 x 1\n[a]\nu64 y 2\n", "t:3: set 'a' is already defined at line 1"},
        {"[a/b]\nu64 x 1\n", "t:1: bad set name 'a/b'"},
        {"[]\n", "t:1: bad set name ''"},
        {"[ \t ]\n", "t:1: bad set name ''"},
        {"[a\n", "t:1: a set header is '[name]'"},
        {"[a]\n[b]\nu64 x 1\n", "t:1: set 'a' has no statistics"},
        {"\n[a]\n# nothing\n", "t:2: set 'a' has no statistics"},
        {"", "t:1: no '[set name]' in the file"},
        {"# only a comment\n", "t:1: no '[set name]' in the file"},
        {"[a]\nfloat x 1\n", "t:2: unknown type 'float' (expected u64, s64, double or ascii)"},
        {"[a]\nU64 x 1\n", "t:2: unknown type 'U64'"},
        {"[a]\nu64 x\n", "t:2: value '' of 'x' is not a valid u64"},
        {"[a]\nu64\n", "t:2: expected '[set name]' or 'TYPE NAME VALUE'"},
        {"[a]\nu64 x -1\n", "t:2: value '-1' of 'x' is not a valid u64"},
        {"[a]\nu64 x 18446744073709551616\n", "not a valid u64"},
        {"[a]\nu64 x 1 2\n", "t:2: value '1 2' of 'x' is not a valid u64"},
        {"[a]\ns64 x 9223372036854775808\n", "not a valid s64"},
        {"[a]\ns64 x --1\n", "not a valid s64"},
        {"[a]\ndouble x 1.5.5\n", "not a valid double"},
        {"[a]\ndouble x 1 2\n", "not a valid double"},
        {"[a]\ndouble x\n", "not a valid double"},
        {"[a]\nu64 x 1\nu64 x 2\n", "t:3: statistic 'x' is already in set 'a'"},
        {"[a]\nascii x 0123456789012345678901234567890123456789012345678901234567890123\n",
         "t:2: ascii value of 'x' is longer than 63 characters"},
        {"[a]\nascii x caf\xc3\xa9\n", "t:2: ascii value of 'x' has characters other than printable ASCII"},
        {"[a]\nascii x bell\a\n", "printable ASCII"},
        {"[a]\nu64 n012345678901234567890123456789012345678901234567890123456789012 1\n",
         "t:2: statistic name 'n012345678901234567890123456789012345678901234567890123456789012' is longer than 62"},
        {"[a]\nu64 n\x01me 1\n", "t:2: bad statistic name 'n?me'"},
        {"[a]\nu64 x 1\n[b\xff]\nu64 y 1\n", "t:3: bad set name 'b?'"},
    };
    struct guest_custom c;
    char err[256];
    size_t i;

    (void)state;
    guest_custom_init(&c);
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        int r = guest_parse_custom(cases[i].text, strlen(cases[i].text), "t", &c, err, sizeof(err));

        if (r != -EBADMSG || !strstr(err, cases[i].error))
            fail_msg("case %zu: %d '%s', want '%s'", i, r, err, cases[i].error);
        assert_int_equal(errno, EBADMSG);
    }
    /* NUL bytes are refused, not taken as the end of the line. */
    assert_int_equal(guest_parse_custom("[a]\nu64 x 1\0 2\n", 15, "t", &c, err, sizeof(err)), -EBADMSG);
    assert_string_equal(err, "t:2: NUL byte in the line");
    /* The length bounds the text. */
    assert_int_equal(guest_parse_custom("[a]\nu64 x 1\nbad line here", 12, "t", &c, err, sizeof(err)), 0);
    /* A short error buffer is truncated and terminated; none at all is fine. */
    assert_int_equal(guest_parse_custom("[a]\n", 4, "origin", &c, err, 8), -EBADMSG);
    assert_string_equal(err, "origin:");
    assert_int_equal(guest_parse_custom("[a]\n", 4, "origin", &c, NULL, 0), -EBADMSG);
    guest_custom_free(&c);
}

static void test_limits(void **state)
{
    struct guest_custom c;
    size_t cap = 1u << 20, len = 0;
    char *text = malloc(cap), err[256], path[] = "/tmp/xenstats-custom-test.XXXXXX";
    unsigned int i;
    int fd;

    (void)state;
    assert_non_null(text);
    guest_custom_init(&c);
    for (i = 0; i <= GUEST_CUSTOM_SETS_MAX; i++)
        len += (size_t)snprintf(text + len, cap - len, "[s%u]\nu64 x %u\n", i, i);
    assert_int_equal(guest_parse_custom(text, len, "t", &c, err, sizeof(err)), -EBADMSG);
    assert_string_equal(err, "t:129: more than 64 sets");

    len = (size_t)snprintf(text, cap, "[big]\n");
    for (i = 0; i <= GUEST_STATS_MAX; i++)
        len += (size_t)snprintf(text + len, cap - len, "u64 x%u %u\n", i, i);
    assert_int_equal(guest_parse_custom(text, len, "t", &c, err, sizeof(err)), -EBADMSG);
    assert_string_equal(err, "t:1026: more than 1024 statistics in set 'big'");

    /* Larger than the file bound: refused whole. */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    memset(text, '#', GUEST_CUSTOM_FILE_MAX + 1);
    assert_int_equal(write(fd, text, GUEST_CUSTOM_FILE_MAX + 1), GUEST_CUSTOM_FILE_MAX + 1);
    close(fd);
    assert_int_equal(guest_read_custom(path, &c, err, sizeof(err)), -EFBIG);
    assert_non_null(strstr(err, "larger than 64 KiB"));
    unlink(path);
    assert_int_equal(guest_read_custom(path, &c, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "No such file"));
    free(text);
    guest_custom_free(&c);
}

int main(void)
{
    const char *root = getenv("XENSTATS_SOURCE_ROOT");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
    };

    snprintf(fixtures, sizeof(fixtures), "%s/tests/publish/fixtures", root ? root : ".");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
