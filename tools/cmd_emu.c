/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats emu: run an emulated Xen host, or control a running one.
 *
 * The running emulator is one event loop (epoll): a timerfd drives the
 * emulated scheduler, a signalfd catches SIGINT/SIGTERM, and a UNIX socket
 * in the run directory takes line commands from `xenstats emu create|
 * destroy|list` (protocol in docs/emulator.md).  All that lives in lib/emu/
 * (run.h sets the host up and runs it, control.h serves the socket,
 * client.h talks to it); this file takes the options and prints.
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <string.h>

#include <xenstats/vcpu.h>

#include "cli/tool.h"
#include "emu/client.h"
#include "emu/emu.h"
#include "emu/loop.h"
#include "emu/proto/run_dir.h"
#include "emu/run.h"
#include "util/util.h"
#include "vcpu/vcpu_fallback.h"

#define CMD "emu"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s emu [run] [OPTIONS]          run an emulated Xen host in the foreground\n"
            "       %s emu create SPEC              create a domain in the running emulator\n"
            "       %s emu destroy DOMID [--linger DURATION]  destroy a domain (lingering as dying)\n"
            "       %s emu list                     list the domains\n"
            "       %s emu pause|unpause DOMAIN     pause or unpause a domain (DOMID or name)\n"
            "       %s emu shutdown DOMAIN [--reason R]  shut a domain down (R: poweroff (default),\n"
            "                                       reboot, suspend, crash, watchdog, soft_reset)\n"
            "       %s emu mem-set DOMAIN SIZE      set the balloon target (as xl mem-set)\n"
            "       %s emu vcpu-set DOMAIN N        vCPUs 0..N-1 online, the rest offline (xl vcpu-set)\n"
            "       %s emu migrate|reboot DOMAIN    the domain carries on as a new domid (prints \"domid N\")\n"
            "       %s emu save DOMAIN              save it (xl save): destroyed, its processes stopped\n"
            "       %s emu restore NAME             restore the saved domain NAME (prints \"domid N\")\n"
            "       %s emu saved                    list the saved domains\n"
            "       %s emu dump DOMID FILE          write a domain's vCPU statistics region to FILE\n"
            "       %s emu network-attach DOMAIN [DEVID]   attach a vif (as xl network-attach)\n"
            "       %s emu network-detach DOMAIN DEVID     detach it\n"
            "       %s emu block-attach DOMAIN VDEV        attach a vbd (VDEV: xvda, xvdb, ...)\n"
            "       %s emu block-detach DOMAIN VDEV|DEVID  detach it\n"
            "       %s emu vif-set DOMAIN DEVID SETTINGS   set a vif's counters\n"
            "       %s emu vbd-set DOMAIN VDEV SETTINGS    set a vbd's counters\n"
            "       %s emu devices                  list the vifs and vbds with their counters\n\n"
            "Options of run:\n"
            "  -d, --dir DIR          run directory (default $XENSTATS_EMU_DIR, else\n"
            "                         $XDG_RUNTIME_DIR/xenstats-emu, else /tmp/xenstats-emu-UID)\n"
            "  -p, --pcpus N          emulated physical CPUs (default 2)\n"
            "  -t, --tick DURATION    scheduler tick (default 10ms)\n"
            "  -D, --domain SPEC      create a domain at start (repeatable)\n"
            "  -c, --config FILE      read settings and domains from FILE\n"
            "      --dom0-vcpus N     vCPUs of Domain-0 (default 2)\n"
            "  -m, --memory SIZE      the host's memory (default 256G)\n"
            "      --dom0-memory SIZE Domain-0's memory (default 1G)\n"
            "      --xs-quota-nodes N xenstore nodes a guest may own (xenstored's node quota;\n"
            "                         default 1000)\n"
            "      --duration DURATION  exit after this long (default: run until SIGINT/SIGTERM)\n"
            "  -h, --help             show this help\n\n"
            "SPEC is key=value pairs separated by commas: name=NAME (required), vcpus=N (default 1),\n"
            "workload=cpu|io|idle|mixed (default idle), offline=N (last N vCPUs offline),\n"
            "vcpu-stats=yes|no (no: the host lacks the resource, like stock Xen), memory=SIZE\n"
            "(default 128M), maxmem=SIZE (default: memory), shared=SIZE, outstanding=SIZE (default 0),\n"
            "vifs=N (default 0), vbds=N or vbds=VDEV:VDEV... (default none), traffic=yes|no (the\n"
            "devices' counters move with the workload; default yes).\n"
            "SIZE is a number with K, M, G or T (none: M), whole 4 KiB pages.\n"
            "SETTINGS are COUNTER=N or COUNTER=+N (add) and traffic=yes|no, separated by commas;\n"
            "a vif's counters are rx_bytes rx_packets rx_errors rx_dropped tx_bytes tx_packets\n"
            "tx_errors tx_dropped, a vbd's oo_req rd_req wr_req f_req ds_req rd_sect wr_sect; a vbd\n"
            "also takes statistics=present|missing|unreadable (as blkback tearing it down).\n"
            "Example: %s emu -p 4 -D name=web,vcpus=4,workload=cpu -D name=db,vcpus=2,workload=io\n",
            PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG,
            PROG, PROG, PROG);
}

