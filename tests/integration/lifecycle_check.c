/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a guest's process sees of `xenstats emu migrate|save|restore|reboot`
 * on a running emulator (started by test_emu_lifecycle.sh): a guest process
 * (a child, joined to the domain through XENSTATS_EMU_DOMID and the
 * platform layer) holding xenstore watches, a shared page and an event
 * channel with a dom0 process (the parent), across the move to a new domid.
 *
 *   lifecycle_check migrate|save|reboot NAME DOMID
 *   lifecycle_check cycles NAME DOMID N   (N rounds of each; the emulator's
 *                                          fds, RSS and grants at baseline)
 *
 * $XENSTATS names the binary whose `emu` commands it runs.  Prints one
 * "ok N - what" line per check; the first failure prints "FAIL: ..." and
 * exits 1.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xenstore.h>

#include "emu/proto/run_dir.h"
#include "emu_actor.h"
#include "platform/platform.h"
#include "util/util.h"

static const char *name;
static uint32_t old_domid;

/* ---- the two processes' conversation ----------------------------------- */

static void put_u32(int fd, uint32_t v)
{
    CHECK(send(fd, &v, sizeof(v), MSG_NOSIGNAL) == (ssize_t)sizeof(v), "send to peer");
}

static uint32_t get_u32(int fd)
{
    uint32_t v;

    CHECK(recv(fd, &v, sizeof(v), 0) == (ssize_t)sizeof(v), "recv from peer");
    return v;
}

/* `xenstats emu ARGS` and its first line of output (empty if none). */
static int emu(char *out, size_t len, const char *fmt, ...) XS_PRINTF(3, 4);

static int emu(char *out, size_t len, const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    FILE *f;
    int n;

    n = snprintf(cmd, sizeof(cmd), "\"$XENSTATS\" emu ");
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
    va_end(ap);
    f = popen(cmd, "r");
    CHECK(f, "popen %s", cmd);
    out[0] = '\0';
    if (fgets(out, (int)len, f))
        out[strcspn(out, "\n")] = '\0';
    while (fgetc(f) != EOF)
        ;
    return pclose(f);
}

/* A line of `xenstats emu stats` ("stale-evtchn-bugs") as a number. */
static uint64_t emu_stat(const char *key)
{
    char line[256];
    uint64_t v = UINT64_MAX;
    size_t l = strlen(key);
    FILE *f = popen("\"$XENSTATS\" emu stats", "r");

    CHECK(f, "emu stats");
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, l) && line[l] == ' ')
            v = strtoull(line + l + 1, NULL, 10);
    pclose(f);
    CHECK(v != UINT64_MAX, "emu stats has no %s", key);
    return v;
}

/* The list line of a domid: "" when not listed. */
static void list_line(uint32_t domid, char *out, size_t len)
{
    char line[512], want[16];
    FILE *f = popen("\"$XENSTATS\" emu list", "r");

    CHECK(f, "emu list");
    snprintf(want, sizeof(want), "%u ", domid);
    out[0] = '\0';
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, want, strlen(want)))
            snprintf(out, len, "%s", line);
    pclose(f);
}

/* A port pending on h within ms, or -EAGAIN. */
static int wait_port(struct platform *p, struct platform_evtchn *h, int ms)
{
    struct pollfd pfd = {.fd = platform_evtchn_fd(p, h), .events = POLLIN};
    int port = platform_evtchn_pending(p, h);

    if (port == -EAGAIN && poll(&pfd, 1, ms) > 0)
        port = platform_evtchn_pending(p, h);
    if (port >= 0)
        platform_evtchn_unmask(p, h, (uint32_t)port);
    return port;
}

/* The next watch event within ms: 0 and path/token, or -ETIMEDOUT. */
static int wait_watch(struct xs_handle *xs, int ms, char *path, char *token, size_t len)
{
    struct pollfd pfd = {.fd = xs_fileno(xs), .events = POLLIN};
    unsigned int num;
    char **vec;

    if (poll(&pfd, 1, ms) <= 0)
        return -ETIMEDOUT;
    vec = xs_read_watch(xs, &num);
    CHECK(vec, "xs_read_watch");
    snprintf(path, len, "%s", vec[XS_WATCH_PATH]);
    snprintf(token, len, "%s", vec[XS_WATCH_TOKEN]);
    free(vec);
    return 0;
}

