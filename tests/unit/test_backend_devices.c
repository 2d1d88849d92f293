/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dom0's backend device tree reader (lib/platform/backend_devices.c): the
 * parsers of what a guest can influence (counter files, device names, the
 * `dev` node) with exact errors, and a scan of a planted tree in which
 * every malformed device is left out and nothing blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define NET_DEV_HEADER                                                                                 \
    "Inter-|   Receive                                                |  Transmit\n"                        \
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls " \
    "carrier compressed\n"

#include "platform/backend_devices.h"

#define UNTOUCHED 0x5a5a5a5a5a5a5a5aULL

static int counter(const char *text, uint64_t *ret)
{
    *ret = UNTOUCHED;
    return backend_counter_parse(text, strlen(text), ret);
}

static void test_counter_accepts(void **state)
{
    static const struct {
        const char *text;
        uint64_t value;
    } good[] = {
        {"0", 0},
        {"0\n", 0},
        {"7\n", 7},
        {"1234567890", 1234567890},
        {"18446744073709551615", UINT64_MAX},
        {"18446744073709551615\n", UINT64_MAX},
        {"10000000000000000000\n", 10000000000000000000ULL},
    };
    uint64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(counter(good[i].text, &v), 0);
        assert_true(v == good[i].value);
    }
    /* the length decides, not a NUL: bytes past it are never looked at */
    assert_int_equal(backend_counter_parse("42xyz", 2, &v), 0);
    assert_true(v == 42);
    assert_int_equal(backend_counter_parse("42\nxyz", 3, &v), 0);
    assert_true(v == 42);
}

static void test_counter_refuses(void **state)
{
    static const char *const bad[] = {
        "",      "\n",     "\n\n",   "00",    "01",   "007\n", "-1",   "+1",         " 1",
        "1 ",    "1\n\n",  "1\r\n",  "1\r",   "0x10", "1e3",   "1.0",  "１", /* fullwidth */
        "12abc", "abc",    "\t5",    "5\t",   "1,000",
        "100000000000000000000",   /* 21 digits */
        "000000000000000000001",   /* 21 bytes with zeros */
        "184467440737095516150",
    };
    uint64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(counter(bad[i], &v), -EINVAL);
        assert_true(v == UNTOUCHED);
    }
    /* twenty digits above 2^64-1: out of range, not a wrapped value */
    assert_int_equal(counter("18446744073709551616", &v), -ERANGE);
    assert_true(v == UNTOUCHED);
    assert_int_equal(counter("99999999999999999999\n", &v), -ERANGE);
    assert_int_equal(counter("20000000000000000000", &v), -ERANGE);
    /* a NUL inside the length is a byte like any other */
    assert_int_equal(backend_counter_parse("1\0" "2", 3, &v), -EINVAL);
    assert_int_equal(backend_counter_parse("12\0", 3, &v), -EINVAL);
    assert_int_equal(backend_counter_parse("5", 0, &v), -EINVAL);
}

static void test_device_name(void **state)
{
    static const char *const bad_vif[] = {
        "vif",        "vif-",        "vif-1",      "vif-1-",     "vif--0",         "vif-1--0",  "vif-01-0",
        "vif-1-00",   "vif-1-01",    "vif-+1-0",   "vif-1-+0",   "vif--1-0",       "vif-1-0-0", "vif-1-0\n",
        "vif-1\n-0",  "vif-1-0 ",    " vif-1-0",   "VIF-1-0",    "vif1-0",         "vif-1.0",   "vif-a-0",
        "vif-32752-0", "vif-65535-0", "vif-1-4294967296", "vif-1-18446744073709551616", "vbd-1-0", "vif_1_0",
        "vif-99999999999999999999-0", ".new-vif-1-0",
    };
    uint32_t domid, devid;

    (void)state;
    assert_int_equal(backend_device_name_parse("vif-1-0", "vif", &domid, &devid), 0);
    assert_int_equal(domid, 1);
    assert_int_equal(devid, 0);
    assert_int_equal(backend_device_name_parse("vbd-32751-4294967295", "vbd", &domid, &devid), 0);
    assert_int_equal(domid, 32751);
    assert_true(devid == UINT32_MAX);
    assert_int_equal(backend_device_name_parse("vbd-0-268439552", "vbd", &domid, &devid), 0);
    assert_int_equal(domid, 0);
    assert_int_equal(devid, 268439552);
    for (size_t i = 0; i < sizeof(bad_vif) / sizeof(bad_vif[0]); i++) {
        domid = devid = 7;
        assert_int_equal(backend_device_name_parse(bad_vif[i], "vif", &domid, &devid), -EINVAL);
        assert_int_equal(domid, 7);
        assert_int_equal(devid, 7);
    }
    assert_int_equal(backend_device_name_parse("vif-1-0", "vbd", &domid, &devid), -EINVAL);
}

