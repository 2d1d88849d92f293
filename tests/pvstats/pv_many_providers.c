/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The providers of many domains in one process, for the tests of a host
 * that starts with many guests: each of domains FIRST..LAST publishes SETS
 * sets of 32 statistics (provider "many", sets "set0"...), answers until
 * SIGTERM, and withdraws.  A domain's sets are published once the agent
 * has made its `stats` node.  Prints "published N" once all are out.
 *   pv_many_providers FIRST LAST SETS
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xenstats/pv.h>

#define STATS 32

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int refresh(struct xenstats_provider_set *set, void *userdata)
{
    static uint64_t samples;

    (void)userdata;
    samples++;
    for (unsigned int i = 0; i < STATS; i++)
        xenstats_provider_set_u64(set, i, samples + i);
    return 0;
}

/*
 * Domain domid's provider with its sets published, and its host in
 * *ret_host; or NULL (its `stats` node is not there yet).
 */
static struct xenstats_provider *publish(uint32_t domid, int sets, struct xenstats_host **ret_host)
{
    struct xenstats_host *host;
    struct xenstats_provider *p;
    char name[32];

    snprintf(name, sizeof(name), "%u", domid);
    setenv("XENSTATS_EMU_DOMID", name, 1);
    host = xenstats_host_open(XENSTATS_BACKEND_EMU);
    if (!host)
        return NULL;
    p = xenstats_provider_new(host, "many", NULL);
    for (int s = 0; p && s < sets; s++) {
        struct xenstats_provider_set *set;

        snprintf(name, sizeof(name), "set%d", s);
        set = xenstats_provider_add_set(p, name, refresh, NULL);
        for (int k = 0; set && k < STATS; k++) {
            snprintf(name, sizeof(name), "statistic_%d", k);
            xenstats_provider_set_declare(set, name, XENSTATS_PV_U64);
        }
        if (!set || xenstats_provider_set_publish(set) < 0) {
            xenstats_provider_free(p);
            p = NULL;
        }
    }
    if (!p)
        xenstats_host_close(host);
    else
        *ret_host = host;
    return p;
}

int main(int argc, char **argv)
{
    struct timespec pause = {.tv_nsec = 50000000};
    struct xenstats_provider **p;
    struct xenstats_host **h;
    struct pollfd *pfd;
    int first, last, sets, n, ready = 0;
    struct sigaction sa;

    if (argc != 4 || (first = atoi(argv[1])) < 1 || (last = atoi(argv[2])) < first || (sets = atoi(argv[3])) < 1) {
        fprintf(stderr, "usage: pv_many_providers FIRST LAST SETS\n");
        return 2;
    }
    n = last - first + 1;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    p = calloc((size_t)n, sizeof(*p));
    h = calloc((size_t)n, sizeof(*h));
    pfd = calloc((size_t)n, sizeof(*pfd));
    if (!p || !h || !pfd)
        return 1;
    while (ready < n && !stop) {
        for (int i = 0; i < n; i++) {
            if (p[i] || !(p[i] = publish((uint32_t)(first + i), sets, &h[i])))
                continue;
            pfd[i] = (struct pollfd){.fd = xenstats_provider_fd(p[i]), .events = POLLIN};
            ready++;
        }
        if (ready < n)
            nanosleep(&pause, NULL);
    }
    printf("published %d\n", ready);
    fflush(stdout);
    while (!stop) {
        if (poll(pfd, (nfds_t)n, 200) <= 0)
            continue;
        for (int i = 0; i < n; i++)
            if (pfd[i].revents)
                xenstats_provider_dispatch(p[i]);
    }
    for (int i = 0; i < n; i++) {
        xenstats_provider_free(p[i]);
        xenstats_host_close(h[i]);
    }
    free(p);
    free(h);
    free(pfd);
    return 0;
}