static uint32_t read_domid(struct xs_handle *xs)
{
    unsigned int len;
    char *v = xs_read(xs, XBT_NULL, "domid", &len);
    uint32_t d;

    CHECK(v, "read domid");
    d = (uint32_t)strtoul(v, NULL, 10);
    free(v);
    return d;
}

/* ---- the guest -------------------------------------------------------- */

struct guest {
    struct platform *p;
    struct xs_handle *xs;
    struct platform_evtchn *h;
    uint32_t port;
    uint8_t *page;
    uint32_t ref;
};

static void guest_share(int fd, struct guest *g, uint8_t fill)
{
    g->page = platform_grant_share_pages(g->p, 0, 1, &g->ref, 0);
    CHECK(g->page, "share a page with dom0");
    memset(g->page, fill, 4096);
    put_u32(fd, g->ref);
}

/* A channel to dom0: unbound here, bound by dom0, kicked both ways. */
static void guest_channel(int fd, struct guest *g)
{
    int port;

    g->h = platform_evtchn_open(g->p);
    CHECK(g->h, "open an event channel handle");
    port = platform_evtchn_bind_unbound_port(g->p, g->h, 0);
    CHECK(port > 0, "bind an unbound port for dom0");
    g->port = (uint32_t)port;
    put_u32(fd, g->port);
    CHECK(wait_port(g->p, g->h, 2000) == port, "dom0's kick arrives");
    CHECK(platform_evtchn_notify(g->p, g->h, g->port) == 0, "kick dom0");
}

static void guest_setup(int fd, struct guest *g, uint32_t domid)
{
    char path[64], ev[128], token[128];

    g->p = join(domid);
    g->xs = platform_store_open(g->p, 0);
    CHECK(g->xs, "open the store");
    CHECK(xs_write(g->xs, XBT_NULL, "data/x", "1", 1), "write data/x");
    snprintf(path, sizeof(path), "/local/domain/%u/data/a", domid);
    CHECK(xs_watch(g->xs, "data/w", "rel") && xs_watch(g->xs, path, "abs"), "watch");
    CHECK(wait_watch(g->xs, 2000, ev, token, sizeof(ev)) == 0 && wait_watch(g->xs, 2000, ev, token, sizeof(ev)) == 0,
          "each new watch fires once");
    guest_share(fd, g, 0x5a);
    guest_channel(fd, g);
}

/* What exit would close, closed explicitly (so that a leak checker sees
 * nothing left): a handle still holding a stale port counts then, as it
 * would on exit. */
static void guest_close(struct guest *g, struct platform_evtchn *other)
{
    platform_evtchn_close(g->p, other);
    platform_evtchn_close(g->p, g->h);
    xs_close(g->xs);
    xenstats_host_close((struct xenstats_host *)g->p);
}

/* A process started now with the old domain's environment. */
static void check_child_follows(uint32_t now)
{
    pid_t pid;
    int status;

    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        struct platform *p = join(old_domid);
        struct xs_handle *xs;
        struct platform_evtchn *h;

        CHECK(p->self_domid == now, "a child told domain %u joins %u, not %u", old_domid, now, p->self_domid);
        xs = platform_store_open(p, 0);
        CHECK(xs && read_domid(xs) == now, "the child's store is domain %u's", now);
        h = platform_evtchn_open(p);
        CHECK(h && platform_evtchn_bind_unbound_port(p, h, 0) > 0, "the child binds a port");
        _exit(0);
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
}

