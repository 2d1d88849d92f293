#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the dom0 initramfs for the patched-hypervisor test: a minimal
# dom0 (modules, xenstored, xenconsoled), three PV domUs (2 vCPUs with one
# busy and one idle, 4 and 8 idle vCPUs), then vcpustats-check, the
# benchmarks, xenstats vcpu and agent when present, the hypervisor-side cost (debug key
# W, when the measurement patch is in), and destruction with a mapping held.
# Result lines start with "XT:".
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin:/usr/lib/xen-4.20/bin:/usr/lib/xen/bin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu

say() { echo "XT: $*"; }
. /dom0-up.sh
# Xen on Arm (run.sh XEN_ARCH=arm64): one guest type, every foreign
# mapping writable, a translated dom0 that cannot map its own table, and
# guests that take minutes to boot under emulation
ARM=0 UPWAIT=120
[ "$(uname -m)" = aarch64 ] && ARM=1 UPWAIT=400
[ -f /tools-checks.sh ] && . /tools-checks.sh

# The measurement patch's debug key: what it printed, or why nothing
wkey() {
    xl debug-keys W >/tmp/wkey.out 2>&1; rc=$?
    sleep 1
    xl dmesg >/tmp/dmesg.out 2>&1; rc2=$?
    n=$(grep -c "vcpu_stats cost" /tmp/dmesg.out)
    say "debug key W: xl debug-keys rc=$rc ($(tr '\n' ' ' </tmp/wkey.out)), xl dmesg rc=$rc2, $n lines of it in xl dmesg"
    grep "vcpu_stats cost" /tmp/dmesg.out | tail -3 | sed 's/^/XT: hypervisor: /'
    [ "$n" = 0 ] && tail -5 /tmp/dmesg.out | sed 's/^/XT: xl dmesg tail: /'
}
dom0_mounts
echo "XENTEST-BEGIN dom0 userspace up at $(up)s"
dom0_xen 30
say "hypervisor: $(xl info 2>/dev/null | grep -E '^xen_(version|extra|changeset)' | tr -s ' ' | tr '\n' ' ')"

create() { # create NAME VCPUS EXTRA [MAXVCPUS]
    sed -e "s/@NAME@/$1/" -e "s/@VCPUS@/$2/" -e "s/@EXTRA@/$3/" -e "s/@MAXVCPUS@/${4:-$2}/" \
        /domu/domu.cfg.in >/tmp/$1.cfg
    T0=$(up)
    timeout 600 xl create /tmp/$1.cfg >/tmp/$1.out 2>&1
    crc=$?
    [ $crc = 0 ] || tail -n 8 /tmp/$1.out | sed "s/^/XT: xl create $1: /"
    res "xl-create-$1" $crc "$2 vCPUs, $(awk "BEGIN{print $(up)-$T0}")s"
}
# wait_alive NAME VCPUS EXTRA: sets D to NAME's domid once its /init has
# written data/alive, and T to the seconds that took.  A guest not up within
# 120 s (400 s on Arm) has the end of its console shown, is destroyed and created once
# more, and that is said (seen on Debian 13's 6.12 PV kernel under QEMU TCG:
# vCPU 1 never came online and /init never ran).  A FAIL if it is not up
# the second time either.
wait_alive() { # wait_alive NAME VCPUS EXTRA [MAXVCPUS]
    for try in 1 2; do
        D=$(xl domid "$1" 2>/dev/null); T0=$(up); T=; i=0
        while [ -n "$D" ] && [ $i -lt $UPWAIT ]; do
            if xenstore-read /local/domain/$D/data/alive >/dev/null 2>&1; then
                T=$(awk "BEGIN{print $(up)-$T0}")
                return 0
            fi
            sleep 1; i=$((i+1))
        done
        say "INFO $1 (domid $D) not up after $i s, try $try of 2; the end of its console:"
        tail -n 30 /var/log/xen/console/guest-$1.log 2>/dev/null | tr -d '\r' | sed 's/^/XT: console: /'
        xl vcpu-list "$1" 2>&1 | sed 's/^/XT: vcpu-list: /'
        [ $try = 2 ] && break
        xl destroy "$1"
        create "$1" "$2" "$3" "${4:-}"
    done
    say "FAIL up-$1 not up after two tries"
    return 1
}

