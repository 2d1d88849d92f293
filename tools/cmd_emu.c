/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats emu: run an emulated Xen host, or control a running one.
 *
 * The running emulator is one event loop (epoll): a timerfd drives the
 * emulated scheduler, a signalfd catches SIGINT/SIGTERM, and a UNIX socket
 * in the run directory takes line commands from `xenstats emu create|
 * destroy|list` (protocol in docs/emulator.md).
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <xenstats/vcpu.h>

#include "cli/tool.h"
#include "emu/control.h"
#include "emu/emu.h"
#include "emu/hyper/hyper.h"
#include "emu/loop.h"
#include "emu/proto/run_dir.h"
#include "emu/xenstore/xenstore.h"
#include "emu/xenstore/xs_wire.h"
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
            "tx_errors tx_dropped, a vbd's oo_req rd_req wr_req f_req ds_req rd_sect wr_sect.\n"
            "Example: %s emu -p 4 -D name=web,vcpus=4,workload=cpu -D name=db,vcpus=2,workload=io\n",
            PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG,
            PROG, PROG, PROG);
}

static int control_path(char *buf, size_t len)
{
    char dir[PATH_MAX - 32];
    int r = emu_run_dir(dir, sizeof(dir));

    if (r < 0)
        return r;
    r = snprintf(buf, len, "%s/%s", dir, EMU_CONTROL_SOCKET);
    return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

/* ---- run ------------------------------------------------------------- */

static void on_tick(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct emu_run *run = data;
    uint64_t now = monotonic_ns(), ticks;

    if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
        fail(CMD, "timerfd: %s", strerror(errno));
        emu_loop_quit(loop, 1);
        return;
    }
    emu_host_tick(&run->host, now);
    if (run->stop_at && now >= run->stop_at)
        emu_loop_quit(loop, 0);
}

static void on_signal(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct signalfd_siginfo si;

    if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        log_info("caught signal %u, shutting down", si.ssi_signo);
        emu_loop_quit(loop, 0);
    }
}

static int read_config(const char *path, uint64_t *pcpus, uint64_t *tick, uint64_t *memory, char ***specs,
                       size_t *nspecs)
{
    char *text = NULL, *line, *save = NULL;
    unsigned int lineno = 0;
    int r = 0;

    r = read_small_file(path, 1 << 20, &text, NULL);
    if (r < 0)
        return fail(CMD, "cannot read config %s: %s", path, strerror(-r));
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *key, *value;

        lineno++;
        line += strspn(line, " \t");
        if (!*line || *line == '#')
            continue;
        key = line;
        value = key + strcspn(key, " \t");
        if (*value)
            *value++ = '\0';
        value += strspn(value, " \t");
        if (!strcmp(key, "pcpus")) {
            if (parse_u64(value, EMU_MAX_PCPUS, pcpus) < 0 || !*pcpus)
                r = fail(CMD, "%s:%u: pcpus: expected 1..%d", path, lineno, EMU_MAX_PCPUS);
        } else if (!strcmp(key, "tick")) {
            if (parse_duration_ns(value, tick) < 0 || *tick < 100000)
                r = fail(CMD, "%s:%u: tick: expected a duration of at least 100us", path, lineno);
        } else if (!strcmp(key, "memory")) {
            if (emu_size_parse(value, EMU_MAX_SIZE_KIB, memory) < 0 || !*memory)
                r = fail(CMD, "%s:%u: memory: expected a size such as 64G (at most 1T)", path, lineno);
        } else if (!strcmp(key, "domain")) {
            char **grown = realloc(*specs, (*nspecs + 1) * sizeof(char *));

            if (!grown || !(grown[*nspecs] = strdup(value))) {
                free(grown ? grown : *specs);
                *specs = NULL;
                r = fail(CMD, "out of memory");
            } else {
                *specs = grown;
                (*nspecs)++;
            }
        } else {
            r = fail(CMD, "%s:%u: unknown setting '%s' (pcpus, tick, memory, domain)", path, lineno, key);
        }
        if (r)
            break;
    }
    free(text);
    return r;
}

