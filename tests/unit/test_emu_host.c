/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The emulated host's domains and scheduler, driven with a synthetic clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <xenstats/vcpu.h>

#include "emu/emu.h"

static char dir[] = "/tmp/xenstats-emu-test-XXXXXX";

static int setup(void **state)
{
    struct emu_host *host = calloc(1, sizeof(*host));

    if (!mkdtemp(dir) || !host)
        return -1;
    if (emu_host_init(host, dir, 2, 10000000, 64ULL << 20) < 0)
        return -1;
    *state = host;
    return 0;
}

static int teardown(void **state)
{
    emu_host_fini(*state);
    free(*state);
    rmdir(dir);
    return 0;
}

static void spec(struct emu_domain_spec *s, const char *text)
{
    char err[256];

    assert_int_equal(emu_domain_spec_parse(text, s, err, sizeof(err)), 0);
}

static void test_spec_parse(void **state)
{
    struct emu_domain_spec s;
    char err[256];

    (void)state;
    spec(&s, "name=web,vcpus=4,workload=cpu,offline=1");
    assert_string_equal(s.name, "web");
    assert_int_equal(s.nr_vcpus, 4);
    assert_int_equal(s.nr_offline, 1);
    assert_int_equal(s.workload, EMU_WORKLOAD_CPU);
    assert_true(s.vcpu_stats);
    spec(&s, "name=db vcpus=2 workload=io-bound vcpu-stats=no");
    assert_int_equal(s.workload, EMU_WORKLOAD_IO);
    assert_false(s.vcpu_stats);

    static const char *const bad[] = {
        "vcpus=2",                     /* no name */
        "name=a,vcpus=0",              /* zero vCPUs */
        "name=a,vcpus=5000",           /* too many */
        "name=a,workload=busy",        /* unknown workload */
        "name=a,vcpus=2,offline=3",    /* more offline than vCPUs */
        "name=a/b",                    /* slash in a name */
        "name=a,colour=blue",          /* unknown key */
        "name",                        /* not key=value */
        "name=a,vcpu-stats=maybe",
        "name=0123456789012345678901234567890123456789012345678901234567890123456789",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(emu_domain_spec_parse(bad[i], &s, err, sizeof(err)), -EINVAL);
        assert_true(strlen(err) > 0);
    }
}

