/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats vcpu: one domain's vCPU runstate statistics, read from the
 * shared region with no hypercall per sample (seed 000's proposed tool).
 */
#include <ctype.h>
#include <getopt.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include <xenstats/vcpu.h>

#include "cli/tool.h"
#include "util/util.h"
#include "vcpu/vcpu_fallback.h"

#define CMD "vcpu"

struct options {
    uint64_t interval_ns; /* 0: one cumulative report */
    uint64_t count;       /* reports to print; 0 = until interrupted */
    bool json;
    const char *file;
};

struct frame {
    uint64_t now; /* producer clock, 0 when there is no live producer */
    struct xenstats_vcpu_sample *samples;
    uint64_t (*times)[XENSTATS_VCPU_NR_RUNSTATES]; /* projected runstate times */
    struct xenstats_vcpu_domain_sample dom;        /* the domain section (layout version 2) */
    bool have_dom;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s vcpu [OPTIONS] DOMAIN\n"
            "       %s vcpu [OPTIONS] --file DUMP\n\n"
            "Show the runstate times of each vCPU of DOMAIN (a domid or a name), read from the\n"
            "domain's vCPU statistics resource.  Without --interval, the times since the domain\n"
            "started and their shares; with it, the times and shares of each interval.\n\n"
            "  -i, --interval DURATION  report every DURATION (e.g. 1s, 500ms)\n"
            "  -c, --count N            stop after N reports (default 1, or forever with -i)\n"
            "  -j, --json               one JSON object per report\n"
            "  -f, --file DUMP          read a region dump (from `xenstats emu dump`)\n"
            "  -h, --help               show this help\n\n"
            "Inactive counters print as '-'.  See xenstats-vcpu(1).\n",
            PROG, PROG);
}

static int parse_options(int argc, char **argv, struct options *o, const char **ret_domain)
{
    static const struct option opts[] = {
        {"interval", required_argument, NULL, 'i'}, {"count", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},           {"file", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    bool have_count = false;
    int c;

    while ((c = getopt_long(argc, argv, "i:c:jf:h", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (parse_duration_ns(optarg, &o->interval_ns) < 0 || o->interval_ns < 1000000ULL)
                return fail(CMD, "--interval %s: expected a duration of at least 1ms (e.g. 1s)", optarg);
            break;
        case 'c':
            if (parse_u64(optarg, UINT32_MAX, &o->count) < 0 || !o->count)
                return fail(CMD, "--count %s: expected a positive number", optarg);
            have_count = true;
            break;
        case 'j':
            o->json = true;
            break;
        case 'f':
            o->file = optarg;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (o->file) {
        if (optind != argc)
            return fail(CMD, "--file takes no DOMAIN");
        if (o->interval_ns || have_count)
            return fail(CMD, "--file shows one dump; --interval and --count do not apply");
        o->count = 1;
        return 0;
    }
    if (optind + 1 != argc) {
        usage(stderr);
        return 2;
    }
    *ret_domain = argv[optind];
    if (!have_count)
        o->count = o->interval_ns ? 0 : 1;
    if (have_count && o->count > 1 && !o->interval_ns)
        o->interval_ns = 1000000000ULL;
    return 0;
}

static int take_frame(struct xenstats_vcpu_map *map, uint32_t n, struct frame *f)
{
    uint32_t i;
    int r;

    r = xenstats_vcpu_map_snapshot_all(map, f->samples, n);
    if (r < 0)
        return r;
    if (xenstats_vcpu_map_clock(map, &f->now) < 0)
        f->now = 0;
    /* -ENODATA: a version 1 region or the hypercall fallback, which have none */
    f->have_dom = xenstats_vcpu_map_snapshot_domain(map, &f->dom) == 0;
    for (i = 0; i < n; i++) {
        if (f->now)
            xenstats_vcpu_sample_project(&f->samples[i], f->now, f->times[i]);
        else
            xenstats_vcpu_sample_project(&f->samples[i], 0, f->times[i]);
    }
    return 0;
}

/* The domain section's memory counters (pages), one line; nothing when absent. */
static void print_domain_text(const struct frame *f)
{
    unsigned int k;

    if (!f->have_dom)
        return;
    printf("domain counters:");
    for (k = 0; k < XENSTATS_VCPU_DOMAIN_NR_COUNTERS; k++) {
        if (xenstats_vcpu_domain_status(&f->dom, k) == XENSTATS_COUNTER_VALID)
            printf(" %s %llu", xenstats_vcpu_domain_counter_name(k),
                   (unsigned long long)xenstats_vcpu_domain_value(&f->dom, k));
        else
            printf(" %s -", xenstats_vcpu_domain_counter_name(k));
    }
    printf(" (4 KiB pages)\n");
}

static struct json_object *domain_json(const struct frame *f)
{
    struct json_object *o;
    unsigned int k;

    if (!f->have_dom)
        return NULL;
    o = json_object_new_object();
    for (k = 0; k < XENSTATS_VCPU_DOMAIN_NR_COUNTERS; k++)
        json_object_object_add(o, xenstats_vcpu_domain_counter_name(k),
                               xenstats_vcpu_domain_status(&f->dom, k) == XENSTATS_COUNTER_VALID
                                   ? json_object_new_int64((int64_t)xenstats_vcpu_domain_value(&f->dom, k))
                                   : NULL);
    return o;
}

/* Value of runstate time s of vCPU i over the report: delta or cumulative. */
static bool time_valid(const struct frame *cur, uint32_t i, unsigned int s)
{
    return xenstats_vcpu_sample_status(&cur->samples[i], s) == XENSTATS_COUNTER_VALID;
}

static void print_text(const struct xenstats_domain_info *info, const struct frame *prev, const struct frame *cur,
                       uint32_t n)
{
    uint32_t i;
    unsigned int s;

    if (prev)
        printf("domain %u (%s): %u vCPUs, interval %.3f s\n", info->domid, info->name, n,
               (double)(cur->now - prev->now) / 1e9);
    else
        printf("domain %u (%s): %u vCPUs, times since start (s)\n", info->domid, info->name, n);
    print_domain_text(cur);
    printf("%-5s %-9s", "VCPU", "STATE");
    for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
        char head[16];
        size_t k;

        for (k = 0; k + 1 < sizeof(head) && xenstats_vcpu_runstate_name(s)[k]; k++)
            head[k] = (char)toupper((unsigned char)xenstats_vcpu_runstate_name(s)[k]);
        head[k] = '\0';
        printf(" %16s", head);
    }
    printf(" %9s\n", "CHANGES");
    for (i = 0; i < n; i++) {
        const struct xenstats_vcpu_sample *smp = &cur->samples[i];
        uint64_t total = 0, d[XENSTATS_VCPU_NR_RUNSTATES];
        const char *state = xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE) == XENSTATS_COUNTER_VALID
                                ? xenstats_vcpu_runstate_name(xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE))
                                : NULL;

        bool complete = true; /* shares of a partial total would lie (the hypercall fallback) */

        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            d[s] = cur->times[i][s] - (prev ? prev->times[i][s] : 0);
            if (time_valid(cur, i, s))
                total += d[s];
            else
                complete = false;
        }
        if (!complete)
            total = 0;
        printf("%-5u %-9s", i, state ? state : "-");
        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            if (!time_valid(cur, i, s))
                printf(" %16s", "-");
            else if (!total)
                printf(" %9.3f %6s", (double)d[s] / 1e9, "");
            else
                printf(" %9.3f %5.1f%%", (double)d[s] / 1e9, 100.0 * (double)d[s] / (double)total);
        }
        if (xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE_CHANGES) == XENSTATS_COUNTER_VALID)
            printf(" %9llu\n", (unsigned long long)(xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE_CHANGES) -
                                                    (prev ? xenstats_vcpu_sample_value(&prev->samples[i], XEN_VCPU_STATS_STATE_CHANGES) : 0)));
        else
            printf(" %9s\n", "-");
    }
    fflush(stdout);
}

