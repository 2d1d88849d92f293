/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collector: everything the agent knows about the host, gathered in one
 * place.  It tracks the domains, keeps their vCPU statistics mapped, runs
 * the PV stats monitor and reads the hypervisor's, the toolstack's and the
 * backends' figures, and builds the immutable snapshot (export/export.h)
 * that every output is made from.  The agent drives it from its event
 * loop; `xenstats top --direct` drives it in-process, one round per fetch.
 *
 *   collector_begin()      start a round: list domains, ask providers
 *   collector_dispatch()   when collector_fd() is readable
 *   collector_round_done() every answer in, or the round's time is up
 *   collector_snapshot()   the round as a snapshot
 *   collector_idle()       between rounds: new domains' setup
 */
#ifndef XENSTATS_TOOL_COLLECTOR_H
#define XENSTATS_TOOL_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include <xenstats/xenstats.h>

#include "export/export.h"

struct collector_opts {
    uint64_t interval_ns;       /* sampling interval: a round lasts at most half */
    uint32_t sample_timeout_ms; /* time a PV stats provider has to answer */
    bool create_stats_node;     /* play the toolstack's part of PV stats */
    uint32_t pv_max_live_sets;  /* per domain; 0: the monitor's default */
    uint32_t pv_max_mapped_pages;
    bool no_pv_stats;           /* no PV stats monitor: leave guests' sets to an agent */
};

struct collector;

/* A collector of `host` (still the caller's to close, after the collector). */
struct collector *collector_new(struct xenstats_host *host, const struct collector_opts *opts);
void collector_free(struct collector *c);

/* The fd to poll for the PV stats monitor, or -1 when there is none. */
int collector_fd(const struct collector *c);

/* Handle what is ready; a negative errno when the host is gone for good. */
int collector_dispatch(struct collector *c);

void collector_begin(struct collector *c);
bool collector_round_done(const struct collector *c, uint64_t now_ns);
/* Time left in the round in ms (for a poll timeout), -1 outside a round. */
int collector_round_wait_ms(const struct collector *c, uint64_t now_ns);

/*
 * Build the snapshot of the round (agent counts as given; samples and
 * errors are the collector's own).  NULL and errno when out of memory.
 */
struct export_snapshot *collector_snapshot(struct collector *c, const struct export_agent *agent);

/*
 * Between a round's snapshot and the next round: set up new domains (their
 * PV stats attach, docs/collector.md) as long as one more fits before
 * until_ns (monotonic), when the next round is due.
 */
void collector_idle(struct collector *c, uint64_t until_ns);

/*
 * One whole round in the calling thread: begin, wait for answers, snapshot.
 * New domains are all set up in the round that finds them (no spreading).
 */
struct export_snapshot *collector_collect(struct collector *c, const struct export_agent *agent);

/* Errors counted so far (domains that could not be read, failed lists). */
uint64_t collector_errors(const struct collector *c);

/* How the last round's domain list failed (a negative errno), 0 when it did not. */
int collector_list_error(const struct collector *c);

#endif
