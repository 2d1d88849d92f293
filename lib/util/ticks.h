/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The counter of the vCPU statistics' time base (abi/vcpu_stats.h) as this
 * process reads it: the TSC on x86, the generic timer's virtual count
 * (CNTVCT_EL0) on arm64.  Util layer: the emulated producer stamps records
 * with it and the reader projects them with it.
 */
#ifndef XENSTATS_UTIL_TICKS_H
#define XENSTATS_UTIL_TICKS_H

#include <stdint.h>

#include <xenstats/abi/vcpu_stats.h>

/* XEN_VCPU_STATS_TICK_* of the counter ticks_read() reads here. */
#if defined(__x86_64__) || defined(__i386__)
#define TICKS_SOURCE XEN_VCPU_STATS_TICK_X86_TSC
#define TICKS_ARCH XEN_VCPU_STATS_ARCH_X86
#elif defined(__aarch64__)
#define TICKS_SOURCE XEN_VCPU_STATS_TICK_ARM_CNTVCT
#define TICKS_ARCH XEN_VCPU_STATS_ARCH_ARM
#else
#define TICKS_SOURCE XEN_VCPU_STATS_TICK_NONE
#define TICKS_ARCH XEN_VCPU_STATS_ARCH_NONE
#endif

/*
 * The counter now, ordered after the loads before it (the records a
 * projection uses were copied first), or 0 where there is none.
 */
static inline uint64_t ticks_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* lfence: the earlier loads complete first (rdtscp is not everywhere) */
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

/* The counter's rate where the architecture states it (arm64), else 0. */
static inline uint64_t ticks_arch_hz(void)
{
#if defined(__aarch64__)
    uint64_t v;

    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

#endif
