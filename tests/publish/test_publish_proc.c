/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The /proc parsers of `xenstats publish` against fixture files, malformed,
 * truncated and oversized input.  Links lib/guest; procfs_private.h
 * declares the helpers it calls directly.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/guest_stats.h"
#include "guest/procfs_private.h"
#include "guest/text.h"
#include "util/util.h"

static char fixtures[4096];

static char *fixture(const char *name, size_t *ret_len)
{
    char path[4200], *text = NULL;

    snprintf(path, sizeof(path), "%s/%s", fixtures, name);
    assert_int_equal(read_small_file(path, 1 << 20, &text, ret_len), 0);
    return text;
}

static uint64_t u64_of(const struct guest_stats *list, const char *name)
{
    const struct guest_stat *st = guest_stats_find(list, name, 0);

    if (!st)
        fail_msg("no statistic '%s'", name);
    assert_int_equal(st->type, GUEST_STAT_U64);
    return st->value.u64;
}

static double double_of(const struct guest_stats *list, const char *name)
{
    const struct guest_stat *st = guest_stats_find(list, name, 0);

    if (!st)
        fail_msg("no statistic '%s'", name);
    assert_int_equal(st->type, GUEST_STAT_DOUBLE);
    return st->value.dbl;
}

/* Seconds made of ticks: the nearest double, or next to it. */
static bool near(double got, double want)
{
    return got - want < 1e-9 && want - got < 1e-9;
}

static void test_meminfo(void **state)
{
    struct guest_stats list;
    size_t len;
    char *text = fixture("proc/meminfo", &len);

    (void)state;
    guest_stats_init(&list);
    assert_int_equal(guest_parse_meminfo(text, len, &list), 0);
    assert_int_equal(list.count, 51);
    assert_int_equal(list.dropped, 0);
    assert_true(u64_of(&list, "mem_total_bytes") == 2029876ULL * 1024);
    assert_true(u64_of(&list, "mem_free_bytes") == 812344ULL * 1024);
    assert_true(u64_of(&list, "mem_available_bytes") == 1534120ULL * 1024);
    assert_true(u64_of(&list, "buffers_bytes") == 40212ULL * 1024);
    assert_true(u64_of(&list, "cached_bytes") == 705800ULL * 1024);
    assert_true(u64_of(&list, "swap_total_bytes") == 1048572ULL * 1024);
    assert_true(u64_of(&list, "swap_free_bytes") == 1048060ULL * 1024);
    assert_true(u64_of(&list, "active_anon_bytes") == 260104ULL * 1024);
    assert_true(u64_of(&list, "inactive_file_bytes") == 497804ULL * 1024);
    assert_true(u64_of(&list, "slab_reclaimable_bytes") == 61120ULL * 1024);
    assert_true(u64_of(&list, "k_reclaimable_bytes") == 61120ULL * 1024);
    assert_true(u64_of(&list, "committed_as_bytes") == 962104ULL * 1024);
    assert_true(u64_of(&list, "nfs_unstable_bytes") == 0);
    assert_true(u64_of(&list, "vmalloc_total_bytes") == 34359738367ULL * 1024);
    assert_true(u64_of(&list, "direct_map2m_bytes") == 1976320ULL * 1024);
    assert_true(u64_of(&list, "hardware_corrupted_bytes") == 0);
    assert_true(u64_of(&list, "hugepagesize_bytes") == 2048ULL * 1024);
    /* Counts, not kB: no unit suffix, no conversion; a gauge, not "_total". */
    assert_true(u64_of(&list, "huge_pages") == 0);
    assert_null(guest_stats_find(&list, "huge_pages_total", 0));
    assert_null(guest_stats_find(&list, "huge_pages_bytes", 0));
    assert_non_null(guest_stats_find(&list, "slab_unreclaimable_bytes", 0));
    /* The order of the file is kept, so hints hit. */
    assert_string_equal(list.stat[0].name, "mem_total_bytes");
    assert_ptr_equal(guest_stats_find(&list, "cached_bytes", 4), &list.stat[4]);
    free(text);
    guest_stats_free(&list);
}