/* ---- run ------------------------------------------------------------- */

/* -1 to go on, else the exit status (--help, a usage error). */
static int parse_run_options(int argc, char **argv, struct emu_run_options *o)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},        {"pcpus", required_argument, NULL, 'p'},
        {"tick", required_argument, NULL, 't'},       {"domain", required_argument, NULL, 'D'},
        {"config", required_argument, NULL, 'c'},     {"dom0-vcpus", required_argument, NULL, 'z'},
        {"duration", required_argument, NULL, 'u'},   {"help", no_argument, NULL, 'h'},
        {"memory", required_argument, NULL, 'm'},     {"dom0-memory", required_argument, NULL, 'Z'},
        {"xs-quota-nodes", required_argument, NULL, 'Q'}, {NULL, 0, NULL, 0},
    };
    int c;

    if (emu_run_dir(o->dir, sizeof(o->dir)) < 0)
        return fail(CMD, "run directory path too long");
    while ((c = getopt_long(argc, argv, "d:p:t:D:c:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (strlen(optarg) >= sizeof(o->dir))
                return fail(CMD, "--dir: path too long");
            strcpy(o->dir, optarg);
            break;
        case 'p':
            if (parse_u64(optarg, EMU_MAX_PCPUS, &o->pcpus) < 0 || !o->pcpus)
                return fail(CMD, "--pcpus %s: expected 1..%d", optarg, EMU_MAX_PCPUS);
            break;
        case 't':
            if (parse_duration_ns(optarg, &o->tick) < 0 || o->tick < 100000)
                return fail(CMD, "--tick %s: expected a duration of at least 100us (e.g. 10ms)", optarg);
            break;
        case 'D':
            if (emu_run_options_add_spec(o, optarg) < 0)
                return fail(CMD, "out of memory");
            break;
        case 'c':
            o->config = optarg;
            break;
        case 'z':
            if (parse_u64(optarg, EMU_MAX_VCPUS, &o->dom0_vcpus) < 0 || !o->dom0_vcpus)
                return fail(CMD, "--dom0-vcpus %s: expected 1..%d", optarg, EMU_MAX_VCPUS);
            break;
        case 'm':
            if (emu_size_parse(optarg, EMU_MAX_SIZE_KIB, &o->memory) < 0 || !o->memory)
                return fail(CMD, "--memory %s: expected a size such as 64G (at most 1T)", optarg);
            break;
        case 'Z':
            if (emu_size_parse(optarg, EMU_MAX_SIZE_KIB, &o->dom0_memory) < 0 || !o->dom0_memory)
                return fail(CMD, "--dom0-memory %s: expected a size such as 1G", optarg);
            break;
        case 'Q':
            if (parse_u64(optarg, 10000000, &o->xs_quota_nodes) < 0 || !o->xs_quota_nodes)
                return fail(CMD, "--xs-quota-nodes %s: expected 1..10000000", optarg);
            break;
        case 'u':
            if (parse_duration_ns(optarg, &o->duration) < 0)
                return fail(CMD, "--duration %s: expected a duration such as 30s", optarg);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc)
        return fail(CMD, "unexpected argument '%s' (see --help)", argv[optind]);
    return -1;
}

static int run_emulator(int argc, char **argv)
{
    struct emu_run_options o = {.pcpus = 2, .tick = 10000000ULL, .dom0_vcpus = 2, .memory = 256ULL << 20,
                                .dom0_memory = 1ULL << 20};
    struct emu_run run = {.tfd = -1, .sfd = -1, .lfd = -1};
    char err[PATH_MAX + 256];
    sigset_t mask;
    int r;

    r = parse_run_options(argc, argv, &o);
    if (r < 0 && emu_run_options_load(&o, err, sizeof(err)) < 0)
        r = fail(CMD, "%s", err);
    if (r >= 0) {
        emu_run_options_free(&o);
        return r;
    }
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    if (emu_run_open(&run, &o, err, sizeof(err)) < 0) {
        r = fail(CMD, "%s", err);
        if (!run.loop) {
            emu_run_options_free(&o);
            return r; /* nothing to close: emu_run_open() undid what it did */
        }
    } else if (emu_run_create_domains(&run, &o, err, sizeof(err)) < 0 ||
               emu_run_start(&run, &o, &mask, err, sizeof(err)) < 0) {
        r = fail(CMD, "%s", err);
    } else if ((r = emu_host_publish(&run.host)) < 0) {
        r = fail(CMD, "cannot write the pid file: %s", strerror(-r));
    } else {
        fprintf(stderr, "%s %s: emulated Xen host running in %s (%u pCPUs, tick %.1f ms); Ctrl-C stops it\n", PROG,
                CMD, o.dir, (unsigned int)o.pcpus, (double)o.tick / 1e6);
        fflush(stderr);
        r = emu_loop_run(run.loop);
        if (run.tick_error)
            fail(CMD, "timerfd: %s", strerror(run.tick_error));
        if (r < 0)
            r = fail(CMD, "event loop: %s", strerror(-r));
    }
    emu_run_close(&run, o.dir);
    emu_run_options_free(&o);
    return r;
}

/* ---- client commands ------------------------------------------------- */

static void print_line(const char *line, void *data)
{
    (void)data;
    printf("%s\n", line);
}

/* Send `request` and print the answer; the exit status. */
static int control_request(const char *request)
{
    char err[EMU_CONTROL_LINE_MAX * 4];

    if (emu_control_call(request, print_line, NULL, err, sizeof(err)) < 0)
        return fail(CMD, "%s", err);
    return 0;
}

static int dump_region(const char *domarg, const char *path)
{
    struct xenstats_domain_info info;
    struct xenstats_host *host;
    struct xenstats_vcpu_map *map = NULL;
    void *buf = NULL;
    size_t len;
    int r = 1;

    host = tool_host_open(CMD);
    if (!host)
        return 1;
    if (tool_resolve_domain(CMD, host, domarg, &info))
        goto out;
    map = xenstats_vcpu_map_open(host, info.domid);
    if (!map) {
        fail(CMD, "domain %u (%s): %s", info.domid, info.name, tool_vcpu_open_error(-errno));
        goto out;
    }
    len = xenstats_vcpu_map_dump_size(map);
    buf = malloc(len);
    if (!buf) {
        fail(CMD, "out of memory");
        goto out;
    }
    if (xenstats_vcpu_map_dump(map, buf, len) < 0) {
        fail(CMD, "domain %u: %s", info.domid, xenstats_strerror(-errno));
        goto out;
    }
    r = write_file_atomic(path, buf, len, 0644);
    if (r < 0) {
        r = fail(CMD, "cannot write %s: %s", path, strerror(-r));
        goto out;
    }
    r = 0;
out:
    free(buf);
    xenstats_vcpu_map_close(map);
    xenstats_host_close(host);
    return r;
}

/* "VERB ARG...", refusing arguments the line protocol cannot carry. */
static int control_argv(const char *verb, int argc, char *const *argv)
{
    char request[EMU_CONTROL_LINE_MAX];
    int r = emu_control_format(request, sizeof(request), verb, argc, argv);

    if (r == -EINVAL)
        return fail(CMD, "%s: empty argument, or one with blanks or a newline", verb);
    if (r < 0)
        return fail(CMD, "%s: argument too long", verb);
    return control_request(request);
}

static int control_args(const char *verb, const char *a, const char *b)
{
    char *argv[2] = {(char *)a, (char *)b};

    return control_argv(verb, b ? 2 : 1, argv);
}

/* The commands that send their arguments as they are, and print a header
 * line before the answer (NULL: none). */
static const struct form {
    const char *verb, *usage, *header;
    int min, max; /* arguments after the verb */
} forms[] = {
    {"pause", "DOMAIN", NULL, 1, 1},
    {"unpause", "DOMAIN", NULL, 1, 1},
    {"mem-set", "DOMAIN SIZE", NULL, 2, 2},
    {"vcpu-set", "DOMAIN N", NULL, 2, 2},
    {"migrate", "DOMAIN", NULL, 1, 1},
    {"reboot", "DOMAIN", NULL, 1, 1},
    {"save", "DOMAIN", NULL, 1, 1},
    {"restore", "NAME", NULL, 1, 1},
    {"saved", NULL, "NAME FROM-DOMID PROCESSES", 0, 0},
    {"network-attach", "DOMAIN [DEVID]", NULL, 1, 2},
    {"network-detach", "DOMAIN DEVID", NULL, 2, 2},
    {"block-attach", "DOMAIN VDEV", NULL, 2, 2},
    {"block-detach", "DOMAIN VDEV|DEVID", NULL, 2, 2},
    {"vif-set", "DOMAIN DEVID COUNTER=VALUE[,...]", NULL, 3, 3},
    {"vbd-set", "DOMAIN VDEV|DEVID COUNTER=VALUE[,...]", NULL, 3, 3},
    {"devices", NULL, "DOMID KIND DEVID NAME TRAFFIC COUNTERS", 0, 0},
    {"stats", NULL, NULL, 0, 0},
    {"list", NULL, "DOMID NAME VCPUS WORKLOAD OFFLINE VCPU-STATS STATE MEM-KIB TARGET-KIB MAXMEM-KIB CPU-S UUID", 0, 0},
};

static int run_form(const struct form *f, int argc, char **argv)
{
    if (argc - 2 < f->min || argc - 2 > f->max)
        return fail(CMD, "usage: %s emu %s%s%s", PROG, f->verb, f->usage ? " " : "", f->usage ? f->usage : "");
    if (f->header)
        printf("%s\n", f->header);
    return control_argv(f->verb, argc - 2, argv + 2);
}

/* create SPEC, destroy DOMID [--linger DURATION], shutdown DOMAIN [--reason R]. */
static int create_destroy_shutdown(const char *sub, int argc, char **argv)
{
    char request[EMU_CONTROL_LINE_MAX];
    const char *opt = NULL;

    if (!strcmp(sub, "shutdown")) {
        if (argc == 5 && !strcmp(argv[3], "--reason"))
            opt = argv[4];
        else if (argc == 4 && !strncmp(argv[3], "--reason=", 9))
            opt = argv[3] + 9;
        else if (argc != 3)
            return fail(CMD,
                        "usage: %s emu shutdown DOMAIN [--reason poweroff|reboot|suspend|crash|watchdog|soft_reset]",
                        PROG);
        return control_args(sub, argv[2], opt);
    }
    if (!strcmp(sub, "destroy") && (argc == 5 || argc == 4)) {
        opt = argc == 5 && !strcmp(argv[3], "--linger")      ? argv[4]
              : argc == 4 && !strncmp(argv[3], "--linger=", 9) ? argv[3] + 9
                                                              : NULL;
        if (!opt)
            return fail(CMD, "usage: %s emu destroy DOMID [--linger DURATION]", PROG);
        return control_args(sub, argv[2], opt);
    }
    if (argc != 3)
        return fail(CMD, "usage: %s emu %s %s", PROG, sub,
                    !strcmp(sub, "create") ? "SPEC" : "DOMID [--linger DURATION]");
    if (snprintf(request, sizeof(request), "%s %s", sub, argv[2]) >= (int)sizeof(request) || strchr(argv[2], '\n'))
        return fail(CMD, "argument too long or has a newline");
    return control_request(request);
}

int cmd_emu(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "run";
    size_t i;

    if (!strcmp(sub, "create") || !strcmp(sub, "destroy") || !strcmp(sub, "shutdown"))
        return create_destroy_shutdown(sub, argc, argv);
    for (i = 0; i < ARRAY_SIZE(forms); i++)
        if (!strcmp(sub, forms[i].verb))
            return run_form(&forms[i], argc, argv);
    if (!strcmp(sub, "dump")) {
        if (argc != 4)
            return fail(CMD, "usage: %s emu dump DOMID FILE", PROG);
        return dump_region(argv[2], argv[3]);
    }
    if (!strcmp(sub, "run"))
        return run_emulator(argc - 1, argv + 1);
    return run_emulator(argc, argv);
}
