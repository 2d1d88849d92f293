/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A complete, small PV stats provider: run it in a guest and the toolstack
 * domain's monitor (`xenstats agent`, `xenstats pv`) sees the set
 * "Example #0" / "Counters".  Build against an installed libxenstats:
 *
 *   cc -o pv-provider pv-provider.c $(pkg-config --cflags --libs libxenstats)
 *
 * It publishes four statistics, refreshes them whenever the monitor asks
 * for a sample, and withdraws cleanly on Ctrl-C or SIGTERM.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenstats/pv_provider.h>

static volatile sig_atomic_t stop;

struct counters {
    uint64_t samples;
    int uptime, load, samples_idx, host;
};

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Called on every sample request: set every value, then return 0. */
static int refresh(struct xenstats_provider_set *set, void *userdata)
{
    struct counters *c = userdata;
    struct timespec ts;
    double load = 0;
    FILE *f;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = 0;
        fclose(f);
    }
    xenstats_provider_set_s64(set, c->uptime, (int64_t)ts.tv_sec);
    xenstats_provider_set_double(set, c->load, load);
    xenstats_provider_set_u64(set, c->samples_idx, ++c->samples);
    return 0;
}

int main(void)
{
    struct xenstats_host *host;
    struct xenstats_provider *provider;
    struct xenstats_provider_set *set;
    struct counters c = {0};
    char hostname[64] = "unknown";
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    host = xenstats_host_open(XENSTATS_BACKEND_AUTO);
    if (!host) {
        fprintf(stderr, "pv-provider: no Xen host: %s\n", strerror(errno));
        return 1;
    }
    provider = xenstats_provider_new(host, "Example #0", NULL);
    if (!provider) {
        fprintf(stderr, "pv-provider: %s (is the domain monitored?)\n", strerror(errno));
        xenstats_host_close(host);
        return 1;
    }
    set = xenstats_provider_add_set(provider, "Counters", refresh, &c);
    c.uptime = xenstats_provider_set_declare(set, "uptime_seconds", XENSTATS_PV_S64);
    c.load = xenstats_provider_set_declare(set, "load1", XENSTATS_PV_DOUBLE);
    c.samples_idx = xenstats_provider_set_declare(set, "samples_answered", XENSTATS_PV_U64);
    c.host = xenstats_provider_set_declare(set, "hostname", XENSTATS_PV_ASCII);
    gethostname(hostname, sizeof(hostname) - 1);
    /* Values that never change can be set once, before publishing. */
    if (xenstats_provider_set_ascii(set, c.host, hostname) < 0)
        xenstats_provider_set_ascii(set, c.host, "unprintable");
    if (xenstats_provider_set_publish(set) < 0) {
        fprintf(stderr, "pv-provider: cannot publish: %s\n", strerror(errno));
        xenstats_provider_free(provider);
        xenstats_host_close(host);
        return 1;
    }
    printf("pv-provider: publishing \"Example #0\"/\"Counters\" to domain %u; Ctrl-C withdraws\n",
           xenstats_provider_monitor_domid(provider));
    fflush(stdout);

    while (!stop) {
        struct pollfd pfd = {.fd = xenstats_provider_fd(provider), .events = POLLIN};

        if (poll(&pfd, 1, -1) > 0 && xenstats_provider_dispatch(provider) < 0 && errno == ESRCH) {
            fprintf(stderr, "pv-provider: the domain is gone\n");
            break;
        }
    }
    /* Withdraws every set: the monitor sees the set go away cleanly. */
    xenstats_provider_free(provider);
    xenstats_host_close(host);
    printf("pv-provider: withdrawn after %llu samples\n", (unsigned long long)c.samples);
    return 0;
}
