/* SPDX-License-Identifier: MIT */
/*
 * Wire layout of the PV stats interface (docs/pv-stats.md).
 *
 * A provider in a guest publishes a set of statistics under
 *   /local/domain/<domid>/stats/<provider>/<set>/
 * with the keys
 *   name-type-ref<N>  grant reference of name/type page N (decimal)
 *   val-ref<N>        grant reference of value page N (decimal)
 *   event-channel     port the monitor binds to (written last)
 * Page N holds statistics N*64 .. N*64+63: entry i of name/type page N
 * describes the value in entry i of value page N.
 *
 * Like every Xen public header this one depends on nothing beyond fixed
 * width integer types, so guests of any OS can include it.
 */
#ifndef XENSTATS_ABI_PV_STATS_H
#define XENSTATS_ABI_PV_STATS_H

#if defined(__KERNEL__)
#include <linux/types.h> /* a Linux module (kmod/) */
#elif !defined(__XEN__)
#include <stdint.h>
#endif

#define XEN_PV_STATS_PAGE_SIZE 4096U
#define XEN_PV_STATS_ENTRY_SIZE 64U
#define XEN_PV_STATS_PER_PAGE (XEN_PV_STATS_PAGE_SIZE / XEN_PV_STATS_ENTRY_SIZE) /* 64 */
#define XEN_PV_STATS_NAME_SIZE 63U /* bytes of name[], NUL included */
#define XEN_PV_STATS_NAME_MAX 62U  /* characters before the NUL */

/* type: 0 ends the list of statistics. */
#define XEN_PV_STATS_TYPE_END 0
#define XEN_PV_STATS_TYPE_S64 1    /* signed 64-bit, little endian, octets 0..7 */
#define XEN_PV_STATS_TYPE_U64 2    /* unsigned 64-bit, little endian, octets 0..7 */
#define XEN_PV_STATS_TYPE_DOUBLE 3 /* IEEE 754 binary64, little endian, octets 0..7 */
#define XEN_PV_STATS_TYPE_ASCII 4  /* NUL terminated, same characters as names */

struct xen_pv_stats_name_type {
    uint8_t type;
    char name[XEN_PV_STATS_NAME_SIZE];
};

/* A value entry: 64 octets whose meaning depends on the entry's type. */
struct xen_pv_stats_value {
    uint8_t octet[XEN_PV_STATS_ENTRY_SIZE];
};

/* xenstore key names under a set. */
#define XEN_PV_STATS_KEY_NAME_TYPE_REF "name-type-ref" /* followed by N */
#define XEN_PV_STATS_KEY_VALUE_REF "val-ref"           /* followed by N */
#define XEN_PV_STATS_KEY_EVENT_CHANNEL "event-channel"
/* The toolstack's top-level node under the guest's home. */
#define XEN_PV_STATS_TOP "stats"

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(struct xen_pv_stats_name_type) == XEN_PV_STATS_ENTRY_SIZE, "name/type entry is 64 octets");
_Static_assert(__builtin_offsetof(struct xen_pv_stats_name_type, name) == 1, "name follows the type octet");
_Static_assert(sizeof(struct xen_pv_stats_value) == XEN_PV_STATS_ENTRY_SIZE, "value entry is 64 octets");
#endif

#endif /* XENSTATS_ABI_PV_STATS_H */
