/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Platform layer: dom0's backend devices from a sysfs tree (backend_devices.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xenstore.h>

#include "backend_devices.h"
#include "util/util.h"

int backend_counter_parse(const char *text, size_t len, uint64_t *ret_value)
{
    uint64_t v = 0;
    size_t i;

    if (len && text[len - 1] == '\n')
        len--;
    if (len == 0 || len > 20 || (text[0] == '0' && len > 1))
        return -EINVAL;
    for (i = 0; i < len; i++) {
        unsigned int digit = (unsigned char)text[i] - '0';

        if (digit > 9)
            return -EINVAL;
        if (v > (UINT64_MAX - digit) / 10)
            return -ERANGE;
        v = v * 10 + digit;
    }
    *ret_value = v;
    return 0;
}

/* A decimal at s up to the byte `end` (not included), as strict as a counter. */
static int parse_part(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
    uint64_t v;

    if (backend_counter_parse(s, len, &v) < 0 || (len && s[len - 1] == '\n') || v > max)
        return -EINVAL;
    *ret = v;
    return 0;
}

int backend_device_name_parse(const char *name, const char *kind, uint32_t *ret_domid, uint32_t *ret_devid)
{
    size_t k = strlen(kind);
    const char *dash;
    uint64_t domid, devid;

    if (strncmp(name, kind, k) || name[k] != '-')
        return -EINVAL;
    name += k + 1;
    dash = strchr(name, '-');
    if (!dash || parse_part(name, (size_t)(dash - name), XENSTATS_DOMID_MAX, &domid) < 0 ||
        parse_part(dash + 1, strlen(dash + 1), UINT32_MAX, &devid) < 0)
        return -EINVAL;
    *ret_domid = (uint32_t)domid;
    *ret_devid = (uint32_t)devid;
    return 0;
}

