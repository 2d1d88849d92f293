/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats-publish: `xenstats publish` as a program of its own, for guests.
 * It links the library's platform and provider code and nothing a guest
 * lacks (no libxenctrl, HTTP, curses or JSON library); the xenstats
 * command runs the same code as its publish subcommand.
 */
#include <stdio.h>
#include <string.h>

#include "cli/tool.h"

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("%s-publish %s\n", PROG, XENSTATS_VERSION);
        return 0;
    }
    tool_log_init("publish");
    return cmd_publish(argc, argv);
}
