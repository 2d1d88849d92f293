/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats pv: sample the PV stats sets that guests publish and print them
 * (a one-shot or periodic monitor; `xenstats agent` is the daemon).
 */
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include <xenstats/pv.h>

#include "cli/tool.h"
#include "util/util.h"

#define CMD "pv"

struct options {
    uint64_t interval_ns;
    uint64_t count;
    uint64_t timeout_ns;
    bool json;
    bool toolstack;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s pv [OPTIONS] [DOMAIN...]\n\n"
            "Sample the PV stats sets published by DOMAINs (domids or names; default: every\n"
            "domain but this one) and print every statistic with the set's state.\n\n"
            "  -i, --interval DURATION  sample every DURATION until interrupted or --count\n"
            "  -c, --count N            stop after N samples (default 1)\n"
            "  -t, --timeout DURATION   how long a provider may take to answer (default 500ms)\n"
            "  -j, --json               one JSON object per sample\n"
            "      --toolstack          create each domain's `stats` node (what the toolstack\n"
            "                           or `xenstats agent` normally does)\n"
            "  -h, --help               show this help\n",
            PROG);
}

static void print_value_text(const struct xenstats_pv_stat *st)
{
    if (!st->valid) {
        printf("-");
        return;
    }
    switch (st->type) {
    case XENSTATS_PV_S64:
        printf("%lld", (long long)st->value.s64);
        break;
    case XENSTATS_PV_U64:
        printf("%llu", (unsigned long long)st->value.u64);
        break;
    case XENSTATS_PV_DOUBLE:
        printf("%.17g", st->value.dbl);
        break;
    case XENSTATS_PV_ASCII:
        printf("\"%s\"", st->value.ascii);
        break;
    }
}

static struct json_object *value_json(const struct xenstats_pv_stat *st)
{
    if (!st->valid)
        return NULL;
    switch (st->type) {
    case XENSTATS_PV_S64:
        return json_object_new_int64(st->value.s64);
    case XENSTATS_PV_U64:
        return json_object_new_uint64(st->value.u64);
    case XENSTATS_PV_DOUBLE:
        /* JSON has no NaN or infinities: spell them as strings. */
        if (isnan(st->value.dbl))
            return json_object_new_string("NaN");
        if (isinf(st->value.dbl))
            return json_object_new_string(st->value.dbl > 0 ? "+Inf" : "-Inf");
        return json_object_new_double(st->value.dbl);
    case XENSTATS_PV_ASCII:
        return json_object_new_string(st->value.ascii);
    }
    return NULL;
}

static void print_sets(struct xenstats_monitor *m, bool json)
{
    size_t n = xenstats_monitor_nr_sets(m), i;
    struct json_object *root = json ? json_object_new_object() : NULL, *sets = json ? json_object_new_array() : NULL;

    for (i = 0; i < n; i++) {
        const struct xenstats_pv_set *set = xenstats_monitor_set(m, i);
        struct xenstats_pv_set_info info;
        struct xenstats_pv_stat st;
        struct json_object *js = NULL, *stats = NULL;
        uint32_t k;

        xenstats_pv_set_get_info(set, &info);
        if (json) {
            js = json_object_new_object();
            stats = json_object_new_object();
            json_object_object_add(js, "domid", json_object_new_int64(info.domid));
            json_object_object_add(js, "provider", json_object_new_string(info.provider));
            json_object_object_add(js, "set", json_object_new_string(info.set));
            json_object_object_add(js, "state", json_object_new_string(xenstats_pv_set_state_name(info.state)));
            json_object_object_add(js, "reason", json_object_new_string(info.reason));
            json_object_object_add(js, "samples", json_object_new_uint64(info.samples));
            json_object_object_add(js, "timeouts", json_object_new_uint64(info.timeouts));
            json_object_object_add(js, "errors", json_object_new_uint64(info.errors));
            json_object_object_add(js, "latency_ns", json_object_new_uint64(info.last_latency_ns));
        } else {
            printf("domain %u  provider \"%s\"  set \"%s\"  %s%s%s  %u statistics", info.domid, info.provider,
                   info.set, xenstats_pv_set_state_name(info.state), info.reason[0] ? ": " : "", info.reason,
                   info.nr_stats);
            if (info.last_latency_ns)
                printf("  answered in %.3f ms", (double)info.last_latency_ns / 1e6);
            printf("\n");
        }
        for (k = 0; k < info.nr_stats; k++) {
            if (xenstats_pv_set_get_stat(set, k, &st) < 0)
                break;
            if (json) {
                struct json_object *o = json_object_new_object();

                json_object_object_add(o, "type", json_object_new_string(xenstats_pv_type_name(st.type)));
                json_object_object_add(o, "value", value_json(&st));
                json_object_object_add(stats, st.name, o);
            } else {
                printf("  %-40s %-6s ", st.name, xenstats_pv_type_name(st.type));
                print_value_text(&st);
                printf("\n");
            }
        }
        if (json) {
            json_object_object_add(js, "stats", stats);
            json_object_array_add(sets, js);
        }
    }
    if (json) {
        json_object_object_add(root, "sets", sets);
        puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
        json_object_put(root);
    } else if (!n) {
        printf("no PV stats sets published\n");
    }
    fflush(stdout);
}

