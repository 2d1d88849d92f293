/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helper of the kernel provider's end-to-end test (tests/e2e/kmod/):
 *
 *   kmod_e2e bench DOMID ROUNDS LABEL   dom0: full-sample round trip of the
 *                                       domain's one 64-statistic set, as
 *                                       tests/e2e/xen/xen_e2e.c measures it
 *
 * Result lines start with "XT: " so the host can grep the serial log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xenstats/pv.h>

#include "util/util.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static int bench(uint32_t domid, int rounds, const char *label)
{
    struct xenstats_monitor_opts mo = {.size = sizeof(mo), .min_interval_ms = 1, .create_stats_node = true,
                                       .sample_timeout_ms = 5000};
    struct xenstats_host *host = xenstats_host_open(XENSTATS_BACKEND_AUTO);
    struct xenstats_monitor *m = host ? xenstats_monitor_new(host, &mo) : NULL;
    uint64_t deadline = monotonic_ns() + 120000000000ULL;
    uint64_t *t = calloc((size_t)rounds, sizeof(uint64_t));
    struct xenstats_pv_set_info info = {0};
    int r, ok = 0;

    if (!m || !t || xenstats_monitor_add_domain(m, domid) < 0) {
        printf("XT: FAIL bench-%s monitor: %s\n", label, strerror(errno));
        return 1;
    }
    while (monotonic_ns() < deadline) {
        xenstats_monitor_dispatch(m, 200);
        if (xenstats_monitor_nr_sets(m) == 1) {
            xenstats_pv_set_get_info(xenstats_monitor_set(m, 0), &info);
            if (info.nr_stats == 64 && xenstats_monitor_sample(m) == 1)
                break;
        }
    }
    if (info.nr_stats != 64) {
        printf("XT: FAIL bench-%s no lone 64-statistic set from domain %u\n", label, domid);
        return 1;
    }
    for (r = 0; r < 5; r++) { /* warm up */
        xenstats_monitor_sample(m);
        sleep_ms(2);
    }
    for (r = 0; r < rounds; r++) {
        uint64_t t0;

        sleep_ms(2); /* past min_interval; the guest idles, as between an agent's samples */
        t0 = monotonic_ns();
        ok += xenstats_monitor_sample(m) == 1;
        t[r] = monotonic_ns() - t0;
    }
    qsort(t, (size_t)rounds, sizeof(*t), cmp_u64);
    printf("XT: BENCH full-sample-64 %s provider=\"%s\" set=\"%s\" n=%d p50_us=%.1f p99_us=%.1f answered=%d\n",
           label, info.provider, info.set, rounds, (double)t[rounds / 2] / 1e3,
           (double)t[(size_t)rounds * 99 / 100] / 1e3, ok);
    printf("XT: %s bench-%s %d of %d samples answered\n", ok >= rounds * 9 / 10 ? "PASS" : "FAIL", label, ok,
           rounds);
    xenstats_monitor_free(m);
    xenstats_host_close(host);
    free(t);
    return ok >= rounds * 9 / 10 ? 0 : 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 5 && !strcmp(argv[1], "bench"))
        return bench((uint32_t)atoi(argv[2]), atoi(argv[3]), argv[4]);
    fprintf(stderr, "usage: kmod_e2e bench DOMID ROUNDS LABEL\n");
    return 2;
}
