/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tools series' libxenstat on a real Xen (tests/e2e/xen-hv, xt_tools):
 *
 *   xenstat-check compare [TOLERANCE_MS]
 *       every vCPU of every domain: libxenstat's running time and online
 *       flag against XEN_DOMCTL_getvcpuinfo's, read right after (within
 *       TOLERANCE_MS, default 20, plus 50 for a vCPU running meanwhile);
 *       the table's memory against getdomaininfo's; and over one second,
 *       each vCPU's four runstate times must grow by exactly the time the
 *       figures moved (1 us).  Exit 1 on a disagreement.
 *   xenstat-check time N
 *       N calls of xenstat_get_node(XENSTAT_ALL) + xenstat_free_node():
 *       the mean microseconds per call, i.e. what one xentop iteration
 *       spends in libxenstat.  Uses today's API only, so that the same
 *       program times the stock library (LD_LIBRARY_PATH) and the patched
 *       one.  Built with -DTIME_ONLY it has no other mode.
 *   xenstat-check vtime N
 *       the same with XENSTAT_VCPU only: the part the series changes.
 */
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

static int do_time(xenstat_handle *xh, unsigned int n, unsigned int flags)
{
    unsigned int i, domains = 0, vcpus = 0, d;
    double t0, t1;
    xenstat_node *node;

    node = xenstat_get_node(xh, flags); /* the first maps the tables */
    if (!node) {
        perror("xenstat_get_node");
        return 2;
    }
    domains = xenstat_node_num_domains(node);
    for (d = 0; d < domains; d++)
        vcpus += xenstat_domain_num_vcpus(xenstat_node_domain_by_index(node, d));
    xenstat_free_node(node);
    t0 = now_us();
    for (i = 0; i < n; i++) {
        node = xenstat_get_node(xh, flags);
        if (!node) {
            perror("xenstat_get_node");
            return 2;
        }
        xenstat_free_node(node);
    }
    t1 = now_us();
    printf("time: %u domains, %u vCPUs: %.1f us per xenstat_get_node(%s) (%u calls)\n",
           domains, vcpus, (t1 - t0) / n, flags == XENSTAT_ALL ? "XENSTAT_ALL" : "XENSTAT_VCPU", n);
    return 0;
}

#ifndef TIME_ONLY
static const char *const state_names[] = {"running", "runnable", "blocked", "offline"};

static int do_compare(xenstat_handle *xh, xc_interface *xch, double tol_ms)
{
    xenstat_node *node, *node2;
    unsigned int d, v, s, bad = 0, checked = 0, with_table = 0;

    node = xenstat_get_node(xh, XENSTAT_VCPU);
    if (!node) {
        perror("xenstat_get_node");
        return 2;
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
            xc_vcpuinfo_t info;
            double diff_ms;
            int ok;

            if (xc_vcpu_getinfo(xch, id, v, &info)) {
                printf("d%u v%u: getvcpuinfo: %s\n", id, v, strerror(errno));
                continue;
            }
            checked++;
            /* getvcpuinfo was read after libxenstat: its time is later */
            diff_ms = ((double)info.cpu_time - (double)xenstat_vcpu_ns(vc)) / 1e6;
            ok = xenstat_vcpu_online(vc) == info.online &&
                 diff_ms >= -tol_ms && diff_ms <= tol_ms + (info.running ? 50 : 0);
            printf("%s d%u v%u: libxenstat %.3f s online %u | getvcpuinfo %.3f s online %u running %u | "
                   "diff %+.3f ms", ok ? "ok  " : "FAIL", id, v, xenstat_vcpu_ns(vc) / 1e9,
                   xenstat_vcpu_online(vc), info.cpu_time / 1e9, info.online, info.running, diff_ms);
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
    /* over one second, the four times of each vCPU grow by one second */
    sleep(1);
    node2 = xenstat_get_node(xh, XENSTAT_VCPU);
    if (!node2) {
        perror("xenstat_get_node");
        return 2;
    }
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
    printf("%s: %u vCPUs compared, %u domains read from their table, %u disagreements (tolerance %.0f ms)\n",
           bad ? "FAIL" : "PASS", checked, with_table, bad, tol_ms);
    return bad ? 1 : 0;
}
#endif

int main(int argc, char **argv)
{
    xenstat_handle *xh;
    int rc = 2;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: %s compare [TOLERANCE_MS] | time N | vtime N\n", argv[0]);
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
            rc = do_compare(xh, xch, argc > 2 ? atof(argv[2]) : 20.0);
            xc_interface_close(xch);
        }
#endif
    } else {
        fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[1]);
    }
    xenstat_uninit(xh);
    return rc;
}
