#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The layout in each patch series (public/vcpu_stats.h of patch 0001, for Xen
# 4.17 and 4.20) must be the project's (include/xenstats/abi/vcpu_stats.h),
# and the writer header of patch 0002 the project's writer but for its
# include line.  Compiles the same probe against the layout headers and
# compares what it prints; fails on any compiler warning.
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
cat >"$T/probe.c" <<'C'
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include HDR
#define P(x) printf("%s %llu\n", #x, (unsigned long long)(x))
int main(void)
{
    P(XEN_VCPU_STATS_MAGIC); P(XEN_VCPU_STATS_RESOURCE_TYPE); P(XEN_VCPU_STATS_RESOURCE_ID);
    P(XEN_VCPU_STATS_ALIGN); P(XEN_VCPU_STATS_INACTIVE); P(XEN_VCPU_STATS_INACTIVE_BIT);
    P(sizeof(struct xen_vcpu_stats_header)); P(offsetof(struct xen_vcpu_stats_header, magic));
    P(offsetof(struct xen_vcpu_stats_header, offset)); P(offsetof(struct xen_vcpu_stats_header, size));
    P(offsetof(struct xen_vcpu_stats_header, stride)); P(sizeof(struct xen_vcpu_stats));
    P(offsetof(struct xen_vcpu_stats, seq)); P(offsetof(struct xen_vcpu_stats, _pad));
    P(offsetof(struct xen_vcpu_stats, counter)); P(XEN_VCPU_STATS_RECORD_SIZE);
    P(XEN_VCPU_STATS_RUNNING_TIME); P(XEN_VCPU_STATS_RUNNABLE_TIME); P(XEN_VCPU_STATS_BLOCKED_TIME);
    P(XEN_VCPU_STATS_OFFLINE_TIME); P(XEN_VCPU_STATS_STATE_CHANGES); P(XEN_VCPU_STATS_STATE);
    P(XEN_VCPU_STATS_UPDATE_TIME); P(XEN_VCPU_STATS_NR_COUNTERS);
    P(XEN_VCPU_STATS_RUNSTATE_RUNNING); P(XEN_VCPU_STATS_RUNSTATE_RUNNABLE);
    P(XEN_VCPU_STATS_RUNSTATE_BLOCKED); P(XEN_VCPU_STATS_RUNSTATE_OFFLINE);
    P(XEN_VCPU_STATS_COUNTER_OFFSET(6)); P(XEN_VCPU_STATS_ROUNDUP(65u, 64u));
    return 0;
}
C
cc -Wall -Wextra -Werror -DHDR='"'"$REPO/include/xenstats/abi/vcpu_stats.h"'"' -o "$T/p1" "$T/probe.c"
"$T/p1" >"$T/o1"
for v in 4.17 4.20; do
    D=$T/$v
    mkdir -p "$D/xen/public"
    extract "$REPO"/xen/patches/$v/0001-*.patch xen/include/public/vcpu_stats.h >"$D/xen/public/vcpu_stats.h"
    extract "$REPO"/xen/patches/$v/0002-*.patch xen/include/xen/vcpu_stats_writer.h >"$D/writer.h"
    [ -s "$D/xen/public/vcpu_stats.h" ] && [ -s "$D/writer.h" ] || { echo "$v: cannot extract the headers" >&2; exit 1; }
    cc -Wall -Wextra -Werror -DHDR='"'"$D/xen/public/vcpu_stats.h"'"' -o "$D/p2" "$T/probe.c"
    # Xen's own header check: C89 with -Wall -Werror.
    cc -x c -ansi -Wall -Werror -include stdint.h -S -o /dev/null "$D/xen/public/vcpu_stats.h"
    "$D/p2" >"$D/o2"
    diff -u "$T/o1" "$D/o2" || { echo "FAIL: the $v series' layout differs from the project's" >&2; exit 1; }
    diff <(grep -v '#include' "$REPO/include/xenstats/abi/vcpu_stats_writer.h" | sed 1,3d) \
         <(grep -v '#include' "$D/writer.h" | sed 1,3d) ||
        { echo "FAIL: the $v series' writer differs from the project's" >&2; exit 1; }
done
cmp -s "$T/4.17/xen/public/vcpu_stats.h" "$T/4.20/xen/public/vcpu_stats.h" ||
    { echo "FAIL: the 4.17 and 4.20 series carry different public/vcpu_stats.h" >&2; exit 1; }
echo "PASS: patch 0001's layout ($(wc -l <"$T/o1") constants and offsets) and patch 0002's writer match the project's ABI headers, in the 4.17 and 4.20 series alike"
