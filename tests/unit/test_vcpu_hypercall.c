/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hypercall fallback of the vCPU reader (stock Xen: xc_vcpu_getinfo),
 * over a fake backend, every hypervisor's way of saying "no such resource"
 * (lib/vcpu/vcpu_fallback.c falls back on each), and the xen backend on a
 * machine without Xen.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/vcpu.h>

#include "platform/platform.h"
#include "platform/xen_backend.h"
#include "vcpu/reader.h"
#include "vcpu/vcpu_fallback.h"

#define DOMID 7

static uint64_t fake_clock;
static struct platform_vcpu_info fake_vcpus[3];
static int fake_vcpu_error;
static int fake_map_error; /* what the fake hypervisor answers a map */

static int fake_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    (void)p;
    if (domid != DOMID)
        return -ESRCH;
    memset(ret_info, 0, sizeof(*ret_info));
    ret_info->domid = domid;
    ret_info->nr_vcpus = 3;
    strcpy(ret_info->name, "guest");
    return 0;
}

static int fake_vcpu_info(struct platform *p, uint32_t domid, uint32_t vcpu, struct platform_vcpu_info *ret_info)
{
    (void)p;
    if (fake_vcpu_error)
        return fake_vcpu_error;
    if (domid != DOMID)
        return -ESRCH;
    if (vcpu >= 3)
        return -EINVAL;
    *ret_info = fake_vcpus[vcpu];
    fake_clock += 100; /* the call takes 100 ns of the clock */
    return 0;
}

static int fake_clock_ns(struct platform *p, uint64_t *ret_now)
{
    (void)p;
    *ret_now = fake_clock;
    return 0;
}

/* A hypervisor region for DOMID, stamped with a clock ahead of fake_clock. */
static _Alignas(4096) unsigned char fake_region[4096];

static int fake_map(struct platform *p, uint32_t domid, uint32_t type, uint32_t id, struct platform_resource *ret)
{
    (void)p;
    (void)type;
    (void)id;
    if (domid != DOMID)
        return -ESRCH;
    if (fake_map_error)
        return fake_map_error;
    ret->addr = fake_region;
    ret->len = sizeof(fake_region);
    ret->backend_data = NULL;
    return 0;
}

static void fake_unmap(struct platform *p, struct platform_resource *res)
{
    (void)p;
    (void)res;
}

/* The fake producer's own layout and seqs, as a producer keeps them. */
static struct xen_vcpu_stats_writer fake_writer;
static struct xen_vcpu_stats_block fake_blocks[3];

static void fake_init(void)
{
    assert_int_equal(xen_vcpu_stats_init(&fake_writer, fake_region, sizeof(fake_region), 3, 64,
                                         &(struct xen_vcpu_stats_time_base){0}),
                     0);
    for (uint32_t v = 0; v < 3; v++)
        xen_vcpu_stats_vcpu_block(&fake_writer, v, &fake_blocks[v]);
}

static void fake_record(uint32_t vcpu, uint64_t running, uint64_t state, uint64_t update_time)
{
    struct xen_vcpu_stats_block *r = &fake_blocks[vcpu];

    xen_vcpu_stats_begin(r);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_RUNNING_TIME, running);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_RUNNABLE_TIME, 0);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_BLOCKED_TIME, 0);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_OFFLINE_TIME, 0);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_STATE_CHANGES, 1);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_STATE, state);
    xen_vcpu_stats_set(r, XEN_VCPU_STATS_UPDATE_TIME, update_time);
    xen_vcpu_stats_end(r);
}

static struct platform_domain_ops fake_domain_ops = {.info = fake_info, .vcpu_info = fake_vcpu_info};
static const struct platform_resource_ops fake_resource_ops = {
    .map = fake_map, .unmap = fake_unmap, .clock_ns = fake_clock_ns};
static const struct platform_backend fake_backend = {
    .name = "fake",
    .kind = XENSTATS_BACKEND_XEN,
    .domain = &fake_domain_ops,
    .resource = &fake_resource_ops,
};

static struct xenstats_host fake_host = {.platform = {.backend = &fake_backend}};

static int setup(void **state)
{
    (void)state;
    fake_clock = 1000000;
    fake_vcpu_error = 0;
    fake_map_error = 0;
    fake_domain_ops.vcpu_info = fake_vcpu_info;
    fake_vcpus[0] = (struct platform_vcpu_info){.cpu_time_ns = 5000, .online = true, .running = true};
    fake_vcpus[1] = (struct platform_vcpu_info){.cpu_time_ns = 7000, .online = true, .blocked = true};
    fake_vcpus[2] = (struct platform_vcpu_info){.cpu_time_ns = 9000, .online = false};
    return 0;
}

