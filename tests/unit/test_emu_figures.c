/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hypervisor's figures of the emulated host (domain state, CPU time,
 * memory, UUID; host memory, pCPUs and their idle time), set by the
 * emulator and read back exactly through the public API, on a synthetic
 * clock: across pause/unpause, shutdown and mem-set.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <xenstats/vcpu.h>
#include <xenstats/xenstats.h>

#include "emu/emu.h"
#include "util/util.h"

#define MS 1000000ULL
#define HOST_KIB (8ULL << 20) /* 8 GiB */

struct fixture {
    char dir[64];
    struct emu_host host;
    struct xenstats_host *api;
    uint64_t now;
};

static void spec(struct emu_domain_spec *s, const char *text)
{
    char err[256];

    assert_int_equal(emu_domain_spec_parse(text, s, err, sizeof(err)), 0);
}

static struct emu_domain *create(struct fixture *f, const char *text)
{
    struct emu_domain_spec s;
    int id;

    spec(&s, text);
    id = emu_domain_create(&f->host, &s);
    assert_true(id >= 0);
    return emu_domain_find(&f->host, (uint32_t)id);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/xenstats-figures-XXXXXX");
    if (!mkdtemp(f->dir) || emu_host_init(&f->host, f->dir, 2, 10 * MS, HOST_KIB) < 0)
        return -1;
    /* this process is the emulator: the backend finds it alive */
    if (emu_host_publish(&f->host) < 0 || setenv("XENSTATS_EMU_DIR", f->dir, 1) < 0)
        return -1;
    *state = f;
    return 0;
}

