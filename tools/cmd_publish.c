/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats publish: the guest agent.  Publishes the guest's own operating
 * system statistics (memory, CPU, load, each network interface and block
 * device) and users' custom sets as PV stats sets under one provider, and
 * refreshes a set from the real files only when the monitor asks for a
 * sample (docs/publish.md).
 *
 * What to read and how, and which sets to publish, lives in lib/guest/
 * (publisher.h); this file takes the options, opens the provider, answers
 * sample requests until SIGTERM/SIGINT and then withdraws everything.
 */
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <xenstats/pv.h>

#include "cli/tool.h"
#include "guest/guest_stats.h"
#include "guest/publisher.h"
#include "util/util.h"

#define CMD "publish"
#define DEFAULT_PROVIDER "xenstats-publish"
#define MAX_CUSTOM_FILES 16

struct options {
    const char *provider;
    int32_t monitor_domid;
    struct guest_publisher_opts sets; /* .custom is custom[] */
    uint64_t rescan_ns;
    const char *custom[MAX_CUSTOM_FILES];
    int cpu; /* --cpu, -1: anywhere */
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s publish [OPTIONS]\n"
            "       %s-publish [OPTIONS]   (the guest package's binary)\n\n"
            "Publish this guest's operating-system statistics as PV stats sets, refreshed from\n"
            "/proc whenever the monitor in the toolstack domain asks for a sample, until SIGTERM\n"
            "or SIGINT withdraws them.  Run it in a guest whose `stats` node exists.\n\n"
            "  -p, --provider NAME       provider name (default \"%s\")\n"
            "  -s, --sets LIST           built-in sets, comma-separated: memory,cpu,load,net,disk\n"
            "                            (default all; \"none\" for custom sets only)\n"
            "  -C, --custom FILE         also publish the sets FILE defines, re-read at every\n"
            "                            sample (repeatable; format in xenstats-publish(1))\n"
            "  -a, --all-disks           include partitions, loop and ram devices\n"
            "  -r, --rescan DURATION     look for new or vanished interfaces, disks and custom\n"
            "                            sets every DURATION (default 10s; 0 never)\n"
            "  -m, --monitor-domid DOMID grant to and signal DOMID (default: the value of the\n"
            "                            domain's `stats` node, else 0)\n"
            "      --cpu N               answer on CPU N: pin to it and deliver the sets' event\n"
            "                            channels there (root; one vCPU woken per sample)\n"
            "      --proc DIR            read DIR/meminfo etc. instead of /proc\n"
            "  -v, --verbose             say what is published and withdrawn (twice: debug)\n"
            "  -h, --help                show this help\n\n"
            "See xenstats-publish(1) for the statistics, their names and units.\n",
            PROG, PROG, DEFAULT_PROVIDER);
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {
        {"provider", required_argument, NULL, 'p'}, {"sets", required_argument, NULL, 's'},
        {"custom", required_argument, NULL, 'C'},   {"all-disks", no_argument, NULL, 'a'},
        {"rescan", required_argument, NULL, 'r'},   {"monitor-domid", required_argument, NULL, 'm'},
        {"proc", required_argument, NULL, 'P'},     {"verbose", no_argument, NULL, 'v'},
        {"cpu", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    uint64_t v;
    int c;

    while ((c = getopt_long(argc, argv, "p:s:C:ar:m:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (xenstats_pv_name_check(optarg) < 0)
                return fail(CMD, "--provider '%s': expected 1 to 62 printable ASCII characters", optarg);
            o->provider = optarg;
            break;
        case 's':
            if (guest_kinds_parse(optarg, &o->sets.kinds) < 0)
                return fail(CMD, "--sets %s: expected a comma-separated list of memory, cpu, load, net, disk "
                                 "(or none)",
                            optarg);
            break;
        case 'C':
            if (o->sets.nr_custom == MAX_CUSTOM_FILES)
                return fail(CMD, "--custom: at most %d files", MAX_CUSTOM_FILES);
            o->custom[o->sets.nr_custom++] = optarg;
            break;
        case 'a':
            o->sets.all_disks = true;
            break;
        case 'r':
            if (parse_duration_ns(optarg, &o->rescan_ns) < 0 || (o->rescan_ns && o->rescan_ns < 100000000ULL))
                return fail(CMD, "--rescan %s: expected a duration of at least 100ms (e.g. 10s), or 0", optarg);
            break;
        case 'm':
            if (parse_u64(optarg, XENSTATS_DOMID_MAX, &v) < 0)
                return fail(CMD, "--monitor-domid %s: expected a domain id (0 to 32751)", optarg);
            o->monitor_domid = (int32_t)v;
            break;
        case 'P':
            o->sets.proc = optarg;
            break;
        case 'c':
            if (parse_u64(optarg, CPU_SETSIZE - 1, &v) < 0)
                return fail(CMD, "--cpu %s: expected a CPU number (0 to %d)", optarg, CPU_SETSIZE - 1);
            o->cpu = (int)v;
            break;
        case 'v':
            global.verbosity++;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fail(CMD, "unexpected argument '%s'", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!o->sets.kinds && !o->sets.nr_custom)
        return fail(CMD, "nothing to publish: --sets none and no --custom file");
    return 0;
}

static const char *provider_error(int err)
{
    switch (err) {
    case ENOENT:
        return "this domain is not monitored: its `stats` node does not exist (the toolstack creates it; "
               "`xenstats agent` or `xenstats pv --toolstack DOMID` in the toolstack domain does too)";
    case ENOTSUP:
        return "this host has no grant tables or event channels for PV stats";
    case EACCES:
    case EPERM:
        return "permission denied on the domain's `stats` node";
    default:
        return strerror(err);
    }
}

/* A bad custom file is the user's mistake: say so before publishing
 * anything.  Later, while running, a bad version only stales its sets. */
static int check_custom(const struct options *o)
{
    struct guest_custom custom;
    char err[512];
    unsigned int k;
    size_t i;
    int r = 0;

    guest_custom_init(&custom);
    for (k = 0; k < o->sets.nr_custom && !r; k++) {
        if (guest_read_custom(o->custom[k], &custom, err, sizeof(err)) < 0) {
            r = fail(CMD, "--custom %s", err);
            break;
        }
        for (i = 0; i < custom.count && !r; i++)
            if (guest_kinds_name_taken(o->sets.kinds, custom.set[i].name))
                r = fail(CMD, "--custom %s:%u: set \"%s\" is a name of the built-in sets (rename it, or leave "
                              "the built-in out with --sets)",
                         o->custom[k], custom.set[i].line, custom.set[i].name);
    }
    guest_custom_free(&custom);
    return r;
}

/*
 * Answer sample requests and rescan every o->rescan_ns until SIGTERM or
 * SIGINT (blocked outside ppoll(), whose mask is `orig`).  0, or 1 with the
 * error said.
 */
static int serve(const struct options *o, struct guest_publisher *pub, struct xenstats_provider *provider,
                 const sigset_t *orig)
{
    uint64_t next_rescan = o->rescan_ns ? monotonic_ns() + o->rescan_ns : 0;
    int r;

    while (!tool_stop) {
        struct pollfd pfd = {.fd = xenstats_provider_fd(provider), .events = POLLIN};
        struct timespec ts, *tsp = NULL;
        uint64_t now = monotonic_ns();

        if (next_rescan) {
            uint64_t left = next_rescan > now ? next_rescan - now : 0;

            ts.tv_sec = (time_t)(left / 1000000000ULL);
            ts.tv_nsec = (long)(left % 1000000000ULL);
            tsp = &ts;
        }
        r = ppoll(&pfd, 1, tsp, orig);
        if (r < 0 && errno != EINTR)
            return fail(CMD, "waiting for sample requests: %s", strerror(errno));
        if (r > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
            return fail(CMD, "lost the host's event channels (did the host go away?)");
        if (r > 0) {
            r = xenstats_provider_dispatch(provider);
            if (r < 0 && r != -EINTR)
                return fail(CMD, "answering sample requests: %s", strerror(-r));
        }
        if (next_rescan && monotonic_ns() >= next_rescan) {
            guest_publisher_rescan(pub);
            next_rescan = monotonic_ns() + o->rescan_ns;
        }
    }
    return 0;
}

int cmd_publish(int argc, char **argv)
{
    struct options o = {
        .provider = DEFAULT_PROVIDER,
        .monitor_domid = -1,
        .sets = {.kinds = GUEST_KINDS_BUILTIN, .proc = "/proc"},
        .rescan_ns = 10000000000ULL,
        .cpu = -1,
    };
    struct xenstats_provider_opts po = {.size = sizeof(po)};
    struct xenstats_provider *provider;
    struct guest_publisher *pub = NULL;
    struct xenstats_host *host = NULL;
    sigset_t block, orig;
    int r, status = 1;

    o.sets.custom = o.custom;
    r = parse_options(argc, argv, &o);
    if (r)
        return r < 0 ? 0 : r;
    tool_log_init(CMD);
    r = check_custom(&o);
    if (r)
        return r;

    host = tool_host_open(CMD);
    if (!host)
        goto out;
    po.monitor_domid = o.monitor_domid;
    provider = xenstats_provider_new(host, o.provider, &po);
    if (!provider) {
        fail(CMD, "cannot publish as \"%s\" in domain %u: %s", o.provider, xenstats_host_self_domid(host),
             provider_error(errno));
        goto out;
    }
    pub = guest_publisher_new(provider, &o.sets);
    if (!pub) {
        fail(CMD, "%s", strerror(errno));
        goto out;
    }
    if (o.cpu >= 0 && xenstats_provider_set_cpu(provider, o.cpu) < 0) {
        if (errno == EINVAL) {
            fail(CMD, "--cpu %d: no such CPU", o.cpu);
            goto out;
        }
        /* pinned; the event channels stay where Linux put them (warned) */
    }
    /* Signals stay blocked except inside ppoll(), so a SIGTERM between
     * the check of tool_stop and the wait cannot be lost. */
    tool_trap_signals();
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &orig);

    guest_publisher_rescan(pub);
    if (!guest_publisher_count(pub)) {
        fail(CMD, "no set could be published (see the warnings above)");
        goto out;
    }
    log_info("publishing %u sets as provider \"%s\" to domain %u", guest_publisher_count(pub), o.provider,
             xenstats_provider_monitor_domid(provider));
    if (serve(&o, pub, provider, &orig))
        goto out;
    log_info("withdrawing %u sets", guest_publisher_count(pub));
    status = 0;
out:
    guest_publisher_free(pub);
    xenstats_host_close(host);
    return status;
}