static void test_meminfo_names(void **state)
{
    static const struct {
        const char *key, *name;
    } cases[] = {
        {"MemTotal", "mem"}, /* as a count; in kB it is mem_total_bytes */
        {"SReclaimable", "slab_reclaimable"}, {"Active(anon)", "active_anon"},
        {"HugePages_Total", "huge_pages"}, {"SecPageTables", "secondary_page_tables"},
        {"HugePages_Free", "huge_pages_free"}, {"DirectMap1G", "direct_map1g"}, {"Committed_AS", "committed_as"},
        {"NFS_Unstable", "nfs_unstable"}, {"Zswapped", "zswapped"}, {"ShmemPmdMapped", "shmem_pmd_mapped"},
        {"A", "a"}, {"x_", "x"},
    };
    char out[GUEST_NAME_MAX + 1];
    size_t i;

    (void)state;
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        assert_true(meminfo_name(cases[i].key, strlen(cases[i].key), "", out, sizeof(out)));
        assert_string_equal(out, cases[i].name);
    }
    assert_true(meminfo_name("MemTotal", 8, "_bytes", out, sizeof(out)));
    assert_string_equal(out, "mem_total_bytes");
    assert_false(meminfo_name("", 0, "", out, sizeof(out)));
    assert_false(meminfo_name("(", 1, "", out, sizeof(out)));
    assert_false(meminfo_name("a b", 3, "", out, sizeof(out)));
    assert_false(meminfo_name("a-b", 3, "", out, sizeof(out)));
    /* 57 characters + "_bytes" = 63: one too many. */
    assert_false(meminfo_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 57, "_bytes", out, sizeof(out)));
    assert_true(meminfo_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 56, "_bytes", out, sizeof(out)));
    assert_int_equal(strlen(out), 62);
}

static void test_meminfo_malformed(void **state)
{
    struct guest_stats list;
    size_t len;
    char *text = fixture("meminfo-malformed.txt", &len);

    (void)state;
    guest_stats_init(&list);
    assert_int_equal(guest_parse_meminfo(text, len, &list), 0);
    assert_int_equal(list.count, 4);
    assert_int_equal(list.dropped, 10);
    assert_true(u64_of(&list, "mem_total_bytes") == 2029876ULL * 1024); /* the first of two wins */
    assert_true(u64_of(&list, "swap_free_bytes") == 1048060ULL * 1024);
    assert_true(u64_of(&list, "huge_bytes") == UINT64_MAX); /* saturated */
    free(text);

    text = fixture("meminfo-truncated.txt", &len);
    assert_int_equal(guest_parse_meminfo(text, len, &list), 0);
    assert_int_equal(list.count, 2);
    assert_int_equal(list.dropped, 1);
    free(text);

    text = fixture("meminfo-nul.bin", &len);
    assert_int_equal(guest_parse_meminfo(text, len, &list), 0);
    assert_int_equal(list.count, 2);
    assert_int_equal(list.dropped, 2);
    assert_true(u64_of(&list, "cached_bytes") == 8 * 1024);
    free(text);

    assert_int_equal(guest_parse_meminfo("", 0, &list), -EBADMSG);
    assert_int_equal(list.count, 0);
    assert_int_equal(guest_parse_meminfo("garbage\n\x01\x02\n", 11, &list), -EBADMSG);
    /* The length bounds the scan: the NUL-less tail is never read. */
    assert_int_equal(guest_parse_meminfo("MemFree: 1 kB\nMemTotal: 2 kB", 14, &list), 0);
    assert_int_equal(list.count, 1);
    guest_stats_free(&list);
}

