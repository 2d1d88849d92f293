#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of dom0: brings up a minimal Xen control domain (modules, xenfs,
# the C xenstored, xen-init-dom0, xenconsoled), creates the PV domU,
# benchmarks, runs `xenstats agent` and checks its answers.  Every result
# line starts with "XT: " (PASS/FAIL/BENCH); "E2E-DONE" ends the run.
export PATH=/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin:/usr/lib/xen-4.20/bin
say() { echo "XT: $*"; }
finish() {
    say "SUMMARY shell checks: $PASSES passed, $FAILS failed"
    echo "E2E-DONE at $(up)s"
    sync
    poweroff -f
    sleep 60
}

. /dom0-up.sh
dom0_mounts
echo "E2E-BEGIN dom0 userspace at $(up)s"
say "hypervisor $(cat /sys/hypervisor/type 2>/dev/null) $(cat /sys/hypervisor/version/major 2>/dev/null).$(cat /sys/hypervisor/version/minor 2>/dev/null)$(cat /sys/hypervisor/version/extra 2>/dev/null), kernel $(uname -r)"
dom0_xen 60
res xenstored $? "ready at $(up)s"

# ---- the domU's network and disk: a bridge with dom0 on 10.99.0.1, and a
# file on a loop device (the hotplug scripts in /etc/xen/scripts)
dom0_backends
res backends $? "bridge xenbr0 and a 16 MiB disk on /dev/loop7"

# ---- the domU
T0=$(up)
timeout 300 xl create /domu/domu.cfg >/tmp/xl.out 2>&1
rc=$?
res xl-create $rc "$(tail -1 /tmp/xl.out) ($(up)s)"
DOMID=$(xl domid domu1 2>/dev/null)
[ -n "$DOMID" ] || finish
say "domU domid $DOMID"
# the domU's console and, later, the agent's log go live to the serial log
tail -F /var/log/xen/console/guest-domu1.log 2>/dev/null | while IFS= read -r l; do echo "DOMU-CONSOLE: $l"; done &
xenstore-write /local/domain/$DOMID/data/phase bench

# ---- benchmarks (they play the toolstack: the bench creates `stats`)
ROUNDS=$(arg e2e_rounds)
timeout 420 xen_e2e bench "$DOMID" "${ROUNDS:-120}"
res bench-run $? "benchmarks done at $(up)s"
xenstore-write /local/domain/$DOMID/data/phase test

# ---- the agent
xenstats -v agent --interval 1s >/tmp/agent.log 2>&1 &
AGENT=$!
tail -F /tmp/agent.log 2>/dev/null | while IFS= read -r l; do echo "AGENT: $l"; done &
i=0
while [ -z "$(xenstore-read /local/domain/$DOMID/data/ready 2>/dev/null)" ] && [ $i -lt 240 ]; do
    sleep 1
    i=$((i + 1))
done
res domu-ready "$([ $i -lt 240 ] && echo 0 || echo 1)" "domU providers up $(awk "BEGIN{print $(up)-$T0}")s after xl create"

fetch() { # /api/v1/snapshot and /metrics into /tmp (no curl; busybox's static wget crashes)
    xen_e2e get /api/v1/snapshot /tmp/snapshot.json && xen_e2e get /metrics /tmp/metrics.txt
}
check() { # check PHASE TRIES: retry until the checks pass, then print them
    echo "XT: FAIL $1 the agent did not answer" >/tmp/check.out
    i=0
    while [ $i -lt "$2" ]; do
        fetch && xen_e2e check "$1" "$DOMID" /tmp/snapshot.json /tmp/metrics.txt >/tmp/check.out 2>&1 && break
        sleep 2
        i=$((i + 1))
    done
    cat /tmp/check.out
}
check live 45

# ---- domain, host and device figures against xl, sysfs and xentop
. /figures.sh
figures_checks
agent_against_xentop

xenstats vcpu "$DOMID" >/tmp/vcpu.out 2>/tmp/vcpu.err
rc=$?
sed 's/^/XT: xenstats vcpu: /' /tmp/vcpu.out /tmp/vcpu.err
grep -q "falling back" /tmp/vcpu.err && grep -q "running\|RUNNING" /tmp/vcpu.out
res vcpu-command $((rc | $?)) "xenstats vcpu $DOMID with the hypercall fallback"

# top --direct (no agent in between) falls back the same way: a RUNNING%
# figure for the domU, and only the counters the hypercall gives.  (Its
# PV stats sets show as rejected: the agent holds their event channels,
# one monitor per set.)
xenstats top -b --iterations 2 -d 1s --direct >/tmp/top.out 2>/tmp/top.err
rc=$?
sed 's/^/XT: xenstats top --direct: /' /tmp/top.out /tmp/top.err
awk -v d="$DOMID" '$1 ~ /^DOMID/ { for (i = 1; i <= NF; i++) { h = $i; sub(/\*$/, "", h); c[h] = i }; next }
    $1 == d && $c["RUN%"] ~ /^[0-9.]+$/ && $c["WAIT%"] == "-" {ok = 1} END {exit !ok}' /tmp/top.out
res top-direct $((rc | $?)) "xenstats top --direct: domU $DOMID with RUNNING% from xc_vcpu_getinfo(), RUNNABLE% unknown"

xenstore-write /local/domain/$DOMID/data/phase withdraw
check withdrawn 20

T1=$(up)
xl destroy "$DOMID"
res xl-destroy $? "in $(awk "BEGIN{print $(up)-$T1}")s"
check gone 20

xen_e2e get /healthz /tmp/health
res agent-healthy $? "$(cat /tmp/health 2>/dev/null)"
kill -TERM $AGENT
i=0
while kill -0 $AGENT 2>/dev/null && [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done
kill -0 $AGENT 2>/dev/null
res agent-stops "$([ $? != 0 ] && echo 0 || echo 1)" "on SIGTERM"
finish
