/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON reader against the JSON writer: a snapshot with every kind of
 * member, written, read and written again, gives the same text; what the
 * reader refuses, it refuses with the member's path.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/export.h"

static struct export_stat stat_of(const char *name, uint8_t type, bool valid)
{
    return (struct export_stat){.name = strdup(name), .type = type, .valid = valid};
}

static void fill_set(struct export_set *set, const char *provider, const char *name, enum xenstats_pv_set_state state)
{
    set->provider = strdup(provider);
    set->set = strdup(name);
    set->reason = strdup(state == XENSTATS_PV_SET_REJECTED ? "bad \"name\" page" : "");
    set->state = state;
    set->created = 1796548952.3314266;
    export_figs_set(&set->figs, EXPORT_FIG_PV_SET_SAMPLES, 12);
    export_figs_set(&set->figs, EXPORT_FIG_PV_SET_TIMEOUTS, 1);
    export_figs_set(&set->figs, EXPORT_FIG_PV_SET_ERRORS, 0);
    export_figs_set(&set->figs, EXPORT_FIG_PV_SET_LATENCY, 142392757);
    set->nr_stats = 5;
    set->stats = calloc(5, sizeof(*set->stats));
    assert_non_null(set->stats);
    set->stats[0] = stat_of("rx_bytes_total", XEN_PV_STATS_TYPE_U64, true);
    set->stats[0].v.u64 = UINT64_MAX;
    set->stats[1] = stat_of("temp", XEN_PV_STATS_TYPE_S64, true);
    set->stats[1].v.s64 = -5;
    set->stats[2] = stat_of("load", XEN_PV_STATS_TYPE_DOUBLE, true);
    set->stats[2].v.dbl = 0.1;
    set->stats[3] = stat_of("driver", XEN_PV_STATS_TYPE_ASCII, true);
    set->stats[3].ascii = strdup("xen-netfront \xe2\x82\xac 1.0\n");
    set->stats[4] = stat_of("later", XEN_PV_STATS_TYPE_U64, false);
}

static struct export_snapshot *rich(void)
{
    struct export_snapshot *s = export_snapshot_new();
    struct export_domain *d;