static void test_states_and_inactive_counters(void **state)
{
    static const struct {
        struct platform_vcpu_info info;
        uint64_t runstate;
    } cases[] = {
        {{.online = true, .running = true}, XEN_VCPU_STATS_RUNSTATE_RUNNING},
        {{.online = true, .running = true, .blocked = true}, XEN_VCPU_STATS_RUNSTATE_RUNNING},
        {{.online = true, .blocked = true}, XEN_VCPU_STATS_RUNSTATE_BLOCKED},
        {{.online = true}, XEN_VCPU_STATS_RUNSTATE_RUNNABLE},
        {{.online = false, .running = true}, XEN_VCPU_STATS_RUNSTATE_OFFLINE},
    };
    struct xenstats_vcpu_sample s;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct platform_vcpu_info info = cases[i].info;

        info.cpu_time_ns = 123456789;
        vcpu_sample_from_info(&info, 42, &s);
        assert_int_equal(s.nr_present, XENSTATS_VCPU_NR_COUNTERS);
        assert_int_equal(xenstats_vcpu_sample_status(&s, XEN_VCPU_STATS_RUNNING_TIME), XENSTATS_COUNTER_VALID);
        assert_int_equal(xenstats_vcpu_sample_value(&s, XEN_VCPU_STATS_RUNNING_TIME), 123456789);
        assert_int_equal(xenstats_vcpu_sample_value(&s, XEN_VCPU_STATS_STATE), cases[i].runstate);
        assert_int_equal(xenstats_vcpu_sample_value(&s, XEN_VCPU_STATS_UPDATE_TIME), 42);
        /* what the call cannot give is absent, never zero */
        assert_int_equal(xenstats_vcpu_sample_status(&s, XEN_VCPU_STATS_RUNNABLE_TIME), XENSTATS_COUNTER_INACTIVE);
        assert_int_equal(xenstats_vcpu_sample_status(&s, XEN_VCPU_STATS_BLOCKED_TIME), XENSTATS_COUNTER_INACTIVE);
        assert_int_equal(xenstats_vcpu_sample_status(&s, XEN_VCPU_STATS_OFFLINE_TIME), XENSTATS_COUNTER_INACTIVE);
        assert_int_equal(xenstats_vcpu_sample_status(&s, XEN_VCPU_STATS_STATE_CHANGES), XENSTATS_COUNTER_INACTIVE);
    }
    /* a time in the inactive bit is no time */
    vcpu_sample_from_info(&(struct platform_vcpu_info){.cpu_time_ns = 1ULL << 63, .online = true}, 1, &s);
    assert_int_equal(xenstats_vcpu_sample_status(&s, XEN_VCPU_STATS_RUNNING_TIME), XENSTATS_COUNTER_INACTIVE);
}

static void test_map_snapshots_and_projection(void **state)
{
    struct xenstats_vcpu_sample s[3];
    struct xenstats_vcpu_map *map;
    uint64_t now, times[XENSTATS_VCPU_NR_RUNSTATES];

    (void)state;
    map = xenstats_vcpu_map_open_hypercall(&fake_host, DOMID);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_source(map), XENSTATS_VCPU_SOURCE_HYPERCALL);
    assert_int_equal(xenstats_vcpu_map_nr_vcpus(map), 3);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 3), 0);
    assert_int_equal(xenstats_vcpu_sample_value(&s[0], XEN_VCPU_STATS_RUNNING_TIME), 5000);
    assert_int_equal(xenstats_vcpu_sample_value(&s[2], XEN_VCPU_STATS_STATE), XEN_VCPU_STATS_RUNSTATE_OFFLINE);
    /* stamped with the middle of the call on the map's clock */
    fake_vcpus[0].cpu_time_ns = 6000;
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s[0]), 0);
    assert_int_equal(xenstats_vcpu_sample_value(&s[0], XEN_VCPU_STATS_UPDATE_TIME), fake_clock - 50);
    /* the staleness rule: a running vCPU keeps running after the call */
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    assert_int_equal(xenstats_vcpu_sample_project(&s[0], now + 1000, times), 0);
    assert_int_equal(times[XEN_VCPU_STATS_RUNSTATE_RUNNING], 6000 + 50 + 1000);
    /* a blocked vCPU's blocked time is unknown: nothing to project */
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 1, &s[1]), 0);
    assert_int_equal(xenstats_vcpu_sample_project(&s[1], now + 1000, times), -ENODATA);
    assert_int_equal(times[XEN_VCPU_STATS_RUNSTATE_RUNNING], 7000);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 3, &s[0]), -ENOENT);
    /* no region to dump */
    assert_int_equal(xenstats_vcpu_map_dump(map, s, sizeof(s)), -EOPNOTSUPP);
    /* errors of the call come through */
    fake_vcpu_error = -ESRCH;
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 3), -ESRCH);
    assert_int_equal(errno, ESRCH);
    xenstats_vcpu_map_close(map);
}

