#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of dom0 for the kernel provider's test (tests/e2e/kmod/): a domU
# with a vif on xenbr0 and a vbd on a loop device loads the xenstats
# module; `xenstats agent` must show its netfront, blkfront and balloon
# sets with the guest's own figures, through withdrawal, load/unload
# cycles, a killed agent, a user-space provider beside it, and xl save +
# xl restore; then the benchmark.  Result lines start with "XT: ".
export PATH=/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin
say() { echo "XT: $*"; }
finish() {
    say "SUMMARY kmod checks: $PASSES passed, $FAILS failed"
    echo "E2E-DONE at $(up)s"
    sync
    poweroff -f
    sleep 60
}

. /dom0-up.sh
dom0_mounts
# kmod_only=hardening (KMOD_ONLY): only the basic checks and those of the
# module's hardening (setters from interrupts, disk I/O across
# save/restore, a busy name published again, devices coming and going):
# skip the user-space provider, the killed agent, rmmod, the grant count,
# the 20 load cycles and the benchmark.  kmod_only=devices: only the basic
# checks, then devices coming and going and the same name again.
ONLY=$(arg kmod_only)
echo "E2E-BEGIN dom0 userspace at $(up)s"
for f in stdin:0 stdout:1 stderr:2; do ln -sf /proc/self/fd/${f#*:} /dev/${f%:*}; done
ln -sf /proc/self/fd /dev/fd
dom0_xen 60
res xenstored $? "ready at $(up)s"
mkdir -p /lc && mount -t tmpfs -o size=400m tmpfs /lc
dom0_backends /lc
res dom0-devices $? "xenbr0 and /dev/loop7 ($(up)s)"

timeout 300 xl create /domu/domu.cfg >/tmp/xl.out 2>&1
res xl-create $? "$(tail -1 /tmp/xl.out) ($(up)s)"
DOMID=$(xl domid domu1 2>/dev/null)
[ -n "$DOMID" ] || finish
tail -F /var/log/xen/console/guest-domu1.log 2>/dev/null | while IFS= read -r l; do echo "DOMU-CONSOLE: $l"; done &

SEQ=0
OUT=
cmd() { # cmd SECONDS VERB ARGS...: run in the domU, its answer in $OUT
    t=$1
    shift
    SEQ=$((SEQ + 1))
    xenstore-write /local/domain/$DOMID/data/cmd "$SEQ $*"
    i=0
    while [ "$(xenstore-read /local/domain/$DOMID/data/ack 2>/dev/null)" != $SEQ ] && [ $i -lt $((t * 5)) ]; do
        sleep 0.2
        i=$((i + 1))
    done
    OUT=$(xenstore-read /local/domain/$DOMID/data/out 2>/dev/null)
    [ $i -lt $((t * 5)) ]
}
# the domU's command loop is up once it answers
cmd 240 lsmod
res domu-ready $? "domU answers at $(up)s: $OUT"
no_oops() { # no_oops NAME: the guest's kernel log has no WARN, BUG or oops
    cmd 20 oops
    case $OUT in oops=0*) res "$1" 0 "guest dmesg clean" ;; *) res "$1" 1 "guest dmesg: $OUT" ;; esac
}

# ---- the module came first: it waits for `stats`
xenstore-exists /local/domain/$DOMID/stats
res module-waits "$([ $? != 0 ] && echo 0 || echo 1)" "no stats node yet, module loaded: $OUT"