static void test_meminfo_huge(void **state)
{
    struct guest_stats list;
    size_t cap = 4u << 20, len = 0;
    char *text = malloc(cap);
    unsigned int i;

    (void)state;
    assert_non_null(text);
    /* Far more distinct keys than a list holds: bounded, the rest counted. */
    for (i = 0; len + 64 < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "Key%u: %u kB\n", i, i);
    guest_stats_init(&list);
    assert_int_equal(guest_parse_meminfo(text, len, &list), 0);
    assert_int_equal(list.count, GUEST_STATS_MAX);
    assert_int_equal(list.dropped, i - GUEST_STATS_MAX);
    assert_int_equal(list.capacity, GUEST_STATS_MAX);

    /* One line of megabytes without a newline. */
    memset(text, '7', cap);
    assert_int_equal(guest_parse_meminfo(text, cap, &list), -EBADMSG);
    assert_int_equal(list.dropped, 1);
    memcpy(text, "Long:", 5);
    assert_int_equal(guest_parse_meminfo(text, cap, &list), -EBADMSG);
    free(text);
    guest_stats_free(&list);
}

static void test_cpu(void **state)
{
    struct guest_stats list;
    size_t len;
    char *text = fixture("proc/stat", &len);

    (void)state;
    guest_stats_init(&list);
    assert_int_equal(guest_parse_cpu(text, len, 100, &list), 0);
    assert_int_equal(list.count, 18);
    assert_int_equal(list.dropped, 0);
    assert_true(near(double_of(&list, "user_seconds_total"), 101.32));
    assert_true(near(double_of(&list, "nice_seconds_total"), 0.52));
    assert_true(near(double_of(&list, "system_seconds_total"), 44.1));
    assert_true(near(double_of(&list, "idle_seconds_total"), 8716.35));
    assert_true(near(double_of(&list, "iowait_seconds_total"), 12.03));
    assert_true(near(double_of(&list, "steal_seconds_total"), 0.97));
    assert_true(near(double_of(&list, "guest_nice_seconds_total"), 0));
    assert_true(u64_of(&list, "interrupts_total") == 1452033);
    assert_true(u64_of(&list, "context_switches_total") == 2873311);
    assert_true(u64_of(&list, "boot_time_seconds") == 1764748800);
    assert_true(u64_of(&list, "forks_total") == 12044);
    assert_true(u64_of(&list, "procs_running") == 2);
    assert_true(u64_of(&list, "procs_blocked") == 1);
    assert_true(u64_of(&list, "softirqs_total") == 884312);
    assert_true(u64_of(&list, "cpus") == 2);
    /* Another USER_HZ: 10132 ticks of 1/250 s. */
    assert_int_equal(guest_parse_cpu(text, len, 250, &list), 0);
    assert_true(near(double_of(&list, "user_seconds_total"), 40.528));
    assert_int_equal(guest_parse_cpu(text, len, 0, &list), -EINVAL);
    free(text);
    guest_stats_free(&list);
}

static void test_cpu_malformed(void **state)
{
    struct guest_stats list;
    size_t len;
    char *text = fixture("stat-old.txt", &len);

    (void)state;
    guest_stats_init(&list);
    assert_int_equal(guest_parse_cpu(text, len, 100, &list), 0);
    assert_int_equal(list.count, 6);
    assert_true(near(double_of(&list, "idle_seconds_total"), 10));
    assert_null(guest_stats_find(&list, "iowait_seconds_total", 0));
    free(text);

    text = fixture("stat-malformed.txt", &len);
    assert_int_equal(guest_parse_cpu(text, len, 100, &list), 0);
    assert_int_equal(list.count, 11);
    assert_int_equal(list.dropped, 6);
    assert_true(near(double_of(&list, "user_seconds_total"), 1));
    assert_true(near(double_of(&list, "guest_nice_seconds_total"), 10));
    assert_true(u64_of(&list, "procs_running") == 3);
    assert_null(guest_stats_find(&list, "context_switches_total", 0));
    free(text);

    assert_int_equal(guest_parse_cpu("", 0, 100, &list), -EBADMSG);
    assert_int_equal(guest_parse_cpu("cpu\n", 4, 100, &list), -EBADMSG);
    assert_true(ticks_to_seconds(UINT64_MAX, 100) == (double)(UINT64_MAX / 100) + 0.15);
    assert_true(near(ticks_to_seconds(12345, 100), 123.45));
    assert_true(ticks_to_seconds(1, 3) < ticks_to_seconds(2, 3));
    guest_stats_free(&list);
}

