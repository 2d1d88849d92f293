/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats provider (docs/pv-stats.md), for guests: publish sets of typed
 * statistics in pages granted to the monitoring domain, advertised in
 * xenstore, and refresh them when the monitor signals over an event
 * channel.  Conventions: xenstats.h.
 */
#ifndef XENSTATS_PV_PROVIDER_H
#define XENSTATS_PV_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <xenstats/pv_common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct xenstats_provider;
struct xenstats_provider_set;

/*
 * Called on every sample request: set every value of the set (with the
 * xenstats_provider_set_* setters), then return 0; the provider then
 * signals the monitor.  A negative return skips the signal (the monitor
 * times out and marks the set stale).
 */
typedef int (*xenstats_provider_refresh_fn)(struct xenstats_provider_set *set, void *userdata);

struct xenstats_provider_opts {
    size_t size; /* sizeof(struct xenstats_provider_opts): see xenstats.h */
    /* Domain that monitors (grantee and event channel peer).  Default:
     * the value of the guest's `stats` node, else 0. */
    int32_t monitor_domid; /* -1: default */
    /* Bound on waiting for the monitor to close its port on withdrawal. */
    uint32_t withdraw_timeout_ms; /* 0: default 2000 */
};

/*
 * Create a provider named `name` (e.g. "Network #0") in the calling
 * process's domain.  Nothing is published until a set is.  NULL and errno:
 * EINVAL (bad name or opts), ENOENT (no `stats` node: the toolstack does not
 * monitor this domain), and the store's errors.  Free with
 * xenstats_provider_free(), which withdraws every set.
 */
struct xenstats_provider *xenstats_provider_new(struct xenstats_host *host, const char *name,
                                                const struct xenstats_provider_opts *opts);
void xenstats_provider_free(struct xenstats_provider *provider);

/* Domain the provider grants to and signals. */
uint32_t xenstats_provider_monitor_domid(const struct xenstats_provider *provider);

/*
 * Answer on one CPU: pin the calling thread (the one that will call
 * xenstats_provider_dispatch()) to `cpu` and deliver the provider's event
 * channels there, those bound already and every one bound later.  A request
 * then wakes one vCPU instead of two: Linux spreads event channels over the
 * vCPUs, and the one taking the interrupt wakes the provider's thread on
 * another (measured under QEMU, p50 of a 64-statistic sample: 1.0-1.6 ms
 * in six runs, 1.2-2.5 ms in six without).  On Xen guests the channels
 * are steered through /proc/irq/<N>/smp_affinity_list of the interrupts
 * named "evtchn:<the thread name at xenstats_provider_new()>" (root; other
 * channels of processes of the same name move too).  Returns 0; -EINVAL (no such
 * CPU), or the error of steering (e.g. -EACCES), the thread staying pinned.
 * The emulated host has no interrupts: pinning only.
 */
int xenstats_provider_set_cpu(struct xenstats_provider *provider, int cpu);

/*
 * Add a set named `name` (e.g. "Tx").  Statistics are declared, then the
 * set is published.  NULL and errno (EINVAL bad name, EEXIST).  The set
 * belongs to the provider.
 */
struct xenstats_provider_set *xenstats_provider_add_set(struct xenstats_provider *provider, const char *name,
                                                        xenstats_provider_refresh_fn refresh, void *userdata);

/* Declare a statistic before publishing; returns its index (>= 0). */
int xenstats_provider_set_declare(struct xenstats_provider_set *set, const char *name, enum xenstats_pv_type type);

/*
 * Publish: grant the name/type and value pages read-only to the monitor,
 * write `name-type-ref<N>` and `val-ref<N>`, then `event-channel` last.
 * The refresh callback runs once first so the first sample is meaningful.
 */
int xenstats_provider_set_publish(struct xenstats_provider_set *set);

/*
 * Withdraw: delete `event-channel`, wait (bounded) for the monitor to close
 * its port, remove the set's keys, and the provider's key when no set is
 * left.  Returns 0, or -ETIMEDOUT when the monitor did not close in time
 * (the keys are removed anyway).  The set is freed.
 */
int xenstats_provider_set_withdraw(struct xenstats_provider_set *set);

/*
 * Withdraw every set at once: delete every `event-channel` key, then wait
 * for the monitor to close all the ports under one deadline (the
 * withdraw_timeout_ms of the options), then remove the keys.  A provider
 * stopping withdraws in one timeout however many sets it has.  Returns 0,
 * or -ETIMEDOUT when some port was still open at the deadline (the keys
 * are removed anyway).  Every set is freed; the provider stays usable.
 * xenstats_provider_free() calls it.
 */
int xenstats_provider_withdraw_all(struct xenstats_provider *provider);

/* Setters, valid inside the refresh callback and before publishing.
 * -EINVAL: index out of range or of another type (or bad ASCII). */
int xenstats_provider_set_s64(struct xenstats_provider_set *set, unsigned int index, int64_t value);
int xenstats_provider_set_u64(struct xenstats_provider_set *set, unsigned int index, uint64_t value);
int xenstats_provider_set_double(struct xenstats_provider_set *set, unsigned int index, double value);
int xenstats_provider_set_ascii(struct xenstats_provider_set *set, unsigned int index, const char *value);

/* Number of statistics declared in the set. */
unsigned int xenstats_provider_set_count(const struct xenstats_provider_set *set);

/*
 * The provider's pollable fd: readable when a monitor asks for a sample, or
 * when xenstore has news for the provider (its domain was resumed).  Then
 * call xenstats_provider_dispatch(), which refreshes the sets asked for
 * and signals back, and after a save/restore, a migration or a lost key
 * publishes every set again (docs/pv-stats.md, "Lifecycle").  The fd stays
 * the same across all of that.  Returns the number of sets refreshed
 * (>= 0), or a negative errno: -ESRCH when the host went away (xenstore or
 * the event channel device).
 */
int xenstats_provider_fd(const struct xenstats_provider *provider);
int xenstats_provider_dispatch(struct xenstats_provider *provider);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_PV_PROVIDER_H */
