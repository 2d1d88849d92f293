/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top --direct: the host read in-process, with no agent: each
 * domain's vCPU statistics through the vcpu library, its PV stats sets
 * through a monitor of our own.
 */
#ifndef XENSTATS_TOP_DIRECT_H
#define XENSTATS_TOP_DIRECT_H

#include <stdbool.h>
#include <stddef.h>

#include "top/snapshot.h"

struct top_direct;

/*
 * Open the host (emulated or Xen, as --backend says); NULL and a reason.
 * Without pv_stats, guests' PV stats sets are not monitored (xentop's
 * figures need none, and a set's event channel binds to one monitor).
 */
struct top_direct *top_direct_open(bool pv_stats, char *err, size_t errlen);
void top_direct_close(struct top_direct *d);

/*
 * A snapshot of every domain, as the agent's would be: 0 and a snapshot
 * the caller releases with export_snapshot_unref(), or -ENOMEM and a reason.
 */
int top_direct_fetch_export(struct top_direct *d, struct export_snapshot **ret_snapshot, char *err, size_t errlen);

#endif
