/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guests' backend devices as dom0's sysfs and procfs show them, for both
 * backends: Xen's /sys and /proc/net/dev, and the emulator's tree of the
 * same shape in its run directory.  Under the tree's root:
 *
 *   bus/xen-backend/devices/vif-<domid>-<devid>          one per vif
 *   bus/xen-backend/devices/vbd-<domid>-<devid>/statistics/
 *       {oo_req,rd_req,wr_req,f_req,ds_req,rd_sect,wr_sect}
 *   class/net/vif<domid>.<devid>/ethtool                 emulator only: netback's
 *       own statistics as "<name>: <value>" lines, which Xen's dom0 gives
 *       through SIOCETHTOOL instead
 *
 * and a vif's interface counters from the interface table (net_dev, in
 * /proc/net/dev's format): one read for every vif of the host, where
 * class/net/<vif>/statistics/ has a file per counter.  Its receive drops
 * are rx_dropped plus rx_missed_errors, and netback never counts the
 * latter, so they equal the statistics/ file's.
 *
 * A vbd's name is the backend's `dev` node in the caller's xenstore
 * (backend/vbd/<domid>/<devid>/dev, relative: the caller is the backend
 * domain), else its devid in decimal.
 *
 * The tree is read as untrusted input: every read is bounded, every counter
 * must be a plain decimal number, and a device with a missing or malformed
 * counter is left out (never reported with a wrong figure).
 */
#ifndef XENSTATS_BACKEND_DEVICES_H
#define XENSTATS_BACKEND_DEVICES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xenstats/xenstats.h>

struct xs_handle;

/* A counter file's bytes, at most this many. */
#define BACKEND_COUNTER_MAX 32

/*
 * A device the cache follows from scan to scan, with the descriptors it
 * keeps open: sysfs gives an attribute's current value to each read at
 * offset 0, so a counter costs one pread() a round instead of an open,
 * a read and a close.  A vbd holds its bus entry (O_PATH) and its seven
 * statistics files; the emulator's vif its bus entry and its netback file;
 * a vif on Xen holds nothing (the interface table and SIOCETHTOOL).
 */
#define BACKEND_VBD_COUNTERS 7
#define BACKEND_HELD_MAX (1 + BACKEND_VBD_COUNTERS)

enum backend_device_kind { BACKEND_VIF, BACKEND_VBD };

struct backend_device {
    uint32_t domid, devid;
    uint8_t kind;           /* enum backend_device_kind */
    bool named;             /* name read from the store (vbd) */
    uint8_t nr_fds;         /* 0: nothing held, read by path */
    uint64_t ino;           /* the bus entry's inode number when it was opened */
    int fds[BACKEND_HELD_MAX]; /* [0]: the bus entry, pinning ino; then the files */
    char name[XENSTATS_DEVICE_NAME_MAX];
};

/*
 * What a scan keeps for the next: the devices (sorted by kind, domid,
 * devid) with their names and descriptors, and buffers it reuses.  A
 * device is the same one while its bus entry's inode number is: one
 * removed and added again under the same name is a new entry, whose
 * descriptors and name are read again.  The descriptors held are counted
 * against RLIMIT_NOFILE (backend_devices_fd_budget()); a device beyond
 * the budget is read by path, as with no cache.
 * Zero-initialised plus backend_devices_cache_init(); freed by _fini().
 */
struct backend_devices_cache {
    pthread_mutex_t lock;
    struct backend_device *devices, *spare;
    size_t nr_devices, cap_devices, cap_spare;
    size_t nr_fds;     /* descriptors held, every device's */
    size_t max_fds;    /* 0: from RLIMIT_NOFILE at each scan; else this (tests) */
    int sock;          /* SIOCETHTOOL's socket, kept: -1 none */
    char *table;       /* the interface table's last read */
    size_t table_cap;
    bool *filled;
    size_t filled_cap;
    uint64_t opens;    /* devices whose descriptors were opened (tests, docs) */
};

void backend_devices_cache_init(struct backend_devices_cache *cache);
void backend_devices_cache_fini(struct backend_devices_cache *cache);

