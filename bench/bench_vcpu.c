/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cost of reading and writing the vCPU statistics layout.
 *
 *   snapshot  xenstats_vcpu_map_snapshot_all() of N vCPUs, against memcpy()
 *             of the same record bytes in the same run (the physical floor),
 *             without and with a writer thread updating the records, one
 *             update every WRITER_PERIOD_NS: ten million runstate changes a
 *             second, a host of 1024 vCPUs each changing 10,000 times a
 *             second.  (A writer updating one record back to back leaves a
 *             reader no window at all: no seqlock reader measures there.)
 *   writer    one runstate change as the emulator (and the hypervisor
 *             patch) writes it: begin, add time, set 3 counters, end.
 *
 * The machines this runs on are shared: other jobs take the cores for
 * whole time slices, which a median over a few long rounds still sees.
 * So each figure comes from many short rounds, each timing memcpy() and
 * the snapshot back to back.  Without a writer it is the best round
 * (noise only ever adds time).  With one, a round starts only once the
 * writer is seen running and counts only if it kept running throughout;
 * the figure is the median of those rounds (the best would be a round
 * in which the writer barely ran).  Usage: bench_vcpu [--quick]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/vcpu.h>

#include "util/util.h"

#define MAX_ROUNDS 401
/* Time of each of a round's two loops. */
#define ROUND_NS 20000
#define WRITER_PERIOD_NS 100

static int quick;
static atomic_bool writer_stop;
/* The writer's updates so far, for telling whether it ran in a round. */
static _Atomic uint64_t writer_progress;

struct writer_arg {
    void *region;
    uint32_t nr_vcpus;
};

/* The writers of the last region made (one region at a time). */
static struct xen_vcpu_stats_block blocks[1024];
static uint64_t totals[1024][XENSTATS_VCPU_NR_RUNSTATES];

/* A runstate change as a producer makes it: its totals are its own. */
static inline void change_state(struct xen_vcpu_stats_block *b, uint64_t n, uint64_t now, uint64_t delta)
{
    uint64_t *total = totals[b - blocks];
    unsigned int left = (unsigned int)(n % XENSTATS_VCPU_NR_RUNSTATES);

    total[left] += delta;
    xen_vcpu_stats_begin(b);
    xen_vcpu_stats_set(b, left, total[left]);
    xen_vcpu_stats_set(b, XEN_VCPU_STATS_STATE_CHANGES, n);
    xen_vcpu_stats_set(b, XEN_VCPU_STATS_STATE, (n + 1) % XENSTATS_VCPU_NR_RUNSTATES);
    xen_vcpu_stats_set(b, XEN_VCPU_STATS_UPDATE_TIME, now);
    xen_vcpu_stats_set(b, XEN_VCPU_STATS_UPDATE_TICKS, now);
    xen_vcpu_stats_end(b);
}

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

