/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top --direct: build the snapshot the agent would serve, from the
 * host itself.  Maps stay open across fetches (mapping is the costly part)
 * and are dropped when their domain goes; a domain whose map cannot be
 * opened is shown with the reason, and opening is retried every fetch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xenstats/vcpu.h>

#include "tool.h"
#include "top_direct.h"
#include "util/util.h"

struct dmap {
    uint32_t domid;
    char name[XENSTATS_DOMAIN_NAME_MAX];
    struct xenstats_vcpu_map *map;
    bool seen; /* in the current domain list */
};

struct top_direct {
    struct xenstats_host *host;
    struct dmap *maps;
    size_t nr_maps, cap_maps;
};

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

struct top_direct *top_direct_open(char *err, size_t errlen)
{
    struct top_direct *d = calloc(1, sizeof(*d));

    if (!d) {
        say(err, errlen, "out of memory");
        return NULL;
    }
    d->host = xenstats_host_open(global.backend);
    if (!d->host) {
        if (errno == ENOENT)
            say(err, errlen, "no Xen host found: no emulated host is running and this is not a Xen dom0 "
                             "(start one with `xenstats emu`, or set XENSTATS_EMU_DIR)");
        else
            say(err, errlen, "cannot open the host: %s", strerror(errno));
        free(d);
        return NULL;
    }
    return d;
}

void top_direct_close(struct top_direct *d)
{
    size_t i;

    if (!d)
        return;
    for (i = 0; i < d->nr_maps; i++)
        xenstats_vcpu_map_close(d->maps[i].map);
    free(d->maps);
    xenstats_host_close(d->host);
    free(d);
}

static const char *open_error(int err)
{
    switch (err) {
    case -EOPNOTSUPP:
        return "the host does not provide vCPU statistics for it";
    case -EPERM:
    case -EACCES:
        return "permission denied";
    case -EBADMSG:
    case -EINVAL:
    case -ERANGE:
        return "malformed vCPU statistics region";
    default:
        return xenstats_strerror(err);
    }
}

/* The open map of `info`, opening it when new; NULL with *ret_err. */
static struct xenstats_vcpu_map *get_map(struct top_direct *d, const struct xenstats_domain_info *info, int *ret_err)
{
    struct dmap *m = NULL, *grown;
    size_t i;

    for (i = 0; i < d->nr_maps; i++) {
        if (d->maps[i].domid == info->domid) {
            m = &d->maps[i];
            break;
        }
    }
    /* The same domid with another name is a new domain. */
    if (m && strcmp(m->name, info->name)) {
        xenstats_vcpu_map_close(m->map);
        m->map = NULL;
        snprintf(m->name, sizeof(m->name), "%s", info->name);
    }
    if (!m) {
        if (d->nr_maps == d->cap_maps) {
            size_t cap = d->cap_maps ? d->cap_maps * 2 : 16;

            grown = realloc(d->maps, cap * sizeof(*grown));
            if (!grown) {
                *ret_err = -ENOMEM;
                return NULL;
            }
            d->maps = grown;
            d->cap_maps = cap;
        }
        m = &d->maps[d->nr_maps++];
        memset(m, 0, sizeof(*m));
        m->domid = info->domid;
        snprintf(m->name, sizeof(m->name), "%s", info->name);
    }
    m->seen = true;
    if (!m->map) {
        m->map = xenstats_vcpu_map_open(d->host, info->domid);
        if (!m->map)
            *ret_err = -errno;
    }
    return m->map;
}

static void drop_unseen(struct top_direct *d)
{
    size_t i = 0;

    while (i < d->nr_maps) {
        if (!d->maps[i].seen) {
            xenstats_vcpu_map_close(d->maps[i].map);
            d->maps[i] = d->maps[--d->nr_maps];
            continue;
        }
        d->maps[i++].seen = false;
    }
}

