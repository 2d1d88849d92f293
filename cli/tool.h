/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the subcommands of the xenstats tool. */
#ifndef XENSTATS_TOOL_H
#define XENSTATS_TOOL_H

#include <stdbool.h>
#include <stdint.h>

#include <xenstats/xenstats.h>

#define PROG "xenstats"

struct global_options {
    enum xenstats_backend backend;
    int verbosity; /* 0 errors+warnings, 1 info, 2 debug; -1 errors only */
};

extern struct global_options global;

/* Print to stderr as "xenstats <cmd>: ..." and return 1 (an exit status). */
int fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Install the library's log callback writing to stderr with levels. */
void tool_log_init(const char *cmd);

/* Open the host or explain why not; NULL after printing. */
struct xenstats_host *tool_host_open(const char *cmd);

/*
 * Resolve DOMID or a domain name to a domain.  Returns 0, or prints and
 * returns 1 (exit status) when it does not exist.
 */
int tool_resolve_domain(const char *cmd, struct xenstats_host *host, const char *arg,
                        struct xenstats_domain_info *ret_info);

/* Set by SIGINT/SIGTERM once tool_trap_signals() ran; it also unblocks them. */
extern volatile int tool_stop;
void tool_trap_signals(void);

int cmd_emu(int argc, char **argv);
int cmd_vcpu(int argc, char **argv);
int cmd_pv(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_xentop(int argc, char **argv);

#endif