/*
 * On Xen the region is stamped with NOW(), ahead of dom0's clock by an
 * unknown constant.  The clock of a region map learns it from below: never
 * behind an UPDATE_TIME already read, and the bound is kept by the host.
 */
static void test_region_clock_learns_offset(void **state)
{
    const uint64_t ahead = 5000000000ULL; /* Xen ran 5 s before dom0's clock started */
    struct xenstats_vcpu_sample s[3];
    struct xenstats_vcpu_map *map, *hc;
    uint64_t now, times[XENSTATS_VCPU_NR_RUNSTATES];

    (void)state;
    fake_host.region_clock_offset = 0;
    fake_clock = 1000000000ULL;
    fake_init();
    fake_record(0, 700, XEN_VCPU_STATS_RUNSTATE_RUNNING, fake_clock + ahead - 2000); /* changed 2 us ago */
    fake_record(1, 300, XEN_VCPU_STATS_RUNSTATE_BLOCKED, fake_clock + ahead - 9000000);
    fake_record(2, 100, XEN_VCPU_STATS_RUNSTATE_OFFLINE, 10);
    map = xenstats_vcpu_map_open(&fake_host, DOMID);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_source(map), XENSTATS_VCPU_SOURCE_RESOURCE);
    /* before any read, the backend's clock as it is */
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    assert_int_equal(now, fake_clock);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 3), 0);
    fake_clock += 1000; /* the read took 1 us */
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    /* behind the truth by at most the time since the latest change (2 us
     * before the read, which took 1 us); never ahead of it */
    assert_true(now >= fake_clock + ahead - 3000 && now <= fake_clock + ahead);
    assert_int_equal(xenstats_vcpu_sample_project(&s[0], now, times), 0);
    assert_true(times[XEN_VCPU_STATS_RUNSTATE_RUNNING] >= 700 && times[XEN_VCPU_STATS_RUNSTATE_RUNNING] <= 700 + 3000);
    /* the offset stays learned: later readings move with the backend's clock */
    fake_clock += 1000000;
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    assert_true(now >= fake_clock + ahead - 3000 && now <= fake_clock + ahead);
    assert_int_equal(xenstats_vcpu_sample_project(&s[1], now, times), 0);
    assert_true(times[XEN_VCPU_STATS_RUNSTATE_BLOCKED] >= 10000000 - 3000 &&
                times[XEN_VCPU_STATS_RUNSTATE_BLOCKED] <= 10000000 + 1000);
    /* an older record never lowers it */
    fake_record(0, 800, XEN_VCPU_STATS_RUNSTATE_BLOCKED, 20);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s[0]), 0);
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    assert_true(now >= fake_clock + ahead - 3000);
    /* the hypercall fallback stamps with the backend's own clock: no offset */
    hc = xenstats_vcpu_map_open_hypercall(&fake_host, DOMID);
    assert_non_null(hc);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(hc, s, 3), 0);
    assert_int_equal(xenstats_vcpu_map_clock(hc, &now), 0);
    assert_int_equal(now, fake_clock);
    xenstats_vcpu_map_close(hc);
    xenstats_vcpu_map_close(map);
    fake_host.region_clock_offset = 0;
}

static void test_open_errors(void **state)
{
    (void)state;
    assert_null(xenstats_vcpu_map_open_hypercall(&fake_host, DOMID + 1));
    assert_int_equal(errno, ESRCH);
    fake_vcpu_error = -EPERM;
    assert_null(xenstats_vcpu_map_open_hypercall(&fake_host, DOMID));
    assert_int_equal(errno, EPERM);
    fake_vcpu_error = 0;
    /* a backend without the call (the emulated host) */
    fake_domain_ops.vcpu_info = NULL;
    assert_null(xenstats_vcpu_map_open_hypercall(&fake_host, DOMID));
    assert_int_equal(errno, EOPNOTSUPP);
}

