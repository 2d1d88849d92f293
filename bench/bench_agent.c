/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent at scale: an emulated host with N domains (default 1000), each
 * with 4 vCPUs, 3 PV stats sets of 32 statistics, a vif and a vbd, sampled
 * every second.
 * Reports the agent's CPU share of one core, its resident memory (sampled
 * VmRSS and the kernel's VmHWM), and the time /metrics takes (the render,
 * unless the agent rendered the sample ahead, and the transfer over
 * loopback); plus the render time alone of a synthetic snapshot of the
 * same size.  docs: bench/README.md.
 *
 * With --baseline, the agent of another build (an earlier commit, say)
 * is measured next on the same host in the same run, and the ratios are
 * printed: these machines are too noisy for absolute figures alone.
 *
 * With --gzip, the scrapes alternate between plain and gzip (each the
 * first of its snapshot, so each pays its rendering and compression), and
 * the two are printed side by side with their ratios; the synthetic
 * snapshot's compression is timed in-process too.
 *
 *   bench_agent [--xenstats PATH] [--baseline PATH] [--domains N] [--seconds S] [--gzip]
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xenstats/pv.h>

#include "agent/web/http_encoding.h"
#include "emu/client.h"
#include "export/export.h"
#include "util/util.h"

#define SETS 3
#define STATS 32
#define PER_CHILD 100

static const char *xenstats = "./xenstats";
static bool gzip_mode;
static int prom_seconds = 90;
static volatile sig_atomic_t stop;