AGENT=
agent_start() {
    xenstats -v agent --interval "${1:-1s}" >>/tmp/agent.log 2>&1 &
    AGENT=$!
}
agent_stop() { # agent_stop SIGNAL
    kill -"$1" $AGENT 2>/dev/null
    i=0
    while kill -0 $AGENT 2>/dev/null && [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done
}
fetch() { xen_e2e get /metrics /tmp/m.txt 2>/dev/null; }
# state PROVIDER SET: the set's state in the agent's last answer ("" if none)
state() {
    awk -v d="domid=\"$DOMID\"" -v p="provider=\"$1\"" -v s="set=\"$2\"" '
        index($0, "xenstats_pv_set_state{") == 1 && index($0, d) && index($0, p) && index($0, s) && $NF == 1 {
            match($0, /state="[a-z-]*"/); print substr($0, RSTART + 7, RLENGTH - 8); exit }' /tmp/m.txt
}
# value GROUP DEVICE STATISTIC: the sample of xenstats_guest_GROUP_STATISTIC
# (the module's names follow the naming convention, docs/pv-stats.md) of the
# module's provider of GROUP, with device="DEVICE" unless DEVICE is empty
value() {
    dv=
    [ -z "$2" ] || dv="device=\"$2\""
    awk -v n="xenstats_guest_$1_$3{" -v d="domid=\"$DOMID\"" -v p="provider=\"$(provider_of "$1")\"" -v v="$dv" '
        index($0, n) == 1 && index($0, d) && index($0, p) && (v == "" ? !index($0, "device=") : index($0, v)) {
            printf "%.0f\n", $NF; exit }' /tmp/m.txt
}
# our sets as PROVIDER/SET, a space of the set's name written "+"
OURS="netfront/net+eth0 blkfront/disk+xvda balloon/balloon"
set_of() { echo "${1#*/}" | tr + ' '; }
wait_sets() { # wait_sets STATE SECONDS: every set of ours in STATE ("none": absent or not active)
    i=0
    while [ $i -lt "$2" ]; do
        fetch
        ok=1
        for ps in $OURS; do
            st=$(state "${ps%/*}" "$(set_of "$ps")")
            if [ "$1" = none ]; then [ "$st" != active ] || ok=0; else [ "$st" = "$1" ] || ok=0; fi
        done
        [ $ok = 1 ] && return 0
        sleep 1
        i=$((i + 1))
    done
    return 1
}
states() { for ps in $OURS; do printf '%s=%s ' "$ps" "$(state "${ps%/*}" "$(set_of "$ps")")"; done; }
provider_of() { case $1 in net) echo netfront ;; disk) echo blkfront ;; balloon) echo balloon ;; esac; }
# compare: the guest's own figures ($FIG) against the agent's, read one
# sample later; the mismatches in $BAD.  (No subshell: cmd counts SEQ.)
FIG=
BAD=
compare() {
    tries=0
    while [ $tries -lt 8 ]; do
        cmd 20 figures
        FIG=$OUT
        sleep 2.5 # one sample of the agent (1 s) after the guest read them
        fetch
        bad=
        for kv in $FIG; do
            k=${kv%%=*} v=${kv#*=}
            gd=${k%%.*} stat=${k#*.}
            got=$(value "${gd%%/*}" "${gd#*/}" "$stat")
            [ "$got" = "$v" ] || bad="$bad $k:guest=$v,agent=$got"
        done
        BAD=$bad
        [ -z "$bad" ] && return 0
        tries=$((tries + 1))
    done
    return 1
}
fig() { for kv in $FIG; do [ "${kv%%=*}" = "$1" ] && echo "${kv#*=}"; done; }

T=$(up)
agent_start
wait_sets active 60
res module-before-agent $? "$(states)after $(awk "BEGIN{print $(up)-$T}")s"
compare
res values-equal $? "guest figures = agent's: $FIG $BAD"
RX0=$(fig net/eth0.rx_bytes_total) WB0=$(fig disk/xvda.written_bytes_total) RI0=$(fig disk/xvda.reads_completed_total)
cmd 60 io
ping -c 5 -i 0.2 10.99.0.2 >/dev/null 2>&1
compare
res values-equal-after-traffic $? "$FIG $BAD"
RX1=$(fig net/eth0.rx_bytes_total) WB1=$(fig disk/xvda.written_bytes_total) RI1=$(fig disk/xvda.reads_completed_total)
[ "$RX1" -gt "$RX0" ] && [ "$WB1" -ge $((WB0 + 4194304)) ] && [ "$RI1" -gt "$RI0" ]
res values-move $? "net/eth0.rx_bytes_total $RX0 -> $RX1, disk/xvda.written_bytes_total $WB0 -> $WB1, disk/xvda.reads_completed_total $RI0 -> $RI1"
no_oops dmesg-after-traffic

# kmod_only=devices: from the basic checks straight to the devices
if [ "$ONLY" != devices ]; then
if [ "$ONLY" != hardening ]; then
# ---- a user-space provider beside the kernel's
cmd 20 publish
i=0
while [ $i -lt 30 ]; do
    fetch
    other=$(awk -v d="domid=\"$DOMID\"" 'index($0, "xenstats_pv_set_state{") == 1 && index($0, d) && index($0, "state=\"active\"") && $NF == 1 &&
        !index($0, "provider=\"netfront\"") && !index($0, "provider=\"blkfront\"") && !index($0, "provider=\"balloon\"")' /tmp/m.txt | wc -l)
    [ "$other" -gt 0 ] && break
    sleep 1
    i=$((i + 1))
done
wait_sets active 5
r=$?
res user-provider-coexists "$([ "$other" -gt 0 ] && [ $r = 0 ] && echo 0 || echo 1)" "$other user-space sets active beside $(states)"
cmd 20 unpublish

# ---- the agent killed mid-sample
agent_stop TERM
agent_start 100ms
sleep 3.37
kill -KILL $AGENT
sleep 1
agent_start
wait_sets active 60
res agent-killed-mid-sample $? "SIGKILL at 100 ms sampling, restarted: $(states)"
no_oops dmesg-after-agent-kill

# ---- rmmod withdraws
T=$(up)
cmd 60 unload
u=$OUT
wait_sets none 30
r=$?
left=$(xenstore-ls /local/domain/$DOMID/stats 2>/dev/null | grep -c "event-channel")
res rmmod-withdraws "$([ $r = 0 ] && [ "$left" = 0 ] && echo 0 || echo 1)" "$u in $(awk "BEGIN{print $(up)-$T}")s: $(states), event-channel keys left $left"
no_oops dmesg-after-rmmod

# ---- the agent came first
cmd 30 load
wait_sets active 60
res agent-before-module $? "$(states)"

# grants of the domU that dom0 has mapped read-only (Xen's 'g' debug key
# prints the pinned entries of each grant table, with the shared entry's
# flags last; GTF_readonly is 0x4): the module grants its pages read-only
# and the agent maps two per set, while blkback's persistent grants and
# the netback rings are read-write and come and go with I/O, so they are
# left out.  The dump is waited for until Xen says it is done (it is long;
# the console ring is made large enough on the command line), and a
# reading without this domain's header or the end marker is "?", which
# never compares equal.
grants() {
    local i=0 out=
    xl dmesg -c >/dev/null
    xl debug-keys g
    while [ $i -lt 20 ]; do
        sleep 1
        out=$(xl dmesg)
        case $out in *"gnttab_usage_print_all ] done"*) break ;; esac
        i=$((i + 1))
    done
    printf '%s\n' "$out" | awk -v d="remote d$DOMID " '
        /gnttab_usage_print_all \] done/ { end = 1 }
        /grant-table for remote/ { on = index($0, d) > 0; if (on) seen = 1; next }
        on && /\[0x[0-9a-f]+\]/ && $NF ~ /^0x[0-9a-f]*[4567cdef]$/ { n++ }
        END { if (seen && end) print n + 0; else print "?" }'
}
G_LOADED=$(grants)
fi

