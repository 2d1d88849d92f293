/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tools series' libxenstat on a real Xen (tests/e2e/xen-hv, xt_tools):
 *
 *   xenstat-check compare [TOLERANCE_MS]
 *       every vCPU of every domain: libxenstat's running time must lie
 *       between XEN_DOMCTL_getvcpuinfo's cpu_times read just before and
 *       just after the library's call (each end widened by TOLERANCE_MS,
 *       default 20; exactly the one time of a vCPU that did not run in
 *       between), and its online flag be one of theirs; each line says how
 *       long before and after the library's read getvcpuinfo's were made;
 *       the table's memory against getdomaininfo's; and over one second,
 *       each vCPU's four runstate times must grow by exactly the time the
 *       figures moved (1 us).  Exit 1 on a disagreement.
 *   xenstat-check compare-stale DOMID [TOLERANCE_MS]
 *       the same, but the library reads DOMID's table from a copy made by
 *       a call one second earlier (a stale table): must fail, for a domain
 *       whose vCPUs change state (the check can fail on a real Xen).
 *   xenstat-check time N
 *       N calls of xenstat_get_node(XENSTAT_ALL) + xenstat_free_node():
 *       the mean microseconds per call, i.e. what one xentop iteration
 *       spends in libxenstat, and the fastest and the median call (under
 *       emulation on a loaded host a call is often preempted: the mean
 *       then says more about the host than the library).  Uses today's API only, so that the same
 *       program times the stock library (LD_LIBRARY_PATH) and the patched
 *       one.  Built with -DTIME_ONLY it has no other mode.
 *   xenstat-check vtime N
 *       the same with XENSTAT_VCPU only: the part the series changes.
 *
 * The review of v1 of the series, each mode failing with v1's library:
 *   xenstat-check refuse DOMID EOPNOTSUPP|EPERM|EACCES
 *       the table of DOMID (0: this domain's own, asked as DOMID_SELF) is
 *       refused with that error, as a translated dom0 asking for its own
 *       (EOPNOTSUPP) or an XSM policy (EPERM, EACCES) would have it; over
 *       three xenstat_get_node(), DOMID has no table, every other domain
 *       has one, and the refusal was asked once.
 *   xenstat-check inactive DOMID
 *       DOMID's table as mapped is replaced by a private copy whose
 *       domain counter MAX_PAGES is inactive (top bit): the domain
 *       counters must not be exposed, the vCPU records still are.
 *   xenstat-check paused-vcpu DOMID
 *       the same copy with vCPU 0 in RUNSTATE_offline, as a paused vCPU of
 *       a running domain is: xenstat_vcpu_online() must still say what
 *       XEN_DOMCTL_getvcpuinfo says (online).
 *   xenstat-check lifecycle [DOMID]
 *       a bare PV domain (default domid 32000, never run), created,
 *       destroyed and re-created with the same domid and handle by this
 *       program, one libxenstat handle throughout: destroyed while a page
 *       of it is mapped (so it stays listed, dying), its table must be
 *       released by the next xenstat_get_node(); destroyed, by the next
 *       one even without XENSTAT_VCPU; re-created (also after a refusal of
 *       the first one), it must be read from its own new table (its own
 *       MAX_PAGES).  Releases are counted by
 *       interposing xenforeignmemory_unmap_resource().
 * The refusals and copies interpose libxenforeignmemory's functions (this
 * program defines them, and calls the library's through dlsym()).
 */
#ifndef TIME_ONLY
#define _GNU_SOURCE
#define XC_WANT_COMPAT_MAP_FOREIGN_API
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xenctrl.h>
#include <xenstat.h>

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static int do_time(xenstat_handle *xh, unsigned int n, unsigned int flags)
{
    unsigned int i, domains = 0, vcpus = 0, d;
    double t0, t1, *call;
    xenstat_node *node;

    if (n == 0) {
        fprintf(stderr, "time: N must be at least 1\n");
        return 2;
    }
    call = calloc(n, sizeof(*call));
    if (!call) {
        perror("calloc");
        return 2;
    }

    node = xenstat_get_node(xh, flags); /* the first maps the tables */
    if (!node) {
        perror("xenstat_get_node");
        free(call);
        return 2;
    }
    domains = xenstat_node_num_domains(node);
    for (d = 0; d < domains; d++)
        vcpus += xenstat_domain_num_vcpus(xenstat_node_domain_by_index(node, d));
    xenstat_free_node(node);
    t0 = now_us();
    for (i = 0; i < n; i++) {
        double c0 = now_us();

        node = xenstat_get_node(xh, flags);
        if (!node) {
            perror("xenstat_get_node");
            free(call);
            return 2;
        }
        xenstat_free_node(node);
        call[i] = now_us() - c0;
    }
    t1 = now_us();
    qsort(call, n, sizeof(*call), cmp_double);
    printf("time: %u domains, %u vCPUs: %.1f us per xenstat_get_node(%s) (%u calls; fastest %.1f us, median %.1f us)\n",
           domains, vcpus, (t1 - t0) / n, flags == XENSTAT_ALL ? "XENSTAT_ALL" : "XENSTAT_VCPU", n,
           call[0], n % 2 ? call[n / 2] : (call[n / 2 - 1] + call[n / 2]) / 2);
    free(call);
    return 0;
}

#ifndef TIME_ONLY
#include <dlfcn.h>
#include <sys/mman.h>
#include <xenforeignmemory.h>
#include <xen/vcpu.h>
#include <xen/vcpu_stats.h>

#include "vs-getinfo.h"

/* What the interposed libxenforeignmemory functions do */
static struct {
    int refuse_domid;       /* -1: none; the self domain as DOMID_SELF */
    int refuse_errno;
    unsigned int refused;   /* how many times it was asked */
    int copy_domid;         /* -1: none */
    int copy_inactive;      /* MAX_PAGES inactive in the copy */
    int copy_offline;       /* vCPU 0 offline in the copy */
    unsigned int copies;
    int watch_domid;        /* -1: none; count the unmaps of its tables */
    unsigned int watch_unmaps;
    xenforeignmemory_resource_handle *watched[16];
} fake = {-1, 0, 0, -1, 0, 0, 0, -1, 0, {NULL}};
static unsigned int self_domid;

static int fake_match(int want, domid_t domid)
{
    return want >= 0 && (domid == want || (domid == DOMID_SELF && (unsigned int)want == self_domid));
}

int xenforeignmemory_resource_size(xenforeignmemory_handle *fmem, domid_t domid, unsigned int type,
                                   unsigned int id, size_t *size)
{
    static int (*real)(xenforeignmemory_handle *, domid_t, unsigned int, unsigned int, size_t *);

    if (fake_match(fake.refuse_domid, domid)) {
        fake.refused++;
        errno = fake.refuse_errno;
        return -1;
    }
    if (!real)
        real = (int (*)(xenforeignmemory_handle *, domid_t, unsigned int, unsigned int, size_t *))dlsym(
            RTLD_NEXT, "xenforeignmemory_resource_size");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(fmem, domid, type, id, size);
}

xenforeignmemory_resource_handle *xenforeignmemory_map_resource(xenforeignmemory_handle *fmem, domid_t domid,
                                                                unsigned int type, unsigned int id,
                                                                unsigned long frame, unsigned long nr_frames,
                                                                void **paddr, int prot, int flags)
{
    typedef xenforeignmemory_resource_handle *map_fn(xenforeignmemory_handle *, domid_t, unsigned int,
                                                     unsigned int, unsigned long, unsigned long, void **, int, int);
    static map_fn *real;
    xenforeignmemory_resource_handle *res;
    size_t len = nr_frames * 4096, i;
    const struct xen_vcpu_stats_header *h;
    uint8_t *copy;

    if (!real)
        real = (map_fn *)dlsym(RTLD_NEXT, "xenforeignmemory_map_resource");
    if (!real) {
        errno = ENOSYS;
        return NULL;
    }
    res = real(fmem, domid, type, id, frame, nr_frames, paddr, prot, flags);
    if (res && fake.watch_domid >= 0 && domid == fake.watch_domid)
        for (i = 0; i < sizeof(fake.watched) / sizeof(fake.watched[0]); i++)
            if (!fake.watched[i]) {
                fake.watched[i] = res;
                break;
            }
    if (!res || !fake_match(fake.copy_domid, domid) || frame != 0)
        return res;
    copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED)
        return res;
    memcpy(copy, *paddr, len);
    h = (const void *)copy;
    if (h->magic == XEN_VCPU_STATS_MAGIC && h->domain_offset + XEN_VCPU_STATS_DOMAIN_SIZE <= len &&
        h->offset + (size_t)h->nr_vcpus * h->stride <= len) {
        /* a copy taken while Xen wrote a structure: make it readable */
        *(uint32_t *)(copy + h->domain_offset) &= ~1U;
        for (i = 0; i < h->nr_vcpus; i++)
            *(uint32_t *)(copy + h->offset + i * h->stride) &= ~1U;
        if (fake.copy_inactive)
            *(uint64_t *)(copy + h->domain_offset +
                          XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_DOMAIN_MAX_PAGES)) = XEN_VCPU_STATS_INACTIVE;
        if (fake.copy_offline)
            *(uint64_t *)(copy + h->offset + XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_STATE)) =
                RUNSTATE_offline;
        fake.copies++;
    }
    mprotect(copy, len, PROT_READ);
    *paddr = copy; /* left mapped: a test program's few pages */
    return res;
}