int cmd_pv(int argc, char **argv)
{
    static const struct option opts[] = {
        {"interval", required_argument, NULL, 'i'}, {"count", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, 't'},  {"json", no_argument, NULL, 'j'},
        {"toolstack", no_argument, NULL, 'T'},      {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct options o = {.count = 1, .timeout_ns = 500000000ULL};
    struct xenstats_monitor_opts mo = {.size = sizeof(mo)};
    struct xenstats_domain_info *all = NULL, info;
    struct xenstats_host *host = NULL;
    struct xenstats_monitor *m = NULL;
    bool have_count = false;
    size_t nall = 0, i;
    uint64_t done = 0;
    int c, r, status = 1;

    while ((c = getopt_long(argc, argv, "i:c:t:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (parse_duration_ns(optarg, &o.interval_ns) < 0 || o.interval_ns < 10000000ULL)
                return fail(CMD, "--interval %s: expected a duration of at least 10ms", optarg);
            break;
        case 'c':
            if (parse_u64(optarg, UINT32_MAX, &o.count) < 0 || !o.count)
                return fail(CMD, "--count %s: expected a positive number", optarg);
            have_count = true;
            break;
        case 't':
            if (parse_duration_ns(optarg, &o.timeout_ns) < 0 || o.timeout_ns < 1000000ULL ||
                o.timeout_ns > 60000000000ULL)
                return fail(CMD, "--timeout %s: expected a duration between 1ms and 60s", optarg);
            break;
        case 'j':
            o.json = true;
            break;
        case 'T':
            o.toolstack = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (o.interval_ns && !have_count)
        o.count = 0;

    host = tool_host_open(CMD);
    if (!host)
        return 1;
    mo.sample_timeout_ms = (uint32_t)(o.timeout_ns / 1000000ULL);
    mo.min_interval_ms = 1;
    mo.create_stats_node = o.toolstack;
    m = xenstats_monitor_new(host, &mo);
    if (!m) {
        fail(CMD, "cannot start a monitor: %s", strerror(errno));
        goto out;
    }
    if (optind < argc) {
        for (; optind < argc; optind++) {
            if (tool_resolve_domain(CMD, host, argv[optind], &info))
                goto out;
            r = xenstats_monitor_add_domain(m, info.domid);
            if (r < 0 && r != -EEXIST) {
                fail(CMD, "domain %u: %s", info.domid, strerror(-r));
                goto out;
            }
        }
    } else {
        r = xenstats_host_list_domains(host, &all, &nall);
        if (r < 0) {
            fail(CMD, "cannot list domains: %s", xenstats_strerror(r));
            goto out;
        }
        for (i = 0; i < nall; i++) {
            if (all[i].domid == xenstats_host_self_domid(host))
                continue;
            r = xenstats_monitor_add_domain(m, all[i].domid);
            if (r < 0)
                log_warning("domain %u: %s", all[i].domid, strerror(-r));
        }
    }
    tool_trap_signals();
    while (!tool_stop && (!o.count || done < o.count)) {
        uint64_t start = monotonic_ns();

        r = xenstats_monitor_sample(m);
        if (r < 0) {
            fail(CMD, "the host went away: %s", strerror(-r));
            goto out;
        }
        print_sets(m, o.json);
        done++;
        if (o.count && done >= o.count)
            break;
        while (!tool_stop && monotonic_ns() - start < o.interval_ns) {
            uint64_t left = o.interval_ns - (monotonic_ns() - start);

            r = xenstats_monitor_dispatch(m, (int)(left / 1000000ULL) + 1);
            if (r < 0 && r != -EINTR) {
                fail(CMD, "the host went away: %s", strerror(-r));
                goto out;
            }
        }
    }
    status = 0;
out:
    free(all);
    xenstats_monitor_free(m);
    xenstats_host_close(host);
    return status;
}
