/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulator's event loop: one thread, epoll, callbacks per fd.  Modules
 * of the emulated host (scheduler, control socket, xenstore, grants, event
 * channels) register their fds here; nothing in the emulator blocks.
 */
#ifndef XENSTATS_EMU_LOOP_H
#define XENSTATS_EMU_LOOP_H

#include <stdint.h>

struct emu_loop;

typedef void (*emu_fd_cb)(struct emu_loop *loop, int fd, uint32_t events, void *data);

/* NULL and errno on failure; free with emu_loop_free(). */
struct emu_loop *emu_loop_new(void);
void emu_loop_free(struct emu_loop *loop);

/*
 * Watch fd for epoll `events` (EPOLLIN, ...).  The loop does not own fd.
 * Returns 0 or -errno (-EEXIST if fd is watched already).
 */
int emu_loop_add(struct emu_loop *loop, int fd, uint32_t events, emu_fd_cb cb, void *data);
int emu_loop_modify(struct emu_loop *loop, int fd, uint32_t events);
/* Stop watching fd; safe from inside any callback, including fd's own. */
void emu_loop_remove(struct emu_loop *loop, int fd);

/* Dispatch until emu_loop_quit(); returns the status given to it. */
int emu_loop_run(struct emu_loop *loop);
void emu_loop_quit(struct emu_loop *loop, int status);

#endif