int xenforeignmemory_unmap_resource(xenforeignmemory_handle *fmem, xenforeignmemory_resource_handle *fres)
{
    static int (*real)(xenforeignmemory_handle *, xenforeignmemory_resource_handle *);
    size_t i;

    for (i = 0; fres && i < sizeof(fake.watched) / sizeof(fake.watched[0]); i++)
        if (fake.watched[i] == fres) {
            fake.watched[i] = NULL;
            fake.watch_unmaps++;
        }
    if (!real)
        real = (int (*)(xenforeignmemory_handle *, xenforeignmemory_resource_handle *))dlsym(
            RTLD_NEXT, "xenforeignmemory_unmap_resource");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(fmem, fres);
}

static unsigned int read_self_domid(void)
{
    FILE *f = popen("xenstore-read domid 2>/dev/null", "r");
    unsigned int id = 0;

    if (f) {
        if (fscanf(f, "%u", &id) != 1)
            id = 0;
        pclose(f);
    }
    return id;
}

static int errno_by_name(const char *name)
{
    if (!strcmp(name, "EOPNOTSUPP"))
        return EOPNOTSUPP;
    if (!strcmp(name, "EPERM"))
        return EPERM;
    if (!strcmp(name, "EACCES"))
        return EACCES;
    if (!strcmp(name, "EINVAL"))
        return EINVAL;
    return 0;
}

