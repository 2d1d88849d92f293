/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parsers of guest-controlled PV stats data: every rule, both ways. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pv/parse.h"

#define PAGE XEN_PV_STATS_PAGE_SIZE
#define ENTRY XEN_PV_STATS_ENTRY_SIZE

static uint8_t pages[PV_MAX_PAGES * PAGE];
static struct pv_stat_desc descs[PV_MAX_STATS];
static char reason[PV_REASON_MAX];

static void assert_reason(const char *expected)
{
    assert_non_null(memchr(reason, '\0', sizeof(reason)));
    if (!strstr(reason, expected))
        fail_msg("reason '%s' does not contain '%s'", reason, expected);
}

/* Entry i of the name/type pages; name copied without its NUL when it fills the field. */
static void put_stat(size_t i, uint8_t type, const char *name)
{
    uint8_t *e = pages + i * ENTRY;
    size_t len = strlen(name);

    memset(e, 0, ENTRY);
    e[0] = type;
    memcpy(e + 1, name, len < XEN_PV_STATS_NAME_SIZE ? len : XEN_PV_STATS_NAME_SIZE);
}

/* n statistics named s<i>, types cycling through 1..4, from entry 0. */
static void put_stats(size_t n)
{
    char name[16];
    size_t i;

    memset(pages, 0, sizeof(pages));
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "s%zu", i);
        put_stat(i, (uint8_t)(1 + i % 4), name);
    }
}

static int parse(size_t nr_pages)
{
    memset(descs, 0xaa, sizeof(descs));
    memset(reason, 'x', sizeof(reason));
    return pv_parse_name_pages(pages, nr_pages, descs, reason);
}

static void assert_stats(size_t n)
{
    char name[16];
    size_t i;

    assert_string_equal(reason, "");
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "s%zu", i);
        assert_string_equal(descs[i].name, name);
        assert_int_equal(descs[i].type, 1 + i % 4);
    }
}

/* ---- characters and names ------------------------------------------------ */

static void test_char_set(void **state)
{
    unsigned int c;

    (void)state;
    /* The seed's expression in the C locale (the test runs in it) is exactly 0x20..0x7e. */
    for (c = 0; c < 256; c++) {
        bool seed = c < 128 && (isalnum((int)c) || ispunct((int)c) || c == ' ');

        assert_int_equal(pv_char_ok((unsigned char)c), seed);
        assert_int_equal(pv_char_ok((unsigned char)c), c >= 0x20 && c <= 0x7e);
    }
}

static void test_name_check(void **state)
{
    char name[80];

    (void)state;
    assert_int_equal(pv_name_check("a", 2, reason), 1);
    assert_string_equal(reason, "");
    snprintf(name, sizeof(name), "%s", "rx bytes (total) #0 ~!@$%^&*()_+{}|:\"<>?`-=[]\\;',./");
    assert_int_equal(pv_name_check(name, 63, reason), (int)strlen(name));
    /* garbage after the NUL is not looked at */
    assert_int_equal(pv_name_check("ab\0\x01\xff", 5, reason), 2);

    memset(name, 'n', sizeof(name));
    name[62] = '\0';
    assert_int_equal(pv_name_check(name, 63, reason), 62);
    assert_int_equal(pv_name_check(name, sizeof(name), reason), 62);

    name[62] = 'n'; /* 63 characters: no room for the NUL in the field */
    name[63] = '\0';
    assert_int_equal(pv_name_check(name, 63, reason), -EINVAL);
    assert_reason("name has no NUL within 63 bytes");
    assert_int_equal(pv_name_check(name, sizeof(name), reason), -EINVAL);
    assert_reason("name has no NUL within 63 bytes");

    assert_int_equal(pv_name_check("abc", 3, reason), -EINVAL); /* NUL outside len */
    assert_reason("name has no NUL within 3 bytes");
    assert_int_equal(pv_name_check("abc", 0, reason), -EINVAL);
    assert_reason("name has no NUL within 0 bytes");
    assert_int_equal(pv_name_check("", 1, reason), -EINVAL);
    assert_reason("name is empty");

    assert_int_equal(pv_name_check("ab\x7f", 4, reason), -EINVAL);
    assert_reason("name byte 2 is 0x7f");
    assert_int_equal(pv_name_check("\x80", 2, reason), -EINVAL);
    assert_reason("name byte 0 is 0x80");
    assert_int_equal(pv_name_check("rx\tbytes", 9, reason), -EINVAL);
    assert_reason("name byte 2 is 0x09");
    assert_int_equal(pv_name_check("a\nb", 4, reason), -EINVAL);
    assert_reason("name byte 1 is 0x0a");
    assert_int_equal(pv_name_check(NULL, 4, reason), -EINVAL);
    assert_int_equal(pv_name_check("ok", 3, NULL), 2); /* reason is optional */
}

/* ---- name/type pages: accepted ------------------------------------------- */

