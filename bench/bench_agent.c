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
#include "export/export.h"
#include "util/util.h"

#define SETS 3
#define STATS 32
#define PER_CHILD 100

static const char *xenstats = "./xenstats";
static bool gzip_mode;
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

static void raise_fd_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
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
        if (ready < count)
            sleep_ms(50);
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

static long http_get(int port, const char *path, double *ret_ms, char **ret_body)
{
    return http_get_as(port, path, false, ret_ms, ret_body, NULL);
}

/* A synthetic snapshot of the same size, rendered in-process. */
static void bench_render(int domains)
{
    struct snapshot *s = snapshot_new();
    char name[64];
    double best_prom = 1e9, best_json = 1e9, best_gzip = 1e9;
    size_t prom_len = 0, gzip_len = 0;

    s->backend = "emu";
    s->nr_domains = (uint32_t)domains;
    s->domains = calloc((size_t)domains, sizeof(*s->domains));
    for (int d = 0; d < domains; d++) {
        struct snap_domain *dom = &s->domains[d];

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
            struct snap_set *set = &dom->sets[k];

            snprintf(name, sizeof(name), "set%d", k);
            set->provider = strdup("bench");
            set->set = strdup(name);
            set->reason = strdup("");
            set->samples = 1000;
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
        struct strbuf b = {0};
        uint64_t t = monotonic_ns();

        render_prometheus(s, false, &b);
        double ms = (double)(monotonic_ns() - t) / 1e6;
        if (ms < best_prom)
            best_prom = ms;
        prom_len = b.len;
        if (gzip_mode) {
            char *gz = NULL;

            t = monotonic_ns();
            if (http_gzip_snapshot(s, RENDER_PROMETHEUS, &gz, &gzip_len) < 0)
                die("gzip");
            ms = (double)(monotonic_ns() - t) / 1e6;
            if (ms < best_gzip)
                best_gzip = ms;
            free(gz);
        }
        strbuf_free(&b);
        t = monotonic_ns();
        render_json(s, &b);
        ms = (double)(monotonic_ns() - t) / 1e6;
        if (ms < best_json)
            best_json = ms;
        strbuf_free(&b);
    }
    printf("render   synthetic %d domains: /metrics %.1f ms (%.1f MB), JSON %.1f ms (best of 5)\n", domains,
           best_prom, (double)prom_len / 1e6, best_json);
    if (gzip_mode)
        printf("gzip     synthetic %d domains: /metrics rendered and compressed in %.1f ms to %.3f MB (%.1fx smaller; best of 5)\n",
               domains, best_gzip, (double)gzip_len / 1e6, gzip_len ? (double)prom_len / (double)gzip_len : 0);
    snapshot_unref(s);
}

