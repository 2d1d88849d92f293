#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The rewrite test (docs/hypervisor.md): a domain's vCPU statistics table,
# mapped writable by dom0, has every byte rewritten again and again while
# the domain's vCPUs change state.  This is `make xen-rewrite-test`.
#   1. the tree's release build with its tools (xen/build-xen-tree.sh);
#   2. its debug hypervisor (assertions on; XEN_DEBUG=n: release) with the test-only patch
#      XEN_REWRITE_PATCHES (default xen/patches/<version>-writable:
#      DO-NOT-APPLY, it shares the table writable, which on x86 under QEMU
#      a PV dom0 cannot otherwise get);
#   3. booted under QEMU with the tools of 1 (tests/e2e/xen-hv/run.sh,
#      DOM0_EXTRA=xt_rewrite): tests/e2e/stats-rewrite.c rewrites the table
#      of a busy domU whose vCPUs are set online and offline and paused,
#      and watches a second domU's table and getdomaininfo as canaries.
# Passes iff Xen stays up, prints no assertion, BUG, WARN or FATAL, and the
# canaries hold; the serial log is kept (and shown on failure).
#   XEN_VERSION         master (default) or 4.22
#   XEN_SERIES          the series (default xen/patches/<version>)
#   XEN_REWRITE_PATCHES the test-only patch directory
#   XEN_DEBUG=n         the release hypervisor instead of the debug one (its
#                       objects come from ccache: only the patched file is
#                       compiled again)
#   REWRITE_SECONDS     how long the table is rewritten (default 60)
#   TIMEOUT             QEMU time limit (default 900)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in -h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
export XEN_VERSION=${XEN_VERSION:-master}
RW=${XEN_REWRITE_PATCHES:-xen/patches/$XEN_VERSION-writable}
case $RW in /*) ;; *) RW=$REPO/$RW ;; esac
[ -d "$RW" ] || { echo "rewrite-test: no test-only patch directory $RW" >&2; exit 2; }
say() { printf '[rewrite-test] %s\n' "$*" >&2; }

t0=$(date +%s)
XEN_DEBUG=n "$REPO/xen/build-xen-tree.sh" >/dev/null
TOOLS_DIST=$(XEN_DEBUG=n "$REPO/xen/build-xen-tree.sh" out)/dist
say "release build with tools: $(($(date +%s) - t0)) s"
t0=$(date +%s)
XEN=$(TOOLS=0 XEN_DEBUG=${XEN_DEBUG:-y} XEN_HV_EXTRA_PATCHES=$RW "$REPO/xen/build-xen-tree.sh")
say "hypervisor (debug=${XEN_DEBUG:-y}) with $(basename "$RW"): $(($(date +%s) - t0)) s: $XEN"
OUT=$(dirname "$XEN")
WORK=$OUT/e2e
LOG=$WORK/logs/serial.log
mkdir -p "$WORK/logs"
rc=0
XEN=$XEN XEN_TOOLS_ROOT=$TOOLS_DIST WORK=$WORK LOG=$LOG TIMEOUT=${TIMEOUT:-900} \
    DOM0_EXTRA="xt_rewrite xt_rewrite_seconds=${REWRITE_SECONDS:-60}" \
    "$REPO/tests/e2e/xen-hv/run.sh" || rc=$?
say "serial log: $LOG"
exit $rc