static void open_api(struct fixture *f)
{
    f->api = xenstats_host_open(XENSTATS_BACKEND_EMU);
    assert_non_null(f->api);
    /* a synthetic clock well ahead of the real one: the controls' own
     * ticks (on the real clock, never before the last tick) then land on it */
    f->now = f->host.last_tick = monotonic_ns() + 1000000 * MS;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    xenstats_host_close(f->api);
    emu_host_fini(&f->host);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void run_for(struct fixture *f, uint64_t ns)
{
    uint64_t end = f->now + ns;

    while (f->now < end) {
        f->now += 10 * MS;
        emu_host_tick(&f->host, f->now);
    }
}

static void info_of(struct fixture *f, uint32_t domid, struct xenstats_domain_info *ret)
{
    assert_int_equal(xenstats_host_domain_info(f->api, domid, ret), 0);
}

/* The domain's running time as its vCPU statistics region tells it at f->now. */
static uint64_t region_running(struct fixture *f, const struct emu_domain *d)
{
    struct xenstats_vcpu_map *map = xenstats_vcpu_map_open_memory(d->region, d->region_len);
    uint64_t sum = 0;
    uint32_t v;

    assert_non_null(map);
    for (v = 0; v < d->spec.nr_vcpus; v++) {
        struct xenstats_vcpu_sample smp;
        uint64_t t[XENSTATS_VCPU_NR_RUNSTATES];

        assert_int_equal(xenstats_vcpu_map_snapshot(map, v, &smp), 0);
        assert_int_equal(xenstats_vcpu_sample_project(&smp, f->now, t), 0);
        sum += t[0];
    }
    xenstats_vcpu_map_close(map);
    return sum;
}

static void test_sizes(void **state)
{
    struct emu_domain_spec s;
    char err[256];
    uint64_t kib;

    (void)state;
    spec(&s, "name=a");
    assert_int_equal(s.memory_kib, 128 * 1024);
    assert_int_equal(s.maxmem_kib, 128 * 1024);
    spec(&s, "name=a,memory=512M,maxmem=1G,shared=8K,outstanding=4096K");
    assert_int_equal(s.memory_kib, 512 * 1024);
    assert_int_equal(s.maxmem_kib, 1024 * 1024);
    assert_int_equal(s.shared_kib, 8);
    assert_int_equal(s.outstanding_kib, 4096);
    assert_int_equal(emu_size_parse("192", EMU_MAX_SIZE_KIB, &kib), 0); /* MiB, as xl */
    assert_int_equal(kib, 192 * 1024);
    assert_int_equal(emu_size_parse("2GiB", EMU_MAX_SIZE_KIB, &kib), 0);
    assert_int_equal(kib, 2 * 1024 * 1024);
    assert_int_equal(emu_size_parse("1T", EMU_MAX_SIZE_KIB, &kib), 0);
    assert_int_equal(emu_size_parse("2T", EMU_MAX_SIZE_KIB, &kib), -ERANGE);
    assert_int_equal(emu_size_parse("6K", EMU_MAX_SIZE_KIB, &kib), -EINVAL); /* not whole pages */
    assert_int_equal(emu_size_parse("", EMU_MAX_SIZE_KIB, &kib), -EINVAL);
    assert_int_equal(emu_size_parse("-1M", EMU_MAX_SIZE_KIB, &kib), -EINVAL);
    assert_int_equal(emu_size_parse("1MB", EMU_MAX_SIZE_KIB, &kib), 0);
    assert_int_equal(emu_size_parse("1Mx", EMU_MAX_SIZE_KIB, &kib), -EINVAL);
    assert_int_equal(emu_size_parse("1X", EMU_MAX_SIZE_KIB, &kib), -EINVAL);
    assert_int_equal(emu_size_parse("99999999999999999999999M", EMU_MAX_SIZE_KIB, &kib), -ERANGE);
    assert_int_equal(emu_domain_spec_parse("name=a,memory=1G,maxmem=512M", &s, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "maxmem=524288K is below memory=1048576K"));
    assert_int_equal(emu_domain_spec_parse("name=a,memory=0", &s, err, sizeof(err)), -EINVAL);
    assert_int_equal(emu_domain_spec_parse("name=a,memory=lots", &s, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "memory=lots: expected a size"));
}

static void test_created(void **state)
{
    struct fixture *f = *state;
    struct emu_domain *d0 = create(f, "name=Domain-0,vcpus=2,memory=1G");
    struct emu_domain *web = create(f, "name=web,vcpus=4,offline=1,memory=512M,maxmem=768M,shared=8K,outstanding=64K");
    struct emu_domain *db = create(f, "name=db,vcpus=1");
    struct xenstats_domain_info *list = NULL;
    struct xenstats_host_info hi;
    struct emu_domain_spec s;
    uint8_t zero[16] = {0};
    size_t n = 0;

    open_api(f);
    assert_int_equal(xenstats_host_list_domains(f->api, &list, &n), 0);
    assert_int_equal(n, 3);
    /* Domain-0: no limit, the null handle, as Xen's */
    assert_int_equal(list[0].domid, 0);
    assert_int_equal(list[0].memory_kib, 1024 * 1024);
    assert_true(list[0].max_memory_kib == XENSTATS_KIB_UNLIMITED);
    assert_memory_equal(list[0].uuid, zero, 16);
    assert_int_equal(list[0].nr_online_vcpus, 2);
    /* web: as its spec said, max_pages = static-max + libxl's 1 MiB */
    assert_int_equal(list[1].domid, web->domid);
    assert_string_equal(list[1].name, "web");
    assert_int_equal(list[1].nr_vcpus, 4);
    assert_int_equal(list[1].nr_online_vcpus, 3);
    assert_int_equal(list[1].memory_kib, 512 * 1024);
    assert_int_equal(list[1].max_memory_kib, 768 * 1024 + 1024);
    assert_int_equal(list[1].shared_kib, 8);
    assert_int_equal(list[1].outstanding_kib, 64);
    assert_memory_equal(list[1].uuid, web->uuid, 16);
    assert_memory_not_equal(list[1].uuid, zero, 16);
    assert_int_equal(list[1].uuid[6] >> 4, 4); /* a version 4 UUID */
    assert_memory_not_equal(list[1].uuid, list[2].uuid, 16);
    assert_int_equal(list[1].cpu_time_ns, 0);
    /* nothing ran yet: every online vCPU is blocked */
    assert_int_equal(list[1].flags, XENSTATS_DOMAIN_BLOCKED);
    assert_int_equal(list[2].memory_kib, 128 * 1024);
    assert_memory_equal(list[2].uuid, db->uuid, 16);

    assert_int_equal(xenstats_host_info(f->api, &hi), 0);
    assert_string_equal(hi.xen_version, "emu");
    assert_string_equal(hi.scheduler, "emu");
    assert_int_equal(hi.nr_pcpus, 2);
    assert_int_equal(hi.cpu_khz, 2400000);
    assert_int_equal(hi.total_memory_kib, HOST_KIB);
    assert_int_equal(hi.free_memory_kib, HOST_KIB - (1024 + 512 + 128) * 1024);
    assert_int_equal(hi.scrub_memory_kib, 0);

    /* more than is free: refused as Xen refuses to build it */
    spec(&s, "name=huge,memory=7G");
    assert_int_equal(emu_domain_create(&f->host, &s), -ENOMEM);
    /* a destroyed domain's memory is free again, and it is gone */
    assert_int_equal(emu_domain_destroy(&f->host, db->domid), 0);
    assert_int_equal(xenstats_host_info(f->api, &hi), 0);
    assert_int_equal(hi.free_memory_kib, HOST_KIB - (1024 + 512) * 1024);
    assert_int_equal(xenstats_host_domain_info(f->api, 2, &list[0]), -ESRCH);
    (void)d0;
    free(list);
}

/* CPU time = the vCPUs' running time; with the pCPUs' idle time it fills the pCPUs. */
static void test_cpu_time_and_idle(void **state)
{
    struct fixture *f = *state;
    struct emu_domain *doms[3];
    struct xenstats_domain_info info;
    uint64_t idle[4], t0, cpu = 0;
    size_t n = 0, i;

    doms[0] = create(f, "name=Domain-0,vcpus=1");
    doms[1] = create(f, "name=busy,vcpus=1,workload=cpu");
    doms[2] = create(f, "name=io,vcpus=2,workload=io");
    open_api(f);
    t0 = f->now;
    run_for(f, 5000 * MS);
    for (i = 0; i < 3; i++) {
        info_of(f, doms[i]->domid, &info);
        assert_int_equal(info.cpu_time_ns, region_running(f, doms[i]));
        cpu += info.cpu_time_ns;
    }
    info_of(f, doms[1]->domid, &info);
    assert_true(info.cpu_time_ns > 2500 * MS);
    assert_true(info.flags & XENSTATS_DOMAIN_RUNNING);
    assert_int_equal(xenstats_host_pcpu_idle(f->api, idle, 4, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(cpu + idle[0] + idle[1], 2 * (f->now - t0));
    assert_int_equal(xenstats_host_pcpu_idle(f->api, idle, 1, &n), 0);
    assert_int_equal(n, 1);
}

static void test_pause_unpause(void **state)
{
    struct fixture *f = *state;
    struct emu_domain *busy;
    struct xenstats_domain_info info;
    uint64_t frozen;
    uint32_t v;

    create(f, "name=Domain-0,vcpus=1");
    busy = create(f, "name=busy,vcpus=2,workload=cpu");
    open_api(f);
    run_for(f, 1000 * MS);
    assert_int_equal(emu_domain_pause(&f->host, busy->domid), 0);
    info_of(f, busy->domid, &info);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_PAUSED); /* neither running nor blocked, as "--p---" */
    for (v = 0; v < 2; v++)
        assert_int_equal(busy->vcpus[v].state, XEN_VCPU_STATS_RUNSTATE_OFFLINE);
    assert_int_equal(info.nr_online_vcpus, 2);
    frozen = info.cpu_time_ns;
    assert_true(frozen > 0);
    run_for(f, 1000 * MS);
    info_of(f, busy->domid, &info);
    assert_int_equal(info.cpu_time_ns, frozen);
    assert_int_equal(info.cpu_time_ns, region_running(f, busy));
    /* pauses nest, as xl pause twice */
    assert_int_equal(emu_domain_pause(&f->host, busy->domid), 0);
    assert_int_equal(emu_domain_unpause(&f->host, busy->domid), 0);
    info_of(f, busy->domid, &info);
    assert_true(info.flags & XENSTATS_DOMAIN_PAUSED);
    assert_int_equal(emu_domain_unpause(&f->host, busy->domid), 0);
    assert_int_equal(emu_domain_unpause(&f->host, busy->domid), -EINVAL); /* not paused */
    run_for(f, 100 * MS);
    info_of(f, busy->domid, &info);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_RUNNING);
    assert_true(info.cpu_time_ns > frozen);
    assert_int_equal(info.cpu_time_ns, region_running(f, busy));
    /* Xen refuses to pause the caller's own domain */
    assert_int_equal(emu_domain_pause(&f->host, 0), -EINVAL);
    assert_int_equal(emu_domain_pause(&f->host, 99), -ESRCH);
}

/*
 * A listed domain's figures are asked of its table slot alone: what never
 * changes (name, vCPUs, UUID) comes from the list, so the PV monitor's
 * getdomaininfo of each late domain opens no file.  Shown by moving the
 * info file away: the figures still come, and still move.
 */
static void test_listed_domain_no_file(void **state)
{
    struct fixture *f = *state;
    struct xenstats_domain_info *list = NULL, info;
    struct emu_domain *busy, *late;
    char path[128], moved[160];
    uint32_t gone;
    size_t n = 0;

    create(f, "name=Domain-0,vcpus=1");
    busy = create(f, "name=busy,vcpus=2,workload=cpu");
    open_api(f);
    assert_int_equal(xenstats_host_list_domains(f->api, &list, &n), 0);
    assert_int_equal(n, 2);
    free(list);
    snprintf(path, sizeof(path), "%s/domains/%u/info", f->dir, busy->domid);
    snprintf(moved, sizeof(moved), "%s.away", path);
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(emu_domain_pause(&f->host, busy->domid), 0);
    info_of(f, busy->domid, &info);
    assert_string_equal(info.name, "busy");
    assert_int_equal(info.nr_vcpus, 2);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_PAUSED); /* the slot's, now */
    assert_int_equal(emu_domain_unpause(&f->host, busy->domid), 0);
    info_of(f, busy->domid, &info);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_RUNNING);
    assert_int_equal(rename(moved, path), 0);
    /* a domain the last list did not have is read from its file */
    late = create(f, "name=late,vcpus=3");
    info_of(f, late->domid, &info);
    assert_string_equal(info.name, "late");
    assert_int_equal(info.nr_vcpus, 3);
    /* a destroyed one is gone, whatever the list remembers (busy is freed with it) */
    gone = busy->domid;
    assert_int_equal(emu_domain_destroy(&f->host, gone), 0);
    assert_int_equal(xenstats_host_domain_info(f->api, gone, &info), -ESRCH);
}

