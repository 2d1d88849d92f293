/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "guest/text.h"

bool text_next_line(struct text_cursor *cur, const char **ret_line, size_t *ret_len)
{
    const char *nl;

    if (!cur->p || cur->p >= cur->end)
        return false;
    nl = memchr(cur->p, '\n', (size_t)(cur->end - cur->p));
    *ret_line = cur->p;
    if (nl) {
        *ret_len = (size_t)(nl - cur->p);
        cur->p = nl + 1;
    } else {
        *ret_len = (size_t)(cur->end - cur->p);
        cur->p = cur->end;
    }
    return true;
}

bool text_is_blank(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!text_is_blank_char(s[i]))
            return false;
    return true;
}

bool text_next_token(const char *line, size_t n, size_t *pos, const char **ret_token, size_t *ret_len)
{
    size_t i = *pos, start;

    while (i < n && text_is_blank_char(line[i]))
        i++;
    if (i >= n) {
        *pos = n;
        return false;
    }
    start = i;
    while (i < n && !text_is_blank_char(line[i]))
        i++;
    *ret_token = line + start;
    *ret_len = i - start;
    *pos = i;
    return true;
}

int text_parse_u64(const char *s, size_t n, uint64_t *ret_value)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0)
        return -EINVAL;
    for (i = 0; i < n; i++) {
        unsigned int d;

        if (!is_digit(s[i]))
            return -EINVAL;
        d = (unsigned int)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *ret_value = v;
    return 0;
}

int text_parse_s64(const char *s, size_t n, int64_t *ret_value)
{
    bool neg = false;
    uint64_t v;
    int r;

    if (n && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s++;
        n--;
    }
    r = text_parse_u64(s, n, &v);
    if (r < 0)
        return r;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return -ERANGE;
        *ret_value = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return -ERANGE;
        *ret_value = (int64_t)v;
    }
    return 0;
}

/* strtod() needs a NUL-terminated copy; 63 characters hold any double. */
static int strtod_token(const char *s, size_t n, double *ret_value)
{
    char buf[64], *end;
    double v;

    if (n == 0 || n >= sizeof(buf) || memchr(s, '\0', n))
        return -EINVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    if (end != buf + n)
        return -EINVAL;
    /* Overflow gives ±HUGE_VAL, underflow a denormal or 0: both are fine
     * as statistics, so ERANGE is not an error here. */
    *ret_value = v;
    return 0;
}

int text_parse_real(const char *s, size_t n, double *ret_value)
{
    size_t i, dots = 0;

    if (n == 0 || !is_digit(s[0]))
        return -EINVAL;
    for (i = 0; i < n; i++) {
        if (s[i] == '.')
            dots++;
        else if (!is_digit(s[i]))
            return -EINVAL;
    }
    if (dots > 1 || s[n - 1] == '.')
        return -EINVAL;
    return strtod_token(s, n, ret_value);
}

int text_parse_double(const char *s, size_t n, double *ret_value)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (text_is_blank_char(s[i]) || s[i] == '\n')
            return -EINVAL;
    return strtod_token(s, n, ret_value);
}
