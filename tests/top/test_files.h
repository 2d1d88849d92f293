/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The top tests' files under tests/top/ (fixtures of the agent's answers,
 * xentop's captured output), read whole; a cmocka failure names the path.
 * Include after <cmocka.h>.
 */
#ifndef XENSTATS_TESTS_TOP_TEST_FILES_H
#define XENSTATS_TESTS_TOP_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

/* tests/top/DIR/NAME, NUL-terminated; its length (never 0) in *ret_len if asked. */
static inline char *top_test_file(const char *dir, const char *name, size_t *ret_len)
{
    const char *root = getenv("XENSTATS_SOURCE_ROOT");
    char path[4096];
    FILE *f;
    char *buf;
    long len;

    snprintf(path, sizeof(path), "%s/tests/top/%s/%s", root ? root : ".", dir, name);
    f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    if (ret_len)
        *ret_len = (size_t)len;
    return buf;
}

#endif /* XENSTATS_TESTS_TOP_TEST_FILES_H */
