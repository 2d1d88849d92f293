/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers shared by the library, the emulator and the tools. */
#ifndef XENSTATS_UTIL_H
#define XENSTATS_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <xenstats/xenstats.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define XS_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* For a negative errno, store it in errno; return err unchanged. */
static inline int set_errno(int err)
{
    if (err < 0)
        errno = -err;
    return err;
}

/* Negative errno of the last failed libc call, never 0. */
static inline int negative_errno(void)
{
    return errno > 0 ? -errno : -EIO;
}

void log_message(enum xenstats_log_level level, const char *fmt, ...) XS_PRINTF(2, 3);
#define log_error(...) log_message(XENSTATS_LOG_ERROR, __VA_ARGS__)
#define log_warning(...) log_message(XENSTATS_LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_message(XENSTATS_LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_message(XENSTATS_LOG_DEBUG, __VA_ARGS__)
/* Whether a message of this level would be printed at all. */
bool log_enabled(enum xenstats_log_level level);

/*
 * Length (1-4) of the UTF-8 character s starts with, or 0 when the bytes
 * there are not one (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF).  s is NUL-terminated; the NUL is never part of one.
 */
size_t utf8_char_len(const char *s);

/* CLOCK_MONOTONIC in ns. */
uint64_t monotonic_ns(void);

/*
 * Strict unsigned parse of a whole string (decimal, no sign, no spaces).
 * Returns 0 or -EINVAL / -ERANGE (value above max).
 */
int parse_u64(const char *s, uint64_t max, uint64_t *ret_value);

/*
 * Parse a duration such as "250ms", "1.5s", "2" (seconds) into ns.
 * Returns 0 or -EINVAL / -ERANGE.
 */
int parse_duration_ns(const char *s, uint64_t *ret_ns);

/* Read a whole small file (at most max bytes) into a NUL-terminated buffer. */
int read_small_file(const char *path, size_t max, char **ret_text, size_t *ret_len);

/* Write a file atomically: temp file in the same directory, then rename. */
int write_file_atomic(const char *path, const void *data, size_t len, unsigned int mode);

#endif /* XENSTATS_UTIL_H */