static double least(const double *v, int n)
{
    double m = v[0];

    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* Keep the compiler from dropping copies nobody reads. */
static void clobber(void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

static void *writer(void *arg)
{
    struct writer_arg *w = arg;
    uint64_t n = 0, now = 1, next = monotonic_ns();

    while (!atomic_load_explicit(&writer_stop, memory_order_relaxed)) {
        for (uint32_t v = 0; v < w->nr_vcpus; v++, n++, now += 7) {
            uint64_t clock;

            /* on time, without catching up after being descheduled */
            while ((clock = monotonic_ns()) < next)
                ;
            next = (next + WRITER_PERIOD_NS > clock ? next : clock) + WRITER_PERIOD_NS;
            atomic_store_explicit(&writer_progress, n + 1, memory_order_relaxed);
            change_state(&blocks[v], n, now, 7);
        }
    }
    return NULL;
}

/* Whether the writer runs now, beside this thread: its count moves. */
static bool writer_running(void)
{
    uint64_t before = atomic_load_explicit(&writer_progress, memory_order_relaxed);

    for (int spin = 0; spin < 100000; spin++)
        if (atomic_load_explicit(&writer_progress, memory_order_relaxed) != before)
            return true;
    return false;
}

static void *new_region(uint32_t nr, size_t *ret_len)
{
    size_t len = (size_t)xen_vcpu_stats_region_bytes(nr, 64);
    void *mem = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
    struct xen_vcpu_stats_writer w;

    if (nr > 1024 || !mem ||
        xen_vcpu_stats_init(&w, mem, len, nr, 64, &(struct xen_vcpu_stats_time_base){0}) < 0)
        abort();
    memset(totals, 0, sizeof(totals));
    for (uint32_t v = 0; v < nr; v++) {
        xen_vcpu_stats_vcpu_block(&w, v, &blocks[v]);
        xen_vcpu_stats_begin(&blocks[v]);
        for (unsigned int c = 0; c < XEN_VCPU_STATS_NR_COUNTERS; c++)
            xen_vcpu_stats_set(&blocks[v], c, c);
        xen_vcpu_stats_end(&blocks[v]);
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
    /* about ROUND_NS for a snapshot at 20 ns a record */
    uint64_t iters = ROUND_NS / (20 * nr) + 1;
    int rounds = quick ? MAX_ROUNDS / 4 : MAX_ROUNDS, kept = 0, tries = 0;
    uint64_t deadline = monotonic_ns() + (quick ? 1 : 5) * 1000000000ULL;
    static double snap[MAX_ROUNDS], mcpy[MAX_ROUNDS];
    double s, m;
    struct writer_arg w = {.region = region, .nr_vcpus = nr};
    pthread_t t;
    uint64_t total_retries = 0, total_records = 0, busy = 0;

    if (!map || !samples || !copy)
        abort();
    xenstats_vcpu_map_set_max_retries(map, 1u << 20);
    if (contended) {
        atomic_store(&writer_stop, false);
        atomic_store(&writer_progress, 0);
        pthread_create(&t, NULL, writer, &w);
    }
    /* With a writer, rounds it missed are tried again for a few seconds: on
     * a loaded machine it may wait long for a core. */
    for (; kept < rounds && (!contended || monotonic_ns() < deadline); tries++) {
        uint64_t progress, start, middle, end;

        if (contended && !writer_running()) {
            sched_yield();
            continue;
        }
        progress = atomic_load_explicit(&writer_progress, memory_order_relaxed);
        start = monotonic_ns();

        for (uint64_t i = 0; i < iters; i++) {
            memcpy(copy, records, bytes);
            clobber(copy);
        }
        middle = monotonic_ns();
        for (uint64_t i = 0; i < iters; i++) {
            /* a writer preempted mid-update on a loaded machine: try again */
            while (xenstats_vcpu_map_snapshot_all(map, samples, nr) < 0)
                busy++;
            clobber(samples);
        }
        end = monotonic_ns();
        /* the writer ran through the round: it made a quarter of its updates
         * at least (reading the clock and the reader's misses slow it) */
        if (contended &&
            atomic_load_explicit(&writer_progress, memory_order_relaxed) - progress < (end - start) / WRITER_PERIOD_NS / 4)
            continue;
        mcpy[kept] = (double)(middle - start) / (double)iters;
        snap[kept] = (double)(end - middle) / (double)iters;
        kept++;

        /* retries, counted outside the timed loops */
        while (xenstats_vcpu_map_snapshot_all(map, samples, nr) < 0)
            busy++;
        for (uint32_t v = 0; v < nr; v++)
            total_retries += samples[v].retries;
        total_records += nr;
    }
    if (contended) {
        atomic_store(&writer_stop, true);
        pthread_join(t, NULL);
    }
    if (!kept) {
        printf("snapshot  %5u vCPUs  %-11s  the writer never ran throughout a round (%d tries)\n", nr, "contended",
               tries);
        goto out;
    }
    s = contended ? median(snap, kept) : least(snap, kept);
    m = contended ? median(mcpy, kept) : least(mcpy, kept);
    printf("snapshot  %5u vCPUs  %-11s %10.1f ns  memcpy %9.1f ns  ratio %5.2fx  retries/1000 records %7.2f  "
           "rounds %d/%d%s\n",
           nr, contended ? "contended" : "uncontended", s, m, s / m,
           1000.0 * (double)total_retries / (double)total_records, kept, tries,
           busy ? "  (some snapshots gave up: writer preempted)" : "");
out:
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
    double per[7];

    for (int round = 0; round < 7; round++) {
        uint64_t start = monotonic_ns(), now = 1;

        for (uint64_t i = 0; i < iters; i++, now += 3) {
            change_state(&blocks[i & 63], i, now, 3);
        }
        per[round] = (double)(monotonic_ns() - start) / (double)iters;
    }
    printf("writer    one runstate change (begin, 5 sets, end): %.2f ns (goal < 20 ns)\n", median(per, 7));
    free(region);
}

int main(int argc, char **argv)
{
    static const uint32_t sizes[] = {1, 64, 1024};

    quick = argc > 1 && !strcmp(argv[1], "--quick");
    printf("# bench_vcpu: ratio = snapshot / memcpy of the same record bytes; uncontended: best round, "
           "contended: median of the rounds the writer ran in\n");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        bench_snapshot(sizes[i], 0);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        bench_snapshot(sizes[i], 1);
    bench_writer();
    return 0;
}