    assert_non_null(s);
    s->backend = "emu";
    s->self_domid = 0;
    s->wall = 1796548953.25;
    s->monotonic_ns = 123456789000;
    s->interval = 0.5;
    snprintf(s->xen_version, sizeof(s->xen_version), "4.20.1");
    snprintf(s->scheduler, sizeof(s->scheduler), "credit2");
    export_figs_set(&s->host, EXPORT_FIG_HOST_PCPUS, 2);
    export_figs_set(&s->host, EXPORT_FIG_HOST_MEMORY_TOTAL, 8ULL << 30);
    s->nr_pcpus = 2;
    s->pcpus = calloc(2, sizeof(*s->pcpus));
    assert_non_null(s->pcpus);
    export_figs_set(&s->pcpus[1], EXPORT_FIG_PCPU_IDLE, 5000000001ULL);
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_SAMPLES, 7);
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_SAMPLE_DURATION, 1234567);
    s->agent.sets_by_state[XENSTATS_PV_SET_ACTIVE] = 1;
    s->agent.sets_by_state[XENSTATS_PV_SET_REJECTED] = 1;
    s->nr_domains = 2;
    s->domains = calloc(2, sizeof(*s->domains));
    assert_non_null(s->domains);
    s->domains[0].vcpu_error = strdup("a domain cannot map its own statistics");
    snprintf(s->domains[0].name, sizeof(s->domains[0].name), "Domain-0");
    s->domains[0].flags = XENSTATS_DOMAIN_RUNNING;
    d = &s->domains[1];
    d->domid = 7;
    snprintf(d->name, sizeof(d->name), "web \"\x1b[2J\"");
    for (int i = 0; i < 16; i++)
        d->uuid[i] = (uint8_t)(i * 17);
    d->flags = XENSTATS_DOMAIN_SHUTDOWN | XENSTATS_DOMAIN_PAUSED;
    d->shutdown_reason = 1;
    export_figs_set(&d->figs, EXPORT_FIG_DOMAIN_CPU, 98765432101ULL);
    export_figs_set(&d->figs, EXPORT_FIG_DOMAIN_MEMORY, 1ULL << 30);
    d->nr_vifs = 1;
    d->vifs = calloc(1, sizeof(*d->vifs));
    assert_non_null(d->vifs);
    snprintf(d->vifs[0].name, sizeof(d->vifs[0].name), "vif7.0");
    export_figs_set(&d->vifs[0].figs, EXPORT_FIG_VIF_RX_BYTES, 1000);
    d->nr_vcpus = 2;
    d->vcpu_source = XENSTATS_VCPU_SOURCE_RESOURCE;
    d->vcpus = calloc(2, sizeof(*d->vcpus));
    assert_non_null(d->vcpus);
    d->vcpus[0].state = 0;
    d->vcpus[0].time_valid[0] = d->vcpus[0].time_valid[2] = true;
    d->vcpus[0].time_ns[0] = 1500000000;
    d->vcpus[0].time_ns[2] = 123456789012345ULL;
    d->vcpus[0].changes_valid = true;
    d->vcpus[0].changes = 42;
    d->vcpus[1].state = 0xff;
    d->pv_monitored = true;
    export_figs_set(&d->pv, EXPORT_FIG_PV_DOMAIN_THROTTLED, 1);
    export_figs_set(&d->pv, EXPORT_FIG_PV_DOMAIN_SETS_REJECTED, 1);
    export_figs_set(&d->pv, EXPORT_FIG_PV_DOMAIN_RESCANS, 3);
    d->nr_sets = 2;
    d->sets = calloc(2, sizeof(*d->sets));
    assert_non_null(d->sets);
    fill_set(&d->sets[0], "xenstats-publish", "net eth0", XENSTATS_PV_SET_ACTIVE);
    fill_set(&d->sets[1], "Network #0", "Tx", XENSTATS_PV_SET_REJECTED);
    return s;
}

static void test_round_trip(void **state)
{
    struct export_snapshot *s = rich(), *back = NULL;
    struct export_strbuf a = {0}, b = {0};
    char err[256] = "";

    (void)state;
    assert_int_equal(export_render_json(s, &a), 0);
    if (export_snapshot_read_json(a.data, a.len, &back, err, sizeof(err)))
        fail_msg("%s", err);
    assert_int_equal(export_render_json(back, &b), 0);
    assert_string_equal(b.data, a.data);
    /* and so do the text formats, but for the PV sets by state (the JSON
     * has only their total and the rejected ones) */
    export_strbuf_free(&a);
    export_strbuf_free(&b);
    assert_int_equal(export_render_prometheus(s, true, &a), 0);
    assert_int_equal(export_render_prometheus(back, true, &b), 0);
    assert_string_equal(b.data, a.data);
    export_strbuf_free(&a);
    export_strbuf_free(&b);
    export_snapshot_unref(back);
    export_snapshot_unref(s);
}

static void expect_bad(const char *json, const char *want)
{
    struct export_snapshot *s = NULL;
    char err[256] = "";
    int r = export_snapshot_read_json(json, strlen(json), &s, err, sizeof(err));

    if (r != -EBADMSG || !strstr(err, want))
        fail_msg("%s: got %d '%s', want '%s'", json, r, err, want);
    assert_null(s);
}

