#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make e2e-kmod`: the kernel provider on real Xen 4.17 under QEMU.
# Installs (tests/e2e/xen/install.sh, cached), builds (build.sh) and boots
# (tests/e2e/xen/boot.sh with this test's images); exit 0 iff every check
# passed.  Logs: $E2E_DIR/logs/kmod-*.  KMOD_ONLY=hardening runs only the
# checks of the module's hardening (issue 29) beside the basic ones;
# KMOD_ONLY=devices only the basic checks and devices coming and going.
# XEN_ARCH=arm64 (`make e2e-kmod-arm64`): Debian 12's arm64 Xen 4.17 and
# kernel under qemu-system-aarch64, the module cross-built against Debian's
# arm64 headers (build-e2e-arm64/); KMOD_ONLY defaults to devices there
# (KMOD_ONLY=all: every check but save/restore, which Xen on Arm lacks).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export XEN_ARCH=${XEN_ARCH:-amd64}
if [ "$XEN_ARCH" = arm64 ]; then
    export E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-arm64}
    # emulated arm64 guests: the basic checks and the devices by default
    KMOD_ONLY=${KMOD_ONLY-devices}
    E2E_TIMEOUT=${E2E_TIMEOUT:-1800}
fi
[ "${KMOD_ONLY:-}" != all ] || KMOD_ONLY=
export E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
LOGS=$E2E_DIR/logs
mkdir -p "$LOGS"
t() { date +%s; }
T0=$(t)
"$ROOT/tests/e2e/xen/install.sh" >"$LOGS/kmod-install.log" 2>&1 ||
    { tail -30 "$LOGS/kmod-install.log"; echo "e2e-kmod: install failed"; exit 2; }
T1=$(t)
"$HERE/build.sh" >"$LOGS/kmod-build.log" 2>&1 || { tail -30 "$LOGS/kmod-build.log"; echo "e2e-kmod: build failed"; exit 3; }
T2=$(t)
echo "e2e-kmod: host CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
E2E_IMG=$E2E_DIR/kmod/img E2E_LOG=${E2E_LOG:-$LOGS/kmod-serial.log} E2E_TIMEOUT=${E2E_TIMEOUT:-900} \
    E2E_DOM0_EXTRA="${KMOD_ONLY:+kmod_only=$KMOD_ONLY}" "$ROOT/tests/e2e/xen/boot.sh"
RC=$?
T3=$(t)
echo "e2e-kmod timing: install $((T1 - T0))s, build $((T2 - T1))s, boot+tests $((T3 - T2))s, total $((T3 - T0))s"
exit $RC
