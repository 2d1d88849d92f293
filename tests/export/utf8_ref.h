/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reference UTF-8 check for the tests, written differently from
 * utf8_char_len(): decode each character to its code point, then reject
 * what RFC 3629 forbids (overlong forms, surrogates, above U+10FFFF).
 */
#ifndef XENSTATS_TEST_UTF8_REF_H
#define XENSTATS_TEST_UTF8_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid character at s[0..len), or 0. */
static inline size_t ref_utf8_char(const unsigned char *s, size_t len)
{
    static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t n, i;
    uint32_t cp;

    if (!len)
        return 0;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (n > len)
        return 0;
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min_for_len[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static inline bool ref_utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0, n;

    while (i < len) {
        n = ref_utf8_char(s + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

#endif
