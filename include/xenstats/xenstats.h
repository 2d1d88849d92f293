/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libxenstats: statistics plumbing for Xen hosts.
 *
 * Conventions for every function of this library:
 *   - a function returning int returns 0 (or a documented non-negative
 *     value) on success and a negative errno on failure, and also leaves
 *     errno set to the positive value;
 *   - a constructor returns NULL and sets errno on failure;
 *   - output parameters are named ret_* and are left untouched on failure;
 *   - destructors accept NULL;
 *   - option structs (struct xenstats_*_opts) begin with `size_t size`,
 *     which the caller sets to the sizeof of the struct it was compiled
 *     with, so the struct can grow.  A NULL pointer means every default.
 *     A smaller size (an older caller) gives the defaults to the fields
 *     beyond it.  A larger size (a newer caller) is accepted when every
 *     byte beyond the struct this library knows is zero, and refused with
 *     EINVAL otherwise, as is a size too small to hold `size` itself;
 *   - the library never prints and never exits; it reports through the log
 *     callback installed with xenstats_set_log().
 */
#ifndef XENSTATS_XENSTATS_H
#define XENSTATS_XENSTATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XENSTATS_VERSION "0.1.0"

enum xenstats_log_level {
    XENSTATS_LOG_ERROR = 0,
    XENSTATS_LOG_WARNING = 1,
    XENSTATS_LOG_INFO = 2,
    XENSTATS_LOG_DEBUG = 3,
};

typedef void (*xenstats_log_fn)(enum xenstats_log_level level, const char *message, void *userdata);

/*
 * Install the process-wide log callback (NULL: discard).  Messages below
 * `max_level` in importance are not formatted at all.
 */
void xenstats_set_log(xenstats_log_fn fn, enum xenstats_log_level max_level, void *userdata);

/* Which implementation of the Xen primitives a host handle uses. */
enum xenstats_backend {
    XENSTATS_BACKEND_AUTO = 0, /* XENSTATS_EMU_DIR set: emu; else xen */
    XENSTATS_BACKEND_EMU = 1,  /* the emulated host of `xenstats emu` */
    XENSTATS_BACKEND_XEN = 2,  /* a real Xen host (libxen*) */
};

struct xenstats_host;

/*
 * Open the host the calling process runs on.  For the emulated host the run
 * directory comes from $XENSTATS_EMU_DIR (default: see xenstats-emu(1)) and
 * the caller's domain from $XENSTATS_EMU_DOMID (default 0).
 * Returns NULL and sets errno: ENOENT (no such host running), ENOTSUP
 * (backend not built in), EACCES.  Caller frees with xenstats_host_close().
 */
struct xenstats_host *xenstats_host_open(enum xenstats_backend backend);
void xenstats_host_close(struct xenstats_host *host);

enum xenstats_backend xenstats_host_backend(const struct xenstats_host *host);
/* Domain id of the calling process. */
uint32_t xenstats_host_self_domid(const struct xenstats_host *host);

#define XENSTATS_DOMAIN_NAME_MAX 64

/* Flags of a domain's state, as Xen keeps them (XEN_DOMINF_*); several
 * may be set at once (a paused domain whose vCPU is blocked). */
#define XENSTATS_DOMAIN_RUNNING (1u << 0)  /* a vCPU is running */
#define XENSTATS_DOMAIN_BLOCKED (1u << 1)  /* every vCPU is blocked */
#define XENSTATS_DOMAIN_PAUSED (1u << 2)   /* paused by the toolstack */
#define XENSTATS_DOMAIN_SHUTDOWN (1u << 3) /* shut down: see shutdown_reason */
#define XENSTATS_DOMAIN_CRASHED (1u << 4)  /* shut down with reason crash */
#define XENSTATS_DOMAIN_DYING (1u << 5)    /* being destroyed */

/* Why a domain shut down (SHUTDOWN_* of Xen's sched.h). */
enum xenstats_shutdown_reason {
    XENSTATS_SHUTDOWN_POWEROFF = 0,
    XENSTATS_SHUTDOWN_REBOOT = 1,
    XENSTATS_SHUTDOWN_SUSPEND = 2,
    XENSTATS_SHUTDOWN_CRASH = 3,
    XENSTATS_SHUTDOWN_WATCHDOG = 4,
    XENSTATS_SHUTDOWN_SOFT_RESET = 5,
};

/*
 * The highest id a domain can have: Xen's DOMID_FIRST_RESERVED - 1.  The
 * ids from 0x7ff0 up name no domain (DOMID_SELF, DOMID_IO, ...).
 */
#define XENSTATS_DOMID_MAX 0x7fefu

/* Memory sizes are KiB; this one means "no limit". */
#define XENSTATS_KIB_UNLIMITED UINT64_MAX

/*
 * A domain as the hypervisor tells it (xc_domain_getinfolist on Xen): the
 * figures are as of the list call.
 */