static void test_pages_one(void **state)
{
    (void)state;
    put_stats(3);
    assert_int_equal(parse(1), 3);
    assert_stats(3);

    put_stats(64); /* a full page ends the list without a marker */
    assert_int_equal(parse(1), 64);
    assert_stats(64);

    put_stats(0); /* 1 and 62 characters */
    put_stat(0, XEN_PV_STATS_TYPE_U64, "x");
    put_stat(1, XEN_PV_STATS_TYPE_ASCII, "12345678901234567890123456789012345678901234567890123456789012");
    assert_int_equal(parse(1), 2);
    assert_string_equal(descs[0].name, "x");
    assert_int_equal(strlen(descs[1].name), 62);
    assert_int_equal(descs[1].type, XEN_PV_STATS_TYPE_ASCII);
}

static void test_pages_several(void **state)
{
    (void)state;
    put_stats(100);
    assert_int_equal(parse(2), 100);
    assert_stats(100);

    /* end marker at entry 0 of page 2, page 2 otherwise zero */
    put_stats(128);
    assert_int_equal(parse(3), 128);
    assert_stats(128);

    /* pre-allocated trailing pages of zeros */
    put_stats(5);
    assert_int_equal(parse(4), 5);
    assert_stats(5);

    /* after the end marker only types count: names there may be junk */
    put_stats(5);
    memset(pages + 6 * ENTRY + 1, 0xff, XEN_PV_STATS_NAME_SIZE);
    memset(pages + PAGE + 1, '\t', XEN_PV_STATS_NAME_SIZE);
    assert_int_equal(parse(2), 5);

    /* the largest set: 64 full pages */
    put_stats(PV_MAX_STATS);
    assert_int_equal(parse(PV_MAX_PAGES), (int)PV_MAX_STATS);
    assert_stats(PV_MAX_STATS);
}

static void test_pages_distinct_names(void **state)
{
    (void)state;
    put_stats(0);
    put_stat(0, 1, "a");
    put_stat(1, 1, "A");
    put_stat(2, 1, "ab");
    put_stat(3, 1, "a ");
    put_stat(4, 1, " a");
    assert_int_equal(parse(1), 5);
}

/* ---- name/type pages: rejected ------------------------------------------- */

static void test_pages_unknown_type(void **state)
{
    (void)state;
    put_stats(70);
    pages[65 * ENTRY] = 9;
    assert_int_equal(parse(2), -EBADMSG);
    assert_reason("statistic 65 (page 1, entry 1): unknown type 9");

    put_stats(3);
    pages[0] = 5;
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("statistic 0 (page 0, entry 0): unknown type 5");
    pages[0] = 255;
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("unknown type 255");
}

static void test_pages_bad_name(void **state)
{
    (void)state;
    put_stats(5);
    memset(pages + 3 * ENTRY + 1, 'z', XEN_PV_STATS_NAME_SIZE);
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("statistic 3 (page 0, entry 3): name has no NUL within 63 bytes");

    put_stats(5);
    put_stat(2, 1, "rx\tbytes");
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("statistic 2 (page 0, entry 2): name byte 2 is 0x09");

    put_stats(70);
    put_stat(66, 2, "caf\xc3\xa9");
    assert_int_equal(parse(2), -EBADMSG);
    assert_reason("statistic 66 (page 1, entry 2): name byte 3 is 0xc3");

    put_stats(5);
    put_stat(1, 2, "del\x7f");
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("name byte 3 is 0x7f");

    put_stats(5);
    put_stat(4, 2, "");
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("statistic 4 (page 0, entry 4): name is empty");

    put_stats(5); /* 63 characters: the field has no room for the NUL */
    put_stat(0, 1, "123456789012345678901234567890123456789012345678901234567890123");
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("statistic 0 (page 0, entry 0): name has no NUL within 63 bytes");
}

static void test_pages_after_end(void **state)
{
    (void)state;
    put_stats(3);
    put_stat(10, 2, "late");
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("statistic 10 (page 0, entry 10): type 2 after the end marker at statistic 3");

    put_stats(3);
    pages[2 * PAGE + 63 * ENTRY] = 1;
    assert_int_equal(parse(3), -EBADMSG);
    assert_reason("statistic 191 (page 2, entry 63): type 1 in a page after the end marker at statistic 3");

    /* an unknown type after the end is still "after the end" */
    put_stats(64);
    pages[PAGE + ENTRY] = 200;
    assert_int_equal(parse(2), -EBADMSG);
    assert_reason("statistic 65 (page 1, entry 1): type 200 after the end marker at statistic 64");
}

static void test_pages_duplicates(void **state)
{
    size_t i;

    (void)state;
    put_stats(12);
    put_stat(4, 1, "rx_bytes");
    put_stat(9, 3, "rx_bytes");
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("duplicate name 'rx_bytes' (statistics 4 and 9)");

    /* across pages, the later one first in memory order of the pages */
    put_stats(200);
    put_stat(199, 1, "s7");
    assert_int_equal(parse(4), -EBADMSG);
    assert_reason("duplicate name 's7' (statistics 7 and 199)");

    /* the sort's worst shapes: all equal, and a full set with one clash at the ends */
    memset(pages, 0, sizeof(pages));
    for (i = 0; i < PV_MAX_STATS; i++)
        put_stat(i, 2, "same");
    assert_int_equal(parse(PV_MAX_PAGES), -EBADMSG);
    assert_reason("duplicate name 'same' (statistics 0 and 1)");

    put_stats(PV_MAX_STATS);
    put_stat(PV_MAX_STATS - 1, 1, "s0");
    assert_int_equal(parse(PV_MAX_PAGES), -EBADMSG);
    assert_reason("duplicate name 's0' (statistics 0 and 4095)");
}

