/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Print what the public API tells of the host, one line per figure set, for
 * the integration tests to compare with what they told the emulator:
 *
 *   host VERSION SCHEDULER PCPUS KHZ TOTAL FREE SCRUB
 *   idle PCPU NS
 *   domain DOMID NAME VCPUS ONLINE FLAGS REASON CPU_NS MEM MAX SHARED OUTSTANDING UUID
 *   vif DOMID DEVID NAME RXB RXP RXE RXD TXB TXP TXE TXD
 *   vbd DOMID DEVID NAME OO RD WR F DS RSECT WSECT
 *
 * FLAGS are xl list's letters (r b p s c d); MAX is "-" for no limit.
 * Exits 1 with a message when a call fails (EOPNOTSUPP included).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/xenstats.h>

static int failed(const char *what)
{
    fprintf(stderr, "host_probe: %s: %s\n", what, xenstats_strerror(-errno));
    return 1;
}

static void flags_text(uint32_t f, char buf[7])
{
    snprintf(buf, 7, "%c%c%c%c%c%c", f & XENSTATS_DOMAIN_RUNNING ? 'r' : '-', f & XENSTATS_DOMAIN_BLOCKED ? 'b' : '-',
             f & XENSTATS_DOMAIN_PAUSED ? 'p' : '-', f & XENSTATS_DOMAIN_SHUTDOWN ? 's' : '-',
             f & XENSTATS_DOMAIN_CRASHED ? 'c' : '-', f & XENSTATS_DOMAIN_DYING ? 'd' : '-');
}

int main(int argc, char **argv)
{
    bool devices = argc > 1 && !strcmp(argv[1], "--devices");
    struct xenstats_host *host = xenstats_host_open(XENSTATS_BACKEND_AUTO);
    struct xenstats_domain_info *doms = NULL;
    struct xenstats_host_info hi;
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    uint64_t idle[1024];
    size_t n, i, nvifs = 0, nvbds = 0;

    if (!host)
        return failed("open");
    if (xenstats_host_info(host, &hi) < 0)
        return failed("host info");
    printf("host %s %s %u %u %llu %llu %llu\n", hi.xen_version, hi.scheduler, hi.nr_pcpus, hi.cpu_khz,
           (unsigned long long)hi.total_memory_kib, (unsigned long long)hi.free_memory_kib,
           (unsigned long long)hi.scrub_memory_kib);
    if (xenstats_host_pcpu_idle(host, idle, 1024, &n) < 0)
        return failed("pcpu idle");
    for (i = 0; i < n; i++)
        printf("idle %zu %llu\n", i, (unsigned long long)idle[i]);
    if (xenstats_host_list_domains(host, &doms, &n) < 0)
        return failed("list domains");
    for (i = 0; i < n; i++) {
        const uint8_t *u = doms[i].uuid;
        char flags[7], max[24];

        flags_text(doms[i].flags, flags);
        if (doms[i].max_memory_kib == XENSTATS_KIB_UNLIMITED)
            snprintf(max, sizeof(max), "-");
        else
            snprintf(max, sizeof(max), "%llu", (unsigned long long)doms[i].max_memory_kib);
        printf("domain %u %s %u %u %s %u %llu %llu %s %llu %llu "
               "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
               doms[i].domid, doms[i].name, doms[i].nr_vcpus, doms[i].nr_online_vcpus, flags,
               doms[i].shutdown_reason, (unsigned long long)doms[i].cpu_time_ns,
               (unsigned long long)doms[i].memory_kib, max, (unsigned long long)doms[i].shared_kib,
               (unsigned long long)doms[i].outstanding_kib, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8],
               u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    }
    free(doms);
    if (devices) {
        if (xenstats_host_list_devices(host, &vifs, &nvifs, &vbds, &nvbds) < 0)
            return failed("list devices");
        for (i = 0; i < nvifs; i++)
            printf("vif %u %u %s %llu %llu %llu %llu %llu %llu %llu %llu\n", vifs[i].domid, vifs[i].devid,
                   vifs[i].name, (unsigned long long)vifs[i].rx_bytes, (unsigned long long)vifs[i].rx_packets,
                   (unsigned long long)vifs[i].rx_errors, (unsigned long long)vifs[i].rx_dropped,
                   (unsigned long long)vifs[i].tx_bytes, (unsigned long long)vifs[i].tx_packets,
                   (unsigned long long)vifs[i].tx_errors, (unsigned long long)vifs[i].tx_dropped);
        for (i = 0; i < nvbds; i++)
            printf("vbd %u %u %s %llu %llu %llu %llu %llu %llu %llu\n", vbds[i].domid, vbds[i].devid,
                   vbds[i].name, (unsigned long long)vbds[i].oo_req, (unsigned long long)vbds[i].rd_req,
                   (unsigned long long)vbds[i].wr_req, (unsigned long long)vbds[i].f_req,
                   (unsigned long long)vbds[i].ds_req, (unsigned long long)vbds[i].rd_sect,
                   (unsigned long long)vbds[i].wr_sect);
        free(vifs);
        free(vbds);
    }
    xenstats_host_close(host);
    return 0;
}