# ---- dom0 deletes a set's event-channel under the module: it withdraws
# the set and publishes it again
# (the key of set "net eth0" is net_eth0, derived from its name)
P0=$(xenstore-read /local/domain/$DOMID/stats/netfront/net_eth0/event-channel 2>/dev/null)
xenstore-rm /local/domain/$DOMID/stats/netfront/net_eth0/event-channel
i=0
P1=
while [ $i -lt 30 ]; do
    sleep 1
    P1=$(xenstore-read /local/domain/$DOMID/stats/netfront/net_eth0/event-channel 2>/dev/null)
    [ -n "$P1" ] && break
    i=$((i + 1))
done
wait_sets active 30
r=$?
res keys-deleted-by-dom0 "$([ $r = 0 ] && [ -n "$P1" ] && echo 0 || echo 1)" "event-channel $P0 deleted, republished with $P1: $(states)"
no_oops dmesg-after-keys-deleted

# ---- the value setters from interrupt context while their set is
# withdrawn and published again: the example module's timer writes an
# entry of each of its 5 pages every 100 us, and dom0 deletes the set's
# event-channel 20 times; each time the module ends the grants (the pages
# go back to the guest's allocator, which page_poison=1 checks when it
# hands them out again: the disk I/O keeps it busy) and grants new ones
cmd 30 example 300 100
ex=$OUT
cmd 20 iostart
EX=/local/domain/$DOMID/stats/Example/Counters/event-channel
n=0 ok=0
while [ $n -lt 20 ]; do
    i=0
    P=
    while [ $i -lt 40 ] && [ -z "$P" ]; do
        P=$(xenstore-read $EX 2>/dev/null)
        [ -n "$P" ] || sleep 0.5
        i=$((i + 1))
    done
    [ -n "$P" ] && ok=$((ok + 1))
    xenstore-rm $EX 2>/dev/null
    n=$((n + 1))