static void test_pages_empty_and_arguments(void **state)
{
    (void)state;
    memset(pages, 0, sizeof(pages));
    assert_int_equal(parse(1), -EBADMSG);
    assert_reason("no statistics");
    assert_int_equal(parse(3), -EBADMSG);
    assert_reason("no statistics");
    assert_int_equal(parse(0), -EBADMSG);
    assert_reason("no name/type pages");

    put_stats(3);
    assert_int_equal(parse(PV_MAX_PAGES + 1), -EINVAL);
    assert_reason("65 name/type pages (at most 64)");
    assert_int_equal(pv_parse_name_pages(NULL, 1, descs, reason), -EINVAL);
    assert_int_equal(pv_parse_name_pages(pages, 1, NULL, reason), -EINVAL);
    assert_int_equal(pv_parse_name_pages(pages, 1, descs, NULL), 3);
}

/* ---- values ---------------------------------------------------------------- */

static void put_le64(uint8_t *e, uint64_t v)
{
    unsigned int i;

    for (i = 0; i < 8; i++)
        e[i] = (uint8_t)(v >> (8 * i));
}

static struct pv_value decode_bits(uint8_t type, uint64_t bits)
{
    uint8_t e[ENTRY];
    struct pv_value v;

    memset(e, 0xee, sizeof(e)); /* octets 8..63 must not matter */
    put_le64(e, bits);
    memset(&v, 0x55, sizeof(v));
    assert_int_equal(pv_decode_value(type, e, &v, reason), 0);
    assert_string_equal(reason, "");
    assert_int_equal(v.type, type);
    return v;
}

static double decode_double(double d)
{
    uint64_t bits;
    struct pv_value v;

    memcpy(&bits, &d, sizeof(bits));
    v = decode_bits(XEN_PV_STATS_TYPE_DOUBLE, bits);
    assert_memory_equal(&v.u.dbl, &d, sizeof(d)); /* bit for bit, NaN payloads included */
    return v.u.dbl;
}

static void test_value_integers(void **state)
{
    const uint8_t order[ENTRY] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x81};
    struct pv_value v;

    (void)state;
    assert_true(decode_bits(XEN_PV_STATS_TYPE_S64, UINT64_MAX).u.s64 == -1);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_S64, UINT64_C(1) << 63).u.s64 == INT64_MIN);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_S64, INT64_MAX).u.s64 == INT64_MAX);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_S64, (uint64_t)-12345).u.s64 == -12345);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_S64, 0).u.s64 == 0);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_U64, UINT64_MAX).u.u64 == UINT64_MAX);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_U64, 0).u.u64 == 0);
    assert_true(decode_bits(XEN_PV_STATS_TYPE_U64, 42).u.u64 == 42);

    /* little endian whatever the host */
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_U64, order, &v, reason), 0);
    assert_true(v.u.u64 == UINT64_C(0x8102030405060708));
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_S64, order, &v, reason), 0);
    assert_true(v.u.s64 == -INT64_C(0x7efdfcfbfaf9f8f8));
}

static void test_value_doubles(void **state)
{
    uint64_t bits;
    double d;

    (void)state;
    assert_true(decode_double(1.5) == 1.5);
    assert_true(decode_double(-2.25e300) == -2.25e300);
    assert_true(isnan(decode_double(NAN)));
    assert_true(isnan(decode_double(-NAN)));
    d = decode_double(INFINITY);
    assert_true(isinf(d) && d > 0);
    d = decode_double(-INFINITY);
    assert_true(isinf(d) && d < 0);
    d = decode_double(-0.0);
    assert_true(d == 0.0 && signbit(d));
    d = decode_double(0.0);
    assert_true(d == 0.0 && !signbit(d));
    /* denormals: the smallest, the largest, and a negative one */
    assert_true(fpclassify(decode_bits(XEN_PV_STATS_TYPE_DOUBLE, 1).u.dbl) == FP_SUBNORMAL);
    assert_true(fpclassify(decode_bits(XEN_PV_STATS_TYPE_DOUBLE, UINT64_C(0x000fffffffffffff)).u.dbl) ==
                FP_SUBNORMAL);
    d = decode_bits(XEN_PV_STATS_TYPE_DOUBLE, UINT64_C(0x8000000000000001)).u.dbl;
    assert_true(fpclassify(d) == FP_SUBNORMAL && d < 0);
    /* a signalling NaN with a payload comes through unchanged */
    bits = UINT64_C(0x7ff0000000000bad);
    d = decode_bits(XEN_PV_STATS_TYPE_DOUBLE, bits).u.dbl;
    assert_memory_equal(&d, &bits, sizeof(d));
}