# the tools series' checks (tools-checks.sh), the debug key, the end
tools_then_end() {
    tools_checks
    grep -qw xt_stock /proc/cmdline || wkey
    for d in cpu idle offl $FILLS; do xl destroy $d; done
    xl list 2>&1 | sed 's/^/XT: xl list at the end: /'
    xl dmesg | grep -iE "vcpu stats|vcpu_stats|assert|bug|panic" | grep -v "vcpu_stats cost" | sed 's/^/XT: xl dmesg: /' | tail -10
    echo "XENTEST-DONE at $(up)s"
    sync
    poweroff -f
    sleep 30
}
# xt_tools_only: those alone, not the tree's checks
grep -qw xt_tools_only /proc/cmdline && tools_then_end
# xt_wkey_only: the measurement patch's figure alone: Domain-0's table
# mapped and read a few times (xentop with the tools series), then key W
if grep -qw xt_wkey_only /proc/cmdline; then
    timeout 120 xentop -b -v -d 1 -i 5 2>&1 | tail -3 | sed 's/^/XT: xentop: /'
    wkey
    echo "XENTEST-DONE at $(up)s"
    sync
    poweroff -f
    sleep 30
fi

# The rewrite test (on x86 the hypervisor is built with a DO-NOT-APPLY
# patch that shares the table writable; on Arm every mapping is): a canary
# domU, and a target whose vCPUs change state (busy loop, vcpu-set,
# pause/unpause) while stats-rewrite rewrites every byte of its table, then
# checks that the target's records still land where Xen laid them out.
# Xen must stay up, and the host checks the serial log between the two
# markers.
rewrite_test() {
    create canary 2 idle
    create target 2 busy 4
    wait_alive canary 2 idle; DC=$D
    wait_alive target 2 busy 4; DT=$D
    say "rewrite: target domid $DT (2 of 4 vCPUs online, busy), canary domid $DC"
    (
        n=0
        while [ ! -e /tmp/stop-churn ]; do
            n=$((n + 1))
            xl vcpu-set --ignore-host target $((n % 4 + 1)) 2>/dev/null
            sleep 1
            xl pause target 2>/dev/null
            usleep 300000 2>/dev/null || sleep 1
            xl unpause target 2>/dev/null
        done
        echo "$n" >/tmp/churn-rounds
    ) &
    CHURN=$!
    S=$(arg xt_rewrite_seconds)
    echo "XT-REWRITE-BEGIN at $(up)s"
    timeout 600 stats-rewrite "$DT" "$DC" "${S:-60}" >/tmp/rw.out 2>&1
    rc=$?
    echo "XT-REWRITE-END at $(up)s"
    touch /tmp/stop-churn; wait $CHURN
    sed 's/^/XT: stats-rewrite: /' /tmp/rw.out
    res stats-rewrite $rc "target $DT, canary $DC; $(cat /tmp/churn-rounds 2>/dev/null) vcpu-set/pause rounds"
    xl vcpu-list 2>&1 | sed 's/^/XT: vcpu-list after: /'
    xl list 2>&1 | sed 's/^/XT: xl list after: /'
    xl unpause target 2>/dev/null
    xl destroy target; res destroy-target $? "after the rewrite"
    xl destroy canary; res destroy-canary $? "after the rewrite"
    xl info >/dev/null 2>&1; res xen-alive $? "xl info answers after the rewrite"
    xl dmesg | grep -iE "vcpu.?stats|assert|bug|warn|fatal|panic" | sed 's/^/XT: xl dmesg: /' | tail -20
}
if grep -qw xt_rewrite /proc/cmdline; then
    rewrite_test
    echo "XENTEST-DONE at $(up)s"
    sync
    poweroff -f
fi
say "dom0: $(uname -m), kernel $(uname -r)"

# A tree's own build (xt_tree, 4.22 or master with the new series): busy2
# may grow to 3 vCPUs, the third set online after the table is published
MAXV=
grep -qw xt_tree /proc/cmdline && MAXV=3
[ $ARM = 1 ] && MAXV=3
create busy2 2 busy $MAXV
wait_alive busy2 2 busy $MAXV; D2=$D
say "domU busy2 = domid $D2 ($(xenstore-read /local/domain/$D2/data/alive 2>/dev/null)), up in ${T}s"
sleep 3   # let the busy loop settle

