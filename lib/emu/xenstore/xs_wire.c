/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "xs_wire.h"

#define HDR sizeof(struct xsd_sockmsg)

void xs_wire_in_reset(struct xs_wire_in *in)
{
    in->used = 0;
}

size_t xs_wire_in_want(const struct xs_wire_in *in)
{
    if (in->used < HDR)
        return HDR - in->used;
    return HDR + in->u.hdr.len - in->used;
}

int xs_wire_in_added(struct xs_wire_in *in, size_t n)
{
    in->used += n;
    if (in->used < HDR)
        return 0;
    if (in->u.hdr.len > XENSTORE_PAYLOAD_MAX)
        return -EMSGSIZE;
    return in->used == HDR + in->u.hdr.len;
}

int xs_wire_in_feed(struct xs_wire_in *in, const void *data, size_t len, size_t *ret_used)
{
    size_t want = xs_wire_in_want(in), n = len < want ? len : want;

    memcpy(in->u.raw + in->used, data, n);
    *ret_used = n;
    return xs_wire_in_added(in, n);
}

const char *xs_wire_error_name(int err)
{
    size_t i;

    for (i = 0; i < ARRAY_SIZE(xsd_errors); i++)
        if (xsd_errors[i].errnum == -err)
            return xsd_errors[i].errstring;
    return "EINVAL";
}

int xs_wire_event(const char *path, const char *token, struct xsd_sockmsg *hdr, char *body)
{
    size_t pl = strlen(path) + 1, tl = strlen(token) + 1;

    if (pl + tl > XENSTORE_PAYLOAD_MAX)
        return -E2BIG;
    memcpy(body, path, pl);
    memcpy(body + pl, token, tl);
    hdr->type = XS_WATCH_EVENT;
    hdr->req_id = 0;
    hdr->tx_id = 0;
    hdr->len = (uint32_t)(pl + tl);
    return 0;
}

/* The number of NUL-terminated strings in body; bytes after the last NUL
 * are not a string (WRITE's data is handled apart). */
static unsigned int count_strings(const char *body, size_t len)
{
    unsigned int n = 0;
    size_t i;

    for (i = 0; i < len; i++)
        n += body[i] == '\0';
    return n;
}

/* Exactly `n` strings filling the whole payload. */
static bool exact_strings(const char *body, size_t len, unsigned int n)
{
    return len > 0 && body[len - 1] == '\0' && count_strings(body, len) == n;
}

/* The i-th string of a payload known to hold enough. */
static const char *nth_string(const char *body, unsigned int i)
{
    while (i--)
        body += strlen(body) + 1;
    return body;
}

static int parse_domid(const char *s, uint32_t *ret)
{
    uint64_t v;

    if (parse_u64(s, XS_DOMID_MAX, &v) < 0)
        return -EINVAL;
    *ret = (uint32_t)v;
    return 0;
}

struct reply {
    struct xsd_sockmsg hdr;
    char body[XENSTORE_PAYLOAD_MAX];
};

static int ack(struct reply *rep)
{
    memcpy(rep->body, "OK", 3);
    rep->hdr.len = 3;
    return 0;
}

static int put_string(struct reply *rep, const char *s)
{
    size_t l = strlen(s) + 1;

    if (l > sizeof(rep->body))
        return -E2BIG;
    memcpy(rep->body, s, l);
    rep->hdr.len = (uint32_t)l;
    return 0;
}

static int do_get_perms(struct xs_conn *c, uint32_t tx, const char *path, struct reply *rep)
{
    static struct xs_perm perms[XS_PERMS_MAX]; /* single-threaded; keeps the stack small */
    size_t n, i, off = 0;
    int r = xst_get_perms(c, tx, path, perms, ARRAY_SIZE(perms), &n);

    if (r < 0)
        return r;
    for (i = 0; i < n; i++) {
        int w = xs_perm_format(&perms[i], rep->body + off, sizeof(rep->body) - off);

        if (w < 0)
            return -E2BIG;
        off += (size_t)w + 1;
    }
    rep->hdr.len = (uint32_t)off;
    return 0;
}

static int do_set_perms(struct xs_conn *c, uint32_t tx, const char *body, size_t len)
{
    static struct xs_perm perms[XS_PERMS_MAX];
    unsigned int n, i;
    const char *p;
    int r;

    if (len == 0 || body[len - 1] != '\0')
        return -EINVAL;
    n = count_strings(body, len);
    if (n < 2)
        return -EINVAL;
    n--;
    if (n > XS_PERMS_MAX)
        return -EINVAL;
    p = nth_string(body, 1);
    for (i = 0; i < n; i++) {
        r = xs_perm_parse(p, &perms[i]);
        if (r < 0)
            return r;
        p += strlen(p) + 1;
    }
    return xst_set_perms(c, tx, body, perms, n);
}

static int do_control(const char *body, size_t len, struct reply *rep)
{
    const char *cmd;

    if (!exact_strings(body, len, count_strings(body, len)) || count_strings(body, len) < 1)
        return -EINVAL;
    cmd = body;
    if (!strcmp(cmd, "help"))
        return put_string(rep, "help\nprint <text>\n");
    if (!strcmp(cmd, "print")) {
        if (count_strings(body, len) >= 2)
            log_info("xenstore control: %s", nth_string(body, 1));
        return ack(rep);
    }
    return -EINVAL;
}

