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

/*
 * Is a running time read by a library call (libxenstat's
 * xenstat_vcpu_ns()) between the cpu_times of xc_vcpu_getinfo() read
 * just before and just after that call (tests/e2e/xenstat-check.c,
 * `compare`)?  Running time never goes back, so the library's must lie
 * between the two, whatever the time between the reads (under QEMU TCG on
 * a loaded host, seconds): comparing it with one getvcpuinfo read after
 * the call measures that time, not the library.  Each end is widened by
 * tol: the pCPUs' NOW() skew (above), and a reader's projection of a
 * running vCPU up to "now", which may fall short of it.  A vCPU that did
 * not run between the two reads has one running time: the library's must
 * be it, exactly.
 */
static inline int vs_bracket_ok(uint64_t before, uint64_t lib, uint64_t after, int64_t tol)
{
    uint64_t lo = before < after ? before : after, hi = before < after ? after : before;

    if (before == after)
        return lib == before;
    return (int64_t)(lib - lo) >= -tol && (int64_t)(lib - hi) <= tol;
}

#endif