static void test_vbd_name(void **state)
{
    (void)state;
    assert_int_equal(backend_vbd_name_ok("xvda", 4), 1);
    assert_int_equal(backend_vbd_name_ok("hd_a-1", 6), 1);
    assert_int_equal(backend_vbd_name_ok("0123456789012345678901234567890", 31), 1);
    assert_int_equal(backend_vbd_name_ok("01234567890123456789012345678901", 32), 0);
    assert_int_equal(backend_vbd_name_ok("", 0), 0);
    assert_int_equal(backend_vbd_name_ok("xv da", 5), 0);
    assert_int_equal(backend_vbd_name_ok("xvd\"a", 5), 0);
    assert_int_equal(backend_vbd_name_ok("xvd\na", 5), 0);
    assert_int_equal(backend_vbd_name_ok("xvda\0", 5), 0);
    assert_int_equal(backend_vbd_name_ok("../a", 4), 0);
    assert_int_equal(backend_vbd_name_ok("x\xc3\xa9", 3), 0);
}

/* ---- a planted tree ---------------------------------------------------------- */

static char root[] = "/tmp/xenstats-backend-test-XXXXXX";

static void mkdirs(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void mkdirs(const char *fmt, ...)
{
    char path[PATH_MAX], *p;
    va_list ap;
    int n;

    n = snprintf(path, sizeof(path), "%s/", root);
    va_start(ap, fmt);
    vsnprintf(path + n, sizeof(path) - (size_t)n, fmt, ap);
    va_end(ap);
    for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s/%s", root, dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The interface table the scan reads, built up by vif_tree(). */
static char net_dev[8192] = NET_DEV_HEADER;

/* A vif's statistics/ files and its line in the table, the counters 100..107. */
static void vif_tree(const char *name, const char *value_of_rx_errors)
{
    static const char *const names[] = {"rx_bytes", "rx_packets", "rx_errors", "rx_dropped",
                                        "tx_bytes", "tx_packets", "tx_errors", "tx_dropped"};
    char dir[128], text[8][80];
    size_t len = strlen(net_dev);

    snprintf(dir, sizeof(dir), "class/net/%s/statistics", name);
    mkdirs("%s", dir);
    for (size_t i = 0; i < 8; i++) {
        snprintf(text[i], sizeof(text[i]), "%zu\n", 100 + i);
        if (i == 2 && value_of_rx_errors)
            snprintf(text[i], sizeof(text[i]), "%s", value_of_rx_errors);
        put(dir, names[i], text[i]);
        text[i][strcspn(text[i], "\n")] = '\0';
    }
    snprintf(net_dev + len, sizeof(net_dev) - len,
             "%6s:%8s %7s %4s %4s    0     0          0         0 %8s %7s %4s %4s    0     0       0          0\n",
             name, text[0], text[1], text[2], text[3], text[4], text[5], text[6], text[7]);
}

static void put_net_dev(void)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof(path), "%s/net_dev", root);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(net_dev, f);
    fclose(f);
}

static void vbd_tree(const char *name)
{
    static const char *const names[] = {"oo_req", "rd_req", "wr_req", "f_req", "ds_req", "rd_sect", "wr_sect"};
    char dir[128];

    snprintf(dir, sizeof(dir), "bus/xen-backend/devices/%s/statistics", name);
    mkdirs("%s", dir);
    for (size_t i = 0; i < 7; i++) {
        char text[32];

        snprintf(text, sizeof(text), "%zu", 10 + i);
        put(dir, names[i], text);
    }
}

