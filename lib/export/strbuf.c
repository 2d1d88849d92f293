/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The buffer every rendering is written to, and the writers of numbers and
 * strings the formats share.  Guest-chosen strings appear as label values
 * (escaped) or JSON strings (escaped): neither can break its format.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "export/private.h"
#include "util/util.h"

/* Hand what the buffer holds to its sink; false (and failed) when it refuses. */
static bool drain(struct export_strbuf *b)
{
    int r;

    if (!b->len)
        return true;
    r = b->sink(b->sink_ctx, b->data, b->len);
    if (r < 0) {
        b->failed = true;
        b->sink_error = r;
        return false;
    }
    b->len = 0;
    return true;
}

bool export_strbuf_grow(struct export_strbuf *b, size_t more)
{
    size_t cap;
    char *d;

    if (b->failed)
        return false;
    if (b->sink && b->len + more + 1 > b->cap && !drain(b))
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    cap = b->cap ? b->cap : b->sink ? EXPORT_RENDER_PIECE : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

/* Room for n bytes in all, at once: a whole rendering (not with a sink). */
void export_strbuf_reserve(struct export_strbuf *b, size_t n)
{
    if (!b->sink && n > b->cap)
        export_strbuf_grow(b, n - b->len);
}

/* The end of a rendering: NUL-terminated, or all of it given to the sink. */
int export_strbuf_finish(struct export_strbuf *b)
{
    if (!b->failed && b->sink)
        drain(b);
    if (b->failed)
        return b->sink_error ? b->sink_error : -ENOMEM;
    if (b->sink)
        return 0;
    if (!export_strbuf_grow(b, 0))
        return -ENOMEM;
    b->data[b->len] = '\0';
    return 0;
}
void export_strbuf_double(struct export_strbuf *b, double v, bool json)
{
    char tmp[40];
    int n;

    if (isnan(v)) {
        puts_(b, json ? "\"NaN\"" : "NaN");
        return;
    }
    if (isinf(v)) {
        puts_(b, v > 0 ? (json ? "\"+Inf\"" : "+Inf") : (json ? "\"-Inf\"" : "-Inf"));
        return;
    }
    /* the shortest form that reads back as the same double: 0.1, not 0.10000000000000001 */
    for (int digits = 15; digits <= 17; digits++) {
        n = snprintf(tmp, sizeof(tmp), "%.*g", digits, v);
        if (digits == 17 || strtod(tmp, NULL) == v)
            break;
    }
    put(b, tmp, (size_t)n);
}

void export_strbuf_free(struct export_strbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* What an invalid UTF-8 byte becomes in every output: U+FFFD. */
#define REPLACEMENT "\xef\xbf\xbd"

void export_strbuf_label(struct export_strbuf *b, const char *s)
{
    const char *run = s;

    while (*s) {
        const char *esc = NULL;
        size_t n = 1;

        if (*s == '\\')
            esc = "\\\\";
        else if (*s == '"')
            esc = "\\\"";
        else if (*s == '\n')
            esc = "\\n";
        else if ((unsigned char)*s >= 0x80 && !(n = utf8_char_len(s)))
            esc = REPLACEMENT, n = 1;
        if (esc) {
            put(b, run, (size_t)(s - run));
            puts_(b, esc);
            run = s + n;
        }
        s += n;
    }
    put(b, run, (size_t)(s - run));
}

void export_strbuf_label_value(struct export_strbuf *b, const char *s)
{
    export_strbuf_label(b, s);
    export_strbuf_finish(b);
}

/*
 * A JSON string: valid UTF-8 passes through unchanged, each byte of an
 * invalid sequence becomes U+FFFD, control characters are escaped.
 */
void export_strbuf_json_string(struct export_strbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    putc_(b, '"');
    while (s && *s) {
        unsigned char c = (unsigned char)*s;
        size_t n;

        if (c == '"' || c == '\\') {
            putc_(b, '\\');
            putc_(b, (char)c);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

            put(b, u, 6);
            s++;
        } else if (c < 0x80) {
            putc_(b, (char)c);
            s++;
        } else if ((n = utf8_char_len(s))) {
            put(b, s, n);
            s += n;
        } else {
            puts_(b, REPLACEMENT);
            s++;
        }
    }
    putc_(b, '"');
}

