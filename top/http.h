/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * top's HTTP client (top_http.c): one GET of the agent's snapshot, with
 * its own parser of the response, bounded and fuzzed.
 */
#ifndef XENSTATS_TOP_HTTP_H
#define XENSTATS_TOP_HTTP_H

#include <stddef.h>

struct top_url {
    char host[256]; /* without brackets for IPv6 */
    char port[8];
    char path[1024]; /* begins with '/' */
};

/*
 * Split an http:// URL (or HOST[:PORT][/PATH], taken as one); the path is
 * the URL's own with its trailing '/' removed and `suffix` appended (unless
 * it already ends with it).
 * -EINVAL with a reason.
 */
int top_url_parse(const char *url, const char *suffix, struct top_url *ret_url, char *err, size_t errlen);

/* Largest body top_http_get() accepts. */
#define TOP_HTTP_MAX_BODY (256u << 20)

/*
 * GET url with HTTP/1.1 and Connection: close, all within timeout_ms; a
 * signal that sets *cancel (may be NULL) ends it early with -EINTR.
 * Returns 0 and a NUL-terminated body the caller frees, or a negative errno
 * with a reason (see top_source_fetch()).
 */
int top_http_get(const struct top_url *url, int timeout_ms, const volatile int *cancel, char **ret_body,
                 size_t *ret_len, char *err, size_t errlen);

/*
 * Decode an HTTP response of `len` bytes in place: check the status line,
 * undo chunked transfer encoding, honour Content-Length.  buf must have
 * room for a NUL at buf[len].  On success the body and its length describe the
 * NUL-terminated body inside buf.  Exposed for tests.
 */
int top_http_parse_response(char *buf, size_t len, char **ret_body, size_t *ret_len, char *err, size_t errlen);

#endif
