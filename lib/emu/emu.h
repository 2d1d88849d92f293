/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulated Xen host run by `xenstats emu`: domains, their vCPUs, and an
 * emulated scheduler that moves vCPUs between Xen's runstates over a number
 * of emulated pCPUs and writes each domain's vCPU statistics region with the
 * same writer code the hypervisor patch uses.  No transport here: the tool
 * drives it from its event loop.
 */
#ifndef XENSTATS_EMU_H
#define XENSTATS_EMU_H

#include <stdbool.h>
#include <stdint.h>

#include <xenstats/abi/vcpu_stats.h>
#include <xenstats/xenstats.h>

enum emu_workload {
    EMU_WORKLOAD_IDLE,  /* mostly blocked, rare short bursts */
    EMU_WORKLOAD_CPU,   /* always wants a pCPU */
    EMU_WORKLOAD_IO,    /* short bursts between waits */
    EMU_WORKLOAD_MIXED, /* alternates cpu-bound and io-bound phases */
};

#define EMU_MAX_VCPUS 4096
#define EMU_MAX_PCPUS 1024
#define EMU_MAX_DOMID 0x7fef /* DOMID_FIRST_RESERVED - 1 */

struct emu_domain_spec {
    char name[XENSTATS_DOMAIN_NAME_MAX];
    uint32_t nr_vcpus;
    uint32_t nr_offline; /* the last nr_offline vCPUs start offline */
    enum emu_workload workload;
    bool vcpu_stats; /* provide the stats resource (false: like stock Xen) */
};

struct emu_vcpu {
    struct xen_vcpu_stats *record;
    uint32_t id;
    uint8_t state;        /* XEN_VCPU_STATS_RUNSTATE_* */
    bool offline;         /* pinned offline by the spec */
    uint64_t update_time; /* last time the record was brought up to date */
    uint64_t changes;
    uint64_t vruntime;    /* ns run, for fair choice among runnable vCPUs */
    int64_t burst_left;   /* ns of CPU the current burst still wants */
    uint64_t wake_at;     /* when blocked: time to become runnable */
    uint64_t rng;
};

struct emu_domain {
    struct emu_domain *next;
    uint32_t domid;
    struct emu_domain_spec spec;
    uint64_t created;
    struct emu_vcpu *vcpus;
    void *region; /* shared mapping of the region file, or NULL */
    size_t region_len;
};

struct emu_host;
struct emu_loop;

/*
 * A module of the emulated host (xenstore, grants, event channels...) hears
 * about domains coming and going.  created() runs once the domain is
 * complete and visible; a failure destroys it again.  destroyed() runs
 * before the domain's resources are freed.
 */
struct emu_module {
    const char *name;
    int (*created)(struct emu_host *host, struct emu_domain *d, void *data);
    void (*destroyed)(struct emu_host *host, struct emu_domain *d, void *data);
    void *data;
};

#define EMU_MAX_MODULES 8

struct emu_host {
    char dir[3072];
    struct emu_loop *loop; /* set by the caller; modules register fds on it */
    struct emu_module modules[EMU_MAX_MODULES];
    unsigned int nr_modules;
    unsigned int nr_modules_done; /* modules told of a domain being created */
    uint32_t nr_pcpus;
    uint64_t tick_ns;
    uint32_t next_domid;
    uint32_t cache_line;
    struct emu_domain *domains; /* sorted by domid */
    uint64_t last_tick;
    uint64_t min_vruntime; /* smallest vruntime wanting a pCPU, last tick */
    /* scratch for the scheduler */
    struct emu_vcpu **want;
    size_t want_cap;
};

/* Parse "cpu", "idle", "io", "mixed"; -EINVAL otherwise. */
int emu_workload_parse(const char *s, enum emu_workload *ret);
const char *emu_workload_name(enum emu_workload w);

/*
 * Parse a domain spec: key=value pairs separated by commas or blanks
 * (name=, vcpus=, workload=, offline=, vcpu-stats=yes|no).  Writes a clear
 * message into err on failure.
 */
int emu_domain_spec_parse(const char *text, struct emu_domain_spec *ret_spec, char *err, size_t errlen);

/*
 * Set up the run directory (refusing one whose emulator is alive), with no
 * domains yet.  The pid file is written by emu_host_publish() once ready.
 */
int emu_host_init(struct emu_host *host, const char *dir, uint32_t nr_pcpus, uint64_t tick_ns);
int emu_host_publish(struct emu_host *host);
/* Destroy every domain and remove the run directory's files. */
void emu_host_fini(struct emu_host *host);

/*
 * Create a domain with the next free domid (domid 0 first).  Returns the
 * domid (>= 0) or -errno.
 */
int emu_domain_create(struct emu_host *host, const struct emu_domain_spec *spec);
int emu_domain_destroy(struct emu_host *host, uint32_t domid);
struct emu_domain *emu_domain_find(struct emu_host *host, uint32_t domid);

/* Register a module; modules are told about domains in this order. */
int emu_host_add_module(struct emu_host *host, const struct emu_module *module);

/* Advance the emulated scheduler to `now` (CLOCK_MONOTONIC ns). */
void emu_host_tick(struct emu_host *host, uint64_t now);

#endif
