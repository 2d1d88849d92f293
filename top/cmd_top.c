/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: a live view of the domains' vCPU runstate shares and PV
 * stats sets, from the agent's JSON snapshot (or the host in-process), and
 * plain-text snapshots like `xentop -b` when asked or when stdout is not a
 * terminal.
 */
#include <getopt.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/tool.h"
#include "top/cmd_xentop.h"
#include "top/format.h"
#include "top/snapshot.h"
#include "top/sort.h"
#include "top/source.h"
#include "top/ui.h"
#include "util/util.h"

#define CMD "top"
#define DEFAULT_URL "http://127.0.0.1:9740"

struct options {
    const char *url;
    bool direct, batch, xentop;
    struct top_ui_options ui;
};

static void usage(FILE *f)
{
    unsigned int k, n = 0;

    fprintf(f,
            "Usage: %s top [OPTIONS]\n\n"
            "Show each domain's vCPU runstate shares of the last interval, its runstate changes\n"
            "per second and the state of its PV stats sets; Enter shows one domain in detail.\n"
            "Reads the agent's snapshot (`xenstats agent`), or the host itself with --direct.\n\n"
            "  -u, --url URL           the agent (default " DEFAULT_URL ")\n"
            "  -D, --direct            read the host in-process: no agent needed (dom0 only)\n"
            "  -b, --batch             print plain-text snapshots (the default when stdout is\n"
            "                          not a terminal)\n"
            "      --xentop            with --batch: print what `xentop -b` prints (as\n"
            "                          `xenstats xentop -b` does), for scripts that parse xentop\n"
            "  -d, --delay DURATION    between updates (default 1s; e.g. 500ms, 2s)\n"
            "      --iterations N      stop after N updates\n"
            "  -s, --sort KEY          sort by KEY (default domid; figures biggest first):\n"
            "                         ",
            PROG);
    for (k = 0; k < TOP_NR_SORT_KEYS; k++) {
        if (!top_sort_keys[k].name)
            continue;
        fprintf(f, "%s%s", !n ? " " : n % 6 == 0 ? ",\n                          " : ", ", top_sort_keys[k].name);
        n++;
    }
    fprintf(f, "\n"
               "      --reverse           reverse the sort order\n"
               "  -h, --help              show this help\n\n"
               "Keys in the live view: h or ? lists them.  See xenstats-top(1).\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
    /* -n, -x and -r are xentop's (networks, vbds, repeat header): long options only here */
    enum { OPT_XENTOP = 256, OPT_ITERATIONS, OPT_REVERSE };
    static const struct option opts[] = {
        {"url", required_argument, NULL, 'u'},   {"direct", no_argument, NULL, 'D'},
        {"batch", no_argument, NULL, 'b'},       {"delay", required_argument, NULL, 'd'},
        {"iterations", required_argument, NULL, OPT_ITERATIONS}, {"sort", required_argument, NULL, 's'},
        {"reverse", no_argument, NULL, OPT_REVERSE}, {"help", no_argument, NULL, 'h'},
        {"xentop", no_argument, NULL, OPT_XENTOP},
        {NULL, 0, NULL, 0},
    };
    bool have_url = false;
    int c;

    o->url = DEFAULT_URL;
    o->ui.delay_ns = 1000000000ULL;
    while ((c = getopt_long(argc, argv, "u:Dbd:s:hnxr", opts, NULL)) != -1) {
        switch (c) {
        case 'u':
            o->url = optarg;
            have_url = true;
            break;
        case 'D':
            o->direct = true;
            break;
        case 'b':
            o->batch = true;
            break;
        case OPT_XENTOP:
            o->xentop = true;
            break;
        case 'n':
        case 'x':
        case 'r':
            return fail(CMD, "-%c is xentop's option (%s) since 0.1.0; top's is %s (see NEWS), or run "
                        "`xenstats xentop`", c, c == 'n' ? "networks" : c == 'x' ? "vbds" : "repeat header",
                        c == 'n' ? "--iterations" : c == 'x' ? "--xentop" : "--reverse");
        case 'd':
            if (parse_duration_ns(optarg, &o->ui.delay_ns) < 0 || o->ui.delay_ns < 100000000ULL ||
                o->ui.delay_ns > 3600000000000ULL)
                return fail(CMD, "--delay %s: expected a duration from 100ms to 1h (e.g. 1s, 500ms)", optarg);
            break;
        case OPT_ITERATIONS:
            if (parse_u64(optarg, UINT32_MAX, &o->ui.iterations) < 0 || !o->ui.iterations)
                return fail(CMD, "--iterations %s: expected a positive number", optarg);
            break;
        case 's':
            if (top_sort_parse(optarg, &o->ui.sort) < 0)
                return fail(CMD, "--sort %s: unknown key (see --help for the keys)", optarg);
            break;
        case OPT_REVERSE:
            o->ui.reverse = true;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc)
        return fail(CMD, "unexpected argument '%s' (see --help)", argv[optind]);
    if (o->direct && have_url)
        return fail(CMD, "--url and --direct exclude each other");
    if (o->xentop && !o->batch)
        return fail(CMD, "--xentop is a batch format: add --batch");
    if (!o->batch && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
        o->batch = true;
    return 0;
}

/* A snapshot newer than prev, as top's view. */
static int fetch_newer(struct top_source *src, const struct top_snapshot *prev, uint64_t delay_ns,
                       struct top_snapshot **ret, char *err, size_t errlen)
{
    struct export_snapshot *s = NULL;
    int r = top_source_fetch_newer(src, prev ? prev->monotonic_ns : 0, delay_ns, &s, err, errlen);

    if (r < 0)
        return r;
    r = top_snapshot_view(s, ret, err, errlen);
    export_snapshot_unref(s);
    return r;
}

/* A round's first line: "# time 2026-12-04T03:40:00.125Z" (UTC, of the sample). */
static void print_time(const struct top_snapshot *snap)
{
    time_t secs = (time_t)snap->time;
    struct tm tm;
    char when[32];

    if (!snap->time || !gmtime_r(&secs, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm)) {
        printf("# time unknown\n");
        return;
    }
    printf("# time %s.%03dZ\n", when, (int)((snap->time - (double)secs) * 1000) % 1000);
}

static int run_batch(struct top_source *src, struct top_snapshot *first, const struct options *o)
{
    struct top_snapshot *prev = first, *cur = NULL;
    size_t *order = NULL;
    uint64_t printed = 0;
    char err[1024];
    int r, status = 1;

    while (!tool_stop && (!o->ui.iterations || printed < o->ui.iterations)) {
        top_pause_ns(o->ui.delay_ns);
        if (tool_stop)
            break;
        r = fetch_newer(src, prev, o->ui.delay_ns, &cur, err, sizeof(err));
        if (tool_stop) {
            if (r == 0)
                top_snapshot_free(cur);
            break;
        }
        if (r < 0) {
            fail(CMD, "%s", err);
            goto out;
        }
        top_snapshot_rates(cur, prev);
        free(order);
        order = malloc((cur->nr_domains ? cur->nr_domains : 1) * sizeof(*order));
        if (!order) {
            top_snapshot_free(cur);
            fail(CMD, "out of memory");
            goto out;
        }
        top_sort(cur, o->ui.sort, o->ui.reverse, order);
        print_time(cur);
        top_print_batch(stdout, cur, order);
        printed++;
        top_snapshot_free(prev);
        prev = cur;
        cur = NULL;
    }
    status = 0;
out:
    free(order);
    top_snapshot_free(prev);
    return status;
}

int cmd_top(int argc, char **argv)
{
    struct options o = {0};
    struct top_source *src = NULL;
    struct top_snapshot *first = NULL;
    char err[1024];
    int r, status = 1;

    r = parse_options(argc, argv, &o);
    if (r)
        return r < 0 ? 0 : r;
    src = o.direct ? top_source_open_direct(true, err, sizeof(err)) : top_source_open_url(o.url, err, sizeof(err));
    if (!src) {
        if (o.direct)
            fail(CMD, "%s", err);
        else
            fail(CMD, "--url %s: %s", o.url, err);
        return 1;
    }
    tool_trap_signals();
    /* The first fetch decides: an unreachable agent is an error, not an empty screen. */
    r = top_source_fetch(src, &first, err, sizeof(err));
    if (r < 0) {
        if (tool_stop) /* interrupted while waiting: not an error */
            status = 0;
        else
            fail(CMD, "%s", err);
        goto out;
    }
    if (o.batch && o.xentop) {
        /* xentop's rounds: the first at once, in xentop's order */
        struct xentop_options show = {0};

        top_snapshot_free(first);
        status = xentop_run_batch(CMD, src, &show, o.ui.delay_ns, o.ui.iterations);
    } else if (o.batch) {
        status = run_batch(src, first, &o);
    } else {
        /* The library's log lines (--direct: a guest's rejected set, the
         * fallback notice) would scribble over the screen; the view shows
         * each set's state and reason, and each domain's vCPU source. */
        xenstats_set_log(NULL, XENSTATS_LOG_ERROR, NULL);
        status = top_ui_run(src, first, &o.ui);
    }
out:
    top_source_close(src);
    return status;
}
