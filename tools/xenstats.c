/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The xenstats command: global options, then one subcommand from the table.
 *
 * The table is the one entry point of every subcommand, but not every
 * subcommand is linked into the `xenstats` executable: the agent and top
 * are applications with libraries of their own (libmicrohttpd, gnutls,
 * libyaml, zlib, libcrypt; ncursesw, json-c), built into executables of
 * their own (xenstats-agent, xenstats-top in XENSTATS_APP_DIR) from this
 * same file, each with only its own command compiled in.  `xenstats agent
 * ARGS` executes xenstats-agent with the whole command line, global
 * options included, so the agent parses it as `xenstats` would and runs
 * in the same process, named `xenstats` as before (a unit's ExecStart=,
 * ps, pgrep and journal lines see no difference).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/tool.h"
#include "util/util.h"

/* What this executable runs itself: every command but the applications', or one application's. */
#if defined(XENSTATS_APP_AGENT) || defined(XENSTATS_APP_TOP)
#define APPLICATION 1
#define MAIN_COMMAND(fn) NULL
#else
#define APPLICATION 0
#define MAIN_COMMAND(fn) fn
#endif
#ifdef XENSTATS_APP_AGENT
#define AGENT_COMMAND cmd_agent
#else
#define AGENT_COMMAND NULL
#endif
#ifdef XENSTATS_APP_TOP
#define TOP_COMMAND cmd_top
#define XENTOP_COMMAND cmd_xentop
#else
#define TOP_COMMAND NULL
#define XENTOP_COMMAND NULL
#endif

/* Run as this name (an installed link), the executable is `xenstats xentop`. */
#define XENTOP_LINK "xenstats-xentop"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv); /* NULL when another executable runs it */
    const char *executable;            /* that executable, or NULL: this one */
    const char *summary;
} commands[] = {
    {"vcpu", MAIN_COMMAND(cmd_vcpu), NULL, "show a domain's vCPU runstate statistics"},
    {"pv", MAIN_COMMAND(cmd_pv), NULL, "sample the PV stats sets guests publish"},
    {"agent", AGENT_COMMAND, "xenstats-agent", "serve every domain's statistics over HTTP (dom0 daemon)"},
    {"top", TOP_COMMAND, "xenstats-top", "live view of the domains' vCPU shares and PV stats sets"},
    {"xentop", XENTOP_COMMAND, "xenstats-top", "xentop's options and batch output, for scripts (drop-in)"},
    {"publish", MAIN_COMMAND(cmd_publish), NULL, "publish this guest's OS statistics as PV stats sets (guest agent)"},
    {"emu", MAIN_COMMAND(cmd_emu), NULL, "run or control an emulated Xen host"},
};

#if !APPLICATION
/*
 * Run an application's executable with our command line: the one beside
 * this executable (a build tree), else the installed one.  Returns only on
 * failure, with the exit status.
 */
static int run_application(const char *cmd, const char *executable, char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    sigset_t stop, old;

    /*
     * SIGINT and SIGTERM stay blocked across the exec until the
     * application takes them (tool_trap_signals(), the agent's signalfd):
     * one sent while it starts ends it cleanly rather than killing it.
     */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &old);
    if (n > 0) {
        char *slash;

        self[n] = '\0';
        slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof(path), "%s/%s", self, executable);
            if (access(path, X_OK) == 0)
                goto run;
        }
    }
    snprintf(path, sizeof(path), "%s/%s", XENSTATS_APP_DIR, executable);
run:
    execv(path, argv);
    n = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return fail(cmd, "cannot run %s: %s", path, strerror((int)n));
}
#endif

static void usage(FILE *f)
{
    size_t i;

    fprintf(f,
            "Usage: %s [--backend auto|emu|xen] [-v|-q] COMMAND [ARGS...]\n"
            "       %s --help | --version\n\n"
            "Statistics plumbing for Xen hosts.\n\nCommands:\n",
            PROG, PROG);
    for (i = 0; i < ARRAY_SIZE(commands); i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun '%s COMMAND --help' for a command's options; see xenstats(1).\n", PROG);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"backend", required_argument, NULL, 'b'}, {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
    };
    const char *base = strrchr(argv[0], '/');
    static char **link_argv; /* kept to the end, as argv is */
    size_t i;
    int c;

#if APPLICATION
    prctl(PR_SET_NAME, PROG, 0, 0, 0); /* the process xenstats executed keeps its name */
#endif
    /*
     * xenstats-xentop ARGS is `xenstats xentop ARGS`: xentop's options only,
     * none of ours (a script's `xentop -v` means vCPUs, not verbose).
     */
    if (!strcmp(base ? base + 1 : argv[0], XENTOP_LINK)) {
        link_argv = calloc((size_t)argc + 2, sizeof(*link_argv));
        if (!link_argv)
            return fail(NULL, "out of memory");
        link_argv[0] = (char *)PROG; /* so that the application it runs sees `xenstats xentop` */
        link_argv[1] = (char *)"xentop";
        memcpy(link_argv + 2, argv + 1, (size_t)argc * sizeof(*argv)); /* with the NULL after the last */
        argv = link_argv;
        argc++;
        optind = 1;
        goto command;
    }
    /* '+': stop at the command name; its options are its own. */
    while ((c = getopt_long(argc, argv, "+b:vqhV", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (!strcmp(optarg, "auto"))
                global.backend = XENSTATS_BACKEND_AUTO;
            else if (!strcmp(optarg, "emu"))
                global.backend = XENSTATS_BACKEND_EMU;
            else if (!strcmp(optarg, "xen"))
                global.backend = XENSTATS_BACKEND_XEN;
            else
                return fail(NULL, "--backend %s: expected auto, emu or xen", optarg);
            break;
        case 'v':
            global.verbosity++;
            break;
        case 'q':
            global.verbosity = -1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("%s %s\n", PROG, XENSTATS_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
command:
    for (i = 0; i < ARRAY_SIZE(commands); i++) {
        if (!strcmp(argv[optind], commands[i].name)) {
            int first = optind;

            if (!commands[i].run) {
#if APPLICATION
                return fail(NULL, "%s: run it as '%s %s'", commands[i].name, PROG, commands[i].name);
#else
                return run_application(commands[i].name, commands[i].executable, argv);
#endif
            }
            tool_log_init(commands[i].name);
            /* The command sees itself as argv[0]; 0 re-initialises getopt. */
            optind = 0;
            return commands[i].run(argc - first, argv + first);
        }
    }
    fail(NULL, "unknown command '%s'", argv[optind]);
    usage(stderr);
    return 2;
}
