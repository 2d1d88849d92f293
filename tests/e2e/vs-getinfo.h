/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The comparison of a vCPU record's running time with xc_vcpu_getinfo()'s
 * cpu_time (tests/e2e/vcpustats-check.c, `vs-getinfo`), apart so that the
 * unit suite can show it passes and fails where it should
 * (tests/unit/test_vs_getinfo.c).  Header only: the e2e checker is built
 * in dom0's chroot against the tree's libraries, the unit test on the host.
 */
#ifndef XENSTATS_TESTS_E2E_VS_GETINFO_H
#define XENSTATS_TESTS_E2E_VS_GETINFO_H

#include <stdint.h>

/*
 * How far apart two pCPUs' NOW() may be.  Xen keeps each pCPU's system
 * time from its own TSC, rescaled against the platform timer once a second
 * (time calibration); between two calibrations the pCPUs' NOW() differ by
 * the calibration error.  A running vCPU's record is "brought up to now"
 * with the NOW() of the pCPU that writes it, and getvcpuinfo brings
 * runstate.time[running] up to its own pCPU's NOW(): when the writer's clock
 * is ahead, the record's counter exceeds a cpu_time read after it.  Seen
 * under QEMU TCG: 1.7 ms and 2.4 ms; on hardware a few microseconds.  The
 * series' tools/tests/vcpu-stats checker allows the same 10 ms
 * (CLOCK_SKEW_NS), and so does vcpustats-check's agent-vs-getinfo.
 */
#define VS_GETINFO_PCPU_SKEW_NS 10000000

/*
 * Does the record agree with xc_vcpu_getinfo(), read after it?
 *   running   the record's state is RUNSTATE_running
 *   counter   the record's running time (as written, at update_time)
 *   proj      the same brought up to the getinfo call (staleness rule)
 *   cpu_time  xc_vcpu_getinfo()'s cpu_time
 *   tol       how far proj may be from cpu_time for a running vCPU (dom0's
 *             clock against Xen's: the caller's estimate)
 * Not running: cpu_time is the counter, exactly.  Running: proj within
 * tol of cpu_time, and cpu_time not behind the counter by more than the
 * pCPU skew (it is read later; without the skew it would be at least the
 * counter).
 */
static inline int vs_getinfo_ok(int running, uint64_t counter, int64_t proj, uint64_t cpu_time, int64_t tol)
{
    int64_t diff = (int64_t)cpu_time - proj;

    if (!running)
        return cpu_time == counter && diff == 0;
    return diff <= tol && -diff <= tol && (int64_t)(cpu_time - counter) >= -(int64_t)VS_GETINFO_PCPU_SKEW_NS;
}

#endif
