/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A well-behaved (or deliberately lazy) provider with known values, for the
 * integration tests.  Publishes, answers until SIGTERM, withdraws.
 *   pv_test_provider [--provider P] [--set S] (--types | --count N)
 *                    [--no-answer | --no-update | --die-on-sample] [--cpu N]
 * Prints "published" once the set is out.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xenstats/pv.h>

static volatile sig_atomic_t stop;
static enum { ANSWER, NO_ANSWER, NO_UPDATE, DIE } behaviour = ANSWER;
static bool types;
static unsigned int count = 8;
static uint64_t samples;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int refresh(struct xenstats_provider_set *set, void *userdata)
{
    (void)userdata;
    if (behaviour == DIE && samples > 0)
        _exit(3); /* in the middle of a sample, without a word */
    if (behaviour == NO_ANSWER && samples > 0)
        return -1;
    if (behaviour == NO_UPDATE && samples > 0)
        return 0;
    samples++;
    if (types) {
        xenstats_provider_set_s64(set, 0, -42);
        xenstats_provider_set_s64(set, 1, INT64_MIN);
        xenstats_provider_set_u64(set, 2, UINT64_MAX);
        xenstats_provider_set_double(set, 3, 3.25);
        xenstats_provider_set_double(set, 4, NAN);
        xenstats_provider_set_double(set, 5, INFINITY);
        xenstats_provider_set_double(set, 6, -INFINITY);
        xenstats_provider_set_ascii(set, 7, "hello, world!");
        xenstats_provider_set_ascii(set, 8, "");
        xenstats_provider_set_u64(set, 9, samples);
        return 0;
    }
    for (unsigned int i = 0; i < count; i++)
        xenstats_provider_set_u64(set, i, (uint64_t)i * 1000 + samples);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"provider", required_argument, NULL, 'p'}, {"set", required_argument, NULL, 's'},
        {"types", no_argument, NULL, 't'},          {"count", required_argument, NULL, 'n'},
        {"no-answer", no_argument, NULL, 'A'},      {"no-update", no_argument, NULL, 'U'},
        {"die-on-sample", no_argument, NULL, 'D'},  {"cpu", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    const char *pname = "Test #0", *sname = "Values";
    struct xenstats_host *host;
    struct xenstats_provider *p;
    struct xenstats_provider_set *set;
    struct sigaction sa;
    char name[32];
    int c, rc = 0, cpu = -1;

    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': pname = optarg; break;
        case 's': sname = optarg; break;
        case 't': types = true; break;
        case 'n': count = (unsigned int)atoi(optarg); break;
        case 'A': behaviour = NO_ANSWER; break;
        case 'U': behaviour = NO_UPDATE; break;
        case 'D': behaviour = DIE; break;
        case 'c': cpu = atoi(optarg); break;
        default: return 2;
        }
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    host = xenstats_host_open(XENSTATS_BACKEND_AUTO);
    if (!host) {
        perror("pv_test_provider: host");
        return 1;
    }
    p = xenstats_provider_new(host, pname, NULL);
    if (!p) {
        perror("pv_test_provider: provider");
        xenstats_host_close(host);
        return 1;
    }
    if (cpu >= 0 && xenstats_provider_set_cpu(p, cpu) < 0)
        perror("pv_test_provider: --cpu"); /* pinned or not: carry on */
    set = xenstats_provider_add_set(p, sname, refresh, NULL);
    if (!set) {
        perror("pv_test_provider: set");
        return 1;
    }
    if (types) {
        static const struct { const char *n; enum xenstats_pv_type t; } decl[] = {
            {"neg", XENSTATS_PV_S64},      {"min", XENSTATS_PV_S64},       {"max", XENSTATS_PV_U64},
            {"quarter", XENSTATS_PV_DOUBLE}, {"nan", XENSTATS_PV_DOUBLE},  {"inf", XENSTATS_PV_DOUBLE},
            {"ninf", XENSTATS_PV_DOUBLE},  {"text", XENSTATS_PV_ASCII},    {"empty", XENSTATS_PV_ASCII},
            {"samples", XENSTATS_PV_U64},
        };
        for (size_t i = 0; i < sizeof(decl) / sizeof(decl[0]); i++)
            if (xenstats_provider_set_declare(set, decl[i].n, decl[i].t) < 0)
                return 1;
    } else {
        for (unsigned int i = 0; i < count; i++) {
            snprintf(name, sizeof(name), "stat_%u", i);
            if (xenstats_provider_set_declare(set, name, XENSTATS_PV_U64) < 0)
                return 1;
        }
    }
    if (xenstats_provider_set_publish(set) < 0) {
        perror("pv_test_provider: publish");
        return 1;
    }
    printf("published\n");
    fflush(stdout);
    while (!stop) {
        struct pollfd pfd = {.fd = xenstats_provider_fd(p), .events = POLLIN};

        if (poll(&pfd, 1, 200) > 0 && xenstats_provider_dispatch(p) < 0 && errno == ESRCH) {
            fprintf(stderr, "pv_test_provider: the domain is gone\n");
            return 1;
        }
    }
    if (xenstats_provider_set_withdraw(set) < 0) {
        perror("pv_test_provider: withdraw");
        rc = 1;
    }
    xenstats_provider_free(p);
    xenstats_host_close(host);
    printf("withdrawn after %llu samples\n", (unsigned long long)samples);
    return rc;
}
