#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every series in xen/patches/ (not the DO-NOT-APPLY *-measure and
# *-writable test folders) must carry the project's layout
# (include/xenstats/abi/vcpu_stats.h) in Xen's form, public/vcpu_stats.h,
# and every series the same file.  One probe is
# compiled against the project's header and against each series' header,
# and what it prints (every constant and every offset of the layout) must
# be equal; the resource type and id, which Xen keeps in public/memory.h,
# are taken from the series' additions to memory.h.  Each public header
# also passes Xen's own check of public headers (C89, -Wall -Werror).
# Fails on any compiler warning.
#
#   xen/check-abi.sh                check every series
#   xen/check-abi.sh FILE...        check loose public headers instead
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# A file a patch creates: its "+" lines.
extract() { # PATCH PATH
    awk -v f="b/$2" '
        /^diff --git / { on = ($4 == f); next }
        on && /^\+\+\+ / { body = 1; next }
        on && body && /^\+/ { print substr($0, 2) }
        on && body && /^[^+]/ { if ($0 !~ /^@@/) body = 0 }' "$1"
}

# What Xen's public/xen.h gives a public header, and nothing else.
mkdir -p "$T/stub"
cat >"$T/stub/xen.h" <<'C'
#include <stdint.h>
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define XEN_FLEX_ARRAY_DIM
#elif defined(__GNUC__)
#define XEN_FLEX_ARRAY_DIM 0
#else
#define XEN_FLEX_ARRAY_DIM 1
#endif
#define xen_mk_ullong(x) x##ULL
C

cat >"$T/probe.c" <<'C'
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include HDR
#define P(x) printf("%s %llu\n", #x, (unsigned long long)(x))
#define H(f) P(offsetof(struct xen_vcpu_stats_header, f))
int main(void)
{
    P(XEN_VCPU_STATS_MAGIC); P(XEN_VCPU_STATS_DOMAIN_MAGIC); P(XEN_VCPU_STATS_VCPU_MAGIC);
    P(XEN_VCPU_STATS_VERSION); P(XEN_VCPU_STATS_ALIGN);
    P(XEN_VCPU_STATS_INACTIVE); P(XEN_VCPU_STATS_INACTIVE_BIT); P(XEN_VCPU_STATS_INACTIVE32);
    P(XEN_VCPU_STATS_ARCH_NONE); P(XEN_VCPU_STATS_ARCH_X86); P(XEN_VCPU_STATS_ARCH_ARM);
    P(XEN_VCPU_STATS_TICK_NONE); P(XEN_VCPU_STATS_TICK_X86_TSC); P(XEN_VCPU_STATS_TICK_ARM_CNTVCT);
    P(sizeof(struct xen_vcpu_stats_header)); P(XEN_VCPU_STATS_HEADER_SIZE);
    H(magic); H(offset); H(size); H(stride); H(header_size); H(version); H(nr_vcpus); H(arch);
    H(domain_offset); H(domain_size); H(domain_arch_offset); H(domain_arch_size);
    H(vcpu_arch_offset); H(vcpu_arch_size); H(tick_source); H(tick_domid); H(tick_hz);
    P(sizeof(((struct xen_vcpu_stats_header *)0)->tick_hz));
    P(sizeof(struct xen_vcpu_stats)); P(offsetof(struct xen_vcpu_stats, seq));
    P(offsetof(struct xen_vcpu_stats, magic)); P(offsetof(struct xen_vcpu_stats, counter));
    P(sizeof(struct xen_vcpu_stats_domain)); P(offsetof(struct xen_vcpu_stats_domain, seq));
    P(offsetof(struct xen_vcpu_stats_domain, magic)); P(offsetof(struct xen_vcpu_stats_domain, counter));
    P(XEN_VCPU_STATS_RUNNING_TIME); P(XEN_VCPU_STATS_RUNNABLE_TIME); P(XEN_VCPU_STATS_BLOCKED_TIME);
    P(XEN_VCPU_STATS_OFFLINE_TIME); P(XEN_VCPU_STATS_STATE_CHANGES); P(XEN_VCPU_STATS_STATE);
    P(XEN_VCPU_STATS_UPDATE_TIME); P(XEN_VCPU_STATS_UPDATE_TICKS); P(XEN_VCPU_STATS_NR_COUNTERS);
    P(XEN_VCPU_STATS_RECORD_SIZE);
    P(XEN_VCPU_STATS_DOMAIN_TOT_PAGES); P(XEN_VCPU_STATS_DOMAIN_MAX_PAGES);
    P(XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES); P(XEN_VCPU_STATS_DOMAIN_NR_COUNTERS);
    P(XEN_VCPU_STATS_DOMAIN_SIZE);
    P(XEN_VCPU_STATS_COUNTER_OFFSET(7)); P(XEN_VCPU_STATS_COUNTER_OFFSET(0x7fffffe));
    return 0;
}
C

