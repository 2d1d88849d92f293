/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For test programs whose processes act as domains of a running
 * `xenstats emu`: a check that ends the process with what failed, the
 * "ok N - what" lines, and joining a domain the way any program does
 * (XENSTATS_EMU_DOMID, then the platform layer).  Header-only: each test
 * program is one file.
 */
#ifndef XENSTATS_TESTS_EMU_ACTOR_H
#define XENSTATS_TESTS_EMU_ACTOR_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"

static unsigned int checks;

#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            fprintf(stderr, "FAIL (%s:%d, pid %d): ", __FILE__, __LINE__, (int)getpid());                        \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fprintf(stderr, " [errno %d %s]\n", errno, strerror(errno));                                          \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

static inline void pass(const char *what)
{
    printf("ok %u - %s\n", ++checks, what);
    fflush(stdout);
}

/* This process joins domain domid of the emulator in $XENSTATS_EMU_DIR. */
static inline struct platform *join(uint32_t domid)
{
    struct xenstats_host *host;
    char text[16];

    snprintf(text, sizeof(text), "%u", domid);
    setenv("XENSTATS_EMU_DOMID", text, 1);
    host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    CHECK(host, "join domain %u", domid);
    return &host->platform;
}

#endif
