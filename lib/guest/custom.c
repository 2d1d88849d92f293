/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The custom-set format of `xenstats publish --custom FILE`:
 *
 *   # a comment
 *   [set name]
 *   u64 requests_total 1234
 *   ascii version 1.2.3 beta
 *
 * The file is the user's, and re-read on every sample, so the parser is
 * strict and says where it stopped: a file caught half-written fails as a
 * whole instead of publishing half its values.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest_stats.h"
#include "guest/text.h"
#include "util/util.h"

void guest_custom_init(struct guest_custom *custom)
{
    memset(custom, 0, sizeof(*custom));
}

void guest_custom_free(struct guest_custom *custom)
{
    size_t i;

    if (!custom)
        return;
    for (i = 0; i < custom->count; i++)
        guest_stats_free(&custom->set[i].stats);
    free(custom->set);
    guest_custom_init(custom);
}

const struct guest_custom_set *guest_custom_find(const struct guest_custom *custom, const char *name)
{
    size_t i;

    for (i = 0; i < custom->count; i++)
        if (!strcmp(custom->set[i].name, name))
            return &custom->set[i];
    return NULL;
}

/* Untrusted bytes for an error message: printable, short. */
static void quote(char *out, size_t outlen, const char *s, size_t n)
{
    size_t i, o = 0;

    for (i = 0; i < n && o + 4 < outlen; i++)
        out[o++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (i < n && o + 3 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

static int error_at(char *err, size_t errlen, const char *origin, unsigned int line, const char *fmt, ...)
    XS_PRINTF(5, 6);

static int error_at(char *err, size_t errlen, const char *origin, unsigned int line, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!errlen)
        return -EBADMSG;
    n = snprintf(err, errlen, "%s:%u: ", origin, line);
    if (n >= 0 && (size_t)n < errlen) {
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -EBADMSG;
}

static bool set_name_ok(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n > GUEST_NAME_MAX)
        return false;
    for (i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '/')
            return false;
    return true;
}

static void trim(const char **s, size_t *n)
{
    while (*n && text_is_blank_char((*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && text_is_blank_char((*s)[*n - 1]))
        (*n)--;
}

static struct guest_custom_set *add_set(struct guest_custom *custom, const char *name, size_t n, unsigned int line)
{
    struct guest_custom_set *set;

    if (custom->count == custom->capacity) {
        size_t cap = custom->capacity ? custom->capacity * 2 : 4;
        struct guest_custom_set *grown = realloc(custom->set, cap * sizeof(*grown));

        if (!grown)
            return NULL;
        custom->set = grown;
        custom->capacity = cap;
    }
    set = &custom->set[custom->count++];
    memset(set, 0, sizeof(*set));
    memcpy(set->name, name, n);
    set->line = line;
    guest_stats_init(&set->stats);
    return set;
}

static int parse_line(const char *line, size_t n, unsigned int lineno, const char *origin,
                      struct guest_custom *custom, char *err, size_t errlen)
{
    struct guest_custom_set *set = custom->count ? &custom->set[custom->count - 1] : NULL;
    const char *type, *name, *value;
    size_t pos = 0, typelen, namelen, valuelen;
    char q[80], namebuf[GUEST_NAME_MAX + 1], valuebuf[GUEST_ASCII_MAX + 1];
    int r;

    if (memchr(line, '\0', n))
        return error_at(err, errlen, origin, lineno, "NUL byte in the line");
    trim(&line, &n);
    if (n == 0 || line[0] == '#')
        return 0;
    if (line[0] == '[') {
        const struct guest_custom_set *dup;

        if (line[n - 1] != ']')
            return error_at(err, errlen, origin, lineno, "a set header is '[name]' on a line of its own");
        name = line + 1;
        namelen = n - 2;
        trim(&name, &namelen);
        quote(q, sizeof(q), name, namelen);
        if (!set_name_ok(name, namelen))
            return error_at(err, errlen, origin, lineno,
                            "bad set name '%s': 1 to %d printable ASCII characters, no '/'", q, GUEST_NAME_MAX);
        memcpy(namebuf, name, namelen);
        namebuf[namelen] = '\0';
        dup = guest_custom_find(custom, namebuf);
        if (dup)
            return error_at(err, errlen, origin, lineno, "set '%s' is already defined at line %u", q, dup->line);
        if (set && !set->stats.count)
            return error_at(err, errlen, origin, set->line, "set '%s' has no statistics", set->name);
        if (custom->count >= GUEST_CUSTOM_SETS_MAX)
            return error_at(err, errlen, origin, lineno, "more than %d sets", GUEST_CUSTOM_SETS_MAX);
        if (!add_set(custom, name, namelen, lineno))
            return -ENOMEM;
        return 0;
    }
    if (!text_next_token(line, n, &pos, &type, &typelen) || !text_next_token(line, n, &pos, &name, &namelen))
        return error_at(err, errlen, origin, lineno, "expected '[set name]' or 'TYPE NAME VALUE'");
    value = line + pos;
    valuelen = n - pos;
    trim(&value, &valuelen);
    if (!set)
        return error_at(err, errlen, origin, lineno, "statistic before the first '[set name]'");
    quote(q, sizeof(q), name, namelen);
    if (namelen > GUEST_NAME_MAX)
        return error_at(err, errlen, origin, lineno, "statistic name '%s' is longer than %d characters", q,
                        GUEST_NAME_MAX);
    memcpy(namebuf, name, namelen);
    namebuf[namelen] = '\0';
    if (guest_stats_find(&set->stats, namebuf, set->stats.count))
        return error_at(err, errlen, origin, lineno, "statistic '%s' is already in set '%s'", q, set->name);
    if (set->stats.count >= GUEST_STATS_MAX)
        return error_at(err, errlen, origin, lineno, "more than %d statistics in set '%s'", GUEST_STATS_MAX,
                        set->name);

    if (typelen == 3 && !memcmp(type, "u64", 3)) {
        uint64_t v;

        if (text_parse_u64(value, valuelen, &v) < 0)
            goto bad_value;
        r = guest_stats_add_u64(&set->stats, namebuf, v);
    } else if (typelen == 3 && !memcmp(type, "s64", 3)) {
        int64_t v;

        if (text_parse_s64(value, valuelen, &v) < 0)
            goto bad_value;
        r = guest_stats_add_s64(&set->stats, namebuf, v);
    } else if (typelen == 6 && !memcmp(type, "double", 6)) {
        double v;

        if (text_parse_double(value, valuelen, &v) < 0)
            goto bad_value;
        r = guest_stats_add_double(&set->stats, namebuf, v);
    } else if (typelen == 5 && !memcmp(type, "ascii", 5)) {
        if (valuelen > GUEST_ASCII_MAX)
            return error_at(err, errlen, origin, lineno, "ascii value of '%s' is longer than %d characters", q,
                            GUEST_ASCII_MAX);
        for (size_t i = 0; i < valuelen; i++)
            if (value[i] < 0x20 || value[i] >= 0x7f)
                return error_at(err, errlen, origin, lineno,
                                "ascii value of '%s' has characters other than printable ASCII", q);
        memcpy(valuebuf, value, valuelen);
        valuebuf[valuelen] = '\0';
        r = guest_stats_add_ascii(&set->stats, namebuf, valuebuf);
    } else {
        char tq[32];

        quote(tq, sizeof(tq), type, typelen);
        return error_at(err, errlen, origin, lineno, "unknown type '%s' (expected u64, s64, double or ascii)", tq);
    }
    if (r == -ENOMEM)
        return r;
    if (r < 0)
        return error_at(err, errlen, origin, lineno, "bad statistic name '%s': printable ASCII without spaces", q);
    return 0;

bad_value: {
    char vq[40], tq[16];

    quote(vq, sizeof(vq), value, valuelen);
    quote(tq, sizeof(tq), type, typelen);
    return error_at(err, errlen, origin, lineno, "value '%s' of '%s' is not a valid %s", vq, q, tq);
}
}

int guest_parse_custom(const char *text, size_t len, const char *origin, struct guest_custom *ret_custom, char *err,
                       size_t errlen)
{
    struct text_cursor cur = {text, text + len};
    const char *line;
    size_t n;
    unsigned int lineno = 0;
    int r;

    if (errlen)
        err[0] = '\0';
    guest_custom_free(ret_custom);
    while (text_next_line(&cur, &line, &n)) {
        lineno++;
        r = parse_line(line, n, lineno, origin, ret_custom, err, errlen);
        if (r < 0)
            return set_errno(r);
    }
    if (!ret_custom->count)
        return set_errno(error_at(err, errlen, origin, lineno ? lineno : 1, "no '[set name]' in the file"));
    if (!ret_custom->set[ret_custom->count - 1].stats.count) {
        const struct guest_custom_set *last = &ret_custom->set[ret_custom->count - 1];

        return set_errno(error_at(err, errlen, origin, last->line, "set '%s' has no statistics", last->name));
    }
    return 0;
}

int guest_read_custom(const char *path, struct guest_custom *ret_custom, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int r;

    if (errlen)
        err[0] = '\0';
    r = read_small_file(path, GUEST_CUSTOM_FILE_MAX, &text, &len);
    if (r < 0) {
        if (errlen)
            snprintf(err, errlen, "%s: %s", path,
                     r == -EFBIG ? "larger than 64 KiB" : strerror(-r));
        return set_errno(r);
    }
    r = guest_parse_custom(text, len, path, ret_custom, err, errlen);
    free(text);
    return set_errno(r);
}
