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

/* A gzip member being made from pieces; the output grows as it needs. */
struct gzip_stream {
    z_stream z;
    char *out;
    size_t cap;
};

/* Compress what is given (flush: Z_NO_FLUSH, or Z_FINISH at the end); 0 or -ENOMEM. */
static int gzip_feed(struct gzip_stream *g, const char *data, size_t len, int flush)
{
    int r;

    g->z.next_in = (Bytef *)(uintptr_t)data;
    g->z.avail_in = (uInt)len;
    do {
        if (g->z.total_out == g->cap) {
            size_t cap = g->cap * 2;
            char *out = realloc(g->out, cap);

            if (!out)
                return -ENOMEM;
            g->out = out;
            g->cap = cap;
        }
        g->z.next_out = (Bytef *)g->out + g->z.total_out;
        g->z.avail_out = (uInt)(g->cap - g->z.total_out > UINT_MAX ? UINT_MAX : g->cap - g->z.total_out);
        r = deflate(&g->z, flush);
        if (r == Z_STREAM_ERROR)
            return -ENOMEM;
    } while (g->z.avail_in || (flush == Z_FINISH && r != Z_STREAM_END) || g->z.avail_out == 0);
    return 0;
}

static int gzip_sink(void *ctx, const char *data, size_t len)
{
    /* pieces are about RENDER_PIECE bytes: one deflate() call takes an unsigned int */
    if (len > UINT_MAX)
        return -EOVERFLOW;
    return gzip_feed(ctx, data, len, Z_NO_FLUSH);
}

int http_gzip_snapshot(const struct snapshot *s, enum render_format format, char **ret_data, size_t *ret_len)
{
    struct gzip_stream g = {.cap = 65536};
    char *shrunk;
    int r;

    /* 15 + 16: the largest window, with a gzip header and trailer */
    if (deflateInit2(&g.z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    g.out = malloc(g.cap);
    r = g.out ? snapshot_render_to(s, format, gzip_sink, &g) : -ENOMEM;
    if (r == 0)
        r = gzip_feed(&g, NULL, 0, Z_FINISH);
    deflateEnd(&g.z);
    if (r < 0) {
        free(g.out);
        return r;
    }
    /* the buffer doubled as it went: give the rest back */
    shrunk = realloc(g.out, g.z.total_out ? g.z.total_out : 1);
    *ret_data = shrunk ? shrunk : g.out;
    *ret_len = g.z.total_out;
    return 0;
}
