/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Content coding of the agent's responses: see http_encoding.h. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "http_encoding.h"

/*
 * zlib's level 1: the exposition is so repetitive that the best level
 * saves a few percent more at several times the CPU (bench_agent --gzip),
 * and the compression runs in the HTTP thread.
 */
#define GZIP_LEVEL 1

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/*
 * A qvalue: "0" or "1", or either with up to three decimals ("1" only
 * with zeros).  Returns the weight in thousandths, -1 when it does not
 * parse.
 */
static int parse_qvalue(const char *s, size_t len)
{
    int v, scale = 100;
    size_t i;

    if (!len || (s[0] != '0' && s[0] != '1'))
        return -1;
    v = (s[0] - '0') * 1000;
    if (len == 1)
        return v;
    if (s[1] != '.' || len > 5)
        return -1;
    for (i = 2; i < len; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v += (s[i] - '0') * scale;
    }
    return v > 1000 ? -1 : v;
}

/*
 * One element "coding *( OWS ; OWS param )": the coding into *ret_coding
 * (pointer and length) and its weight (1000 without q=).  -1 when the
 * element does not parse.
 */
static int parse_element(const char *s, size_t len, const char **ret_coding, size_t *ret_coding_len)
{
    size_t i = 0, start;
    int q = 1000;

    while (i < len && is_space(s[i]))
        i++;
    start = i;
    while (i < len && s[i] != ';' && !is_space(s[i]))
        i++;
    *ret_coding = s + start;
    *ret_coding_len = i - start;
    if (i == start)
        return -1;
    while (i < len) {
        size_t name, value, end;

        while (i < len && is_space(s[i]))
            i++;
        if (i == len)
            break;
        if (s[i] != ';')
            return -1;
        i++;
        while (i < len && is_space(s[i]))
            i++;
        name = i;
        while (i < len && s[i] != '=' && s[i] != ';' && !is_space(s[i]))
            i++;
        if (i == len || s[i] != '=')
            return -1;
        value = ++i;
        while (i < len && s[i] != ';' && !is_space(s[i]))
            i++;
        end = i;
        if (value - 1 - name == 1 && (s[name] == 'q' || s[name] == 'Q')) {
            q = parse_qvalue(s + value, end - value);
            if (q < 0)
                return -1;
        }
    }
    return q;
}

bool http_accepts_gzip(const char *accept_encoding)
{
    const char *p = accept_encoding;
    int gzip_q = -1, star_q = -1;

    if (!p)
        return false;
    while (*p) {
        size_t len = strcspn(p, ","), coding_len;
        const char *coding;
        int q = parse_element(p, len, &coding, &coding_len);

        if (q >= 0) {
            if ((coding_len == 4 && !strncasecmp(coding, "gzip", 4)) ||
                (coding_len == 6 && !strncasecmp(coding, "x-gzip", 6)))
                gzip_q = q > gzip_q ? q : gzip_q;
            else if (coding_len == 1 && coding[0] == '*')
                star_q = q;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}

int http_gzip_encode(const char *text, size_t len, char **ret_data, size_t *ret_len)
{
    z_stream z = {0};
    size_t cap;
    char *out, *shrunk;
    int r;

    if (len > UINT_MAX)
        return -EOVERFLOW; /* one deflate() call takes an unsigned int */
    /* 15 + 16: the largest window, with a gzip header and trailer */
    if (deflateInit2(&z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    cap = deflateBound(&z, (uLong)len);
    out = malloc(cap);
    if (!out) {
        deflateEnd(&z);
        return -ENOMEM;
    }
    z.next_in = (Bytef *)(uintptr_t)text;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)(cap > UINT_MAX ? UINT_MAX : cap);
    r = deflate(&z, Z_FINISH);
    deflateEnd(&z);
    if (r != Z_STREAM_END) {
        free(out);
        return -ENOMEM;
    }
    /* deflateBound() is about the input's size: give the rest back */
    shrunk = realloc(out, z.total_out ? z.total_out : 1);
    *ret_data = shrunk ? shrunk : out;
    *ret_len = z.total_out;
    return 0;
}