/* refuse: DOMID's table refused with err, every other domain still mapped */
static int do_refuse(xenstat_handle *xh, unsigned int domid, int err, const char *errname)
{
    unsigned int round, d, bad = 0, others = 0, with = 0;
    xenstat_node *node;

    fake.refuse_domid = (int)domid;
    fake.refuse_errno = err;
    for (round = 0; round < 3; round++) {
        node = xenstat_get_node(xh, XENSTAT_VCPU);
        if (!node) {
            perror("xenstat_get_node");
            return 2;
        }
        if (round < 2) {
            xenstat_free_node(node);
            continue;
        }
        for (d = 0; d < xenstat_node_num_domains(node); d++) {
            xenstat_domain *dom = xenstat_node_domain_by_index(node, d);
            unsigned int id = xenstat_domain_id(dom), t = xenstat_domain_has_stats_table(dom);
            unsigned int r = xenstat_domain_num_vcpus(dom) && xenstat_vcpu_has_runstate(xenstat_domain_vcpu(dom, 0));

            if (xenstat_domain_dying(dom))
                continue;
            printf("refuse d%u %s: table %s, vCPU 0 runstate %s\n", id, xenstat_domain_name(dom), t ? "yes" : "no",
                   r ? "yes" : "no");
            if (id == domid) {
                bad += t || r;
                continue;
            }
            others++;
            with += t && r;
        }
        xenstat_free_node(node);
    }
    fake.refuse_domid = -1;
    bad += others == 0 || with != others || fake.refused != 1;
    printf("%s: d%u refused with %s (asked %u times over 3 xenstat_get_node()): %u of %u other domains read from "
           "their table\n", bad ? "FAIL" : "PASS", domid, errname, fake.refused, with, others);
    return bad ? 1 : 0;
}

