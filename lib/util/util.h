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
#include <string.h>

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

/*
 * The public option structs (struct xenstats_*_opts) are read by the one
 * rule stated in include/xenstats/xenstats.h, "Option structs", so every
 * constructor accepts an older or a newer caller's struct alike.
 */
/*
 * Copy the caller's `opts` over `dst`, a struct of `known_size` bytes that
 * holds the defaults: the bytes the caller's struct covers replace them,
 * the rest stay.  The caller's size is read from its first member.
 * NULL opts: dst is left as it is.  Returns 0, or -EINVAL with errno set
 * when the size cannot even hold itself or a larger struct than ours has
 * a non-zero byte beyond ours (an option this library would ignore).
 * dst is untouched on failure.
 */
static inline int opts_read(void *dst, size_t known_size, const void *opts)
{
    const unsigned char *bytes = opts;
    size_t size;

    if (!opts)
        return 0;
    memcpy(&size, opts, sizeof(size));
    if (size < sizeof(size))
        goto invalid;
    for (size_t i = known_size; i < size; i++)
        if (bytes[i])
            goto invalid;
    memcpy(dst, opts, size < known_size ? size : known_size);
    return 0;
invalid:
    errno = EINVAL;
    return -EINVAL;
}

/*
 * opts_read() for a typed struct: `dst` and `opts` must point to the same
 * option struct, whose first member is its size.
 */
#define OPTS_READ(dst, opts)                                                                                           \
    ((void)sizeof((dst) == (opts)), (void)sizeof(char[offsetof(__typeof__(*(dst)), size) == 0 ? 1 : -1]),            \
     opts_read((dst), sizeof(*(dst)), (opts)))

#endif /* XENSTATS_UTIL_H */
