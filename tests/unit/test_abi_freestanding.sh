#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The ABI headers compile with nothing but the compiler's <stdint.h>
# (freestanding, no libc), and inside the hypervisor (__XEN__) with Xen's own
# fixed-width types, as the hypervisor patch uses them.
set -eu
: "${XENSTATS_SOURCE_ROOT:?}"
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/hosted.c" <<'C'
#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/abi/pv_stats.h>
int use(void *region);
int use(void *region)
{
    static const struct xen_vcpu_stats_time_base time = {XEN_VCPU_STATS_ARCH_X86, XEN_VCPU_STATS_TICK_NONE, 0, 0};
    struct xen_vcpu_stats_writer w;
    struct xen_vcpu_stats_block r;
    if (xen_vcpu_stats_init(&w, region, 4096, 2, 64, &time))
        return -1;
    xen_vcpu_stats_vcpu_block(&w, 1, &r);
    xen_vcpu_stats_begin(&r);
    xen_vcpu_stats_set(&r, XEN_VCPU_STATS_RUNNING_TIME, 5);
    xen_vcpu_stats_end(&r);
    return (int)sizeof(struct xen_pv_stats_name_type);
}
C
"$cc" -std=c11 -ffreestanding -nostdlib -Wall -Wextra -Werror -pedantic -I"$XENSTATS_SOURCE_ROOT/include" \
    -c "$tmp/hosted.c" -o "$tmp/hosted.o"
echo "ok 1 - freestanding C11, -pedantic, no libc"
cat >"$tmp/xen.c" <<'C'
/* as inside Xen: no <stdint.h>, the hypervisor's types and barriers */
typedef unsigned char uint8_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define XEN_VCPU_STATS_WMB() __asm__ __volatile__("" ::: "memory")
#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/abi/pv_stats.h>
void touch(struct xen_vcpu_stats_block *r);
void touch(struct xen_vcpu_stats_block *r) { xen_vcpu_stats_set(r, 0, 1); }
C
"$cc" -std=gnu99 -D__XEN__ -ffreestanding -nostdinc -nostdlib -Wall -Wextra -Werror -I"$XENSTATS_SOURCE_ROOT/include" \
    -c "$tmp/xen.c" -o "$tmp/xen.o"
echo "ok 2 - __XEN__ without any system header"