done
P=
i=0
while [ $i -lt 40 ] && [ -z "$P" ]; do P=$(xenstore-read $EX 2>/dev/null) || sleep 0.5; i=$((i + 1)); done
cmd 70 iostop
io=$OUT
cmd 30 unexample
res setters-from-interrupts "$([ $ok = 20 ] && [ -n "$P" ] && echo 0 || echo 1)" "example loaded ($ex) with timer_us=100: published again $ok of 20 times, I/O loop ended ($io), then unloaded ($OUT)"
no_oops dmesg-after-setters-from-interrupts

if [ "$ONLY" != hardening ]; then
# ---- 20 loads and unloads: no leak
cmd 60 unload
cmd 20 leak
L0=$OUT
G0=$(grants)
cmd 300 cycle 20
c=$OUT
sleep 2
cmd 20 leak
L1=$OUT
G1=$(grants)
lk() { for kv in $2; do [ "${kv%%=*}" = "$1" ] && echo "${kv#*=}"; done; }
ok=0
[ "$(lk irqs "$L1")" = 0 ] && [ "$(lk dyn "$L1")" = "$(lk dyn "$L0")" ] || ok=1
[ $(($(lk slab_kb "$L1") - $(lk slab_kb "$L0"))) -lt 1024 ] || ok=1
[ $(($(lk memfree_kb "$L0") - $(lk memfree_kb "$L1"))) -lt 2048 ] || ok=1
[ "$G1" = "$G0" ] && [ "$G0" != "?" ] || ok=1
# the reading can see the agent's mappings: more with the module loaded
[ "$G_LOADED" != "?" ] && [ "$G0" != "?" ] && [ "$G_LOADED" -gt "$G0" ] || ok=1
case $c in *"failures=0"*) ;; *) ok=1 ;; esac
res load-unload-20-no-leak $ok "$c; before: $L0 ro_grants_mapped=$G0; after: $L1 ro_grants_mapped=$G1 (loaded: $G_LOADED)"
no_oops dmesg-after-cycles
fi
cmd 30 load
wait_sets active 60
res reload-after-cycles $? "$(states)"

# ---- xl save + xl restore with the module loaded and disk I/O running
# (Xen on Arm has no save/restore: said, not counted)
if [ "$(uname -m)" = aarch64 ]; then
    say "SKIP xl-save/xl-restore: Xen on Arm does not support save/restore"
