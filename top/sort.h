/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The orders of top's domain list: --sort's names, the live view's keys (top_snapshot.c). */
#ifndef XENSTATS_TOP_SORT_H
#define XENSTATS_TOP_SORT_H

#include <stdbool.h>
#include <stddef.h>

#include "top/snapshot.h"

/* Sort keys of the domain list. */
enum top_sort_key {
    TOP_SORT_DOMID = 0,
    TOP_SORT_NAME,
    TOP_SORT_VCPUS,
    TOP_SORT_RUNNING,
    TOP_SORT_RUNNABLE,
    TOP_SORT_BLOCKED,
    TOP_SORT_OFFLINE,
    TOP_SORT_CHANGES,
    TOP_SORT_SETS,
    TOP_SORT_WORST,
    TOP_NR_SORT_KEYS,
};

struct top_sort_info {
    const char *name; /* for --sort */
    int key;          /* its key in the live view */
    bool descending;  /* natural order: biggest first for figures */
};
extern const struct top_sort_info top_sort_keys[TOP_NR_SORT_KEYS];

/* Parse a --sort name; -EINVAL when unknown. */
int top_sort_parse(const char *name, enum top_sort_key *ret_key);

/*
 * Order of the domains to show: fills order[0..nr_domains-1] with indexes
 * into snap->domains, sorted by `key` (its natural order, reversed when
 * `reverse`), ties broken by domid.  Invalid figures sort last.
 */
void top_sort(const struct top_snapshot *snap, enum top_sort_key key, bool reverse, size_t *order);

#endif