if grep -qw xt_stock /proc/cmdline; then
    # An unpatched hypervisor: the resource must fail cleanly and xenstats
    # must fall back to xc_vcpu_getinfo().
    timeout 60 vcpustats-check absent "$D2" 2>&1 | sed 's/^/XT: absent: /'
    if [ -x /usr/bin/xenstats ]; then
        timeout 60 xenstats vcpu "$D2" >/tmp/xs.out 2>&1; rc=$?
        sed 's/^/XT: xenstats vcpu (fallback): /' /tmp/xs.out | head -30
        res xenstats-vcpu-fallback $rc "domid $D2"
    fi
    xl destroy busy2; res destroy-busy2 $? "busy2 destroyed"
    if grep -qw xt_tools /proc/cmdline; then
        tools_checks
        for d in cpu idle offl $FILLS; do xl destroy $d; done
        xl list 2>&1 | sed 's/^/XT: xl list at the end: /'
    fi
    echo "XENTEST-DONE at $(up)s"
    sync
    poweroff -f
fi

if [ -x /usr/bin/vcpustats-check ]; then
    timeout 120 vcpustats-check check "$D2" --busy 1 --idle 0 --seconds 5 >/tmp/check.out 2>&1
    rc=$?
    sed 's/^/XT: check: /' /tmp/check.out
    res vcpustats-check $rc "domid $D2"
fi
if [ -n "$MAXV" ]; then
    # a vCPU brought up after publication, Domain-0's own records, and the
    # checker the series adds to Xen's tools/tests
    # master's xl refuses more vCPUs than pCPUs (QEMU has 2) without --ignore-host
    xl vcpu-set --ignore-host busy2 3 >/tmp/vcpu-set.out 2>&1 || xl vcpu-set busy2 3 >>/tmp/vcpu-set.out 2>&1; rc=$?
    sed 's/^/XT: vcpu-set: /' /tmp/vcpu-set.out
    res vcpu-set-up $rc "busy2 from 2 to 3 vCPUs"
    sleep 3
    xl vcpu-list busy2 2>&1 | sed 's/^/XT: vcpu-list: /'
    timeout 120 vcpustats-check check "$D2" --busy 1 --seconds 5 >/tmp/check3.out 2>&1
    rc=$?
    sed 's/^/XT: check-hotadd: /' /tmp/check3.out
    res vcpustats-check-hotadd $rc "domid $D2, vCPU 2 up after publication"
    if [ $ARM = 1 ]; then
        # A translated dom0 (every dom0 on Arm) is refused its own table
        # (docs/hypervisor.md, Lifecycle): EOPNOTSUPP, cleanly, and
        # xenstats shows Domain-0's vCPUs from xc_vcpu_getinfo() instead
        timeout 60 vcpustats-check absent 0 >/tmp/check0.out 2>&1
        rc=$?
        sed 's/^/XT: check-dom0: /' /tmp/check0.out
        grep -q "Operation not supported" /tmp/check0.out || rc=1
        res dom0-own-table-refused $rc "Domain-0's own table: EOPNOTSUPP on Arm"
        if [ -x /usr/bin/xenstats ]; then
            timeout 60 xenstats vcpu 0 >/tmp/xs0.out 2>/tmp/xs0.err; rc=$?
            sed 's/^/XT: xenstats vcpu 0: /' /tmp/xs0.out /tmp/xs0.err | head -12
            xl vcpu-list 0 2>&1 | sed 's/^/XT: xl vcpu-list 0: /'
            # a row for each of Domain-0's vCPUs, as xl vcpu-list has them
            n=$(xl vcpu-list 0 2>/dev/null | awk 'NR > 1' | wc -l)
            m=$(grep -cE '^[0-9]+ ' /tmp/xs0.out)
            grep -q "falling back\|is this domain" /tmp/xs0.err && [ "$n" -ge 1 ] && [ "$m" = "$n" ] || rc=1
            res dom0-records-fallback $rc "xenstats vcpu 0: Domain-0's $m of $n vCPUs from xc_vcpu_getinfo()"
        fi
    else
        timeout 120 vcpustats-check check 0 --seconds 5 >/tmp/check0.out 2>&1
        rc=$?
        sed 's/^/XT: check-dom0: /' /tmp/check0.out
        res vcpustats-check-dom0 $rc "Domain-0's own records"
    fi
    for t in /usr/lib/xen/tests/*; do
        [ -x "$t" ] || continue
        timeout 120 "$t" "$D2" >/tmp/tt.out 2>&1
        rc=$?
        sed "s|^|XT: ${t##*/}: |" /tmp/tt.out | head -40
        res "tools-tests-${t##*/}" $rc "domid $D2"
    done