/* inactive / paused-vcpu: DOMID's table replaced by a doctored copy */
static int do_copy(xenstat_handle *xh, xc_interface *xch, unsigned int domid, int offline)
{
    xenstat_node *node;
    xenstat_domain *dom;
    xenstat_vcpu *v0;
    xc_vcpuinfo_t info;
    int bad;

    fake.copy_domid = (int)domid;
    fake.copy_inactive = !offline;
    fake.copy_offline = offline;
    node = xenstat_get_node(xh, XENSTAT_VCPU);
    if (!node) {
        perror("xenstat_get_node");
        return 2;
    }
    dom = xenstat_node_domain(node, domid);
    v0 = dom && xenstat_domain_num_vcpus(dom) ? xenstat_domain_vcpu(dom, 0) : NULL;
    if (!v0 || !fake.copies || xc_vcpu_getinfo(xch, domid, 0, &info)) {
        printf("FAIL: d%u: no domain, vCPU 0 or copy of its table (%u copies)\n", domid, fake.copies);
        xenstat_free_node(node);
        return 1;
    }
    if (!offline) {
        bad = xenstat_domain_has_stats_table(dom) || !xenstat_vcpu_has_runstate(v0);
        printf("%s: d%u with MAX_PAGES inactive: domain counters %s (max %llu), vCPU 0 runstate %s\n",
               bad ? "FAIL" : "PASS", domid, xenstat_domain_has_stats_table(dom) ? "exposed" : "not exposed",
               xenstat_domain_stats_max_mem(dom), xenstat_vcpu_has_runstate(v0) ? "read" : "not read");
    } else {
        bad = !xenstat_vcpu_has_runstate(v0) || xenstat_vcpu_runstate(v0) != RUNSTATE_offline ||
              xenstat_vcpu_online(v0) != info.online;
        printf("%s: d%u vCPU 0 offline in the table (as a paused vCPU): xenstat_vcpu_online %u, getvcpuinfo online "
               "%u, running time %.3f s vs %.3f s\n",
               bad ? "FAIL" : "PASS", domid, xenstat_vcpu_online(v0), info.online, xenstat_vcpu_ns(v0) / 1e9,
               info.cpu_time / 1e9);
    }
    xenstat_free_node(node);
    fake.copy_domid = -1;
    return bad ? 1 : 0;
}

static const xen_domain_handle_t lc_uuid = {0x78, 0x73, 0x63, 0x6b, 0x6c, 0x69, 0x66, 0x65,
                                            0x63, 0x79, 0x63, 0x6c, 0x65, 0x00, 0x00, 0x01};

static int lc_create(xc_interface *xch, uint32_t domid, unsigned int kib)
{
    struct xen_domctl_createdomain cfg;
    uint32_t id = domid;
    char cmd[128];
    int tries;

    memset(&cfg, 0, sizeof(cfg));
    cfg.max_vcpus = 2;
    cfg.max_grant_frames = 4;
    cfg.max_maptrack_frames = 4;
    cfg.grant_opts = XEN_DOMCTL_GRANT_version(1);
    memcpy(cfg.handle, lc_uuid, sizeof(cfg.handle));
    /* a destroyed domain's id is free once Xen has completed its destruction */
    for (tries = 0; tries < 100; tries++) {
        id = domid;
        if (!xc_domain_create(xch, &id, &cfg) || errno != EEXIST)
            break;
        usleep(100000);
    }
    if (tries == 100 || id != domid) {
        printf("FAIL: lifecycle: create d%u: %s\n", domid, strerror(errno));
        return -1;
    }
    /* its vCPUs, as libxl creates them (down until started) */
    if (xc_domain_max_vcpus(xch, domid, cfg.max_vcpus)) {
        printf("FAIL: lifecycle: max_vcpus d%u: %s\n", domid, strerror(errno));
        return -1;
    }
    if (xc_domain_setmaxmem(xch, domid, kib)) {
        printf("FAIL: lifecycle: setmaxmem d%u: %s\n", domid, strerror(errno));
        return -1;
    }
    /* libxenstat lists only the domains with a name */
    snprintf(cmd, sizeof(cmd), "xenstore-write /local/domain/%u/name lifecycle", domid);
    return system(cmd) ? -1 : 0;
}

/* wait up to 10 s for d to be gone from getdomaininfo */
static int lc_gone(xc_interface *xch, uint32_t domid, double *waited)
{
    xc_domaininfo_t info;
    double t0 = now_us();
    int i;

    for (i = 0; i < 100; i++) {
        if (xc_domain_getinfo_single(xch, domid, &info) && errno == ESRCH) {
            *waited = (now_us() - t0) / 1e6;
            return 1;
        }
        usleep(100000);
    }
    *waited = (now_us() - t0) / 1e6;
    return 0;
}

static void lc_forget(uint32_t domid)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "xenstore-rm /local/domain/%u", domid);
    if (system(cmd))
        printf("lifecycle: %s failed\n", cmd);
}

/* get_node(flags); then d's table: 1 yes, 0 no, -1 d not listed */
static int lc_sample(xenstat_handle *xh, uint32_t domid, unsigned int flags, unsigned long long *max)
{
    xenstat_node *node = xenstat_get_node(xh, flags);
    xenstat_domain *dom;
    int r = -1;

    if (!node)
        return -1;
    dom = xenstat_node_domain(node, domid);
    if (dom) {
        r = xenstat_domain_has_stats_table(dom) != 0;
        if (max)
            *max = xenstat_domain_stats_max_mem(dom) >> 10;
    }
    xenstat_free_node(node);
    return r;
}

