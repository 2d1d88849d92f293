/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The xenstats command: global options, then one subcommand from the table. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/tool.h"
#include "util/util.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"vcpu", cmd_vcpu, "show a domain's vCPU runstate statistics"},
    {"pv", cmd_pv, "sample the PV stats sets guests publish"},
    {"agent", cmd_agent, "serve every domain's statistics over HTTP (dom0 daemon)"},
    {"top", cmd_top, "live view of the domains' vCPU shares and PV stats sets"},
    {"publish", cmd_publish, "publish this guest's OS statistics as PV stats sets (guest agent)"},
    {"emu", cmd_emu, "run or control an emulated Xen host"},
};

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
    size_t i;
    int c;

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
    for (i = 0; i < ARRAY_SIZE(commands); i++) {
        if (!strcmp(argv[optind], commands[i].name)) {
            int first = optind;

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