static int dispatch(struct xs_conn *c, const struct xsd_sockmsg *req, const char *body, struct reply *rep,
                    bool *ret_fire_watch)
{
    bool privileged = xs_conn_domid(c) == 0;
    uint32_t tx = req->tx_id, domid;
    size_t len = req->len, n;
    int r;

    switch (req->type) {
    case XS_READ:
        if (!exact_strings(body, len, 1))
            return -EINVAL;
        r = xst_read(c, tx, body, rep->body, sizeof(rep->body), &n);
        rep->hdr.len = (uint32_t)n;
        return r;
    case XS_DIRECTORY:
        if (!exact_strings(body, len, 1))
            return -EINVAL;
        r = xst_directory(c, tx, body, rep->body, sizeof(rep->body), &n);
        rep->hdr.len = (uint32_t)n;
        return r;
    case XS_DIRECTORY_PART: {
        uint64_t off;

        if (!exact_strings(body, len, 2) || parse_u64(nth_string(body, 1), UINT32_MAX, &off) < 0)
            return -EINVAL;
        r = xst_directory_part(c, tx, body, (size_t)off, rep->body, sizeof(rep->body), &n);
        rep->hdr.len = (uint32_t)n;
        return r;
    }
    case XS_GET_PERMS:
        if (!exact_strings(body, len, 1))
            return -EINVAL;
        return do_get_perms(c, tx, body, rep);
    case XS_WRITE: {
        const char *nul = len ? memchr(body, '\0', len) : NULL;
        size_t off;

        /* Path, then the value: any bytes, not NUL-terminated. */
        if (!nul)
            return -EINVAL;
        off = (size_t)(nul - body) + 1;
        r = xst_write(c, tx, body, body + off, len - off);
        return r < 0 ? r : ack(rep);
    }
    case XS_MKDIR:
        if (!exact_strings(body, len, 1))
            return -EINVAL;
        r = xst_mkdir(c, tx, body);
        return r < 0 ? r : ack(rep);
    case XS_RM:
        if (!exact_strings(body, len, 1))
            return -EINVAL;
        r = xst_rm(c, tx, body);
        return r < 0 ? r : ack(rep);
    case XS_SET_PERMS:
        r = do_set_perms(c, tx, body, len);
        return r < 0 ? r : ack(rep);
    case XS_WATCH:
        if (!exact_strings(body, len, 2))
            return -EINVAL;
        r = xst_watch(c, body, nth_string(body, 1), false);
        *ret_fire_watch = r == 0;
        return r < 0 ? r : ack(rep);
    case XS_UNWATCH:
        if (!exact_strings(body, len, 2))
            return -EINVAL;
        r = xst_unwatch(c, body, nth_string(body, 1));
        return r < 0 ? r : ack(rep);
    case XS_RESET_WATCHES:
        xst_reset_watches(c);
        return ack(rep);
    case XS_TRANSACTION_START: {
        char id[16];
        uint32_t t;

        r = xst_transaction_start(c, tx, &t);
        if (r < 0)
            return r;
        snprintf(id, sizeof(id), "%u", t);
        return put_string(rep, id);
    }
    case XS_TRANSACTION_END:
        if (!exact_strings(body, len, 1) || (strcmp(body, "T") && strcmp(body, "F")))
            return -EINVAL;
        r = xst_transaction_end(c, tx, body[0] == 'T');
        return r < 0 ? r : ack(rep);
    case XS_GET_DOMAIN_PATH: {
        char path[32];

        if (!exact_strings(body, len, 1) || parse_domid(body, &domid) < 0)
            return -EINVAL;
        snprintf(path, sizeof(path), "/local/domain/%u", domid);
        return put_string(rep, path);
    }
    case XS_IS_DOMAIN_INTRODUCED:
        if (!privileged)
            return -EACCES;
        if (!exact_strings(body, len, 1) || parse_domid(body, &domid) < 0)
            return -EINVAL;
        return put_string(rep, xs_store_is_introduced(xs_conn_store(c), domid) ? "T" : "F");
    case XS_CONTROL:
        if (!privileged)
            return -EACCES;
        return do_control(body, len, rep);
    case XS_INTRODUCE:
    case XS_RELEASE:
    case XS_RESUME:
    case XS_SET_TARGET:
        /* Domains come and go with the emulator (docs/emulator.md). */
        return privileged ? -ENOSYS : -EACCES;
    default:
        return -ENOSYS;
    }
}

static uint64_t requests_handled;

uint64_t xs_wire_requests_handled(void)
{
    return requests_handled;
}

void xs_wire_handle(struct xs_conn *c, const struct xsd_sockmsg *req, const char *body, xs_wire_emit_fn emit,
                    void *data)
{
    static struct reply rep;
    bool fire_watch = false;
    int r;

    requests_handled++;

    rep.hdr = *req;
    rep.hdr.len = 0;
    r = dispatch(c, req, body, &rep, &fire_watch);
    if (r < 0) {
        rep.hdr.type = XS_ERROR;
        put_string(&rep, xs_wire_error_name(r));
    }
    emit(data, &rep.hdr, rep.body);
    if (fire_watch)
        xst_watch_fire_initial(c, body, nth_string(body, 1));
}