/*
 * destroy d, one xenstat_get_node(flags): libxenstat must have released
 * d's table by then.  hold: a page of d mapped meanwhile, which keeps it
 * listed as dying.  Then d must be gone within 10 s; if not, it is
 * released as any libxenstat must (d no longer listed) for the next steps.
 * 1 pass, 0 fail, -1 d stays.
 */
static int lc_destroy(xenstat_handle *xh, xc_interface *xch, uint32_t d, unsigned int flags, int hold,
                      const char *what)
{
    unsigned int before = fake.watch_unmaps;
    xen_pfn_t frame = 0;
    void *page = NULL;
    double waited;
    int r, ok, released;

    if (hold) {
        if (xc_domain_populate_physmap_exact(xch, d, 1, 0, 0, &frame))
            printf("lifecycle: d%u: a page: %s\n", d, strerror(errno));
        else if (!(page = xc_map_foreign_range(xch, d, 4096, PROT_READ, frame)))
            printf("lifecycle: d%u: mapping its page: %s\n", d, strerror(errno));
    }
    xc_domain_destroy(xch, d);
    r = lc_sample(xh, d, flags, NULL);
    released = fake.watch_unmaps > before;
    if (page)
        munmap(page, 4096);
    ok = lc_gone(xch, d, &waited);
    printf("%s: %s: d%u destroyed%s, one xenstat_get_node(%s): d%u %s, its table %s; gone %s after %.1f s\n",
           ok && released ? "PASS" : "FAIL", what, d, page ? " (a page of it mapped)" : "",
           flags ? "XENSTAT_VCPU" : "0", d, r < 0 ? "not listed" : "listed (dying)",
           released ? "released" : "STILL MAPPED", ok ? "yes" : "NO", waited);
    if (!ok) {
        lc_forget(d);
        lc_sample(xh, d, XENSTAT_VCPU, NULL);
        if (!lc_gone(xch, d, &waited)) {
            printf("FAIL: lifecycle: d%u still there, stopping\n", d);
            return -1;
        }
    }
    return ok && released;
}

/* re-create d with max KiB and the same handle: read from its own table */
static int lc_recreate(xenstat_handle *xh, xc_interface *xch, uint32_t d, unsigned int kib, const char *what)
{
    unsigned long long max = 0;
    int r, ok;

    if (lc_create(xch, d, kib))
        return -1;
    r = lc_sample(xh, d, XENSTAT_VCPU, &max);
    ok = r == 1 && max == kib;
    printf("%s: %s: d%u re-created with the same handle (max %u KiB): table %s, max %llu KiB\n", ok ? "PASS" : "FAIL",
           what, d, kib, r == 1 ? "yes" : "no", max);
    return ok;
}

static int do_lifecycle(xenstat_handle *xh, xc_interface *xch, uint32_t d)
{
    unsigned long long max = 0;
    unsigned int bad = 0;
    double waited;
    int r, ok;

    fake.watch_domid = (int)d;
    /* 1. mapped; destroyed while a page of it is mapped: listed dying, released */
    if (lc_create(xch, d, 4096))
        return 1;
    r = lc_sample(xh, d, XENSTAT_VCPU, &max);
    printf("lifecycle: d%u created (max 4096 KiB): table %s, max %llu KiB\n", d, r == 1 ? "yes" : "no", max);
    if (r != 1 || max != 4096) {
        printf("FAIL: lifecycle: d%u not read from its table\n", d);
        xc_domain_destroy(xch, d);
        lc_forget(d);
        return 1;
    }
    if ((ok = lc_destroy(xh, xch, d, XENSTAT_VCPU, 1, "lifecycle-dying")) < 0)
        return 1;
    bad += !ok;

    /* 2. the same domid and handle again: a table of its own */
    if ((ok = lc_recreate(xh, xch, d, 8192, "lifecycle-recreated")) < 0)
        return 1;
    bad += !ok;

    /*
     * (Destroyed and re-created between two calls, where only the unique id
     * would tell, cannot happen here: the mapping keeps the domain dying,
     * and its domid taken, until the library releases it.  Boot of 01:14.)
     */

    /* 3. destroyed, the next get_node collects no vCPUs: released all the same */
    if ((ok = lc_destroy(xh, xch, d, 0, 0, "lifecycle-prune")) < 0)
        return 1;
    bad += !ok;

    /* 4. refused (XSM), destroyed, re-created with the same handle: asked afresh */
    if (lc_create(xch, d, 4096))
        return 1;
    fake.refuse_domid = (int)d;
    fake.refuse_errno = EPERM;
    r = lc_sample(xh, d, XENSTAT_VCPU, NULL);
    fake.refuse_domid = -1;
    xc_domain_destroy(xch, d);
    lc_gone(xch, d, &waited);
    if ((ok = lc_recreate(xh, xch, d, 8192, "lifecycle-refused-recreated")) < 0)
        return 1;
    bad += !ok || r != 0;

    xc_domain_destroy(xch, d);
    lc_forget(d);
    lc_sample(xh, d, XENSTAT_VCPU, NULL);
    printf("%s: lifecycle: %u failures\n", bad ? "FAIL" : "PASS", bad);
    return bad ? 1 : 0;
}

