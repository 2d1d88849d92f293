/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where top's snapshots come from (top_source.c): the agent over HTTP, or the host in-process. */
#ifndef XENSTATS_TOP_SOURCE_H
#define XENSTATS_TOP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "top/snapshot.h"

struct top_source;

/*
 * The agent at `url` (http://host[:port][/prefix]; /api/v1/snapshot is
 * appended), or the host in-process (with its guests' PV stats sets
 * monitored when pv_stats).  NULL and a reason.
 */
struct top_source *top_source_open_url(const char *url, char *err, size_t errlen);
struct top_source *top_source_open_direct(bool pv_stats, char *err, size_t errlen);
void top_source_close(struct top_source *src);

/* The source as the user named it, for titles and messages. */
const char *top_source_name(const struct top_source *src);
bool top_source_is_direct(const struct top_source *src);

/*
 * Take one snapshot.  Returns 0, or a negative errno with a reason in err:
 * -ECONNREFUSED/-EHOSTUNREACH/-ETIMEDOUT... (agent unreachable), -EPROTO
 * (not a valid HTTP answer or an HTTP error status), -EBADMSG (bad JSON or
 * a snapshot that breaks the contract).
 */
int top_source_fetch(struct top_source *src, struct top_snapshot **ret_snapshot, char *err, size_t errlen);

/*
 * A snapshot newer than the one taken at prev_monotonic_ns (0: any): the
 * agent samples on its own interval, so right after a delay it may still
 * serve the one we have; ask again a little later rather than show an
 * empty interval, for up to 2 * delay_ns + 2 s (then -ETIMEDOUT and a
 * reason).  Otherwise as top_source_fetch_export().
 */
int top_source_fetch_newer(struct top_source *src, uint64_t prev_monotonic_ns, uint64_t delay_ns,
                           struct export_snapshot **ret_snapshot, char *err, size_t errlen);

/* Sleep ns, or less when a signal comes. */
void top_pause_ns(uint64_t ns);

/*
 * The same, as lib/export's snapshot itself (raw strings, every device):
 * 0 and a snapshot the caller releases with export_snapshot_unref(), or
 * as top_source_fetch().
 */
int top_source_fetch_export(struct top_source *src, struct export_snapshot **ret_snapshot, char *err, size_t errlen);

#endif
