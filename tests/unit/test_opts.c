/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every public option struct read by the rule of include/xenstats/xenstats.h:
 * a newer caller's larger struct is refused when its tail is not zero and
 * accepted when it is; an older caller's smaller struct leaves the fields
 * beyond it at their defaults.  Runs the constructors against `xenstats emu`.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <xenstats/pv.h>

#include "util/util.h"

/* The structs as a caller built against a later release would pass them. */
struct monitor_opts_newer {
    struct xenstats_monitor_opts known;
    uint32_t future[2];
};

struct provider_opts_newer {
    struct xenstats_provider_opts known;
    uint64_t future;
};

static char dir[] = "/tmp/xenstats-opts-test-XXXXXX";
static pid_t emu_pid = -1;
static struct xenstats_host *host;

static int start_emu(void)
{
    const char *exe = getenv("XENSTATS");
    char control[sizeof(dir) + 16], pidfile[sizeof(dir) + 16];
    struct stat st;

    if (!exe || !mkdtemp(dir) || setenv("XENSTATS_EMU_DIR", dir, 1) < 0)
        return -1;
    emu_pid = fork();
    if (emu_pid < 0)
        return -1;
    if (emu_pid == 0) {
        /* a bound in case the test dies before its teardown */
        execl(exe, exe, "emu", "--dir", dir, "--duration", "120s", (char *)NULL);
        _exit(127);
    }
    snprintf(control, sizeof(control), "%s/control", dir);
    snprintf(pidfile, sizeof(pidfile), "%s/emu.pid", dir);
    for (int i = 0; i < 200; i++) {
        if (stat(control, &st) == 0 && S_ISSOCK(st.st_mode) && stat(pidfile, &st) == 0)
            return 0;
        if (waitpid(emu_pid, NULL, WNOHANG) != 0) {
            emu_pid = -1;
            return -1;
        }
        usleep(50000);
    }
    return -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    if (start_emu() < 0)
        return -1;
    host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    return host ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    xenstats_host_close(host);
    if (emu_pid > 0) {
        kill(emu_pid, SIGTERM);
        waitpid(emu_pid, NULL, 0);
    }
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* The byte rule itself, on both structs: the last byte of the tail counts. */
static void test_read_rule(void **state)
{
    struct monitor_opts_newer m = {.known = {.size = sizeof(m), .stale_limit = 9}};
    struct provider_opts_newer p = {.known = {.size = sizeof(p), .monitor_domid = 4}};
    struct xenstats_monitor_opts mdst = {.stale_limit = 3, .max_log_per_s = 1};
    struct xenstats_provider_opts pdst = {.monitor_domid = -1, .withdraw_timeout_ms = 2000};

    (void)state;
    ((unsigned char *)&m)[sizeof(m) - 1] = 1;
    errno = 0;
    assert_int_equal(OPTS_READ(&mdst, &m.known), -EINVAL);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(mdst.stale_limit, 3); /* untouched on failure */
    ((unsigned char *)&m)[sizeof(m) - 1] = 0;
    assert_int_equal(OPTS_READ(&mdst, &m.known), 0);
    assert_int_equal(mdst.stale_limit, 9);

    ((unsigned char *)&p)[sizeof(p) - 1] = 1;
    assert_int_equal(OPTS_READ(&pdst, &p.known), -EINVAL);
    assert_int_equal(pdst.monitor_domid, -1);
    ((unsigned char *)&p)[sizeof(p) - 1] = 0;
    assert_int_equal(OPTS_READ(&pdst, &p.known), 0);
    assert_int_equal(pdst.monitor_domid, 4);

    /* an older struct: what lies beyond its size keeps the default */
    struct xenstats_monitor_opts older = {.size = offsetof(struct xenstats_monitor_opts, max_rejected_sets),
                                          .max_log_per_s = 50};
    mdst.max_log_per_s = 1;
    assert_int_equal(OPTS_READ(&mdst, &older), 0);
    assert_int_equal(mdst.max_log_per_s, 1);
    struct xenstats_provider_opts older_p = {.size = offsetof(struct xenstats_provider_opts, withdraw_timeout_ms),
                                             .monitor_domid = 6, .withdraw_timeout_ms = 5};
    pdst.withdraw_timeout_ms = 2000;
    assert_int_equal(OPTS_READ(&pdst, &older_p), 0);
    assert_int_equal(pdst.monitor_domid, 6);
    assert_int_equal(pdst.withdraw_timeout_ms, 2000);

    /* a size that cannot hold itself: a caller that forgot to set it */
    struct xenstats_provider_opts unset = {.monitor_domid = 6};
    assert_int_equal(OPTS_READ(&pdst, &unset), -EINVAL);
    /* NULL: the defaults */
    assert_int_equal(OPTS_READ(&pdst, (const struct xenstats_provider_opts *)NULL), 0);
}

static bool stats_node_exists(uint32_t domid)
{
    char buf[64];
    int r = xenstats_host_read_domain_key(host, domid, "stats", buf, sizeof(buf));

    assert_true(r >= 0 || r == -ENOENT);
    return r >= 0;
}

static void test_monitor(void **state)
{
    struct monitor_opts_newer newer = {.known = {.size = sizeof(newer)}};
    struct xenstats_monitor_opts older = {.create_stats_node = true}, zero_size = {0};
    struct xenstats_monitor *m;

    (void)state;
    newer.future[1] = 1;
    errno = 0;
    assert_null(xenstats_monitor_new(host, &newer.known));
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(xenstats_monitor_new(host, &zero_size));
    assert_int_equal(errno, EINVAL);

    newer.future[1] = 0;
    m = xenstats_monitor_new(host, &newer.known);
    assert_non_null(m);
    xenstats_monitor_free(m);
    m = xenstats_monitor_new(host, NULL);
    assert_non_null(m);
    xenstats_monitor_free(m);

    /* Built before create_stats_node existed: the flag beyond its size is
     * not read, so adding a domain creates no node (the default)... */
    older.size = offsetof(struct xenstats_monitor_opts, create_stats_node);
    m = xenstats_monitor_new(host, &older);
    assert_non_null(m);
    assert_int_equal(xenstats_monitor_add_domain(m, 0), 0);
    assert_false(stats_node_exists(0));
    xenstats_monitor_free(m);
    /* ...which a struct that reaches the flag does. */
    older.size = sizeof(older);
    m = xenstats_monitor_new(host, &older);
    assert_non_null(m);
    assert_int_equal(xenstats_monitor_add_domain(m, 0), 0);
    assert_true(stats_node_exists(0));
    xenstats_monitor_free(m);
}

static void test_provider(void **state)
{
    struct xenstats_monitor_opts mo = {.size = sizeof(mo), .create_stats_node = true};
    struct provider_opts_newer newer = {.known = {.size = sizeof(newer), .monitor_domid = 3}};
    struct xenstats_provider_opts older = {.size = offsetof(struct xenstats_provider_opts, monitor_domid),
                                           .monitor_domid = 3};
    struct xenstats_monitor *m;
    struct xenstats_provider *p;

    (void)state;
    /* a toolstack in dom0: the provider's default monitor is the `stats` node's 0 */
    m = xenstats_monitor_new(host, &mo);
    assert_non_null(m);
    assert_int_equal(xenstats_monitor_add_domain(m, 0), 0);

    newer.future = 1;
    errno = 0;
    assert_null(xenstats_provider_new(host, "Opts", &newer.known));
    assert_int_equal(errno, EINVAL);

    newer.future = 0;
    p = xenstats_provider_new(host, "Opts", &newer.known);
    assert_non_null(p);
    assert_int_equal(xenstats_provider_monitor_domid(p), 3);
    xenstats_provider_free(p);

    /* Built before monitor_domid existed: the 3 beyond its size is not read. */
    p = xenstats_provider_new(host, "Opts", &older);
    assert_non_null(p);
    assert_int_equal(xenstats_provider_monitor_domid(p), 0);
    xenstats_provider_free(p);

    p = xenstats_provider_new(host, "Opts", NULL);
    assert_non_null(p);
    assert_int_equal(xenstats_provider_monitor_domid(p), 0);
    xenstats_provider_free(p);
    xenstats_monitor_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_rule),
        cmocka_unit_test(test_monitor),
        cmocka_unit_test(test_provider),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