static void test_create_destroy(void **state)
{
    struct emu_host *host = *state;
    struct emu_domain_spec s;
    char path[4096];
    struct stat st;
    int id0, id1, id2;

    spec(&s, "name=Domain-0,vcpus=1");
    id0 = emu_domain_create(host, &s);
    spec(&s, "name=web,vcpus=3,workload=cpu");
    id1 = emu_domain_create(host, &s);
    assert_int_equal(id0, 0);
    assert_int_equal(id1, 1);
    assert_int_equal(emu_domain_create(host, &s), -EEXIST); /* same name */
    snprintf(path, sizeof(path), "%s/domains/1/vcpu-stats", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 4096); /* whole frames */
    spec(&s, "name=stock,vcpu-stats=no");
    id2 = emu_domain_create(host, &s);
    assert_int_equal(id2, 2);
    snprintf(path, sizeof(path), "%s/domains/2/vcpu-stats", dir);
    assert_int_equal(stat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/domains/2/info", dir);
    assert_int_equal(stat(path, &st), 0);

    assert_int_equal(emu_domain_destroy(host, 1), 0);
    assert_int_equal(emu_domain_destroy(host, 1), -ESRCH);
    snprintf(path, sizeof(path), "%s/domains/1", dir);
    assert_int_equal(stat(path, &st), -1);
    assert_null(emu_domain_find(host, 1));
    assert_non_null(emu_domain_find(host, 2));
    /* domids are not reused */
    spec(&s, "name=web");
    assert_int_equal(emu_domain_create(host, &s), 3);
}

/* Drive the scheduler with a synthetic clock and read the records back. */
static void test_scheduler_accounting(void **state)
{
    struct emu_host *host = *state;
    struct emu_domain_spec s;
    struct emu_domain *busy, *idle, *half;
    uint64_t t0, now;
    int i;

    spec(&s, "name=busy,vcpus=2,workload=cpu");
    busy = emu_domain_find(host, (uint32_t)emu_domain_create(host, &s));
    spec(&s, "name=idle,vcpus=2,workload=idle");
    idle = emu_domain_find(host, (uint32_t)emu_domain_create(host, &s));
    spec(&s, "name=half,vcpus=2,workload=io,offline=1");
    half = emu_domain_find(host, (uint32_t)emu_domain_create(host, &s));
    assert_non_null(busy);
    assert_non_null(idle);
    assert_non_null(half);

    t0 = busy->created > half->created ? busy->created : half->created;
    host->last_tick = t0;
    for (i = 1, now = t0; i <= 1000; i++) { /* 10 s of 10 ms ticks */
        now = t0 + (uint64_t)i * 10000000ULL;
        emu_host_tick(host, now);
    }

    struct emu_domain *doms[] = {busy, idle, half};
    double running_share[3];
    for (int d = 0; d < 3; d++) {
        struct xenstats_vcpu_map *map = xenstats_vcpu_map_open_memory(doms[d]->region, doms[d]->region_len);
        uint64_t sum_running = 0, sum_all = 0;

        assert_non_null(map);
        for (uint32_t v = 0; v < doms[d]->spec.nr_vcpus; v++) {
            struct xenstats_vcpu_sample smp;
            uint64_t t[XENSTATS_VCPU_NR_RUNSTATES], total;

            assert_int_equal(xenstats_vcpu_map_snapshot(map, v, &smp), 0);
            for (int c = 0; c < XENSTATS_VCPU_NR_COUNTERS; c++)
                assert_int_equal(xenstats_vcpu_sample_status(&smp, c), XENSTATS_COUNTER_VALID);
            assert_int_equal(xenstats_vcpu_sample_project(&smp, now, t), 0);
            total = t[0] + t[1] + t[2] + t[3];
            /* the four times add up to the vCPU's whole life, exactly */
            assert_true(total == now - doms[d]->created);
            assert_true(xenstats_vcpu_sample_value(&smp, XEN_VCPU_STATS_UPDATE_TIME) <= now);
            if (doms[d] == half && v == 1) {
                assert_true(t[3] == total); /* offline all along */
                assert_int_equal(xenstats_vcpu_sample_value(&smp, XEN_VCPU_STATS_STATE_CHANGES), 0);
            }
            sum_running += t[0];
            sum_all += total;
        }
        running_share[d] = (double)sum_running / (double)sum_all;
        xenstats_vcpu_map_close(map);
    }
    /* 2 pCPUs, demand about 2 + 0.05 + 0.4: the busy domain gets most */
    assert_true(running_share[0] > 0.5);
    assert_true(running_share[1] < 0.1);
    assert_true(running_share[0] > running_share[2]);
    assert_true(running_share[2] > running_share[1]);
}

/*
 * More busy vCPUs than pCPUs: each tick exactly the pCPUs' number run,
 * the least run so far, so that over time every vCPU gets its share
 * (the tick picks them without sorting them all).
 */
static void test_scheduler_overcommit(void **state)
{
    struct emu_host *host = *state;
    struct emu_domain_spec s;
    struct emu_domain *doms[6];
    uint64_t t0 = 0, now = 0, least = UINT64_MAX, most = 0;
    char text[64];
    int i, d;

    for (d = 0; d < 6; d++) {
        snprintf(text, sizeof(text), "name=busy%d,vcpus=4,workload=cpu", d);
        spec(&s, text);
        doms[d] = emu_domain_find(host, (uint32_t)emu_domain_create(host, &s));
        assert_non_null(doms[d]);
        if (doms[d]->created > t0)
            t0 = doms[d]->created;
    }
    host->last_tick = t0;
    for (i = 1; i <= 1200; i++) { /* 12 s of 10 ms ticks */
        uint32_t running = 0;

        now = t0 + (uint64_t)i * 10000000ULL;
        emu_host_tick(host, now);
        /* every domain's, Domain-0's too (its vCPUs wake now and then) */
        for (struct emu_domain *e = host->domains; e; e = e->next)
            for (uint32_t v = 0; v < e->spec.nr_vcpus; v++)
                running += e->vcpus[v].state == XEN_VCPU_STATS_RUNSTATE_RUNNING;
        assert_int_equal(running, 2); /* 2 pCPUs, 24 busy vCPUs that want them */
    }
    for (d = 0; d < 6; d++)
        for (uint32_t v = 0; v < 4; v++) {
            const struct emu_vcpu *c = &doms[d]->vcpus[v];
            uint64_t ran = c->times[XEN_VCPU_STATS_RUNSTATE_RUNNING] +
                           (c->state == XEN_VCPU_STATS_RUNSTATE_RUNNING ? now - c->update_time : 0);

            least = ran < least ? ran : least;
            most = ran > most ? ran : most;
        }
    /* 24 s of pCPU time for 24 vCPUs: each about 1 s, within two ticks */
    assert_true(most - least <= 20000000ULL);
    assert_true(least >= 900000000ULL);
}

static void test_vdev(void **state)
{
    uint32_t devid = 0, disk;
    char name[8];

    (void)state;
    assert_int_equal(emu_vbd_vdev_parse("xvda", &devid), 0);
    assert_int_equal(devid, 202 << 8);
    assert_int_equal(emu_vbd_vdev_parse("xvdp", &devid), 0);
    assert_int_equal(devid, 202 << 8 | 15 << 4);
    assert_int_equal(emu_vbd_vdev_parse("xvdq", &devid), 0); /* the 17th disk: extended */
    assert_int_equal(devid, 1 << 28 | 16 << 8);
    assert_int_equal(emu_vbd_vdev_parse("xvdaa", &devid), 0);
    assert_int_equal(devid, 1 << 28 | 26 << 8);
    assert_int_equal(emu_vbd_vdev_parse("xvdzzz", &devid), 0);
    assert_int_equal(devid, 1 << 28 | 18277 << 8);
    static const char *const bad[] = {"", "xvd", "sda", "xvdA", "xvda1", "xvdaaaa", "xvd-", "hda", "xvd a"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(emu_vbd_vdev_parse(bad[i], &devid), -EINVAL);
    /* names and numbers agree both ways */
    for (disk = 0; disk < 18278; disk++) {
        uint32_t back;

        assert_int_equal(emu_vbd_vdev_name(disk, name), 0);
        assert_int_equal(emu_vbd_vdev_parse(name, &back), 0);
        assert_int_equal(back, disk < 16 ? 202 << 8 | disk << 4 : 1 << 28 | disk << 8);
    }
    assert_int_equal(emu_vbd_vdev_name(18278, name), -ERANGE);
}

static char devdir[] = "/tmp/xenstats-emu-devices-XXXXXX";

static uint64_t read_counter_file(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static uint64_t read_counter_file(const char *fmt, ...)
{
    char path[4096], text[64] = "";
    va_list ap;
    FILE *f;
    int n = snprintf(path, sizeof(path), "%s/sys/", devdir);

    va_start(ap, fmt);
    vsnprintf(path + n, sizeof(path) - (size_t)n, fmt, ap);
    va_end(ap);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    return strtoull(text, NULL, 10);
}

/* Devices at creation and attached later, their tree, and traffic that follows the workload. */
static void test_devices(void **state)
{
    struct emu_host *host = calloc(1, sizeof(*host));
    struct emu_domain_spec s;
    struct emu_domain *io, *cpu;
    struct emu_device *dev;
    char path[4096], err[256];
    struct stat st;
    uint64_t t0;
    int i;

    (void)state;
    assert_non_null(host);
    assert_non_null(mkdtemp(devdir));
    assert_int_equal(emu_host_init(host, devdir, 2, 10000000, 64ULL << 20), 0);
    assert_int_equal(emu_domain_spec_parse("name=a,vifs=65", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(emu_domain_spec_parse("name=a,vbds=xvda:", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(emu_domain_spec_parse("name=a,vbds=xvda:xvda", &s, err, sizeof(err)), -EINVAL);
    spec(&s, "name=a,vbds=3");
    assert_int_equal(s.nr_vbds, 3);
    assert_string_equal(s.vbds[2], "xvdc");
    assert_true(s.traffic);

    spec(&s, "name=Domain-0");
    assert_int_equal(emu_domain_create(host, &s), 0);
    spec(&s, "name=io,vcpus=2,workload=io,vifs=2,vbds=xvda:xvdq");
    io = emu_domain_find(host, (uint32_t)emu_domain_create(host, &s));
    spec(&s, "name=cpu,vcpus=1,workload=cpu,vifs=1,vbds=1");
    cpu = emu_domain_find(host, (uint32_t)emu_domain_create(host, &s));
    assert_non_null(io);
    assert_non_null(cpu);
    assert_int_equal(io->nr_devices, 4);
    snprintf(path, sizeof(path), "%s/sys/bus/xen-backend/devices/vif-1-1", devdir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/sys/bus/xen-backend/devices/vbd-1-268439552/statistics/wr_sect", devdir);
    assert_int_equal(stat(path, &st), 0);
    assert_true(read_counter_file("class/net/vif1.0/statistics/rx_bytes") == 0);

    t0 = io->created > cpu->created ? io->created : cpu->created;
    host->last_tick = t0;
    for (i = 1; i <= 300; i++) /* 3 s */
        emu_host_tick(host, t0 + (uint64_t)i * 10000000ULL);
    dev = emu_device_find(io, EMU_DEVICE_VBD, 202 << 8);
    assert_non_null(dev);
    assert_true(dev->counter[1] + dev->counter[2] > 0); /* rd_req + wr_req */
    /* what the tree shows is at most one showing behind */
    assert_true(read_counter_file("bus/xen-backend/devices/vbd-1-51712/statistics/rd_req") <= dev->counter[1]);
    emu_devices_show(host, io, t0 + 3000000000ULL, true);
    assert_true(read_counter_file("bus/xen-backend/devices/vbd-1-51712/statistics/rd_req") == dev->counter[1]);
    assert_true(read_counter_file("class/net/vif1.1/statistics/tx_packets") ==
                emu_device_find(io, EMU_DEVICE_VIF, 1)->counter[5]);
    assert_true(emu_device_find(io, EMU_DEVICE_VIF, 1)->counter[5] > 0);
    /* a cpu-bound domain never waits for I/O */
    for (i = 0; i < (int)cpu->nr_devices; i++)
        for (int c = 0; c < EMU_DEVICE_COUNTERS; c++)
            assert_true(cpu->devices[i].counter[c] == 0);

    /* set, attach, detach */
    dev = emu_device_find(cpu, EMU_DEVICE_VIF, 0);
    assert_int_equal(emu_device_set(host, cpu, dev, 7, UINT64_MAX), 0);
    assert_true(read_counter_file("class/net/vif2.0/statistics/tx_dropped") == UINT64_MAX);
    assert_int_equal(emu_device_set(host, cpu, emu_device_find(cpu, EMU_DEVICE_VBD, 202 << 8), 7, 1), -EINVAL);
    assert_int_equal(emu_device_attach(host, 2, EMU_DEVICE_VIF, UINT32_MAX, NULL, false), 1);
    assert_int_equal(emu_device_attach(host, 2, EMU_DEVICE_VIF, 1, NULL, false), -EEXIST);
    assert_int_equal(emu_device_attach(host, 2, EMU_DEVICE_VIF, 65536, NULL, false), -EINVAL);
    assert_int_equal(emu_device_attach(host, 2, EMU_DEVICE_VBD, 0, "sda", false), -EINVAL);
    assert_int_equal(emu_device_attach(host, 9, EMU_DEVICE_VIF, 0, NULL, false), -ESRCH);
    assert_int_equal(emu_device_attach(host, 2, EMU_DEVICE_VBD, 0, "xvdb", false), 202 << 8 | 1 << 4);
    snprintf(path, sizeof(path), "%s/sys/class/net/vif2.1/statistics/rx_bytes", devdir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(emu_device_detach(host, 2, EMU_DEVICE_VIF, 1), 0);
    assert_int_equal(emu_device_detach(host, 2, EMU_DEVICE_VIF, 1), -ENODEV);
    assert_int_equal(stat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/sys/bus/xen-backend/devices/vif-2-1", devdir);
    assert_int_equal(stat(path, &st), -1);
    for (i = 2; i < 66; i++)
        assert_int_equal(emu_device_attach(host, 2, EMU_DEVICE_VIF, UINT32_MAX, NULL, false),
                         i - 1 < EMU_MAX_DEVICES ? i - 1 : -ENOSPC);

    /* a destroyed domain takes its tree along */
    assert_int_equal(emu_domain_destroy(host, 1), 0);
    snprintf(path, sizeof(path), "%s/sys/class/net/vif1.0", devdir);
    assert_int_equal(stat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/sys/bus/xen-backend/devices/vbd-1-51712", devdir);
    assert_int_equal(stat(path, &st), -1);
    emu_host_fini(host);
    free(host);
    assert_int_equal(rmdir(devdir), 0); /* nothing left behind */
}

/* A lingering destroy: dying, stopped, then gone when the scheduler's clock passes the linger. */
static void test_dying(void **state)
{
    struct emu_host *host = *state;
    struct emu_domain_spec s;
    struct emu_domain *d;
    uint64_t cpu, free_kib;
    int id, i;

    spec(&s, "name=doomed,vcpus=2,workload=cpu,memory=8M");
    id = emu_domain_create(host, &s);
    assert_true(id > 0);
    d = emu_domain_find(host, (uint32_t)id);
    for (i = 1; i <= 10; i++)
        emu_host_tick(host, host->last_tick + 10000000ULL);
    free_kib = host->free_memory_kib;
    assert_int_equal(emu_domain_kill(host, 0, 1000), -EPERM);
    assert_int_equal(emu_domain_kill(host, 9999, 1000), -ESRCH);
    assert_int_equal(emu_domain_kill(host, (uint32_t)id, EMU_MAX_LINGER_NS + 1), -EINVAL);
    assert_int_equal(emu_domain_kill(host, (uint32_t)id, 500000000ULL), 0);
    assert_true(emu_domain_find(host, (uint32_t)id) == d);
    assert_true(d->dying);
    assert_int_equal(emu_domain_flags(d), XENSTATS_DOMAIN_DYING);
    assert_int_equal(emu_domain_pause(host, (uint32_t)id), -EINVAL);
    assert_int_equal(emu_domain_shutdown(host, (uint32_t)id, XENSTATS_SHUTDOWN_POWEROFF), -EINVAL);
    assert_int_equal(emu_domain_set_target(host, (uint32_t)id, 4096), -EINVAL);
    cpu = emu_domain_cpu_time(d, host->last_tick);
    for (i = 1; i <= 40; i++) /* 400 ms of its 500 */
        emu_host_tick(host, host->last_tick + 10000000ULL);
    d = emu_domain_find(host, (uint32_t)id);
    assert_non_null(d);
    assert_true(emu_domain_cpu_time(d, host->last_tick) == cpu); /* stopped */
    assert_true(host->free_memory_kib == free_kib);              /* still held */
    spec(&s, "name=doomed");
    assert_true(emu_domain_create(host, &s) > id); /* the name is free */
    for (i = 1; i <= 11; i++)
        emu_host_tick(host, host->last_tick + 10000000ULL);
    assert_null(emu_domain_find(host, (uint32_t)id));
    assert_true(host->free_memory_kib == free_kib + 8192 - EMU_DEFAULT_MEMORY_KIB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_parse),
        cmocka_unit_test(test_create_destroy),
        cmocka_unit_test(test_scheduler_accounting),
        cmocka_unit_test(test_scheduler_overcommit),
        cmocka_unit_test(test_vdev),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_dying),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
