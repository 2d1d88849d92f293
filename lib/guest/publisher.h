/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest agent's publisher: the lists lib/guest reads (/proc and custom
 * files) mapped onto the sets of one PV stats provider, kept in step with
 * the devices and custom sets that come and go (docs/publish.md).
 *
 * A set is refreshed from its file only when the monitor asks for a sample
 * (the provider's refresh callback, run by xenstats_provider_dispatch()).
 * Like the rest of the library it never prints: what it publishes and
 * withdraws, and each distinct problem once, goes to the log callback.
 */
#ifndef XENSTATS_GUEST_PUBLISHER_H
#define XENSTATS_GUEST_PUBLISHER_H

#include <stdbool.h>
#include <stdint.h>

#include <xenstats/pv.h>

/* The kinds of sets: the built-in ones, then the custom files' sets. */
enum guest_kind {
    GUEST_KIND_MEMORY,
    GUEST_KIND_CPU,
    GUEST_KIND_LOAD,
    GUEST_KIND_NET,
    GUEST_KIND_DISK,
    GUEST_KIND_CUSTOM,
};

/* Every built-in kind, one bit per kind. */
#define GUEST_KINDS_BUILTIN ((1u << GUEST_KIND_CUSTOM) - 1)

/* The monitor follows at most 64 sets of one provider (docs/pv-stats.md). */
#define GUEST_PUBLISHER_MAX_SETS 64

/*
 * A comma-separated list of built-in kinds ("memory,cpu,load,net,disk", or
 * "none") into a bit mask of (1 << enum guest_kind).  -EINVAL if a name is
 * unknown or the list empty.
 */
int guest_kinds_parse(const char *list, unsigned int *ret_kinds);

/* Whether `name` is, or would be, the name of a set of one of the built-in
 * `kinds`: "memory", "net eth0"... (a custom set must not take it). */
bool guest_kinds_name_taken(unsigned int kinds, const char *name);

struct guest_publisher_opts {
    unsigned int kinds;          /* built-in kinds, bit per kind */
    bool all_disks;              /* partitions, loop and ram devices too */
    const char *proc;            /* "/proc", or a copy of it */
    const char *const *custom;   /* custom-set files (kept, not copied) */
    unsigned int nr_custom;
};

struct guest_publisher;

/*
 * A publisher of the sets `opts` names under `provider`, which it owns from
 * then on (freed by guest_publisher_free(), also on failure).  Publishes
 * nothing yet: guest_publisher_rescan() does.  NULL and errno on failure.
 * `opts` and what it points to must outlive the publisher.
 */
struct guest_publisher *guest_publisher_new(struct xenstats_provider *provider,
                                            const struct guest_publisher_opts *opts);

/* Bring the published sets in line with what exists now: publish the new
 * ones, publish again those whose statistics changed, withdraw the gone. */
void guest_publisher_rescan(struct guest_publisher *pub);

/* The number of sets published. */
unsigned int guest_publisher_count(const struct guest_publisher *pub);

/* Withdraw every set, free the provider and the publisher.  NULL is fine. */
void guest_publisher_free(struct guest_publisher *pub);

#endif