/* The settings of `emu run`, from the command line and --config. */
struct run_options {
    uint64_t pcpus, tick, dom0_vcpus, duration;
    uint64_t memory, dom0_memory; /* KiB */
    char dir[PATH_MAX - 64];
    const char *config;
    char **specs; /* --domain's (argv's), then --config's (strdup()ed) */
    size_t nspecs, ncli;
};

static void free_run_options(struct run_options *o)
{
    size_t i;

    for (i = o->ncli; i < o->nspecs; i++)
        free(o->specs[i]);
    free(o->specs);
    o->specs = NULL;
}

/* -1 to go on, else the exit status (--help, a usage error). */
static int parse_run_options(int argc, char **argv, struct run_options *o)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},        {"pcpus", required_argument, NULL, 'p'},
        {"tick", required_argument, NULL, 't'},       {"domain", required_argument, NULL, 'D'},
        {"config", required_argument, NULL, 'c'},     {"dom0-vcpus", required_argument, NULL, 'z'},
        {"duration", required_argument, NULL, 'u'},   {"help", no_argument, NULL, 'h'},
        {"memory", required_argument, NULL, 'm'},     {"dom0-memory", required_argument, NULL, 'Z'},
        {NULL, 0, NULL, 0},
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
        case 'D': {
            char **grown = realloc(o->specs, (o->nspecs + 1) * sizeof(char *));

            if (!grown)
                return fail(CMD, "out of memory");
            o->specs = grown;
            o->specs[o->nspecs++] = optarg;
            o->ncli = o->nspecs;
            break;
        }
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

/*
 * --config's settings and domains (after the command line's), and every
 * domain's spec checked before the run directory is touched.  -1 to go on,
 * else the exit status after saying why.
 */
static int load_run_config(struct run_options *o)
{
    struct emu_domain_spec spec;
    char **cfg = NULL, **all, err[256];
    size_t ncfg = 0, i;

    if (o->config && read_config(o->config, &o->pcpus, &o->tick, &o->memory, &cfg, &ncfg)) {
        for (i = 0; i < ncfg; i++)
            free(cfg[i]);
        free(cfg);
        return 1;
    }
    /* the config's domains first, as they always came */
    all = ncfg ? malloc((ncfg + o->nspecs) * sizeof(char *)) : NULL;
    if (ncfg && !all) {
        for (i = 0; i < ncfg; i++)
            free(cfg[i]);
        free(cfg);
        return fail(CMD, "out of memory");
    }
    if (ncfg) {
        memcpy(all, o->specs, o->nspecs * sizeof(char *));
        memcpy(all + o->nspecs, cfg, ncfg * sizeof(char *));
        free(cfg);
        free(o->specs);
        o->specs = all;
        o->nspecs += ncfg;
    }
    for (i = 0; i < o->nspecs; i++) {
        const char *s = o->specs[i < ncfg ? o->ncli + i : i - ncfg];

        if (emu_domain_spec_parse(s, &spec, err, sizeof(err)) < 0)
            return fail(CMD, "domain '%s': %s", s, err);
    }
    if (o->dom0_memory > o->memory)
        return fail(CMD, "--dom0-memory exceeds the host's --memory");
    return -1;
}

/* Domain-0, then each domain of the options, --config's first. */
static int create_domains(struct emu_run *run, const struct run_options *o)
{
    struct emu_domain_spec spec;
    size_t ncfg = o->nspecs - o->ncli, i;
    char err[256];
    int r;

    memset(&spec, 0, sizeof(spec)); /* no devices: a backend domain has none of its own */
    snprintf(spec.name, sizeof(spec.name), "Domain-0");
    spec.nr_vcpus = (uint32_t)o->dom0_vcpus;
    spec.nr_offline = 0;
    spec.workload = EMU_WORKLOAD_IDLE;
    spec.vcpu_stats = true;
    spec.memory_kib = spec.maxmem_kib = o->dom0_memory;
    spec.shared_kib = spec.outstanding_kib = 0;
    r = emu_domain_create(&run->host, &spec);
    for (i = 0; r >= 0 && i < o->nspecs; i++) {
        const char *s = o->specs[i < ncfg ? o->ncli + i : i - ncfg];

        emu_domain_spec_parse(s, &spec, err, sizeof(err));
        r = emu_domain_create(&run->host, &spec);
        if (r == -EEXIST)
            fail(CMD, "two domains are named '%s'", spec.name);
    }
    if (r >= 0)
        return 0;
    if (r == -ENOMEM)
        fail(CMD, "cannot create domain '%s': the host's --memory has %lluK free, it wants %lluK", spec.name,
             (unsigned long long)run->host.free_memory_kib, (unsigned long long)spec.memory_kib);
    else if (r != -EEXIST)
        fail(CMD, "cannot create domain '%s': %s", spec.name, strerror(-r));
    return 1;
}