static void test_load(void **state)
{
    struct guest_stats list;
    size_t la_len, up_len;
    char *la = fixture("proc/loadavg", &la_len), *up = fixture("proc/uptime", &up_len);

    (void)state;
    guest_stats_init(&list);
    assert_int_equal(guest_parse_load(la, la_len, up, up_len, &list), 0);
    assert_int_equal(list.count, 7);
    assert_true(double_of(&list, "load1") == 0.52);
    assert_true(double_of(&list, "load5") == 0.31);
    assert_true(double_of(&list, "load15") == 0.17);
    assert_true(u64_of(&list, "tasks_running") == 2);
    assert_true(u64_of(&list, "tasks") == 187);
    assert_true(double_of(&list, "uptime_seconds") == 8867.53);
    assert_true(double_of(&list, "idle_seconds_total") == 17388.04);

    assert_int_equal(guest_parse_load(NULL, 0, up, up_len, &list), 0);
    assert_int_equal(list.count, 2);
    assert_int_equal(guest_parse_load(la, la_len, NULL, 0, &list), 0);
    assert_int_equal(list.count, 5);
    /* Only the digits-and-a-dot form /proc prints is accepted. */
    assert_int_equal(guest_parse_load("1e5 1 1 1/2 3\n", 14, "nan 1\n", 6, &list), -EBADMSG);
    assert_int_equal(list.dropped, 2);
    assert_int_equal(guest_parse_load("1 1 1 1-2 3\n", 12, "1. 1\n", 5, &list), -EBADMSG);
    assert_int_equal(guest_parse_load("1 1 1\n", 6, "12\n", 3, &list), -EBADMSG);
    assert_int_equal(guest_parse_load("0.1 0.2 0.3 /7 9", 16, "", 0, &list), -EBADMSG);
    assert_int_equal(guest_parse_load(NULL, 0, NULL, 0, &list), -EBADMSG);
    free(la);
    free(up);
    guest_stats_free(&list);
}

static void test_netdev(void **state)
{
    struct guest_devices list;
    const struct guest_device *eth0;
    size_t len;
    char *text = fixture("proc/net/dev", &len);

    (void)state;
    guest_devices_init(&list);
    assert_int_equal(guest_parse_netdev(text, len, &list), 0);
    assert_int_equal(list.count, 3);
    assert_int_equal(list.dropped, 0);
    assert_string_equal(list.dev[0].name, "lo");
    assert_string_equal(list.dev[2].name, "vif-with-a-long-name0");
    eth0 = guest_devices_find(&list, "eth0", 1);
    assert_ptr_equal(eth0, &list.dev[1]);
    assert_int_equal(eth0->stats.count, 16);
    assert_true(u64_of(&eth0->stats, "rx_bytes_total") == 187345112);
    assert_true(u64_of(&eth0->stats, "rx_packets_total") == 190211);
    assert_true(u64_of(&eth0->stats, "rx_errors_total") == 2);
    assert_true(u64_of(&eth0->stats, "rx_dropped_total") == 7);
    assert_true(u64_of(&eth0->stats, "rx_frame_errors_total") == 1);
    assert_true(u64_of(&eth0->stats, "multicast_total") == 33);
    assert_true(u64_of(&eth0->stats, "tx_bytes_total") == 9812304);
    assert_true(u64_of(&eth0->stats, "tx_packets_total") == 80113);
    assert_true(u64_of(&eth0->stats, "collisions_total") == 3);
    assert_true(u64_of(&list.dev[2].stats, "tx_compressed_total") == 16);
    free(text);

    text = fixture("net-dev-malformed.txt", &len);
    assert_int_equal(guest_parse_netdev(text, len, &list), 0);
    assert_int_equal(list.count, 1);
    assert_int_equal(list.dropped, 7);
    assert_string_equal(list.dev[0].name, "eth3");
    assert_true(u64_of(&list.dev[0].stats, "tx_compressed_total") == 16); /* the extra column is ignored */
    free(text);

    /* Only headers: no interface, which is not an error. */
    assert_int_equal(guest_parse_netdev("a|b\nc|d\n", 8, &list), 0);
    assert_int_equal(list.count, 0);
    assert_int_equal(guest_parse_netdev("x: 1\n", 5, &list), -EBADMSG);
    /* A NUL in a name: refused, never truncated into another name. */
    assert_int_equal(guest_parse_netdev("e\0h: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", 45, &list), -EBADMSG);
    guest_devices_free(&list);
}