static int remove_all(void)
{
    char cmd[PATH_MAX + 16];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd);
}

static void test_scan(void **state)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    size_t nvifs = 9, nvbds = 9;
    char path[PATH_MAX], big[64], table[PATH_MAX];
    struct backend_tree tree = {.root = root, .net_dev = table};

    (void)state;
    assert_non_null(mkdtemp(root));
    snprintf(table, sizeof(table), "%s/net_dev", root);
    /* no tree at all (no backend drivers): no devices */
    assert_int_equal(backend_devices_scan(&tree, NULL, NULL, &vifs, &nvifs, &vbds, &nvbds), 0);
    assert_int_equal(nvifs, 0);
    assert_int_equal(nvbds, 0);
    free(vifs);
    free(vbds);

    /* good ones, listed out of order */
    mkdirs("bus/xen-backend/devices/vif-2-1");
    mkdirs("bus/xen-backend/devices/vif-1-0");
    vif_tree("vif2.1", NULL);
    vif_tree("vif1.0", NULL);
    vbd_tree("vbd-3-51728");
    vbd_tree("vbd-1-51712");
    /* bad ones: each must be left out */
    mkdirs("bus/xen-backend/devices/vif-1-1"); /* listed, no interface */
    mkdirs("bus/xen-backend/devices/vif-1-2");
    vif_tree("vif1.2", "12abc\n"); /* a counter that is no number */
    mkdirs("bus/xen-backend/devices/vif-1-3");
    memset(big, '1', sizeof(big) - 2);
    big[sizeof(big) - 2] = '\n';
    big[sizeof(big) - 1] = '\0';
    vif_tree("vif1.3", big); /* longer than any counter */
    mkdirs("bus/xen-backend/devices/vif-01-4");
    vif_tree("vif1.4", NULL); /* a name with a leading zero */
    vbd_tree("vbd-4-1");
    snprintf(path, sizeof(path), "%s/bus/xen-backend/devices/vbd-4-1/statistics/rd_req", root);
    unlink(path);
    assert_int_equal(mkfifo(path, 0644), 0); /* a FIFO: must not block the scan */
    vbd_tree("vbd-4-2");
    snprintf(path, sizeof(path), "%s/bus/xen-backend/devices/vbd-4-2/statistics/wr_req", root);
    unlink(path);
    assert_int_equal(symlink("../../vbd-1-51712/statistics/wr_req", path), 0); /* a link: not followed */
    vbd_tree("vbd-4-3");
    snprintf(path, sizeof(path), "%s/bus/xen-backend/devices/vbd-4-3/statistics/f_req", root);
    unlink(path);
    mkdir(path, 0755); /* a directory where a counter belongs */
    vbd_tree("vbd-4-4");
    snprintf(path, sizeof(path), "%s/bus/xen-backend/devices/vbd-4-4/statistics/ds_req", root);
    unlink(path); /* missing */
    vbd_tree(".new-vbd-4-5");
    vbd_tree("vbd-32752-0"); /* beyond the domids */
    mkdirs("bus/xen-backend/devices/console-1-0");
    mkdirs("bus/xen-backend/devices/vif-1-5"); /* listed, not in the table */
    mkdirs("bus/xen-backend/devices/vif-1-6");
    vif_tree("vif1.6", NULL);
    *strrchr(net_dev, ' ') = '\n'; /* its line one counter short */
    put_net_dev();

    assert_int_equal(backend_devices_scan(&tree, NULL, NULL, &vifs, &nvifs, &vbds, &nvbds), 0);
    assert_int_equal(nvifs, 2);
    assert_int_equal(vifs[0].domid, 1);
    assert_int_equal(vifs[0].devid, 0);
    assert_string_equal(vifs[0].name, "vif1.0");
    assert_true(vifs[0].rx_bytes == 100 && vifs[0].rx_errors == 102 && vifs[0].tx_dropped == 107);
    assert_int_equal(vifs[1].domid, 2);
    assert_int_equal(vifs[1].devid, 1);
    assert_string_equal(vifs[1].name, "vif2.1");
    /* the vbds of domain 4 are listed, their statistics unreadable, as xentop shows them */
    assert_int_equal(nvbds, 6);
    assert_int_equal(vbds[0].domid, 1);
    assert_int_equal(vbds[0].devid, 51712);
    assert_string_equal(vbds[0].name, "51712"); /* no store: the devid */
    assert_true(vbds[0].oo_req == 10 && vbds[0].rd_req == 11 && vbds[0].wr_sect == 16);
    assert_int_equal(vbds[0].unreadable, 0);
    assert_int_equal(vbds[1].domid, 3);
    assert_int_equal(vbds[1].devid, 51728);
    assert_int_equal(vbds[1].unreadable, 0);
    for (size_t k = 2; k < 6; k++) {
        assert_int_equal(vbds[k].domid, 4);
        assert_int_equal(vbds[k].devid, k - 1);
        assert_int_equal(vbds[k].unreadable, 1);
        assert_true(vbds[k].oo_req == 0 && vbds[k].rd_req == 0 && vbds[k].wr_req == 0 && vbds[k].wr_sect == 0);
    }
    free(vifs);
    free(vbds);

    /* no interface table: the vifs are left out, the vbds stay */
    unlink(table);
    assert_int_equal(backend_devices_scan(&tree, NULL, NULL, &vifs, &nvifs, &vbds, &nvbds), 0);
    assert_int_equal(nvifs, 0);
    assert_int_equal(nvbds, 6);
    free(vifs);
    free(vbds);
    assert_int_equal(remove_all(), 0);
}

