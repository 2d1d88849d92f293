/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Content coding of the agent's responses (tools, the HTTP side): whether
 * a client's Accept-Encoding takes gzip, and the gzip encoder (zlib) whose
 * output a snapshot keeps (export/export.h, snapshot_render_encoded()).
 */
#ifndef XENSTATS_HTTP_ENCODING_H
#define XENSTATS_HTTP_ENCODING_H

#include <stdbool.h>
#include <stddef.h>

#include "export/export.h"

/*
 * True when an Accept-Encoding value (untrusted; NULL when absent) accepts
 * gzip: "gzip" or "x-gzip" with a non-zero weight, or "*" with one when
 * gzip is not named.  Elements that do not parse are ignored, as RFC 9110
 * asks, so nonsense means identity.
 */
bool http_accepts_gzip(const char *accept_encoding);

/*
 * The rendering of s in `format` compressed as one gzip member (RFC
 * 1952), made in pieces (snapshot_render_to()): the text itself is never
 * held whole.  Returns 0 with *ret_data malloc'd (the caller frees it),
 * or -ENOMEM.  A snapshot_encoder.
 */
int http_gzip_snapshot(const struct snapshot *s, enum render_format format, char **ret_data, size_t *ret_len);

#endif
