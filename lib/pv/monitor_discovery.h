/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor, discovery (monitor_discovery.c): what the monitor's
 * top (monitor.c) calls.  Above the state (monitor_state.h), beside
 * sampling, which never calls it.
 */
#ifndef XENSTATS_PV_MONITOR_DISCOVERY_H
#define XENSTATS_PV_MONITOR_DISCOVERY_H

#include "pv/monitor_state.h"

/* The monitored domain `domid` (a walk of the list), or NULL. */
struct mon_domain *mon_domain_find(struct xenstats_monitor *m, uint32_t domid);
/* Withdraw d's sets (for `why`) and free d, which is off the list already. */
void mon_domain_free(struct xenstats_monitor *m, struct mon_domain *d, const char *why);
/* The xenstore watch fd is readable: mark what changed for a rescan. */
void mon_handle_watches(struct xenstats_monitor *m);
/* Scan the domains marked, as far as their gaps and budgets allow. */
void mon_rescan_dirty(struct xenstats_monitor *m);
/*
 * Withdrawals and restarts first: a live set whose event-channel key went
 * away is withdrawn (its port closed) at once, and one whose key was
 * written again is examined at once while its domain has reads left,
 * whatever the rescan gap, a throttled domain's or requests in flight
 * would defer.  They reduce the monitor's work (a provider waits for the
 * port to close), and each costs a guest one attached set.
 */
void mon_handle_urgent(struct xenstats_monitor *m);

#endif /* XENSTATS_PV_MONITOR_DISCOVERY_H */