static void test_paused_blocked(void **state)
{
    struct fixture *f = *state;
    struct emu_domain *idle;
    struct xenstats_domain_info info;

    create(f, "name=Domain-0,vcpus=1");
    idle = create(f, "name=idle,vcpus=1,workload=idle");
    open_api(f);
    /* catch it blocked (an idle vCPU sleeps 200-1500 ms between bursts) */
    do
        run_for(f, 10 * MS);
    while (idle->vcpus[0].state != XEN_VCPU_STATS_RUNSTATE_BLOCKED || idle->vcpus[0].wake_at < f->now + 50 * MS);
    assert_int_equal(emu_domain_pause(&f->host, idle->domid), 0);
    info_of(f, idle->domid, &info);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_PAUSED | XENSTATS_DOMAIN_BLOCKED); /* "-bp---" */
    run_for(f, 2000 * MS); /* it would have woken: paused, it goes offline */
    info_of(f, idle->domid, &info);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_PAUSED);
    assert_int_equal(idle->vcpus[0].state, XEN_VCPU_STATS_RUNSTATE_OFFLINE);
}

static void test_shutdown(void **state)
{
    struct fixture *f = *state;
    struct emu_domain *a, *b;
    struct xenstats_domain_info *list = NULL, info;
    uint64_t frozen;
    size_t n = 0;

    create(f, "name=Domain-0,vcpus=1");
    a = create(f, "name=a,vcpus=2,workload=cpu");
    b = create(f, "name=b,vcpus=1,workload=cpu");
    open_api(f);
    run_for(f, 500 * MS);
    assert_int_equal(emu_domain_shutdown(&f->host, a->domid, XENSTATS_SHUTDOWN_CRASH), 0);
    assert_int_equal(emu_domain_shutdown(&f->host, b->domid, XENSTATS_SHUTDOWN_REBOOT), 0);
    assert_int_equal(emu_domain_shutdown(&f->host, b->domid, XENSTATS_SHUTDOWN_POWEROFF), -EALREADY);
    assert_int_equal(emu_domain_shutdown(&f->host, 0, XENSTATS_SHUTDOWN_POWEROFF), -EPERM);
    assert_int_equal(emu_domain_shutdown(&f->host, 42, XENSTATS_SHUTDOWN_POWEROFF), -ESRCH);
    info_of(f, a->domid, &info);
    frozen = info.cpu_time_ns;
    run_for(f, 500 * MS);
    /* still listed, as Xen keeps a shut-down domain until it is destroyed */
    assert_int_equal(xenstats_host_list_domains(f->api, &list, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(list[1].flags, XENSTATS_DOMAIN_SHUTDOWN | XENSTATS_DOMAIN_CRASHED);
    assert_int_equal(list[1].shutdown_reason, XENSTATS_SHUTDOWN_CRASH);
    assert_int_equal(list[1].cpu_time_ns, frozen);
    assert_int_equal(list[1].cpu_time_ns, region_running(f, a));
    assert_int_equal(list[2].flags, XENSTATS_DOMAIN_SHUTDOWN);
    assert_int_equal(list[2].shutdown_reason, XENSTATS_SHUTDOWN_REBOOT);
    /* paused too: both flags */
    assert_int_equal(emu_domain_pause(&f->host, b->domid), 0);
    info_of(f, b->domid, &info);
    assert_int_equal(info.flags, XENSTATS_DOMAIN_SHUTDOWN | XENSTATS_DOMAIN_PAUSED);
    free(list);
}

static void test_mem_set(void **state)
{
    struct fixture *f = *state;
    struct emu_domain *g;
    struct xenstats_domain_info info;
    struct xenstats_host_info hi;
    int i;

    create(f, "name=Domain-0,vcpus=1,memory=1G");
    g = create(f, "name=g,vcpus=1,memory=512M,maxmem=1G");
    open_api(f);
    assert_int_equal(emu_domain_set_target(&f->host, g->domid, 2 * 1024 * 1024), -EINVAL); /* above static-max */
    assert_int_equal(emu_domain_set_target(&f->host, g->domid, 6), -EINVAL);               /* not pages */
    assert_int_equal(emu_domain_set_target(&f->host, 77, 4096), -ESRCH);
    assert_int_equal(emu_domain_set_target(&f->host, g->domid, 256 * 1024), 0);
    info_of(f, g->domid, &info);
    assert_int_equal(info.max_memory_kib, 256 * 1024 + 1024); /* xl's enforce */
    assert_int_equal(info.memory_kib, 512 * 1024);            /* the balloon has not moved yet */
    run_for(f, 500 * MS);                                      /* 256 MiB/s */
    info_of(f, g->domid, &info);
    assert_true(info.memory_kib > 256 * 1024 && info.memory_kib < 512 * 1024);
    assert_int_equal(info.memory_kib % 4, 0);
    run_for(f, 600 * MS);
    info_of(f, g->domid, &info);
    assert_int_equal(info.memory_kib, 256 * 1024);
    assert_int_equal(xenstats_host_info(f->api, &hi), 0);
    assert_int_equal(hi.free_memory_kib, HOST_KIB - (1024 + 256) * 1024);

    /* a paused guest's balloon driver does not run */
    assert_int_equal(emu_domain_set_target(&f->host, g->domid, 1024 * 1024), 0);
    assert_int_equal(emu_domain_pause(&f->host, g->domid), 0);
    run_for(f, 2000 * MS);
    info_of(f, g->domid, &info);
    assert_int_equal(info.memory_kib, 256 * 1024);
    assert_int_equal(emu_domain_unpause(&f->host, g->domid), 0);
    for (i = 0; i < 400 && info.memory_kib != 1024 * 1024; i++) {
        run_for(f, 10 * MS);
        info_of(f, g->domid, &info);
    }
    assert_int_equal(info.memory_kib, 1024 * 1024);
    assert_int_equal(info.max_memory_kib, 1024 * 1024 + 1024);
    assert_int_equal(xenstats_host_info(f->api, &hi), 0);
    assert_int_equal(hi.free_memory_kib, HOST_KIB - (1024 + 1024) * 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test_setup_teardown(test_created, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_time_and_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pause_unpause, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paused_blocked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listed_domain_no_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mem_set, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
