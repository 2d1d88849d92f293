/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The string writers of every output: JSON strings and Prometheus label
 * values.  Valid UTF-8 passes unchanged, each invalid byte becomes U+FFFD,
 * and the JSON is what Python's or json-c's parser reads back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "export/export.h"
#include "util/util.h"
#include "utf8_ref.h"

static char *json_of(const char *in)
{
    struct export_strbuf b = {0};
    char *out;

    export_strbuf_json_string(&b, in);
    export_strbuf_label_value(&b, ""); /* NUL-terminates */
    out = strdup(b.data);
    export_strbuf_free(&b);
    return out;
}

static char *label_of(const char *in)
{
    struct export_strbuf b = {0};
    char *out;

    export_strbuf_label_value(&b, in);
    out = strdup(b.data);
    export_strbuf_free(&b);
    return out;
}

static void check_json(const char *in, const char *want_json, const char *want_decoded)
{
    char *j = json_of(in);
    struct json_object *o = json_tokener_parse(j);

    assert_string_equal(j, want_json);
    assert_non_null(o);
    assert_true(json_object_is_type(o, json_type_string));
    assert_string_equal(json_object_get_string(o), want_decoded);
    json_object_put(o);
    free(j);
}

static void test_json_utf8_unchanged(void **state)
{
    (void)state;
    check_json("caf\xc3\xa9", "\"caf\xc3\xa9\"", "caf\xc3\xa9");
    check_json("\xe6\x97\xa5\xe6\x9c\xac", "\"\xe6\x97\xa5\xe6\x9c\xac\"", "\xe6\x97\xa5\xe6\x9c\xac");
    check_json("\xf0\x9f\x90\xa7 tux", "\"\xf0\x9f\x90\xa7 tux\"", "\xf0\x9f\x90\xa7 tux");
    check_json("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"", "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
}

static void test_json_invalid_replaced(void **state)
{
    (void)state;
    check_json("bad\xff", "\"bad\xef\xbf\xbd\"", "bad\xef\xbf\xbd");
    check_json("\xc3", "\"\xef\xbf\xbd\"", "\xef\xbf\xbd");                       /* truncated */
    check_json("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"", "\xef\xbf\xbd\xef\xbf\xbd"); /* overlong '/' */
    check_json("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
               "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* a surrogate */
    check_json("\xf4\x90\x80\x80x", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx\"",
               "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx"); /* above U+10FFFF */
    check_json("\xe2\x82", "\"\xef\xbf\xbd\xef\xbf\xbd\"", "\xef\xbf\xbd\xef\xbf\xbd");
}

static void test_json_escapes(void **state)
{
    (void)state;
    check_json("a\"b\\c", "\"a\\\"b\\\\c\"", "a\"b\\c");
    check_json("\x01\n\x7f", "\"\\u0001\\u000a\\u007f\"", "\x01\n\x7f");
}

static void test_label_values(void **state)
{
    char *l;

    (void)state;
    l = label_of("caf\xc3\xa9");
    assert_string_equal(l, "caf\xc3\xa9");
    free(l);
    l = label_of("x\xff\"y\\\n");
    assert_string_equal(l, "x\xef\xbf\xbd\\\"y\\\\\\n");
    free(l);
    l = label_of("\xe0\x80\x80");
    assert_string_equal(l, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    free(l);
}

/* utf8_char_len against the reference on every 1..3-byte sequence and a
 * sweep of 4-byte leads. */
static void test_utf8_against_reference(void **state)
{
    unsigned char s[5] = {0};

    (void)state;
    for (unsigned a = 1; a < 256; a++) {
        s[0] = (unsigned char)a;
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            for (unsigned c = 0; c < 256; c += (b >= 0x80 && b < 0xc0) ? 1 : 255) {
                s[2] = (unsigned char)c;
                s[3] = 0x80;
                size_t want = ref_utf8_char(s, strnlen((char *)s, 4));
                size_t got = utf8_char_len((const char *)s);

                if (got != want)
                    fail_msg("%02x %02x %02x 80: got %zu, want %zu", a, b, c, got, want);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_utf8_unchanged), cmocka_unit_test(test_json_invalid_replaced),
        cmocka_unit_test(test_json_escapes),        cmocka_unit_test(test_label_values),
        cmocka_unit_test(test_utf8_against_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
