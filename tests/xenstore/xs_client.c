/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A libxenstore client for the integration tests: one operation per run,
 * result on stdout as "OK [output]" or "ERR <ERRNO NAME>", so that a shell
 * script can assert exact error numbers.  The store is the one
 * $XENSTORED_PATH names (what a guest of the emulated host sets), or with
 * "platform" first, the one the emu backend opens for $XENSTATS_EMU_DOMID.
 * Exit status: 0 when the operation ran (whatever its result), 2 on
 * misuse or when the store cannot be reached.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xenstore.h>

#include <xenstats/xenstats.h>

#include "platform/platform.h"

static struct xs_handle *open_store(void)
{
    struct xs_handle *h = xs_open(XS_OPEN_SOCKETONLY);

    if (!h) {
        fprintf(stderr, "xs_client: xs_open: %s\n", strerror(errno));
        exit(2);
    }
    return h;
}

static int result(bool ok, const char *out)
{
    if (ok)
        printf("OK%s%s\n", out ? " " : "", out ? out : "");
    else
        printf("ERR %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
    return 0;
}

static bool parse_perm(const char *s, struct xs_permissions *p)
{
    char *end;

    switch (s[0]) {
    case 'n': p->perms = XS_PERM_NONE; break;
    case 'r': p->perms = XS_PERM_READ; break;
    case 'w': p->perms = XS_PERM_WRITE; break;
    case 'b': p->perms = XS_PERM_READ | XS_PERM_WRITE; break;
    default: return false;
    }
    p->id = (unsigned int)strtoul(s + 1, &end, 10);
    return *end == '\0' && end != s + 1;
}

/* Wait up to 5 s for the next event; NULL on timeout. */
static char **next_event(struct xs_handle *h, unsigned int *num)
{
    struct pollfd pfd = {.fd = xs_fileno(h), .events = POLLIN};
    char **ev = xs_check_watch(h);

    if (ev || errno != EAGAIN)
        return ev;
    if (poll(&pfd, 1, 5000) <= 0)
        return NULL;
    return xs_read_watch(h, num);
}

static int cmd_watch_check(struct xs_handle *h, const char *path, const char *child)
{
    struct xs_handle *other = open_store();
    unsigned int num, i;
    char **ev;

    if (!xs_watch(h, path, "tok"))
        return result(false, NULL);
    /* The initial event, then one for the child written elsewhere. */
    for (i = 0; i < 2; i++) {
        if (i == 1 && !xs_write(other, XBT_NULL, child, "x", 1))
            return result(false, NULL);
        ev = next_event(h, &num);
        if (!ev) {
            printf("ERR TIMEOUT\n");
            return 0;
        }
        printf("EVENT %s %s\n", ev[XS_WATCH_PATH], ev[XS_WATCH_TOKEN]);
        free(ev);
    }
    xs_unwatch(h, path, "tok");
    xs_close(other);
    return result(true, NULL);
}

/* Block until an event for the watch on path arrives; print it. */
static int cmd_wait_event(struct xs_handle *h, const char *path, const char *want)
{
    unsigned int num;
    char **ev;

    if (!xs_watch(h, path, "tok"))
        return result(false, NULL);
    printf("READY\n");
    fflush(stdout);
    for (;;) {
        ev = next_event(h, &num);
        if (!ev) {
            printf("ERR TIMEOUT\n");
            return 0;
        }
        if (!strcmp(ev[XS_WATCH_PATH], want)) {
            printf("EVENT %s\n", ev[XS_WATCH_PATH]);
            free(ev);
            return 0;
        }
        free(ev);
    }
}

/* Read path in a transaction, have another client change it, write it in
 * the transaction: the commit must fail with EAGAIN. */
static int cmd_tx_conflict(struct xs_handle *h, const char *path)
{
    struct xs_handle *other = open_store();
    unsigned int len;
    xs_transaction_t t = xs_transaction_start(h);
    char *v;

    if (t == XBT_NULL)
        return result(false, NULL);
    v = xs_read(h, t, path, &len);
    free(v);
    if (!xs_write(other, XBT_NULL, path, "outside", 7) || !xs_write(h, t, path, "inside", 6))
        return result(false, NULL);
    xs_close(other);
    return result(xs_transaction_end(h, t, false), NULL);
}

/* Write in a transaction: invisible to others until the commit. */
static int cmd_tx_commit(struct xs_handle *h, const char *path, const char *value)
{
    struct xs_handle *other = open_store();
    unsigned int len;
    xs_transaction_t t = xs_transaction_start(h);
    char *before, *after;
    char out[512];

    if (t == XBT_NULL || !xs_write(h, t, path, value, strlen(value)))
        return result(false, NULL);
    before = xs_read(other, XBT_NULL, path, &len);
    if (!xs_transaction_end(h, t, false))
        return result(false, NULL);
    after = xs_read(other, XBT_NULL, path, &len);
    snprintf(out, sizeof(out), "before=%s after=%s", before ? before : "(none)", after ? after : "(none)");
    free(before);
    free(after);
    xs_close(other);
    return result(true, out);
}

/* Count how many of an operation succeed before the first error. */
static int cmd_fill(struct xs_handle *h, const char *what, const char *dir)
{
    char path[256], out[64];
    unsigned int n = 0;
    bool ok = true;

    if (!strcmp(what, "nodes")) {
        for (n = 0; ok && n < 5000; n++) {
            snprintf(path, sizeof(path), "%s/d%u/n%u", dir, n / 64, n % 64);
            ok = xs_write(h, XBT_NULL, path, "", 0);
        }
    } else if (!strcmp(what, "watches")) {
        for (n = 0; ok && n < 5000; n++) {
            snprintf(path, sizeof(path), "t%u", n);
            ok = xs_watch(h, dir, path);
        }
    } else if (!strcmp(what, "transactions")) {
        for (n = 0; ok && n < 5000; n++)
            ok = xs_transaction_start(h) != XBT_NULL;
    } else {
        return 2;
    }
    snprintf(out, sizeof(out), "%u", n - 1);
    if (ok)
        return result(true, out);
    printf("ERR %s after %s\n", strerrorname_np(errno), out);
    return 0;
}

int main(int argc, char **argv)
{
    struct xenstats_host *host = NULL;
    struct xs_handle *h;
    unsigned int len = 0, n, i;
    const char *cmd;
    int argi = 1, rc;
    char *v;

    if (argc > 1 && !strcmp(argv[1], "platform")) {
        host = xenstats_host_open(XENSTATS_BACKEND_EMU);
        if (!host) {
            fprintf(stderr, "xs_client: no emu store\n");
            return 2;
        }
        h = platform_store_open(&host->platform, 0);
        if (!h) {
            fprintf(stderr, "xs_client: store open: %s\n", strerror(errno));
            return 2;
        }
        argi++;
    } else {
        h = open_store();
    }
    if (argc < argi + 2) {
        fprintf(stderr, "usage: xs_client [platform] CMD PATH [ARGS]\n");
        return 2;
    }
    cmd = argv[argi];
    argv += argi + 1;
    argc -= argi + 1;

    if (!strcmp(cmd, "read")) {
        v = xs_read(h, XBT_NULL, argv[0], &len);
        rc = result(v != NULL, v);
        free(v);
    } else if (!strcmp(cmd, "write") && argc == 2) {
        rc = result(xs_write(h, XBT_NULL, argv[0], argv[1], strlen(argv[1])), NULL);
    } else if (!strcmp(cmd, "writen") && argc == 2) {
        size_t size = strtoul(argv[1], NULL, 10);
        char *buf = calloc(1, size + 1);

        memset(buf, 'x', size);
        rc = result(xs_write(h, XBT_NULL, argv[0], buf, (unsigned int)size), NULL);
        free(buf);
    } else if (!strcmp(cmd, "mkdir")) {
        rc = result(xs_mkdir(h, XBT_NULL, argv[0]), NULL);
    } else if (!strcmp(cmd, "rm")) {
        rc = result(xs_rm(h, XBT_NULL, argv[0]), NULL);
    } else if (!strcmp(cmd, "ls")) {
        char **list = xs_directory(h, XBT_NULL, argv[0], &n);
        char out[4096] = "";

        for (i = 0; list && i < n; i++)
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? "," : "", list[i]);
        rc = result(list != NULL, out);
        free(list);
    } else if (!strcmp(cmd, "getperms")) {
        struct xs_permissions *p = xs_get_permissions(h, XBT_NULL, argv[0], &n);
        char out[512] = "", one[32];

        for (i = 0; p && i < n; i++) {
            snprintf(one, sizeof(one), "%c%u", "nrwb"[p[i].perms & 3], p[i].id);
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? "," : "", one);
        }
        rc = result(p != NULL, out);
        free(p);
    } else if (!strcmp(cmd, "setperms") && argc >= 2) {
        struct xs_permissions p[16];

        for (i = 0; i + 1 < (unsigned int)argc && i < 16; i++)
            if (!parse_perm(argv[i + 1], &p[i]))
                return 2;
        rc = result(xs_set_permissions(h, XBT_NULL, argv[0], p, i), NULL);
    } else if (!strcmp(cmd, "domainpath")) {
        v = xs_get_domain_path(h, (unsigned int)strtoul(argv[0], NULL, 10));
        rc = result(v != NULL, v);
        free(v);
    } else if (!strcmp(cmd, "introduced")) {
        errno = 0;
        n = xs_is_domain_introduced(h, (unsigned int)strtoul(argv[0], NULL, 10));
        rc = errno && !n ? result(false, NULL) : result(true, n ? "T" : "F");
    } else if (!strcmp(cmd, "watch-check") && argc == 2) {
        rc = cmd_watch_check(h, argv[0], argv[1]);
    } else if (!strcmp(cmd, "wait-event") && argc == 2) {
        rc = cmd_wait_event(h, argv[0], argv[1]);
    } else if (!strcmp(cmd, "tx-conflict")) {
        rc = cmd_tx_conflict(h, argv[0]);
    } else if (!strcmp(cmd, "tx-commit") && argc == 2) {
        rc = cmd_tx_commit(h, argv[0], argv[1]);
    } else if (!strcmp(cmd, "fill") && argc == 2) {
        rc = cmd_fill(h, argv[0], argv[1]);
    } else {
        fprintf(stderr, "xs_client: unknown command %s\n", cmd);
        rc = 2;
    }
    xs_close(h);
    xenstats_host_close(host);
    return rc;
}
