/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulated host's backend devices: each domain's vifs and vbds, their
 * counters (set by the toolstack's commands, or moved by the domain's I/O
 * bursts), and the sysfs-like tree under <run dir>/sys that dom0 readers
 * scan as they scan /sys on Xen (lib/platform/backend_devices.h).
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_private.h"
#include "emu/proto/run_dir.h"

/*
 * How often moving counters reach the tree, per domain: readers sample
 * every second or so, and a thousand domains' devices rewritten ten
 * times a second would cost the emulator more than the agent it serves.
 */
#define SHOW_INTERVAL_NS 1000000000ULL
/* One burst of an idle guest in this many does I/O (timers, housekeeping). */
#define IDLE_IO_ONE_IN 8

#define BUS_DIR "bus/xen-backend/devices"
#define NET_DIR "class/net"
#define PROC_DIR "proc" /* holds EMU_NET_DEV_FILE */

static const char *const vif_counters[EMU_VIF_COUNTERS] = {
    "rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped",
    /* netback's own, as SIOCETHTOOL names them on Xen */
    "rx_gso_checksum_fixup", "tx_zerocopy_sent", "tx_zerocopy_success", "tx_zerocopy_fail", "tx_frag_overflow",
};
static const char *const vbd_counters[EMU_VBD_COUNTERS] = {
    "oo_req", "rd_req", "wr_req", "f_req", "ds_req", "rd_sect", "wr_sect",
};
enum { RX_BYTES, RX_PACKETS, RX_ERRORS, RX_DROPPED, TX_BYTES, TX_PACKETS, TX_ERRORS, TX_DROPPED };
enum { NB_CSUM_FIXUP = EMU_VIF_STATISTICS, NB_ZC_SENT, NB_ZC_SUCCESS, NB_ZC_FAIL };
enum { OO_REQ, RD_REQ, WR_REQ, F_REQ, DS_REQ, RD_SECT, WR_SECT };

/* Xen's PV disk numbering (xen/include/public/io/blkif.h, "vdev"). */
#define XVD_MAJOR 202u
#define XVD_EXTENDED (1u << 28)
#define XVD_LETTERS_MAX 3

const char *const *emu_device_counter_names(enum emu_device_kind kind, unsigned int *ret_count)
{
    *ret_count = kind == EMU_DEVICE_VIF ? EMU_VIF_COUNTERS : EMU_VBD_COUNTERS;
    return kind == EMU_DEVICE_VIF ? vif_counters : vbd_counters;
}

int emu_device_counter_index(enum emu_device_kind kind, const char *name)
{
    unsigned int n, i;
    const char *const *names = emu_device_counter_names(kind, &n);

    for (i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return (int)i;
    return -EINVAL;
}

int emu_vbd_vdev_parse(const char *vdev, uint32_t *ret_devid)
{
    size_t n, i;
    uint32_t disk = 0;

    if (strncmp(vdev, "xvd", 3))
        return -EINVAL;
    vdev += 3;
    n = strlen(vdev);
    if (n == 0 || n > XVD_LETTERS_MAX)
        return -EINVAL;
    /* bijective base 26: a..z are 1..26 in every place, xvda is disk 0 */
    for (i = 0; i < n; i++) {
        if (vdev[i] < 'a' || vdev[i] > 'z')
            return -EINVAL;
        disk = disk * 26 + (uint32_t)(vdev[i] - 'a' + 1);
    }
    disk -= 1;
    *ret_devid = disk < 16 ? XVD_MAJOR << 8 | disk << 4 : XVD_EXTENDED | disk << 8;
    return 0;
}

int emu_vbd_vdev_name(uint32_t disk, char buf[8])
{
    char letters[XVD_LETTERS_MAX];
    size_t n = 0, i;
    uint64_t v = (uint64_t)disk + 1;

    while (v && n < XVD_LETTERS_MAX) {
        letters[n++] = (char)('a' + (v - 1) % 26);
        v = (v - 1) / 26;
    }
    if (v)
        return -ERANGE;
    memcpy(buf, "xvd", 3);
    for (i = 0; i < n; i++)
        buf[3 + i] = letters[n - 1 - i];
    buf[3 + n] = '\0';
    return 0;
}

/* ---- the tree -------------------------------------------------------------- */

/* A device's directory (its statistics/ inside), under a hidden name with a prefix. */
static int device_dir(const struct emu_host *host, uint32_t domid, const struct emu_device *dev, const char *prefix,
                      char *buf, size_t len)
{
    if (dev->kind == EMU_DEVICE_VIF)
        return emu_host_path(host, buf, len, "%s/" NET_DIR "/%svif%u.%u", EMU_SYSFS_DIR, prefix, domid, dev->devid);
    return emu_host_path(host, buf, len, "%s/" BUS_DIR "/%svbd-%u-%u", EMU_SYSFS_DIR, prefix, domid, dev->devid);
}

static int bus_entry(const struct emu_host *host, uint32_t domid, const struct emu_device *dev, char *buf,
                     size_t len)
{
    return emu_host_path(host, buf, len, "%s/" BUS_DIR "/vif-%u-%u", EMU_SYSFS_DIR, domid, dev->devid);
}

/* How many of a device's counters are files in its statistics/. */
static unsigned int nr_statistics(const struct emu_device *dev)
{
    return dev->kind == EMU_DEVICE_VIF ? EMU_VIF_STATISTICS : EMU_VBD_COUNTERS;
}

/*
 * A counter file's new bytes, written over the old ones: sysfs gives each
 * read of an attribute its value of the moment, so a reader may keep the
 * file open and read it again at offset 0 (lib/platform/backend_devices.c
 * does), which a file replaced by rename() would never show.  The length
 * is cut after the write: a reader between the two sees two newlines and
 * rejects the bytes for that round, never a wrong number.  A new file
 * (the device's first, in its hidden directory) is written whole.
 */
static int write_in_place(const char *path, const char *text, size_t len)
{
    ssize_t n;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    int r = 0;

    if (fd < 0)
        return errno == ENOENT ? write_file_atomic(path, text, len, 0644) : negative_errno();
    do
        n = pwrite(fd, text, len, 0);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)len)
        r = n < 0 ? negative_errno() : -EIO;
    if (r == 0 && ftruncate(fd, (off_t)len) < 0)
        r = negative_errno();
    close(fd);
    return r;
}