/* The host in o->dir with its event loop, grants, event channels and xenstore; 0 or the exit status. */
static int open_host(struct emu_run *run, const struct run_options *o)
{
    int r = emu_host_init(&run->host, o->dir, (uint32_t)o->pcpus, o->tick, o->memory);

    if (r == -EADDRINUSE)
        return fail(CMD, "an emulator is already running in %s", o->dir);
    if (r < 0)
        return fail(CMD, "cannot set up %s: %s", o->dir, strerror(-r));
    run->loop = emu_loop_new();
    if (!run->loop) {
        r = fail(CMD, "cannot set up the event loop: %s", strerror(errno));
        emu_host_fini(&run->host);
        return r;
    }
    run->host.loop = run->loop;
    if ((r = emu_hyper_register(&run->host)) < 0)
        return fail(CMD, "cannot set up grants and event channels: %s", strerror(-r));
    if ((r = emu_xenstore_register(&run->host)) < 0)
        return fail(CMD, "cannot set up xenstore: %s", strerror(-r));
    return 0;
}

/* The scheduler's timerfd, the signalfd of `mask` and the control socket, in the loop. */
static int start_loop(struct emu_run *run, const struct run_options *o, const sigset_t *mask)
{
    struct itimerspec its;

    run->sfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
    run->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (run->sfd < 0 || run->tfd < 0)
        return fail(CMD, "cannot set up the event loop: %s", strerror(errno));
    its.it_interval.tv_sec = (time_t)(o->tick / 1000000000ULL);
    its.it_interval.tv_nsec = (long)(o->tick % 1000000000ULL);
    its.it_value = its.it_interval;
    if (timerfd_settime(run->tfd, 0, &its, NULL) < 0 || listen_control(run) < 0 ||
        emu_loop_add(run->loop, run->tfd, EPOLLIN, on_tick, run) < 0 ||
        emu_loop_add(run->loop, run->sfd, EPOLLIN, on_signal, run) < 0)
        return fail(CMD, "cannot set up the event loop: %s", strerror(errno));
    if (o->duration)
        run->stop_at = monotonic_ns() + o->duration;
    return 0;
}

/* Everything open_host() and start_loop() set up, the control socket's file too. */
static void close_run(struct emu_run *run, const char *dir)
{
    while (run->clients)
        client_close(run->clients);
    if (run->lfd >= 0) {
        char path[PATH_MAX];

        close(run->lfd);
        if (snprintf(path, sizeof(path), "%s/%s", dir, EMU_CONTROL_SOCKET) < (int)sizeof(path))
            unlink(path);
    }
    if (run->tfd >= 0)
        close(run->tfd);
    if (run->sfd >= 0)
        close(run->sfd);
    emu_host_fini(&run->host);
    emu_loop_free(run->loop);
}

static int run_emulator(int argc, char **argv)
{
    struct run_options o = {.pcpus = 2, .tick = 10000000ULL, .dom0_vcpus = 2, .memory = 256ULL << 20,
                            .dom0_memory = 1ULL << 20};
    struct emu_run run = {.tfd = -1, .sfd = -1, .lfd = -1};
    sigset_t mask;
    int r;

    r = parse_run_options(argc, argv, &o);
    if (r < 0)
        r = load_run_config(&o);
    if (r >= 0) {
        free_run_options(&o);
        return r;
    }
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    r = open_host(&run, &o);
    if (r && !run.loop) {
        free_run_options(&o);
        return r; /* nothing to close: open_host() undid what it did */
    }
    if (!r && !(r = create_domains(&run, &o)) && !(r = start_loop(&run, &o, &mask))) {
        r = emu_host_publish(&run.host);
        if (r < 0) {
            r = fail(CMD, "cannot write the pid file: %s", strerror(-r));
        } else {
            fprintf(stderr, "%s %s: emulated Xen host running in %s (%u pCPUs, tick %.1f ms); Ctrl-C stops it\n",
                    PROG, CMD, o.dir, (unsigned int)o.pcpus, (double)o.tick / 1e6);
            fflush(stderr);
            r = emu_loop_run(run.loop);
            if (r < 0)
                r = fail(CMD, "event loop: %s", strerror(-r));
        }
    }
    close_run(&run, o.dir);
    free_run_options(&o);
    return r;
}