static void test_netdev_many(void **state)
{
    struct guest_devices list;
    size_t cap = 2u << 20, len = 0;
    char *text = malloc(cap);
    unsigned int i;

    (void)state;
    assert_non_null(text);
    for (i = 0; len + 128 < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "if%u: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 %u\n", i, i);
    guest_devices_init(&list);
    assert_int_equal(guest_parse_netdev(text, len, &list), 0);
    assert_int_equal(list.count, GUEST_DEVICES_MAX);
    assert_int_equal(list.dropped, i - GUEST_DEVICES_MAX);
    /* Reuse keeps the per-device memory: a second parse must not leak. */
    assert_int_equal(guest_parse_netdev(text, len, &list), 0);
    assert_int_equal(list.count, GUEST_DEVICES_MAX);
    free(text);
    guest_devices_free(&list);
}

static void test_diskstats(void **state)
{
    static const char *const want[] = {"xvda", "xvdb", "nvme0n1", "dm-0", "xvdc3"};
    struct guest_devices list;
    const struct guest_device *d;
    size_t len, i;
    char *text = fixture("proc/diskstats", &len);

    (void)state;
    guest_devices_init(&list);
    assert_int_equal(guest_parse_diskstats(text, len, false, &list), 0);
    assert_int_equal(list.count, ARRAY_SIZE(want));
    for (i = 0; i < ARRAY_SIZE(want); i++)
        assert_string_equal(list.dev[i].name, want[i]);
    d = &list.dev[0];
    assert_int_equal(d->stats.count, 17);
    assert_true(u64_of(&d->stats, "reads_completed_total") == 20812);
    assert_true(u64_of(&d->stats, "read_bytes_total") == 1581306ULL * 512);
    assert_true(u64_of(&d->stats, "written_bytes_total") == 1212040ULL * 512);
    assert_true(near(double_of(&d->stats, "write_time_seconds_total"), 41.02));
    assert_true(u64_of(&d->stats, "io_in_progress") == 0);
    assert_true(near(double_of(&d->stats, "io_time_seconds_total"), 35.512));
    assert_true(u64_of(&d->stats, "flushes_completed_total") == 1804);
    assert_true(near(double_of(&d->stats, "flush_time_seconds_total"), 1.2));
    assert_int_equal(list.dev[1].stats.count, 11);
    assert_null(guest_stats_find(&list.dev[1].stats, "discards_completed_total", 0));
    assert_int_equal(list.dev[2].stats.count, 15);
    assert_true(u64_of(&list.dev[2].stats, "io_in_progress") == 1);
    assert_true(u64_of(&list.dev[2].stats, "discarded_bytes_total") == 80 * 512);

    assert_int_equal(guest_parse_diskstats(text, len, true, &list), 0);
    assert_int_equal(list.count, 9);
    assert_string_equal(list.dev[1].name, "xvda1");
    free(text);

    text = fixture("diskstats-malformed.txt", &len);
    assert_int_equal(guest_parse_diskstats(text, len, false, &list), 0);
    assert_int_equal(list.count, 2);
    assert_int_equal(list.dropped, 6);
    assert_string_equal(list.dev[0].name, "xvdd");
    assert_string_equal(list.dev[1].name, "xvdg");
    assert_true(u64_of(&list.dev[1].stats, "read_bytes_total") == UINT64_MAX);
    free(text);

    assert_int_equal(guest_parse_diskstats("", 0, false, &list), 0);
    assert_int_equal(list.count, 0);
    assert_int_equal(guest_parse_diskstats("1 2\n", 4, false, &list), -EBADMSG);
    guest_devices_free(&list);
}