/* The process's open descriptors. */
static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;

    assert_non_null(d);
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own */
}

static void path_of(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(buf, len, "%s/", root);

    va_start(ap, fmt);
    vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    va_end(ap);
}

/* One scan with the cache: the vbd of (domid, devid) or NULL. */
static const struct xenstats_vbd *scan_vbd(const struct backend_tree *tree, struct backend_devices_cache *cache,
                                           uint32_t domid, uint32_t devid, struct xenstats_vbd *ret)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    size_t nvifs = 0, nvbds = 0;
    bool found = false;

    assert_int_equal(backend_devices_scan(tree, NULL, cache, &vifs, &nvifs, &vbds, &nvbds), 0);
    for (size_t i = 0; i < nvbds; i++)
        if (vbds[i].domid == domid && vbds[i].devid == devid) {
            *ret = vbds[i];
            found = true;
        }
    free(vifs);
    free(vbds);
    return found ? ret : NULL;
}

/*
 * With a cache, a scan reads the files it opened before: their names may
 * change (here the statistics directory moves away), the values written
 * over the old ones are what the next scan reports.  A scan that opens
 * each file by its path finds no counters and leaves the vbd out.
 */
static void test_kept_open(void **state)
{
    struct backend_devices_cache cache;
    struct xenstats_vbd vbd;
    char table[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
    struct backend_tree tree = {.root = root, .net_dev = table};

    (void)state;
    memcpy(root + strlen(root) - 6, "XXXXXX", 6);
    assert_non_null(mkdtemp(root));
    snprintf(table, sizeof(table), "%s/net_dev", root);
    backend_devices_cache_init(&cache);
    vbd_tree("vbd-7-51712");
    assert_non_null(scan_vbd(&tree, &cache, 7, 51712, &vbd));
    assert_true(vbd.rd_req == 11 && vbd.wr_sect == 16);
    path_of(from, sizeof(from), "bus/xen-backend/devices/vbd-7-51712/statistics");
    path_of(to, sizeof(to), "bus/xen-backend/devices/vbd-7-51712/moved");
    assert_int_equal(rename(from, to), 0);
    put("bus/xen-backend/devices/vbd-7-51712/moved", "rd_req", "4242\n");
    put("bus/xen-backend/devices/vbd-7-51712/moved", "wr_sect", "99\n");
    assert_non_null(scan_vbd(&tree, &cache, 7, 51712, &vbd));
    assert_true(vbd.rd_req == 4242 && vbd.wr_sect == 99 && vbd.oo_req == 10);
    backend_devices_cache_fini(&cache);
    assert_int_equal(remove_all(), 0);
}

/*
 * The descriptors follow the devices: one removed and added again under
 * its name is read from its new files; one removed lets its descriptors
 * go; beyond the budget a device is read by path; the cache's count is
 * the process's.
 */
static void test_follows_devices(void **state)
{
    struct backend_devices_cache cache;
    struct xenstats_vbd vbd;
    char table[PATH_MAX], path[PATH_MAX], grave[PATH_MAX];
    struct backend_tree tree = {.root = root, .net_dev = table};
    int before = open_fds();

    (void)state;
    memcpy(root + strlen(root) - 6, "XXXXXX", 6);
    assert_non_null(mkdtemp(root));
    snprintf(table, sizeof(table), "%s/net_dev", root);
    backend_devices_cache_init(&cache);
    vbd_tree("vbd-1-1");
    vbd_tree("vbd-2-1");
    assert_non_null(scan_vbd(&tree, &cache, 1, 1, &vbd));
    assert_int_equal(cache.nr_fds, 2 * BACKEND_HELD_MAX);
    assert_int_equal(open_fds(), before + 2 * BACKEND_HELD_MAX);
    assert_int_equal(cache.opens, 2);

    /* replaced under its name: the old files stay alive (moved aside
     * here, so that their inode numbers are not reused) with old values */
    path_of(path, sizeof(path), "bus/xen-backend/devices/vbd-1-1");
    path_of(grave, sizeof(grave), "grave");
    assert_int_equal(rename(path, grave), 0);
    vbd_tree("vbd-1-1");
    put("bus/xen-backend/devices/vbd-1-1/statistics", "rd_req", "777\n");
    assert_non_null(scan_vbd(&tree, &cache, 1, 1, &vbd));
    assert_int_equal(vbd.rd_req, 777);
    assert_int_equal(cache.opens, 3);
    assert_int_equal(cache.nr_fds, 2 * BACKEND_HELD_MAX);
    assert_int_equal(open_fds(), before + 2 * BACKEND_HELD_MAX);

    /* unchanged: nothing opened again */
    assert_non_null(scan_vbd(&tree, &cache, 2, 1, &vbd));
    assert_int_equal(cache.opens, 3);

    /* removed: its descriptors go */
    path_of(path, sizeof(path), "bus/xen-backend/devices/vbd-2-1");
    path_of(grave, sizeof(grave), "grave2");
    assert_int_equal(rename(path, grave), 0);
    assert_null(scan_vbd(&tree, &cache, 2, 1, &vbd));
    assert_int_equal(cache.nr_fds, BACKEND_HELD_MAX);
    assert_int_equal(open_fds(), before + BACKEND_HELD_MAX);

    /* a budget of one device: the second is read by path, both right */
    assert_int_equal(rename(grave, path), 0);
    put("bus/xen-backend/devices/vbd-2-1/statistics", "wr_req", "55\n");
    cache.max_fds = BACKEND_HELD_MAX;
    assert_non_null(scan_vbd(&tree, &cache, 2, 1, &vbd));
    assert_int_equal(vbd.wr_req, 55);
    assert_non_null(scan_vbd(&tree, &cache, 1, 1, &vbd));
    assert_int_equal(vbd.rd_req, 777);
    assert_int_equal(cache.nr_fds, BACKEND_HELD_MAX);

    /* a malformed counter: listed without figures for the round (xentop's "-"), its files still held */
    cache.max_fds = 0;
    put("bus/xen-backend/devices/vbd-1-1/statistics", "rd_req", "12x\n");
    assert_non_null(scan_vbd(&tree, &cache, 1, 1, &vbd));
    assert_true(vbd.unreadable);
    assert_int_equal(vbd.rd_req, 0);
    put("bus/xen-backend/devices/vbd-1-1/statistics", "rd_req", "778\n");
    assert_non_null(scan_vbd(&tree, &cache, 1, 1, &vbd));
    assert_int_equal(vbd.rd_req, 778);

    backend_devices_cache_fini(&cache);
    assert_int_equal(open_fds(), before);
    assert_int_equal(remove_all(), 0);
}

/* The budget: three quarters of the soft limit, at most 1024 kept back. */
static void test_fd_budget(void **state)
{
    struct rlimit old, rl;

    (void)state;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    rl = old;
    rl.rlim_cur = 1024 < old.rlim_max ? 1024 : old.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_int_equal(backend_devices_fd_budget(), rl.rlim_cur - rl.rlim_cur / 4);
    if (old.rlim_max >= 65536) {
        rl.rlim_cur = 65536;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
        assert_int_equal(backend_devices_fd_budget(), 65536 - 1024);
    }
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static struct xenstats_vif vif_of(uint32_t domid, uint32_t devid)
{
    struct xenstats_vif v = {.domid = domid, .devid = devid};

    return v;
}

/* The table's lines as the kernel prints them, and each way one can be wrong. */
static void test_net_dev(void **state)
{
    static const char table[] =
        NET_DEV_HEADER "    lo:    1234      10    0    0    0     0          0         0     1234      10    0    0    0     0       0          0\n"
        /* a counter wider than its column touches the colon */
        "vif1.0:123456789012 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n"
        " vif2.0:       1       2    3    4    0     0          0         0        5       6    7    8    0     0       0          0\n"
        "vif2.0:9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9\n"            /* a second line: the first holds */
        "vif3.0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"        /* fifteen */
        "vif3.1:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"  /* seventeen */
        "vif3.2:1 2 3 4 5 6 7 8 9\t10 11 12 13 14 15 16\n"   /* a tab */
        "vif3.3:1 2 3 -4 5 6 7 8 9 10 11 12 13 14 15 16\n"    /* a sign */
        "vif3.4:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 18446744073709551616\n" /* too big */
        "vif03.5:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"    /* a leading zero */
        "vif3.6 :1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"    /* a blank in the name */
        "vif4.0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 18446744073709551615"; /* no newline at the end */
    struct xenstats_vif vifs[] = {vif_of(1, 0), vif_of(2, 0), vif_of(3, 0), vif_of(3, 1), vif_of(3, 2),
                                  vif_of(3, 3), vif_of(3, 4), vif_of(3, 5), vif_of(3, 6), vif_of(4, 0),
                                  vif_of(5, 0)};
    bool filled[(sizeof(vifs) / sizeof(vifs[0]))];

    (void)state;
    assert_int_equal(backend_net_dev_parse(table, strlen(table), vifs, (sizeof(vifs) / sizeof(vifs[0])), filled), 3);
    assert_true(filled[0] && filled[1] && filled[9]);
    for (size_t i = 2; i < 9; i++)
        assert_false(filled[i]);
    assert_false(filled[10]); /* no line at all */
    assert_true(vifs[0].rx_bytes == 123456789012ULL && vifs[0].rx_packets == 4 && vifs[0].rx_errors == 5 &&
                vifs[0].rx_dropped == 6 && vifs[0].tx_bytes == 11 && vifs[0].tx_packets == 12 &&
                vifs[0].tx_errors == 13 && vifs[0].tx_dropped == 14);
    assert_true(vifs[1].rx_bytes == 1 && vifs[1].rx_dropped == 4 && vifs[1].tx_bytes == 5 &&
                vifs[1].tx_dropped == 8);
    assert_true(vifs[9].tx_bytes == 9 && vifs[9].tx_packets == 10);
    /* a table cut anywhere never reads past its end */
    for (size_t n = 0; n < strlen(table); n++)
        backend_net_dev_parse(table, n, vifs, (sizeof(vifs) / sizeof(vifs[0])), filled);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_accepts), cmocka_unit_test(test_counter_refuses),
        cmocka_unit_test(test_device_name),     cmocka_unit_test(test_vbd_name),
        cmocka_unit_test(test_scan),            cmocka_unit_test(test_kept_open),
        cmocka_unit_test(test_follows_devices), cmocka_unit_test(test_fd_budget),            cmocka_unit_test(test_net_dev),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
