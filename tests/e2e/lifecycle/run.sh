#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make e2e-lifecycle`: a PV guest's lifecycle on real Xen 4.17 under QEMU
# (save/restore, local live migration, reboot, vcpu-set, pause, mem-set),
# with `xenstats publish` in the guest and `xenstats agent` in dom0 (see
# dom0-init.sh).  Boots the patched hypervisor with shadow paging that
# `make xen-hypervisor` builds (LC_XEN overrides).  Installs (cached) and
# builds as `make e2e-xen` does, then boots with tests/e2e/xen/boot.sh.
# Exit 0 iff every check passed.  Logs: $E2E_DIR/logs/lifecycle-*.
#   LC_CYCLES=N    N save/restore and N migrations (default 1), then the
#                  p50 and max of the time to every set active again
#   E2E_TIMEOUT    seconds QEMU may run (default 600, and 300 more per
#                  extra cycle: a cycle took 2-3 minutes under a load of 14;
#                  with the kernel provider 600 more: its whole walk took
#                  13.5 minutes under a load of 13-17)
#   LC_KMOD=0      the guest without the kernel provider (kmod/xenstats.ko)
#                  and its disk I/O loop: what CI runs by default (default 1:
#                  loaded, with direct I/O on xvda the whole time, and
#                  blkback's max_queues changed before the restore and the
#                  migration; FULL=1 in CI)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
LOGS=$E2E_DIR/logs
CYCLES=${LC_CYCLES:-1}
mkdir -p "$LOGS"
t() { date +%s; }
T0=$(t)
"$ROOT/tests/e2e/xen/install.sh" >"$LOGS/lifecycle-install.log" 2>&1 ||
    { tail -30 "$LOGS/lifecycle-install.log"; echo "e2e-lifecycle: install failed"; exit 2; }
T1=$(t)
"$HERE/build.sh" >"$LOGS/lifecycle-build.log" 2>&1 ||
    { tail -30 "$LOGS/lifecycle-build.log"; echo "e2e-lifecycle: build failed"; exit 3; }
T2=$(t)
echo "e2e-lifecycle: host CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $CYCLES cycle(s), kernel provider $([ "${LC_KMOD:-1}" = 1 ] && echo loaded || echo "left out (LC_KMOD=0)")"
timeout=$((600 + 300 * (CYCLES - 1)))
[ "${LC_KMOD:-1}" = 1 ] && timeout=$((timeout + 600))
E2E_IMG=$E2E_DIR/lifecycle/img E2E_LOG=${E2E_LOG:-$LOGS/lifecycle-serial.log} E2E_TIMEOUT=${E2E_TIMEOUT:-$timeout} \
    E2E_TAG=LC E2E_DOM0_EXTRA="lc_cycles=$CYCLES" "$ROOT/tests/e2e/xen/boot.sh"
RC=$?
T3=$(t)
echo "e2e-lifecycle timing: install $((T1 - T0))s, build $((T2 - T1))s, boot+tests $((T3 - T2))s, total $((T3 - T0))s"
exit $RC
