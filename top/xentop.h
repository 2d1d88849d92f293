/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats xentop: what `xentop -b` prints, from the figures xentop reads
 * (libxenstat's model: domains with their vCPUs, networks and disks, the
 * host's memory and physical CPUs).  xentop_model.c fills the model from a
 * snapshot of lib/export; xentop_format.c lays it out as Xen's
 * tools/xentop/xentop.c does, byte for byte (docs/xentop.md lists each
 * rule and where it comes from).  The layout is pure: same model, same
 * bytes, which the unit tests check against captured xentop output.
 */
#ifndef XENSTATS_TOP_XENTOP_H
#define XENSTATS_TOP_XENTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/export.h"

/* libxenstat's "no limit" for a domain's maximum memory. */
#define XENTOP_NO_LIMIT UINT64_MAX
/* xentop reads at most this many physical CPUs (pcpu.c's MAX_PCPUS). */
#define XENTOP_MAX_PCPUS 128

/* A vbd's backend as libxenstat names it (xentop's vbd_type[]). */
enum xentop_vbd_type { XENTOP_VBD_UNIDENTIFIED = 0, XENTOP_VBD_BLKBACK = 1, XENTOP_VBD_BLKTAP = 2, XENTOP_VBD_TAPDISK3 = 3 };

struct xentop_vcpu {
    bool online;
    uint64_t ns; /* running time */
};

/* r*: what dom0 received from the guest; t*: what it sent (the vif's own rx/tx). */
struct xentop_net {
    uint64_t rbytes, rpackets, rerrs, rdrop;
    uint64_t tbytes, tpackets, terrs, tdrop;
};

struct xentop_vbd {
    uint32_t dev; /* the backend's device number (devid) */
    enum xentop_vbd_type type;
    bool error;   /* its statistics could not be read: xentop prints '-' */
    uint64_t oo_reqs, rd_reqs, wr_reqs, rd_sects, wr_sects;
};

/* States in xentop's column order: dying, shutdown, blocked, crashed, paused, running. */
enum { XENTOP_DYING = 1u << 0, XENTOP_SHUTDOWN = 1u << 1, XENTOP_BLOCKED = 1u << 2, XENTOP_CRASHED = 1u << 3,
       XENTOP_PAUSED = 1u << 4, XENTOP_RUNNING = 1u << 5 };

struct xentop_domain {
    uint32_t domid;
    const char *name; /* the raw bytes, as xenstore has them */
    unsigned int state; /* XENTOP_* */
    uint64_t cpu_ns;
    uint64_t cur_mem, max_mem; /* bytes; max_mem XENTOP_NO_LIMIT when unlimited */
    uint32_t ssid;
    uint32_t num_vcpus;
    struct xentop_vcpu *vcpus; /* num_vcpus of them */
    uint32_t num_networks, num_vbds;
    struct xentop_net *networks;
    struct xentop_vbd *vbds;
};

struct xentop_node {
    uint64_t monotonic_ns; /* when it was read: CPU(%) is over the time between two */
    uint64_t tot_mem;      /* bytes */
    uint32_t num_domains;
    struct xentop_domain *domains;
    bool pcpus_valid;
    uint32_t num_pcpus;
    uint64_t *pcpu_idle_ns;
};

/* What the command line asks for (xentop's -n -x -v -r -f -z -p). */
struct xentop_options {
    bool networks, vbds, vcpus, repeat_header, full_name, dom0_first, pcpus;
};

/*
 * What xentop keeps from one round to the next: the NAME column's width
 * under -f only ever grows, and -p's usage is over the idle time since
 * the last round.
 */
struct xentop_state {
    unsigned int name_width;
    bool pcpus_started;
    uint64_t pcpu_time_ns;
    uint32_t pcpu_count;
    uint64_t pcpu_prev_idle_ns[XENTOP_MAX_PCPUS];
    float pcpu_usage[XENTOP_MAX_PCPUS];
};

void xentop_state_init(struct xentop_state *st);

/*
 * Print one round of `xentop -b` for `cur`, CPU(%) over the time since
 * `prev` (NULL in the first round: 0.0, as xentop).  Returns 0, -ENOMEM,
 * or -ENODATA when -p is asked and the physical CPUs' idle time is
 * unknown (xentop exits then).
 */
int xentop_print_round(FILE *out, const struct xentop_node *cur, const struct xentop_node *prev,
                       const struct xentop_options *opts, struct xentop_state *st);

/*
 * The model of snapshot s: 0 and *ret_node the caller frees with
 * xentop_node_free() (s may go first: names are copied), or -ENOMEM.
 */
int xentop_node_from_snapshot(const struct export_snapshot *s, struct xentop_node **ret_node);
void xentop_node_free(struct xentop_node *node);

#endif