static const char *const state_names[] = {"running", "runnable", "blocked", "offline"};

/* a vCPU's getvcpuinfo reads just before and just after the library's call */
struct bracket {
    uint32_t domid;
    unsigned int vcpu;
    int have_before, have_after;
    xc_vcpuinfo_t before, after;
    double tb0, tb1, ta0, ta1; /* CLOCK_MONOTONIC, us, around each call */
};

static void bracket_read(xc_interface *xch, struct bracket *b, unsigned int n, int after)
{
    unsigned int i;

    for (i = 0; i < n; i++) {
        double t0 = now_us();
        int ok = !xc_vcpu_getinfo(xch, b[i].domid, b[i].vcpu, after ? &b[i].after : &b[i].before);

        if (after) {
            b[i].have_after = ok;
            b[i].ta0 = t0;
            b[i].ta1 = now_us();
        } else {
            b[i].have_before = ok;
            b[i].tb0 = t0;
            b[i].tb1 = now_us();
        }
    }
}

/* every vCPU of every domain, from getdomaininfo (the library lists fewer) */
static struct bracket *bracket_list(xc_interface *xch, unsigned int *n)
{
    static xc_domaininfo_t info[1024];
    struct bracket *b = NULL;
    int nd, d;
    unsigned int v, k = 0, total = 0;

    nd = xc_domain_getinfolist(xch, 0, 1024, info);
    for (d = 0; d < nd; d++)
        total += info[d].max_vcpu_id + 1;
    if (nd <= 0 || !(b = calloc(total, sizeof(*b))))
        return NULL;
    for (d = 0; d < nd; d++)
        for (v = 0; v <= info[d].max_vcpu_id; v++) {
            b[k].domid = info[d].domain;
            b[k++].vcpu = v;
        }
    *n = k;
    return b;
}

/*
 * compare: libxenstat's running time of each vCPU must lie between the
 * cpu_times of getvcpuinfo read just before and just after the library's
 * call (vs_bracket_ok(), within tol_ms): a single read after the call,
 * as before, measures the time between the two reads as much as the
 * library (boot of 00:59 under TCG: vCPUs blocked when the library read
 * them ran 300-500 ms before getvcpuinfo).  Each line says how long
 * after the library's read of that vCPU getvcpuinfo's was made.
 */