struct result {
    double cpu_idle, cpu_scraped, rss_mib, hwm_mib, mean_ms, worst_ms, mb;
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
    /* wait until every set is active in the agent's view */
    for (i = 0; i < 600; i++) {
        char *body = NULL;
        double ms;
        const char *p;
        long active = -1;

        sleep_ms(500);
        if (http_get(port, "/metrics", &ms, &body) > 0 && (p = strstr(body, "xenstats_agent_pv_sets{state=\"active\"} ")))
            active = atol(p + strlen("xenstats_agent_pv_sets{state=\"active\"} "));
        free(body);
        if (active >= (long)domains * SETS)
            break;
        if (i % 20 == 19)
            fprintf(stderr, "bench_agent: %ld of %d sets active\n", active, domains * SETS);
    }
    if (i == 600) {
        fprintf(stderr, "bench_agent: the sets never all became active\n");
        kill(agent, SIGTERM);
        waitpid(agent, NULL, 0);
        return -1;
    }
    double cpu0, cpu1, sum = 0;
    uint64_t t0, t1;
    long peak = 0, bytes = 0;
    int scrapes = 0;

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
    printf("agent    sampling only: CPU %.1f%% of one core over %d s (goal <= 3%%)\n", r->cpu_idle, seconds);
    /* then a scrape every second, the worst case of a scraper */
    cpu0 = cpu_seconds(agent);
    t0 = monotonic_ns();
    while (monotonic_ns() - t0 < (uint64_t)seconds * 1000000000ULL) {
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
    printf("agent    with a scrape every second: CPU %.1f%% of one core; RSS peak %.1f MiB (goal <= 64 MiB), "
           "high-water mark %.1f MiB\n",
           r->cpu_scraped, r->rss_mib, r->hwm_mib);
    printf("scrape   GET /metrics (%.1f MB): mean %.1f ms, worst %.1f ms over %d scrapes (goal <= 50 ms mean)\n",
           r->mb, r->mean_ms, r->worst_ms, scrapes);
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

/*
 * The floor of reading the guests' device counters: what any reader of
 * dom0's sysfs (xentop's libxenstat, or the agent) must do each round,
 * here on the emulated host's tree of the same shape: each vbd's seven
 * statistics files, the interface table once, and each vif's netback
 * statistics (one SIOCETHTOOL on Xen, one file here).  Done by this
 * process once a second for `seconds`; its CPU share of one core.
 */
static double devices_floor(const char *run_dir, int seconds, long *ret_files)
{
    static const char *const vbd_names[] = {"oo_req", "rd_req", "wr_req", "f_req", "ds_req", "rd_sect", "wr_sect"};
    static char table[8 << 20];
    char path[PATH_MAX], buf[256];
    struct timespec c0, c1;
    uint64_t t0;
    long files = 0;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    t0 = monotonic_ns();
    while (monotonic_ns() - t0 < (uint64_t)seconds * 1000000000ULL) {
        DIR *d;
        struct dirent *de;
        int root = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        files = 0;
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
            int dirfd;

            if (sscanf(de->d_name, "vbd-%u-%u", &domid, &devid) == 2) {
                snprintf(path, sizeof(path), "%s/sys/bus/xen-backend/devices/%s/statistics", run_dir, de->d_name);
                dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                for (size_t k = 0; dirfd >= 0 && k < sizeof(vbd_names) / sizeof(vbd_names[0]); k++)
                    files += read_small(dirfd, vbd_names[k], buf, sizeof(buf)) >= 0;
                if (dirfd >= 0)
                    close(dirfd);
            } else if (sscanf(de->d_name, "vif-%u-%u", &domid, &devid) == 2) {
                snprintf(path, sizeof(path), "sys/class/net/vif%u.%u/ethtool", domid, devid);
                files += read_small(root, path, buf, sizeof(buf)) >= 0;
            }
        }
        closedir(d);
        close(root);
        sleep_ms(1000 - (int)((monotonic_ns() - t0) / 1000000 % 1000));
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    *ret_files = files;
    return 100.0 * ((double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9) /
           ((double)(monotonic_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
    int domains = 1000, seconds = 30, port, i;
    char dir[] = "/tmp/xenstats-bench-agent-XXXXXX", sock[PATH_MAX], self[PATH_MAX];
    const char *baseline = NULL;
    struct result now, base;
    pid_t emu, children[64];
    int nr_children = 0;

    if (argc == 4 && !strcmp(argv[1], "--child-providers"))
        return child_providers(atoi(argv[2]), atoi(argv[3]));
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xenstats") && i + 1 < argc)
            xenstats = argv[++i];
        else if (!strcmp(argv[i], "--domains") && i + 1 < argc)
            domains = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--baseline") && i + 1 < argc)
            baseline = argv[++i];
        else if (!strcmp(argv[i], "--gzip"))
            gzip_mode = true;
        else {
            fprintf(stderr, "usage: bench_agent [--xenstats PATH] [--baseline PATH] [--domains N] [--seconds S] "
                            "[--gzip]\n");
            return 2;
        }
    }
    if (domains < 1 || domains > 4000 || seconds < 5)
        return 2;
    raise_fd_limit();
    printf("# bench_agent: %d domains x 4 vCPUs x %d sets of %d statistics, 1 vif and 1 vbd, sampled every 1 s\n",
           domains, SETS, STATS);
    printf("# CPU: %s (%ld online)\n", cpu_model(), sysconf(_SC_NPROCESSORS_ONLN));
    bench_render(domains);
    fflush(stdout);

    if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
        die("readlink");
    self[sizeof(self) - 1] = '\0';
    if (!mkdtemp(dir))
        die("mkdtemp");
    setenv("XENSTATS_EMU_DIR", dir, 1);
    unsetenv("XENSTATS_EMU_DOMID");
    emu = fork();
    if (emu == 0) {
        execl(xenstats, xenstats, "-q", "emu", "-p", "8", "--tick", "50ms", NULL);
        _exit(127);
    }
    snprintf(sock, sizeof(sock), "%s/control", dir);
    for (i = 0; i < 400 && access(sock, F_OK); i++)
        sleep_ms(25);
    /* domains through the control socket, in batches of one command each */
    for (i = 0; i < domains; i++) {
        char cmd[PATH_MAX + 64];

        snprintf(cmd, sizeof(cmd), "%s emu create name=g%d,vcpus=4,vifs=1,vbds=1,workload=%s >/dev/null", xenstats, i,
                 i % 3 == 0 ? "io" : "idle");
        if (system(cmd) != 0)
            die("emu create");
    }
    for (i = 0; i < domains; i += PER_CHILD) {
        char first[16], count[16];
        pid_t pid;

        snprintf(first, sizeof(first), "%d", i + 1);
        snprintf(count, sizeof(count), "%d", domains - i < PER_CHILD ? domains - i : PER_CHILD);
        pid = fork();
        if (pid == 0) {
            execl(self, self, "--child-providers", first, count, NULL);
            _exit(127);
        }
        children[nr_children++] = pid;
    }
    port = 20000 + (int)(getpid() % 20000);
    if (measure(xenstats, port, domains, seconds, &now) == 0 && baseline &&
        measure(baseline, port + 1, domains, seconds, &base) == 0) {
        printf("\n%-34s %12s %12s %8s\n", "same host, same run", "this", "baseline", "ratio");
        ratio_line("CPU, sampling only (% of a core)", now.cpu_idle, base.cpu_idle);
        ratio_line("CPU, a scrape a second (%)", now.cpu_scraped, base.cpu_scraped);
        ratio_line("RSS peak (MiB)", now.rss_mib, base.rss_mib);
        ratio_line("RSS high-water, VmHWM (MiB)", now.hwm_mib, base.hwm_mib);
        ratio_line("GET /metrics mean (ms)", now.mean_ms, base.mean_ms);
        ratio_line("GET /metrics worst (ms)", now.worst_ms, base.worst_ms);
        ratio_line("/metrics size (MB)", now.mb, base.mb);
    }
    {
        long files = 0;
        double floor = devices_floor(dir, seconds, &files);

        printf("floor    the device counters alone, read once a second as any reader of dom0's sysfs must "
               "(%ld files a round): CPU %.1f%% of one core\n",
               files, floor);
    }
    for (i = 0; i < nr_children; i++)
        kill(children[i], SIGTERM);
    for (i = 0; i < nr_children; i++)
        waitpid(children[i], NULL, 0);
    kill(emu, SIGTERM);
    waitpid(emu, NULL, 0);
    rmdir(dir);
    return 0;
}