struct xenstats_domain_info {
    uint32_t domid;
    uint32_t nr_vcpus; /* max_vcpus of the domain */
    char name[XENSTATS_DOMAIN_NAME_MAX];
    uint8_t uuid[16];       /* xen_domain_handle_t */
    uint32_t flags;         /* XENSTATS_DOMAIN_* */
    uint32_t shutdown_reason; /* enum xenstats_shutdown_reason, with SHUTDOWN */
    uint32_t nr_online_vcpus;
    uint64_t cpu_time_ns;      /* all vCPUs together, since creation */
    uint64_t memory_kib;       /* pages the domain holds (tot_pages) */
    uint64_t max_memory_kib;   /* its limit (max_pages), or XENSTATS_KIB_UNLIMITED */
    uint64_t shared_kib;       /* pages shared with other domains */
    uint64_t outstanding_kib;  /* claimed, not yet allocated */
};

/*
 * List the domains, sorted by domid.  On success *ret_domains points to an
 * array of *ret_count entries that the caller frees with free().
 */
int xenstats_host_list_domains(struct xenstats_host *host, struct xenstats_domain_info **ret_domains,
                               size_t *ret_count);
/* One domain.  -ESRCH when it does not exist. */
int xenstats_host_domain_info(struct xenstats_host *host, uint32_t domid, struct xenstats_domain_info *ret_info);

/* The hypervisor and the machine (xc_version, xc_physinfo, xc_sched_id). */
struct xenstats_host_info {
    char xen_version[48]; /* "4.17.5-pre" as `xl info` shows xen_version */
    char scheduler[32];   /* "credit2", "credit", "rtds", "null", "arinc653" */
    uint32_t nr_pcpus;    /* online physical CPUs */
    uint32_t cpu_khz;
    uint64_t total_memory_kib, free_memory_kib, scrub_memory_kib;
};

/* Host figures.  -EOPNOTSUPP when the backend cannot tell them. */
int xenstats_host_info(struct xenstats_host *host, struct xenstats_host_info *ret_info);

/*
 * Idle time of each physical CPU since boot (xc_getcpuinfo), in ns, into
 * idle_ns[0..max-1]; *ret_count is the number of pCPUs filled.
 */
int xenstats_host_pcpu_idle(struct xenstats_host *host, uint64_t *idle_ns, size_t max, size_t *ret_count);

#define XENSTATS_DEVICE_NAME_MAX 32

/*
 * A guest's network interface as its backend in dom0 counts it (netback's
 * vif<domid>.<devid>: /sys/class/net/<name>/statistics).  rx is what dom0
 * received from the guest, i.e. the guest's transmit; tx the other way.
 */
/*
 * netback's own statistics of a vif, as `ethtool -S vif<domid>.<devid>`
 * shows them (SIOCETHTOOL on Xen, the tree's ethtool/ on the emulator).
 */
enum xenstats_netback_stat {
    XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP, /* "rx_gso_checksum_fixup" */
    XENSTATS_NETBACK_TX_ZEROCOPY_SENT,      /* "tx_zerocopy_sent" */
    XENSTATS_NETBACK_TX_ZEROCOPY_SUCCESS,   /* "tx_zerocopy_success" */
    XENSTATS_NETBACK_TX_ZEROCOPY_FAIL,      /* "tx_zerocopy_fail" */
    XENSTATS_NETBACK_TX_FRAG_OVERFLOW,      /* "tx_frag_overflow" */
    XENSTATS_NETBACK_STATS
};

struct xenstats_vif {
    uint32_t domid, devid;
    char name[XENSTATS_DEVICE_NAME_MAX]; /* "vif1.0" */
    uint64_t rx_bytes, rx_packets, rx_errors, rx_dropped;
    uint64_t tx_bytes, tx_packets, tx_errors, tx_dropped;
    /* netback[i] is valid iff bit i of netback_present is set */
    uint64_t netback[XENSTATS_NETBACK_STATS];
    uint32_t netback_present;
};

/* A guest's virtual disk as blkback counts it (its sysfs statistics/). */
struct xenstats_vbd {
    uint32_t domid, devid;
    char name[XENSTATS_DEVICE_NAME_MAX]; /* the guest's name for it ("xvda"), else the devid */
    uint64_t oo_req, rd_req, wr_req, f_req, ds_req, rd_sect, wr_sect;
    /*
     * 1 when the disk is listed but its statistics could not be read (a
     * counter missing, unreadable or malformed, as while blkback tears it
     * down): every counter above is then 0 and means nothing.
     */
    uint32_t unreadable;
};

/*
 * Every backend device of every guest, each list sorted by (domid, devid).
 * The caller frees both arrays with free().  A device that disappears while
 * it is read is left out; a vif whose counters cannot be read too, a vbd
 * is listed as unreadable.
 */
int xenstats_host_list_devices(struct xenstats_host *host, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs,
                               struct xenstats_vbd **ret_vbds, size_t *ret_nr_vbds);

/*
 * Read the xenstore node /local/domain/<domid>/<path> into buf (NUL
 * terminated, at most len - 1 bytes).  Returns its length, -ENOENT when
 * absent, -E2BIG when longer than len - 1 (buf then holds nothing useful).
 * The value is whoever wrote it: a guest's own nodes (data/...) are
 * untrusted bytes.
 */
int xenstats_host_read_domain_key(struct xenstats_host *host, uint32_t domid, const char *path, char *buf,
                                  size_t len);

/* Human readable text of a negative errno returned by this library. */
const char *xenstats_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_XENSTATS_H */
