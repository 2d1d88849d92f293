/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vcpustats-check: checks a live domain's vCPU statistics region, as mapped
 * from dom0 with xenforeignmemory_map_resource(XENMEM_resource_stats_table,
 * XENMEM_resource_stats_table_id_vcpustats), against every invariant of the
 * layout (docs/vcpu-stats.md), and compares it with xc_vcpu_getinfo().
 *
 *   vcpustats-check check DOMID [--busy V] [--idle V] [--seconds S]
 *   vcpustats-check bench DOMID [ITERATIONS]
 *   vcpustats-check absent DOMID     (unpatched Xen: the resource must fail)
 *   vcpustats-check hold DOMID SECS  (keep the region mapped, reading it,
 *                                     while the domain is destroyed)
 *   vcpustats-check agent DOMID PORT [--busy V] [--idle V] [--seconds S]
 *                                    (what `xenstats agent` on 127.0.0.1:PORT
 *                                     exports for the domain's vCPUs agrees
 *                                     with the hypervisor)
 *
 * One line per result: "PASS name detail", "FAIL name detail", "INFO ..."
 * or "BENCH ..." (a figure, never a failure).  Exit status 0 iff nothing
 * failed.  It reads layout version 2 (domain section, magics, time base)
 * and version 1 (a series before version 2), each against its own rules.  Self-contained on purpose (only the project's ABI header): it
 * checks the hypervisor, not the library.
 */
#define _GNU_SOURCE
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

#include "http_get.h"
#include "vs-getinfo.h"

#define PAGE 4096u
#define MAX_RETRIES 1000

static int failures;

static void result(int ok, const char *name, const char *fmt, ...)
{
    va_list ap;

    printf("%s %s ", ok ? "PASS" : "FAIL", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    if (!ok)
        failures++;
}

static void info(const char *fmt, ...)
{
    va_list ap;

    fputs("INFO ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct region {
    xenforeignmemory_handle *fm;
    xenforeignmemory_resource_handle *res;
    const volatile unsigned char *base;
    size_t bytes;
    uint32_t offset, size, stride, nr_vcpus;
    uint32_t version; /* 1, or the header's */
    struct xen_vcpu_stats_header h; /* version 2: the header as read once */
    int ticks;        /* version 2 with a time base this checker reads */
};

/* The time base's counter as dom0 user space reads it (vcpu_stats.h). */
static uint64_t ticks_now(void)
{
#if defined(__x86_64__)
    __builtin_ia32_lfence();
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;

    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
#define TICKS_SOURCE XEN_VCPU_STATS_TICK_X86_TSC
#elif defined(__aarch64__)
#define TICKS_SOURCE XEN_VCPU_STATS_TICK_ARM_CNTVCT
#else
#define TICKS_SOURCE XEN_VCPU_STATS_TICK_NONE
#endif

static void cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

struct snap {
    uint64_t c[XEN_VCPU_STATS_NR_COUNTERS];
    uint32_t seq;
    unsigned retries;
};

/* Sequence-lock copy of one record; -1 when the writer never settles. */
static int read_record(const struct region *r, uint32_t vcpu, struct snap *s)
{
    const volatile struct xen_vcpu_stats *rec =
        (const volatile struct xen_vcpu_stats *)(r->base + r->offset + (size_t)vcpu * r->stride);
    unsigned n;

    for (n = 0; n <= MAX_RETRIES; n++) {
        uint32_t s1 = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE), s2;

        if (s1 & 1) {
            cpu_relax();
            continue;
        }
        /* One block copy of the counters (the seq reads order it). */
        memcpy(s->c, (const void *)rec->counter, sizeof(s->c));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        s2 = __atomic_load_n(&rec->seq, __ATOMIC_RELAXED);
        if (s1 == s2) {
            s->seq = s1;
            s->retries = n;
            return 0;
        }
    }
    return -1;
}

static int domain_vcpus(xc_interface *xch, uint32_t domid, uint32_t *nr)
{
    /* xc_domain_getinfo() and xc_dominfo_t are gone from 4.18's libxenctrl;
     * getinfolist is in both (it returns the first domain >= domid). */
    xc_domaininfo_t di;

    if (xc_domain_getinfolist(xch, domid, 1, &di) != 1 || di.domain != domid)
        return -1;
    *nr = di.max_vcpu_id + 1;
    return 0;
}

static int map_region(xc_interface *xch, uint32_t domid, struct region *r)
{
    size_t size = 0;
    void *addr = NULL;
    int rc;

    memset(r, 0, sizeof(*r));
    if (domain_vcpus(xch, domid, &r->nr_vcpus) < 0) {
        result(0, "domain", "xc_domain_getinfolist(%u): %s", domid, strerror(errno));
        return -1;
    }
    r->fm = xenforeignmemory_open(NULL, 0);
    if (!r->fm) {
        result(0, "fmem-open", "%s", strerror(errno));
        return -1;
    }
    /* This checker runs in dom0.  A PV domain maps its own frames as
     * DOMID_SELF: Linux hands the domid on to mmu_update as the frames'
     * owner, and Xen refuses a foreign owner that is the caller itself. */
    if (domid == 0)
        domid = DOMID_SELF;
    rc = xenforeignmemory_resource_size(r->fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE,
                                        XEN_VCPU_STATS_RESOURCE_ID, &size);
    /* Xen 4.17's unpatched resource_max_frames() can "succeed" with garbage. */
    if (rc < 0 || size == 0 || size % PAGE || size > (64u << 20)) {
        result(0, "resource-size", "rc=%d errno=%s size=%zu", rc, strerror(errno), size);
        return -1;
    }
    result(1, "resource-size", "%zu bytes (%zu frames) for %u vCPUs", size, size / PAGE,
           r->nr_vcpus);
    r->res = xenforeignmemory_map_resource(r->fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE,
                                           XEN_VCPU_STATS_RESOURCE_ID, 0, size / PAGE, &addr,
                                           PROT_READ, 0);
    if (!r->res) {
        result(0, "map-resource", "%zu frames: %s", size / PAGE, strerror(errno));
        return -1;
    }
    r->base = addr;
    r->bytes = size;
    return 0;
}

static void unmap_region(struct region *r)
{
    if (r->res)
        xenforeignmemory_unmap_resource(r->fm, r->res);
    if (r->fm)
        xenforeignmemory_close(r->fm);
}

static int all_ff(const volatile unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != 0xff)
            return 0;
    return 1;
}

static int all_zero(const volatile unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/*
 * Version 2: the header's own fields, the domain section between it and
 * the records, the arch blocks, the reserved bytes, every magic.
 */
static int check_v2(struct region *r)
{
    const struct xen_vcpu_stats_header *h = &r->h;
    const volatile unsigned char *dom;
    uint64_t dom_end, magic_bad = 0, v;

    result(h->header_size >= XEN_VCPU_STATS_HEADER_SIZE && h->header_size % 8 == 0, "v2-header-size",
           "%u (this checker's: %u)", h->header_size, XEN_VCPU_STATS_HEADER_SIZE);
    result(h->version >= XEN_VCPU_STATS_VERSION, "v2-version", "%u", h->version);
    result(h->nr_vcpus == r->nr_vcpus, "v2-nr-vcpus", "%u records for max_vcpu_id + 1 = %u", h->nr_vcpus,
           r->nr_vcpus);
    result(h->arch == (TICKS_SOURCE == XEN_VCPU_STATS_TICK_X86_TSC ? XEN_VCPU_STATS_ARCH_X86
                                                                   : XEN_VCPU_STATS_ARCH_ARM),
           "v2-arch", "%u", h->arch);
    dom_end = (uint64_t)h->domain_offset + h->domain_arch_offset + h->domain_arch_size;
    result(h->domain_offset >= h->header_size && h->domain_offset % 8 == 0 && h->domain_size >= 8 &&
               h->domain_size % 8 == 0 && h->domain_arch_offset >= h->domain_size &&
               h->domain_arch_offset % 8 == 0 && h->domain_arch_size % 8 == 0 && dom_end <= r->offset,
           "v2-domain-bounds",
           "domain section at %u, %u bytes, arch block %u+%u, records at %u (offset >= its end)",
           h->domain_offset, h->domain_size, h->domain_arch_offset, h->domain_arch_size, r->offset);
    result(h->vcpu_arch_offset >= r->size && h->vcpu_arch_offset % 8 == 0 && h->vcpu_arch_size % 8 == 0 &&
               (uint64_t)h->vcpu_arch_offset + h->vcpu_arch_size <= r->stride,
           "v2-vcpu-arch-bounds", "arch block %u+%u in a record of size %u, stride %u", h->vcpu_arch_offset,
           h->vcpu_arch_size, r->size, r->stride);
    if (h->domain_offset < h->header_size || dom_end > r->offset)
        return -1;
    result(all_zero(r->base + h->header_size, h->domain_offset - h->header_size), "v2-reserved-zero",
           "bytes %u..%u all 0", h->header_size, h->domain_offset);
    dom = r->base + h->domain_offset;
    result(*(const volatile uint32_t *)(dom + 4) == XEN_VCPU_STATS_DOMAIN_MAGIC, "v2-domain-magic", "%#x",
           *(const volatile uint32_t *)(dom + 4));
    result(all_ff(dom + h->domain_size, h->domain_arch_offset - h->domain_size) &&
               all_ff(r->base + dom_end, r->offset - dom_end),
           "v2-domain-padding", "domain section padding up to offset %u all 0xff", r->offset);
    result(h->domain_size >= XEN_VCPU_STATS_DOMAIN_SIZE, "v2-domain-size", "%u (this checker's: %u)",
           h->domain_size, XEN_VCPU_STATS_DOMAIN_SIZE);
    for (v = 0; v < r->nr_vcpus; v++)
        if (*(const volatile uint32_t *)(r->base + r->offset + v * r->stride + 4) != XEN_VCPU_STATS_VCPU_MAGIC)
            magic_bad++;
    result(magic_bad == 0, "v2-record-magic", "%#x in %u records (%" PRIu64 " bad)", XEN_VCPU_STATS_VCPU_MAGIC,
           r->nr_vcpus, magic_bad);
    if (h->tick_source == XEN_VCPU_STATS_TICK_NONE) {
        info("time base: none (tick_hz %" PRIu64 "); projections use the estimated offset", h->tick_hz);
        result(h->tick_hz == 0, "v2-time-base", "none, tick_hz 0");
    } else {
        result(h->tick_source == TICKS_SOURCE && h->tick_hz > 0, "v2-time-base",
               "source %u, %" PRIu64 " Hz, stamped for domain %u", h->tick_source, h->tick_hz, h->tick_domid);
        /* this checker runs in domain 0 */
        r->ticks = h->tick_source == TICKS_SOURCE && h->tick_hz > 0 && h->tick_domid == 0;
    }
    return 0;
}

/* Header, padding, the last frame's tail; fills r->offset/size/stride. */
static int check_layout(struct region *r, uint32_t domid)
{
    const volatile struct xen_vcpu_stats_header *h = (const volatile void *)r->base;
    uint32_t magic = h->magic, v, version, need_size;
    uint64_t need, pad_bad = 0, tail_bad = 0;
    int ok;

    r->offset = h->offset;
    r->size = h->size;
    r->stride = h->stride;
    version = r->offset >= 24 ? h->version : 1;
    r->version = version >= 2 && version != XEN_VCPU_STATS_INACTIVE32 ? version : 1;
    info("layout version %u", r->version);
    if (r->version >= 2)
        memcpy(&r->h, (const void *)r->base, sizeof(r->h));
    /* version 1's record ended with update_time */
    need_size = r->version >= 2 ? XEN_VCPU_STATS_RECORD_SIZE
                                : XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_UPDATE_TIME + 1);
    result(magic == XEN_VCPU_STATS_MAGIC, "header-magic", "%#x", magic);
    result(r->offset >= 16 && r->offset % XEN_VCPU_STATS_ALIGN == 0,
           "header-offset", "%u (>= 16, multiple of %u)", r->offset, XEN_VCPU_STATS_ALIGN);
    result(r->size >= 8 && r->size % 8 == 0 && r->size >= need_size, "header-size",
           "%u (record of this ABI version: %u)", r->size, need_size);
    result(r->stride >= r->size && r->stride % XEN_VCPU_STATS_ALIGN == 0, "header-stride",
           "%u (>= size, multiple of %u)", r->stride, XEN_VCPU_STATS_ALIGN);
    if (magic != XEN_VCPU_STATS_MAGIC || r->offset < 16 || r->size < 8 || r->stride < r->size)
        return -1;
    need = (uint64_t)r->offset + (uint64_t)r->nr_vcpus * r->stride;
    result(need <= r->bytes && r->bytes == (need + PAGE - 1) / PAGE * PAGE, "resource-frames",
           "offset + %u * stride = %" PRIu64 " bytes -> %zu bytes mapped (whole frames, none spare)",
           r->nr_vcpus, need, r->bytes);
    if (need > r->bytes)
        return -1;
    if (r->version == 1)
        result(all_ff(r->base + 16, r->offset - 16), "header-padding", "bytes 16..%u all 0xff", r->offset);
    else if (check_v2(r) < 0)
        return -1;
    for (v = 0; v < r->nr_vcpus; v++) {
        const volatile unsigned char *rec = r->base + r->offset + (size_t)v * r->stride;
        const volatile struct xen_vcpu_stats *s = (const volatile void *)rec;
        uint32_t tail = r->version >= 2 ? r->h.vcpu_arch_offset + r->h.vcpu_arch_size : r->size;

        if (r->version == 1 && s->magic != 0xffffffffu) /* version 1's _pad */
            pad_bad++;
        if (!all_ff(rec + r->size, (r->version >= 2 ? r->h.vcpu_arch_offset : r->size) - r->size) ||
            !all_ff(rec + tail, r->stride - tail))
            tail_bad++;
        /* Counters this Xen has beyond those this checker knows. */
        if (r->size > need_size && v == 0)
            info("%u bytes of counters unknown to this checker in each record", r->size - need_size);
    }
    if (r->version == 1)
        result(pad_bad == 0, "record-pad", "_pad == 0xffffffff in %u records (%" PRIu64 " bad)",
               r->nr_vcpus, pad_bad);
    result(tail_bad == 0, "record-tail", "bytes size..stride (but arch counters) all 0xff in %u records (%" PRIu64
           " bad)", r->nr_vcpus, tail_bad);
    ok = all_ff(r->base + need, r->bytes - need);
    result(ok, "frame-tail", "bytes %" PRIu64 "..%zu all 0xff", need, r->bytes);
    (void)domid;
    return 0;
}

/*
 * The domain section under its seq, around getdomaininfo: what it holds is
 * what the hypercall returns (tot_pages may move between the two: retried).
 */
static void check_domain_section(xc_interface *xch, uint32_t domid, const struct region *r)
{
    const volatile unsigned char *dom = r->base + r->h.domain_offset;
    uint64_t c[XEN_VCPU_STATS_DOMAIN_NR_COUNTERS];
    xc_domaininfo_t di;
    int n;

    for (n = 0; n < 100; n++) {
        uint32_t s1 = __atomic_load_n((const volatile uint32_t *)dom, __ATOMIC_ACQUIRE), s2;

        if (s1 & 1) {
            cpu_relax();
            continue;
        }
        memcpy(c, (const void *)(dom + 8), sizeof(c));
        if (xc_domain_getinfolist(xch, domid, 1, &di) != 1 || di.domain != domid) {
            result(0, "v2-domain-counters", "getdomaininfo(%u): %s", domid, strerror(errno));
            return;
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        s2 = __atomic_load_n((const volatile uint32_t *)dom, __ATOMIC_RELAXED);
        if (s1 == s2 && c[XEN_VCPU_STATS_DOMAIN_TOT_PAGES] == di.tot_pages)
            break;
    }
    result(c[XEN_VCPU_STATS_DOMAIN_TOT_PAGES] == di.tot_pages && c[XEN_VCPU_STATS_DOMAIN_MAX_PAGES] == di.max_pages &&
               c[XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES] == di.outstanding_pages,
           "v2-domain-counters",
           "tot_pages %" PRIu64 " max_pages %" PRIu64 " outstanding %" PRIu64 " (getdomaininfo: %" PRIu64
           " %" PRIu64 " %" PRIu64 ")",
           c[0], c[1], c[2], (uint64_t)di.tot_pages, (uint64_t)di.max_pages, (uint64_t)di.outstanding_pages);
}

static int read_all(const struct region *r, struct snap *s, unsigned *max_retries)
{
    uint32_t v;

    *max_retries = 0;
    for (v = 0; v < r->nr_vcpus; v++) {
        if (read_record(r, v, &s[v]) < 0)
            return -1;
        if (s[v].retries > *max_retries)
            *max_retries = s[v].retries;
    }
    return 0;
}

static uint64_t sum4(const struct snap *s)
{
    return s->c[0] + s->c[1] + s->c[2] + s->c[3];
}

static const char *state_name(uint64_t st)
{
    static const char *n[] = { "running", "runnable", "blocked", "offline" };

    return st < 4 ? n[st] : "?";
}

struct reading {
    struct snap s;
    xc_vcpuinfo_t xi;
    uint64_t mono;   /* dom0 clock at the hypercall (middle of the window) */
    uint64_t window; /* dom0 time the hypercall took: the uncertainty of mono */
    uint64_t ticks;  /* the time base's counter at mono */
    int stable;      /* the record did not change around the hypercall */
};

/* A record and xc_vcpu_getinfo() of the same vCPU at (nearly) one instant. */
static int take_reading(xc_interface *xch, uint32_t domid, const struct region *r, uint32_t v,
                        struct reading *out)
{
    struct snap s1;
    int n;

    for (n = 0; n < 50; n++) {
        uint64_t m0, m1, t0, t1;

        if (read_record(r, v, &s1) < 0)
            return -1;
        t0 = ticks_now();
        m0 = mono_ns();
        if (xc_vcpu_getinfo(xch, domid, v, &out->xi) < 0)
            return -1;
        m1 = mono_ns();
        t1 = ticks_now();
        out->ticks = t0 + (t1 - t0) / 2;
        if (read_record(r, v, &out->s) < 0)
            return -1;
        out->mono = m0 + (m1 - m0) / 2;
        out->window = m1 - m0;
        out->stable = s1.seq == out->s.seq;
        if (out->stable)
            return 0;
    }
    return 0;
}

/* A reading of every vCPU; 0 if any record never settled or the call failed. */
static int take_readings(xc_interface *xch, uint32_t domid, const struct region *r, struct reading *out)
{
    uint32_t v;
    int ok = 1;

    for (v = 0; v < r->nr_vcpus; v++)
        ok &= take_reading(xch, domid, r, v, &out[v]) == 0;
    return ok;
}

/* Xen's NOW() at a reading, by the time base: update_time plus the ticks since. */
static int64_t time_base_now(const struct region *r, const struct reading *x)
{
    uint64_t stamp = x->s.c[XEN_VCPU_STATS_UPDATE_TICKS];
    int64_t dt = (int64_t)(x->ticks - stamp);

    return (int64_t)x->s.c[XEN_VCPU_STATS_UPDATE_TIME] +
           (int64_t)((__int128)dt * 1000000000 / (__int128)r->h.tick_hz);
}

/*
 * The time base on live Xen: with no estimated offset, a running vCPU's
 * running time brought up to now agrees with xc_vcpu_getinfo()'s cpu_time
 * (within the hypercall's window and 1 ms), and between two readings the
 * producer's time moved as dom0's clock did (within 1% and 2 ms).
 */
static void check_time_base(const struct region *r, unsigned v, const struct reading *a, const struct reading *b,
                            uint64_t elapsed)
{
    int64_t na = time_base_now(r, a), nb = time_base_now(r, b), moved = nb - na;
    int64_t tol = (int64_t)elapsed / 100 + 2000000;

    result(moved - (int64_t)elapsed <= tol && (int64_t)elapsed - moved <= tol, "time-base-elapsed",
           "vCPU %u: Xen time by the time base moved %.6f s, dom0 clock %.6f s", v, moved / 1e9,
           elapsed / 1e9);
    if (b->stable && b->s.c[XEN_VCPU_STATS_STATE] == XEN_VCPU_STATS_RUNSTATE_RUNNING && b->xi.running) {
        int64_t proj = (int64_t)b->s.c[XEN_VCPU_STATS_RUNNING_TIME] + nb -
                       (int64_t)b->s.c[XEN_VCPU_STATS_UPDATE_TIME];
        int64_t diff = (int64_t)b->xi.cpu_time - proj, wtol = 1000000 + (int64_t)b->window;

        result(diff <= wtol && -diff <= wtol, "time-base-vs-getinfo",
               "vCPU %u (running): running time %.3f ms by the time base, cpu_time %.3f ms: diff %.3f ms, "
               "tolerance %.1f ms", v, proj / 1e6, b->xi.cpu_time / 1e6, diff / 1e6, wtol / 1e6);
    }
}

static int cmd_check(xc_interface *xch, uint32_t domid, int busy, int idle, unsigned seconds)
{
    struct region r;
    struct reading *a = NULL, *b = NULL;
    unsigned v, i;
    int64_t k = 0; /* Xen system time - dom0 CLOCK_MONOTONIC_RAW */
    uint64_t k_window = 0; /* its uncertainty */
    const char *k_how = "none";
    int ok;

    if (map_region(xch, domid, &r) < 0)
        return 1;
    if (check_layout(&r, domid) < 0)
        goto out;

    /* A PV dom0's writable mapping must be refused: the frames are shared
     * read-only.  On Arm every dom0 maps through its p2m, and Xen on Arm
     * maps every foreign frame writable (p2m_map_foreign_rw): there the
     * mapping succeeds, and the rewrite test (stats-rewrite) shows that
     * writing into it cannot mislead Xen. */
    {
        void *w = NULL;
        xenforeignmemory_resource_handle *wr = xenforeignmemory_map_resource(
            r.fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE, XEN_VCPU_STATS_RESOURCE_ID, 0, 1, &w,
            PROT_READ | PROT_WRITE, 0);
        int e = errno;

#if defined(__aarch64__) || defined(__arm__)
        result(wr != NULL, "write-map-arm", "PROT_WRITE mapping on Arm (p2m_map_foreign_rw): %s",
               wr ? "succeeded, as for every mapper on Arm" : strerror(e));
#else
        result(wr == NULL, "write-map-refused", "PROT_WRITE mapping: %s",
               wr ? "succeeded" : strerror(e));
#endif
        if (wr)
            xenforeignmemory_unmap_resource(r.fm, wr);
    }
    {
        void *w = NULL;
        xenforeignmemory_resource_handle *wr = xenforeignmemory_map_resource(
            r.fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE, 1, 0, 1, &w, PROT_READ, 0);
        int e = errno;

        result(wr == NULL, "unknown-id-refused", "id 1: %s", wr ? "mapped" : strerror(e));
        if (wr)
            xenforeignmemory_unmap_resource(r.fm, wr);
    }

    a = calloc(r.nr_vcpus, sizeof(*a));
    b = calloc(r.nr_vcpus, sizeof(*b));
    if (!a || !b)
        goto out;

    ok = take_readings(xch, domid, &r, a);
    result(ok, "seqlock-read", "all %u records read with even, unchanged seq", r.nr_vcpus);
    if (!ok)
        goto out;
    for (v = 0; v < r.nr_vcpus; v++) {
        const struct snap *s = &a[v].s;
        int active = 1;

        /* version 1 ends at update_time; UPDATE_TICKS lives with a time base */
        for (i = 0; i <= XEN_VCPU_STATS_UPDATE_TIME; i++)
            if (s->c[i] & XEN_VCPU_STATS_INACTIVE_BIT)
                active = 0;
        if (r.version >= 2 && r.h.tick_source != XEN_VCPU_STATS_TICK_NONE &&
            (s->c[XEN_VCPU_STATS_UPDATE_TICKS] & XEN_VCPU_STATS_INACTIVE_BIT))
            active = 0;
        result(active && s->c[XEN_VCPU_STATS_STATE] <= 3 && !(s->seq & 1), "record-active",
               "vCPU %u: seq %u running %" PRIu64 " runnable %" PRIu64 " blocked %" PRIu64
               " offline %" PRIu64 " changes %" PRIu64 " state %s update_time %" PRIu64,
               v, s->seq, s->c[0], s->c[1], s->c[2], s->c[3], s->c[4], state_name(s->c[5]),
               s->c[6]);
    }

    if (r.version >= 2)
        check_domain_section(xch, domid, &r);

    /*
     * Xen's NOW() is not readable from dom0 user space.  Estimate its offset
     * from dom0's clock with a vCPU that was running across its hypercall:
     * cpu_time = running_time + (NOW - update_time).  Else only a lower
     * bound is known: NOW >= every update_time.
     */
    for (v = 0; v < r.nr_vcpus; v++) {
        struct reading x = a[v];
        unsigned n;

        /* The reading with the shortest hypercall gives the best estimate. */
        for (n = 0; n < 20; n++) {
            if (x.stable && x.s.c[5] == XEN_VCPU_STATS_RUNSTATE_RUNNING && x.xi.running &&
                (!strcmp(k_how, "none") || x.window < k_window)) {
                k = (int64_t)(x.xi.cpu_time - x.s.c[0] + x.s.c[6]) - (int64_t)x.mono;
                k_window = x.window;
                k_how = "a running vCPU's cpu_time";
            }
            if (take_reading(xch, domid, &r, v, &x) < 0)
                break;
        }
        if (strcmp(k_how, "none"))
            break;
    }
    if (!strcmp(k_how, "none")) {
        for (v = 0; v < r.nr_vcpus; v++) {
            int64_t lb = (int64_t)a[v].s.c[6] - (int64_t)a[v].mono;

            if (!strcmp(k_how, "none") || lb > k)
                k = lb;
            k_how = "the latest update_time (lower bound)";
        }
    }
    info("Xen system time - dom0 CLOCK_MONOTONIC_RAW = %" PRId64 " ns (+- %.3f ms), from %s", k,
         k_window / 2e6, k_how);

    info("sleeping %u s between two readings", seconds);
    sleep(seconds);

    ok = take_readings(xch, domid, &r, b);
    result(ok, "seqlock-read-2", "all %u records read again", r.nr_vcpus);
    if (!ok)
        goto out;

    for (v = 0; v < r.nr_vcpus; v++) {
        const struct snap *sa = &a[v].s, *sb = &b[v].s;
        uint64_t elapsed = b[v].mono - a[v].mono;
        int mono = 1;
        int64_t inv_a, inv_b, g[4], gsum = 0;

        for (i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
            if (i != XEN_VCPU_STATS_STATE && sb->c[i] < sa->c[i])
                mono = 0;
        result(mono && !(sb->seq & 1) && sb->seq >= sa->seq, "monotonic",
               "vCPU %u: seq, times, changes and update_time never decrease "
               "(%" PRIu64 " changes in %.2f s)", v, sb->c[4] - sa->c[4], elapsed / 1e9);

        /*
         * Sum rule, exact: the times are accounted up to update_time and
         * cover the vCPU's whole life, so their sum minus update_time (minus
         * the creation time) never changes.
         */
        inv_a = (int64_t)(sum4(sa) - sa->c[6]);
        inv_b = (int64_t)(sum4(sb) - sb->c[6]);
        result(inv_a == inv_b, "sum-rule-exact",
               "vCPU %u: sum of the four times - update_time = %" PRId64 " at both readings: %s",
               v, inv_a, inv_a == inv_b ? "same" : "DIFFERENT");

        /*
         * Staleness rule at both readings (now = dom0 clock + k): the four
         * times grow by the elapsed time, split between the states.
         */
        for (i = 0; i < 4; i++) {
            g[i] = (int64_t)(sb->c[i] - sa->c[i]);
            if (sb->c[5] == i)
                g[i] += (int64_t)b[v].mono + k - (int64_t)sb->c[6];
            if (sa->c[5] == i)
                g[i] -= (int64_t)a[v].mono + k - (int64_t)sa->c[6];
            gsum += g[i];
        }
        result(gsum == (int64_t)elapsed, "sum-rule-elapsed",
               "vCPU %u: the four projected times grew %.6f s, dom0 clock %.6f s", v, gsum / 1e9,
               elapsed / 1e9);
        info("vCPU %u over %.2f s: running %.1f%% runnable %.1f%% blocked %.1f%% offline %.1f%% "
             "(now %s)", v, elapsed / 1e9, 100.0 * g[0] / elapsed, 100.0 * g[1] / elapsed,
             100.0 * g[2] / elapsed, 100.0 * g[3] / elapsed, state_name(sb->c[5]));
        if ((int)v == busy)
            result(g[0] >= (int64_t)elapsed / 2 && g[0] > g[2], "busy-vcpu-running",
                   "vCPU %u running %.1f%% of %.2f s (needs >= 50%%)", v, 100.0 * g[0] / elapsed,
                   elapsed / 1e9);
        if ((int)v == idle)
            result(g[2] >= (int64_t)elapsed * 4 / 10 && g[2] >= 2 * g[0], "idle-vcpu-blocked",
                   "vCPU %u blocked %.1f%%, running %.1f%% of %.2f s (needs >= 40%% and twice "
                   "running: the guest kernel's own housekeeping runs there, and runs late under "
                   "QEMU on a loaded host: 58.2 %% once at load 28)", v, 100.0 * g[2] / elapsed,
                   100.0 * g[0] / elapsed, elapsed / 1e9);

        /*
         * xc_vcpu_getinfo()'s cpu_time is runstate.time[running] plus, for a
         * running vCPU, the time since its last change.  At the second
         * reading (k came from the first), the region's running time with
         * the staleness rule applied must match it.
         */
        {
            int64_t proj = (int64_t)sb->c[0];
            /*
             * Not running: cpu_time is the counter, exactly.  Running: it is
             * at least the counter but for the pCPUs' skew (vs-getinfo.h),
             * and the time since update_time is known only through dom0's
             * clock: allow 1 ms, the hypercall windows that bound k's and
             * this reading's error, and 1% of the interval for the skew
             * between dom0's clock and NOW() on another pCPU (up to 8 ms
             * over 5 s seen under QEMU TCG).
             */
            int running = sb->c[5] == XEN_VCPU_STATS_RUNSTATE_RUNNING;
            int64_t diff, tol = running ? 1000000 + (int64_t)(k_window + b[v].window) +
                                              (int64_t)elapsed / 100
                                        : 0;
            int ok_cmp;

            if (running)
                proj += (int64_t)b[v].mono + k - (int64_t)sb->c[6];
            diff = (int64_t)b[v].xi.cpu_time - proj;
            ok_cmp = vs_getinfo_ok(running, sb->c[0], proj, b[v].xi.cpu_time, tol);
            result(!b[v].stable || ok_cmp, "vs-getinfo",
                   "vCPU %u (%s): running time %.3f ms (region, staleness rule applied), cpu_time "
                   "%.3f ms (xc_vcpu_getinfo): diff %.3f ms, tolerance %.1f ms; counter ahead of "
                   "cpu_time by %.3f ms, pCPU skew allowed %.1f ms%s",
                   v, state_name(sb->c[5]), proj / 1e6, b[v].xi.cpu_time / 1e6, diff / 1e6,
                   tol / 1e6, ((int64_t)sb->c[0] - (int64_t)b[v].xi.cpu_time) / 1e6,
                   running ? VS_GETINFO_PCPU_SKEW_NS / 1e6 : 0.0,
                   b[v].stable ? "" : " (record kept changing: not compared)");
        }
        if (r.ticks)
            check_time_base(&r, v, &a[v], &b[v], elapsed);
    }
out:
    free(a);
    free(b);
    unmap_region(&r);
    return failures ? 1 : 0;
}

static int cmd_bench(xc_interface *xch, uint32_t domid, unsigned iters)
{
    struct region r;
    struct snap *s;
    xc_vcpuinfo_t xi;
    unsigned retries, n, v;
    uint64_t t0, t_region, t_getinfo;
    double per_region, per_getinfo;
    unsigned hc_iters = iters / 100 ? iters / 100 : 1;

    if (map_region(xch, domid, &r) < 0)
        return 1;
    if (check_layout(&r, domid) < 0)
        goto out;
    s = calloc(r.nr_vcpus, sizeof(*s));
    if (!s)
        goto out;

    t0 = mono_ns();
    for (n = 0; n < iters; n++)
        if (read_all(&r, s, &retries) < 0)
            break;
    t_region = mono_ns() - t0;

    t0 = mono_ns();
    for (n = 0; n < hc_iters; n++)
        for (v = 0; v < r.nr_vcpus; v++)
            xc_vcpu_getinfo(xch, domid, v, &xi);
    t_getinfo = mono_ns() - t0;

    per_region = (double)t_region / iters;
    per_getinfo = (double)t_getinfo / hc_iters;
    info("bench domid %u, %u vCPUs: region %.0f ns per read of all vCPUs (%u reads), "
         "xc_vcpu_getinfo %.0f ns per all vCPUs (%u rounds)", domid, r.nr_vcpus, per_region,
         iters, per_getinfo, hc_iters);
    /* A figure, not a check: speed under emulation is not pass/fail. */
    printf("BENCH ratio %u vCPUs: shared region %.0f ns vs xc_vcpu_getinfo %.1f us: %.0fx "
           "(goal >= 400x: %s)\n", r.nr_vcpus, per_region, per_getinfo / 1e3,
           per_getinfo / per_region, per_getinfo / per_region >= 400 ? "met" : "NOT met");
out:
    unmap_region(&r);
    return failures ? 1 : 0;
}

/*
 * Keep the region mapped for `seconds`, reading it, while the domain is
 * destroyed under it: the mapping holds its own page references, so the
 * frames stay valid (the header keeps its magic) until it is dropped.
 */
static int cmd_hold(xc_interface *xch, uint32_t domid, unsigned seconds)
{
    struct region r;
    unsigned n, bad = 0;

    if (map_region(xch, domid, &r) < 0)
        return 1;
    for (n = 0; n < seconds * 10; n++) {
        if (((const volatile struct xen_vcpu_stats_header *)r.base)->magic != XEN_VCPU_STATS_MAGIC)
            bad++;
        usleep(100000);
    }
    result(bad == 0, "hold", "region of domid %u readable for %u s while mapped (%u bad reads)",
           domid, seconds, bad);
    unmap_region(&r);
    return failures ? 1 : 0;
}

/* On an unpatched Xen the resource must fail cleanly (the fallback case). */
static int cmd_absent(uint32_t domid)
{
    xenforeignmemory_handle *fm = xenforeignmemory_open(NULL, 0);
    xenforeignmemory_resource_handle *res;
    void *addr = NULL;

    if (!fm) {
        result(0, "fmem-open", "%s", strerror(errno));
        return 1;
    }
    res = xenforeignmemory_map_resource(fm, domid, XEN_VCPU_STATS_RESOURCE_TYPE,
                                        XEN_VCPU_STATS_RESOURCE_ID, 0, 1, &addr, PROT_READ, 0);
    result(res == NULL, "resource-absent", "map_resource: %s", res ? "mapped" : strerror(errno));
    if (res)
        xenforeignmemory_unmap_resource(fm, res);
    xenforeignmemory_close(fm);
    return failures ? 1 : 0;
}

/* ---- agent: what `xenstats agent` exports, against the hypervisor ---- */

#define AGENT_MAX_VCPUS 128

struct agent_vcpus {
    int source_resource; /* xenstats_domain_vcpu_stats_source{source="resource"} 1 */
    unsigned seen;       /* runstate series found */
    double t[AGENT_MAX_VCPUS][4];
};

/* The value of label `name` in a series line's {...}, or NULL. */
static const char *label_value(const char *line, const char *name, char *out, size_t size)
{
    char key[64];
    const char *p, *end = strchr(line, '}');
    size_t n;

    snprintf(key, sizeof(key), "%s=\"", name);
    p = strstr(line, key);
    if (!p || !end || p > end)
        return NULL;
    p += strlen(key);
    n = strcspn(p, "\"");
    if (n >= size)
        return NULL;
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

static int parse_agent_metrics(char *text, uint32_t domid, struct agent_vcpus *a)
{
    static const char *rs[4] = { "running", "runnable", "blocked", "offline" };
    char want[32], val[64], *line, *save = NULL;

    memset(a, 0, sizeof(*a));
    snprintf(want, sizeof(want), "%u", domid);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *sp = strrchr(line, ' ');

        if (line[0] == '#' || !sp || !label_value(line, "domid", val, sizeof(val)) ||
            strcmp(val, want))
            continue;
        if (!strncmp(line, "xenstats_domain_vcpu_stats_source{", 34)) {
            if (label_value(line, "source", val, sizeof(val)) && !strcmp(val, "resource") &&
                !strcmp(sp + 1, "1"))
                a->source_resource = 1;
        } else if (!strncmp(line, "xenstats_vcpu_runstate_seconds_total{", 37)) {
            unsigned v, i;

            if (!label_value(line, "vcpu", val, sizeof(val)))
                continue;
            v = (unsigned)strtoul(val, NULL, 10);
            if (v >= AGENT_MAX_VCPUS || !label_value(line, "runstate", val, sizeof(val)))
                continue;
            for (i = 0; i < 4; i++)
                if (!strcmp(val, rs[i])) {
                    a->t[v][i] = strtod(sp + 1, NULL);
                    a->seen++;
                }
        }
    }
    return 0;
}

static int fetch_agent(unsigned port, uint32_t domid, uint32_t nr, struct agent_vcpus *a,
                       unsigned wait_s)
{
    unsigned n;

    for (n = 0; n <= wait_s; n++) {
        char *text = e2e_http_get(port, "/metrics", NULL);

        if (text) {
            parse_agent_metrics(text, domid, a);
            free(text);
            if (a->source_resource && a->seen == nr * 4)
                return 0;
        }
        sleep(1);
    }
    return -1;
}

static int cmd_agent(xc_interface *xch, uint32_t domid, unsigned port, int busy, int idle,
                     unsigned seconds)
{
    static struct agent_vcpus a, b;
    uint32_t nr, v;
    uint64_t m0, m1;
    double elapsed;
    int ok;

    if (domain_vcpus(xch, domid, &nr) < 0 || nr > AGENT_MAX_VCPUS) {
        result(0, "agent-domain", "domid %u: %s", domid, strerror(errno));
        return 1;
    }
    /* The agent's source and every vCPU's four times, once it has them. */
    ok = fetch_agent(port, domid, nr, &a, 60) == 0;
    result(ok, "agent-source",
           "127.0.0.1:%u/metrics: domid %u source=\"resource\" %s, %u of %u runstate series", port,
           domid, a.source_resource ? "1" : "missing", a.seen, nr * 4);
    if (!ok)
        return 1;
    m0 = mono_ns();

    /*
     * The exported running time is the hypervisor's as of the agent's last
     * sample (taken every second, projected to the sample with the clock
     * offset the reader learns): at most cpu_time now, and not older than
     * the agent's interval and a second of slack.
     */
    for (v = 0; v < nr; v++) {
        xc_vcpuinfo_t xi;
        double cpu;

        if (xc_vcpu_getinfo(xch, domid, v, &xi) < 0) {
            result(0, "agent-vs-getinfo", "vCPU %u: xc_vcpu_getinfo: %s", v, strerror(errno));
            continue;
        }
        cpu = xi.cpu_time / 1e9;
        result(a.t[v][0] <= cpu + 0.010 && a.t[v][0] >= cpu - 2.0, "agent-vs-getinfo",
               "vCPU %u: exported running %.3f s, xc_vcpu_getinfo cpu_time %.3f s afterwards "
               "(allowed: 2 s older, 10 ms newer)", v, a.t[v][0], cpu);
    }

    sleep(seconds);
    m1 = mono_ns();
    elapsed = (m1 - m0) / 1e9;
    ok = fetch_agent(port, domid, nr, &b, 10) == 0;
    result(ok, "agent-source-2", "second scrape");
    if (!ok)
        return 1;
    for (v = 0; v < nr; v++) {
        double d[4], sum = 0;
        unsigned i;
        int mono = 1;

        for (i = 0; i < 4; i++) {
            d[i] = b.t[v][i] - a.t[v][i];
            mono &= d[i] >= 0;
            sum += d[i];
        }
        /* The agent's two samples are each up to ~1 s behind the scrape. */
        result(mono && sum > elapsed - 1.5 && sum < elapsed + 1.5, "agent-sum",
               "vCPU %u: the four exported times grew %.3f s (never down) over %.3f s of scrapes",
               v, sum, elapsed);
        if (sum <= 0)
            continue;
        if ((int)v == busy)
            result(d[0] >= sum / 2, "agent-busy-running", "vCPU %u running %.1f%% (needs >= 50%%)",
                   v, 100 * d[0] / sum);
        /*
         * Under TCG on a loaded host the idle vCPU's timer work takes longer
         * in wall time (52.7 % blocked once, beside a test suite): it must be
         * mostly blocked, and blocked far more than running.
         */
        if ((int)v == idle)
            result(d[2] >= sum * 0.4 && d[2] >= 2 * d[0], "agent-idle-blocked",
                   "vCPU %u blocked %.1f%%, running %.1f%% (needs >= 40%% and twice running)", v,
                   100 * d[2] / sum, 100 * d[0] / sum);
    }
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    xc_interface *xch;
    uint32_t domid;
    int busy = -1, idle = -1, i, rc;
    unsigned seconds = 5;

    if (argc < 3) {
        fprintf(stderr, "usage: %s check|bench|absent|hold|agent DOMID [options]\n", argv[0]);
        return 2;
    }
    domid = (uint32_t)strtoul(argv[2], NULL, 0);
    for (i = !strcmp(argv[1], "agent") ? 4 : 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--busy"))
            busy = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--idle"))
            idle = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = (unsigned)atoi(argv[i + 1]);
    }
    if (!strcmp(argv[1], "absent"))
        return cmd_absent(domid);
    xch = xc_interface_open(NULL, NULL, 0);
    if (!xch) {
        result(0, "xc-open", "%s", strerror(errno));
        return 1;
    }
    if (!strcmp(argv[1], "check"))
        rc = cmd_check(xch, domid, busy, idle, seconds);
    else if (!strcmp(argv[1], "hold"))
        rc = cmd_hold(xch, domid, argc > 3 ? (unsigned)atoi(argv[3]) : 5);
    else if (!strcmp(argv[1], "bench"))
        rc = cmd_bench(xch, domid, argc > 3 ? (unsigned)atoi(argv[3]) : 100000);
    else if (!strcmp(argv[1], "agent") && argc > 3)
        rc = cmd_agent(xch, domid, (unsigned)atoi(argv[3]), busy, idle, seconds);
    else
        rc = 2;
    xc_interface_close(xch);
    return rc;
}
