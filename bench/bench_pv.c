/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats against the ad-hoc way, side by side on one emulated host.
 *
 *   pv      a 64-statistic set: request, provider refresh, signal, copy and
 *           decode (xenstats_monitor_sample of that one set);
 *   ad-hoc  the same 64 statistics the way guests do it without PV stats:
 *           dom0 kicks the guest over an event channel, the guest writes 64
 *           xenstore keys and kicks back, dom0 reads the 64 keys;
 *   scale   one monitor thread sampling 1000 sets spread over 100 domains;
 *   traffic xenstore requests the emulated xenstored served while the pv
 *           path ran in steady state (from `xenstats emu stats`).
 *
 * It starts its own `xenstats emu` and provider processes.
 *   bench_pv [--xenstats PATH] [--rounds N] [--quick]
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include <xenstats/pv.h>

#include "platform/platform.h"
#include "util/util.h"

#define MAX_CHILDREN 256

static pid_t children[MAX_CHILDREN];
static int nr_children;
static const char *xenstats = "./xenstats";
static char self_exe[PATH_MAX];

static void die(const char *what)
{
    fprintf(stderr, "bench_pv: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static pid_t spawn(char *const argv[], const char *domid)
{
    pid_t pid = fork();

    if (pid < 0)
        die("fork");
    if (pid == 0) {
        if (domid)
            setenv("XENSTATS_EMU_DOMID", domid, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    if (nr_children < MAX_CHILDREN)
        children[nr_children++] = pid;
    return pid;
}

static void reap_all(void)
{
    for (int i = nr_children - 1; i >= 0; i--) {
        kill(children[i], SIGTERM);
        waitpid(children[i], NULL, 0);
    }
    nr_children = 0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static void percentiles(uint64_t *v, size_t n, double *p50, double *p99)
{
    qsort(v, n, sizeof(*v), compare_u64);
    *p50 = (double)v[n / 2] / 1000.0;
    *p99 = (double)v[(n * 99) / 100] / 1000.0;
}

/* ---- children ------------------------------------------------------------ */

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t counter;

static int refresh(struct xenstats_provider_set *set, void *userdata)
{
    unsigned int n = xenstats_provider_set_count(set);

    (void)userdata;
    counter++;
    for (unsigned int i = 0; i < n; i++)
        xenstats_provider_set_u64(set, i, counter * 1000 + i);
    return 0;
}

/* A provider with `sets` sets of `stats` statistics. */
static int child_provider(int sets, int stats)
{
    struct xenstats_host *host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    struct xenstats_provider *p = NULL;
    char name[32];

    signal(SIGTERM, on_term);
    if (!host)
        return 1;
    for (int tries = 0; !p && tries < 500 && !stop; tries++) {
        p = xenstats_provider_new(host, "bench", NULL);
        if (!p)
            sleep_ms(10); /* the monitor creates `stats` */
    }
    if (!p)
        return 1;
    for (int s = 0; s < sets; s++) {
        struct xenstats_provider_set *set;

        snprintf(name, sizeof(name), "set%d", s);
        set = xenstats_provider_add_set(p, name, refresh, NULL);
        for (int i = 0; set && i < stats; i++) {
            snprintf(name, sizeof(name), "stat_%d", i);
            xenstats_provider_set_declare(set, name, XENSTATS_PV_U64);
        }
        if (!set || xenstats_provider_set_publish(set) < 0)
            return 1;
    }
    while (!stop) {
        struct pollfd pfd = {.fd = xenstats_provider_fd(p), .events = POLLIN};

        if (poll(&pfd, 1, 100) > 0)
            xenstats_provider_dispatch(p);
    }
    xenstats_provider_free(p);
    xenstats_host_close(host);
    return 0;
}

/* The ad-hoc way: on each kick, write 64 keys, kick back. */
static int child_adhoc(void)
{
    struct xenstats_host *host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    struct platform *pl;
    struct platform_evtchn *ev;
    struct xs_handle *xs;
    char path[128], value[32], *home;
    int port;

    signal(SIGTERM, on_term);
    if (!host)
        return 1;
    pl = &host->platform;
    xs = platform_store_open(pl, 0);
    ev = platform_evtchn_open(pl);
    if (!xs || !ev)
        return 1;
    home = xs_get_domain_path(xs, pl->self_domid);
    port = platform_evtchn_bind_unbound_port(pl, ev, 0);
    snprintf(path, sizeof(path), "%s/data/adhoc-port", home);
    snprintf(value, sizeof(value), "%d", port);
    if (port < 0 || !xs_write(xs, XBT_NULL, path, value, (unsigned int)strlen(value)))
        return 1;
    while (!stop) {
        struct pollfd pfd = {.fd = platform_evtchn_fd(pl, ev), .events = POLLIN};
        int p;

        if (poll(&pfd, 1, 100) <= 0)
            continue;
        while ((p = platform_evtchn_pending(pl, ev)) >= 0) {
            counter++;
            for (int i = 0; i < 64; i++) {
                snprintf(path, sizeof(path), "%s/data/stats/s%02d", home, i);
                snprintf(value, sizeof(value), "%016llu", (unsigned long long)(counter * 1000 + (uint64_t)i));
                xs_write(xs, XBT_NULL, path, value, 16);
            }
            platform_evtchn_notify(pl, ev, (uint32_t)p);
            platform_evtchn_unmask(pl, ev, (uint32_t)p);
        }
    }
    return 0;
}

/* ---- measurements --------------------------------------------------------- */

static void wait_sets(struct xenstats_monitor *m, size_t want)
{
    uint64_t deadline = monotonic_ns() + 30000000000ULL;

    while (xenstats_monitor_nr_sets(m) < want || xenstats_monitor_request_all(m) < 0) {
        if (monotonic_ns() > deadline) {
            fprintf(stderr, "bench_pv: only %zu of %zu sets appeared\n", xenstats_monitor_nr_sets(m), want);
            exit(1);
        }
        xenstats_monitor_dispatch(m, 50);
    }
    /* and every one of them answers */
    if ((size_t)xenstats_monitor_sample(m) < want) {
        fprintf(stderr, "bench_pv: not every set answered\n");
        exit(1);
    }
}

static uint64_t emu_xenstore_requests(void)
{
    char cmd[PATH_MAX + 32], line[128];
    unsigned long long n = 0;
    FILE *f;

    snprintf(cmd, sizeof(cmd), "%s emu stats", xenstats);
    f = popen(cmd, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "xenstore-requests %llu", &n) == 1)
            break;
    pclose(f);
    return n;
}

static void bench_pv_vs_adhoc(struct xenstats_host *host, int rounds)
{
    struct xenstats_monitor_opts mo = {.size = sizeof(mo), .min_interval_ms = 1, .create_stats_node = true};
    struct xenstats_monitor *m = xenstats_monitor_new(host, &mo);
    struct platform *pl = &host->platform;
    struct platform_evtchn *ev = platform_evtchn_open(pl);
    struct xs_handle *xs = platform_store_open(pl, 0);
    uint64_t *pv = calloc((size_t)rounds, sizeof(uint64_t)), *ad = calloc((size_t)rounds, sizeof(uint64_t));
    uint64_t xs_before, xs_after;
    double p50, p99, a50, a99;
    char *args[] = {self_exe, "--child-provider", "1", "64", NULL};
    char *adargs[] = {self_exe, "--child-adhoc", NULL};
    char path[128], *v;
    unsigned int len;
    int port = -1;

    if (!m || !ev || !xs || !pv || !ad)
        die("setup");
    if (xenstats_monitor_add_domain(m, 1) < 0)
        die("add_domain 1");
    spawn(args, "1");
    spawn(adargs, "2");
    wait_sets(m, 1);

    xs_before = emu_xenstore_requests();
    for (int r = 0; r < rounds; r++) {
        uint64_t t = monotonic_ns();

        if (xenstats_monitor_sample(m) != 1)
            die("pv sample");
        pv[r] = monotonic_ns() - t;
        sleep_ms(1); /* min_interval */
    }
    xs_after = emu_xenstore_requests();

    for (int tries = 0; tries < 500; tries++) {
        v = xs_read(xs, XBT_NULL, "/local/domain/2/data/adhoc-port", &len);
        if (v) {
            port = platform_evtchn_bind_interdomain(pl, ev, 2, (uint32_t)atoi(v));
            free(v);
            break;
        }
        sleep_ms(10);
    }
    if (port < 0)
        die("ad-hoc provider");
    /* Warm up and drop any event the binding itself raised. */
    platform_evtchn_notify(pl, ev, (uint32_t)port);
    sleep_ms(200);
    for (int p; (p = platform_evtchn_pending(pl, ev)) >= 0;)
        platform_evtchn_unmask(pl, ev, (uint32_t)p);
    for (int r = 0; r < rounds; r++) {
        uint64_t t = monotonic_ns();
        struct pollfd pfd = {.fd = platform_evtchn_fd(pl, ev), .events = POLLIN};
        int p;

        platform_evtchn_notify(pl, ev, (uint32_t)port);
        if (poll(&pfd, 1, 5000) <= 0)
            die("ad-hoc answer");
        while ((p = platform_evtchn_pending(pl, ev)) >= 0)
            platform_evtchn_unmask(pl, ev, (uint32_t)p);
        for (int i = 0; i < 64; i++) {
            snprintf(path, sizeof(path), "/local/domain/2/data/stats/s%02d", i);
            v = xs_read(xs, XBT_NULL, path, &len);
            if (!v)
                die("ad-hoc read");
            free(v);
        }
        ad[r] = monotonic_ns() - t;
    }
    percentiles(pv, (size_t)rounds, &p50, &p99);
    percentiles(ad, (size_t)rounds, &a50, &a99);
    printf("pv       64-statistic full sample   p50 %9.1f us  p99 %9.1f us  (%d rounds)\n", p50, p99, rounds);
    printf("ad-hoc   64 xenstore keys per sample p50 %9.1f us  p99 %9.1f us\n", a50, a99);
    printf("ratio    ad-hoc / pv (p50)          %.1fx (goal >= 50x)\n", a50 / p50);
    if (xs_before && xs_after)
        printf("traffic  xenstore requests the emulated xenstored served during %d pv samples: %llu\n", rounds,
               (unsigned long long)(xs_after - xs_before));
    else
        printf("traffic  (emulator does not report xenstore requests)\n");
    reap_all();
    xenstats_monitor_free(m);
    platform_evtchn_close(pl, ev);
    xs_close(xs);
    free(pv);
    free(ad);
}

static void bench_scale(struct xenstats_host *host, int domains, int sets_per_domain, int rounds)
{
    struct xenstats_monitor_opts mo = {.size = sizeof(mo), .min_interval_ms = 1, .create_stats_node = true,
                                       .sample_timeout_ms = 5000};
    struct xenstats_monitor *m = xenstats_monitor_new(host, &mo);
    uint64_t *t = calloc((size_t)rounds, sizeof(uint64_t));
    char sets[16];
    double p50, p99;

    snprintf(sets, sizeof(sets), "%d", sets_per_domain);
    if (!m || !t)
        die("setup");
    for (int d = 0; d < domains; d++) {
        char domid[16];
        char *args[] = {self_exe, "--child-provider", sets, "16", NULL};

        snprintf(domid, sizeof(domid), "%d", 3 + d);
        if (xenstats_monitor_add_domain(m, (uint32_t)(3 + d)) < 0)
            die("add_domain");
        spawn(args, domid);
    }
    wait_sets(m, (size_t)(domains * sets_per_domain));
    for (int r = 0; r < rounds; r++) {
        uint64_t s = monotonic_ns();
        int n = xenstats_monitor_sample(m);

        t[r] = monotonic_ns() - s;
        if (n != domains * sets_per_domain) {
            fprintf(stderr, "bench_pv: %d of %d sets answered\n", n, domains * sets_per_domain);
            exit(1);
        }
        sleep_ms(2);
    }
    percentiles(t, (size_t)rounds, &p50, &p99);
    printf("scale    %d sets over %d domains, one monitor thread: p50 %.2f ms  p99 %.2f ms per full round\n",
           domains * sets_per_domain, domains, p50 / 1000, p99 / 1000);
    xenstats_monitor_free(m);
    free(t);
}

int main(int argc, char **argv)
{
    int rounds = 1000, scale_rounds = 20, domains = 100, per_domain = 10, i;
    char dir[] = "/tmp/xenstats-bench-pv-XXXXXX", sock[PATH_MAX];
    char **emu_args;
    struct xenstats_host *host = NULL;
    pid_t emu;
    int n = 0;

    if (argc > 1 && !strcmp(argv[1], "--child-provider") && argc == 4)
        return child_provider(atoi(argv[2]), atoi(argv[3]));
    if (argc > 1 && !strcmp(argv[1], "--child-adhoc"))
        return child_adhoc();
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xenstats") && i + 1 < argc) {
            xenstats = argv[++i];
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--quick")) {
            rounds = 200;
            scale_rounds = 5;
            domains = 20;
        } else {
            fprintf(stderr, "usage: bench_pv [--xenstats PATH] [--rounds N] [--quick]\n");
            return 2;
        }
    }
    if (rounds < 10)
        rounds = 10;
    if (readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1) < 0)
        die("readlink");
    if (!mkdtemp(dir))
        die("mkdtemp");
    setenv("XENSTATS_EMU_DIR", dir, 1);
    unsetenv("XENSTATS_EMU_DOMID");

    emu_args = calloc((size_t)(2 * domains + 16), sizeof(char *));
    emu_args[n++] = (char *)xenstats;
    emu_args[n++] = "-q";
    emu_args[n++] = "emu";
    emu_args[n++] = "-D";
    emu_args[n++] = "name=pv";
    emu_args[n++] = "-D";
    emu_args[n++] = "name=adhoc";
    for (i = 0; i < domains; i++) {
        char *spec = malloc(32);

        snprintf(spec, 32, "name=d%d", i);
        emu_args[n++] = "-D";
        emu_args[n++] = spec;
    }
    emu = fork();
    if (emu == 0) {
        execv(xenstats, emu_args);
        _exit(127);
    }
    snprintf(sock, sizeof(sock), "%s/control", dir);
    for (i = 0; i < 200 && access(sock, F_OK); i++)
        sleep_ms(25);
    host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    if (!host)
        die("the emulated host (is --xenstats right?)");

    printf("# bench_pv: PV stats against the ad-hoc xenstore way, one emulated host\n");
    bench_pv_vs_adhoc(host, rounds);
    bench_scale(host, domains, per_domain, scale_rounds);
    reap_all();
    xenstats_host_close(host);
    kill(emu, SIGTERM);
    waitpid(emu, NULL, 0);
    for (i = 8; i < n; i += 2)
        free(emu_args[i]);
    free(emu_args);
    rmdir(dir);
    return 0;
}
