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
#include <sys/types.h>

#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/xenstats.h>

enum emu_workload {
    EMU_WORKLOAD_IDLE,  /* mostly blocked, rare short bursts */
    EMU_WORKLOAD_CPU,   /* always wants a pCPU */
    EMU_WORKLOAD_IO,    /* short bursts between waits */
    EMU_WORKLOAD_MIXED, /* alternates cpu-bound and io-bound phases */
};

#define EMU_MAX_VCPUS 4096
#define EMU_MAX_PCPUS 1024
/* vifs and vbds a domain may have (each kind), and the largest vif devid */
#define EMU_MAX_DEVICES 64
#define EMU_MAX_VIF_DEVID 65535

struct emu_domain_spec {
    char name[XENSTATS_DOMAIN_NAME_MAX];
    uint32_t nr_vcpus;
    uint32_t nr_offline; /* the last nr_offline vCPUs start offline */
    enum emu_workload workload;
    bool vcpu_stats; /* provide the stats resource (false: like stock Xen) */
    uint64_t memory_kib; /* at creation, and the first balloon target */
    uint64_t maxmem_kib; /* static-max; Xen's limit is this + EMU_MAXMEM_SLACK_KIB */
    uint64_t shared_kib, outstanding_kib; /* fixed figures, for the readers' tests */
    uint32_t nr_vifs;                     /* vifs with devids 0 .. nr_vifs-1 */
    uint32_t nr_vbds;
    char vbds[EMU_MAX_DEVICES][8];        /* their vdevs, "xvda"... */
    bool traffic; /* the devices' counters move with the workload (default) */
};

/* libxl's LIBXL_MAXMEM_CONSTANT: Xen's max_pages = static-max + 1 MiB. */
#define EMU_MAXMEM_SLACK_KIB 1024u
#define EMU_DEFAULT_MEMORY_KIB (128u * 1024u)
/* The largest size accepted anywhere (1 TiB), far below overflow of sums. */
#define EMU_MAX_SIZE_KIB (1ULL << 30)
/* How fast a domain's balloon driver moves its memory toward the target. */
#define EMU_BALLOON_KIB_PER_S (256u * 1024u)

struct emu_domain;