/* Seconds written as the agent writes them: the exact nanoseconds, 1.500000000. */
static struct json_object *json_seconds(uint64_t ns)
{
    char text[32];

    snprintf(text, sizeof(text), "%llu.%09llu", (unsigned long long)(ns / 1000000000ULL),
             (unsigned long long)(ns % 1000000000ULL));
    return json_object_new_double_s((double)ns / 1e9, text);
}

static void print_json(const struct xenstats_domain_info *info, const struct frame *prev, const struct frame *cur,
                       uint32_t n)
{
    struct json_object *root = json_object_new_object(), *vcpus = json_object_new_array();
    uint32_t i;
    unsigned int s;

    json_object_object_add(root, "domid", json_object_new_int64(info->domid));
    json_object_object_add(root, "name", json_object_new_string(info->name));
    json_object_object_add(root, "clock_ns", cur->now ? json_object_new_int64((int64_t)cur->now) : NULL);
    json_object_object_add(root, "interval_ns", prev ? json_object_new_int64((int64_t)(cur->now - prev->now)) : NULL);
    json_object_object_add(root, "domain_counters", domain_json(cur));
    for (i = 0; i < n; i++) {
        const struct xenstats_vcpu_sample *smp = &cur->samples[i];
        struct json_object *v = json_object_new_object();
        uint64_t total = 0, d[XENSTATS_VCPU_NR_RUNSTATES];
        char key[32];
        const char *state = xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE) == XENSTATS_COUNTER_VALID
                                ? xenstats_vcpu_runstate_name(xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE))
                                : NULL;

        json_object_object_add(v, "vcpu", json_object_new_int64(i));
        json_object_object_add(v, "state", state ? json_object_new_string(state) : NULL);
        bool complete = true; /* shares of a partial total would lie (the hypercall fallback) */

        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            d[s] = cur->times[i][s] - (prev ? prev->times[i][s] : 0);
            if (time_valid(cur, i, s))
                total += d[s];
            else
                complete = false;
        }
        if (!complete)
            total = 0;
        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            bool ok = time_valid(cur, i, s);

            json_object_object_add(v, xenstats_vcpu_runstate_name(s), ok ? json_seconds(d[s]) : NULL);
            snprintf(key, sizeof(key), "%s_share", xenstats_vcpu_runstate_name(s));
            json_object_object_add(v, key, ok && total ? json_object_new_double((double)d[s] / (double)total) : NULL);
        }
        json_object_object_add(v, "state_changes",
                               xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_STATE_CHANGES) == XENSTATS_COUNTER_VALID
                                   ? json_object_new_int64((int64_t)(xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_STATE_CHANGES) -
                                                                     (prev ? xenstats_vcpu_sample_value(&prev->samples[i], XEN_VCPU_STATS_STATE_CHANGES) : 0)))
                                   : NULL);
        json_object_object_add(v, "update_time_ns",
                               xenstats_vcpu_sample_status(smp, XEN_VCPU_STATS_UPDATE_TIME) == XENSTATS_COUNTER_VALID
                                   ? json_object_new_int64((int64_t)xenstats_vcpu_sample_value(smp, XEN_VCPU_STATS_UPDATE_TIME))
                                   : NULL);
        json_object_array_add(vcpus, v);
    }
    json_object_object_add(root, "vcpus", vcpus);
    puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
    fflush(stdout);
    json_object_put(root);
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL)};

    /* A signal cuts the sleep short; the caller checks tool_stop. */
    nanosleep(&ts, NULL);
}