static void test_value_ascii(void **state)
{
    uint8_t e[ENTRY];
    struct pv_value v, before;
    size_t i;

    (void)state;
    memset(e, 0, sizeof(e));
    memset(&v, 0x55, sizeof(v));
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_ASCII, e, &v, reason), 0);
    assert_string_equal(v.u.ascii, "");

    memset(e, 'a', sizeof(e));
    e[63] = '\0'; /* 63 characters */
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_ASCII, e, &v, reason), 0);
    assert_int_equal(strlen(v.u.ascii), 63);

    memset(e, 0xff, sizeof(e)); /* bytes after the NUL are ignored and not copied */
    memcpy(e, "up 3 days, load: 0.5", 21);
    memset(&v, 0x55, sizeof(v));
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_ASCII, e, &v, reason), 0);
    assert_string_equal(v.u.ascii, "up 3 days, load: 0.5");
    for (i = 21; i < ENTRY; i++)
        assert_int_equal(v.u.ascii[i], 0);

    memset(&before, 0x33, sizeof(before));
    v = before;
    memset(e, 'a', sizeof(e)); /* 64 characters: no NUL */
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_ASCII, e, &v, reason), -EINVAL);
    assert_reason("ASCII value has no NUL within 64 bytes");
    e[10] = 0x80;
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_ASCII, e, &v, reason), -EINVAL);
    assert_reason("ASCII value byte 10 is 0x80");
    e[5] = '\t';
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_ASCII, e, &v, reason), -EINVAL);
    assert_reason("ASCII value byte 5 is 0x09");
    assert_memory_equal(&v, &before, sizeof(v)); /* untouched on failure */
}

static void test_value_bad_type(void **state)
{
    uint8_t e[ENTRY] = {1};
    struct pv_value v;

    (void)state;
    assert_int_equal(pv_decode_value(XEN_PV_STATS_TYPE_END, e, &v, reason), -EINVAL);
    assert_reason("unknown type 0");
    assert_int_equal(pv_decode_value(5, e, &v, reason), -EINVAL);
    assert_reason("unknown type 5");
    assert_int_equal(pv_decode_value(255, e, &v, reason), -EINVAL);
    assert_reason("unknown type 255");
    assert_int_equal(pv_decode_value(1, NULL, &v, reason), -EINVAL);
    assert_int_equal(pv_decode_value(1, e, NULL, reason), -EINVAL);
}

/* ---- numbers and key names ---------------------------------------------- */

static int number(const char *s, uint32_t max, uint32_t *v)
{
    return pv_parse_number(s, strlen(s), max, v);
}