static void test_refused(void **state)
{
    (void)state;
    expect_bad("not json", "not JSON");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[]} trailing", "not JSON");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[\"a\tb\"]}", "raw control character");
    expect_bad("[1,2]", "expected an object");
    expect_bad("{\"version\":2,\"monotonic_ns\":1,\"domains\":[]}", "version: 2 is not a version");
    expect_bad("{\"version\":1,\"domains\":[]}", "monotonic_ns: missing");
    expect_bad("{\"version\":1,\"monotonic_ns\":1}", "domains: missing");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":99999999999}]}", "out of range");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"cpu_time\":-1}]}",
               "domains[0].cpu_time: expected a finite non-negative number");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"memory\":1.5}]}",
               "domains[0].memory: expected an integer or null");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"nr_vcpus\":1,"
               "\"vcpus\":[{\"vcpu\":16384}]}]}",
               "domains[0].vcpus[0].vcpu: 16384 is out of range (at most 16383)");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"vcpus\":[{\"vcpu\":0},{\"vcpu\":0}]}]}",
               "domains[0].vcpus[1]: vCPU 0 listed twice");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":4},{\"domid\":2},{\"domid\":4}]}",
               "domain 4: listed twice");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"pv_budget\":{\"throttled\":1}}]}",
               "domains[0].pv_budget.throttled: expected true, false or null");
    expect_bad("{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"pv_sets\":[{\"provider\":\"p\","
               "\"set\":\"s\",\"state\":\"active\",\"stats\":[{\"name\":\"x\",\"type\":\"u64\",\"value\":[]}]}]}]}",
               "domains[0].pv_sets[0].stats[0].value: expected a number, a string or null");
}

/* What the model cannot say as the JSON does is kept so that a viewer shows it as it came. */
static void test_kept_as_it_came(void **state)
{
    const char *json = "{\"version\":1,\"monotonic_ns\":1,\"domains\":[{\"domid\":1,\"nr_vcpus\":1,"
                       "\"vcpus\":[{\"vcpu\":2,\"running\":1}],\"pv_sets\":[{\"provider\":\"p\\u0000q\",\"set\":\"s\","
                       "\"state\":\"dormant\",\"stats\":[{\"name\":\"a\",\"type\":\"f128\",\"value\":7},"
                       "{\"name\":\"b\",\"type\":\"u64\",\"value\":\"many\"},{\"name\":\"c\",\"type\":\"u64\",\"value\":-1},"
                       "{\"name\":\"d\",\"type\":\"double\",\"value\":\"NaN\"},{\"name\":\"e\",\"type\":\"s64\",\"value\":-2}]}]}]}";
    struct export_snapshot *s = NULL;
    const struct export_domain *d;
    const struct export_set *set;
    char err[256];

    (void)state;
    assert_int_equal(export_snapshot_read_json(json, strlen(json), &s, err, sizeof(err)), 0);
    d = &s->domains[0];
    /* vCPU 2 listed: nr_vcpus covers it, 0 and 1 are places only */
    assert_int_equal(d->nr_vcpus, 3);
    assert_true(d->vcpus[0].absent && d->vcpus[1].absent);
    assert_false(d->vcpus[2].absent);
    assert_true(d->vcpus[2].time_valid[0]);
    assert_true(d->flags_unknown);
    set = &d->sets[0];
    assert_string_equal(set->provider, "p\xc0\x80q");
    assert_int_equal(set->state, XENSTATS_PV_NR_SET_STATES);
    assert_string_equal(set->state_text, "dormant");
    assert_false(set->stats[0].valid);
    assert_string_equal(set->stats[0].type_text, "f128");
    assert_string_equal(set->stats[0].ascii, "7");
    assert_false(set->stats[1].valid);
    assert_string_equal(set->stats[1].ascii, "many");
    assert_false(set->stats[2].valid);
    assert_string_equal(set->stats[2].ascii, "-1");
    assert_true(set->stats[3].valid);
    assert_true(set->stats[3].v.dbl != set->stats[3].v.dbl);
    assert_string_equal(set->stats[3].ascii, "NaN");
    assert_true(set->stats[4].valid);
    assert_null(set->stats[4].ascii);
    assert_int_equal(set->stats[4].v.s64, -2);
    export_snapshot_unref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_kept_as_it_came),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
