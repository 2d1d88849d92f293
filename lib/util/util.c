/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static xenstats_log_fn log_fn;
static void *log_userdata;
static enum xenstats_log_level log_max = XENSTATS_LOG_INFO;

void xenstats_set_log(xenstats_log_fn fn, enum xenstats_log_level max_level, void *userdata)
{
    log_fn = fn;
    log_userdata = userdata;
    log_max = max_level;
}

size_t utf8_char_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char lo = 0x80, hi = 0xbf;
    size_t n, i;

    if (s[0] < 0x80)
        return s[0] ? 1 : 0;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4;
    else
        return 0;
    /* the second byte's range rules out overlongs, surrogates and > U+10FFFF */
    if (s[0] == 0xe0)
        lo = 0xa0;
    else if (s[0] == 0xed)
        hi = 0x9f;
    else if (s[0] == 0xf0)
        lo = 0x90;
    else if (s[0] == 0xf4)
        hi = 0x8f;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

bool log_enabled(enum xenstats_log_level level)
{
    return log_fn && level <= log_max;
}

void log_message(enum xenstats_log_level level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int saved = errno;

    if (!log_fn || level > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    log_fn(level, buf, log_userdata);
    errno = saved;
}

const char *xenstats_strerror(int err)
{
    switch (err) {
    case -EBADMSG:
        return "malformed region: bad magic";
    case -EOPNOTSUPP:
        return "not supported by this host";
    default:
        return strerror(err < 0 ? -err : err);
    }
}

uint64_t monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int parse_u64(const char *s, uint64_t max, uint64_t *ret_value)
{
    uint64_t v = 0;

    if (!s || !*s)
        return -EINVAL;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -EINVAL;
        /* a digit above max itself must not wrap max - digit */
        if ((uint64_t)(*s - '0') > max || v > (max - (uint64_t)(*s - '0')) / 10)
            return -ERANGE;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *ret_value = v;
    return 0;
}

int parse_duration_ns(const char *s, uint64_t *ret_ns)
{
    uint64_t whole = 0, frac = 0, frac_div = 1, unit = 1000000000ULL, ns;
    const char *p = s;

    if (!s || !isdigit((unsigned char)*p))
        return -EINVAL;
    for (; isdigit((unsigned char)*p); p++) {
        if (whole > UINT64_MAX / 10 - 10)
            return -ERANGE;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        for (; isdigit((unsigned char)*p); p++) {
            if (frac_div < 1000000000ULL) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_div *= 10;
            }
        }
    }
    if (!strcmp(p, "") || !strcmp(p, "s"))
        unit = 1000000000ULL;
    else if (!strcmp(p, "ms"))
        unit = 1000000ULL;
    else if (!strcmp(p, "us"))
        unit = 1000ULL;
    else if (!strcmp(p, "ns"))
        unit = 1ULL;
    else if (!strcmp(p, "m") || !strcmp(p, "min"))
        unit = 60000000000ULL;
    else
        return -EINVAL;
    if (whole > UINT64_MAX / unit)
        return -ERANGE;
    ns = whole * unit + frac * (unit / frac_div) + (frac * (unit % frac_div)) / frac_div;
    *ret_ns = ns;
    return 0;
}

int read_small_file(const char *path, size_t max, char **ret_text, size_t *ret_len)
{
    char *buf = NULL;
    size_t used = 0;
    int fd, r;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return negative_errno();
    buf = malloc(max + 1);
    if (!buf) {
        r = -ENOMEM;
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, buf + used, max + 1 - used);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = negative_errno();
            goto out;
        }
        if (n == 0)
            break;
        used += (size_t)n;
        if (used > max) {
            r = -EFBIG;
            goto out;
        }
    }
    buf[used] = '\0';
    *ret_text = buf;
    if (ret_len)
        *ret_len = used;
    buf = NULL;
    r = 0;
out:
    free(buf);
    close(fd);
    return r;
}

int write_file_atomic(const char *path, const void *data, size_t len, unsigned int mode)
{
    char tmp[PATH_MAX];
    const char *p = data;
    int fd, r;

    r = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (r < 0 || (size_t)r >= sizeof(tmp))
        return -ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return negative_errno();
    while (len) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = negative_errno();
            goto fail;
        }
        p += n;
        len -= (size_t)n;
    }
    if (close(fd) < 0) {
        fd = -1;
        r = negative_errno();
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        r = negative_errno();
        goto fail;
    }
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return r;
}
