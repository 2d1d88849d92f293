/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lib/export's writers share and nobody else sees: the appenders of a
 * growable buffer (hand-written: /metrics of a thousand domains is ~100k
 * lines, so the hot ones are inline here) and the names of the states the
 * snapshot keeps as numbers.
 */
#ifndef XENSTATS_EXPORT_PRIVATE_H
#define XENSTATS_EXPORT_PRIVATE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "export/export.h"

/* Make room for `more` bytes and a NUL (handing the buffer to its sink
 * first when it has one); false, and the buffer failed, when that fails. */
bool export_strbuf_grow(struct export_strbuf *b, size_t more);

/* Room for n bytes in all, at once: a whole rendering (not with a sink). */
void export_strbuf_reserve(struct export_strbuf *b, size_t n);

/* The end of a rendering: NUL-terminated, or all of it given to the sink.
 * 0, -ENOMEM or the sink's error. */
int export_strbuf_finish(struct export_strbuf *b);

/* The buffer is NUL-terminated only by export_strbuf_finish(): appends stay cheap. */
static inline void put(struct export_strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap && !export_strbuf_grow(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static inline void puts_(struct export_strbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static inline void putc_(struct export_strbuf *b, char c)
{
    if (b->len + 2 > b->cap && !export_strbuf_grow(b, 1))
        return;
    b->data[b->len++] = c;
}

static inline void put_u64(struct export_strbuf *b, uint64_t v)
{
    char tmp[24];
    int i = 24;

    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(b, tmp + i, (size_t)(24 - i));
}

static inline void put_s64(struct export_strbuf *b, int64_t v)
{
    if (v < 0) {
        putc_(b, '-');
        put_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(b, (uint64_t)v);
    }
}

/* Nanoseconds as exact decimal seconds: 1.500000000 */
static inline void put_ns_seconds(struct export_strbuf *b, uint64_t ns)
{
    char frac[10];
    uint64_t f = ns % 1000000000ULL;

    put_u64(b, ns / 1000000000ULL);
    for (int i = 8; i >= 0; i--, f /= 10)
        frac[i] = (char)('0' + f % 10);
    frac[9] = '\0';
    putc_(b, '.');
    put(b, frac, 9);
}

/* The shortest form that reads back as the same double; NaN and infinities
 * as the text formats spell them, or quoted for JSON. */
void export_strbuf_double(struct export_strbuf *b, double v, bool json);

/* A label value escaped as the text formats want it (\\, \", \n, U+FFFD). */
void export_strbuf_label(struct export_strbuf *b, const char *s);

/* The guests' families (docs/metrics.md): our prefix, then names guests chose. */
#define GUEST_PREFIX "xenstats_guest_"

/* xentop's domain state flags, in the bit order of XENSTATS_DOMAIN_*. */
#define EXPORT_NR_DOMAIN_STATES 6
extern const char *const export_domain_state_names[EXPORT_NR_DOMAIN_STATES];
/* A shutdown reason's name, "unknown" for one Xen added since. */
const char *export_shutdown_name(uint32_t reason);
extern const char *const export_vcpu_source_names[3];

/* The agent's figures as rendered: EXPORT_FIG_AGENT_DOMAINS counts the domains. */
void export_agent_figures(const struct export_snapshot *s, struct export_figs *ret_figs);

#endif