int backend_vbd_name_ok(const char *value, size_t len)
{
    size_t i;

    if (len == 0 || len >= XENSTATS_DEVICE_NAME_MAX)
        return 0;
    for (i = 0; i < len; i++) {
        char c = value[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static void release(struct backend_devices_cache *cache, struct backend_device *dev)
{
    for (unsigned int i = 0; i < dev->nr_fds; i++)
        close(dev->fds[i]);
    cache->nr_fds -= dev->nr_fds;
    dev->nr_fds = 0;
}

void backend_devices_cache_init(struct backend_devices_cache *cache)
{
    memset(cache, 0, sizeof(*cache));
    cache->sock = -1;
    pthread_mutex_init(&cache->lock, NULL);
}

void backend_devices_cache_fini(struct backend_devices_cache *cache)
{
    for (size_t i = 0; i < cache->nr_devices; i++)
        release(cache, &cache->devices[i]);
    free(cache->devices);
    free(cache->spare);
    free(cache->table);
    free(cache->filled);
    if (cache->sock >= 0)
        close(cache->sock);
    memset(cache, 0, sizeof(*cache));
    cache->sock = -1;
    pthread_mutex_destroy(&cache->lock);
}

size_t backend_devices_fd_budget(void)
{
    struct rlimit rl;
    rlim_t soft, reserve;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    soft = rl.rlim_cur == RLIM_INFINITY ? (rlim_t)1 << 20 : rl.rlim_cur;
    reserve = soft / 4 < 1024 ? soft / 4 : 1024;
    return (size_t)(soft - reserve);
}

/*
 * A small file's bytes into buf (room for cap + 1): at most cap, else
 * -EINVAL.  O_NONBLOCK: nothing planted in the tree (a FIFO) can hang a
 * scan; a directory fails the read, an empty FIFO reads nothing.  No
 * fstat(): at a thousand guests it was a quarter of a scan's system calls.
 */
static int read_bounded(int dirfd, const char *name, char *buf, size_t cap, size_t *ret_len)
{
    ssize_t n;
    int fd, r;

    fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return negative_errno();
    do
        n = read(fd, buf, cap + 1);
    while (n < 0 && errno == EINTR);
    r = n < 0 ? negative_errno() : 0;
    close(fd);
    if (r < 0)
        return r;
    /* a full buffer means the file is longer than anything expected */
    if ((size_t)n > cap)
        return -EINVAL;
    *ret_len = (size_t)n;
    return 0;
}

/* A held file's bytes, as read_bounded(): sysfs makes them anew at offset 0. */
static int pread_bounded(int fd, char *buf, size_t cap, size_t *ret_len)
{
    ssize_t n;

    do
        n = pread(fd, buf, cap + 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return negative_errno();
    if ((size_t)n > cap)
        return -EINVAL;
    *ret_len = (size_t)n;
    return 0;
}

/* One counter file of the directory dirfd; 0, or -errno / -EINVAL. */
static int read_counter(int dirfd, const char *name, uint64_t *ret_value)
{
    char buf[BACKEND_COUNTER_MAX + 1];
    size_t n;
    int r = read_bounded(dirfd, name, buf, BACKEND_COUNTER_MAX, &n);

    return r < 0 ? r : backend_counter_parse(buf, n, ret_value);
}

/* "vif<domid>.<devid>", netback's name for the interface; 0 or -EINVAL. */
static int vif_name_parse(const char *name, size_t len, uint32_t *ret_domid, uint32_t *ret_devid)
{
    const char *dot;
    uint64_t domid, devid;

    if (len < 3 || memcmp(name, "vif", 3) != 0)
        return -EINVAL;
    name += 3;
    len -= 3;
    dot = memchr(name, '.', len);
    if (!dot || parse_part(name, (size_t)(dot - name), XENSTATS_DOMID_MAX, &domid) < 0 ||
        parse_part(dot + 1, len - (size_t)(dot - name) - 1, UINT32_MAX, &devid) < 0)
        return -EINVAL;
    *ret_domid = (uint32_t)domid;
    *ret_devid = (uint32_t)devid;
    return 0;
}

static int compare_vif(const void *a, const void *b)
{
    const struct xenstats_vif *x = a, *y = b;

    if (x->domid != y->domid)
        return x->domid < y->domid ? -1 : 1;
    return x->devid < y->devid ? -1 : x->devid > y->devid;
}

/* The next field of [*at, end) after blanks; its length, 0 at the end. */
static size_t next_field(const char **at, const char *end)
{
    const char *s = *at, *f;

    while (s < end && *s == ' ')
        s++;
    for (f = s; s < end && *s != ' '; s++)
        ;
    *at = s;
    return (size_t)(s - f);
}

/* One interface line's sixteen counters into v; 0 or -EINVAL. */
static int net_dev_counters(const char *s, const char *end, uint64_t v[NET_DEV_FIELDS])
{
    for (int i = 0; i < NET_DEV_FIELDS; i++) {
        size_t n = next_field(&s, end);

        if (n == 0 || backend_counter_parse(s - n, n, &v[i]) < 0)
            return -EINVAL;
    }
    return next_field(&s, end) == 0 ? 0 : -EINVAL;
}

size_t backend_net_dev_parse(const char *text, size_t len, struct xenstats_vif *vifs, size_t nr, bool *filled)
{
    const char *line = text, *end = text + len;
    size_t count = 0;

    memset(filled, 0, nr * sizeof(*filled));
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line)), *name, *colon;
        struct xenstats_vif key, *vif;
        uint64_t v[NET_DEV_FIELDS];

        if (!eol)
            eol = end;
        for (name = line; name < eol && *name == ' '; name++)
            ;
        colon = memchr(name, ':', (size_t)(eol - name));
        /* the two header lines have no colon; interface names never do */
        if (colon && nr && vif_name_parse(name, (size_t)(colon - name), &key.domid, &key.devid) == 0 &&
            (vif = bsearch(&key, vifs, nr, sizeof(*vifs), compare_vif)) && !filled[vif - vifs] &&
            net_dev_counters(colon + 1, eol, v) == 0) {
            /* rx: bytes packets errs drop fifo frame compressed multicast, then tx: bytes packets errs drop ... */
            vif->rx_bytes = v[0];
            vif->rx_packets = v[1];
            vif->rx_errors = v[2];
            vif->rx_dropped = v[3];
            vif->tx_bytes = v[8];
            vif->tx_packets = v[9];
            vif->tx_errors = v[10];
            vif->tx_dropped = v[11];
            filled[vif - vifs] = true;
            count++;
        }
        if (eol == end)
            break;
        line = eol + 1;
    }
    return count;
}

static const char *const netback_names[XENSTATS_NETBACK_STATS] = {
    [XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP] = "rx_gso_checksum_fixup",
    [XENSTATS_NETBACK_TX_ZEROCOPY_SENT] = "tx_zerocopy_sent",
    [XENSTATS_NETBACK_TX_ZEROCOPY_SUCCESS] = "tx_zerocopy_success",
    [XENSTATS_NETBACK_TX_ZEROCOPY_FAIL] = "tx_zerocopy_fail",
    [XENSTATS_NETBACK_TX_FRAG_OVERFLOW] = "tx_frag_overflow",
};

int backend_netback_stat_index(const char *name, size_t len)
{
    for (int i = 0; i < XENSTATS_NETBACK_STATS; i++)
        if (strlen(netback_names[i]) == len && !memcmp(netback_names[i], name, len))
            return i;
    return -1;
}

void backend_netback_text_parse(const char *text, size_t len, struct xenstats_vif *vif)
{
    const char *line = text, *end = text + len;

    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line)), *sep;
        uint64_t v;
        int k;

        if (!eol)
            eol = end;
        /* "<name>: <value>"; anything else is not a statistic */
        sep = memchr(line, ':', (size_t)(eol - line));
        if (sep && eol - sep > 2 && sep[1] == ' ' && (k = backend_netback_stat_index(line, (size_t)(sep - line))) >= 0 &&
            !(vif->netback_present & (1u << k)) && backend_counter_parse(sep + 2, (size_t)(eol - sep - 2), &v) == 0) {
            vif->netback[k] = v;
            vif->netback_present |= 1u << k;
        }
        if (eol == end)
            break;
        line = eol + 1;
    }
}

