/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats interface (docs/pv-stats.md), what both sides share: the
 * statistic types and the rules for names.  Providers include
 * <xenstats/pv_provider.h>, monitors <xenstats/pv_monitor.h>; both
 * include this.  Conventions: xenstats.h.
 */
#ifndef XENSTATS_PV_COMMON_H
#define XENSTATS_PV_COMMON_H

#include <stddef.h>

#include <xenstats/abi/pv_stats.h>
#include <xenstats/xenstats.h>

#ifdef __cplusplus
extern "C" {
#endif

enum xenstats_pv_type {
    XENSTATS_PV_S64 = XEN_PV_STATS_TYPE_S64,
    XENSTATS_PV_U64 = XEN_PV_STATS_TYPE_U64,
    XENSTATS_PV_DOUBLE = XEN_PV_STATS_TYPE_DOUBLE,
    XENSTATS_PV_ASCII = XEN_PV_STATS_TYPE_ASCII,
};

/* "s64", "u64", "double", "ascii"; NULL for anything else. */
const char *xenstats_pv_type_name(unsigned int type);

/*
 * 0 if `name` is a valid provider, set or statistic name (1..62 printable
 * ASCII characters: letters, digits, punctuation, space), else -EINVAL.
 */
int xenstats_pv_name_check(const char *name);

/*
 * The xenstore key of a provider or set name.  xenstored only accepts
 * letters, digits and "-_@" in node names, so "Network #0" is published
 * under the key "Network_0" and the name itself becomes the node's value
 * (docs/pv-stats.md).  Runs of other characters become one '_'.
 * Returns 0 or -EINVAL (invalid name), -ENOBUFS.
 */
int xenstats_pv_name_key(const char *name, char *key, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_PV_COMMON_H */