static bool frame_alloc(struct frame *f, uint32_t n)
{
    f->samples = calloc(n, sizeof(*f->samples));
    f->times = calloc(n, sizeof(*f->times));
    return f->samples && f->times;
}

static void frame_free(struct frame *f)
{
    free(f->samples);
    free(f->times);
}

int cmd_vcpu(int argc, char **argv)
{
    struct options o = {0};
    const char *domarg = NULL;
    struct xenstats_domain_info info = {0};
    struct xenstats_host *host = NULL;
    struct xenstats_vcpu_map *map = NULL;
    struct frame a = {0}, b = {0}, *prev = &a, *cur = &b, *tmp;
    uint64_t printed = 0;
    uint32_t n;
    int r, status = 1;

    r = parse_options(argc, argv, &o, &domarg);
    if (r)
        return r < 0 ? 0 : r;

    if (o.file) {
        map = xenstats_vcpu_map_open_file(o.file);
        if (!map)
            return fail(CMD, "%s: %s", o.file, errno == ENOENT ? strerror(ENOENT) : tool_vcpu_open_error(-errno));
        snprintf(info.name, sizeof(info.name), "%s", "dump");
        info.domid = 0;
    } else {
        host = tool_host_open(CMD);
        if (!host)
            return 1;
        if (tool_resolve_domain(CMD, host, domarg, &info))
            goto out;
        map = tool_vcpu_map_open(host, info.domid);
        if (!map) {
            fail(CMD, "domain %u (%s): %s", info.domid, info.name, tool_vcpu_open_error(-errno));
            goto out;
        }
    }
    n = xenstats_vcpu_map_nr_vcpus(map);
    if (!frame_alloc(&a, n) || !frame_alloc(&b, n)) {
        fail(CMD, "out of memory");
        goto out;
    }
    tool_trap_signals();

    r = take_frame(map, n, prev);
    if (r < 0) {
        fail(CMD, "domain %u: %s", info.domid, r == -EBUSY ? "a record stayed busy (the writer never finished)"
                                                          : xenstats_strerror(r));
        goto out;
    }
    if (!o.interval_ns) {
        if (o.json)
            print_json(&info, NULL, prev, n);
        else
            print_text(&info, NULL, prev, n);
        status = 0;
        goto out;
    }
    while (!tool_stop && (!o.count || printed < o.count)) {
        sleep_ns(o.interval_ns);
        if (tool_stop)
            break;
        if (host && xenstats_host_domain_info(host, info.domid, &(struct xenstats_domain_info){0}) == -ESRCH) {
            fail(CMD, "domain %u (%s) was destroyed", info.domid, info.name);
            goto out;
        }
        r = take_frame(map, n, cur);
        if (r < 0) {
            fail(CMD, "domain %u: %s", info.domid, xenstats_strerror(r));
            goto out;
        }
        if (o.json)
            print_json(&info, prev, cur, n);
        else
            print_text(&info, prev, cur, n);
        printed++;
        tmp = prev;
        prev = cur;
        cur = tmp;
    }
    status = 0;
out:
    frame_free(&a);
    frame_free(&b);
    xenstats_vcpu_map_close(map);
    xenstats_host_close(host);
    return status;
}