static void guest(int fd, const char *mode)
{
    char ev[128], token[128], abs_path[64];
    struct guest g = {0}, fresh;
    uint32_t now;
    int got_rel = 0, got_abs = 0, port;

    guest_setup(fd, &g, old_domid);
    now = get_u32(fd); /* after the move */

    CHECK(read_domid(g.xs) == now, "domid reads %u through the old connection", now);
    CHECK(!xs_read(g.xs, XBT_NULL, "data/x", NULL) && errno == ENOENT, "data/x survived the %s", mode);
    snprintf(abs_path, sizeof(abs_path), "/local/domain/%u/data/a", old_domid);
    while (wait_watch(g.xs, 500, ev, token, sizeof(ev)) == 0) {
        if (!strcmp(token, "rel") && !strcmp(ev, "data/w"))
            got_rel++;
        else if (!strcmp(token, "abs") && !strcmp(ev, abs_path))
            got_abs++;
        else
            CHECK(0, "unexpected watch event %s %s", ev, token);
    }
    CHECK(got_rel == 1 && got_abs == 1, "each watch fires once (rel %d, abs %d)", got_rel, got_abs);
    put_u32(fd, 1); /* dom0 writes the new home's data/w */
    CHECK(wait_watch(g.xs, 2000, ev, token, sizeof(ev)) == 0 && !strcmp(ev, "data/w") && !strcmp(token, "rel"),
          "the relative watch follows the new domain");
    pass("guest: new domid, no guest key left, each watch fired once, the relative one follows");

    /* the old channel is dead both ways */
    CHECK(platform_evtchn_notify(g.p, g.h, g.port) == 0, "notify on the stale port returns 0");
    put_u32(fd, 2); /* dom0: nothing arrived; it kicks its end */
    get_u32(fd);
    CHECK(wait_port(g.p, g.h, 300) == -EAGAIN, "nothing arrives on the stale handle");
    pass("guest: a channel bound before the move is silently dead");

    /* grants: new shares are the new domain's; the old page is not */
    {
        uint8_t *old_page = g.page;
        uint32_t old_ref = g.ref;

        guest_share(fd, &g, 0xa5);
        CHECK(g.ref != old_ref, "a new share gets a ref of its own");
        put_u32(fd, old_ref);
        get_u32(fd); /* dom0 checked the maps */
        CHECK(platform_grant_unshare(g.p, old_page, 1) == 0, "unshare of a page shared before the move");
        put_u32(fd, 3);
        get_u32(fd); /* dom0: the new grant is still there */
    }
    pass("guest: new shares work, the old page is no longer granted, its unshare is harmless");

    /* a new handle's channels work, whatever numbers they get */
    fresh = g;
    guest_channel(fd, &fresh);
    CHECK(wait_port(g.p, fresh.h, 200) == -EAGAIN, "no stray event");
    put_u32(fd, 4);
    CHECK(wait_port(g.p, fresh.h, 2000) == (int)fresh.port, "dom0's second kick arrives");
    CHECK(wait_port(g.p, g.h, 300) == -EAGAIN, "and nothing on the stale handle");
    pass("guest: a new handle binds channels that work both ways");

    check_child_follows(now);
    pass("guest: a process started with the old domid joins the new domain");

    put_u32(fd, 5); /* dom0 reads the count, before we touch the stale handle */
    get_u32(fd);
    if (strcmp(mode, "reboot")) {
        port = platform_evtchn_unbind(g.p, g.h, g.port);
        CHECK(port == 0, "unbind of a stale port returns 0");
        put_u32(fd, 6);
        get_u32(fd);
        /* even when the new channel got the stale port's number */
        CHECK(wait_port(g.p, fresh.h, 2000) == (int)fresh.port, "the new channel outlives the stale unbind");
    }
    /* reboot: closes the handle holding the stale port, which counts */
    guest_close(&g, fresh.h);
    put_u32(fd, 7);
    get_u32(fd);
}

/* ---- dom0 ------------------------------------------------------------ */

struct dom0 {
    struct platform *p;
    struct xs_handle *xs;
    struct platform_evtchn *h;
    uint32_t port; /* ours, bound to the guest's */
};

/* Bind the guest's unbound port, swallow the bind's own event, kick it,
 * and hear its kick back. */
static void dom0_channel(int fd, struct dom0 *z, uint32_t domid)
{
    uint32_t remote = get_u32(fd);
    int port = platform_evtchn_bind_interdomain(z->p, z->h, domid, remote);

    CHECK(port > 0, "bind domain %u's port %u", domid, remote);
    z->port = (uint32_t)port;
    CHECK(wait_port(z->p, z->h, 2000) == port, "the bind's event");
    CHECK(platform_evtchn_notify(z->p, z->h, z->port) == 0, "kick the guest");
    CHECK(wait_port(z->p, z->h, 2000) == port, "the guest's kick arrives");
}

