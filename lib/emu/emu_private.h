/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the parts of the emulated host (emu_host.c, devices.c); not a public interface. */
#ifndef XENSTATS_EMU_PRIVATE_H
#define XENSTATS_EMU_PRIVATE_H

#include "emu.h"
#include "util/util.h"

/* <run dir>/<fmt...> into buf; 0 or -ENAMETOOLONG. */
int emu_host_path(const struct emu_host *host, char *buf, size_t len, const char *fmt, ...) XS_PRINTF(4, 5);
/* Tell every module with a changed() hook. */
void emu_host_tell_modules(struct emu_host *host, struct emu_domain *d, enum emu_change what);

/* The empty sysfs tree at host start (replacing one left behind), and its removal. */
int emu_devices_init(struct emu_host *host);
void emu_devices_fini(struct emu_host *host);
/* The spec's devices into d's list, before the modules hear of d. */
int emu_devices_from_spec(struct emu_domain *d);
/* Show every device of a new domain in the tree, once the modules know it. */
int emu_devices_publish(struct emu_host *host, struct emu_domain *d);
/* Take every device of a domain out of the tree (before the modules forget it). */
void emu_devices_unpublish(struct emu_host *host, struct emu_domain *d);
/* A burst of the domain ended in a wait: its devices carry some traffic (an idle one's seldom). */
void emu_devices_io(struct emu_domain *d, bool idle);

#endif