static int do_compare(xenstat_handle *xh, xc_interface *xch, double tol_ms, int stale_domid)
{
    xenstat_node *node, *node2;
    struct bracket *br;
    unsigned int n = 0, i, d, v, s, bad = 0, checked = 0, with_table = 0, skipped = 0;
    unsigned long long tmin = 0, tmax = 0;
    double t0, t1;

    if (stale_domid >= 0) {
        /* compare-stale: the library reads a copy of the table made one second earlier */
        fake.copy_domid = stale_domid;
        node = xenstat_get_node(xh, XENSTAT_VCPU);
        if (!node || !fake.copies) {
            printf("FAIL: no copy of d%d's table\n", stale_domid);
            return 2;
        }
        xenstat_free_node(node);
        sleep(1);
    }
    br = bracket_list(xch, &n);
    if (!br) {
        perror("xc_domain_getinfolist");
        return 2;
    }
    bracket_read(xch, br, n, 0);
    t0 = now_us();
    node = xenstat_get_node(xh, XENSTAT_VCPU);
    t1 = now_us();
    if (!node) {
        perror("xenstat_get_node");
        free(br);
        return 2;
    }
    bracket_read(xch, br, n, 1);
    printf("timing: getvcpuinfo of %u vCPUs before the call %.1f ms; xenstat_get_node(XENSTAT_VCPU) %.1f ms; "
           "getvcpuinfo after it %.1f ms\n",
           n, (t0 - br[0].tb0) / 1e3, (t1 - t0) / 1e3, (br[n - 1].ta1 - t1) / 1e3);
    /* when the library read each vCPU, relative to its first read (Xen time) */
    for (d = 0; d < xenstat_node_num_domains(node); d++) {
        xenstat_domain *dom = xenstat_node_domain_by_index(node, d);

        for (v = 0; v < xenstat_domain_num_vcpus(dom); v++) {
            xenstat_vcpu *vc = xenstat_domain_vcpu(dom, v);
            unsigned long long t = xenstat_vcpu_has_runstate(vc) ? xenstat_vcpu_time_ns(vc) : 0;

            if (t && (!tmin || t < tmin))
                tmin = t;
            if (t > tmax)
                tmax = t;
        }
    }
    for (d = 0; d < xenstat_node_num_domains(node); d++) {
        xenstat_domain *dom = xenstat_node_domain_by_index(node, d);
        unsigned int id = xenstat_domain_id(dom);

        if (xenstat_domain_has_stats_table(dom))
            with_table++;
        printf("d%u %s: table %s, mem %llu/%llu KiB (getdomaininfo %llu/%llu), outstanding %llu KiB\n", id,
               xenstat_domain_name(dom), xenstat_domain_has_stats_table(dom) ? "yes" : "no",
               xenstat_domain_stats_cur_mem(dom) >> 10, xenstat_domain_stats_max_mem(dom) >> 10,
               xenstat_domain_cur_mem(dom) >> 10, xenstat_domain_max_mem(dom) >> 10,
               xenstat_domain_outstanding_mem(dom) >> 10);
        if (xenstat_domain_has_stats_table(dom) &&
            xenstat_domain_stats_cur_mem(dom) != xenstat_domain_cur_mem(dom)) {
            printf("FAIL d%u: table's memory %llu != getdomaininfo's %llu\n", id,
                   xenstat_domain_stats_cur_mem(dom), xenstat_domain_cur_mem(dom));
            bad++;
        }
        for (v = 0; v < xenstat_domain_num_vcpus(dom); v++) {
            xenstat_vcpu *vc = xenstat_domain_vcpu(dom, v);
            unsigned long long lib = xenstat_vcpu_ns(vc), t = 0;
            double rd0 = 0, rd1 = t1 - t0;
            struct bracket *b = NULL;
            int ok;

            for (i = 0; i < n && !b; i++)
                if (br[i].domid == id && br[i].vcpu == v)
                    b = &br[i];
            if (!b || !b->have_before || !b->have_after) {
                printf("d%u v%u: no getvcpuinfo before and after the call (%s): not compared\n", id, v,
                       b ? "getvcpuinfo failed" : "not listed before it");
                skipped++;
                continue;
            }
            checked++;
            /* the library's read of this vCPU: between rd0 and rd1 us into its call */
            if (xenstat_vcpu_has_runstate(vc) && (t = xenstat_vcpu_time_ns(vc))) {
                rd0 = (double)(t - tmin) / 1e3;
                rd1 = (t1 - t0) - (double)(tmax - t) / 1e3;
            }
            ok = vs_bracket_ok(b->before.cpu_time, lib, b->after.cpu_time, (int64_t)(tol_ms * 1e6)) &&
                 (xenstat_vcpu_online(vc) == b->after.online || xenstat_vcpu_online(vc) == b->before.online);
            printf("%s d%u v%u: getvcpuinfo before %.3f s online %u | libxenstat %.3f s online %u | getvcpuinfo "
                   "after %.3f s online %u running %u | lib-before %+.3f ms, after-lib %+.3f ms | getvcpuinfo read "
                   "%.1f..%.1f ms before and %.1f..%.1f ms after the library's read",
                   ok ? "ok  " : "FAIL", id, v, b->before.cpu_time / 1e9, b->before.online, lib / 1e9,
                   xenstat_vcpu_online(vc), b->after.cpu_time / 1e9, b->after.online, b->after.running,
                   ((double)lib - (double)b->before.cpu_time) / 1e6,
                   ((double)b->after.cpu_time - (double)lib) / 1e6, (t0 + rd0 - b->tb1) / 1e3,
                   (t0 + rd1 - b->tb0) / 1e3, (b->ta0 - t0 - rd1) / 1e3, (b->ta1 - t0 - rd0) / 1e3);
            if (xenstat_vcpu_has_runstate(vc)) {
                printf(" | state %s changes %llu", state_names[xenstat_vcpu_runstate(vc) & 3],
                       xenstat_vcpu_state_changes(vc));
                for (s = 0; s < 4; s++)
                    printf(" %s %.3f", state_names[s], xenstat_vcpu_runstate_ns(vc, s) / 1e9);
            }
            printf("\n");
            bad += !ok;
        }
    }
    free(br);
    /* over one second, the four times of each vCPU grow by one second */
    sleep(1);
    t0 = now_us();
    node2 = xenstat_get_node(xh, XENSTAT_VCPU);
    if (!node2) {
        perror("xenstat_get_node");
        return 2;
    }
    printf("timing: the next xenstat_get_node(XENSTAT_VCPU), tables already mapped: %.1f ms\n",
           (now_us() - t0) / 1e3);
    for (d = 0; d < xenstat_node_num_domains(node2); d++) {
        xenstat_domain *dom2 = xenstat_node_domain_by_index(node2, d);
        xenstat_domain *dom = xenstat_node_domain(node, xenstat_domain_id(dom2));

        for (v = 0; dom && v < xenstat_domain_num_vcpus(dom2); v++) {
            xenstat_vcpu *a = xenstat_domain_vcpu(dom, v), *b = xenstat_domain_vcpu(dom2, v);
            double sum = 0, span;

            if (!a || !b || !xenstat_vcpu_has_runstate(a) || !xenstat_vcpu_has_runstate(b))
                continue;
            for (s = 0; s < 4; s++)
                sum += (double)xenstat_vcpu_runstate_ns(b, s) - (double)xenstat_vcpu_runstate_ns(a, s);
            span = (double)xenstat_vcpu_time_ns(b) - (double)xenstat_vcpu_time_ns(a);
            if (sum - span > 1e3 || span - sum > 1e3) {
                printf("FAIL d%u v%u: runstate times grew %.3f ms over %.3f ms\n",
                       xenstat_domain_id(dom2), v, sum / 1e6, span / 1e6);
                bad++;
            }
        }
    }
    xenstat_free_node(node2);
    xenstat_free_node(node);
    printf("%s: %u vCPUs compared, %u domains read from their table, %u disagreements (between getvcpuinfo "
           "before and after, +- %.0f ms), %u not compared\n",
           bad ? "FAIL" : "PASS", checked, with_table, bad, tol_ms, skipped);
    return bad ? 1 : 0;
}
#endif

