/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: where snapshots come from.  Either the agent over HTTP
 * (the usual case: one process in dom0 maps and monitors, any number of
 * views read it), or the host in-process with --direct when no agent runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/tool.h"
#include "top/http.h"
#include "top/source.h"
#include "util/util.h"
#include "top_direct.h"

/* The agent answers from memory; anything slower than this is wedged. */
#define FETCH_TIMEOUT_MS 5000

struct top_source {
    bool direct;
    char *name;
    struct top_url url;
    struct top_direct *host;
};

struct top_source *top_source_open_url(const char *url, char *err, size_t errlen)
{
    struct top_source *src = calloc(1, sizeof(*src));

    if (!src || !(src->name = strdup(url))) {
        top_reason(err, errlen, -ENOMEM, "out of memory");
        goto fail;
    }
    if (top_url_parse(url, "/api/v1/snapshot", &src->url, err, errlen) < 0)
        goto fail;
    return src;
fail:
    top_source_close(src);
    return NULL;
}

struct top_source *top_source_open_direct(bool pv_stats, char *err, size_t errlen)
{
    struct top_source *src = calloc(1, sizeof(*src));

    if (!src || !(src->name = strdup("this host"))) {
        top_reason(err, errlen, -ENOMEM, "out of memory");
        goto fail;
    }
    src->direct = true;
    src->host = top_direct_open(pv_stats, err, errlen);
    if (!src->host)
        goto fail;
    return src;
fail:
    top_source_close(src);
    return NULL;
}

void top_source_close(struct top_source *src)
{
    if (!src)
        return;
    top_direct_close(src->host);
    free(src->name);
    free(src);
}

const char *top_source_name(const struct top_source *src)
{
    return src->name;
}

bool top_source_is_direct(const struct top_source *src)
{
    return src->direct;
}

int top_source_fetch_export(struct top_source *src, struct export_snapshot **ret_snapshot, char *err, size_t errlen)
{
    char *body = NULL, why[512];
    size_t len = 0;
    int r;

    if (src->direct)
        return top_direct_fetch_export(src->host, ret_snapshot, err, errlen);
    r = top_http_get(&src->url, FETCH_TIMEOUT_MS, &tool_stop, &body, &len, why, sizeof(why));
    if (r == -EPROTO)
        return top_reason(err, errlen, r, "bad answer from %s: %s", src->name, why);
    if (r < 0)
        return top_reason(err, errlen, r,
                          "cannot reach the agent at %s: %s (start it with `xenstats agent`, or read the host "
                          "in-process with --direct)",
                          src->name, why);
    r = export_snapshot_read_json(body, len, ret_snapshot, why, sizeof(why));
    free(body);
    if (r == -EBADMSG)
        return top_reason(err, errlen, r, "bad snapshot from %s: %s", src->name, why);
    if (r < 0)
        return top_reason(err, errlen, r, "%s", why);
    return r;
}

int top_source_fetch(struct top_source *src, struct top_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct export_snapshot *s = NULL;
    int r = top_source_fetch_export(src, &s, err, errlen);

    if (r < 0)
        return r;
    r = top_snapshot_view(s, ret_snapshot, err, errlen);
    export_snapshot_unref(s);
    return r;
}

void top_pause_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL)};

    nanosleep(&ts, NULL);
}

int top_source_fetch_newer(struct top_source *src, uint64_t prev_monotonic_ns, uint64_t delay_ns,
                           struct export_snapshot **ret_snapshot, char *err, size_t errlen)
{
    uint64_t wait_ns = 2 * delay_ns + 2000000000ULL, give_up = monotonic_ns() + wait_ns;
    struct export_snapshot *s;
    int r;

    for (;;) {
        r = top_source_fetch_export(src, &s, err, errlen);
        if (r < 0)
            return r;
        if (!prev_monotonic_ns || s->monotonic_ns != prev_monotonic_ns || tool_stop) {
            *ret_snapshot = s;
            return 0;
        }
        export_snapshot_unref(s);
        if (monotonic_ns() >= give_up)
            return top_reason(err, errlen, -ETIMEDOUT,
                              "the snapshot at %s did not change for %.1f s: is the agent sampling?",
                              top_source_name(src), (double)wait_ns / 1e9);
        top_pause_ns(100000000ULL);
    }
}