static int fill_vcpus(struct xenstats_vcpu_map *map, struct top_domain *dom)
{
    struct xenstats_vcpu_sample *samples;
    uint64_t now = 0, times[TOP_NR_RUNSTATES];
    uint32_t n = xenstats_vcpu_map_nr_vcpus(map), i;
    unsigned int s;
    int r;

    if (n > TOP_MAX_VCPUS)
        n = TOP_MAX_VCPUS;
    if (!n)
        return 0;
    samples = calloc(n, sizeof(*samples));
    dom->vcpus = calloc(n, sizeof(*dom->vcpus));
    if (!samples || !dom->vcpus) {
        r = -ENOMEM;
        goto out;
    }
    r = xenstats_vcpu_map_snapshot_all(map, samples, n);
    if (r < 0)
        goto out;
    if (xenstats_vcpu_map_clock(map, &now) < 0)
        now = 0;
    for (i = 0; i < n; i++) {
        struct top_vcpu *v = &dom->vcpus[i];
        const struct xenstats_vcpu_sample *smp = &samples[i];

        v->vcpu = i;
        v->state = -1;
        if (xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE) == XENSTATS_COUNTER_VALID &&
            xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE) < TOP_NR_RUNSTATES)
            v->state = (int)xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE);
        xenstats_vcpu_sample_project(smp, now, times);
        for (s = 0; s < TOP_NR_RUNSTATES; s++) {
            v->time_valid[s] = xenstats_vcpu_sample_status(smp, s) == XENSTATS_COUNTER_VALID;
            v->time[s] = (double)times[s] / 1e9;
        }
        v->changes_valid =
            xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE_CHANGES) == XENSTATS_COUNTER_VALID;
        v->changes = xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE_CHANGES);
    }
    dom->nr_vcpu_rows = n;
out:
    free(samples);
    return r;
}

int top_direct_fetch(struct top_direct *d, struct top_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct xenstats_domain_info *list = NULL;
    struct top_snapshot *snap = NULL;
    struct timespec wall;
    size_t n = 0, i;
    int r;

    r = xenstats_host_list_domains(d->host, &list, &n);
    if (r < 0) {
        say(err, errlen, "cannot list domains: %s", xenstats_strerror(r));
        return r;
    }
    if (n > TOP_MAX_DOMAINS)
        n = TOP_MAX_DOMAINS;
    snap = top_snapshot_new();
    if (!snap || !(snap->backend = strdup(xenstats_host_backend(d->host) == XENSTATS_BACKEND_EMU ? "emu" : "xen")) ||
        (n && !(snap->domains = calloc(n, sizeof(*snap->domains))))) {
        r = -ENOMEM;
        goto oom;
    }
    snap->monotonic_ns = monotonic_ns();
    clock_gettime(CLOCK_REALTIME, &wall);
    snap->time = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    for (i = 0; i < n; i++) {
        struct top_domain *dom = &snap->domains[snap->nr_domains++];
        struct xenstats_vcpu_map *map;
        int why = 0;

        dom->domid = list[i].domid;
        dom->nr_vcpus = list[i].nr_vcpus;
        /* Names come from the toolstack, but escape them like any other. */
        dom->name = top_escape(list[i].name, strnlen(list[i].name, sizeof(list[i].name)));
        if (!dom->name)
            goto oom;
        map = get_map(d, &list[i], &why);
        if (map)
            why = fill_vcpus(map, dom);
        if (why == -ENOMEM)
            goto oom;
        dom->vcpu_source = strdup(map && !why ? "resource" : "none");
        if (!dom->vcpu_source || (why && !(dom->vcpu_error = strdup(open_error(why)))))
            goto oom;
    }
    drop_unseen(d);
    free(list);
    r = top_snapshot_finish(snap, err, errlen);
    if (r < 0) {
        top_snapshot_free(snap);
        return r;
    }
    *ret_snapshot = snap;
    return 0;
oom:
    free(list);
    top_snapshot_free(snap);
    say(err, errlen, "out of memory");
    return -ENOMEM;
}