else
cmd 20 iostart
T=$(up)
timeout 120 xl save domu1 /lc/ckpt >/tmp/save.out 2>&1
res xl-save $? "in $(awk "BEGIN{print $(up)-$T}")s: $(tail -1 /tmp/save.out)"
T=$(up)
timeout 180 xl restore /lc/ckpt >/tmp/restore.out 2>&1
res xl-restore $? "in $(awk "BEGIN{print $(up)-$T}")s: $(tail -1 /tmp/restore.out)"
rm -f /lc/ckpt
OLD=$DOMID
DOMID=$(xl domid domu1 2>/dev/null)
say "domid $OLD -> $DOMID"
T=$(up)
wait_sets active 90
r=$?
res restore-republishes $r "domid $OLD -> $DOMID: $(states)after $(awk "BEGIN{print $(up)-$T}")s"
if [ $r != 0 ]; then # what each side saw
    xenstore-ls /local/domain/$DOMID/stats 2>&1 | sed 's/^/XT: stats: /' | head -40
    tail -20 /tmp/agent.log | sed 's/^/XT: agent: /'
    cmd 20 klog
    say "guest kernel log: $OUT"
fi
# the I/O loop ended (its last round complete) before the figures are read
cmd 70 iostop
io=$OUT
compare
r=$?
case $io in rc=0*) ;; *) r=1 ;; esac
res values-equal-after-restore $r "I/O loop: $io; $FIG $BAD"
no_oops dmesg-after-restore
cmd 60 unload
wait_sets none 30
res rmmod-after-restore $? "$OUT: $(states)"
no_oops dmesg-after-restore-rmmod
fi # aarch64

fi # kmod_only=devices
# ---- devices come and go under the loaded module
cmd 30 load
wait_sets active 60
one_state() { fetch; state "$1" "$2"; }
wait_one() { # wait_one PROVIDER SET active|none SECONDS
    i=0
    while [ $i -lt "$4" ]; do
        st=$(one_state "$1" "$2")
        if [ "$3" = none ]; then [ "$st" != active ] && return 0; else [ "$st" = "$3" ] && return 0; fi
        sleep 1
        i=$((i + 1))
    done
    return 1
}
timeout 60 xl block-detach domu1 xvda >/tmp/bd.out 2>&1
r=$?
wait_one blkfront "disk xvda" none 30
w=$?
res vbd-detach-withdraws "$([ $r = 0 ] && [ $w = 0 ] && echo 0 || echo 1)" "blkfront/disk xvda=$(one_state blkfront "disk xvda") $(tail -1 /tmp/bd.out)"
no_oops dmesg-after-vbd-detach
timeout 60 xl block-attach domu1 'format=raw,vdev=xvda,access=rw,script=/etc/xen/scripts/hotplug-block,target=/dev/loop7' >/tmp/ba.out 2>&1
r=$?
wait_one blkfront "disk xvda" active 40
w=$?
[ $w = 0 ] || { xenstore-ls /local/domain/$DOMID/stats 2>&1 | head -20 | sed 's/^/XT: stats: /'; tail -10 /tmp/agent.log | sed 's/^/XT: agent: /'; }
res vbd-attach-publishes "$([ $r = 0 ] && [ $w = 0 ] && echo 0 || echo 1)" "blkfront/disk xvda=$(one_state blkfront "disk xvda") $(tail -1 /tmp/ba.out)"
timeout 60 xl network-detach domu1 0 >/tmp/nd.out 2>&1
r=$?
wait_one netfront "net eth0" none 30
w=$?
res vif-detach-withdraws "$([ $r = 0 ] && [ $w = 0 ] && echo 0 || echo 1)" "netfront/net eth0=$(one_state netfront "net eth0") $(tail -1 /tmp/nd.out)"
no_oops dmesg-after-vif-detach
timeout 60 xl network-attach domu1 bridge=xenbr0 mac=00:16:3e:4c:00:03 script=/etc/xen/scripts/hotplug-vif >/tmp/na.out 2>&1
r=$?
wait_one netfront "net eth0" active 40
w=$?
res vif-attach-publishes "$([ $r = 0 ] && [ $w = 0 ] && echo 0 || echo 1)" "netfront/net eth0=$(one_state netfront "net eth0"); xl network-attach rc=$r: $(tr '\n' ' ' </tmp/na.out)"
[ -f /var/log/xen/xen-hotplug.log ] && sed 's/^/XT: hotplug log: /' /var/log/xen/xen-hotplug.log | tail -5
no_oops dmesg-after-hotplug

