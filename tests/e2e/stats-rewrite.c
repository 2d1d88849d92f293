// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stats-rewrite: the test of a hostile writable mapping of the vCPU
 * statistics table (docs/hypervisor.md, "The rewrite test").  Run in dom0
 * of a hypervisor built with a DO-NOT-APPLY patch that shares the table
 * writable (on x86 a PV dom0 otherwise only gets a read-only mapping; a
 * p2m-based mapper gets a writable one), or in any dom0 on Arm, where every
 * mapping is writable (p2m_map_foreign_rw).
 *
 *   stats-rewrite TARGET CANARY SECONDS     (0: the landing check alone)
 *
 * Maps TARGET's table read-write and rewrites every byte of it (header and
 * every record, the whole frames) again and again for SECONDS, with
 * patterns chosen to mislead a hypervisor that reads its layout back
 * (offset and stride far outside the table, zero, overlapping the header,
 * odd sequence numbers, random bytes), pausing briefly between rounds so
 * that the domain's vCPUs change state in between (the caller runs a
 * busy/idle loop in the domain, vcpu-set and pause/unpause).
 *
 * Meanwhile it watches what must not change: CANARY's table, mapped
 * read-only a second time (the layout outside its live records stays
 * byte-identical), CANARY's and Domain-0's getdomaininfo (vCPU counts,
 * pages, not dying) and xc_vcpu_getinfo() cpu_time (never going back).
 * Then it checks that TARGET's records still land where Xen laid them out
 * (landing() below).
 * A hypervisor that stores where the rewritten header points crashes, or
 * corrupts one of those; whether Xen stays up and its debug checks stay
 * quiet is judged from the serial log by the caller.
 *
 * Exit status: 0 all canaries held, 1 a canary changed, 2 usage or setup
 * (no writable mapping: the test-only patch is not in).  Result lines
 * start with "PASS " or "FAIL ".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xenctrl.h>
#include <xenforeignmemory.h>

#include "xenstats/abi/vcpu_stats.h"

#define PAGE 4096u
#define MAX_VCPUS 64u

struct table {
    xenforeignmemory_resource_handle *res;
    unsigned char *base;
    size_t bytes;
};

struct dominfo {
    unsigned int max_vcpus, online;
    uint64_t tot_pages;
    int dying;
};

static int failures;

