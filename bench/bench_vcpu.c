/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cost of reading and writing the vCPU statistics layout.
 *
 *   snapshot  xenstats_vcpu_map_snapshot_all() of N vCPUs, against memcpy()
 *             of the same record bytes in the same run (the physical floor),
 *             without and with a writer thread updating the records;
 *   writer    one runstate change as the emulator (and the hypervisor
 *             patch) writes it: begin, add time, set 3 counters, end.
 *
 * Each figure is the median of several rounds; ratios matter more than
 * absolute times on a shared machine.  Usage: bench_vcpu [--quick]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/vcpu.h>

#include "util/util.h"

#define ROUNDS 7

static int quick;
static atomic_bool writer_stop;

struct writer_arg {
    void *region;
    uint32_t nr_vcpus;
    uint64_t updates;
};

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), compare_double);
    return v[n / 2];
}

/* Keep the compiler from dropping copies nobody reads. */
static void clobber(void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

static void *writer(void *arg)
{
    struct writer_arg *w = arg;
    uint64_t n = 0, now = 1;

    while (!atomic_load_explicit(&writer_stop, memory_order_relaxed)) {
        for (uint32_t v = 0; v < w->nr_vcpus; v++, n++, now += 7) {
            struct xen_vcpu_stats *r = xen_vcpu_stats_record(w->region, v);

            xen_vcpu_stats_begin(r);
            xen_vcpu_stats_add(r, (unsigned int)(n & 3), 7);
            xen_vcpu_stats_set(r, XEN_VCPU_STATS_STATE_CHANGES, n);
            xen_vcpu_stats_set(r, XEN_VCPU_STATS_STATE, n & 3);
            xen_vcpu_stats_set(r, XEN_VCPU_STATS_UPDATE_TIME, now);
            xen_vcpu_stats_end(r);
        }
    }
    w->updates = n;
    return NULL;
}

static void *new_region(uint32_t nr, size_t *ret_len)
{
    size_t len = (size_t)xen_vcpu_stats_region_bytes(nr, 64);
    void *mem = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

    if (!mem || xen_vcpu_stats_init(mem, len, nr, 64) < 0)
        abort();
    for (uint32_t v = 0; v < nr; v++) {
        struct xen_vcpu_stats *r = xen_vcpu_stats_record(mem, v);

        xen_vcpu_stats_begin(r);
        for (unsigned int c = 0; c < XEN_VCPU_STATS_NR_COUNTERS; c++)
            xen_vcpu_stats_set(r, c, c);
        xen_vcpu_stats_end(r);
    }
    *ret_len = len;
    return mem;
}

static void bench_snapshot(uint32_t nr, int contended)
{
    size_t len, bytes = (size_t)nr * 64;
    void *region = new_region(nr, &len);
    struct xenstats_vcpu_map *map = xenstats_vcpu_map_open_memory(region, len);
    struct xenstats_vcpu_sample *samples = calloc(nr, sizeof(*samples));
    unsigned char *copy = malloc(bytes);
    const unsigned char *records = (const unsigned char *)region + 64;
    uint64_t iters = (quick ? 2000000ULL : 20000000ULL) / nr + 10;
    double snap[ROUNDS], mcpy[ROUNDS], retries_per_1000 = 0;
    struct writer_arg w = {.region = region, .nr_vcpus = nr};
    pthread_t t;
    uint64_t total_retries = 0, total_records = 0, busy = 0;

    if (!map || !samples || !copy)
        abort();
    xenstats_vcpu_map_set_max_retries(map, 1u << 20);
    if (contended) {
        atomic_store(&writer_stop, false);
        pthread_create(&t, NULL, writer, &w);
    }
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t start = monotonic_ns();

        for (uint64_t i = 0; i < iters; i++) {
            memcpy(copy, records, bytes);
            clobber(copy);
        }
        mcpy[round] = (double)(monotonic_ns() - start) / (double)iters;

        start = monotonic_ns();
        for (uint64_t i = 0; i < iters; i++) {
            /* a writer preempted mid-update on a loaded machine: try again */
            while (xenstats_vcpu_map_snapshot_all(map, samples, nr) < 0)
                busy++;
            clobber(samples);
        }
        snap[round] = (double)(monotonic_ns() - start) / (double)iters;

        /* retries, counted outside the timed loop */
        for (uint64_t i = 0; i < iters / 10 + 1; i++) {
            while (xenstats_vcpu_map_snapshot_all(map, samples, nr) < 0)
                busy++;
            for (uint32_t v = 0; v < nr; v++)
                total_retries += samples[v].retries;
            total_records += nr;
        }
    }
    if (contended) {
        atomic_store(&writer_stop, true);
        pthread_join(t, NULL);
    }
    retries_per_1000 = 1000.0 * (double)total_retries / (double)total_records;
    double s = median(snap, ROUNDS), m = median(mcpy, ROUNDS);
    printf("snapshot  %5u vCPUs  %-11s %10.1f ns  memcpy %9.1f ns  ratio %5.2fx  retries/1000 records %7.2f%s\n",
           nr, contended ? "contended" : "uncontended", s, m, s / m, retries_per_1000,
           busy ? "  (some snapshots gave up: writer preempted)" : "");
    xenstats_vcpu_map_close(map);
    free(samples);
    free(copy);
    free(region);
}

static void bench_writer(void)
{
    size_t len;
    void *region = new_region(64, &len);
    uint64_t iters = quick ? 2000000ULL : 20000000ULL;
    double per[ROUNDS];

    for (int round = 0; round < ROUNDS; round++) {
        uint64_t start = monotonic_ns(), now = 1;

        for (uint64_t i = 0; i < iters; i++, now += 3) {
            struct xen_vcpu_stats *r = xen_vcpu_stats_record(region, (uint32_t)(i & 63));

            xen_vcpu_stats_begin(r);
            xen_vcpu_stats_add(r, (unsigned int)(i & 3), 3);
            xen_vcpu_stats_set(r, XEN_VCPU_STATS_STATE_CHANGES, i);
            xen_vcpu_stats_set(r, XEN_VCPU_STATS_STATE, (i + 1) & 3);
            xen_vcpu_stats_set(r, XEN_VCPU_STATS_UPDATE_TIME, now);
            xen_vcpu_stats_end(r);
        }
        per[round] = (double)(monotonic_ns() - start) / (double)iters;
    }
    printf("writer    one runstate change (begin, add, 3 sets, end): %.2f ns (goal < 20 ns)\n", median(per, ROUNDS));
    free(region);
}

int main(int argc, char **argv)
{
    static const uint32_t sizes[] = {1, 64, 1024};

    quick = argc > 1 && !strcmp(argv[1], "--quick");
    printf("# bench_vcpu: median of %d rounds; ratio = snapshot / memcpy of the same record bytes\n", ROUNDS);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        bench_snapshot(sizes[i], 0);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        bench_snapshot(sizes[i], 1);
    bench_writer();
    return 0;
}