static void test_partitions(void **state)
{
    static const char text[] = "1 0 sda 1 1 1 1 1 1 1 1 1 1 1\n"
                               "1 1 sda1 1 1 1 1 1 1 1 1 1 1 1\n"
                               "1 2 sda10 1 1 1 1 1 1 1 1 1 1 1\n"
                               "1 3 mmcblk0p2 1 1 1 1 1 1 1 1 1 1 1\n" /* listed before its disk */
                               "1 4 mmcblk0 1 1 1 1 1 1 1 1 1 1 1\n"
                               "1 5 sdp1 1 1 1 1 1 1 1 1 1 1 1\n"     /* "sdp" is no disk here */
                               "1 6 md127 1 1 1 1 1 1 1 1 1 1 1\n"
                               "1 7 zram0 1 1 1 1 1 1 1 1 1 1 1\n"
                               "1 8 ramdisk 1 1 1 1 1 1 1 1 1 1 1\n";
    static const char *const want[] = {"sda", "mmcblk0", "sdp1", "md127", "zram0"};
    struct guest_devices list;
    size_t i;

    (void)state;
    guest_devices_init(&list);
    assert_int_equal(guest_parse_diskstats(text, sizeof(text) - 1, false, &list), 0);
    assert_int_equal(list.count, ARRAY_SIZE(want));
    for (i = 0; i < ARRAY_SIZE(want); i++)
        assert_string_equal(list.dev[i].name, want[i]);
    guest_devices_free(&list);
}

static void test_read_files(void **state)
{
    char root[4200], tmp[] = "/tmp/xenstats-publish-test.XXXXXX", path[4300];
    struct guest_stats stats;
    struct guest_devices devs;
    FILE *f;
    size_t i;

    (void)state;
    guest_stats_init(&stats);
    guest_devices_init(&devs);
    snprintf(root, sizeof(root), "%s/proc", fixtures);
    assert_int_equal(guest_read_stats(root, GUEST_SOURCE_MEMORY, &stats), 0);
    assert_int_equal(stats.count, 51);
    assert_int_equal(guest_read_stats(root, GUEST_SOURCE_CPU, &stats), 0);
    assert_non_null(guest_stats_find(&stats, "context_switches_total", 0));
    assert_int_equal(guest_read_stats(root, GUEST_SOURCE_LOAD, &stats), 0);
    assert_int_equal(stats.count, 7);
    assert_int_equal(guest_read_devices(root, GUEST_SOURCE_NET, false, &devs), 0);
    assert_int_equal(devs.count, 3);
    assert_int_equal(guest_read_devices(root, GUEST_SOURCE_DISK, false, &devs), 0);
    assert_int_equal(devs.count, 5);
    assert_int_equal(guest_read_devices(root, GUEST_SOURCE_DISK, true, &devs), 0);
    assert_int_equal(devs.count, 9);
    assert_int_equal(guest_read_stats(root, GUEST_SOURCE_NET, &stats), -EINVAL);
    assert_int_equal(guest_read_devices(root, GUEST_SOURCE_MEMORY, false, &devs), -EINVAL);

    assert_int_equal(guest_read_stats("/nonexistent-xenstats", GUEST_SOURCE_MEMORY, &stats), -ENOENT);
    assert_int_equal(errno, ENOENT);

    /* A file beyond the bound is refused whole, not read in part. */
    assert_non_null(mkdtemp(tmp));
    snprintf(path, sizeof(path), "%s/meminfo", tmp);
    f = fopen(path, "w");
    assert_non_null(f);
    for (i = 0; i < GUEST_PROC_FILE_MAX / 16 + 1; i++)
        fputs("MemFree: 1 kB  \n", f);
    fclose(f);
    assert_int_equal(guest_read_stats(tmp, GUEST_SOURCE_MEMORY, &stats), -EFBIG);
    unlink(path);
    rmdir(tmp);

    /* The real files of this machine parse. */
    if (access("/proc/meminfo", R_OK) == 0) {
        assert_int_equal(guest_read_stats("/proc", GUEST_SOURCE_MEMORY, &stats), 0);
        assert_true(u64_of(&stats, "mem_total_bytes") > 0);
        assert_int_equal(guest_read_stats("/proc", GUEST_SOURCE_CPU, &stats), 0);
        assert_int_equal(guest_read_stats("/proc", GUEST_SOURCE_LOAD, &stats), 0);
        assert_int_equal(guest_read_devices("/proc", GUEST_SOURCE_NET, false, &devs), 0);
        assert_int_equal(devs.dropped, 0);
    }
    guest_stats_free(&stats);
    guest_devices_free(&devs);
}