static void fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *what, const char *fmt, ...)
{
    va_list ap;

    printf("FAIL %s: ", what);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    failures++;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int map_table(xenforeignmemory_handle *fm, uint32_t domid, int prot, struct table *t)
{
    size_t size = 0;
    void *addr = NULL;

    if (xenforeignmemory_resource_size(fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE,
                                       XEN_VCPU_STATS_RESOURCE_ID, &size) < 0 ||
        size == 0 || size % PAGE || size > (64u << 20)) {
        fprintf(stderr, "stats-rewrite: domain %u: no statistics table (%s, %zu bytes)\n", domid,
                strerror(errno), size);
        return -1;
    }
    t->res = xenforeignmemory_map_resource(fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE,
                                           XEN_VCPU_STATS_RESOURCE_ID, 0, size / PAGE, &addr, prot,
                                           0);
    if (!t->res) {
        fprintf(stderr, "stats-rewrite: domain %u: map_resource(%s, %zu frames): %s\n", domid,
                prot & PROT_WRITE ? "read-write" : "read-only", size / PAGE, strerror(errno));
        return -1;
    }
    t->base = addr;
    t->bytes = size;
    return 0;
}

static int dominfo(xc_interface *xch, uint32_t domid, struct dominfo *d)
{
    xc_domaininfo_t info;

    /* getinfolist, not getinfo_single: Xen 4.17's libxenctrl lacks it */
    if (xc_domain_getinfolist(xch, domid, 1, &info) != 1 || info.domain != domid)
        return -1;
    d->max_vcpus = info.max_vcpu_id + 1;
    d->online = info.nr_online_vcpus;
    d->tot_pages = info.tot_pages;
    d->dying = !!(info.flags & XEN_DOMINF_dying);
    return 0;
}

/*
 * The canary table's bytes that Xen does not change while its domain runs:
 * everything but the live part of each record (seq, state, counters) and,
 * in a version-2 table, the domain section between the header and the
 * first record (whose counters may move).  The 16 bytes of the seed's
 * header are always compared.
 */
static int canary_mask(const unsigned char *snap, size_t bytes, unsigned int nr_vcpus,
                       unsigned char *keep)
{
    struct xen_vcpu_stats_header h;
    unsigned int i;

    memcpy(&h, snap, sizeof(h));
    if (h.magic != XEN_VCPU_STATS_MAGIC || h.offset < sizeof(h) || h.stride < h.size ||
        h.offset > bytes || (uint64_t)h.offset + (uint64_t)nr_vcpus * h.stride > bytes)
        return -1;
    memset(keep, 1, bytes);
    memset(keep + sizeof(h), 0, h.offset - sizeof(h));
    for (i = 0; i < nr_vcpus; i++)
        memset(keep + h.offset + (size_t)i * h.stride, 0, h.size);
    return 0;
}

/*
 * After the rewriting: do the records still land where Xen laid them out?
 * The whole writable table is filled with a marker (every sequence number
 * 0x5a5a5a5a) under a header that is valid but points elsewhere inside the
 * frames (the first record at half the table, a stride of 64), and the
 * target's vCPUs go on changing state for `seconds`.  Then only the
 * domain section and the records of the original layout (orig, nr_vcpus)
 * may have changed; every byte of the misleading header and everything
 * after the original records must be as written.  A record that changed
 * must carry Xen's own sequence number (kept outside the table), not one
 * continued from the marker.  At least one record must have changed.
 */
static void landing(struct table *wr, const struct xen_vcpu_stats_header *orig, unsigned int nr_vcpus,
                    double seconds)
{
    struct xen_vcpu_stats_header mis;
    unsigned char *expect = malloc(wr->bytes);
    size_t b, end = (size_t)orig->offset + (size_t)nr_vcpus * orig->stride;
    unsigned int v, landed = 0, bad_seq = 0;
    double t0;

    if (!expect || orig->stride < orig->size || end > wr->bytes || wr->bytes / 2 < end + 64) {
        fail("landing-setup", "original layout offset %u stride %u for %u vCPUs in %zu bytes", orig->offset,
             orig->stride, nr_vcpus, wr->bytes);
        free(expect);
        return;
    }
    memset(expect, 0x5a, wr->bytes);
    mis = *orig;
    mis.offset = (uint32_t)(wr->bytes / 2) & ~127u;
    mis.stride = 64;
    memcpy(expect, &mis, sizeof(mis));
    memcpy(wr->base, expect, wr->bytes);
    t0 = now();
    while (now() - t0 < seconds)
        usleep(100000);
    for (b = 0; b < wr->bytes; b++) {
        if ((b < sizeof(mis) || b >= end) && wr->base[b] != expect[b]) {
            fail("landing-outside", "byte %zu changed (%#x -> %#x): outside the original records (they end at %zu); "
                 "the misleading header puts them at %u, stride %u", b, expect[b], wr->base[b], end, mis.offset,
                 mis.stride);
            break;
        }
    }
    for (v = 0; v < nr_vcpus; v++) {
        const unsigned char *rec = wr->base + orig->offset + (size_t)v * orig->stride;
        uint32_t seq;

        if (!memcmp(rec, expect + orig->offset + (size_t)v * orig->stride, orig->size))
            continue;
        landed++;
        memcpy(&seq, rec, sizeof(seq));
        if (seq >= 0x5a000000u)
            bad_seq++;
        printf("INFO landing: vCPU %u's record rewritten by Xen at offset %zu (seq %u)\n", v,
               (size_t)orig->offset + (size_t)v * orig->stride, seq);
    }
    if (landed == 0)
        fail("landing-records", "no record of the original layout changed in %.0f s", seconds);
    else if (bad_seq)
        fail("landing-seq", "%u records carry a sequence number continued from the table's", bad_seq);
    else
        printf("PASS landing: %u of %u records rewritten by Xen where it laid them out (offset %u, stride %u), "
               "none at the header's (offset %u, stride %u), sequence numbers Xen's own\n",
               landed, nr_vcpus, orig->offset, orig->stride, mis.offset, mis.stride);
    fflush(stdout);
    free(expect);
}

/* Fill the writable table with round's pattern. */
static void rewrite(unsigned char *p, size_t bytes, unsigned long round, unsigned int *seed)
{
    struct xen_vcpu_stats_header h;
    size_t i;

    switch (round % 8) {
    case 0:
        memset(p, 0xff, bytes);
        return;
    case 1:
        memset(p, 0, bytes);
        return;
    case 2:
        for (i = 0; i < bytes; i++)
            p[i] = rand_r(seed);
        return;
    case 3: /* the first record far beyond the table, valid magic */
        h = (struct xen_vcpu_stats_header){.magic = XEN_VCPU_STATS_MAGIC, .offset = 0xfffff000u, .size = 64,
                                           .stride = 0x7fffffc0u, .version = XEN_VCPU_STATS_VERSION,
                                           .nr_vcpus = 0xffffffffu, .domain_offset = 0xfffff000u};
        break;
    case 4: /* records just past the end, a huge stride */
        h = (struct xen_vcpu_stats_header){.magic = XEN_VCPU_STATS_MAGIC, .offset = (uint32_t)bytes, .size = 64,
                                           .stride = 1u << 30, .header_size = 0xffffffffu,
                                           .domain_offset = (uint32_t)bytes, .domain_size = 0xffffffffu};
        break;
    case 5: /* records over the header, no stride */
        h = (struct xen_vcpu_stats_header){.magic = XEN_VCPU_STATS_MAGIC, .offset = 0, .size = 0xffffffffu,
                                           .stride = 0, .nr_vcpus = 0, .domain_arch_offset = 0xffffffffu};
        break;
    case 6: /* odd sequence numbers and every counter saturated */
        memset(p, 0xff, bytes);
        for (i = 0; i + 4 <= bytes; i += 64)
            memcpy(p + i, &(uint32_t){0x80000001u}, 4);
        return;
    default: /* every word its own index: offsets and strides all over */
        for (i = 0; i + 4 <= bytes; i += 4)
            memcpy(p + i, &(uint32_t){(uint32_t)(i * 2654435761u)}, 4);
        return;
    }
    for (i = 0; i < bytes; i++)
        p[i] = rand_r(seed);
    memcpy(p, &h, sizeof(h));
}

int main(int argc, char **argv)
{
    uint32_t target, canary;
    double seconds, t0, last_print, last_check = 0;
    xc_interface *xch;
    xenforeignmemory_handle *fm;
    struct table wr = {0}, cn = {0};
    struct dominfo c0, d0, d, t0d;
    struct xen_vcpu_stats_header orig;
    uint64_t cpu0[MAX_VCPUS] = {0};
    unsigned char *snap, *keep;
    unsigned long round = 0, checks = 0;
    unsigned int seed = 12345, i;

    if (argc != 4 || strcmp(argv[1], "--help") == 0) {
        fprintf(argc == 2 ? stdout : stderr,
                "usage: stats-rewrite TARGET CANARY SECONDS\n"
                "Rewrites every byte of domain TARGET's vCPU statistics table (mapped\n"
                "read-write: on x86 needs the DO-NOT-APPLY test patch) for SECONDS, and checks\n"
                "that domain CANARY's table and domain information do not change; then\n"
                "that TARGET's records still land where Xen laid them out (SECONDS 0:\n"
                "that check alone).\n");
        return argc == 2 ? 0 : 2;
    }
    target = strtoul(argv[1], NULL, 0);
    canary = strtoul(argv[2], NULL, 0);
    seconds = atof(argv[3]);
    if (target == canary || !(seconds >= 0)) {
        fprintf(stderr, "stats-rewrite: TARGET and CANARY must differ, SECONDS be >= 0\n");
        return 2;
    }
    xch = xc_interface_open(NULL, NULL, 0);
    fm = xenforeignmemory_open(NULL, 0);
    if (!xch || !fm) {
        fprintf(stderr, "stats-rewrite: cannot open Xen's interfaces: %s\n", strerror(errno));
        return 2;
    }
    if (map_table(fm, target, PROT_READ | PROT_WRITE, &wr) < 0) {
        printf("FAIL writable-map: no read-write mapping of domain %u's table; is the test-only patch in?\n",
               target);
        return 2;
    }
    memcpy(&orig, wr.base, sizeof(orig));
    if (orig.magic != XEN_VCPU_STATS_MAGIC || dominfo(xch, target, &t0d) < 0) {
        printf("FAIL target-layout: domain %u's table has no valid header before the rewrite (magic %#x)\n",
               target, orig.magic);
        return 2;
    }
    if (map_table(fm, canary, PROT_READ, &cn) < 0 || dominfo(xch, canary, &c0) < 0 ||
        dominfo(xch, 0, &d0) < 0 || c0.max_vcpus > MAX_VCPUS) {
        fprintf(stderr, "stats-rewrite: canary domain %u: %s\n", canary, strerror(errno));
        return 2;
    }
    snap = malloc(cn.bytes);
    keep = malloc(cn.bytes);
    if (!snap || !keep)
        return 2;
    memcpy(snap, cn.base, cn.bytes);
    if (canary_mask(snap, cn.bytes, c0.max_vcpus, keep) < 0) {
        fprintf(stderr, "stats-rewrite: canary domain %u: its table has no valid layout\n", canary);
        return 2;
    }
    for (i = 0; i < c0.max_vcpus; i++) {
        xc_vcpuinfo_t vi;

        if (xc_vcpu_getinfo(xch, canary, i, &vi) == 0)
            cpu0[i] = vi.cpu_time;
    }
    printf("INFO target %u: %zu bytes mapped read-write; canary %u: %zu bytes, %u vCPUs, %" PRIu64
           " pages\n",
           target, wr.bytes, canary, cn.bytes, c0.max_vcpus, c0.tot_pages);
    fflush(stdout);

    t0 = last_print = now();
    while (now() - t0 < seconds) {
        rewrite(wr.base, wr.bytes, round, &seed);
        round++;
        usleep(round % 16 ? 200 : 20000); /* let vCPUs change state */
        if (now() - last_check < 0.5)
            continue;
        last_check = now();
        checks++;
        for (size_t b = 0; b < cn.bytes; b++) {
            if (keep[b] && cn.base[b] != snap[b]) {
                fail("canary-table", "round %lu: canary's byte %zu changed (%#x -> %#x)", round, b,
                     snap[b], cn.base[b]);
                memcpy(snap, cn.base, cn.bytes); /* report each change once */
                break;
            }
        }
        if (dominfo(xch, canary, &d) < 0 || d.max_vcpus != c0.max_vcpus || d.online != c0.online ||
            d.tot_pages != c0.tot_pages || d.dying)
            fail("canary-domaininfo", "round %lu: vCPUs %u/%u pages %" PRIu64 " dying %d", round,
                 d.online, d.max_vcpus, d.tot_pages, d.dying);
        if (dominfo(xch, 0, &d) < 0 || d.max_vcpus != d0.max_vcpus || d.online != d0.online ||
            d.dying)
            fail("dom0-domaininfo", "round %lu: vCPUs %u/%u dying %d", round, d.online,
                 d.max_vcpus, d.dying);
        if (dominfo(xch, target, &d) < 0 || d.online > d.max_vcpus || d.dying)
            fail("target-domaininfo", "round %lu: vCPUs %u/%u dying %d", round, d.online,
                 d.max_vcpus, d.dying);
        for (i = 0; i < c0.max_vcpus; i++) {
            xc_vcpuinfo_t vi;

            if (xc_vcpu_getinfo(xch, canary, i, &vi) < 0 || vi.cpu_time < cpu0[i])
                fail("canary-vcpuinfo", "round %lu: vCPU %u cpu_time went back", round, i);
            else
                cpu0[i] = vi.cpu_time;
        }
        if (failures > 20)
            break;
        if (now() - last_print >= 10) {
            last_print = now();
            printf("INFO %.0f s: %lu rounds (%.1f MB written), %lu canary checks, %d failures\n",
                   last_print - t0, round, round * (double)wr.bytes / 1e6, checks, failures);
            fflush(stdout);
        }
    }
    landing(&wr, &orig, t0d.max_vcpus, 5);
    printf("%s rewrite: %lu rounds of %zu bytes in %.0f s (%.1f MB written) while the canaries were checked %lu times\n",
           failures ? "FAIL" : "PASS", round, wr.bytes, now() - t0, round * (double)wr.bytes / 1e6,
           checks);
    xenforeignmemory_unmap_resource(fm, wr.res);
    xenforeignmemory_unmap_resource(fm, cn.res);
    xenforeignmemory_close(fm);
    xc_interface_close(xch);
    free(snap);
    free(keep);
    return failures ? 1 : 0;
}