/* ---- client commands ------------------------------------------------- */

static int control_request(const char *request)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char buf[CONTROL_LINE_MAX * 4];
    size_t used = 0;
    int fd, status = 1;

    if (control_path(sa.sun_path, sizeof(sa.sun_path)) < 0)
        return fail(CMD, "run directory path too long");
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(CMD, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;

        close(fd);
        if (e == ENOENT || e == ECONNREFUSED)
            return fail(CMD, "no emulated host is running (start one with `xenstats emu`)");
        return fail(CMD, "cannot reach the emulator at %s: %s", sa.sun_path, strerror(e));
    }
    if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
        close(fd);
        return fail(CMD, "cannot send to the emulator: %s", strerror(errno));
    }
    for (;;) {
        char *nl;
        ssize_t n;

        while ((nl = memchr(buf, '\n', used))) {
            *nl = '\0';
            if (!strncmp(buf, "ok", 2)) {
                if (buf[2] == ' ')
                    printf("%s\n", buf + 3);
                status = 0;
                goto done;
            }
            if (!strncmp(buf, "error ", 6)) {
                char *msg = strchr(buf + 6, ' ');

                fail(CMD, "%s", msg ? msg + 1 : buf + 6);
                goto done;
            }
            if (!strncmp(buf, "domain ", 7))
                printf("%s\n", buf + 7);
            else if (!strncmp(buf, "saved ", 6))
                printf("%s\n", buf + 6);
            else if (strncmp(buf, "ok", 2))
                printf("%s\n", buf);
            memmove(buf, nl + 1, used - (size_t)(nl + 1 - buf));
            used -= (size_t)(nl + 1 - buf);
        }
        if (used == sizeof(buf)) {
            fail(CMD, "reply line too long");
            goto done;
        }
        n = recv(fd, buf + used, sizeof(buf) - used, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fail(CMD, "the emulator closed the connection");
            goto done;
        }
        used += (size_t)n;
    }
done:
    close(fd);
    return status;
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
    char request[CONTROL_LINE_MAX];
    size_t used;
    int i, n;

    n = snprintf(request, sizeof(request), "%s", verb);
    used = (size_t)n;
    for (i = 0; i < argc; i++) {
        if (!*argv[i] || strpbrk(argv[i], " \t\n"))
            return fail(CMD, "%s: empty argument, or one with blanks or a newline", verb);
        n = snprintf(request + used, sizeof(request) - used, " %s", argv[i]);
        if (n < 0 || (size_t)n >= sizeof(request) - used)
            return fail(CMD, "%s: argument too long", verb);
        used += (size_t)n;
    }
    return control_request(request);
}

static int control_args(const char *verb, const char *a, const char *b)
{
    char *argv[2] = {(char *)a, (char *)b};

    return control_argv(verb, b ? 2 : 1, argv);
}