static void test_number(void **state)
{
    char huge[200];
    uint32_t v = 0;

    (void)state;
    assert_int_equal(number("0", UINT32_MAX, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(number("7", UINT32_MAX, &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(number("4294967295", UINT32_MAX, &v), 0);
    assert_true(v == UINT32_MAX);
    assert_int_equal(number("10", 10, &v), 0);
    assert_int_equal(v, 10);

    v = 99;
    assert_int_equal(number("4294967296", UINT32_MAX, &v), -ERANGE);
    assert_int_equal(number("11", 10, &v), -ERANGE);
    assert_int_equal(number("1", 0, &v), -ERANGE);
    memset(huge, '9', sizeof(huge));
    assert_int_equal(pv_parse_number(huge, sizeof(huge), UINT32_MAX, &v), -ERANGE);
    huge[sizeof(huge) - 1] = 'x'; /* malformed wins over out of range */
    assert_int_equal(pv_parse_number(huge, sizeof(huge), UINT32_MAX, &v), -EINVAL);

    assert_int_equal(number("", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("00", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("012", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("+1", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("-1", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("-0", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number(" 1", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("1 ", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("1\n", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("0x10", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("1e3", UINT32_MAX, &v), -EINVAL);
    assert_int_equal(number("\xd9\xa1", UINT32_MAX, &v), -EINVAL); /* a non-ASCII digit */
    assert_int_equal(pv_parse_number(NULL, 1, UINT32_MAX, &v), -EINVAL);
    assert_int_equal(v, 99); /* untouched on failure */

    /* not NUL terminated: only len bytes count; a NUL ends the string early */
    assert_int_equal(pv_parse_number("123456", 3, UINT32_MAX, &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(pv_parse_number("12\0x", 4, UINT32_MAX, &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(pv_parse_number("\0" "12", 3, UINT32_MAX, &v), -EINVAL);
    assert_int_equal(pv_parse_number("5", 0, UINT32_MAX, &v), -EINVAL);
}

static int classify(const char *name, uint32_t *index)
{
    return pv_classify_key(name, strlen(name), index);
}

static void test_classify(void **state)
{
    uint32_t i = 0;

    (void)state;
    assert_int_equal(classify("event-channel", &i), PV_KEY_EVENT_CHANNEL);
    assert_int_equal(classify("name-type-ref0", &i), PV_KEY_NAME_TYPE_REF);
    assert_int_equal(i, 0);
    assert_int_equal(classify("name-type-ref63", &i), PV_KEY_NAME_TYPE_REF);
    assert_int_equal(i, 63);
    assert_int_equal(classify("val-ref12", &i), PV_KEY_VALUE_REF);
    assert_int_equal(i, 12);
    /* huge but well-formed: an index, rejected later against PV_MAX_PAGES */
    assert_int_equal(classify("val-ref4294967295", &i), PV_KEY_VALUE_REF);
    assert_true(i == UINT32_MAX);
    assert_int_equal(pv_classify_key("val-ref12", 8, &i), PV_KEY_VALUE_REF); /* not terminated */
    assert_int_equal(i, 1);

    assert_int_equal(classify("name-type-ref07", &i), -EINVAL);
    assert_int_equal(classify("name-type-ref00", &i), -EINVAL);
    assert_int_equal(classify("val-ref-1", &i), -EINVAL);
    assert_int_equal(classify("val-ref+1", &i), -EINVAL);
    assert_int_equal(classify("val-ref 1", &i), -EINVAL);
    assert_int_equal(classify("name-type-ref99999999999", &i), -EINVAL);
    assert_int_equal(classify("name-type-ref4294967296", &i), -EINVAL);
    assert_int_equal(classify("name-type-ref", &i), -EINVAL);
    assert_int_equal(classify("val-ref", &i), -EINVAL);
    assert_int_equal(classify("val-ref1x", &i), -EINVAL);
    assert_int_equal(classify("val-refresh", &i), -EINVAL); /* starts like ours: strict */

    assert_int_equal(classify("", &i), PV_KEY_OTHER);
    assert_int_equal(classify("state", &i), PV_KEY_OTHER);
    assert_int_equal(classify("event-channel2", &i), PV_KEY_OTHER);
    assert_int_equal(classify("event-channe", &i), PV_KEY_OTHER);
    assert_int_equal(classify("Name-Type-Ref0", &i), PV_KEY_OTHER);
    assert_int_equal(classify("name-type", &i), PV_KEY_OTHER);
    assert_int_equal(classify("val-re", &i), PV_KEY_OTHER);
    assert_int_equal(classify("name-ref0", &i), PV_KEY_OTHER);
    assert_int_equal(pv_classify_key("event-channel", 5, &i), PV_KEY_OTHER);
    assert_int_equal(pv_classify_key(NULL, 5, &i), -EINVAL);
}

/* ---- a set's keys ---------------------------------------------------------- */

#define MAX_KEYS 6000

static const char *key_names[MAX_KEYS], *key_values[MAX_KEYS];
static size_t key_name_lens[MAX_KEYS], key_value_lens[MAX_KEYS];
static char key_storage[MAX_KEYS][2][32];
static size_t nr_keys;
static struct pv_set_keys keys;

static void key(const char *name, const char *value)
{
    assert_true(nr_keys < MAX_KEYS);
    snprintf(key_storage[nr_keys][0], sizeof(key_storage[0][0]), "%s", name);
    key_names[nr_keys] = key_storage[nr_keys][0];
    key_name_lens[nr_keys] = strlen(name);
    if (value) {
        snprintf(key_storage[nr_keys][1], sizeof(key_storage[0][1]), "%s", value);
        key_values[nr_keys] = key_storage[nr_keys][1];
        key_value_lens[nr_keys] = strlen(value);
    } else {
        key_values[nr_keys] = NULL;
        key_value_lens[nr_keys] = 0;
    }
    nr_keys++;
}

static void keyf(const char *value, const char *prefix, unsigned int n)
{
    char name[32];

    snprintf(name, sizeof(name), "%s%u", prefix, n);
    key(name, value);
}

/* a well-formed set of n pages: refs 100+i and 200+i, port 7 */
static void keys_set(unsigned int n, bool event_channel)
{
    char v[16];
    unsigned int i;

    nr_keys = 0;
    for (i = 0; i < n; i++) {
        snprintf(v, sizeof(v), "%u", 100 + i);
        keyf(v, "name-type-ref", i);
        snprintf(v, sizeof(v), "%u", 200 + i);
        keyf(v, "val-ref", i);
    }
    if (event_channel)
        key("event-channel", "7");
}

static int parse_keys(void)
{
    memset(&keys, 0xaa, sizeof(keys));
    memset(reason, 'x', sizeof(reason));
    return pv_parse_set_keys(key_names, key_name_lens, key_values, key_value_lens, nr_keys, &keys, reason);
}

static void expect_keys_error(int err, const char *text)
{
    struct pv_set_keys before;

    assert_int_equal(parse_keys(), err);
    assert_reason(text);
    memset(&before, 0xaa, sizeof(before));
    assert_memory_equal(&keys, &before, sizeof(keys)); /* untouched on failure */
}

static void test_keys_accepted(void **state)
{
    unsigned int i;

    (void)state;
    keys_set(2, true);
    assert_int_equal(parse_keys(), 0);
    assert_string_equal(reason, "");
    assert_true(keys.have_event_channel);
    assert_int_equal(keys.event_channel, 7);
    assert_int_equal(keys.nr_pages, 2);
    assert_int_equal(keys.name_type_ref[1], 101);
    assert_int_equal(keys.value_ref[1], 201);

    /* listing order does not matter; unknown keys are ignored */
    nr_keys = 0;
    key("event-channel", "4294967295");
    key("val-ref1", "0");
    key("state", "not a number at all");
    key("name-type-ref1", "4294967295");
    key("val-ref0", "5");
    key("event-channel2", "x");
    key("name-type-ref0", "6");
    key("name-type", NULL);
    key("", "");
    assert_int_equal(parse_keys(), 0);
    assert_int_equal(keys.nr_pages, 2);
    assert_true(keys.event_channel == UINT32_MAX);
    assert_int_equal(keys.name_type_ref[0], 6);
    assert_true(keys.name_type_ref[1] == UINT32_MAX);
    assert_int_equal(keys.value_ref[0], 5);
    assert_int_equal(keys.value_ref[1], 0);

    /* the largest set, at the limit of directory entries */
    keys_set(PV_MAX_PAGES, true);
    for (i = 0; nr_keys < PV_MAX_SET_KEYS; i++)
        keyf("junk", "other", i);
    assert_int_equal(parse_keys(), 0);
    assert_int_equal(keys.nr_pages, PV_MAX_PAGES);
    assert_int_equal(keys.value_ref[63], 263);
}

static void test_keys_not_ready(void **state)
{
    (void)state;
    /* no event-channel yet: a provider half-way through publishing */
    nr_keys = 0;
    key("name-type-ref0", "10");
    key("name-type-ref2", "12");
    assert_int_equal(parse_keys(), 0);
    assert_false(keys.have_event_channel);
    assert_int_equal(keys.nr_pages, 0);
    assert_int_equal(keys.name_type_ref[0], 0);

    /* event-channel deleted between listing and reading: withdrawn */
    keys_set(2, false);
    key("event-channel", NULL);
    assert_int_equal(parse_keys(), 0);
    assert_false(keys.have_event_channel);
    assert_int_equal(keys.nr_pages, 0);

    /* reference keys vanishing after a withdrawal */
    keys_set(2, false);
    key_values[1] = NULL;
    assert_int_equal(parse_keys(), 0);
    assert_false(keys.have_event_channel);

    nr_keys = 0;
    assert_int_equal(parse_keys(), 0);
    assert_false(keys.have_event_channel);
    assert_int_equal(pv_parse_set_keys(NULL, NULL, NULL, NULL, 0, &keys, reason), 0);

    /* but a malformed key is wrong whatever the state */
    keys_set(1, false);
    key("val-ref01", "3");
    expect_keys_error(-EINVAL, "key 'val-ref01': malformed index");
    keys_set(1, false);
    key("name-type-ref0", "3");
    expect_keys_error(-EINVAL, "duplicate key 'name-type-ref0'");
    keys_set(1, false);
    key_values[0] = "x1";
    key_value_lens[0] = 2;
    expect_keys_error(-EINVAL, "key 'name-type-ref0': grant reference 'x1' is not a decimal number");
}

static void test_keys_vanished(void **state)
{
    (void)state;
    keys_set(3, true);
    key_values[3] = NULL; /* val-ref1 */
    expect_keys_error(-EAGAIN, "key 'val-ref1' vanished while being read");
    keys_set(3, true);
    key_values[0] = NULL;
    expect_keys_error(-EAGAIN, "key 'name-type-ref0' vanished while being read");
    keys_set(3, true); /* the first one in listing order is named */
    key_values[5] = NULL;
    key_values[2] = NULL;
    expect_keys_error(-EAGAIN, "key 'name-type-ref1' vanished while being read");
    /* a hard error wins over a vanished key */
    keys_set(3, true);
    key_values[0] = NULL;
    key("val-ref7x", "1");
    expect_keys_error(-EINVAL, "key 'val-ref7x': malformed index");
}

static void test_keys_indices(void **state)
{
    unsigned int i;

    (void)state;
    nr_keys = 0;
    key("name-type-ref0", "1");
    key("name-type-ref1", "1");
    key("name-type-ref3", "1");
    key("val-ref0", "1");
    key("val-ref1", "1");
    key("val-ref3", "1");
    key("event-channel", "1");
    expect_keys_error(-EINVAL, "name-type-ref2 missing (have 0,1,3)");

    keys_set(0, true);
    keyf("1", "name-type-ref", 1);
    keyf("1", "val-ref", 1);
    expect_keys_error(-EINVAL, "no name-type-ref0");
    keys_set(0, true);
    expect_keys_error(-EINVAL, "no name-type-ref0");

    keys_set(10, true);
    keyf("1", "name-type-ref", 12);
    keyf("1", "name-type-ref", 13);
    keyf("1", "name-type-ref", 14);
    keyf("1", "name-type-ref", 63);
    expect_keys_error(-EINVAL, "name-type-ref10 missing (have 0-9,12-14,63)");

    keys_set(3, true);
    key_names[3] = "val-ref5"; /* val-ref1 -> val-ref5 */
    key_name_lens[3] = 8;
    expect_keys_error(-EINVAL, "val-ref1 missing (have name-type-ref0..2)");
    keys_set(3, true);
    key("val-ref3", "9");
    expect_keys_error(-EINVAL, "val-ref3 without name-type-ref3");

    keys_set(2, true);
    key("name-type-ref64", "1");
    expect_keys_error(-E2BIG, "key 'name-type-ref64': index 64 (at most 64 pages)");
    keys_set(2, true);
    key("val-ref4294967295", "1");
    expect_keys_error(-E2BIG, "index 4294967295");
    keys_set(2, true);
    key("name-type-ref99999999999", "1");
    expect_keys_error(-EINVAL, "key 'name-type-ref99999999999': malformed index");
    keys_set(2, true);
    key("name-type-ref007", "1");
    expect_keys_error(-EINVAL, "key 'name-type-ref007': malformed index");
    keys_set(2, true);
    key("val-ref-1", "1");
    expect_keys_error(-EINVAL, "key 'val-ref-1': malformed index");

    /* every other index: the list of those present is cut, never overflows */
    nr_keys = 0;
    for (i = 0; i < 64; i += 2) {
        keyf("1", "name-type-ref", i);
        keyf("1", "val-ref", i);
    }
    key("event-channel", "1");
    expect_keys_error(-EINVAL, "name-type-ref1 missing (have 0,2,4,6,8,10,12,");

    /* a NUL inside a key name ends it: "val-ref" alone is malformed */
    keys_set(1, true);
    key_names[1] = "val-ref\0" "0";
    key_name_lens[1] = 9;
    expect_keys_error(-EINVAL, "key 'val-ref': malformed index");
    keys_set(1, true);
    key_names[0] = NULL;
    expect_keys_error(-EINVAL, "key 0 has no name");
    assert_int_equal(pv_parse_set_keys(key_names, key_name_lens, key_values, key_value_lens, nr_keys, &keys, NULL),
                     -EINVAL);

    keys_set(2, true);
    key("val-ref1", "1");
    expect_keys_error(-EINVAL, "duplicate key 'val-ref1'");
    keys_set(2, true);
    key("event-channel", "8");
    expect_keys_error(-EINVAL, "duplicate key 'event-channel'");
    keys_set(2, true);
    key("event-channel", NULL);
    expect_keys_error(-EINVAL, "duplicate key 'event-channel'");
}

static void test_keys_numbers(void **state)
{
    static const char *const bad[] = {"", "abc", " 12", "12 ", "+12", "-1", "012", "0x1f", "1.0", "12\n"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        keys_set(2, true);
        key_values[2] = bad[i]; /* name-type-ref1 */
        key_value_lens[2] = strlen(bad[i]);
        expect_keys_error(-EINVAL, "key 'name-type-ref1': grant reference '");
        assert_reason("' is not a decimal number");
    }
    keys_set(2, true);
    key_values[1] = "4294967296";
    key_value_lens[1] = 10;
    expect_keys_error(-EINVAL, "key 'val-ref0': grant reference '4294967296' is out of range");
    keys_set(2, true);
    key_values[4] = "-7";
    key_value_lens[4] = 2;
    expect_keys_error(-EINVAL, "key 'event-channel': port '-7' is not a decimal number");

    /* the value is quoted safely, and shortened */
    keys_set(1, true);
    key_values[0] = "\x1b[2J\x01 and then a very long tail that goes on and on";
    key_value_lens[0] = strlen(key_values[0]);
    expect_keys_error(-EINVAL, "grant reference '?[2J? and then a very long tail ...' is not");

    /* a value not NUL terminated within its length */
    keys_set(1, true);
    key_values[0] = "123456";
    key_value_lens[0] = 2;
    assert_int_equal(parse_keys(), 0);
    assert_int_equal(keys.name_type_ref[0], 12);
}

static void test_keys_many(void **state)
{
    unsigned int i;

    (void)state;
    keys_set(2, true);
    for (i = 0; nr_keys < 5000; i++)
        keyf("1", "junk", i);
    expect_keys_error(-E2BIG, "5000 keys in the set (at most 144)");

    keys_set(PV_MAX_PAGES, true);
    for (i = 0; nr_keys <= PV_MAX_SET_KEYS; i++)
        keyf("junk", "other", i);
    expect_keys_error(-E2BIG, "145 keys in the set (at most 144)");

    keys_set(1, true);
    assert_int_equal(pv_parse_set_keys(NULL, key_name_lens, key_values, key_value_lens, nr_keys, &keys, reason),
                     -EINVAL);
    assert_int_equal(pv_parse_set_keys(key_names, key_name_lens, key_values, key_value_lens, nr_keys, NULL, reason),
                     -EINVAL);
}

static void test_convention_statistics(void **state)
{
    struct pv_stat_name n = {.kind = 0};

    (void)state;
    assert_int_equal(pv_stat_classify("rx_bytes_total", XEN_PV_STATS_TYPE_U64, &n), 0);
    assert_int_equal(n.kind, PV_STAT_COUNTER);
    assert_int_equal(n.unit, PV_UNIT_BYTES);
    assert_int_equal(n.base_len, strlen("rx_bytes"));
    assert_int_equal(pv_stat_classify("user_seconds_total", XEN_PV_STATS_TYPE_DOUBLE, &n), 0);
    assert_int_equal(n.kind, PV_STAT_COUNTER);
    assert_int_equal(n.unit, PV_UNIT_SECONDS);
    assert_int_equal(pv_stat_classify("interrupts_total", XEN_PV_STATS_TYPE_U64, &n), 0);
    assert_int_equal(n.unit, PV_UNIT_NONE);
    assert_int_equal(pv_stat_classify("mem_free_bytes", XEN_PV_STATS_TYPE_U64, &n), 0);
    assert_int_equal(n.kind, PV_STAT_GAUGE);
    assert_int_equal(n.unit, PV_UNIT_BYTES);
    assert_int_equal(n.base_len, strlen("mem_free_bytes"));
    assert_int_equal(pv_stat_classify("queue_delta", XEN_PV_STATS_TYPE_S64, &n), 0);
    assert_int_equal(n.kind, PV_STAT_GAUGE);
    assert_int_equal(pv_stat_classify("load1", XEN_PV_STATS_TYPE_DOUBLE, &n), 0);
    assert_int_equal(pv_stat_classify("total", XEN_PV_STATS_TYPE_U64, &n), 0);
    assert_int_equal(n.kind, PV_STAT_GAUGE);
    assert_int_equal(pv_stat_classify("seconds", XEN_PV_STATS_TYPE_U64, &n), 0);
    assert_int_equal(n.unit, PV_UNIT_NONE);
    /* outside the convention: the statistic stays in xenstats_pv_value */
    static const char *const bad[] = {"Rx", "rx bytes", "1rx", "_rx", "rx_", "rx__bytes", "rx-bytes",
                                      "x_total_total", "x_count", "x_sum", "x_bucket", "x_created", "x_info",
                                      "x_created_total", "x_gsum", "x_gcount_total", "", "r\xc3\xa9",
                                      "user_ms", "s_reclaimable_bytes", "x_sec", "read_kb",
                                      "io_time_milliseconds_total",
                                      "used_kilobytes", "queue_gauge", "a_counter_total", "t_fahrenheit"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n.kind = 0;
        assert_int_equal(pv_stat_classify(bad[i], XEN_PV_STATS_TYPE_U64, &n), -EINVAL);
        assert_int_equal(n.kind, 0);
    }
    /* a counter is never negative, text is never a number */
    assert_int_equal(pv_stat_classify("x_total", XEN_PV_STATS_TYPE_S64, &n), -EINVAL);
    assert_int_equal(pv_stat_classify("x", XEN_PV_STATS_TYPE_ASCII, &n), -EINVAL);
    assert_int_equal(pv_stat_classify("x", 0, &n), -EINVAL);
    assert_int_equal(pv_stat_classify("x", 9, &n), -EINVAL);
    /* 62 characters at most */
    char longest[64];
    memset(longest, 'a', 63);
    longest[63] = '\0';
    assert_int_equal(pv_stat_classify(longest, XEN_PV_STATS_TYPE_U64, &n), -EINVAL);
    longest[62] = '\0';
    assert_int_equal(pv_stat_classify(longest, XEN_PV_STATS_TYPE_U64, &n), 0);
    assert_string_equal(pv_unit_name(PV_UNIT_SECONDS), "seconds");
    assert_string_equal(pv_unit_name(PV_UNIT_NONE), "");
    assert_string_equal(pv_unit_name(PV_UNIT_COUNT_), "");
}

static void test_convention_sets(void **state)
{
    const char *dev = "untouched";
    const char *set = "net eth0";

    (void)state;
    assert_int_equal(pv_set_group(set, &dev), 3);
    assert_ptr_equal(dev, set + 4);
    assert_int_equal(pv_set_group("memory", &dev), 6);
    assert_null(dev);
    assert_int_equal(pv_set_group("disk nvme0n1", &dev), 4);
    assert_string_equal(dev, "nvme0n1");
    assert_int_equal(pv_set_group("web my app {x}", &dev), 3);
    assert_string_equal(dev, "my app {x}");
    assert_int_equal(pv_set_group("eth0", &dev), 4);
    static const char *const bad[] = {"Tx", "Network #0", "net_eth0", "xen_memory0", "net ", "net  ", " net",
                                      "0net", "", "net\teth0", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                      "ms", "gauge x", "kb"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dev = "untouched";
        assert_int_equal(pv_set_group(bad[i], &dev), -EINVAL);
        assert_string_equal(dev, "untouched");
    }
    assert_int_equal(pv_set_group("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa x", &dev), 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_char_set),
        cmocka_unit_test(test_name_check),
        cmocka_unit_test(test_pages_one),
        cmocka_unit_test(test_pages_several),
        cmocka_unit_test(test_pages_distinct_names),
        cmocka_unit_test(test_pages_unknown_type),
        cmocka_unit_test(test_pages_bad_name),
        cmocka_unit_test(test_pages_after_end),
        cmocka_unit_test(test_pages_duplicates),
        cmocka_unit_test(test_pages_empty_and_arguments),
        cmocka_unit_test(test_value_integers),
        cmocka_unit_test(test_value_doubles),
        cmocka_unit_test(test_value_ascii),
        cmocka_unit_test(test_value_bad_type),
        cmocka_unit_test(test_number),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_keys_accepted),
        cmocka_unit_test(test_keys_not_ready),
        cmocka_unit_test(test_keys_vanished),
        cmocka_unit_test(test_keys_indices),
        cmocka_unit_test(test_keys_numbers),
        cmocka_unit_test(test_keys_many),
        cmocka_unit_test(test_convention_statistics),
        cmocka_unit_test(test_convention_sets),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
