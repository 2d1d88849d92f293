/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client side of the running emulator's control socket: what `xenstats
 * emu create|destroy|list|...` sends and how it reads the answer (protocol
 * in docs/emulator.md; the server is control.c).  It prints nothing: the
 * answer's lines go to a callback, and a failure is -errno with the reason
 * in the caller's buffer.  Part of lib/emu/, it shares only the protocol
 * (lib/emu/proto/) with the server.
 */
#ifndef XENSTATS_EMU_CLIENT_H
#define XENSTATS_EMU_CLIENT_H

#include <stddef.h>

#include "emu/proto/control.h"

/* Called with each line of an answer, its "domain "/"saved " tag removed,
 * and with the text after a final "ok " (none after a bare "ok"). */
typedef void emu_control_line_fn(const char *line, void *data);

/*
 * The request "VERB ARG..." into buf (EMU_CONTROL_LINE_MAX bytes or fewer).
 * -EINVAL: an argument is empty or holds a blank or a newline, which the
 * line protocol cannot carry; -ENAMETOOLONG: the line is too long.
 */
int emu_control_format(char *buf, size_t len, const char *verb, int argc, char *const *argv);

/*
 * Send `request` (without its newline) to the emulator of the run directory
 * ($XENSTATS_EMU_DIR or the default) and pass its answer to on_line until
 * the final "ok".  0; or -errno with why in err ("no emulated host is
 * running ...", the emulator's own "error" text...).
 */
int emu_control_call(const char *request, emu_control_line_fn *on_line, void *data, char *err, size_t errlen);

#endif
