/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The emu backend's grant and event channel ops (emu_grant.c, emu_evtchn.c). */
#ifndef XENSTATS_EMU_HYPER_OPS_H
#define XENSTATS_EMU_HYPER_OPS_H

#include "platform.h"

extern const struct platform_grant_ops emu_grant_ops;
extern const struct platform_evtchn_ops emu_evtchn_ops;

/* Revoke this host handle's grants and drop its mappings (its pages are
 * unmapped); called when the handle closes.  Accepts a handle that never
 * used grants. */
void emu_grant_release(struct platform *p);

#endif
