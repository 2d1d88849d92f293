/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every subcommand's main shares: the global options, messages, the
 * library's log, opening the host, signals.  Linked into both the xenstats
 * command and the guest's xenstats-publish.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "util/util.h"

struct global_options global = {.backend = XENSTATS_BACKEND_AUTO};
volatile int tool_stop;

int fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s%s%s: ", PROG, cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static void log_to_stderr(enum xenstats_log_level level, const char *message, void *userdata)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const char *cmd = userdata;

    fprintf(stderr, "%s%s%s: %s: %s\n", PROG, cmd ? " " : "", cmd ? cmd : "", names[level], message);
}

void tool_log_init(const char *cmd)
{
    enum xenstats_log_level max = XENSTATS_LOG_WARNING;

    if (global.verbosity < 0)
        max = XENSTATS_LOG_ERROR;
    else if (global.verbosity == 1)
        max = XENSTATS_LOG_INFO;
    else if (global.verbosity > 1)
        max = XENSTATS_LOG_DEBUG;
    xenstats_set_log(log_to_stderr, max, (void *)cmd);
}

struct xenstats_host *tool_host_open(const char *cmd)
{
    struct xenstats_host *host = xenstats_host_open(global.backend);

    if (!host) {
        if (errno == ENOENT)
            fail(cmd, "no Xen host found: no emulated host is running and this is not a Xen dom0 "
                      "(start one with `xenstats emu`, or set XENSTATS_EMU_DIR)");
        else
            fail(cmd, "cannot open the host: %s", strerror(errno));
    }
    return host;
}

int tool_resolve_domain(const char *cmd, struct xenstats_host *host, const char *arg,
                        struct xenstats_domain_info *ret_info)
{
    struct xenstats_domain_info *list = NULL;
    size_t n = 0, i;
    uint64_t domid;
    int r;

    if (parse_u64(arg, XENSTATS_DOMID_MAX, &domid) == 0) {
        r = xenstats_host_domain_info(host, (uint32_t)domid, ret_info);
        if (r == -ESRCH)
            return fail(cmd, "domain %s does not exist", arg);
        if (r < 0)
            return fail(cmd, "domain %s: %s", arg, xenstats_strerror(r));
        return 0;
    }
    r = xenstats_host_list_domains(host, &list, &n);
    if (r < 0)
        return fail(cmd, "cannot list domains: %s", xenstats_strerror(r));
    for (i = 0; i < n; i++) {
        if (!strcmp(list[i].name, arg)) {
            *ret_info = list[i];
            free(list);
            return 0;
        }
    }
    free(list);
    return fail(cmd, "no domain is named '%s' (give a domid or a name from `xl list`)", arg);
}

static void on_signal(int sig)
{
    (void)sig;
    tool_stop = 1;
}

void tool_trap_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