fi
if [ -x /usr/bin/xenstats ]; then
    timeout 60 xenstats vcpu "$D2" >/tmp/xs.out 2>&1; rc=$?
    timeout 60 xenstats vcpu -i 2s -c 1 "$D2" >>/tmp/xs.out 2>&1 || rc=$?
    sed 's/^/XT: xenstats vcpu: /' /tmp/xs.out | head -30
    res xenstats-vcpu $rc "domid $D2"
    # The agent exports the same: its series against the hypervisor.
    xenstats agent --listen 127.0.0.1:9740 --interval 1s >/tmp/agent.log 2>&1 &
    AGENT=$!
    timeout 180 vcpustats-check agent "$D2" 9740 --busy 1 --idle 0 --seconds 5 >/tmp/agent-check.out 2>&1
    rc=$?
    sed 's/^/XT: agent: /' /tmp/agent-check.out
    res xenstats-agent $rc "domid $D2 exported by xenstats agent"
    kill -TERM $AGENT; wait $AGENT; res agent-stops $? "on SIGTERM"
    [ $rc = 0 ] || sed 's/^/XT: agent log: /' /tmp/agent.log | tail -20
fi

# The benchmark domUs boot faster without a spinning domU beside them
# (QEMU TCG on two CPUs).
xl destroy busy2; res destroy-busy2 $? "busy2 destroyed"


grep -qw xt_tools /proc/cmdline && tools_then_end
# the benchmark domUs' vCPUs: 4 and 8 unless xt_bench_vcpus=N[,M] says
# otherwise (run.sh BENCH_VCPUS: under heavy load QEMU TCG may not create
# an 8-vCPU PV domU in time)
BV=$(arg xt_bench_vcpus | tr ',' ' ')
set -- ${BV:-4 8}
V1=$1 V2=${2:-}
create idle$V1 $V1 idle
[ -n "$V2" ] && create idle$V2 $V2 idle
wait_alive idle$V1 $V1 idle; D4=$D
D8=
if [ -n "$V2" ]; then wait_alive idle$V2 $V2 idle; D8=$D; fi
say "domU idle$V1 = domid $D4${V2:+, idle$V2 = domid $D8}"
xl list 2>&1 | sed 's/^/XT: xl list: /'
for d in $D4 $D8; do
    timeout 300 vcpustats-check bench "$d" 20000 >/tmp/bench.out 2>&1; rc=$?
    sed 's/^/XT: bench: /' /tmp/bench.out
    res "bench-$d" $rc
done

wkey

# Destruction while a mapping is held: the domain lingers until it is
# dropped, then goes; Xen must stay up.
vcpustats-check hold "$D4" 8 >/tmp/hold.out 2>&1 &
HP=$!
sleep 2
xl destroy idle$V1; res xl-destroy-mapped $? "idle$V1 destroyed with its stats mapped"
sleep 1
if xl list 2>/dev/null | awk '{print $2}' | grep -qx "$D4"; then lingered=yes; else lingered=no; fi
wait $HP; sed 's/^/XT: hold: /' /tmp/hold.out
i=0; while xl list 2>/dev/null | awk '{print $2}' | grep -qx "$D4" && [ $i -lt 20 ]; do sleep 1; i=$((i+1)); done
xl list 2>/dev/null | awk '{print $2}' | grep -qx "$D4"; [ $? != 0 ]
res destroy-after-unmap $? "domain $D4 lingered while mapped: $lingered; gone after unmap"
rc=0
[ -n "$V2" ] && { xl destroy idle$V2; rc=$?; }
res destroy-all $rc "remaining domUs destroyed"
xl dmesg | grep -iE "vcpu stats|vcpu_stats|assert|bug|panic" | sed 's/^/XT: xl dmesg: /' | tail -10
# on Arm, the rewrite test with the writable mapping dom0 has anyway
grep -qw xt_rewrite_after /proc/cmdline && rewrite_test
echo "XENTEST-DONE at $(up)s"
sync
poweroff -f
sleep 30