static void *dom0_map(int fd, struct dom0 *z, uint32_t domid, uint8_t fill, uint32_t *ret_ref)
{
    uint32_t ref = get_u32(fd);
    uint8_t *m = platform_grant_map(z->p, domid, 1, &ref, PROT_READ);

    CHECK(m && m[0] == fill && m[4095] == fill, "map domain %u's ref %u", domid, ref);
    if (ret_ref)
        *ret_ref = ref;
    return m;
}

static char proc_state(pid_t pid)
{
    char path[64], *text = NULL, *close_paren, state;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    CHECK(read_small_file(path, 4096, &text, NULL) == 0, "read %s", path);
    close_paren = strrchr(text, ')');
    state = close_paren ? close_paren[2] : '?';
    free(text);
    return state;
}

/* Whether the process is stopped (state T) within a second: a signal is
 * delivered after kill() returns. */
static bool stopped(pid_t pid, bool want)
{
    int i;

    for (i = 0; i < 100 && (proc_state(pid) == 'T') != want; i++)
        usleep(10000);
    return (proc_state(pid) == 'T') == want;
}

/* The emulator's command; returns the new domid. */
static uint32_t move(const char *mode, pid_t guest_pid)
{
    char out[256], line[512];
    uint32_t now;

    if (!strcmp(mode, "save")) {
        CHECK(emu(out, sizeof(out), "save %s", name) == 0, "emu save: %s", out);
        CHECK(stopped(guest_pid, true), "the saved domain's process is stopped");
        list_line(old_domid, line, sizeof(line));
        CHECK(!line[0], "a saved domain is not listed: %s", line);
        CHECK(emu(out, sizeof(out), "saved") == 0 && !strncmp(out, "NAME", 4), "emu saved");
        CHECK(emu(out, sizeof(out), "restore no-such-image 2>/dev/null") != 0, "restore of an unknown name fails");
        CHECK(emu(out, sizeof(out), "restore %s", name) == 0, "emu restore: %s", out);
    } else {
        CHECK(emu(out, sizeof(out), "%s %s", mode, name) == 0, "emu %s: %s", mode, out);
    }
    CHECK(sscanf(out, "domid %u", &now) == 1 && now > old_domid, "'%s' names the new domid", out);
    CHECK(stopped(guest_pid, false), "the process runs again");
    return now;
}