struct emu_vcpu {
    struct emu_domain *domain;
    struct xen_vcpu_stats_block stats; /* its record's writer, if the domain has a region */
    bool has_stats;
    uint64_t times[4];    /* ns per runstate, as the record has them */
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

/* What a module's changed() hears about. */
enum emu_change {
    EMU_CHANGE_TARGET,  /* the balloon target (memory/target) */
    EMU_CHANGE_DEVICES, /* a vif or vbd attached or detached (the list changed) */
    EMU_CHANGE_VCPUS,   /* vCPUs went online or offline (xl vcpu-set) */
};

/*
 * A guest's backend device in dom0: a vif (netback) or a vbd (blkback),
 * with the counters dom0's sysfs shows for it (emu_device_counter_names()).
 */
enum emu_device_kind {
    EMU_DEVICE_VIF,
    EMU_DEVICE_VBD,
};

/* rx_bytes rx_packets rx_errors rx_dropped, tx_..., then netback's own five
 * (rx_gso_checksum_fixup tx_zerocopy_sent tx_zerocopy_success
 * tx_zerocopy_fail tx_frag_overflow), which the tree keeps in one ethtool
 * file; the first eight are in the interface table (EMU_NET_DEV_FILE) too */
#define EMU_VIF_COUNTERS 13
#define EMU_VIF_STATISTICS 8 /* the first this many are in statistics/ */
#define EMU_VBD_COUNTERS 7   /* oo_req rd_req wr_req f_req ds_req rd_sect wr_sect */
#define EMU_DEVICE_COUNTERS 13

/*
 * A vbd's statistics/ as dom0 sees it: there; gone (the directory missing,
 * as while blkback tears the disk down); or each counter file there but
 * empty and mode 0, so that no reader (root included) gets a figure.
 */
enum emu_statistics {
    EMU_STATISTICS_PRESENT,
    EMU_STATISTICS_MISSING,
    EMU_STATISTICS_UNREADABLE,
};

struct emu_device {
    enum emu_device_kind kind;
    uint32_t devid;
    char vdev[8]; /* a vbd's name in the guest ("xvda"); empty for a vif */
    bool traffic; /* its counters move with the domain's workload */
    enum emu_statistics statistics; /* a vbd's; a vif's are always present */
    uint64_t counter[EMU_DEVICE_COUNTERS];
    uint64_t shown[EMU_DEVICE_COUNTERS]; /* what the tree's files hold */
    bool in_tree;
};

struct emu_domain {
    struct emu_domain *next;
    uint32_t domid;
    struct emu_domain_spec spec;
    uint64_t created;
    struct emu_vcpu *vcpus;
    void *region; /* shared mapping of the region file, or NULL */
    size_t region_len;
    struct xen_vcpu_stats_writer stats;         /* the region's layout, ours */
    struct xen_vcpu_stats_block domain_stats;   /* its domain section */
    uint64_t stats_pages[XEN_VCPU_STATS_DOMAIN_NR_COUNTERS]; /* as last written */
    uint64_t tick_hz;                           /* the region's time base */
    uint8_t uuid[16];          /* xen_domain_handle_t; zero for Domain-0 */
    unsigned int pause_count;  /* the toolstack's pauses (xl pause nests) */
    struct emu_image *paused;  /* while paused: its processes, stopped */
    bool shut_down;
    bool dying;                /* destroyed, lingering until dying_until */
    bool released;             /* the modules and devices let go of it already */
    uint64_t dying_until;
    uint32_t shutdown_reason;  /* enum xenstats_shutdown_reason */
    uint64_t memory_kib;       /* tot_pages * 4 */
    uint64_t target_kib;       /* memory/target, where the balloon goes */
    uint64_t max_kib;          /* max_pages * 4, or XENSTATS_KIB_UNLIMITED */
    uint64_t static_max_kib;   /* memory/static-max */
    uint64_t cpu_time_done;    /* ns run by vCPUs up to their last change */
    struct emu_device *devices; /* vifs then vbds, each by devid */
    uint32_t nr_devices;
    uint64_t io_pending;       /* I/O bursts ended since the devices last moved */
    uint64_t devices_shown_at; /* when the tree last got the counters */
    uint64_t io_rng;
};

struct emu_host;
struct emu_loop;

/*
 * A domain on its way to a new domid (xl save/restore, migrate, reboot):
 * what the new domain is made from, and the processes that were
 * connected as the old one, which carry on as the new one.  Between save
 * and restore the host keeps it under its name, its processes stopped.
 */
struct emu_image {
    struct emu_image *next;
    uint32_t id;         /* > 0: the modules keep the connections under it */
    uint32_t from_domid; /* the domain it was made from */
    struct emu_domain_spec spec; /* the name, and the vCPUs online and memory target when suspended */
    uint8_t uuid[16];
    struct emu_device *devices; /* same kinds, devids and vdevs; counters zero */
    uint32_t nr_devices;
    pid_t *pids; /* the connected processes (SO_PEERCRED), each once */
    size_t nr_pids;
    bool frozen; /* its processes got SIGSTOP (saved) */
};

/* A module tells the image (a struct emu_image) a connection it keeps:
 * its peer process is one of the domain's (unless it is the emulator). */
void emu_image_add_peer(int fd, void *image);

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
    /* Optional: something of the domain changed (after the change). */
    void (*changed)(struct emu_host *host, struct emu_domain *d, enum emu_change what, void *data);
    /* Optional: d is suspended (its processes carry on in another
     * domain): take its connections out of it before destroyed() runs,
     * keep them unserved under image->id and tell each to
     * emu_image_add_peer(). */
    void (*suspend)(struct emu_host *host, struct emu_domain *d, struct emu_image *image, void *data);
    /* Optional: tell emu_image_add_peer() each connection of d, leaving
     * it as it is: d is paused, and its processes are stopped. */
    void (*peers)(struct emu_host *host, struct emu_domain *d, struct emu_image *image, void *data);
    /* Optional: the connections kept under image->id act as d from now
     * on (d NULL: close them). */
    void (*resume)(struct emu_host *host, struct emu_image *image, struct emu_domain *d, void *data);
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
    uint64_t tick_hz; /* rate of ticks_read(), 0: no time base */
    uint64_t total_memory_kib;
    uint64_t free_memory_kib;   /* total minus every domain's memory */
    uint32_t xs_quota_nodes;    /* xenstore nodes a guest may own; 0: xenstored's default */
    uint32_t nr_running;        /* vCPUs given a pCPU at the last tick */
    void *table;                /* the mapped table file (emu/proto/run_dir.h) */
    struct emu_domain *domains; /* sorted by domid */
    bool net_dev_stale;         /* the interface table lags the vifs' counters */
    uint64_t last_tick;
    uint64_t min_vruntime; /* smallest vruntime wanting a pCPU, last tick */
    struct emu_image *saved; /* saved domains, by the name they were saved under */
    uint32_t next_image;
    /* scratch for the scheduler */
    struct emu_vcpu **want;
    size_t want_cap;
};

