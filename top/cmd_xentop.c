/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats xentop (also installed as xenstats-xentop): a drop-in for Xen's
 * xentop.  It takes xentop's options with xentop's meanings; in batch mode
 * it prints what `xentop -b` prints for the same figures (xentop_format.c);
 * without -b on a terminal it is top's live view, sorted by name.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/tool.h"
#include "top/cmd_xentop.h"
#include "top/source.h"
#include "top/ui.h"
#include "top/xentop.h"
#include "util/util.h"

#define CMD "xentop"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s xentop [OPTION]...\n"
            "       xenstats-xentop [OPTION]...\n\n"
            "Xen's xentop, from xenstats: the same options, and in batch mode the same output\n"
            "for the same figures, so scripts that run and parse xentop can run this instead.\n\n"
            "  -h, --help             display this help and exit\n"
            "  -V, --version          output version information and exit\n"
            "  -d, --delay=SECONDS    seconds between updates (default 3; a fraction such as\n"
            "                         0.5 is taken as it is, where xentop reads 0)\n"
            "  -n, --networks         output vif network data\n"
            "  -x, --vbds             output vbd block device data\n"
            "  -r, --repeat-header    repeat table header before each domain\n"
            "  -v, --vcpus            output vcpu data\n"
            "  -b, --batch            output in batch mode, no user input accepted (also when\n"
            "                         standard input or output is not a terminal)\n"
            "  -p, --pcpus            show physical CPU stats\n"
            "  -i, --iterations=N     number of iterations before exiting (0: no limit)\n"
            "  -f, --full-name        output the full domain name (not truncated)\n"
            "  -z, --dom0-first       display dom0 first (ignore sorting)\n\n"
            "Without -b it shows xenstats top's live view, where -n -x -r -v -p -f -z change\n"
            "nothing.  The host is the one xenstats(1) chooses: the emulated one\n"
            "(XENSTATS_EMU_DIR) or Xen.\n"
            "See xenstats-xentop(1).\n",
            PROG);
}

struct options {
    struct xentop_options show;
    bool batch;
    uint64_t delay_ns;
    uint64_t iterations; /* 0: no limit */
};

/* xentop's -d: whole seconds there; here any decimal number of seconds, up to an hour. */
static int parse_delay(const char *text, uint64_t *ret_ns)
{
    char *end;
    double s;

    if (!*text || *text == '-' || *text == '+')
        return -EINVAL;
    errno = 0;
    s = strtod(text, &end);
    if (errno || *end || !(s >= 0) || s > 3600 || !strchr("0123456789.", text[0]))
        return -EINVAL;
    *ret_ns = (uint64_t)llround(s * 1e9);
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},          {"version", no_argument, NULL, 'V'},
        {"networks", no_argument, NULL, 'n'},      {"vbds", no_argument, NULL, 'x'},
        {"repeat-header", no_argument, NULL, 'r'}, {"vcpus", no_argument, NULL, 'v'},
        {"delay", required_argument, NULL, 'd'},   {"batch", no_argument, NULL, 'b'},
        {"pcpus", no_argument, NULL, 'p'},         {"iterations", required_argument, NULL, 'i'},
        {"full-name", no_argument, NULL, 'f'},     {"dom0-first", no_argument, NULL, 'z'},
        {NULL, 0, NULL, 0},
    };
    int c;

    o->delay_ns = 3000000000ULL;
    while ((c = getopt_long(argc, argv, "hVnxrvd:bpi:fz", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return -1;
        case 'V':
            printf("%s xentop %s (xentop 1.0's options and batch output)\n", PROG, XENSTATS_VERSION);
            return -1;
        case 'n':
            o->show.networks = true;
            break;
        case 'x':
            o->show.vbds = true;
            break;
        case 'r':
            o->show.repeat_header = true;
            break;
        case 'v':
            o->show.vcpus = true;
            break;
        case 'd':
            if (parse_delay(optarg, &o->delay_ns) < 0)
                return fail(CMD, "--delay %s: expected seconds, from 0 to 3600 (e.g. 1, 0.5)", optarg);
            break;
        case 'b':
            o->batch = true;
            break;
        case 'p':
            o->show.pcpus = true;
            break;
        case 'i':
            if (parse_u64(optarg, UINT32_MAX, &o->iterations) < 0)
                return fail(CMD, "--iterations %s: expected a number of updates (0: no limit)", optarg);
            break;
        case 'f':
            o->show.full_name = true;
            break;
        case 'z':
            o->show.dom0_first = true;
            break;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc)
        return fail(CMD, "unexpected argument '%s' (see --help)", argv[optind]);
    if (!o->batch && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
        o->batch = true;
    return 0;
}

int xentop_run_batch(const char *cmd, struct top_source *src, const struct xentop_options *show, uint64_t delay_ns,
                     uint64_t iterations)
{
    struct xentop_node *prev = NULL, *cur = NULL;
    struct xentop_state st;
    uint64_t printed = 0;
    char err[1024];
    int r, status = 1;

    xentop_state_init(&st);
    while (!tool_stop) {
        struct export_snapshot *s = NULL;

        r = top_source_fetch_newer(src, prev ? prev->monotonic_ns : 0, delay_ns, &s, err, sizeof(err));
        if (tool_stop) {
            if (r == 0)
                export_snapshot_unref(s);
            break;
        }
        if (r < 0) {
            fail(cmd, "%s", err);
            goto out;
        }
        r = xentop_node_from_snapshot(s, &cur);
        export_snapshot_unref(s);
        if (r == 0)
            r = xentop_print_round(stdout, cur, prev, show, &st);
        fflush(stdout);
        if (r == -ENODATA) {
            fail(cmd, "--pcpus: this host does not tell the physical CPUs' idle time");
            goto out;
        }
        if (r < 0) {
            fail(cmd, "out of memory");
            goto out;
        }
        if (ferror(stdout)) {
            /* a reader that went away (EPIPE): nothing more to say */
            status = 0;
            goto out;
        }
        xentop_node_free(prev);
        prev = cur;
        cur = NULL;
        if (iterations && ++printed >= iterations)
            break;
        top_pause_ns(delay_ns);
    }
    status = 0;
out:
    xentop_node_free(cur);
    xentop_node_free(prev);
    return status;
}

static int run_live(struct top_source *src, const struct options *o)
{
    struct top_ui_options ui = {.delay_ns = o->delay_ns ? o->delay_ns : 100000000ULL,
                                .iterations = o->iterations,
                                .sort = TOP_SORT_NAME};
    struct top_snapshot *first = NULL;
    char err[1024];
    int r = top_source_fetch(src, &first, err, sizeof(err));

    if (r < 0)
        return tool_stop ? 0 : fail(CMD, "%s", err);
    xenstats_set_log(NULL, XENSTATS_LOG_ERROR, NULL);
    return top_ui_run(src, first, &ui);
}

int cmd_xentop(int argc, char **argv)
{
    struct options o = {0};
    struct top_source *src;
    char err[1024];
    int r, status;

    r = parse_options(argc, argv, &o);
    if (r)
        return r < 0 ? 0 : r;
    /* as xentop: the host itself, no agent, and no PV stats (an agent's to monitor) */
    src = top_source_open_direct(false, err, sizeof(err));
    if (!src)
        return fail(CMD, "%s", err);
    tool_trap_signals();
    status = o.batch ? xentop_run_batch(CMD, src, &o.show, o.delay_ns, o.iterations) : run_live(src, &o);
    top_source_close(src);
    return status;
}
