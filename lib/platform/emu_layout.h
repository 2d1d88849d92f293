/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files of the emulated host's run directory, shared by `xenstats emu` (the
 * writer) and the emu backend (the readers):
 *
 *   emu.pid                    pid of the running emulator
 *   control                    UNIX stream socket, line commands (emulator.md)
 *   domains/<domid>/info       "name=...\nvcpus=N\n" (replaced atomically)
 *   domains/<domid>/vcpu-stats the vCPU statistics region (absent when the
 *                              domain was created without it)
 *
 * A domain directory appears by rename() of a complete directory and goes
 * away by rename() to a hidden name before its files are removed, so a
 * reader never sees half a domain.
 */
#ifndef XENSTATS_EMU_LAYOUT_H
#define XENSTATS_EMU_LAYOUT_H

#include <stdint.h>

#include <xenstats/xenstats.h>

#define EMU_PID_FILE "emu.pid"
#define EMU_CONTROL_SOCKET "control"
#define EMU_DOMAINS_DIR "domains"
#define EMU_INFO_FILE "info"
#define EMU_VCPU_STATS_FILE "vcpu-stats"
#define EMU_INFO_MAX 512

/* Parse an info file; -EBADMSG when malformed. */
int emu_info_parse(const char *text, uint32_t domid, struct xenstats_domain_info *ret_info);
/* Format an info file into buf; returns its length or -ENOBUFS. */
int emu_info_format(const struct xenstats_domain_info *info, char *buf, size_t len);

/* 1 if the emulator whose run directory is `dir` is alive, else 0. */
int emu_is_running(const char *dir);

#endif
