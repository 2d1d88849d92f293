/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The xenstore wire protocol (xs_wire.h) on top of the store engine:
 * framing of a byte stream into messages, and one request turned into a
 * reply.  Every byte comes from a possibly hostile guest: lengths are
 * checked against XENSTORE_PAYLOAD_MAX before anything is buffered, and
 * payloads are never assumed NUL-terminated.
 */
#ifndef XENSTATS_EMU_XS_WIRE_H
#define XENSTATS_EMU_XS_WIRE_H

#include <errno.h> /* before xs_wire.h: it defines xsd_errors only then */
#include <stddef.h>
#include <stdint.h>

#include <xen/io/xs_wire.h>

#include "xs_store.h"

/* One message being received. */
struct xs_wire_in {
    size_t used;
    union {
        struct xsd_sockmsg hdr;
        char raw[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX];
    } u;
};

/* Reset for the next message. */
void xs_wire_in_reset(struct xs_wire_in *in);
/* Bytes to receive into in->u.raw + in->used to make progress. */
size_t xs_wire_in_want(const struct xs_wire_in *in);
/*
 * Account n bytes just received there.  Returns 1 when a whole message is
 * in (header in->u.hdr, payload after it), 0 when more is needed, -EMSGSIZE
 * for a header announcing more than XENSTORE_PAYLOAD_MAX: the stream
 * cannot be resynchronised, so the connection must go (as xenstored).
 */
int xs_wire_in_added(struct xs_wire_in *in, size_t n);
/* Copy from data into in as xs_wire_in_added() would; *ret_used says how
 * much was taken (stops at the end of one message). */
int xs_wire_in_feed(struct xs_wire_in *in, const void *data, size_t len, size_t *ret_used);

/*
 * Output: hdr and len bytes of body, to be queued in that order.  A reply
 * is emitted exactly once per request; watch events go through the
 * connection's xs_event_fn.
 */
typedef void (*xs_wire_emit_fn)(void *data, const struct xsd_sockmsg *hdr, const void *body);

/* Handle one complete request from client c. */
void xs_wire_handle(struct xs_conn *c, const struct xsd_sockmsg *req, const char *body, xs_wire_emit_fn emit,
                    void *data);

/* The xsd_errors name of -err (EINVAL for anything not in the table). */
const char *xs_wire_error_name(int err);

/* Requests handled since the emulator started (benchmarks: xenstore traffic). */
uint64_t xs_wire_requests_handled(void);

/*
 * Build an XS_WATCH_EVENT message into hdr/body (body of
 * XENSTORE_PAYLOAD_MAX bytes).  -E2BIG if it would not fit: xenstored
 * drops such events.
 */
int xs_wire_event(const char *path, const char *token, struct xsd_sockmsg *hdr, char *body);

#endif