/*
 * Stock Xen refuses the resource differently by version: EOPNOTSUPP up to
 * 4.17, EINVAL from 4.18 (4.20 included), ENOSYS without acquire_resource,
 * ENOTTY from an old privcmd.  Each is "no such resource": the reader says
 * EOPNOTSUPP and the tools fall back to the hypercall.  Any other refusal,
 * and a region that is there but not believable, is kept as an error.
 */
static void test_no_such_resource(void **state)
{
    static const int absent[] = {-EOPNOTSUPP, -EINVAL, -ENOSYS, -ENOTTY};
    static const int kept[] = {-EPERM, -EACCES, -ESRCH, -EIO, -ENOMEM, -EFAULT};
    unsigned char saved[sizeof(fake_region)];
    struct xenstats_vcpu_map *map;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
        fake_map_error = absent[i];
        assert_null(xenstats_vcpu_map_open(&fake_host, DOMID));
        assert_int_equal(errno, EOPNOTSUPP);
        map = tool_vcpu_map_open(&fake_host, DOMID);
        assert_non_null(map);
        assert_int_equal(xenstats_vcpu_map_source(map), XENSTATS_VCPU_SOURCE_HYPERCALL);
        xenstats_vcpu_map_close(map);
    }
    for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        fake_map_error = kept[i];
        assert_null(xenstats_vcpu_map_open(&fake_host, DOMID));
        assert_int_equal(errno, -kept[i]);
        assert_null(tool_vcpu_map_open(&fake_host, DOMID));
        assert_int_equal(errno, -kept[i]);
    }
    fake_map_error = 0;
    /* a frame that maps but holds garbage (no size is believed from it) */
    memcpy(saved, fake_region, sizeof(saved));
    memset(fake_region, 0xa1, sizeof(fake_region));
    assert_null(tool_vcpu_map_open(&fake_host, DOMID));
    assert_int_equal(errno, EBADMSG);
    assert_string_equal(tool_vcpu_open_error(-errno), "malformed vCPU statistics region: bad magic");
    memcpy(fake_region, saved, sizeof(saved));
    /* the words are the tools' one set */
    assert_non_null(strstr(tool_vcpu_open_error(-EOPNOTSUPP), "does not provide vCPU statistics"));
    assert_non_null(strstr(tool_vcpu_open_error(-EINVAL), "inconsistent header"));
}

/* The xen backend is built everywhere; without Xen it opens (everything is
 * opened on first use) and its calls fail cleanly. */
static void test_xen_backend_without_xen(void **state)
{
    struct xenstats_domain_info *list = NULL;
    struct xenstats_host *host;
    size_t n = 0;

    (void)state;
    if (access("/dev/xen/privcmd", F_OK) == 0)
        skip();
    host = xenstats_host_open(XENSTATS_BACKEND_XEN);
    assert_non_null(host);
    assert_int_equal(xenstats_host_backend(host), XENSTATS_BACKEND_XEN);
    assert_true(xenstats_host_list_domains(host, &list, &n) < 0);
    assert_null(xenstats_vcpu_map_open(host, 1));
    assert_null(xenstats_vcpu_map_open_hypercall(host, 1));
    xenstats_host_close(host);
}

/* libxenctrl is loaded, not linked: the soname the build names is there
 * and has every call the backend makes. */
static void test_xenctrl_loads(void **state)
{
    const struct xen_ctrl *ctrl = xen_ctrl_load();

    (void)state;
    assert_non_null(ctrl);
    assert_non_null(ctrl->interface_open);
    assert_non_null(ctrl->getcpuinfo);
    assert_ptr_equal(xen_ctrl_load(), ctrl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_states_and_inactive_counters, setup),
        cmocka_unit_test_setup(test_map_snapshots_and_projection, setup),
        cmocka_unit_test_setup(test_region_clock_learns_offset, setup),
        cmocka_unit_test_setup(test_open_errors, setup),
        cmocka_unit_test_setup(test_no_such_resource, setup),
        cmocka_unit_test_setup(test_xen_backend_without_xen, setup),
        cmocka_unit_test(test_xenctrl_loads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