static void test_list_api(void **state)
{
    struct guest_stats a, b;
    char name[80];
    unsigned int i;

    (void)state;
    guest_stats_init(&a);
    guest_stats_init(&b);
    assert_int_equal(guest_stats_add_u64(&a, "", 1), -EINVAL);
    assert_int_equal(guest_stats_add_u64(&a, "has space", 1), -EINVAL);
    assert_int_equal(guest_stats_add_u64(&a, "caf\xc3\xa9", 1), -EINVAL);
    memset(name, 'n', sizeof(name));
    name[63] = '\0';
    assert_int_equal(guest_stats_add_u64(&a, name, 1), -EINVAL);
    name[62] = '\0';
    assert_int_equal(guest_stats_add_u64(&a, name, 1), 0);
    assert_int_equal(guest_stats_add_s64(&a, name, 1), -EEXIST);
    assert_int_equal(guest_stats_add_ascii(&a, "s", "tab\there"), -EINVAL);
    memset(name, 'v', sizeof(name));
    name[64] = '\0';
    assert_int_equal(guest_stats_add_ascii(&a, "s", name), -EINVAL);
    name[63] = '\0';
    assert_int_equal(guest_stats_add_ascii(&a, "s", name), 0);
    assert_int_equal(guest_stats_add_double(&a, "d", -0.5), 0);
    assert_int_equal(a.count, 3);

    assert_int_equal(guest_stats_add_u64(&b, a.stat[0].name, 9), 0);
    assert_false(guest_stats_same_layout(&a, &b));
    assert_int_equal(guest_stats_add_ascii(&b, "s", "other value"), 0);
    assert_int_equal(guest_stats_add_double(&b, "d", 7), 0);
    assert_true(guest_stats_same_layout(&a, &b));
    guest_stats_reset(&b);
    assert_int_equal(guest_stats_add_u64(&b, a.stat[0].name, 9), 0);
    assert_int_equal(guest_stats_add_u64(&b, "s", 0), 0);
    assert_int_equal(guest_stats_add_double(&b, "d", 7), 0);
    assert_false(guest_stats_same_layout(&a, &b));

    guest_stats_reset(&a);
    for (i = 0; i < GUEST_STATS_MAX; i++) {
        snprintf(name, sizeof(name), "s%u", i);
        assert_int_equal(guest_stats_add_u64(&a, name, i), 0);
    }
    assert_int_equal(guest_stats_add_u64(&a, "one_more", 1), -E2BIG);
    assert_int_equal(errno, E2BIG);
    guest_stats_free(&a);
    guest_stats_free(&b);
    guest_stats_free(NULL);
    guest_devices_free(NULL);
}

int main(void)
{
    const char *root = getenv("XENSTATS_SOURCE_ROOT");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meminfo),       cmocka_unit_test(test_meminfo_names),
        cmocka_unit_test(test_meminfo_malformed), cmocka_unit_test(test_meminfo_huge),
        cmocka_unit_test(test_cpu),           cmocka_unit_test(test_cpu_malformed),
        cmocka_unit_test(test_load),          cmocka_unit_test(test_netdev),
        cmocka_unit_test(test_netdev_many),   cmocka_unit_test(test_diskstats),
        cmocka_unit_test(test_partitions),    cmocka_unit_test(test_read_files),
        cmocka_unit_test(test_list_api),
    };

    snprintf(fixtures, sizeof(fixtures), "%s/tests/publish/fixtures", root ? root : ".");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
