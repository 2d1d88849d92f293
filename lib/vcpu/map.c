/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vCPU map's public API over its source (reader.h): the checks every
 * source shares, then the source's op; and the decoding of samples, which
 * is the same whatever gave them.
 */
#include <xenstats/vcpu.h>

#include "util/util.h"
#include "vcpu/reader.h"

void xenstats_vcpu_map_close(struct xenstats_vcpu_map *map)
{
    if (map)
        map->ops->close(map);
}

enum xenstats_vcpu_source xenstats_vcpu_map_source(const struct xenstats_vcpu_map *map)
{
    return map->ops->source;
}

const struct xenstats_vcpu_layout *xenstats_vcpu_map_layout(const struct xenstats_vcpu_map *map)
{
    return &map->layout;
}

uint32_t xenstats_vcpu_map_nr_vcpus(const struct xenstats_vcpu_map *map)
{
    return map->layout.nr_vcpus;
}

void xenstats_vcpu_map_set_max_retries(struct xenstats_vcpu_map *map, uint32_t max_retries)
{
    map->max_retries = max_retries;
}

int xenstats_vcpu_map_snapshot(struct xenstats_vcpu_map *map, uint32_t vcpu, struct xenstats_vcpu_sample *ret_sample)
{
    if (vcpu >= map->layout.nr_vcpus)
        return set_errno(-ENOENT);
    return set_errno(map->ops->snapshot(map, vcpu, 1, ret_sample));
}

int xenstats_vcpu_map_snapshot_all(struct xenstats_vcpu_map *map, struct xenstats_vcpu_sample *ret_samples,
                                   uint32_t count)
{
    if (count > map->layout.nr_vcpus)
        return set_errno(-ENOENT);
    return set_errno(map->ops->snapshot(map, 0, count, ret_samples));
}

int xenstats_vcpu_map_snapshot_domain(struct xenstats_vcpu_map *map, struct xenstats_vcpu_domain_sample *ret_sample)
{
    if (!map->ops->snapshot_domain)
        return set_errno(-ENODATA);
    return set_errno(map->ops->snapshot_domain(map, ret_sample));
}

size_t xenstats_vcpu_map_dump_size(const struct xenstats_vcpu_map *map)
{
    return (size_t)map->layout.offset + (size_t)map->layout.nr_vcpus * map->layout.stride;
}

int xenstats_vcpu_map_dump(struct xenstats_vcpu_map *map, void *buf, size_t len)
{
    if (!map->ops->dump)
        return set_errno(-EOPNOTSUPP);
    if (len < xenstats_vcpu_map_dump_size(map))
        return set_errno(-ENOBUFS);
    return set_errno(map->ops->dump(map, buf, len));
}

int xenstats_vcpu_map_clock(struct xenstats_vcpu_map *map, uint64_t *ret_now)
{
    return set_errno(map->ops->clock(map, ret_now));
}

int xenstats_vcpu_sample_project(const struct xenstats_vcpu_sample *sample, uint64_t now,
                                 uint64_t ret_times[XENSTATS_VCPU_NR_RUNSTATES])
{
    unsigned int i;
    uint64_t state, updated;

    for (i = 0; i < XENSTATS_VCPU_NR_RUNSTATES; i++)
        ret_times[i] = xenstats_vcpu_sample_value(sample, i);
    if (xenstats_vcpu_sample_status(sample, XEN_VCPU_STATS_STATE) != XENSTATS_COUNTER_VALID ||
        xenstats_vcpu_sample_status(sample, XEN_VCPU_STATS_UPDATE_TIME) != XENSTATS_COUNTER_VALID)
        return set_errno(-ENODATA);
    state = sample->raw[XEN_VCPU_STATS_STATE];
    updated = sample->raw[XEN_VCPU_STATS_UPDATE_TIME];
    if (state >= XENSTATS_VCPU_NR_RUNSTATES ||
        xenstats_vcpu_sample_status(sample, (unsigned int)state) != XENSTATS_COUNTER_VALID)
        return set_errno(-ENODATA);
    if (now > updated)
        ret_times[state] += now - updated;
    return 0;
}

static const char *const counter_names[XENSTATS_VCPU_NR_COUNTERS] = {
    [XEN_VCPU_STATS_RUNNING_TIME] = "running_time",   [XEN_VCPU_STATS_RUNNABLE_TIME] = "runnable_time",
    [XEN_VCPU_STATS_BLOCKED_TIME] = "blocked_time",   [XEN_VCPU_STATS_OFFLINE_TIME] = "offline_time",
    [XEN_VCPU_STATS_STATE_CHANGES] = "state_changes", [XEN_VCPU_STATS_STATE] = "state",
    [XEN_VCPU_STATS_UPDATE_TIME] = "update_time",     [XEN_VCPU_STATS_UPDATE_TICKS] = "update_ticks",
};

const char *xenstats_vcpu_counter_name(unsigned int idx)
{
    return idx < XENSTATS_VCPU_NR_COUNTERS ? counter_names[idx] : NULL;
}

const char *xenstats_vcpu_domain_counter_name(unsigned int idx)
{
    static const char *const names[XENSTATS_VCPU_DOMAIN_NR_COUNTERS] = {
        [XEN_VCPU_STATS_DOMAIN_TOT_PAGES] = "tot_pages",
        [XEN_VCPU_STATS_DOMAIN_MAX_PAGES] = "max_pages",
        [XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES] = "outstanding_pages",
    };

    return idx < XENSTATS_VCPU_DOMAIN_NR_COUNTERS ? names[idx] : NULL;
}

const char *xenstats_vcpu_runstate_name(uint64_t state)
{
    static const char *const names[XENSTATS_VCPU_NR_RUNSTATES] = {
        [XEN_VCPU_STATS_RUNSTATE_RUNNING] = "running",
        [XEN_VCPU_STATS_RUNSTATE_RUNNABLE] = "runnable",
        [XEN_VCPU_STATS_RUNSTATE_BLOCKED] = "blocked",
        [XEN_VCPU_STATS_RUNSTATE_OFFLINE] = "offline",
    };

    return state < XENSTATS_VCPU_NR_RUNSTATES ? names[state] : NULL;
}
