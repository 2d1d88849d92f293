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
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xenstore.h>

#include "backend_devices.h"
#include "util/util.h"

#define MAX_DOMID 0x7fefu /* DOMID_FIRST_RESERVED - 1 */

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
    if (!dash || parse_part(name, (size_t)(dash - name), MAX_DOMID, &domid) < 0 ||
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

void backend_devices_cache_init(struct backend_devices_cache *cache)
{
    memset(cache, 0, sizeof(*cache));
    pthread_mutex_init(&cache->lock, NULL);
}

void backend_devices_cache_fini(struct backend_devices_cache *cache)
{
    free(cache->vbds);
    cache->vbds = NULL;
    cache->nr_vbds = 0;
    pthread_mutex_destroy(&cache->lock);
}

/* One counter file of the directory dirfd; 0, or -errno / -EINVAL. */
static int read_counter(int dirfd, const char *name, uint64_t *ret_value)
{
    char buf[BACKEND_COUNTER_MAX + 1];
    struct stat st;
    ssize_t n;
    int fd, r;

    /* O_NONBLOCK: nothing planted in the tree (a FIFO) can hang a scan */
    fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return negative_errno();
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    do
        n = read(fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    r = n < 0 ? negative_errno() : 0;
    close(fd);
    if (r < 0)
        return r;
    /* a full buffer means the file is longer than any counter */
    if ((size_t)n > BACKEND_COUNTER_MAX)
        return -EINVAL;
    return backend_counter_parse(buf, (size_t)n, ret_value);
}

/* Read the named counters of a statistics directory; 0 or -errno. */
static int read_counters(const char *dir, const char *const *names, uint64_t *const *values, size_t count)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t i;
    int r = 0;

    if (dirfd < 0)
        return negative_errno();
    for (i = 0; i < count && r == 0; i++)
        r = read_counter(dirfd, names[i], values[i]);
    close(dirfd);
    return r;
}

static int read_vif(const char *root, struct xenstats_vif *vif)
{
    static const char *const names[] = {"rx_bytes", "rx_packets", "rx_errors", "rx_dropped",
                                        "tx_bytes", "tx_packets", "tx_errors", "tx_dropped"};
    uint64_t *const values[] = {&vif->rx_bytes, &vif->rx_packets, &vif->rx_errors, &vif->rx_dropped,
                                &vif->tx_bytes, &vif->tx_packets, &vif->tx_errors, &vif->tx_dropped};
    char dir[PATH_MAX];

    /* netback names the interface after the domain and the handle */
    snprintf(vif->name, sizeof(vif->name), "vif%u.%u", vif->domid, vif->devid);
    if (snprintf(dir, sizeof(dir), "%s/class/net/%s/statistics", root, vif->name) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    return read_counters(dir, names, values, ARRAY_SIZE(names));
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

int backend_netback_tree(const char *root, struct xenstats_vif *vif)
{
    char dir[PATH_MAX];
    int dirfd;

    if (snprintf(dir, sizeof(dir), "%s/class/net/%s/ethtool", root, vif->name) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return negative_errno();
    /* each statistic on its own: a malformed one is absent, the rest stay */
    for (int i = 0; i < XENSTATS_NETBACK_STATS; i++)
        if (read_counter(dirfd, netback_names[i], &vif->netback[i]) == 0)
            vif->netback_present |= 1u << i;
    close(dirfd);
    return 0;
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

int backend_netback_ethtool(const char *root, struct xenstats_vif *vif)
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
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return negative_errno();
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
    close(fd);
    return r;
}

static int compare_vbd(const void *a, const void *b)
{
    const struct xenstats_vbd *x = a, *y = b;

    if (x->domid != y->domid)
        return x->domid < y->domid ? -1 : 1;
    return x->devid < y->devid ? -1 : x->devid > y->devid;
}

static int compare_vif(const void *a, const void *b)
{
    const struct xenstats_vif *x = a, *y = b;

    if (x->domid != y->domid)
        return x->domid < y->domid ? -1 : 1;
    return x->devid < y->devid ? -1 : x->devid > y->devid;
}

static void vbd_name(struct xs_handle *xs, struct backend_devices_cache *cache, struct xenstats_vbd *vbd)
{
    const struct xenstats_vbd *known = NULL;
    char path[96], *value;
    unsigned int len = 0;

    if (cache && cache->nr_vbds)
        known = bsearch(vbd, cache->vbds, cache->nr_vbds, sizeof(*vbd), compare_vbd);
    if (known) {
        memcpy(vbd->name, known->name, sizeof(vbd->name));
        return;
    }
    snprintf(path, sizeof(path), "backend/vbd/%u/%u/dev", vbd->domid, vbd->devid);
    value = xs ? xs_read(xs, XBT_NULL, path, &len) : NULL;
    if (value && backend_vbd_name_ok(value, len)) {
        memcpy(vbd->name, value, len);
        vbd->name[len] = '\0';
    } else {
        snprintf(vbd->name, sizeof(vbd->name), "%u", vbd->devid);
    }
    free(value);
}

static int read_vbd(const char *root, struct xenstats_vbd *vbd)
{
    static const char *const names[] = {"oo_req", "rd_req", "wr_req", "f_req", "ds_req", "rd_sect", "wr_sect"};
    uint64_t *const values[] = {&vbd->oo_req, &vbd->rd_req,  &vbd->wr_req, &vbd->f_req,
                                &vbd->ds_req, &vbd->rd_sect, &vbd->wr_sect};
    char dir[PATH_MAX];

    if (snprintf(dir, sizeof(dir), "%s/bus/xen-backend/devices/vbd-%u-%u/statistics", root, vbd->domid,
                 vbd->devid) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    return read_counters(dir, names, values, ARRAY_SIZE(names));
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

int backend_devices_scan(const char *root, struct xs_handle *xs, struct backend_devices_cache *cache,
                         backend_netback_fn *netback, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs, struct xenstats_vbd **ret_vbds,
                         size_t *ret_nr_vbds)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL, *copy;
    size_t nvifs = 0, nvbds = 0, cap_vifs = 0, cap_vbds = 0, i;
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int r = 0;

    if (snprintf(path, sizeof(path), "%s/bus/xen-backend/devices", root) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    d = opendir(path);
    if (!d && errno != ENOENT)
        return negative_errno();
    while (d && (de = readdir(d))) {
        uint32_t domid, devid;

        if (backend_device_name_parse(de->d_name, "vif", &domid, &devid) == 0) {
            r = grow((void **)&vifs, &cap_vifs, nvifs, sizeof(*vifs));
            if (r < 0)
                goto out;
            memset(&vifs[nvifs], 0, sizeof(*vifs));
            vifs[nvifs].domid = domid;
            vifs[nvifs].devid = devid;
            /* gone meanwhile, not connected yet, or malformed: left out */
            if (read_vif(root, &vifs[nvifs]) == 0) {
                if (netback && netback(root, &vifs[nvifs]) < 0) {
                    vifs[nvifs].netback_present = 0;
                    memset(vifs[nvifs].netback, 0, sizeof(vifs[nvifs].netback));
                }
                nvifs++;
            }
        } else if (backend_device_name_parse(de->d_name, "vbd", &domid, &devid) == 0) {
            r = grow((void **)&vbds, &cap_vbds, nvbds, sizeof(*vbds));
            if (r < 0)
                goto out;
            memset(&vbds[nvbds], 0, sizeof(*vbds));
            vbds[nvbds].domid = domid;
            vbds[nvbds].devid = devid;
            if (read_vbd(root, &vbds[nvbds]) == 0)
                nvbds++;
        }
    }
    /* qsort()'s array must not be NULL even when empty */
    if (nvifs)
        qsort(vifs, nvifs, sizeof(*vifs), compare_vif);
    if (nvbds)
        qsort(vbds, nvbds, sizeof(*vbds), compare_vbd);
    if (cache)
        pthread_mutex_lock(&cache->lock);
    for (i = 0; i < nvbds; i++)
        vbd_name(xs, cache, &vbds[i]);
    if (cache) {
        copy = nvbds ? malloc(nvbds * sizeof(*copy)) : NULL;
        if (copy || !nvbds) {
            if (nvbds)
                memcpy(copy, vbds, nvbds * sizeof(*copy));
            free(cache->vbds);
            cache->vbds = copy;
            cache->nr_vbds = nvbds;
        }
        pthread_mutex_unlock(&cache->lock);
    }
    /* callers free() both, even when empty */
    if (!vifs && !(vifs = calloc(1, sizeof(*vifs)))) {
        r = -ENOMEM;
        goto out;
    }
    if (!vbds && !(vbds = calloc(1, sizeof(*vbds)))) {
        r = -ENOMEM;
        goto out;
    }
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
