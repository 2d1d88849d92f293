/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The running emulator's control server: the UNIX socket in the run
 * directory that takes the line commands of `xenstats emu create|destroy|
 * list|...` (protocol in docs/emulator.md) and applies them to the host.
 * Part of the emulator (lib/emu/); it prints nothing, every answer goes to
 * the client that asked.
 */
#ifndef XENSTATS_EMU_CONTROL_H
#define XENSTATS_EMU_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "emu/emu.h"
#include "emu/loop.h"

#define CONTROL_LINE_MAX 1024 /* bytes of a request line, newline excluded */
#define CONTROL_CLIENTS_MAX 64
#define DOMAINS_MAX 8192

struct client {
    struct client *next;
    struct emu_run *run;
    int fd;
    size_t used;
    char buf[CONTROL_LINE_MAX];
};

/* A running emulator: the host, its event loop and the loop's fds. */
struct emu_run {
    struct emu_host host;
    struct emu_loop *loop;
    int tfd, sfd, lfd;
    unsigned int nr_clients;
    struct client *clients;
    uint64_t stop_at;
};

/*
 * Listen on the run directory's control socket (mode 0600: only the host's
 * owner controls it) and serve it from run->loop.  Sets run->lfd; returns 0
 * or a negative errno.
 */
int listen_control(struct emu_run *run);

/* Hang up on a control client and free it (run->clients loses it). */
void client_close(struct client *c);

#endif
