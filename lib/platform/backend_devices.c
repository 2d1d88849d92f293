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

/* One counter file of the directory dirfd; 0, or -errno / -EINVAL. */
static int read_counter(int dirfd, const char *name, uint64_t *ret_value)
{
    char buf[BACKEND_COUNTER_MAX + 1];
    size_t n;
    int r = read_bounded(dirfd, name, buf, BACKEND_COUNTER_MAX, &n);

    return r < 0 ? r : backend_counter_parse(buf, n, ret_value);
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

static int compare_vbd(const void *a, const void *b)
{
    const struct xenstats_vbd *x = a, *y = b;

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

/*
 * The vifs listed on the bus, sorted, keep those the interface table shows
 * and fill their counters: one read of it for every vif, where sysfs has a
 * file per counter (eight per vif).  Then netback's own, if asked.
 */
static int fill_vifs(const struct backend_tree *tree, struct xenstats_vif *vifs, size_t *nr)
{
    char *text = NULL;
    bool *filled;
    size_t len = 0, kept = 0, i;
    int sock = -1, r;

    if (*nr == 0)
        return 0;
    qsort(vifs, *nr, sizeof(*vifs), compare_vif);
    filled = calloc(*nr, sizeof(*filled));
    if (!filled)
        return -ENOMEM;
    r = read_small_file(tree->net_dev, BACKEND_NET_DEV_MAX, &text, &len);
    if (r == 0)
        backend_net_dev_parse(text, len, vifs, *nr, filled);
    free(text);
    /* no table: no counters, so no vif (never one with made-up zeros) */
    r = r == -ENOMEM ? r : 0;
    for (i = 0; r == 0 && i < *nr; i++) {
        /* gone meanwhile, not connected yet, or malformed: left out */
        if (!filled[i])
            continue;
        vifs[kept] = vifs[i];
        if (tree->netback && tree->netback(tree->root, &sock, &vifs[kept]) < 0) {
            vifs[kept].netback_present = 0;
            memset(vifs[kept].netback, 0, sizeof(vifs[kept].netback));
        }
        kept++;
    }
    if (sock >= 0)
        close(sock);
    free(filled);
    *nr = kept;
    return r;
}

int backend_devices_scan(const struct backend_tree *tree, struct xs_handle *xs, struct backend_devices_cache *cache,
                         struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs, struct xenstats_vbd **ret_vbds,
                         size_t *ret_nr_vbds)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL, *copy;
    size_t nvifs = 0, nvbds = 0, cap_vifs = 0, cap_vbds = 0, i;
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int r = 0;

    if (snprintf(path, sizeof(path), "%s/bus/xen-backend/devices", tree->root) >= (int)sizeof(path))
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
            /* netback names the interface after the domain and the handle */
            snprintf(vifs[nvifs].name, sizeof(vifs[nvifs].name), "vif%u.%u", domid, devid);
            nvifs++;
        } else if (backend_device_name_parse(de->d_name, "vbd", &domid, &devid) == 0) {
            r = grow((void **)&vbds, &cap_vbds, nvbds, sizeof(*vbds));
            if (r < 0)
                goto out;
            memset(&vbds[nvbds], 0, sizeof(*vbds));
            vbds[nvbds].domid = domid;
            vbds[nvbds].devid = devid;
            if (read_vbd(tree->root, &vbds[nvbds]) < 0) {
                /* listed, statistics unreadable (blkback tearing it down): as xentop, a disk
                 * without figures; gone meanwhile: left out */
                struct stat st;

                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                    continue;
                memset(&vbds[nvbds], 0, sizeof(vbds[nvbds]));
                vbds[nvbds].domid = domid;
                vbds[nvbds].devid = devid;
                vbds[nvbds].unreadable = 1;
            }
            nvbds++;
        }
    }
    r = fill_vifs(tree, vifs, &nvifs);
    if (r < 0)
        goto out;
    /* qsort()'s array must not be NULL even when empty */
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
