#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Boot Xen + dom0 (+ the domU dom0 creates) under QEMU software emulation
# and collect the results from the serial console: Xen's com1, onto which
# Xen multiplexes dom0's hvc0.  A run that does not finish within
# $E2E_TIMEOUT seconds is killed and reported as hung.
# Exit status 0 iff "E2E-DONE" was seen, with PASS lines and no FAIL line.
# Result lines start with "$E2E_TAG: " (default XT; the lifecycle test's LC).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
IMG=${E2E_IMG:-$E2E_DIR/img}
LOG=${E2E_LOG:-$E2E_DIR/logs/serial.log}
TIMEOUT=${E2E_TIMEOUT:-900}
SMP=${E2E_SMP:-2}
DOM0_EXTRA=${E2E_DOM0_EXTRA:-}
TAG=${E2E_TAG:-XT}
mkdir -p "$(dirname "$LOG")"
: >"$LOG"

START=$(date +%s)
elapsed() { echo $(($(date +%s) - START)); }

if [ "${XEN_ARCH:-amd64}" = arm64 ]; then
    # tests/e2e/qemu-arm64.sh: the virt board, Xen as -kernel, dom0 as
    # guest-loader modules.  bootscrub=0: scrubbing dom0's memory costs 5-9 s
    # under emulation.
    XEN_CMDLINE="console=dtuart loglvl=all guest_loglvl=all conring_size=1M bootscrub=0 dom0_mem=768M dom0_max_vcpus=${E2E_DOM0_VCPUS:-1}"
    DOM0_CMDLINE="console=hvc0 earlycon=xenboot rdinit=/init loglevel=4 cryptomgr.notests $DOM0_EXTRA"
    # shellcheck source=tests/e2e/qemu-arm64.sh
    . "$HERE/../qemu-arm64.sh"
    qemu_arm64 "$IMG/xen" "$IMG/vmlinuz" "$IMG/dom0.cpio" "$XEN_CMDLINE" "$DOM0_CMDLINE" "$LOG" "$SMP" 2048
else
    XEN_CMDLINE="console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all conring_size=1M dom0_mem=768M,max:768M dom0_max_vcpus=${E2E_DOM0_VCPUS:-1}"
    DOM0_CMDLINE="console=hvc0 earlyprintk=xen rdinit=/init loglevel=4 cryptomgr.notests $DOM0_EXTRA"
    # -cpu qemu64: "max" exposes SMAP, with which Xen 4.17 crashes a PV dom0.
    qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu qemu64 -smp "$SMP" -m 2048 \
        -display none -monitor none -nic none -no-reboot -serial "file:$LOG" \
        -kernel "$IMG/xen" -append "$XEN_CMDLINE" \
        -initrd "$IMG/vmlinuz $DOM0_CMDLINE,$IMG/dom0.cpio" &
fi
QPID=$!
echo "e2e-xen boot: QEMU pid $QPID, serial log $LOG, timeout ${TIMEOUT}s"

hung=0 seen_dom0=0 seen_begin=0 done_at=0
while kill -0 "$QPID" 2>/dev/null; do
    sleep 2
    if [ $seen_dom0 = 0 ] && grep -aq "Linux version" "$LOG"; then
        seen_dom0=1
        echo "e2e-xen boot: +$(elapsed)s dom0 kernel"
    fi
    if [ $seen_begin = 0 ] && grep -aq "E2E-BEGIN" "$LOG"; then
        seen_begin=1
        echo "e2e-xen boot: +$(elapsed)s dom0 /init"
    fi
    if [ $done_at = 0 ] && grep -aq "E2E-DONE" "$LOG"; then
        done_at=$(date +%s)
        echo "e2e-xen boot: +$(elapsed)s tests done"
    fi
    # dom0's poweroff normally ends QEMU; do not wait long for it
    if [ $done_at != 0 ] && [ $(($(date +%s) - done_at)) -gt 20 ]; then
        kill "$QPID"
        break
    fi
    if [ "$(elapsed)" -ge "$TIMEOUT" ]; then
        hung=1
        kill -KILL "$QPID"
        break
    fi
done
wait "$QPID" 2>/dev/null
echo "e2e-xen boot: +$(elapsed)s QEMU stopped"

echo "---------------- results ----------------"
grep -a "^$TAG: " "$LOG" | tr -d '\r'
echo "-----------------------------------------"
pass=$(grep -ac "^$TAG: PASS " "$LOG")
fail=$(grep -ac "^$TAG: FAIL " "$LOG")
if [ $hung = 1 ]; then
    echo "e2e-xen: HUNG: killed after ${TIMEOUT}s; the last of the serial log ($LOG):"
    tail -60 "$LOG" | tr -d '\r'
    exit 1
fi
if grep -aq "E2E-DONE" "$LOG" && [ "$pass" -gt 0 ] && [ "$fail" = 0 ]; then
    echo "e2e-xen: PASS ($pass checks; serial log $LOG)"
    exit 0
fi
echo "e2e-xen: FAIL ($pass passed, $fail failed); the last of the serial log ($LOG):"
grep -a "^DOMU-CONSOLE: \|^AGENT: " "$LOG" | tr -d '\r' | tail -80
tail -40 "$LOG" | tr -d '\r'
exit 1