probe() { # HEADER OUT
    cc -Wall -Wextra -Werror -I"$T/stub" -DHDR='"'"$1"'"' -o "$T/p" "$T/probe.c"
    "$T/p" >"$2"
}
# Xen's own header check: C89 with -Wall -Werror (xen/include/Makefile).
c89() { cc -x c -ansi -Wall -Werror -I"$T/stub" -S -o /dev/null "$1"; }

probe "$REPO/include/xenstats/abi/vcpu_stats.h" "$T/project"
want_type=$(sed -n 's/^#define XEN_VCPU_STATS_RESOURCE_TYPE \([0-9]*\).*/\1/p' "$REPO/include/xenstats/abi/vcpu_stats.h")
want_id=$(sed -n 's/^#define XEN_VCPU_STATS_RESOURCE_ID \([0-9]*\).*/\1/p' "$REPO/include/xenstats/abi/vcpu_stats.h")

check() { # NAME HEADER
    mkdir -p "$T/$1"
    cp "$2" "$T/$1/vcpu_stats.h"
    cp "$T/stub/xen.h" "$T/$1/xen.h"
    c89 "$T/$1/vcpu_stats.h"
    probe "$T/$1/vcpu_stats.h" "$T/$1/out"
    diff -u "$T/project" "$T/$1/out" || { echo "FAIL: $1's public/vcpu_stats.h differs from the project's layout" >&2; exit 1; }
}

n=0
if [ $# -gt 0 ]; then
    for f in "$@"; do
        n=$((n + 1))
        check "file$n" "$f"
    done
    echo "PASS: $n header(s) carry the project's layout ($(wc -l <"$T/project") constants and offsets)"
    exit 0
fi

first=
for dir in "$REPO"/xen/patches/*/; do
    v=$(basename "$dir")
    case $v in *-measure | *-writable | v3-*) continue ;; esac
    hdr=$T/$v.h
    : >"$hdr"
    for p in "$dir"*.patch; do
        extract "$p" xen/include/public/vcpu_stats.h >>"$hdr"
    done
    [ -s "$hdr" ] || { echo "FAIL: the $v series creates no xen/include/public/vcpu_stats.h" >&2; exit 1; }
    check "$v" "$hdr"
    # The resource's type and id, from the series' additions to public/memory.h.
    type=$(cat "$dir"*.patch | sed -n 's/^+#define XENMEM_resource_stats_table \+\([0-9]*\).*/\1/p')
    id=$(cat "$dir"*.patch | sed -n 's/^+#define XENMEM_resource_stats_table_id_vcpustats \+\([0-9]*\).*/\1/p')
    [ "$type" = "$want_type" ] && [ "$id" = "$want_id" ] ||
        { echo "FAIL: the $v series defines resource type '$type' id '$id', the project $want_type $want_id" >&2; exit 1; }
    if [ -z "$first" ]; then
        first=$v
    else
        cmp -s "$T/$first.h" "$hdr" ||
            { echo "FAIL: the $first and $v series carry different public/vcpu_stats.h" >&2; exit 1; }
    fi
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: no series in xen/patches" >&2; exit 1; }
echo "PASS: the $n series carry one public/vcpu_stats.h with the project's layout ($(wc -l <"$T/project") constants and offsets) and resource type/id"