# ---- the same name again while the old set is still being withdrawn:
# the agent is stopped (SIGSTOP), so the monitor never closes its port and
# each withdrawal takes its whole 2 s; the interface's new set must be
# published once the old one is gone.  First the guest renames eth0 and
# back at once (the name is busy for certain), then a vif detached and
# another attached within a second under the same name.
# The guest must not have failed to publish since the last dmesgmark (an
# earlier failure, e.g. the balloon's EACCES while dom0 had not yet made
# stats/ at boot, seen on Arm, is not this check's business).
name_back() { # name_back CHECK DETAIL: the agent resumed, net eth0 active again
    kill -CONT $AGENT
    wait_one netfront "net eth0" active 40
    w=$?
    ws=$w
    cmd 20 pubfail
    pf=${OUT%% *}   # (the guest's answer ends in a space)
    [ "$pf" = 0 ] || w=1
    cmd 20 klog
    res "$1" $w "$2; netfront/net eth0=$(one_state netfront "net eth0") (active within 40 s: $([ $ws = 0 ] && echo yes || echo no)); publish failures since the mark: $pf; guest: $OUT"
}
cmd 20 dmesgmark
kill -STOP $AGENT
cmd 20 rename
name_back rename-and-back "renamed eth0 -> tmp0 -> eth0 ($OUT) with the agent stopped"
# xl network-detach is given the vif's devid (the Idx column of
# xl network-list), which libxl looks up directly
DEVID=$(xl network-list domu1 2>/dev/null | awk '$3 == "00:16:3e:4c:00:03" { print $1 }')
kill -STOP $AGENT
cmd 20 dmesgmark
T=$(up)
timeout 60 xl network-detach domu1 "${DEVID:-00:16:3e:4c:00:03}" >/tmp/nd.out 2>&1
r1=$?
T1=$(up)
timeout 60 xl network-attach domu1 bridge=xenbr0 mac=00:16:3e:4c:00:04 script=/etc/xen/scripts/hotplug-vif >/tmp/na.out 2>&1
r2=$?
T2=$(up)
[ $r1 = 0 ] && [ $r2 = 0 ] || { sed 's/^/XT: network-detach: /' /tmp/nd.out; sed 's/^/XT: network-attach: /' /tmp/na.out
    xl network-list domu1 2>&1 | sed 's/^/XT: network-list: /'; }
cmd 20 ifname
ifn=$OUT
# the new vif must be eth0 (the old one gone); the guest says whether the
# name was still busy when it came (the attach, hotplug script included,
# may take longer than the withdrawal under emulation)
cmd 20 busy
busy=$OUT
r=0
[ $r1 = 0 ] && [ $r2 = 0 ] || r=1
case $ifn in "eth0 "*00:16:3e:4c:00:04*) ;; *) r=1 ;; esac
res vif-reattach-name $r "vif $DEVID detached (rc=$r1) in $(awk "BEGIN{print $T1-$T}")s, another attached at once (rc=$r2) in $(awk "BEGIN{print $T2-$T1}")s: guest interfaces and eth0's address: $ifn; busy-name messages since: $busy"
name_back vif-reattach-same-name "the new vif: $ifn"
cmd 60 unload
no_oops dmesg-after-reattach

# ---- benchmark: a 64-statistic set, kernel against user space, twice
# each, alternating, so that both see the same load
agent_stop TERM
[ -n "$ONLY" ] || for round in 1 2; do
    cmd 30 load publish_net=0 publish_blk=0 publish_balloon=0
    cmd 30 example 60
    timeout 300 kmod_e2e bench "$DOMID" "${BENCH_ROUNDS:-400}" kernel
    res bench-kernel-run-$round $? ""
    cmd 30 unexample
    cmd 30 unload
    cmd 20 benchuser
    timeout 300 kmod_e2e bench "$DOMID" "${BENCH_ROUNDS:-400}" user
    res bench-user-run-$round $? ""
    cmd 30 benchuserstop
done
say "CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
no_oops dmesg-final
finish