int backend_netback_tree(const char *root, int *sock, struct xenstats_vif *vif)
{
    char path[PATH_MAX], buf[BACKEND_NETBACK_TEXT_MAX + 1];
    size_t n;
    int r;

    (void)sock;
    if (snprintf(path, sizeof(path), "%s/class/net/%s/ethtool", root, vif->name) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    /* longer than netback's statistics ever are: none of it is trusted */
    r = read_bounded(AT_FDCWD, path, buf, BACKEND_NETBACK_TEXT_MAX, &n);
    if (r == 0)
        backend_netback_text_parse(buf, n, vif);
    return r;
}

/* netback keeps five; any interface with more than this is not netback's */
#define NETBACK_ETHTOOL_MAX 256

static int ethtool(int fd, const char *ifname, void *data)
{
    struct ifreq ifr;

    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    ifr.ifr_data = data;
    return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? negative_errno() : 0;
}

int backend_netback_ethtool(const char *root, int *sock, struct xenstats_vif *vif)
{
    /* the info and the one count it returns for the one set asked for */
    union {
        struct ethtool_sset_info info;
        uint8_t bytes[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)];
    } sset;
    struct ethtool_gstrings *strings = NULL;
    struct ethtool_stats *stats = NULL;
    uint32_t n;
    int fd, r;

    (void)root;
    /* one socket for the whole scan: the caller closes it */
    if (*sock < 0 && (*sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
        return negative_errno();
    fd = *sock;
    memset(&sset, 0, sizeof(sset));
    sset.info.cmd = ETHTOOL_GSSET_INFO;
    sset.info.sset_mask = 1ull << ETH_SS_STATS;
    r = ethtool(fd, vif->name, &sset);
    if (r < 0)
        goto out;
    n = (sset.info.sset_mask & (1ull << ETH_SS_STATS)) ? sset.info.data[0] : 0;
    if (n == 0 || n > NETBACK_ETHTOOL_MAX) {
        r = n ? -E2BIG : -EOPNOTSUPP;
        goto out;
    }
    strings = calloc(1, sizeof(*strings) + (size_t)n * ETH_GSTRING_LEN);
    stats = calloc(1, sizeof(*stats) + (size_t)n * sizeof(uint64_t));
    if (!strings || !stats) {
        r = -ENOMEM;
        goto out;
    }
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_STATS;
    strings->len = n;
    stats->cmd = ETHTOOL_GSTATS;
    stats->n_stats = n;
    r = ethtool(fd, vif->name, strings);
    if (r == 0)
        r = ethtool(fd, vif->name, stats);
    if (r < 0)
        goto out;
    /* the set changed between the calls: names and values may not match */
    if (strings->len != n || stats->n_stats != n) {
        r = -EAGAIN;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = (const char *)strings->data + (size_t)i * ETH_GSTRING_LEN;
        int k = backend_netback_stat_index(name, strnlen(name, ETH_GSTRING_LEN));

        if (k >= 0) {
            vif->netback[k] = stats->data[i];
            vif->netback_present |= 1u << k;
        }
    }
out:
    free(strings);
    free(stats);
    return r;
}

static const char *const vbd_files[BACKEND_VBD_COUNTERS] = {
    "statistics/oo_req", "statistics/rd_req",  "statistics/wr_req", "statistics/f_req",
    "statistics/ds_req", "statistics/rd_sect", "statistics/wr_sect",
};

static void vbd_values(struct xenstats_vbd *vbd, uint64_t *values[BACKEND_VBD_COUNTERS])
{
    values[0] = &vbd->oo_req;
    values[1] = &vbd->rd_req;
    values[2] = &vbd->wr_req;
    values[3] = &vbd->f_req;
    values[4] = &vbd->ds_req;
    values[5] = &vbd->rd_sect;
    values[6] = &vbd->wr_sect;
}

/* A vbd's counters by path: open, read and close each file (no cache, or none held). */
static int read_vbd(const char *root, struct xenstats_vbd *vbd)
{
    uint64_t *values[BACKEND_VBD_COUNTERS];
    char dir[PATH_MAX];
    int dirfd, r = 0;

    if (snprintf(dir, sizeof(dir), "%s/bus/xen-backend/devices/vbd-%u-%u", root, vbd->domid, vbd->devid) >=
        (int)sizeof(dir))
        return -ENAMETOOLONG;
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return negative_errno();
    vbd_values(vbd, values);
    for (size_t i = 0; i < BACKEND_VBD_COUNTERS && r == 0; i++)
        r = read_counter(dirfd, vbd_files[i], values[i]);
    close(dirfd);
    return r;
}

/* A held vbd's counters: one pread() each.  -errno of a read, or -EINVAL for a counter's bytes. */
static int pread_vbd(const struct backend_device *dev, struct xenstats_vbd *vbd)
{
    uint64_t *values[BACKEND_VBD_COUNTERS];
    char buf[BACKEND_COUNTER_MAX + 1];
    size_t n;
    int r = 0;

    vbd_values(vbd, values);
    for (size_t i = 0; i < BACKEND_VBD_COUNTERS && r == 0; i++) {
        r = pread_bounded(dev->fds[1 + i], buf, BACKEND_COUNTER_MAX, &n);
        if (r == 0 && backend_counter_parse(buf, n, values[i]) < 0)
            return -EINVAL;
    }
    return r;
}

static int compare_device(const void *a, const void *b)
{
    const struct backend_device *x = a, *y = b;

    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->domid != y->domid)
        return x->domid < y->domid ? -1 : 1;
    return x->devid < y->devid ? -1 : x->devid > y->devid;
}

/* The vbd's name from the store, once per device; the devid without a store (asked again then). */
static void vbd_name(struct xs_handle *xs, struct backend_device *dev)
{
    char path[96], *value;
    unsigned int len = 0;

    snprintf(path, sizeof(path), "backend/vbd/%u/%u/dev", dev->domid, dev->devid);
    value = xs ? xs_read(xs, XBT_NULL, path, &len) : NULL;
    if (value && backend_vbd_name_ok(value, len)) {
        memcpy(dev->name, value, len);
        dev->name[len] = '\0';
    } else {
        snprintf(dev->name, sizeof(dev->name), "%u", dev->devid);
    }
    dev->named = xs != NULL;
    free(value);
}

static int grow(void **array, size_t *cap, size_t count, size_t size)
{
    void *grown;

    if (count < *cap)
        return 0;
    grown = realloc(*array, (*cap ? *cap * 2 : 16) * size);
    if (!grown)
        return -ENOMEM;
    *array = grown;
    *cap = *cap ? *cap * 2 : 16;
    return 0;
}

/*
 * The bus's entries into the cache: devices that went are released, new
 * ones added, and one whose entry is another inode than when it was opened
 * (removed and added again under its name) starts anew.  The entry of a
 * held device is pinned by its descriptor, so its number cannot pass to
 * another device meanwhile (sysfs does not reuse its inode numbers soon
 * either, and reads of a removed attribute fail with ENODEV).
 */
static int track(struct backend_devices_cache *cache, DIR *d)
{
    struct backend_device *spare, *swap;
    size_t n = 0, i = 0, kept = 0, cap;
    struct dirent *de;
    int r;

    while (d && (de = readdir(d))) {
        uint32_t domid, devid;
        uint8_t kind;

        if (backend_device_name_parse(de->d_name, "vif", &domid, &devid) == 0)
            kind = BACKEND_VIF;
        else if (backend_device_name_parse(de->d_name, "vbd", &domid, &devid) == 0)
            kind = BACKEND_VBD;
        else
            continue;
        r = grow((void **)&cache->spare, &cache->cap_spare, n, sizeof(*cache->spare));
        if (r < 0)
            return r;
        memset(&cache->spare[n], 0, sizeof(cache->spare[n]));
        cache->spare[n].domid = domid;
        cache->spare[n].devid = devid;
        cache->spare[n].kind = kind;
        cache->spare[n].ino = de->d_ino;
        n++;
    }
    spare = cache->spare;
    if (n)
        qsort(spare, n, sizeof(*spare), compare_device);
    for (size_t j = 0; j < n; j++) {
        struct backend_device now = spare[j];

        if (kept && compare_device(&spare[kept - 1], &now) == 0)
            continue;
        while (i < cache->nr_devices && compare_device(&cache->devices[i], &now) < 0)
            release(cache, &cache->devices[i++]); /* gone */
        if (i < cache->nr_devices && compare_device(&cache->devices[i], &now) == 0) {
            struct backend_device *old = &cache->devices[i++];

            if (old->ino == now.ino)
                now = *old;
            else
                release(cache, old); /* replaced under its name */
        }
        spare[kept++] = now;
    }
    while (i < cache->nr_devices)
        release(cache, &cache->devices[i++]);
    swap = cache->devices;
    cache->devices = spare;
    cache->spare = swap;
    cap = cache->cap_devices;
    cache->cap_devices = cache->cap_spare;
    cache->cap_spare = cap;
    cache->nr_devices = kept;
    return 0;
}

/*
 * Open what a device keeps, all or nothing, within the budget: its bus
 * entry, then a vbd's statistics files or the emulator's netback file of
 * a vif.  0, or -EMFILE past the budget, or the error of an open.
 */
static int hold(const struct backend_tree *tree, int busfd, struct backend_devices_cache *cache, size_t budget,
                struct backend_device *dev)
{
    unsigned int want = dev->kind == BACKEND_VBD ? BACKEND_HELD_MAX : tree->netback_files ? 2 : 0;
    char path[PATH_MAX];
    unsigned int n = 0;
    int r = 0;

    if (want == 0 || dev->nr_fds)
        return dev->nr_fds ? 0 : -EOPNOTSUPP;
    if (cache->nr_fds + want > budget)
        return -EMFILE;
    snprintf(path, sizeof(path), "%s-%u-%u", dev->kind == BACKEND_VBD ? "vbd" : "vif", dev->domid, dev->devid);
    dev->fds[n] = openat(busfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dev->fds[n] < 0)
        return negative_errno();
    n++;
    if (dev->kind == BACKEND_VBD) {
        for (; n < want; n++) {
            dev->fds[n] = openat(dev->fds[0], vbd_files[n - 1], O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
            if (dev->fds[n] < 0)
                break;
        }
    } else if (snprintf(path, sizeof(path), "%s/class/net/%s/ethtool", tree->root, dev->name) < (int)sizeof(path)) {
        dev->fds[n] = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (dev->fds[n] >= 0)
            n++;
    } else {
        errno = ENAMETOOLONG;
    }
    if (n < want) {
        r = negative_errno();
        while (n)
            close(dev->fds[--n]);
        return r;
    }
    dev->nr_fds = (uint8_t)n;
    cache->nr_fds += n;
    cache->opens++;
    return 0;
}

/* A vbd: held files by pread(), else (or if a read fails) by path. */
static int read_device_vbd(const struct backend_tree *tree, int busfd, struct backend_devices_cache *cache,
                           size_t budget, struct backend_device *dev, struct xenstats_vbd *vbd)
{
    int r = -EBADF;

    memset(vbd, 0, sizeof(*vbd));
    vbd->domid = dev->domid;
    vbd->devid = dev->devid;
    if (hold(tree, busfd, cache, budget, dev) == 0)
        r = pread_vbd(dev, vbd);
    /* a counter's bytes are the device's fault: its files stay held */
    if (r == -EINVAL)
        return r;
    if (r < 0) {
        release(cache, dev);
        r = read_vbd(tree->root, vbd);
    }
    return r;
}

/* The interface table into the cache's buffer (grown as needed), or -errno. */
static int read_table(const char *path, struct backend_devices_cache *cache, size_t *ret_len)
{
    size_t used = 0;
    int fd, r = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return negative_errno();
    for (;;) {
        ssize_t n;

        if (used == cache->table_cap) {
            size_t cap = cache->table_cap ? cache->table_cap * 2 : 64 * 1024;
            char *grown;

            if (cache->table_cap > BACKEND_NET_DEV_MAX) {
                r = -EFBIG;
                break;
            }
            grown = realloc(cache->table, cap);
            if (!grown) {
                r = -ENOMEM;
                break;
            }
            cache->table = grown;
            cache->table_cap = cap;
        }
        n = read(fd, cache->table + used, cache->table_cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = negative_errno();
            break;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    if (r == 0 && used > BACKEND_NET_DEV_MAX)
        r = -EFBIG;
    if (r == 0)
        *ret_len = used;
    return r;
}

/* A vif's netback statistics: the held file, else (or if its read fails) as the tree says. */
static void read_netback(const struct backend_tree *tree, int busfd, struct backend_devices_cache *cache, size_t budget,
                         struct backend_device *dev, struct xenstats_vif *vif)
{
    char buf[BACKEND_NETBACK_TEXT_MAX + 1];
    size_t n;
    int r = -EBADF;

    if (tree->netback_files) {
        if (hold(tree, busfd, cache, budget, dev) == 0)
            r = pread_bounded(dev->fds[1], buf, BACKEND_NETBACK_TEXT_MAX, &n);
        if (r == 0) {
            backend_netback_text_parse(buf, n, vif);
            return;
        }
        if (r != -EINVAL) {
            release(cache, dev);
            r = backend_netback_tree(tree->root, NULL, vif);
        }
    } else if (tree->netback) {
        r = tree->netback(tree->root, &cache->sock, vif);
    }
    if (r < 0) {
        vif->netback_present = 0;
        memset(vif->netback, 0, sizeof(vif->netback));
    }
}

/*
 * The vifs (the cache's first devices, sorted), those the interface table
 * shows, with its counters: one read for every vif, where sysfs has a file
 * per counter (eight per vif).  Then netback's own, if asked.
 */
static int fill_vifs(const struct backend_tree *tree, int busfd, struct backend_devices_cache *cache, size_t budget,
                     struct xenstats_vif *vifs, size_t *nr)
{
    size_t len = 0, kept = 0, i;
    int r;

    if (*nr == 0)
        return 0;
    if (cache->filled_cap < *nr) {
        bool *grown = realloc(cache->filled, *nr * sizeof(*grown));

        if (!grown)
            return -ENOMEM;
        cache->filled = grown;
        cache->filled_cap = *nr;
    }
    r = read_table(tree->net_dev, cache, &len);
    if (r == 0)
        backend_net_dev_parse(cache->table, len, vifs, *nr, cache->filled);
    else
        memset(cache->filled, 0, *nr * sizeof(*cache->filled));
    /* no table: no counters, so no vif (never one with made-up zeros) */
    r = r == -ENOMEM ? r : 0;
    for (i = 0; r == 0 && i < *nr; i++) {
        /* gone meanwhile, not connected yet, or malformed: left out */
        if (!cache->filled[i])
            continue;
        vifs[kept] = vifs[i];
        read_netback(tree, busfd, cache, budget, &cache->devices[i], &vifs[kept]);
        kept++;
    }
    *nr = kept;
    return r;
}

static int scan(const struct backend_tree *tree, struct xs_handle *xs, struct backend_devices_cache *cache,
                size_t budget, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs, struct xenstats_vbd **ret_vbds,
                size_t *ret_nr_vbds)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    size_t nvifs = 0, nvbds = 0, i;
    char path[PATH_MAX];
    DIR *d;
    int busfd, r;

    if (snprintf(path, sizeof(path), "%s/bus/xen-backend/devices", tree->root) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    d = opendir(path);
    if (!d && errno != ENOENT)
        return negative_errno();
    busfd = d ? dirfd(d) : -1;
    r = track(cache, d);
    if (r < 0)
        goto out;
    while (nvifs < cache->nr_devices && cache->devices[nvifs].kind == BACKEND_VIF)
        nvifs++;
    /* callers free() both, even when empty */
    vifs = calloc(nvifs ? nvifs : 1, sizeof(*vifs));
    vbds = calloc(cache->nr_devices - nvifs ? cache->nr_devices - nvifs : 1, sizeof(*vbds));
    if (!vifs || !vbds) {
        r = -ENOMEM;
        goto out;
    }
    for (i = 0; i < nvifs; i++) {
        struct backend_device *dev = &cache->devices[i];

        /* netback names the interface after the domain and the handle */
        if (!dev->name[0])
            snprintf(dev->name, sizeof(dev->name), "vif%u.%u", dev->domid, dev->devid);
        vifs[i].domid = dev->domid;
        vifs[i].devid = dev->devid;
        memcpy(vifs[i].name, dev->name, sizeof(vifs[i].name));
    }
    for (i = nvifs; i < cache->nr_devices; i++) {
        struct backend_device *dev = &cache->devices[i];

        if (read_device_vbd(tree, busfd, cache, budget, dev, &vbds[nvbds]) < 0) {
            /* listed, statistics unreadable (blkback tearing it down): as xentop, a disk
             * without figures; gone meanwhile: left out */
            char entry[48];
            struct stat st;

            snprintf(entry, sizeof(entry), "vbd-%u-%u", dev->domid, dev->devid);
            if (busfd < 0 || fstatat(busfd, entry, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                continue;
            memset(&vbds[nvbds], 0, sizeof(vbds[nvbds]));
            vbds[nvbds].domid = dev->domid;
            vbds[nvbds].devid = dev->devid;
            vbds[nvbds].unreadable = 1;
        }
        if (!dev->named)
            vbd_name(xs, dev);
        memcpy(vbds[nvbds].name, dev->name, sizeof(vbds[nvbds].name));
        nvbds++;
    }
    r = fill_vifs(tree, busfd, cache, budget, vifs, &nvifs);
    if (r < 0)
        goto out;
    *ret_vifs = vifs;
    *ret_nr_vifs = nvifs;
    *ret_vbds = vbds;
    *ret_nr_vbds = nvbds;
    vifs = NULL;
    vbds = NULL;
out:
    if (d)
        closedir(d);
    free(vifs);
    free(vbds);
    return r;
}

int backend_devices_scan(const struct backend_tree *tree, struct xs_handle *xs, struct backend_devices_cache *cache,
                         struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs, struct xenstats_vbd **ret_vbds,
                         size_t *ret_nr_vbds)
{
    struct backend_devices_cache once;
    int r;

    /* no cache: a cache for this scan alone, which holds nothing */
    if (!cache) {
        backend_devices_cache_init(&once);
        r = scan(tree, xs, &once, 0, ret_vifs, ret_nr_vifs, ret_vbds, ret_nr_vbds);
        backend_devices_cache_fini(&once);
        return r;
    }
    pthread_mutex_lock(&cache->lock);
    r = scan(tree, xs, cache, cache->max_fds ? cache->max_fds : backend_devices_fd_budget(), ret_vifs, ret_nr_vifs,
             ret_vbds, ret_nr_vbds);
    pthread_mutex_unlock(&cache->lock);
    return r;
}