static int write_counter(const char *dir, const char *name, uint64_t value)
{
    char path[PATH_MAX], text[24];
    int n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)value);

    if (snprintf(path, sizeof(path), "%s/statistics/%s", dir, name) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    return write_in_place(path, text, (size_t)n);
}

/*
 * A vif's netback statistics, one "<name>: <value>" line each, in one file:
 * as one SIOCETHTOOL answers on Xen, one read gets them all.
 */
static int write_ethtool(const char *dir, struct emu_device *dev)
{
    char path[PATH_MAX], text[(EMU_VIF_COUNTERS - EMU_VIF_STATISTICS) * 48];
    size_t len = 0;

    for (unsigned int i = EMU_VIF_STATISTICS; i < EMU_VIF_COUNTERS; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s: %llu\n", vif_counters[i],
                                (unsigned long long)dev->counter[i]);
    if (snprintf(path, sizeof(path), "%s/ethtool", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    return write_in_place(path, text, len);
}

/* Write the counters of dev that the tree does not show yet (all with force). */
static int write_counters(const char *dir, struct emu_host *host, struct emu_device *dev, bool force)
{
    unsigned int n, i;
    const char *const *names = emu_device_counter_names(dev->kind, &n);
    bool netback = false;
    int r = 0;

    if (dev->statistics != EMU_STATISTICS_PRESENT)
        return 0; /* they show again when present */

    for (i = 0; r == 0 && i < n; i++) {
        if (!force && dev->shown[i] == dev->counter[i])
            continue;
        if (i >= nr_statistics(dev)) {
            netback = true;
            continue;
        }
        r = write_counter(dir, names[i], dev->counter[i]);
        if (r == 0 && dev->kind == EMU_DEVICE_VIF)
            host->net_dev_stale = true;
        if (r == 0)
            dev->shown[i] = dev->counter[i];
    }
    if (r == 0 && netback) {
        r = write_ethtool(dir, dev);
        for (i = nr_statistics(dev); r == 0 && i < n; i++)
            dev->shown[i] = dev->counter[i];
    }
    return r;
}

/* ---- the interface table ---------------------------------------------------- */

static int net_dev_line(char **buf, size_t *len, size_t *cap, const char *name, const uint64_t *v)
{
    /* /proc/net/dev's columns and widths; v: the vif's eight, in counter order */
    static const char fmt[] = "%6s:%8llu %7llu %4llu %4llu    0     0          0         0 "
                              "%8llu %7llu %4llu %4llu    0     0       0          0\n";
    char *grown;
    int n;

    if (*cap - *len < 256) {
        grown = realloc(*buf, *cap * 2);
        if (!grown)
            return -ENOMEM;
        *buf = grown;
        *cap *= 2;
    }
    n = snprintf(*buf + *len, *cap - *len, fmt, name, (unsigned long long)v[RX_BYTES],
                 (unsigned long long)v[RX_PACKETS], (unsigned long long)v[RX_ERRORS],
                 (unsigned long long)v[RX_DROPPED], (unsigned long long)v[TX_BYTES],
                 (unsigned long long)v[TX_PACKETS], (unsigned long long)v[TX_ERRORS],
                 (unsigned long long)v[TX_DROPPED]);
    *len += (size_t)n;
    return 0;
}

/*
 * The interface table of every vif in the tree, as the tree's statistics/
 * files show them (plus the loopback): written whole, as the kernel makes
 * it whole for each reader.
 */
static int net_dev_write(struct emu_host *host)
{
    static const char header[] =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
        "carrier compressed\n";
    static const uint64_t zero[EMU_DEVICE_COUNTERS];
    size_t cap = 4096, len = sizeof(header) - 1;
    char path[PATH_MAX], name[32], *buf = malloc(cap);
    const struct emu_domain *d;
    int r;

    if (!buf)
        return -ENOMEM;
    memcpy(buf, header, len);
    r = net_dev_line(&buf, &len, &cap, "lo", zero);
    for (d = host->domains; d && r == 0; d = d->next)
        for (uint32_t i = 0; i < d->nr_devices && r == 0; i++) {
            const struct emu_device *dev = &d->devices[i];

            if (dev->kind != EMU_DEVICE_VIF || !dev->in_tree)
                continue;
            snprintf(name, sizeof(name), "vif%u.%u", d->domid, dev->devid);
            r = net_dev_line(&buf, &len, &cap, name, dev->shown);
        }
    if (r == 0)
        r = emu_host_path(host, path, sizeof(path), "%s", EMU_NET_DEV_FILE);
    if (r == 0)
        r = write_file_atomic(path, buf, len, 0444);
    free(buf);
    if (r == 0)
        host->net_dev_stale = false;
    return r;
}

void emu_devices_flush(struct emu_host *host)
{
    if (host->net_dev_stale)
        net_dev_write(host); /* stays stale on failure: tried again next tick */
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* Our own tree only: depth-first, never following a link. */
static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int device_tree_add(struct emu_host *host, struct emu_domain *d, struct emu_device *dev)
{
    char tmp[PATH_MAX], final[PATH_MAX], stats[PATH_MAX + 16], bus[PATH_MAX];
    int r;

    if ((r = device_dir(host, d->domid, dev, ".new-", tmp, sizeof(tmp))) < 0 ||
        (r = device_dir(host, d->domid, dev, "", final, sizeof(final))) < 0 ||
        (r = bus_entry(host, d->domid, dev, bus, sizeof(bus))) < 0)
        return r;
    remove_tree(tmp);
    snprintf(stats, sizeof(stats), "%s/statistics", tmp);
    if (mkdir(tmp, 0755) < 0 || mkdir(stats, 0755) < 0) {
        r = negative_errno();
        goto fail;
    }
    r = write_counters(tmp, host, dev, true);
    if (r < 0)
        goto fail;
    /* complete before it is seen; a vif's bus entry last, as netback's
     * interface exists before its backend device is listed */
    if (rename(tmp, final) < 0) {
        r = negative_errno();
        goto fail;
    }
    dev->in_tree = true;
    if (dev->kind == EMU_DEVICE_VIF &&
        ((r = net_dev_write(host)) < 0 || (mkdir(bus, 0755) < 0 && errno != EEXIST && (r = negative_errno())))) {
        dev->in_tree = false;
        remove_tree(final);
        host->net_dev_stale = true;
        return r;
    }
    return 0;
fail:
    remove_tree(tmp);
    return r;
}

static void device_tree_remove(struct emu_host *host, struct emu_domain *d, struct emu_device *dev)
{
    char live[PATH_MAX], dead[PATH_MAX], bus[PATH_MAX];

    if (!dev->in_tree)
        return;
    dev->in_tree = false;
    if (dev->kind == EMU_DEVICE_VIF && bus_entry(host, d->domid, dev, bus, sizeof(bus)) == 0)
        rmdir(bus);
    if (device_dir(host, d->domid, dev, "", live, sizeof(live)) < 0 ||
        device_dir(host, d->domid, dev, ".dead-", dead, sizeof(dead)) < 0)
        return;
    /* gone at once for a reader; the files after */
    if (rename(live, dead) == 0)
        remove_tree(dead);
    else
        remove_tree(live);
    if (dev->kind == EMU_DEVICE_VIF) {
        host->net_dev_stale = true;
        emu_devices_flush(host);
    }
}

static int show_device(struct emu_host *host, struct emu_domain *d, struct emu_device *dev)
{
    char dir[PATH_MAX];
    int r;

    if (!dev->in_tree)
        return 0;
    r = device_dir(host, d->domid, dev, "", dir, sizeof(dir));
    return r < 0 ? r : write_counters(dir, host, dev, false);
}

int emu_devices_init(struct emu_host *host)
{
    static const char *const dirs[] = {EMU_SYSFS_DIR,
                                       EMU_SYSFS_DIR "/bus",
                                       EMU_SYSFS_DIR "/bus/xen-backend",
                                       EMU_SYSFS_DIR "/" BUS_DIR,
                                       EMU_SYSFS_DIR "/class",
                                       EMU_SYSFS_DIR "/" NET_DIR,
                                       PROC_DIR,
                                       PROC_DIR "/net"};
    char path[PATH_MAX];
    size_t i;
    int r;

    /* left by an emulator that died */
    for (i = 0; i < 2; i++) {
        r = emu_host_path(host, path, sizeof(path), "%s", i ? PROC_DIR : EMU_SYSFS_DIR);
        if (r < 0)
            return r;
        remove_tree(path);
    }
    for (i = 0; i < ARRAY_SIZE(dirs); i++) {
        r = emu_host_path(host, path, sizeof(path), "%s", dirs[i]);
        if (r < 0)
            return r;
        if (mkdir(path, 0755) < 0)
            return negative_errno();
    }
    return net_dev_write(host);
}

void emu_devices_fini(struct emu_host *host)
{
    char path[PATH_MAX];

    if (emu_host_path(host, path, sizeof(path), "%s", EMU_SYSFS_DIR) == 0)
        remove_tree(path);
    if (emu_host_path(host, path, sizeof(path), "%s", PROC_DIR) == 0)
        remove_tree(path);
}

/* ---- the list ---------------------------------------------------------------- */

struct emu_device *emu_device_find(struct emu_domain *d, enum emu_device_kind kind, uint32_t devid)
{
    uint32_t i;

    for (i = 0; i < d->nr_devices; i++)
        if (d->devices[i].kind == kind && d->devices[i].devid == devid)
            return &d->devices[i];
    return NULL;
}

static uint32_t count_kind(const struct emu_domain *d, enum emu_device_kind kind)
{
    uint32_t i, n = 0;

    for (i = 0; i < d->nr_devices; i++)
        n += d->devices[i].kind == kind;
    return n;
}

/* Insert in (kind, devid) order; the new device, or NULL and -errno in *ret. */
static struct emu_device *insert(struct emu_domain *d, enum emu_device_kind kind, uint32_t devid, const char *vdev,
                                 bool traffic, int *ret)
{
    struct emu_device *grown;
    uint32_t at;

    if (emu_device_find(d, kind, devid)) {
        *ret = -EEXIST;
        return NULL;
    }
    if (count_kind(d, kind) >= EMU_MAX_DEVICES) {
        *ret = -ENOSPC;
        return NULL;
    }
    grown = realloc(d->devices, (d->nr_devices + 1) * sizeof(*grown));
    if (!grown) {
        *ret = -ENOMEM;
        return NULL;
    }
    d->devices = grown;
    for (at = 0; at < d->nr_devices; at++) {
        const struct emu_device *x = &d->devices[at];

        if (x->kind > kind || (x->kind == kind && x->devid > devid))
            break;
    }
    memmove(&d->devices[at + 1], &d->devices[at], (d->nr_devices - at) * sizeof(*grown));
    d->nr_devices++;
    memset(&d->devices[at], 0, sizeof(*grown));
    d->devices[at].kind = kind;
    d->devices[at].devid = devid;
    d->devices[at].traffic = traffic;
    if (vdev)
        snprintf(d->devices[at].vdev, sizeof(d->devices[at].vdev), "%s", vdev);
    *ret = 0;
    return &d->devices[at];
}

int emu_devices_from_spec(struct emu_domain *d)
{
    uint32_t i, devid;
    int r = 0;

    for (i = 0; r == 0 && i < d->spec.nr_vifs; i++)
        insert(d, EMU_DEVICE_VIF, i, NULL, d->spec.traffic, &r);
    for (i = 0; r == 0 && i < d->spec.nr_vbds; i++) {
        r = emu_vbd_vdev_parse(d->spec.vbds[i], &devid);
        if (r == 0)
            insert(d, EMU_DEVICE_VBD, devid, d->spec.vbds[i], d->spec.traffic, &r);
    }
    return r;
}

int emu_devices_publish(struct emu_host *host, struct emu_domain *d)
{
    uint32_t i;
    int r = 0;

    for (i = 0; r == 0 && i < d->nr_devices; i++)
        r = device_tree_add(host, d, &d->devices[i]);
    d->devices_shown_at = host->last_tick;
    if (r < 0)
        emu_devices_unpublish(host, d);
    return r;
}

void emu_devices_unpublish(struct emu_host *host, struct emu_domain *d)
{
    uint32_t i;

    for (i = 0; i < d->nr_devices; i++)
        device_tree_remove(host, d, &d->devices[i]);
}

int emu_device_attach(struct emu_host *host, uint32_t domid, enum emu_device_kind kind, uint32_t devid,
                      const char *vdev, bool traffic)
{
    struct emu_domain *d = emu_domain_find(host, domid);
    struct emu_device *dev;
    int r;

    if (!d)
        return -ESRCH;
    if (kind == EMU_DEVICE_VBD) {
        if (!vdev || emu_vbd_vdev_parse(vdev, &devid) < 0)
            return -EINVAL;
    } else if (devid == UINT32_MAX) {
        for (devid = 0; devid <= EMU_MAX_VIF_DEVID && emu_device_find(d, kind, devid); devid++)
            ;
    }
    if (kind == EMU_DEVICE_VIF && devid > EMU_MAX_VIF_DEVID)
        return -EINVAL;
    dev = insert(d, kind, devid, kind == EMU_DEVICE_VBD ? vdev : NULL, traffic, &r);
    if (!dev)
        return r;
    /* the toolstack's nodes first: a reader that sees the device finds its name */
    emu_host_tell_modules(host, d, EMU_CHANGE_DEVICES);
    r = device_tree_add(host, d, dev);
    if (r < 0) {
        emu_device_detach(host, domid, kind, devid);
        return r;
    }
    log_info("domain %u: attached %s %u", domid, kind == EMU_DEVICE_VIF ? "vif" : "vbd", devid);
    return (int)devid;
}

int emu_device_detach(struct emu_host *host, uint32_t domid, enum emu_device_kind kind, uint32_t devid)
{
    struct emu_domain *d = emu_domain_find(host, domid);
    struct emu_device *dev;
    uint32_t at;

    if (!d)
        return -ESRCH;
    dev = emu_device_find(d, kind, devid);
    if (!dev)
        return -ENODEV;
    device_tree_remove(host, d, dev);
    at = (uint32_t)(dev - d->devices);
    memmove(&d->devices[at], &d->devices[at + 1], (d->nr_devices - at - 1) * sizeof(*dev));
    d->nr_devices--;
    emu_host_tell_modules(host, d, EMU_CHANGE_DEVICES);
    return 0;
}

static const char *const statistics_names[] = {
    [EMU_STATISTICS_PRESENT] = "present", [EMU_STATISTICS_MISSING] = "missing",
    [EMU_STATISTICS_UNREADABLE] = "unreadable",
};

int emu_statistics_parse(const char *name, enum emu_statistics *ret_statistics)
{
    for (size_t i = 0; i < ARRAY_SIZE(statistics_names); i++) {
        if (!strcmp(name, statistics_names[i])) {
            *ret_statistics = (enum emu_statistics)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *emu_statistics_name(enum emu_statistics statistics)
{
    return (size_t)statistics < ARRAY_SIZE(statistics_names) ? statistics_names[statistics] : "?";
}

int emu_device_set_statistics(struct emu_host *host, struct emu_domain *d, struct emu_device *dev,
                              enum emu_statistics statistics)
{
    char dir[PATH_MAX], stats[PATH_MAX + 16], path[PATH_MAX + 48];
    unsigned int n, i;
    const char *const *names = emu_device_counter_names(dev->kind, &n);
    int r;

    if (dev->kind != EMU_DEVICE_VBD || (size_t)statistics >= ARRAY_SIZE(statistics_names))
        return -EINVAL;
    dev->statistics = statistics;
    if (!dev->in_tree)
        return 0;
    r = device_dir(host, d->domid, dev, "", dir, sizeof(dir));
    if (r < 0)
        return r;
    snprintf(stats, sizeof(stats), "%s/statistics", dir);
    switch (statistics) {
    case EMU_STATISTICS_MISSING:
        remove_tree(stats);
        return 0;
    case EMU_STATISTICS_UNREADABLE:
        if (mkdir(stats, 0755) < 0 && errno != EEXIST)
            return negative_errno();
        for (i = 0; i < n; i++) {
            snprintf(path, sizeof(path), "%s/%s", stats, names[i]);
            r = write_file_atomic(path, "", 0, 0);
            if (r < 0)
                return r;
        }
        return 0;
    case EMU_STATISTICS_PRESENT:
        if (mkdir(stats, 0755) < 0 && errno != EEXIST)
            return negative_errno();
        return write_counters(dir, host, dev, true);
    }
    return -EINVAL;
}

int emu_device_set(struct emu_host *host, struct emu_domain *d, struct emu_device *dev, unsigned int counter,
                   uint64_t value)
{
    int r;

    if (counter >= (dev->kind == EMU_DEVICE_VIF ? EMU_VIF_COUNTERS : EMU_VBD_COUNTERS))
        return -EINVAL;
    dev->counter[counter] = value;
    r = show_device(host, d, dev);
    emu_devices_flush(host);
    return r;
}

/* ---- traffic ----------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ULL;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void add(uint64_t *counter, uint64_t n)
{
    *counter = *counter > UINT64_MAX - n ? UINT64_MAX : *counter + n; /* counters saturate */
}

/* Bursts kept for the next showing at most: bounds the cost of one. */
#define IO_PENDING_MAX 4096

void emu_devices_io(struct emu_domain *d, bool idle)
{
    if (!d->nr_devices || (idle && rng_next(&d->io_rng) % IDLE_IO_ONE_IN))
        return;
    if (d->io_pending < IO_PENDING_MAX)
        d->io_pending++;
}

/* One I/O burst: a few packets each way on every vif, one request on every vbd. */
static void burst(struct emu_domain *d, struct emu_device *dev)
{
    uint64_t r = rng_next(&d->io_rng), packets, sectors;

    if (dev->kind == EMU_DEVICE_VIF) {
        packets = 1 + r % 4;
        add(&dev->counter[RX_PACKETS], packets);
        add(&dev->counter[RX_BYTES], packets * (64 + (r >> 8) % 1437));
        /* the guest's transmit goes on without a copy; one burst in eight
         * is copied after all, one in sixteen needs its checksum set up */
        add(&dev->counter[NB_ZC_SENT], packets);
        add(&dev->counter[(r >> 44) % 8 ? NB_ZC_SUCCESS : NB_ZC_FAIL], packets);
        if ((r >> 48) % 16 == 0)
            add(&dev->counter[NB_CSUM_FIXUP], 1);
        packets = 1 + (r >> 20) % 3;
        add(&dev->counter[TX_PACKETS], packets);
        add(&dev->counter[TX_BYTES], packets * (64 + (r >> 28) % 1437));
        return;
    }
    sectors = 8 * (1 + (r >> 8) % 16); /* 4 KiB to 64 KiB */
    if (r % 3) {
        add(&dev->counter[RD_REQ], 1);
        add(&dev->counter[RD_SECT], sectors);
    } else {
        add(&dev->counter[WR_REQ], 1);
        add(&dev->counter[WR_SECT], sectors);
        if ((r >> 40) % 8 == 0)
            add(&dev->counter[F_REQ], 1);
    }
}

void emu_devices_show(struct emu_host *host, struct emu_domain *d, uint64_t now, bool force)
{
    uint32_t i;

    if (!d->nr_devices) {
        d->io_pending = 0;
        return;
    }
    if (!force && now - d->devices_shown_at < SHOW_INTERVAL_NS)
        return;
    for (; d->io_pending; d->io_pending--)
        for (i = 0; i < d->nr_devices; i++)
            if (d->devices[i].traffic)
                burst(d, &d->devices[i]);
    for (i = 0; i < d->nr_devices; i++)
        if (show_device(host, d, &d->devices[i]) < 0)
            break; /* tried again next time: shown[] says what the tree holds */
    d->devices_shown_at = now;
    if (force)
        emu_devices_flush(host);
}