/* Parse "cpu", "idle", "io", "mixed"; -EINVAL otherwise. */
int emu_workload_parse(const char *s, enum emu_workload *ret);
const char *emu_workload_name(enum emu_workload w);

/*
 * Parse a domain spec: key=value pairs separated by commas or blanks
 * (name=, vcpus=, workload=, offline=, vcpu-stats=yes|no, memory=,
 * maxmem=, shared=, outstanding=).  Writes a clear message into err on
 * failure.
 */
int emu_domain_spec_parse(const char *text, struct emu_domain_spec *ret_spec, char *err, size_t errlen);

/*
 * Parse a memory size: a number with an optional unit K, M, G or T (KiB
 * and up; none: MiB, as xl's memory=), into KiB, a whole number of 4 KiB
 * pages up to max_kib.  -EINVAL (not a size, not whole pages) or -ERANGE.
 */
int emu_size_parse(const char *s, uint64_t max_kib, uint64_t *ret_kib);

/*
 * Set up the run directory (refusing one whose emulator is alive), with no
 * domains yet.  The pid file is written by emu_host_publish() once ready.
 * total_memory_kib is the host's memory, shared by the domains.
 */
int emu_host_init(struct emu_host *host, const char *dir, uint32_t nr_pcpus, uint64_t tick_ns,
                  uint64_t total_memory_kib);
int emu_host_publish(struct emu_host *host);
/* Destroy every domain and remove the run directory's files. */
void emu_host_fini(struct emu_host *host);

/*
 * Create a domain with the next free domid (domid 0 first).  Returns the
 * domid (>= 0) or -errno (-ENOMEM: not that much free memory on the host).
 * Domain-0 has no memory limit (XENSTATS_KIB_UNLIMITED).
 */
int emu_domain_create(struct emu_host *host, const struct emu_domain_spec *spec);
int emu_domain_destroy(struct emu_host *host, uint32_t domid);
/*
 * Destroy a domain that lingers, dying, for linger_ns (0: at once), as a
 * Xen domain does while something still holds its pages: it stays listed
 * with the dying flag, its vCPUs stop, its devices, xenstore nodes, grants
 * and event channels go at once, and it is gone after linger_ns (its
 * memory returns to the host then).  Destroying a dying domain again ends
 * its linger.  -ESRCH no domain, -EPERM Domain-0.
 */
#define EMU_MAX_LINGER_NS (3600ULL * 1000000000ULL)
int emu_domain_kill(struct emu_host *host, uint32_t domid, uint64_t linger_ns);

/*
 * The toolstack's controls, with Xen's errors: -ESRCH no such domain,
 * -EINVAL a dying one;
 * pause/unpause -EINVAL on Domain-0 (Xen will not pause the caller's own
 * domain) and unpause -EINVAL when not paused; shutdown -EPERM on
 * Domain-0, -EALREADY when shut down; set_target -EINVAL above static-max
 * (libxl's check).  A paused or shut-down domain's vCPUs stop at once
 * (runstate offline; a paused domain's blocked ones stay blocked until
 * they would wake); a shut-down domain stays listed until destroyed.
 */
int emu_domain_pause(struct emu_host *host, uint32_t domid);
int emu_domain_unpause(struct emu_host *host, uint32_t domid);
int emu_domain_shutdown(struct emu_host *host, uint32_t domid, uint32_t reason);
/* xl mem-set: target and (as libxl enforces it) max = target + slack. */
int emu_domain_set_target(struct emu_host *host, uint32_t domid, uint64_t target_kib);

/* xl vcpu-set: vCPUs 0..online-1 online, the rest offline at once.
 * -ESRCH, -EINVAL (dying, or online not within 1..vcpus). */
int emu_domain_set_vcpus(struct emu_host *host, uint32_t domid, uint32_t online);

/*
 * The lifecycle of a domain whose processes carry on (docs/emulator.md):
 * suspend takes domain domid down as destroy does (no linger), its
 * processes' connections kept in *ret_image (their processes stopped with
 * SIGSTOP when freeze); resume makes a new domain with the next domid of
 * the image (same name, UUID, spec and devices, everything else fresh),
 * hands it the connections, records the move in the run directory
 * (moved/<old domid>), continues stopped processes and frees the image.
 * suspend: -ESRCH, -EPERM Domain-0, -EINVAL dying or shut down, -ENOMEM.
 * resume returns the new domid or -errno (-EEXIST: the name is running;
 * the image is kept then); on other failures the connections are closed
 * and the image freed.
 */
