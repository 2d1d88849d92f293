/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded scanning of untrusted text: lines and blank-separated tokens are
 * (pointer, length) pairs inside the caller's buffer; nothing here relies
 * on a NUL terminator or reads past the end it was given.
 */
#ifndef XENSTATS_GUEST_TEXT_H
#define XENSTATS_GUEST_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct text_cursor {
    const char *p, *end;
};

static inline bool is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static inline bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool text_is_blank_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The next line (without its '\n') or false at the end. */
bool text_next_line(struct text_cursor *cur, const char **ret_line, size_t *ret_len);
/* True when the n bytes are only blanks. */
bool text_is_blank(const char *s, size_t n);
/* The next blank-separated token of line[0..n) from *pos, or false. */
bool text_next_token(const char *line, size_t n, size_t *pos, const char **ret_token, size_t *ret_len);
/* Strict decimal: 1 to 20 digits, no sign.  0, -EINVAL, -ERANGE. */
int text_parse_u64(const char *s, size_t n, uint64_t *ret_value);
/* Optional '-' or '+', then decimal digits.  0, -EINVAL, -ERANGE. */
int text_parse_s64(const char *s, size_t n, int64_t *ret_value);
/* Unsigned decimal with an optional fraction ("12", "0.25"), as /proc prints. */
int text_parse_real(const char *s, size_t n, double *ret_value);
/* Any strtod() form (sign, exponent, "nan", "inf"), whole token.  0, -EINVAL. */
int text_parse_double(const char *s, size_t n, double *ret_value);

#endif /* XENSTATS_GUEST_TEXT_H */
