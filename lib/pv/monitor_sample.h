/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor, sampling (monitor_sample.c): what the monitor's top
 * (monitor.c) calls.  Above the state (monitor_state.h), beside
 * discovery, which it never calls.
 */
#ifndef XENSTATS_PV_MONITOR_SAMPLE_H
#define XENSTATS_PV_MONITOR_SAMPLE_H

#include "pv/monitor_state.h"

/* Arm the timer at the earliest deadline, retry or scan due. */
void mon_arm_timer(struct xenstats_monitor *m);
/* The event channel fd is readable: take the answers. */
void mon_handle_events(struct xenstats_monitor *m);
/* The timer fired: requests past their deadline, retries due. */
void mon_handle_timeouts(struct xenstats_monitor *m);
/*
 * Check the name pages of d's sets whose check is due (names_due, set
 * when a set answers; and siblings half-way to theirs) in one mapping,
 * each set alone if that fails.  mon_handle_events() calls it for every
 * domain whose sets answered with a check due (tests call it directly).
 */
void mon_names_check_domain(struct xenstats_monitor *m, struct mon_domain *d);

#endif /* XENSTATS_PV_MONITOR_SAMPLE_H */
