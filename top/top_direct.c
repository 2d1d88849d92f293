/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top --direct: the agent's collector run in-process.  Each fetch
 * is one collector round, a snapshot of lib/export's model as the agent
 * would serve it, shown through the same view as a snapshot read from the
 * agent's JSON, so the two cannot disagree.  The collector keeps maps open across fetches (mapping is the
 * costly part).  It does not create domains' `stats` nodes: a viewer
 * leaves xenstore as the toolstack (or the agent) made it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/tool.h"
#include "collect/collector.h"
#include "top_direct.h"

struct top_direct {
    struct xenstats_host *host;
    struct collector *collector;
};

struct top_direct *top_direct_open(bool pv_stats, char *err, size_t errlen)
{
    /* An update waits for the slowest provider: keep it short. */
    struct collector_opts co = {.interval_ns = 2000000ULL, .sample_timeout_ms = 250, .no_pv_stats = !pv_stats};
    struct top_direct *d = calloc(1, sizeof(*d));

    if (!d) {
        top_reason(err, errlen, -ENOMEM, "out of memory");
        return NULL;
    }
    d->host = xenstats_host_open(global.backend);
    if (!d->host) {
        if (errno == ENOENT)
            top_reason(err, errlen, -ENOENT,
                       "no Xen host found: no emulated host is running and this is not a Xen dom0 "
                       "(start one with `xenstats emu`, or set XENSTATS_EMU_DIR)");
        else
            top_reason(err, errlen, -errno, "cannot open the host: %s", strerror(errno));
        free(d);
        return NULL;
    }
    d->collector = collector_new(d->host, &co);
    if (!d->collector) {
        top_reason(err, errlen, -ENOMEM, "out of memory");
        top_direct_close(d);
        return NULL;
    }
    return d;
}

void top_direct_close(struct top_direct *d)
{
    if (!d)
        return;
    collector_free(d->collector);
    xenstats_host_close(d->host);
    free(d);
}

int top_direct_fetch_export(struct top_direct *d, struct export_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct export_snapshot *s = collector_collect(d->collector, NULL);

    if (!s)
        return top_reason(err, errlen, -ENOMEM, "out of memory");
    *ret_snapshot = s;
    return 0;
}
