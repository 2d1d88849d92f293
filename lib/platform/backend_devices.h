/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guests' backend devices as dom0's sysfs shows them, for both backends:
 * Xen's /sys and the emulator's tree of the same shape in its run
 * directory.  Under root:
 *
 *   bus/xen-backend/devices/vif-<domid>-<devid>          one per vif
 *   class/net/vif<domid>.<devid>/statistics/{rx,tx}_{bytes,packets,errors,dropped}
 *   class/net/vif<domid>.<devid>/ethtool/<name>          emulator only: netback's
 *       own statistics, which Xen's dom0 gives through SIOCETHTOOL instead
 *   bus/xen-backend/devices/vbd-<domid>-<devid>/statistics/
 *       {oo_req,rd_req,wr_req,f_req,ds_req,rd_sect,wr_sect}
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
#include <stddef.h>
#include <stdint.h>

#include <xenstats/xenstats.h>

struct xs_handle;

/* A counter file's bytes, at most this many. */
#define BACKEND_COUNTER_MAX 32

/*
 * Names of the vbds of the last scan, so that a scan asks xenstore only
 * about new devices (a devid names one guest device for its lifetime).
 * Zero-initialised plus backend_devices_cache_init(); freed by _fini().
 */
struct backend_devices_cache {
    pthread_mutex_t lock;
    struct xenstats_vbd *vbds; /* sorted by (domid, devid); only the names matter */
    size_t nr_vbds;
};

void backend_devices_cache_init(struct backend_devices_cache *cache);
void backend_devices_cache_fini(struct backend_devices_cache *cache);

/*
 * How netback's own statistics of a vif are read: fills vif->netback and
 * vif->netback_present (left 0 when the interface has none).  0 or -errno;
 * a failure costs only these figures, never the vif.
 */
typedef int backend_netback_fn(const char *root, struct xenstats_vif *vif);

/* Through SIOCETHTOOL on the interface (Xen's dom0; root is unused). */
backend_netback_fn backend_netback_ethtool;

/* From root/class/net/<name>/ethtool/<stat>, counter files (the emulator). */
backend_netback_fn backend_netback_tree;

/* The index of netback's statistic called name (at most len bytes), or -1. */
int backend_netback_stat_index(const char *name, size_t len);

/*
 * Scan the tree at root.  Fills both lists sorted by (domid, devid); the
 * caller frees them with free().  No tree (no backend drivers) is no
 * devices.  xs, cache and netback may be NULL.  -ENOMEM, -ENAMETOOLONG, or the
 * error of opening the devices directory other than ENOENT.
 */
int backend_devices_scan(const char *root, struct xs_handle *xs, struct backend_devices_cache *cache,
                         backend_netback_fn *netback, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs, struct xenstats_vbd **ret_vbds,
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
