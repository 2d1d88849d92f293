#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make e2e-xen`: install (cached), build, boot real Xen 4.17 under QEMU
# and check xenstats end to end.  Prints the time of each step; exit 0 iff
# every check passed.  Logs: $E2E_DIR/logs/ (default build-e2e/logs/).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
# XEN_VERSION=4.20: Debian 13's Xen 4.20 and 6.12 kernel (build-e2e-4.20/)
export XEN_VERSION=${XEN_VERSION:-4.17}
# XEN_ARCH=arm64: Debian 12's arm64 Xen 4.17 and kernel under
# qemu-system-aarch64, xenstats cross-built (build-e2e-arm64/)
export XEN_ARCH=${XEN_ARCH:-amd64}
if [ "$XEN_ARCH" = arm64 ]; then
    E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-arm64}
    # emulated arm64 guests are slower than the x86 ones (docs/xen-host.md):
    # half the benchmark rounds (5 ad-hoc rounds of 64 xenstore writes by
    # the domU instead of 10) and a longer limit for QEMU
    export E2E_DOM0_EXTRA=${E2E_DOM0_EXTRA:-e2e_rounds=60} E2E_TIMEOUT=${E2E_TIMEOUT:-1200}
elif [ "$XEN_VERSION" = 4.17 ]; then E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}; else E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-$XEN_VERSION}; fi
export E2E_DIR
LOGS=$E2E_DIR/logs
mkdir -p "$LOGS"
t() { date +%s; }
T0=$(t)
"$HERE/install.sh" >"$LOGS/install.log" 2>&1 || { tail -30 "$LOGS/install.log"; echo "e2e-xen: install failed"; exit 2; }
T1=$(t)
"$HERE/build.sh" >"$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log"; echo "e2e-xen: build failed"; exit 3; }
T2=$(t)
"$HERE/boot.sh"
RC=$?
# a dom0 that panicked before its /init: booted once more (early-panic.sh)
# shellcheck source=tests/e2e/early-panic.sh
. "$HERE/../early-panic.sh"
if [ $RC != 0 ] && early_panic "${E2E_LOG:-$E2E_DIR/logs/serial.log}" E2E-BEGIN e2e-xen:; then
    "$HERE/boot.sh"
    RC=$?
fi
T3=$(t)
echo "e2e-xen timing: install $((T1 - T0))s, build $((T2 - T1))s, boot+tests $((T3 - T2))s, total $((T3 - T0))s"
exit $RC