int main(int argc, char **argv)
{
    xenstat_handle *xh;
    int rc = 2;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: %s compare [TOLERANCE_MS] | time N | vtime N"
#ifndef TIME_ONLY
                " | compare-stale DOMID [TOLERANCE_MS] | refuse DOMID EOPNOTSUPP|EPERM|EACCES | inactive DOMID | paused-vcpu DOMID | lifecycle [DOMID]"
#endif
                "\n", argv[0]);
        return 2;
    }
    xh = xenstat_init();
    if (!xh) {
        perror("xenstat_init");
        return 2;
    }
    if (!strcmp(argv[1], "time") && argc == 3) {
        rc = do_time(xh, (unsigned int)strtoul(argv[2], NULL, 10), XENSTAT_ALL);
    } else if (!strcmp(argv[1], "vtime") && argc == 3) {
        rc = do_time(xh, (unsigned int)strtoul(argv[2], NULL, 10), XENSTAT_VCPU);
#ifndef TIME_ONLY
    } else if (!strcmp(argv[1], "compare")) {
        xc_interface *xch = xc_interface_open(NULL, NULL, 0);

        if (!xch) {
            perror("xc_interface_open");
        } else {
            rc = do_compare(xh, xch, argc > 2 ? atof(argv[2]) : 20.0, -1);
            xc_interface_close(xch);
        }
    } else if (!strcmp(argv[1], "compare-stale") && argc >= 3) {
        xc_interface *xch = xc_interface_open(NULL, NULL, 0);

        self_domid = read_self_domid();
        if (!xch) {
            perror("xc_interface_open");
        } else {
            rc = do_compare(xh, xch, argc > 3 ? atof(argv[3]) : 20.0, atoi(argv[2]));
            xc_interface_close(xch);
        }
    } else if (!strcmp(argv[1], "refuse") && argc == 4 && errno_by_name(argv[3])) {
        self_domid = read_self_domid();
        rc = do_refuse(xh, (unsigned int)strtoul(argv[2], NULL, 10), errno_by_name(argv[3]), argv[3]);
    } else if ((!strcmp(argv[1], "inactive") || !strcmp(argv[1], "paused-vcpu") ||
                !strcmp(argv[1], "lifecycle")) && argc <= 3) {
        xc_interface *xch = xc_interface_open(NULL, NULL, 0);

        self_domid = read_self_domid();
        if (!xch)
            perror("xc_interface_open");
        else if (argv[1][0] == 'l')
            rc = do_lifecycle(xh, xch, argc == 3 ? (uint32_t)strtoul(argv[2], NULL, 10) : 32000);
        else if (argc == 3)
            rc = do_copy(xh, xch, (unsigned int)strtoul(argv[2], NULL, 10), argv[1][0] == 'p');
        if (xch)
            xc_interface_close(xch);
#endif
    } else {
        fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[1]);
    }
    xenstat_uninit(xh);
    return rc;
}
