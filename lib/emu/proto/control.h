/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's line protocol (docs/emulator.md), all that its
 * server (lib/emu/control.c) and its client (lib/emu/client.c) share
 * besides the socket's name in the run directory (run_dir.h): a request is
 * one line of at most EMU_CONTROL_LINE_MAX bytes, its newline excluded.
 */
#ifndef XENSTATS_EMU_PROTO_CONTROL_H
#define XENSTATS_EMU_PROTO_CONTROL_H

#define EMU_CONTROL_LINE_MAX 1024

#endif
