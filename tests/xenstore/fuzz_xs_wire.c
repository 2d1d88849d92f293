/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: bytes a guest writes to its xenstore socket.  The first byte
 * picks the domain (dom0 or a guest), the rest is a stream of messages
 * framed and handled exactly as the server does, against a store holding
 * the usual toolstack nodes.  Replies must stay within the protocol.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xenstore/xs_store.h"
#include "emu/xenstore/xs_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reply(void *unused, const struct xsd_sockmsg *hdr, const void *body)
{
    const char *b = body;

    if (hdr->len > XENSTORE_PAYLOAD_MAX)
        abort();
    if (hdr->type == XS_ERROR && (hdr->len == 0 || b[hdr->len - 1] != '\0'))
        abort();
}

static void on_event(void *unused, const char *path, const char *token)
{
    static char body[XENSTORE_PAYLOAD_MAX];
    struct xsd_sockmsg hdr;

    if (xs_wire_event(path, token, &hdr, body) == 0 && hdr.len > XENSTORE_PAYLOAD_MAX)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct xs_perm ro[] = {{0, XS_STORE_PERM_NONE}, {1, XS_STORE_PERM_READ}};
    static const struct xs_perm rw[] = {{1, XS_STORE_PERM_NONE}};
    static struct xs_wire_in in;
    struct xs_store *s;
    struct xs_conn *dom0, *me;
    size_t off = 1;

    if (size < 1)
        return 0;
    s = xs_store_new();
    if (!s)
        return 0;
    dom0 = xs_conn_new(s, 0, on_event, NULL);
    me = (data[0] & 1) ? dom0 : xs_conn_new(s, 1, on_event, NULL);
    if (!dom0 || !me)
        goto out;
    xst_mkdir(dom0, 0, "/local/domain/1");
    xst_set_perms(dom0, 0, "/local/domain/1", ro, 2);
    xst_mkdir(dom0, 0, "/local/domain/1/data");
    xst_set_perms(dom0, 0, "/local/domain/1/data", rw, 1);
    xst_write(dom0, 0, "/local/domain/1/name", "fuzz", 4);
    xst_watch(dom0, "/", "all", true);
    xs_store_introduce(s, 1);

    xs_wire_in_reset(&in);
    while (off < size) {
        size_t used;
        int r = xs_wire_in_feed(&in, data + off, size - off, &used);

        off += used;
        if (r < 0)
            break; /* the server disconnects here */
        if (r == 1) {
            xs_wire_handle(me, &in.u.hdr, in.u.raw + sizeof(struct xsd_sockmsg), check_reply, NULL);
            xs_wire_in_reset(&in);
        }
    }
    xs_store_release(s, 1);
out:
    xs_store_free(s);
    return 0;
}
