#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make barrier-arm64`: the vCPU statistics reader's barriers on arm64.
#  1. In a cross build for arm64, the reader (lib/vcpu/reader.c) loads each
#     sequence number with LDAR and fences the copy with DMB ISHLD before
#     the second read of the numbers; the build without its read barriers
#     (XENSTATS_TEST_NO_READ_BARRIER) has neither, so the check can fail.
#  2. The concurrency test (tests/unit/test_vcpu_concurrency.c: a writer at
#     full speed, a reader checking every snapshot) built for arm64 runs
#     under qemu-aarch64 (user mode, real host threads; on an arm64 host,
#     natively): the reader must see no torn record, and the reader without
#     its sequence check must see torn ones (the test can fail there too).
#  3. The same test against the reader without its read barriers: reported,
#     not judged.  On an x86-64 host QEMU turns each guest load into a host
#     load in program order and x86 never lets a load pass a load, so a
#     missing read barrier cannot show there (docs/xen-host.md, "Xen on
#     Arm"); only arm64 hardware (or a litmus test run by herd7, which
#     Debian 12 does not package) can catch it.
# BARRIER_BUILD: the arm64 meson build to use (default build-e2e-arm64/meson,
# which `make e2e-xen XEN_ARCH=arm64` leaves; made with the cross file of
# scripts/cross/arm64.sh when missing).  BARRIER_SNAPSHOTS (default 200000).
# Installs qemu-user when missing (no binfmt registration).  Exit 0 iff 1
# and 2 hold.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BARRIER_BUILD:-$ROOT/build-e2e-arm64/meson}
N=${BARRIER_SNAPSHOTS:-200000}
MA=aarch64-linux-gnu
fails=0
ok() { echo "barrier-arm64: PASS $*"; }
bad() { echo "barrier-arm64: FAIL $*"; fails=$((fails + 1)); }

SR=$("$ROOT/scripts/cross/arm64.sh" sysroot) || exit 2
if [ ! -f "$B/build.ninja" ]; then
    meson setup "$B" "$ROOT" --cross-file "$("$ROOT/scripts/cross/arm64.sh" cross-file)" \
        --buildtype=debugoptimized -Dwerror=true >/dev/null || exit 2
fi
T=tests/unit/test_vcpu_concurrency
nice -n "${NICE:-10}" ninja -C "$B" -j 2 "$T" "${T}_unchecked" "${T}_nobarrier" libxenstats-internal.a >/dev/null || exit 2

# ---- 1. the instructions
count() { "$MA-objdump" -d "$1" | grep -cE "$2"; }
lib_o=$B/libxenstats-internal.a.p/lib_vcpu_reader.c.o
nob_o=$B/${T}_nobarrier.p/.._.._lib_vcpu_reader.c.o
for o in "$lib_o" "$nob_o"; do [ -f "$o" ] || { echo "barrier-arm64: no $o (meson's object names changed?)"; exit 2; }; done
command -v "$MA-objdump" >/dev/null || apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends \
    "binutils-$MA" >/dev/null
l_ldar=$(count "$lib_o" '\sldar\s') l_dmb=$(count "$lib_o" '\sdmb\s+ishld')
n_ldar=$(count "$nob_o" '\sldar\s') n_dmb=$(count "$nob_o" '\sdmb\s')
if [ "$l_ldar" -gt 0 ] && [ "$l_dmb" -gt 0 ]; then
    ok "the reader's arm64 code has its barriers: $l_ldar LDAR, $l_dmb DMB ISHLD"
else
    bad "the reader's arm64 code lacks its barriers: $l_ldar LDAR, $l_dmb DMB ISHLD"
fi
if [ "$n_ldar" = 0 ] && [ "$n_dmb" = 0 ]; then
    ok "the build without read barriers has none (0 LDAR, 0 DMB): the check above can fail"
else
    bad "the build without read barriers still has $n_ldar LDAR, $n_dmb DMB"
fi

# ---- 2. and 3. the concurrency test
if [ "$(uname -m)" = aarch64 ]; then
    run() { "$@"; }
    where="natively ($(nproc) CPUs)"
else
    command -v qemu-aarch64 >/dev/null || apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends \
        qemu-user >/dev/null
    run() { nice -n "${NICE:-10}" qemu-aarch64 -L "$SR" -cpu max "$@"; }
    where="under qemu-aarch64 $(qemu-aarch64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p') on $(uname -m)"
fi
echo "barrier-arm64: running $N snapshots $where"
# show LABEL PROGRAM: the test program run, its lines labelled; its status
show() {
    run "$B/$2" "$N" emulated 2>&1 | sed "s/^/  $1: /"
    return "${PIPESTATUS[0]}"
}
if show checked "$T"; then ok "the reader saw no torn record"; else bad "the reader (rc $?)"; fi
if show unchecked "${T}_unchecked"; then
    ok "without the sequence check torn records show: the test can fail here"
else
    bad "without the sequence check no torn record showed (rc $?): the test cannot fail here"
fi
if show "no read barrier" "${T}_nobarrier"; then
    why="loads stay in order on this host, so only arm64 hardware can show this one"
    [ "$(uname -m)" != aarch64 ] || why="more snapshots (BARRIER_SNAPSHOTS) may show it"
    echo "barrier-arm64: NOT CAUGHT: without its read barriers the reader saw no torn record $where; $why"
else
    echo "barrier-arm64: CAUGHT: without its read barriers the reader saw torn records $where"
fi
echo "barrier-arm64: $((4 - fails)) passed, $fails failed"
[ $fails = 0 ]
