/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One writer updating records as fast as it can, one reader snapshotting:
 * no snapshot may ever see a torn record.  Every update writes counters
 * that are all derived from one value, so any mix of two updates shows.
 * Snapshots alternate between one record and all of them, so both the
 * first pass over a batch and the retry of its torn records are hammered.
 * Built under TSan too (suite 'concurrency'), and once more against a
 * reader without the sequence check (XENSTATS_TEST_NO_SEQ_CHECK, see
 * meson.build), which must see torn records: proof that this test can fail.
 * Arguments (tests/arm64/barrier.sh, under user-mode emulation): a number
 * of snapshots in place of the default, and "emulated", which drops the
 * writer's speed floor.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/vcpu.h>

#include "util/util.h"

#define NR_VCPUS 4
#define SNAPSHOTS 10000000ULL
#define COUNTER_MASK 0x00ffffffffffffffULL /* stay clear of the inactive bit */

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static uint64_t region[(192 + NR_VCPUS * 128) / 8];
static struct xen_vcpu_stats_block blocks[NR_VCPUS];
static atomic_bool stop;
static uint64_t updates;

static uint64_t expected(uint64_t v, unsigned int i)
{
    return (v * (2 * i + 3) + i) & COUNTER_MASK;
}

static void *writer(void *arg)
{
    uint64_t v = 1, n = 0;

    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (uint32_t cpu = 0; cpu < NR_VCPUS; cpu++, n++, v++) {
            struct xen_vcpu_stats_block *b = &blocks[cpu];

            xen_vcpu_stats_begin(b);
            for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
                xen_vcpu_stats_set(b, i, expected(v, i));
            xen_vcpu_stats_end(b);
        }
    }
    updates = n;
    return NULL;
}

/* Whether a sample is one update's values, none mixed with another's. */
static bool sample_whole(const struct xenstats_vcpu_sample *s)
{
    uint64_t v;

    for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
        if (xenstats_vcpu_sample_status(s, i) != XENSTATS_COUNTER_VALID)
            return false;
    /* counter 1 - counter 0 = 2v + 1 (mod mask) */
    v = ((xenstats_vcpu_sample_value(s, 1) - xenstats_vcpu_sample_value(s, 0) - 1) & COUNTER_MASK) / 2;
    for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
        if (xenstats_vcpu_sample_value(s, i) != expected(v, i) &&
            xenstats_vcpu_sample_value(s, i) != expected(v + (COUNTER_MASK + 1) / 2, i))
            return false;
    return true;
}

int main(int argc, char **argv)
{
    unsigned long long snapshots = argc > 1 ? strtoull(argv[1], NULL, 10) : SNAPSHOTS;
    bool emulated = argc > 2 && !strcmp(argv[2], "emulated");

    (void)emulated; /* (sanitized builds have no speed floor) */
    struct xenstats_vcpu_map *map;
    pthread_t t;
    uint64_t torn = 0, busy = 0, retries = 0, changed = 0, last_seq[NR_VCPUS] = {0};
    uint64_t start, elapsed, k;
    double rate;

    struct xen_vcpu_stats_writer w;

    if (xen_vcpu_stats_init(&w, region, sizeof(region), NR_VCPUS, 64, &(struct xen_vcpu_stats_time_base){0}) < 0)
        return 1;
    for (uint32_t cpu = 0; cpu < NR_VCPUS; cpu++) {
        struct xen_vcpu_stats_block *b = &blocks[cpu];

        xen_vcpu_stats_vcpu_block(&w, cpu, b);
        xen_vcpu_stats_begin(b);
        for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
            xen_vcpu_stats_set(b, i, expected(0, i));
        xen_vcpu_stats_end(b);
    }
    map = xenstats_vcpu_map_open_memory(region, sizeof(region));
    if (!map)
        return 1;
    /* A preempted writer may hold a record for a whole time slice. */
    xenstats_vcpu_map_set_max_retries(map, 1u << 24);

    start = monotonic_ns();
    if (pthread_create(&t, NULL, writer, NULL))
        return 1;
    for (k = 0; k < snapshots; k++) {
        struct xenstats_vcpu_sample s[NR_VCPUS];
        uint32_t first = (uint32_t)(k % NR_VCPUS), n = k & 1 ? NR_VCPUS : 1;
        int r = n == 1 ? xenstats_vcpu_map_snapshot(map, first, s) : xenstats_vcpu_map_snapshot_all(map, s, n);

        if (r < 0) {
            busy++;
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t cpu = n == 1 ? first : i;

            retries += s[i].retries;
            if (s[i].seq != last_seq[cpu])
                changed++;
            last_seq[cpu] = s[i].seq;
            if (!sample_whole(&s[i]))
                torn++;
        }
#ifdef XENSTATS_TEST_NO_SEQ_CHECK
        if (torn >= 1000)
            break; /* proven */
#endif
    }
    atomic_store(&stop, true);
    pthread_join(t, NULL);
    elapsed = monotonic_ns() - start;
    rate = (double)updates / ((double)elapsed / 1e9);
    xenstats_vcpu_map_close(map);

    printf("snapshots %llu, torn %llu, busy %llu, retries %llu, records that showed a new update %llu\n",
           (unsigned long long)k, (unsigned long long)torn, (unsigned long long)busy,
           (unsigned long long)retries, (unsigned long long)changed);
    printf("writer: %llu updates in %.2f s = %.2f M updates/s\n", (unsigned long long)updates,
           (double)elapsed / 1e9, rate / 1e6);
#ifdef XENSTATS_TEST_NO_SEQ_CHECK
    if (!torn) {
        printf("FAIL: without the sequence check no torn record showed: this test cannot fail\n");
        return 1;
    }
    printf("without the sequence check, torn records show: the test can fail\n");
    return 0;
#endif
    if (torn || busy) {
        printf("FAIL: torn or busy snapshots\n");
        return 1;
    }
    /* Overlap shows either as new values or as retries: a writer this fast
     * can keep the reader retrying until it is preempted. */
    if (changed + retries < 1000) {
        printf("FAIL: the writer barely overlapped the reader (%llu)\n", (unsigned long long)(changed + retries));
        return 1;
    }
#ifndef SANITIZED
    if (!emulated && rate < 1e6) {
        printf("FAIL: writer below 1M updates/s\n");
        return 1;
    }
#endif
    return 0;
}