int cmd_emu(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "run";
    char request[CONTROL_LINE_MAX];

    if (!strcmp(sub, "destroy") && (argc == 5 || argc == 4)) {
        const char *linger = argc == 5 && !strcmp(argv[3], "--linger")      ? argv[4]
                             : argc == 4 && !strncmp(argv[3], "--linger=", 9) ? argv[3] + 9
                                                                             : NULL;

        if (!linger)
            return fail(CMD, "usage: %s emu destroy DOMID [--linger DURATION]", PROG);
        return control_args(sub, argv[2], linger);
    }
    if (!strcmp(sub, "create") || !strcmp(sub, "destroy")) {
        if (argc != 3)
            return fail(CMD, "usage: %s emu %s %s", PROG, sub,
                        !strcmp(sub, "create") ? "SPEC" : "DOMID [--linger DURATION]");
        if (snprintf(request, sizeof(request), "%s %s", sub, argv[2]) >= (int)sizeof(request) ||
            strchr(argv[2], '\n'))
            return fail(CMD, "argument too long or has a newline");
        return control_request(request);
    }
    if (!strcmp(sub, "pause") || !strcmp(sub, "unpause")) {
        if (argc != 3)
            return fail(CMD, "usage: %s emu %s DOMAIN", PROG, sub);
        return control_args(sub, argv[2], NULL);
    }
    if (!strcmp(sub, "mem-set") || !strcmp(sub, "vcpu-set")) {
        if (argc != 4)
            return fail(CMD, "usage: %s emu %s DOMAIN %s", PROG, sub, !strcmp(sub, "mem-set") ? "SIZE" : "N");
        return control_args(sub, argv[2], argv[3]);
    }
    if (!strcmp(sub, "migrate") || !strcmp(sub, "reboot") || !strcmp(sub, "save") || !strcmp(sub, "restore")) {
        if (argc != 3)
            return fail(CMD, "usage: %s emu %s %s", PROG, sub, !strcmp(sub, "restore") ? "NAME" : "DOMAIN");
        return control_args(sub, argv[2], NULL);
    }
    if (!strcmp(sub, "saved")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu saved", PROG);
        printf("NAME FROM-DOMID PROCESSES\n");
        return control_request("saved");
    }
    if (!strcmp(sub, "shutdown")) {
        const char *reason = NULL;

        if (argc == 5 && !strcmp(argv[3], "--reason"))
            reason = argv[4];
        else if (argc == 4 && !strncmp(argv[3], "--reason=", 9))
            reason = argv[3] + 9;
        else if (argc != 3)
            return fail(CMD, "usage: %s emu shutdown DOMAIN [--reason poweroff|reboot|suspend|crash|watchdog|soft_reset]",
                        PROG);
        return control_args(sub, argv[2], reason);
    }
    if (!strcmp(sub, "network-attach") || !strcmp(sub, "network-detach") || !strcmp(sub, "block-attach") ||
        !strcmp(sub, "block-detach") || !strcmp(sub, "vif-set") || !strcmp(sub, "vbd-set")) {
        static const struct {
            const char *verb, *usage;
            int min, max;
        } forms[] = {
            {"network-attach", "DOMAIN [DEVID]", 1, 2},
            {"network-detach", "DOMAIN DEVID", 2, 2},
            {"block-attach", "DOMAIN VDEV", 2, 2},
            {"block-detach", "DOMAIN VDEV|DEVID", 2, 2},
            {"vif-set", "DOMAIN DEVID COUNTER=VALUE[,...]", 3, 3},
            {"vbd-set", "DOMAIN VDEV|DEVID COUNTER=VALUE[,...]", 3, 3},
        };

        for (size_t i = 0; i < ARRAY_SIZE(forms); i++)
            if (!strcmp(sub, forms[i].verb) && (argc - 2 < forms[i].min || argc - 2 > forms[i].max))
                return fail(CMD, "usage: %s emu %s %s", PROG, sub, forms[i].usage);
        return control_argv(sub, argc - 2, argv + 2);
    }
    if (!strcmp(sub, "devices")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu devices", PROG);
        printf("DOMID KIND DEVID NAME TRAFFIC COUNTERS\n");
        return control_request("devices");
    }
    if (!strcmp(sub, "stats")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu stats", PROG);
        return control_request("stats");
    }
    if (!strcmp(sub, "list")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu list", PROG);
        printf("DOMID NAME VCPUS WORKLOAD OFFLINE VCPU-STATS STATE MEM-KIB TARGET-KIB MAXMEM-KIB CPU-S UUID\n");
        return control_request("list");
    }
    if (!strcmp(sub, "dump")) {
        if (argc != 4)
            return fail(CMD, "usage: %s emu dump DOMID FILE", PROG);
        return dump_region(argv[2], argv[3]);
    }
    if (!strcmp(sub, "run"))
        return run_emulator(argc - 1, argv + 1);
    return run_emulator(argc, argv);
}
