/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hostile PV stats provider: publishes one malformed or misbehaving set
 * under stats/Hostile/<scenario> with raw grants, event channels and
 * xenstore writes, then misbehaves until SIGTERM.  The monitor must reject
 * or contain it and keep serving everyone else.
 *   pv_hostile SCENARIO        (pv_hostile --list names them)
 *   pv_hostile storm [SETS [WRITES_PER_S]]
 *       SETS malformed sets (default 225) under stats/Storm<n>/, then
 *       WRITES_PER_S (default 50) xenstore writes a second that change
 *       them, until SIGTERM: a guest that costs the monitor all it can.
 */
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xenstore.h>

#include <xenstats/abi/pv_stats.h>
#include <xenstats/xenstats.h>

#include "platform/platform.h"

static volatile sig_atomic_t stop;
static struct platform *pl;
static struct xs_handle *xs;
static struct platform_evtchn *ev;
static char base[256];
static uint8_t *names, *values;
static uint32_t name_ref, value_ref;
static int port = -1;

static const char *const scenarios[] = {
    "name-no-nul", "bad-chars",    "type0-then-more", "unknown-type",   "ref-not-number", "ref-huge",
    "ref-ungranted", "ref-foreign", "ref-gap",        "many-keys",      "evtchn-early",   "bad-port",
    "flood",       "rewrite-names", "ascii-no-nul",   "duplicate-names", "no-answer",     "keys-deleted",
    "healthy", "ascii-utf8", "revoke-names",
};

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void key(const char *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void key(const char *k, const char *fmt, ...)
{
    char path[512], value[64];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    snprintf(path, sizeof(path), "%s/%s", base, k);
    if (!xs_write(xs, XBT_NULL, path, value, (unsigned int)n))
        fprintf(stderr, "pv_hostile: write %s: %s\n", path, strerror(errno));
}

static void entry(uint8_t *page, unsigned int i, uint8_t type, const char *name)
{
    struct xen_pv_stats_name_type *e = (void *)(page + i * XEN_PV_STATS_ENTRY_SIZE);

    e->type = type;
    strncpy(e->name, name, sizeof(e->name));
}

static void put_u64(unsigned int i, uint64_t v)
{
    for (int b = 0; b < 8; b++)
        values[i * XEN_PV_STATS_ENTRY_SIZE + (unsigned int)b] = (uint8_t)(v >> (8 * b));
}

static void grant_pages(uint32_t grantee)
{
    names = platform_grant_share_pages(pl, grantee, 1, &name_ref, 0);
    values = platform_grant_share_pages(pl, 0, 1, &value_ref, 0);
    if (!names || !values)
        die("share_pages");
}

static void bind_port(void)
{
    port = platform_evtchn_bind_unbound_port(pl, ev, 0);
    if (port < 0) {
        errno = -port;
        die("bind_unbound_port");
    }
}

static void storm(int argc, char **argv)
{
    unsigned int sets = argc > 2 ? (unsigned int)atoi(argv[2]) : 225;
    unsigned int rate = argc > 3 ? (unsigned int)atoi(argv[3]) : 50;
    char root[200], path[512];
    char *home = xs_get_domain_path(xs, pl->self_domid);
    unsigned int i, n = 0;

    snprintf(root, sizeof(root), "%s/stats", home);
    free(home);
    for (i = 0; i < sets; i++) {
        snprintf(path, sizeof(path), "%s/Storm%u/s%u/name-type-ref0", root, i / 15, i % 15);
        xs_write(xs, XBT_NULL, path, "bad", 3);
        snprintf(path, sizeof(path), "%s/Storm%u/s%u/event-channel", root, i / 15, i % 15);
        xs_write(xs, XBT_NULL, path, "1", 1);
    }
    printf("published\n");
    fflush(stdout);
    while (!stop) {
        char value[32];
        int len;

        i = (unsigned int)rand() % sets;
        len = snprintf(value, sizeof(value), "bad%u", n++);
        snprintf(path, sizeof(path), "%s/Storm%u/s%u/name-type-ref0", root, i / 15, i % 15);
        if (!xs_write(xs, XBT_NULL, path, value, (unsigned int)len))
            fprintf(stderr, "pv_hostile: write %s: %s\n", path, strerror(errno));
        usleep(rate ? 1000000 / rate : 1000000);
    }
    exit(0);
}

static void publish_refs(void)
{
    key("name-type-ref0", "%u", name_ref);
    key("val-ref0", "%u", value_ref);
}

int main(int argc, char **argv)
{
    struct xenstats_host *host;
    const char *sc = argc > 1 ? argv[1] : "";
    char *home;
    size_t i;
    bool known = false;
    uint64_t samples = 0;

    if (!strcmp(sc, "--list")) {
        for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
            printf("%s\n", scenarios[i]);
        return 0;
    }
    for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        known |= !strcmp(sc, scenarios[i]);
    known |= !strcmp(sc, "storm");
    if (!known) {
        fprintf(stderr, "usage: pv_hostile SCENARIO (--list)\n");
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    host = xenstats_host_open(XENSTATS_BACKEND_AUTO);
    if (!host)
        die("host");
    pl = &host->platform;
    xs = platform_store_open(pl, 0);
    ev = platform_evtchn_open(pl);
    if (!xs || !ev)
        die("open");
    if (!strcmp(sc, "storm"))
        storm(argc, argv);
    home = xs_get_domain_path(xs, pl->self_domid);
    snprintf(base, sizeof(base), "%s/stats/Hostile/%s", home, sc);
    free(home);

    grant_pages(!strcmp(sc, "ref-foreign") ? 4242 : 0);
    entry(names, 0, XEN_PV_STATS_TYPE_U64, "first");
    entry(names, 1, XEN_PV_STATS_TYPE_S64, "second");
    put_u64(0, 7);
    put_u64(1, 8);

    if (!strcmp(sc, "name-no-nul")) {
        memset(names + 64 + 1, 'A', 63);
    } else if (!strcmp(sc, "bad-chars")) {
        entry(names, 1, XEN_PV_STATS_TYPE_S64, "tab\there");
    } else if (!strcmp(sc, "type0-then-more")) {
        entry(names, 2, XEN_PV_STATS_TYPE_END, "");
        entry(names, 3, XEN_PV_STATS_TYPE_U64, "hidden");
    } else if (!strcmp(sc, "unknown-type")) {
        entry(names, 1, 9, "nine");
    } else if (!strcmp(sc, "ascii-utf8")) {
        /* the seed's ASCII is 0x20..0x7e: UTF-8 and stray bytes are invalid values */
        entry(names, 1, XEN_PV_STATS_TYPE_ASCII, "text");
        memcpy(values + 64, "caf\xc3\xa9 \xff\xfe", 9);
    } else if (!strcmp(sc, "ascii-no-nul")) {
        entry(names, 1, XEN_PV_STATS_TYPE_ASCII, "text");
        memset(values + 64, 'x', 64);
    } else if (!strcmp(sc, "duplicate-names")) {
        entry(names, 1, XEN_PV_STATS_TYPE_U64, "first");
    }

    if (!strcmp(sc, "ref-not-number")) {
        key("name-type-ref0", "abc");
        key("val-ref0", "%u", value_ref);
    } else if (!strcmp(sc, "ref-huge")) {
        key("name-type-ref0", "99999999999");
        key("val-ref0", "%u", value_ref);
    } else if (!strcmp(sc, "ref-ungranted")) {
        key("name-type-ref0", "%u", name_ref + 1000);
        key("val-ref0", "%u", value_ref);
    } else if (!strcmp(sc, "ref-gap")) {
        publish_refs();
        key("name-type-ref2", "%u", name_ref);
        key("val-ref2", "%u", value_ref);
    } else if (!strcmp(sc, "many-keys")) {
        publish_refs();
        for (i = 1; i < 3000; i++) {
            char k[32];

            snprintf(k, sizeof(k), "name-type-ref%zu", i);
            key(k, "%u", name_ref);
        }
    } else if (!strcmp(sc, "evtchn-early")) {
        bind_port();
        key("event-channel", "%d", port);
        sleep(1);
        publish_refs();
    } else {
        publish_refs();
    }
    if (!strcmp(sc, "bad-port")) {
        key("event-channel", "77777");
    } else if (strcmp(sc, "evtchn-early")) {
        bind_port();
        key("event-channel", "%d", port);
    }
    printf("published\n");
    fflush(stdout);

    while (!stop) {
        int fd = port >= 0 ? platform_evtchn_fd(pl, ev) : -1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int p;

        if (!strcmp(sc, "flood") && port >= 0) {
            platform_evtchn_notify(pl, ev, (uint32_t)port);
            usleep(100);
        }
        if (fd < 0 || poll(&pfd, 1, 50) <= 0)
            continue;
        while ((p = platform_evtchn_pending(pl, ev)) >= 0) {
            samples++;
            if (!strcmp(sc, "keys-deleted")) {
                xs_rm(xs, XBT_NULL, base); /* mid-sample, and never answer */
            } else if (strcmp(sc, "no-answer")) {
                put_u64(0, 7 + samples);
                if (!strcmp(sc, "rewrite-names") && samples == 2)
                    entry(names, 0, XEN_PV_STATS_TYPE_U64, "renamed");
                /* the name page's grant revoked: a check of the domain's
                 * names in one mapping fails, which must not hide the
                 * other sets' rewrites */
                if (!strcmp(sc, "revoke-names") && samples == 2 && names) {
                    platform_grant_unshare(pl, names, 1);
                    names = NULL;
                }
                platform_evtchn_notify(pl, ev, (uint32_t)p);
            }
            platform_evtchn_unmask(pl, ev, (uint32_t)p);
        }
    }
    xs_rm(xs, XBT_NULL, base);
    if (port >= 0)
        platform_evtchn_unbind(pl, ev, (uint32_t)port);
    if (names)
        platform_grant_unshare(pl, names, 1);
    platform_grant_unshare(pl, values, 1);
    platform_evtchn_close(pl, ev);
    xs_close(xs);
    xenstats_host_close(host);
    return 0;
}