static void dom0(int fd, pid_t guest_pid, const char *mode)
{
    struct dom0 z = {0};
    char before[512], after[512], path[64];
    enum platform_evtchn_state state;
    uint32_t now, old_ref, fresh_ref;
    uint8_t *old_map, *fresh_map;
    uint64_t bugs;

    z.p = join(0);
    z.xs = platform_store_open(z.p, 0);
    z.h = platform_evtchn_open(z.p);
    CHECK(z.xs && z.h, "dom0 handles");
    old_map = dom0_map(fd, &z, old_domid, 0x5a, &old_ref);
    dom0_channel(fd, &z, old_domid);
    list_line(old_domid, before, sizeof(before));
    bugs = emu_stat("stale-evtchn-bugs");

    now = move(mode, guest_pid);
    list_line(now, after, sizeof(after));
    CHECK(after[0] && !strcmp(strrchr(after, ' '), strrchr(before, ' ')), "same UUID: %s / %s", before, after);
    list_line(old_domid, after, sizeof(after));
    CHECK(!after[0], "the old domid is gone: %s", after);
    CHECK(platform_evtchn_status(z.p, z.h, z.port, &state) == 0 && state == PLATFORM_EVTCHN_UNBOUND,
          "dom0's end of the old channel went back to unbound");
    CHECK(old_map[0] == 0x5a, "dom0's old mapping stays readable memory");
    CHECK(!platform_grant_map(z.p, old_domid, 1, &old_ref, PROT_READ) && errno == EINVAL, "old domain's ref");
    pass("dom0: new domid, same UUID, old domain gone with its channel end and grants");

    put_u32(fd, now);
    CHECK(get_u32(fd) == 1, "guest step 1");
    snprintf(path, sizeof(path), "/local/domain/%u/data/w", now);
    CHECK(xs_write(z.xs, XBT_NULL, path, "x", 1), "write %s", path);

    CHECK(get_u32(fd) == 2, "guest step 2");
    CHECK(wait_port(z.p, z.h, 300) == -EAGAIN, "the guest's stale kick arrived at dom0");
    CHECK(platform_evtchn_notify(z.p, z.h, z.port) == 0, "kick an unbound port");
    put_u32(fd, 0);

    fresh_map = dom0_map(fd, &z, now, 0xa5, &fresh_ref);
    old_ref = get_u32(fd);
    CHECK(!platform_grant_map(z.p, now, 1, &old_ref, PROT_READ) && errno == EINVAL,
          "the old ref is not the new domain's grant");
    put_u32(fd, 0);
    CHECK(get_u32(fd) == 3, "guest step 3");
    CHECK(fresh_map[0] == 0xa5, "the new grant is intact");
    platform_grant_unmap(z.p, fresh_map, 1);
    fresh_map = platform_grant_map(z.p, now, 1, &fresh_ref, PROT_READ);
    CHECK(fresh_map && fresh_map[0] == 0xa5, "the new grant maps again after the old unshare");
    put_u32(fd, 0);

    dom0_channel(fd, &z, now);
    CHECK(get_u32(fd) == 4, "guest step 4");
    CHECK(platform_evtchn_notify(z.p, z.h, z.port) == 0, "second kick");

    CHECK(emu_stat("stale-evtchn-bugs") == bugs, "no stale-evtchn bug yet");
    CHECK(get_u32(fd) == 5, "guest step 5");
    put_u32(fd, 0);
    if (strcmp(mode, "reboot")) {
        CHECK(get_u32(fd) == 6, "guest step 6");
        CHECK(emu_stat("stale-evtchn-bugs") == bugs + 1, "the unbind of a stale port counts");
        CHECK(platform_evtchn_notify(z.p, z.h, z.port) == 0, "third kick");
        put_u32(fd, 0);
        pass("dom0: an unbind of a stale port is counted as a guest kernel BUG");
    }
    CHECK(get_u32(fd) == 7, "guest step 7");
    put_u32(fd, 0);
    close(fd);
    platform_grant_unmap(z.p, fresh_map, 1);
    platform_evtchn_close(z.p, z.h);
    xs_close(z.xs);
    xenstats_host_close((struct xenstats_host *)z.p);
    {
        int status;

        CHECK(waitpid(guest_pid, &status, 0) == guest_pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the guest failed");
    }
    /* reboot: the guest exited holding one; else it held none any more */
    CHECK(emu_stat("stale-evtchn-bugs") == bugs + 1, "closing a handle: counted iff it held a stale port");
    if (!strcmp(mode, "reboot"))
        pass("dom0: the close of a handle holding a stale port is counted as a guest kernel BUG");
}

/* ---- many cycles: the emulator keeps nothing of them -------------------- */

struct usage {
    unsigned int fds;
    uint64_t rss_kib, grants;
};

static struct usage emu_usage(pid_t pid)
{
    char path[64], *text = NULL, *rss;
    struct usage u = {0};
    FILE *f;

    snprintf(path, sizeof(path), "ls /proc/%d/fd | wc -l", (int)pid);
    f = popen(path, "r");
    CHECK(f && fscanf(f, "%u", &u.fds) == 1, "count the emulator's fds");
    pclose(f);
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    CHECK(read_small_file(path, 1 << 16, &text, NULL) == 0, "read %s", path);
    rss = strstr(text, "VmRSS:");
    CHECK(rss, "VmRSS");
    u.rss_kib = strtoull(rss + 6, NULL, 10);
    free(text);
    u.grants = emu_stat("grant-entries");
    return u;
}

/* The guest renews everything after each move: a new handle and channel
 * (the old one closed: counted, never mind), a new share, its key again. */
static void cycling_guest(int fd)
{
    struct guest g = {0};
    char ev[128], token[128];

    guest_setup(fd, &g, old_domid);
    for (;;) {
        struct platform_evtchn *old_h = g.h;
        uint8_t *old_page = g.page;
        uint32_t now = get_u32(fd);

        if (now == 0)
            break;
        CHECK(read_domid(g.xs) == now, "domid %u", now);
        while (wait_watch(g.xs, 50, ev, token, sizeof(ev)) == 0)
            ;
        CHECK(xs_write(g.xs, XBT_NULL, "data/x", "1", 1), "write data/x again");
        guest_channel(fd, &g);
        platform_evtchn_close(g.p, old_h);
        platform_grant_unshare(g.p, old_page, 1);
        guest_share(fd, &g, 0x5a);
    }
    guest_close(&g, NULL);
}

static pid_t emu_pid(void)
{
    char path[PATH_MAX], *text = NULL;
    pid_t pid;

    CHECK(emu_run_dir(path, sizeof(path) - 16) == 0, "run dir");
    strcat(path, "/" EMU_PID_FILE);
    CHECK(read_small_file(path, 32, &text, NULL) == 0, "read %s", path);
    pid = (pid_t)strtol(text, NULL, 10);
    free(text);
    return pid;
}

static void cycles(int fd, pid_t guest_pid, unsigned int n)
{
    static const char *const modes[] = {"migrate", "save", "reboot"};
    struct dom0 z = {0};
    struct usage base = {0}, end;
    uint8_t *map;
    unsigned int i;

    z.p = join(0);
    z.h = platform_evtchn_open(z.p);
    CHECK(z.h, "dom0 handle");
    map = dom0_map(fd, &z, old_domid, 0x5a, NULL);
    dom0_channel(fd, &z, old_domid);
    for (i = 0; i <= 3 * n; i++) {
        const char *mode = modes[i % 3];
        uint32_t now;

        if (i == 1)
            base = emu_usage(emu_pid());
        now = move(mode, guest_pid);
        put_u32(fd, now);
        platform_evtchn_unbind(z.p, z.h, z.port);
        platform_grant_unmap(z.p, map, 1);
        dom0_channel(fd, &z, now);
        map = dom0_map(fd, &z, now, 0x5a, NULL);
        old_domid = now;
    }
    end = emu_usage(emu_pid()); /* the guest still holds its handles */
    put_u32(fd, 0);
    platform_grant_unmap(z.p, map, 1);
    platform_evtchn_close(z.p, z.h);
    xenstats_host_close((struct xenstats_host *)z.p);
    {
        int status;

        CHECK(waitpid(guest_pid, &status, 0) == guest_pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the guest failed");
    }
    printf("# after cycle 1: %u fds, %llu KiB RSS, %llu grants; after %u: %u fds, %llu KiB, %llu grants\n",
           base.fds, (unsigned long long)base.rss_kib, (unsigned long long)base.grants, 3 * n + 1, end.fds,
           (unsigned long long)end.rss_kib, (unsigned long long)end.grants);
    CHECK(end.fds == base.fds, "the emulator's fds: %u then %u", base.fds, end.fds);
    CHECK(end.grants == base.grants, "grant entries: %llu then %llu", (unsigned long long)base.grants,
          (unsigned long long)end.grants);
    /* Under ASan freed memory sits in quarantine, so RSS says nothing;
     * LeakSanitizer judges the emulator's memory when it exits instead. */
    if (!getenv("LIFECYCLE_SANITIZED"))
        CHECK(end.rss_kib <= base.rss_kib + 1024, "the emulator's RSS: %llu KiB then %llu KiB",
              (unsigned long long)base.rss_kib, (unsigned long long)end.rss_kib);
    pass("cycles: the emulator's fds, grant entries and RSS are at baseline");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    bool cycling = !strcmp(mode, "cycles");
    int sv[2];
    pid_t pid;

    if (argc != (cycling ? 5 : 4) || !getenv("XENSTATS")) {
        fprintf(stderr, "usage: lifecycle_check migrate|save|reboot NAME DOMID | cycles NAME DOMID N\n");
        return 2;
    }
    name = argv[2];
    old_domid = (uint32_t)strtoul(argv[3], NULL, 10);
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        close(sv[0]);
        if (cycling)
            cycling_guest(sv[1]);
        else
            guest(sv[1], mode);
        exit(0);
    }
    close(sv[1]);
    if (cycling)
        cycles(sv[0], pid, (unsigned int)strtoul(argv[4], NULL, 10));
    else
        dom0(sv[0], pid, mode);
    return 0;
}
