/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-kernel PV stats provider API (docs/kernel-provider.md).
 *
 * A driver registers a provider, adds sets, declares their statistics and
 * publishes them; the module grants the pages, advertises them in
 * xenstore under stats/<provider>/<set>/ and answers the monitor's
 * requests by calling the set's refresh callback from a work item
 * (process context: it may sleep, take mutexes, call into the driver).
 * The wire layout is include/xenstats/abi/pv_stats.h, the same bytes as
 * the user-space provider of libxenstats.
 *
 * Conventions: functions returning a pointer return an ERR_PTR() on
 * failure; functions returning int return 0 (or an index) or a negative
 * errno.  Every function may sleep, except the value setters.
 *
 * The value setters may be called from any context (process, softirq,
 * hardirq; while the module withdraws or publishes the set again after a
 * restore) as long as the set exists, that is until
 * xenstats_set_withdraw() is called: they take no lock and write the
 * granted pages under RCU, which the module waits for before it gives
 * the pages back.  Only values set in the refresh callback reach the
 * monitor as one consistent sample.
 */
#ifndef XENSTATS_PROVIDER_H
#define XENSTATS_PROVIDER_H

#include <linux/types.h>

struct xenstats_provider;
struct xenstats_set;

enum xenstats_type {
	XENSTATS_S64 = 1,
	XENSTATS_U64 = 2,
	XENSTATS_DOUBLE = 3,	/* set with xenstats_set_double_bits() */
	XENSTATS_ASCII = 4,
};

/*
 * Called in process context when the monitor asks for a sample: set every
 * value of the set and return 0, after which the module issues a write
 * barrier and signals the monitor.  A negative return skips the answer
 * (the monitor marks the set stale).  Never called concurrently for one
 * set, and never after xenstats_set_withdraw() has returned.
 */
typedef int (*xenstats_refresh_fn)(struct xenstats_set *set, void *data);

/*
 * A provider named @name (1..62 printable ASCII characters; its xenstore
 * key is derived from it as docs/pv-stats.md says).  Freed, with every set
 * it still has withdrawn, by xenstats_provider_unregister().
 */
struct xenstats_provider *xenstats_provider_register(const char *name);
void xenstats_provider_unregister(struct xenstats_provider *provider);

/*
 * A set of @provider.  @refresh may be NULL (values set elsewhere).
 * -EEXIST when another set of the provider has the same key.
 */
struct xenstats_set *xenstats_set_add(struct xenstats_provider *provider,
				      const char *name,
				      xenstats_refresh_fn refresh, void *data);

/*
 * Declares a statistic; returns its index (0, 1, ...) for the setters.
 * Names are fixed once the set is published (-EBUSY after).
 */
int xenstats_set_declare(struct xenstats_set *set, const char *name,
			 enum xenstats_type type);

/*
 * Publishes the set: at once when the toolstack's `stats` node exists,
 * else as soon as it appears (a xenbus watch).  Republished by itself
 * after a restore or a migration.  0, or a negative errno when the set
 * cannot be published at all (no statistic, no memory).
 */
int xenstats_set_publish(struct xenstats_set *set);

/*
 * Withdraws the set as the design says (event-channel first, a wait of at
 * most 2 s for the monitor to close its port, then the keys) and frees
 * it.  Accepts NULL.
 */
void xenstats_set_withdraw(struct xenstats_set *set);

/*
 * Value setters: 0; -EINVAL for a bad index or a type mismatch; -ENODEV
 * while the set is not published (nothing is granted: the value is
 * dropped, and the refresh callback sets it when the set is published).
 */
int xenstats_set_u64(struct xenstats_set *set, unsigned int index, u64 value);
int xenstats_set_s64(struct xenstats_set *set, unsigned int index, s64 value);
/* The IEEE 754 binary64 bits of a double: the kernel has no FPU use. */
int xenstats_set_double_bits(struct xenstats_set *set, unsigned int index,
			     u64 bits);
/* At most 63 printable ASCII characters. */
int xenstats_set_ascii(struct xenstats_set *set, unsigned int index,
		       const char *value);

/* Statistics declared so far. */
unsigned int xenstats_set_count(const struct xenstats_set *set);

#endif /* XENSTATS_PROVIDER_H */
