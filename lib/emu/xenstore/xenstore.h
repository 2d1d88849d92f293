/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstore module of the emulated host: a store engine (xs_store.h), its
 * wire server (xs_server.h) on <run dir>/xenstore/<domid>, and the nodes a
 * toolstack writes when a domain comes and goes.
 */
#ifndef XENSTATS_EMU_XENSTORE_H
#define XENSTATS_EMU_XENSTORE_H

struct emu_host;

/*
 * Register the module with host (host->loop must be set).  The store is
 * created with the first domain and freed with the last, so that
 * emu_host_fini() leaves nothing behind.  One host per process.
 * Returns 0, -EBUSY (already registered) or emu_host_add_module()'s error.
 */
int emu_xenstore_register(struct emu_host *host);

#endif