/*
 * How many descriptors the scans may hold: RLIMIT_NOFILE's soft limit,
 * less a quarter (at most 1024) left to everything else the process
 * opens: connections, the store, event channels, mappings.
 */
size_t backend_devices_fd_budget(void);

/* The interface table's bytes, at most this many (some 60,000 interfaces). */
#define BACKEND_NET_DEV_MAX (8u << 20)
/* The emulator's netback statistics of one vif, at most this many bytes. */
#define BACKEND_NETBACK_TEXT_MAX 1024
/* Counters on an interface table's line: eight received, eight sent. */
#define NET_DEV_FIELDS 16

/*
 * How netback's own statistics of a vif are read: fills vif->netback and
 * vif->netback_present (left 0 when the interface has none).  *sock is
 * the scan's socket, -1 at first, opened by the function if it needs one
 * and closed by the scan.  0 or -errno; a failure costs only these
 * figures, never the vif.
 */
typedef int backend_netback_fn(const char *root, int *sock, struct xenstats_vif *vif);

/* Through SIOCETHTOOL on the interface (Xen's dom0; root is unused). */
backend_netback_fn backend_netback_ethtool;

/* From the file root/class/net/<name>/ethtool (the emulator). */
backend_netback_fn backend_netback_tree;

/* The index of netback's statistic called name (at most len bytes), or -1. */
int backend_netback_stat_index(const char *name, size_t len);

/*
 * "<name>: <value>" lines into vif: a known name with a counter's value
 * (backend_counter_parse()) is present, the first of its name only;
 * anything else is skipped.
 */
void backend_netback_text_parse(const char *text, size_t len, struct xenstats_vif *vif);

/*
 * An interface table (/proc/net/dev's format: two header lines, then
 * "<name>:" and NET_DEV_FIELDS decimal counters separated by blanks) into
 * the vifs, sorted by (domid, devid), whose line it has: the first line
 * named vif<domid>.<devid>, and only a line whose every counter is a plain
 * decimal.  filled[i] says whether vifs[i] got counters; the count filled.
 */
size_t backend_net_dev_parse(const char *text, size_t len, struct xenstats_vif *vifs, size_t nr, bool *filled);

/* Where a backend's devices are read. */
struct backend_tree {
    const char *root;          /* sysfs: "/sys", or the emulator's tree */
    const char *net_dev;       /* the interface table: "/proc/net/dev", or the emulator's */
    backend_netback_fn *netback; /* NULL: no netback statistics */
    /* netback's statistics are the file class/net/<vif>/ethtool, kept
     * open with a cache (the emulator); .netback is then ignored */
    bool netback_files;
};

/*
 * Scan the tree.  Fills both lists sorted by (domid, devid); the caller
 * frees them with free().  No tree (no backend drivers) is no devices; a
 * vif missing from the interface table is left out.  xs and cache may be
 * NULL: without a cache every file is opened, read and closed, and the
 * names are asked each time.  -ENOMEM, -ENAMETOOLONG, or the error of
 * opening the devices directory other than ENOENT.
 */
int backend_devices_scan(const struct backend_tree *tree, struct xs_handle *xs, struct backend_devices_cache *cache,
                         struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs, struct xenstats_vbd **ret_vbds,
                         size_t *ret_nr_vbds);

/*
 * A counter file's content: decimal digits without sign, blanks or leading
 * zeros, at most UINT64_MAX, then optionally one newline, nothing else.
 * 0 or -EINVAL / -ERANGE.
 */
int backend_counter_parse(const char *text, size_t len, uint64_t *ret_value);

/* "vif-<domid>-<devid>" or "vbd-..." (kind "vif"/"vbd"), the same strictness; 0 or -EINVAL. */
int backend_device_name_parse(const char *name, const char *kind, uint32_t *ret_domid, uint32_t *ret_devid);

/* A `dev` node's value fit for a device name (1-31 of [A-Za-z0-9_-]); 1 or 0. */
int backend_vbd_name_ok(const char *value, size_t len);

#endif