static void die(const char *what)
{
    fprintf(stderr, "bench_agent: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The unit's LimitNOFILE= (contrib/systemd): the agent holds ten descriptors a domain. */
#define UNIT_NOFILE 65536

static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    /* as the unit gives the agent, where we may (root): else up to the hard limit */
    if (rl.rlim_max < UNIT_NOFILE) {
        struct rlimit unit = {.rlim_cur = UNIT_NOFILE, .rlim_max = UNIT_NOFILE};

        if (setrlimit(RLIMIT_NOFILE, &unit) == 0)
            return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t tick;

static int refresh(struct xenstats_provider_set *set, void *userdata)
{
    unsigned int n = xenstats_provider_set_count(set);

    (void)userdata;
    tick++;
    for (unsigned int i = 0; i < n; i++)
        xenstats_provider_set_u64(set, i, tick + i);
    return 0;
}

/* Providers for domains first .. first+count-1, all in this process. */
static int child_providers(int first, int count)
{
    struct xenstats_provider **p = calloc((size_t)count, sizeof(*p));
    struct xenstats_host **h = calloc((size_t)count, sizeof(*h));
    int epfd = epoll_create1(0), ready = 0;
    long wait_ms = 50;
    char name[32], domid[16];

    signal(SIGTERM, on_term);
    raise_fd_limit();
    for (int i = 0; i < count; i++) {
        snprintf(domid, sizeof(domid), "%d", first + i);
        setenv("XENSTATS_EMU_DOMID", domid, 1);
        h[i] = xenstats_host_open(XENSTATS_BACKEND_EMU);
        if (!h[i])
            return 1;
    }
    /* The agent creates each domain's `stats` node when it tracks it. */
    while (ready < count && !stop) {
        for (int i = 0; i < count; i++) {
            if (p[i])
                continue;
            p[i] = xenstats_provider_new(h[i], "bench", NULL);
            if (!p[i])
                continue;
            for (int s = 0; s < SETS; s++) {
                struct xenstats_provider_set *set;

                snprintf(name, sizeof(name), "set%d", s);
                set = xenstats_provider_add_set(p[i], name, refresh, NULL);
                for (int k = 0; set && k < STATS; k++) {
                    snprintf(name, sizeof(name), "statistic_number_%d", k);
                    xenstats_provider_set_declare(set, name, XENSTATS_PV_U64);
                }
                if (!set || xenstats_provider_set_publish(set) < 0)
                    return 1;
            }
            struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
            epoll_ctl(epfd, EPOLL_CTL_ADD, xenstats_provider_fd(p[i]), &ev);
            ready++;
        }
        /* each try of a domain not set up yet is a new xenstore connection:
         * 4000 domains retried every 50 ms swamped the emulator, and the
         * agent's set-up waited behind them; a guest would wait longer */
        if (ready < count) {
            sleep_ms(wait_ms);
            wait_ms = wait_ms * 2 > 5000 ? 5000 : wait_ms * 2;
        }
    }
    while (!stop) {
        struct epoll_event evs[64];
        int n = epoll_wait(epfd, evs, 64, 200);

        for (int e = 0; e < n; e++)
            xenstats_provider_dispatch(p[evs[e].data.u32]);
    }
    return 0;
}

/* ---- measurement helpers ---------------------------------------------------- */

static double cpu_seconds(pid_t pid)
{
    char path[64], buf[1024];
    unsigned long ut = 0, st = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (fgets(buf, sizeof(buf), f)) {
        char *p = strrchr(buf, ')');

        if (p)
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    }
    fclose(f);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A "Vm...:" figure of /proc/PID/status in KiB: VmRSS now, VmHWM the most since exec. */
static long status_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    size_t n = strlen(field);
    long kb = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, " %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static long count_fds(pid_t pid)
{
    char path[64];
    struct dirent *de;
    long n = 0;
    DIR *d;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    d = opendir(path);
    while (d && (de = readdir(d)))
        n += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static long rss_kb(pid_t pid)
{
    return status_kb(pid, "VmRSS");
}

/*
 * GET path, asking for gzip when `gzip`; returns bytes received (headers
 * included), the time taken and the body's size.
 */
static long http_get_as(int port, const char *path, bool gzip, double *ret_ms, char **ret_body, long *ret_body_len)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    char req[256];
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    uint64_t t0 = monotonic_ns();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ssize_t n;

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        free(buf);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n", path,
                 gzip ? "Accept-Encoding: gzip\r\n" : "");
    if (write(fd, req, (size_t)n) != n)
        die("write");
    while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    close(fd);
    buf[len] = '\0';
    *ret_ms = (double)(monotonic_ns() - t0) / 1e6;
    if (ret_body_len) {
        const char *end = memmem(buf, len, "\r\n\r\n", 4);

        *ret_body_len = end ? (long)(len - (size_t)(end + 4 - buf)) : 0;
        if (gzip && !memmem(buf, end ? (size_t)(end - buf) : len, "Content-Encoding: gzip", 22))
            *ret_body_len = -1; /* not compressed: say so rather than measure it */
    }
    if (ret_body)
        *ret_body = buf;
    else
        free(buf);
    return (long)len;
}

/* The value of the sample line starting with `line` in a /metrics body; -1 when absent. */
static long metric_value(const char *body, const char *line)
{
    const char *p = body ? strstr(body, line) : NULL;

    return p ? atol(p + strlen(line)) : -1;
}

static long http_get(int port, const char *path, double *ret_ms, char **ret_body)
{
    return http_get_as(port, path, false, ret_ms, ret_body, NULL);
}

/* A synthetic snapshot of the same size, rendered in-process. */
static void bench_render(int domains)
{
    struct export_snapshot *s = export_snapshot_new();
    char name[64];
    double best_prom = 1e9, best_json = 1e9, best_gzip = 1e9;
    size_t prom_len = 0, gzip_len = 0;

    s->backend = "emu";
    s->nr_domains = (uint32_t)domains;
    s->domains = calloc((size_t)domains, sizeof(*s->domains));
    for (int d = 0; d < domains; d++) {
        struct export_domain *dom = &s->domains[d];

        dom->domid = (uint32_t)d + 1;
        snprintf(dom->name, sizeof(dom->name), "guest-%d", d);
        dom->nr_vcpus = 4;
        dom->vcpu_source = XENSTATS_VCPU_SOURCE_RESOURCE;
        dom->vcpus = calloc(4, sizeof(*dom->vcpus));
        for (int v = 0; v < 4; v++) {
            dom->vcpus[v].state = (uint8_t)(v % XENSTATS_VCPU_NR_RUNSTATES);
            for (int r = 0; r < XENSTATS_VCPU_NR_RUNSTATES; r++) {
                dom->vcpus[v].time_valid[r] = true;
                dom->vcpus[v].time_ns[r] = 123456789012ULL * (uint64_t)(r + 1);
            }
            dom->vcpus[v].changes_valid = true;
            dom->vcpus[v].changes = 424242;
        }
        dom->nr_sets = SETS;
        dom->sets = calloc(SETS, sizeof(*dom->sets));
        for (int k = 0; k < SETS; k++) {
            struct export_set *set = &dom->sets[k];

            snprintf(name, sizeof(name), "set%d", k);
            set->provider = strdup("bench");
            set->set = strdup(name);
            set->reason = strdup("");
            export_figs_set(&set->figs, EXPORT_FIG_PV_SET_SAMPLES, 1000);
            export_figs_set(&set->figs, EXPORT_FIG_PV_SET_TIMEOUTS, 0);
            export_figs_set(&set->figs, EXPORT_FIG_PV_SET_ERRORS, 0);
            export_figs_set(&set->figs, EXPORT_FIG_PV_SET_LATENCY, 0);
            export_figs_set(&set->figs, EXPORT_FIG_PV_SET_STATISTICS, STATS);
            set->nr_stats = STATS;
            set->stats = calloc(STATS, sizeof(*set->stats));
            for (int i = 0; i < STATS; i++) {
                snprintf(name, sizeof(name), "statistic_number_%d", i);
                set->stats[i].name = strdup(name);
                set->stats[i].type = XEN_PV_STATS_TYPE_U64;
                set->stats[i].valid = true;
                set->stats[i].v.u64 = 1234567890123ULL + (uint64_t)i;
            }
        }
    }
    for (int round = 0; round < 5; round++) {
        struct export_strbuf b = {0};
        uint64_t t = monotonic_ns();

        export_render_prometheus(s, false, &b);
        double ms = (double)(monotonic_ns() - t) / 1e6;
        if (ms < best_prom)
            best_prom = ms;
        prom_len = b.len;
        if (gzip_mode) {
            char *gz = NULL;

            t = monotonic_ns();
            if (http_gzip_snapshot(s, EXPORT_FORMAT_PROMETHEUS, &gz, &gzip_len) < 0)
                die("gzip");
            ms = (double)(monotonic_ns() - t) / 1e6;
            if (ms < best_gzip)
                best_gzip = ms;
            free(gz);
        }
        export_strbuf_free(&b);
        t = monotonic_ns();
        export_render_json(s, &b);
        ms = (double)(monotonic_ns() - t) / 1e6;
        if (ms < best_json)
            best_json = ms;
        export_strbuf_free(&b);
    }
    printf("render   synthetic %d domains: /metrics %.1f ms (%.1f MB), JSON %.1f ms (best of 5)\n", domains,
           best_prom, (double)prom_len / 1e6, best_json);
    if (gzip_mode)
        printf("gzip     synthetic %d domains: /metrics rendered and compressed in %.1f ms to %.3f MB (%.1fx smaller; best of 5)\n",
               domains, best_gzip, (double)gzip_len / 1e6, gzip_len ? (double)prom_len / (double)gzip_len : 0);
    export_snapshot_unref(s);
}

struct result {
    double cpu_idle, cpu_scraped, rss_mib, hwm_mib, mean_ms, worst_ms, mb;
    /* a sample a second and a gzip scrape every 15 s, as Prometheus does */
    double cpu_prometheus, prom_mean_ms, prom_worst_ms;
    int prom_scrapes;
    /* the same from the third on: the agent renders ahead once it knows the
     * scraper's period, the time between its last two requests */
    double prom_learnt_ms;
    int prom_learnt_scrapes;
    long fds; /* the agent's open descriptors */
    /* --gzip: the plain and gzip scrapes apart */
    double kind_mean_ms[2], kind_worst_ms[2];
    long kind_body[2];
    int kind_scrapes[2];
};

static const char *cpu_model(void)
{
    static char model[256] = "unknown";
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");

    while (f && fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');

        if (!strncmp(line, "model name", 10) && colon) {
            snprintf(model, sizeof(model), "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
    return model;
}

static void ratio_line(const char *what, double now, double base)
{
    printf("%-34s %12.1f %12.1f %7.2fx\n", what, now, base, base > 0 ? now / base : 0);
}

/* Start the agent `bin` on the running host, wait for every set, measure, stop it. */
static int measure(const char *bin, int port, int domains, int seconds, struct result *r)
{
    char listen_arg[64];
    pid_t agent;
    int i;

    memset(r, 0, sizeof(*r));
    snprintf(listen_arg, sizeof(listen_arg), "127.0.0.1:%d", port);
    printf("# agent: %s\n", bin);
    fflush(stdout);
    agent = fork();
    if (agent == 0) {
        execl(bin, bin, "-q", "agent", "--listen", listen_arg, "--interval", "1s", NULL);
        _exit(127);
    }
    /*
     * Wait until every set is live in the agent's view: active, or being
     * sampled when the snapshot was taken (on a loaded machine some
     * answers come after the round's half interval).  Every 2 s: each
     * look renders the whole /metrics.
     */
    /* new domains are attached a share of each round at a time (docs/collector.md): 4000 take minutes */
    uint64_t started = monotonic_ns();
    int tries = 300 + domains / 2;

    for (i = 0; i < tries; i++) {
        char *body = NULL;
        double ms;
        long active = -1, sampling = 0, pending = -1;

        sleep_ms(2000);
        if (http_get(port, "/metrics", &ms, &body) > 0) {
            active = metric_value(body, "xenstats_agent_pv_sets{state=\"active\"} ");
            sampling = metric_value(body, "xenstats_agent_pv_sets{state=\"sampling\"} ");
            pending = metric_value(body, "\nxenstats_agent_pv_domains_pending ");
        }
        free(body);
        if (active >= 0 && active + sampling >= (long)domains * SETS)
            break;
        if (i % 10 == 9)
            fprintf(stderr, "bench_agent: %ld of %d sets active, %ld being sampled, %ld domains to attach\n", active,
                    domains * SETS, sampling, pending);
    }
    printf("agent    every set live %.0f s after the start\n", (double)(monotonic_ns() - started) / 1e9);
    if (i == tries) {
        fprintf(stderr, "bench_agent: the sets never all became active\n");
        kill(agent, SIGTERM);
        waitpid(agent, NULL, 0);
        return -1;
    }
    double cpu0, cpu1, sum = 0;
    uint64_t t0, t1;
    long peak = 0, bytes = 0;
    int scrapes = 0;

    /*
     * First a scrape every second, the worst case of a scraper, for the
     * GET times; for 70 s at least, past the 64th sample of every set:
     * until then the PV monitor also checks the sets' name pages after
     * samples 4, 8, 16, 32 and 64 (docs/pv-stats.md), a cost of start-up
     * kept out of the figures below, which are the agent's steady state.
     */
    cpu0 = cpu_seconds(agent);
    t0 = monotonic_ns();
    while (monotonic_ns() - t0 < (uint64_t)(seconds > 70 ? seconds : 70) * 1000000000ULL) {
        double ms;
        long kb = rss_kb(agent), body = 0;
        int kind = gzip_mode ? scrapes % 2 : 0;

        sleep_ms(1000);
        bytes = http_get_as(port, "/metrics", kind == 1, &ms, NULL, &body);
        if (bytes > 0) {
            sum += ms;
            r->worst_ms = ms > r->worst_ms ? ms : r->worst_ms;
            scrapes++;
            r->kind_mean_ms[kind] += ms;
            r->kind_worst_ms[kind] = ms > r->kind_worst_ms[kind] ? ms : r->kind_worst_ms[kind];
            r->kind_body[kind] = body;
            r->kind_scrapes[kind]++;
        }
        if (kb > peak)
            peak = kb;
    }
    t1 = monotonic_ns();
    cpu1 = cpu_seconds(agent);
    r->cpu_scraped = 100.0 * (cpu1 - cpu0) / ((double)(t1 - t0) / 1e9);
    r->rss_mib = (double)peak / 1024.0;
    r->mean_ms = scrapes ? sum / scrapes : 0;
    r->mb = (double)(gzip_mode && r->kind_scrapes[0] ? r->kind_body[0] : bytes) / 1e6; /* plain */
    /* the kernel's own peak, between our samples of VmRSS and since start-up too */
    r->hwm_mib = (double)status_kb(agent, "VmHWM") / 1024.0;
    printf("agent    with a scrape every second (the first minute): CPU %.1f%% of one core; RSS peak %.1f MiB (goal <= 64 MiB), "
           "high-water mark %.1f MiB\n",
           r->cpu_scraped, r->rss_mib, r->hwm_mib);
    printf("scrape   GET /metrics (%.1f MB): mean %.1f ms, worst %.1f ms over %d scrapes (goal <= 50 ms mean)\n",
           r->mb, r->mean_ms, r->worst_ms, scrapes);
    fflush(stdout); /* a phase ends: whoever follows the log (a profiler) sees it now */

    /* sampling alone: what the agent costs between scrapes */
    cpu0 = cpu_seconds(agent);
    t0 = monotonic_ns();
    while (monotonic_ns() - t0 < (uint64_t)seconds * 1000000000ULL) {
        long kb = rss_kb(agent);

        if (kb > peak)
            peak = kb;
        sleep_ms(500);
    }
    t1 = monotonic_ns();
    cpu1 = cpu_seconds(agent);
    r->cpu_idle = 100.0 * (cpu1 - cpu0) / ((double)(t1 - t0) / 1e9);
    printf("agent    sampling only: CPU %.1f%% of one core over %d s\n", r->cpu_idle, seconds);
    fflush(stdout); /* a phase ends: whoever follows the log (a profiler) sees it now */
    r->fds = count_fds(agent);
    /*
     * A sample a second and a gzip scrape every 15 s, mid-way through each
     * 15 s: at fixed times, as Prometheus' scrape loop keeps them (its
     * ticker does not drift by the time a scrape takes, and the agent's
     * render ahead relies on that period).
     */
    cpu0 = cpu_seconds(agent);
    t0 = monotonic_ns();
    for (int k = 0; k < prom_seconds / 15; k++) {
        uint64_t at = t0 + (15000ULL * (uint64_t)k + 7500) * 1000000ULL, now = monotonic_ns();
        double ms;
        long body = 0, kb;

        if (at > now)
            sleep_ms((long)((at - now) / 1000000ULL));
        if (http_get_as(port, "/metrics", true, &ms, NULL, &body) > 0) {
            r->prom_mean_ms += ms;
            r->prom_worst_ms = ms > r->prom_worst_ms ? ms : r->prom_worst_ms;
            if (k >= 2) {
                r->prom_learnt_ms += ms;
                r->prom_learnt_scrapes++;
            }
            r->prom_scrapes++;
        }
        kb = rss_kb(agent);
        if (kb > peak)
            peak = kb;
    }
    /* to the end of the last 15 s */
    if (t0 + (uint64_t)(prom_seconds / 15) * 15000000000ULL > monotonic_ns())
        sleep_ms((long)((t0 + (uint64_t)(prom_seconds / 15) * 15000000000ULL - monotonic_ns()) / 1000000ULL));
    t1 = monotonic_ns();
    cpu1 = cpu_seconds(agent);
    r->cpu_prometheus = 100.0 * (cpu1 - cpu0) / ((double)(t1 - t0) / 1e9);
    if (r->prom_scrapes)
        r->prom_mean_ms /= r->prom_scrapes;
    if (r->prom_learnt_scrapes)
        r->prom_learnt_ms /= r->prom_learnt_scrapes;
    printf("agent    a sample every second, a gzip scrape every 15 s: CPU %.1f%% of one core over %d s (goal <= 3%%); "
           "GET gzip mean %.1f ms, worst %.1f ms over %d scrapes; from the third (period learnt) mean %.1f ms over %d "
           "(goal <= 20 ms); %ld descriptors open\n",
           r->cpu_prometheus, prom_seconds, r->prom_mean_ms, r->prom_worst_ms, r->prom_scrapes, r->prom_learnt_ms,
           r->prom_learnt_scrapes, r->fds);
    for (int k = 0; k < 2; k++)
        if (r->kind_scrapes[k])
            r->kind_mean_ms[k] /= r->kind_scrapes[k];
    if (gzip_mode) {
        const long *b = r->kind_body;

        printf("\n%-34s %12s %12s %8s\n", "/metrics, same agent, same run", "plain", "gzip", "ratio");
        printf("%-34s %12ld %12ld %7.1fx\n", "body size (bytes)", b[0], b[1],
               b[1] > 0 ? (double)b[0] / (double)b[1] : 0);
        printf("%-34s %12.1f %12.1f %7.2fx\n", "GET /metrics mean (ms)", r->kind_mean_ms[0], r->kind_mean_ms[1],
               r->kind_mean_ms[0] > 0 ? r->kind_mean_ms[1] / r->kind_mean_ms[0] : 0);
        printf("%-34s %12.1f %12.1f %7.2fx\n", "GET /metrics worst (ms)", r->kind_worst_ms[0], r->kind_worst_ms[1],
               r->kind_worst_ms[0] > 0 ? r->kind_worst_ms[1] / r->kind_worst_ms[0] : 0);
        printf("%-34s %12d %12d\n", "scrapes", r->kind_scrapes[0], r->kind_scrapes[1]);
        if (b[1] < 0)
            printf("(the agent did not compress: an agent without gzip?)\n");
    }
    /* the whole run's */
    r->rss_mib = (double)peak / 1024.0;
    r->hwm_mib = (double)status_kb(agent, "VmHWM") / 1024.0;
    printf("agent    RSS over the whole run: peak %.1f MiB (goal <= 64 MiB), high-water mark %.1f MiB\n", r->rss_mib,
           r->hwm_mib);
    fflush(stdout);
    kill(agent, SIGTERM);
    waitpid(agent, NULL, 0);
    return 0;
}

/* One small file read whole (as a reader of sysfs must: open, read, close); its length or -1. */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t cap)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = read(fd, buf, cap);
    close(fd);
    return n;
}

static double thread_cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The files of the devices the last listing found, kept open for the second way. */
struct floor_files {
    int *fds;
    size_t nr, cap;
};

/*
 * One round of reading the guests' device counters: the files any reader
 * of dom0's sysfs reads for these figures (xentop's libxenstat reads the
 * same), on the emulated host's tree of the same shape: the devices'
 * listing, the interface table, each vbd's seven statistics files and each
 * vif's netback statistics (one SIOCETHTOOL on Xen, one file here).  With
 * `held` NULL each file is opened, read and closed; else as the agent
 * reads them: kept open (opened in the first round) and read with
 * pread(), the listing and the table as before.  The count of files.
 */
static long floor_round(const char *run_dir, struct floor_files *held)
{
    static const char *const vbd_names[] = {"oo_req", "rd_req", "wr_req", "f_req", "ds_req", "rd_sect", "wr_sect"};
    static char table[8 << 20];
    char path[PATH_MAX], buf[256];
    bool first = held && held->nr == 0;
    size_t at = 0;
    struct dirent *de;
    long files = 0;
    int root = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d;

    if (root < 0)
        die("open run directory");
    if (read_small(root, "proc/net/dev", table, sizeof(table)) > 0)
        files++;
    snprintf(path, sizeof(path), "%s/sys/bus/xen-backend/devices", run_dir);
    d = opendir(path);
    if (!d)
        die("opendir devices");
    while ((de = readdir(d))) {
        unsigned int domid, devid;
        bool vbd = sscanf(de->d_name, "vbd-%u-%u", &domid, &devid) == 2;
        size_t nr = vbd ? 7 : 1;

        if (!vbd && sscanf(de->d_name, "vif-%u-%u", &domid, &devid) != 2)
            continue;
        if (held && !first) {
            for (size_t k = 0; k < nr && at < held->nr; k++, at++)
                files += pread(held->fds[at], buf, sizeof(buf), 0) >= 0;
            continue;
        }
        for (size_t k = 0; k < nr; k++) {
            if (vbd)
                snprintf(path, sizeof(path), "sys/bus/xen-backend/devices/%s/statistics/%s", de->d_name, vbd_names[k]);
            else
                snprintf(path, sizeof(path), "sys/class/net/vif%u.%u/ethtool", domid, devid);
            if (!held) {
                files += read_small(root, path, buf, sizeof(buf)) >= 0;
                continue;
            }
            if (held->nr == held->cap) {
                held->cap = held->cap ? held->cap * 2 : 1024;
                held->fds = realloc(held->fds, held->cap * sizeof(*held->fds));
                if (!held->fds)
                    die("realloc");
            }
            held->fds[held->nr] = openat(root, path, O_RDONLY | O_CLOEXEC);
            files += held->fds[held->nr] >= 0 && pread(held->fds[held->nr], buf, sizeof(buf), 0) >= 0;
            held->nr++;
        }
    }
    closedir(d);
    close(root);
    return files;
}

/*
 * The floor both ways, a round a second for `seconds`, the two ways taking
 * turns so that both see the same machine; each one's CPU share of a core.
 */
static void devices_floor(const char *run_dir, int seconds, double *ret_opened, double *ret_held, long *ret_files)
{
    struct floor_files held = {0};
    double cpu[2] = {0, 0}, t;
    int rounds[2] = {0, 0};

    floor_round(run_dir, &held); /* opens them: not counted */
    for (int i = 0; i < seconds; i++) {
        int way = i % 2;

        t = thread_cpu_s();
        *ret_files = floor_round(run_dir, way ? &held : NULL);
        cpu[way] += thread_cpu_s() - t;
        rounds[way]++;
        sleep_ms(1000);
    }
    for (size_t k = 0; k < held.nr; k++)
        if (held.fds[k] >= 0)
            close(held.fds[k]);
    free(held.fds);
    /* a round a second: the CPU of a round is its share of a core */
    *ret_opened = rounds[0] ? 100.0 * cpu[0] / rounds[0] : 0;
    *ret_held = rounds[1] ? 100.0 * cpu[1] / rounds[1] : 0;
}

static void ignore_line(const char *line, void *data)
{
    (void)line;
    (void)data;
}

/* The domains first..last (numbered from 1) with their devices, and their providers' children. */
static void add_domains(int first, int last, const char *self, pid_t *children, int *nr_children)
{
    /* what `xenstats emu create` sends, from here: a process a domain
     * made 4000 domains take a quarter of an hour on a loaded machine */
    for (int i = first; i <= last; i++) {
        char req[128], err[256];

        snprintf(req, sizeof(req), "create name=g%d,vcpus=4,vifs=1,vbds=1,workload=%s", i - 1,
                 (i - 1) % 3 == 0 ? "io" : "idle");
        if (emu_control_call(req, ignore_line, NULL, err, sizeof(err)) < 0) {
            fprintf(stderr, "bench_agent: emu create: %s\n", err);
            exit(1);
        }
    }
    for (int i = first; i <= last; i += PER_CHILD) {
        char from[16], count[16];
        pid_t pid;

        snprintf(from, sizeof(from), "%d", i);
        snprintf(count, sizeof(count), "%d", last + 1 - i < PER_CHILD ? last + 1 - i : PER_CHILD);
        pid = fork();
        if (pid == 0) {
            execl(self, self, "--child-providers", from, count, NULL);
            _exit(127);
        }
        children[(*nr_children)++] = pid;
    }
}

struct scale {
    int domains;
    struct result now, base;
    bool ok, base_ok;
    double floor_opened, floor_held;
    long floor_files;
};

static void print_scales(const struct scale *sc, int n, bool baseline)
{
    printf("\n# the agent against the number of domains, same host, same run (%% of one core; per 1000 domains: the "
           "share divided by the thousands of domains; growth: that against the first row's)\n");
    printf("%-8s %9s %9s %8s %9s %9s %8s %9s %9s %9s %9s %8s %8s %8s %6s\n", "domains", "sampling", "per 1000",
           "growth", "+15s scr", "per 1000", "growth", "CPU ms", "RSS MiB", "gzip ms", "gzip ms", "plain ms", "floor",
           "floor", "fds");
    printf("%-8s %9s %9s %8s %9s %9s %8s %9s %9s %9s %9s %8s %8s %8s %6s\n", "", "only %", "", "", "CPU %", "", "",
           "a scrape", "peak", "15s GET", "learnt", "1s GET", "opened %", "pread %", "");
    for (int k = 0; k < n; k++) {
        const struct result *r = &sc[k].now;
        double per = r->cpu_idle * 1000.0 / sc[k].domains, per0 = sc[0].now.cpu_idle * 1000.0 / sc[0].domains;
        double pp = r->cpu_prometheus * 1000.0 / sc[k].domains,
               pp0 = sc[0].now.cpu_prometheus * 1000.0 / sc[0].domains;

        if (!sc[k].ok)
            continue;
        printf("%-8d %9.2f %9.2f %7.2fx %9.2f %9.2f %7.2fx %9.1f %9.1f %9.1f %9.1f %8.1f %8.2f %8.2f %6ld\n",
               sc[k].domains, r->cpu_idle, per, per0 > 0 ? per / per0 : 0, r->cpu_prometheus, pp,
               pp0 > 0 ? pp / pp0 : 0,
               r->prom_scrapes ? (r->cpu_prometheus - r->cpu_idle) * 10.0 * prom_seconds / r->prom_scrapes : 0,
               r->rss_mib, r->prom_mean_ms, r->prom_learnt_ms, r->kind_mean_ms[0], sc[k].floor_opened,
               sc[k].floor_held, r->fds);
    }
    if (!baseline)
        return;
    for (int k = 0; k < n; k++) {
        const struct result *now = &sc[k].now, *base = &sc[k].base;

        if (!sc[k].ok || !sc[k].base_ok)
            continue;
        printf("\n%-40s %12s %12s %8s\n", "same host, same run", "this", "baseline", "ratio");
        printf("%-40s %12d\n", "domains", sc[k].domains);
        ratio_line("CPU, sampling only (% of a core)", now->cpu_idle, base->cpu_idle);
        ratio_line("CPU, + a gzip scrape every 15 s (%)", now->cpu_prometheus, base->cpu_prometheus);
        ratio_line("CPU, a scrape a second (%)", now->cpu_scraped, base->cpu_scraped);
        ratio_line("RSS peak (MiB)", now->rss_mib, base->rss_mib);
        ratio_line("RSS high-water, VmHWM (MiB)", now->hwm_mib, base->hwm_mib);
        ratio_line("GET /metrics gzip, 15 s apart, mean (ms)", now->prom_mean_ms, base->prom_mean_ms);
        ratio_line("the same, period learnt (ms)", now->prom_learnt_ms, base->prom_learnt_ms);
        ratio_line("GET /metrics mean (ms)", now->mean_ms, base->mean_ms);
        ratio_line("GET /metrics worst (ms)", now->worst_ms, base->worst_ms);
        ratio_line("/metrics size (MB)", now->mb, base->mb);
    }
}

int main(int argc, char **argv)
{
    int domains = 1000, seconds = 30, port, i, nr_scales = 0, created = 0;
    char dir[] = "/tmp/xenstats-bench-agent-XXXXXX", sock[PATH_MAX], self[PATH_MAX];
    const char *baseline = NULL, *scales_arg = NULL;
    struct scale scales[8];
    pid_t emu, children[64];
    int nr_children = 0;
    ssize_t n;

    if (argc == 4 && !strcmp(argv[1], "--child-providers"))
        return child_providers(atoi(argv[2]), atoi(argv[3]));
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xenstats") && i + 1 < argc)
            xenstats = argv[++i];
        else if (!strcmp(argv[i], "--domains") && i + 1 < argc)
            domains = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scales") && i + 1 < argc)
            scales_arg = argv[++i];
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scrape-seconds") && i + 1 < argc)
            prom_seconds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--baseline") && i + 1 < argc)
            baseline = argv[++i];
        else if (!strcmp(argv[i], "--gzip"))
            gzip_mode = true;
        else {
            fprintf(stderr, "usage: bench_agent [--xenstats PATH] [--baseline PATH] [--domains N | --scales N,N,...] "
                            "[--seconds S] [--scrape-seconds S] [--gzip]\n");
            return 2;
        }
    }
    memset(scales, 0, sizeof(scales));
    if (scales_arg) {
        for (const char *p = scales_arg; *p && nr_scales < 8; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
            scales[nr_scales++].domains = atoi(p);
    } else {
        scales[nr_scales++].domains = domains;
    }
    for (i = 0; i < nr_scales; i++)
        if (scales[i].domains < 1 || scales[i].domains > 4000 || (i && scales[i].domains <= scales[i - 1].domains)) {
            fprintf(stderr, "bench_agent: scales go up, from 1 to 4000 domains\n");
            return 2;
        }
    if (seconds < 5 || prom_seconds < 15)
        return 2;
    raise_fd_limit();
    printf("# bench_agent: %s domains x 4 vCPUs x %d sets of %d statistics, 1 vif and 1 vbd, sampled every 1 s\n",
           scales_arg ? scales_arg : "", SETS, STATS);
    if (!scales_arg)
        printf("# %d domains\n", domains);
    printf("# CPU: %s (%ld online)\n", cpu_model(), sysconf(_SC_NPROCESSORS_ONLN));
    fflush(stdout);

    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0)
        die("readlink");
    self[n] = '\0'; /* readlink() ends nothing */
    if (!mkdtemp(dir))
        die("mkdtemp");
    setenv("XENSTATS_EMU_DIR", dir, 1);
    unsetenv("XENSTATS_EMU_DOMID");
    emu = fork();
    if (emu == 0) {
        /* 1T: 4000 domains of 128 MiB (the default 256G holds 2000) */
        execl(xenstats, xenstats, "-q", "emu", "-p", "8", "--tick", "50ms", "--memory", "1T", NULL);
        _exit(127);
    }
    snprintf(sock, sizeof(sock), "%s/control", dir);
    for (i = 0; i < 400 && access(sock, F_OK); i++)
        sleep_ms(25);
    port = 20000 + (int)(getpid() % 20000);
    for (int k = 0; k < nr_scales; k++) {
        struct scale *sc = &scales[k];

        printf("\n## %d domains\n", sc->domains);
        bench_render(sc->domains);
        fflush(stdout);
        add_domains(created + 1, sc->domains, self, children, &nr_children);
        created = sc->domains;
        sc->ok = measure(xenstats, port + 2 * k, sc->domains, seconds, &sc->now) == 0;
        sc->base_ok = sc->ok && baseline && measure(baseline, port + 2 * k + 1, sc->domains, seconds, &sc->base) == 0;
        devices_floor(dir, seconds, &sc->floor_opened, &sc->floor_held, &sc->floor_files);
        printf("floor    the device files alone (%ld a round), a round a second, the two ways taking turns: "
               "opened, read and closed %.2f%% of one core; kept open and read with pread() %.2f%% (%.2fx)\n",
               sc->floor_files, sc->floor_opened, sc->floor_held,
               sc->floor_opened > 0 ? sc->floor_held / sc->floor_opened : 0);
        fflush(stdout);
    }
    print_scales(scales, nr_scales, baseline != NULL);
    for (i = 0; i < nr_children; i++)
        kill(children[i], SIGTERM);
    for (i = 0; i < nr_children; i++)
        waitpid(children[i], NULL, 0);
    kill(emu, SIGTERM);
    waitpid(emu, NULL, 0);
    rmdir(dir);
    return 0;
}