int emu_domain_suspend(struct emu_host *host, uint32_t domid, bool freeze, struct emu_image **ret_image);
int emu_domain_resume(struct emu_host *host, struct emu_image *image);
/* Free an image that will not be resumed: its connections close, its
 * processes are continued (they see their domain gone). Accepts NULL. */
void emu_image_drop(struct emu_host *host, struct emu_image *image);

/* What getdomaininfo tells of the domain: XENSTATS_DOMAIN_* flags, and
 * the ns its vCPUs ran up to `now` (no earlier than its last tick). */
uint32_t emu_domain_flags(const struct emu_domain *d);
uint64_t emu_domain_cpu_time(const struct emu_domain *d, uint64_t now);

/* Parse a shutdown reason name (poweroff, reboot, suspend, crash, watchdog, soft_reset). */
int emu_shutdown_reason_parse(const char *s, uint32_t *ret);
const char *emu_shutdown_reason_name(uint32_t reason);
struct emu_domain *emu_domain_find(struct emu_host *host, uint32_t domid);

/* ---- backend devices (devices.c) ----------------------------------------
 *
 * The emulator shows them as dom0's sysfs does, under <run dir>/sys
 * (EMU_SYSFS_DIR, laid out as lib/platform/backend_devices.h reads it): a
 * device's directory appears complete, by rename(), and goes by rename()
 * before its files are removed.  The toolstack's backend nodes in
 * xenstore come from the xenstore module (EMU_CHANGE_DEVICES), written
 * before a device appears and removed after it went.
 */

/* Counter names of a kind, as sysfs names the files; *ret_count of them. */
const char *const *emu_device_counter_names(enum emu_device_kind kind, unsigned int *ret_count);
/* The index of counter `name` of a kind, or -EINVAL. */
int emu_device_counter_index(enum emu_device_kind kind, const char *name);
/*
 * Parse a vbd's vdev as xl does for Xen PV disks: "xvd" and 1-3 letters
 * (xvda = disk 0, xvdaa = disk 26); its devid is Xen's (202 << 8 | disk << 4
 * below 16 disks, 1 << 28 | disk << 8 from there).  -EINVAL otherwise.
 */
int emu_vbd_vdev_parse(const char *vdev, uint32_t *ret_devid);
/* The vdev of the disk index (0: xvda) into buf[8]; -ERANGE above xvdzzz. */
int emu_vbd_vdev_name(uint32_t disk, char buf[8]);

/* The domain's device of kind with devid, or NULL. */
struct emu_device *emu_device_find(struct emu_domain *d, enum emu_device_kind kind, uint32_t devid);
/*
 * Attach a device to a running domain (xl network-attach / block-attach):
 * a vif with devid (or the lowest free one when devid is UINT32_MAX), a
 * vbd with a vdev.  All counters start at 0.  Returns the devid (>= 0) or
 * -ESRCH (no domain), -EEXIST (that devid is taken), -ENOSPC
 * (EMU_MAX_DEVICES), -EINVAL (bad vdev or devid), or a file error.
 */
int emu_device_attach(struct emu_host *host, uint32_t domid, enum emu_device_kind kind, uint32_t devid,
                      const char *vdev, bool traffic);
/* Detach one (xl network-detach / block-detach); -ESRCH no domain, -ENODEV no device. */
int emu_device_detach(struct emu_host *host, uint32_t domid, enum emu_device_kind kind, uint32_t devid);
/* Set a counter to value at once (the tree shows it on return); 0 or a file error. */
int emu_device_set(struct emu_host *host, struct emu_domain *d, struct emu_device *dev, unsigned int counter,
                   uint64_t value);
/*
 * Make a vbd's statistics present, missing or unreadable in the tree at
 * once; the counters keep counting and show again when present.  0,
 * -EINVAL for a vif, or a file error.
 */
int emu_device_set_statistics(struct emu_host *host, struct emu_domain *d, struct emu_device *dev,
                              enum emu_statistics statistics);
/* "present", "missing" or "unreadable"; -EINVAL for another name. */
int emu_statistics_parse(const char *name, enum emu_statistics *ret_statistics);
const char *emu_statistics_name(enum emu_statistics statistics);
/* Show the counters that moved in the tree (rate-limited unless force). */
void emu_devices_show(struct emu_host *host, struct emu_domain *d, uint64_t now, bool force);
/* The interface table (EMU_NET_DEV_FILE) written again if it lags the vifs' counters. */
void emu_devices_flush(struct emu_host *host);

/* Register a module; modules are told about domains in this order. */
int emu_host_add_module(struct emu_host *host, const struct emu_module *module);

/* Advance the emulated scheduler to `now` (CLOCK_MONOTONIC ns). */
void emu_host_tick(struct emu_host *host, uint64_t now);

#endif
