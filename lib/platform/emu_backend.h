/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals of the emu backend (emu.c, emu_store.c, emu_grant.c,
 * emu_evtchn.c, emu_hypercall.c), a client of the emulated host.  It speaks the emulator's
 * protocol (lib/emu/proto/) and includes nothing else of the emulator.
 */
#ifndef XENSTATS_EMU_BACKEND_H
#define XENSTATS_EMU_BACKEND_H

#include <stdint.h>

#include "emu/proto/hypercall.h"
#include "emu/proto/run_dir.h"
#include "platform.h"

extern const struct platform_store_ops emu_store_ops;
extern const struct platform_grant_ops emu_grant_ops;
extern const struct platform_evtchn_ops emu_evtchn_ops;

/* Revoke this host handle's grants and drop its mappings (its pages are
 * unmapped); called when the handle closes.  Accepts a handle that never
 * used grants. */
void emu_grant_release(struct platform *p);

/*
 * The hypercall socket client (emu_hypercall.c).  Connect to the hypercall
 * socket of `domid` in the run directory; returns the socket or -errno
 * (-ESRCH: no such domain or no emulator).
 */
int emu_hypercall_connect(uint32_t domid);

/*
 * One request and its reply.  send_fd >= 0 is passed along (not closed).
 * Up to max_fds received descriptors are stored in ret_fds (close-on-exec,
 * caller closes) and counted in *ret_nfds.  Returns reply->result, or
 * -errno when the exchange itself failed (-ESRCH when the emulator closed
 * the connection: the domain was destroyed or the emulator stopped).
 */
int emu_hypercall_call(int fd, const struct emu_hc_request *req, int send_fd, struct emu_hc_reply *ret_reply,
                       int *ret_fds, unsigned int max_fds, unsigned int *ret_nfds);

#endif
