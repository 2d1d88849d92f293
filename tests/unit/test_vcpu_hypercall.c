/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hypercall fallback of the vCPU reader (stock Xen: xc_vcpu_getinfo),
 * over a fake backend, and the xen backend on a machine without Xen.
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

#include <xenstats/vcpu.h>

#include "platform/platform.h"
#include "vcpu/reader.h"

#define DOMID 7

static uint64_t fake_clock;
static struct platform_vcpu_info fake_vcpus[3];
static int fake_vcpu_error;

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

static struct platform_domain_ops fake_domain_ops = {.info = fake_info, .vcpu_info = fake_vcpu_info};
static const struct platform_resource_ops fake_resource_ops = {.clock_ns = fake_clock_ns};
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
    uint64_t now, times[4];

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_states_and_inactive_counters, setup),
        cmocka_unit_test_setup(test_map_snapshots_and_projection, setup),
        cmocka_unit_test_setup(test_open_errors, setup),
        cmocka_unit_test_setup(test_xen_backend_without_xen, setup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
