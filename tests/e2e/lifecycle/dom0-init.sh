#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the lifecycle test's dom0: a minimal Xen control domain running
# `xenstats agent`, and one PV domU (2 vCPUs, a vif and a vbd) running
# `xenstats publish`, walked through its lifecycle:
#   xl save + xl restore, xl migrate (local, live), vcpu-set down and up,
#   pause and unpause, mem-set and back, the provider's withdrawal, xl
#   reboot.
# After each step lc_probe checks the agent's /metrics (every set active
# again under the new domid and the same UUID, values that move, no series
# of the old domid; the vCPUs against xl vcpu-list; ...).  Result lines:
# "LC: PASS|FAIL NAME ...", "LC: TIME ..." per step, "LC: FIGURE ..." with
# lc_cycles=N on the kernel command line (N save/restore and N migrations,
# p50 and max); "E2E-DONE" ends the run.
export PATH=/usr/bin:/usr/sbin:/usr/lib/xen-4.17/bin
NAME=domu
CFG=/domu/lc.cfg
SETS=/tmp/sets
say() { echo "LC: $*"; }
finish() {
    tail -n 30 /tmp/agent.log | sed 's/^/AGENT: /'
    for f in /var/log/xen/xl-$NAME*.log; do [ -s "$f" ] && tail -n 15 "$f" | sed "s|^|XL-LOG $(basename "$f"): |"; done
    say "SUMMARY $PASSES passed, $FAILS failed"
    echo "E2E-DONE at $(up)s"
    sync
    poweroff -f
    sleep 60
}
domid() { xl domid "$NAME" 2>/dev/null; }
xlrun() { # xlrun LABEL TIMEOUT ARGS...: xl ARGS, timed; its output only when it fails
    l=$1 to=$2
    shift 2
    t=$(up)
    timeout "$to" xl "$@" >/tmp/xl.out 2>&1
    rc=$?
    XL_SECS=$(awk "BEGIN{printf \"%.1f\", $(up) - $t}")
    [ $rc = 0 ] || sed "s/^/LC: xl $l: /" /tmp/xl.out | tail -30
    res "xl-$l" $rc "'xl $*' took ${XL_SECS}s"
    return $rc
}
SEQ=0
guest() { # guest DOMID VERB: the domU's init runs VERB (domu-init.sh), within 60 s
    SEQ=$((SEQ + 1))
    xenstore-write "/local/domain/$1/data/cmd" "$SEQ $2"
    i=0
    while [ "$(xenstore-read "/local/domain/$1/data/ack" 2>/dev/null)" != "$SEQ" ] && [ $i -lt 60 ]; do
        sleep 1
        i=$((i + 1))
    done
    [ $i -lt 60 ] && return 0
    # no answer: its data/ keys, and the guest's tasks in D state with
    # their stacks on its console (DOMU-CONSOLE lines; a task listed makes
    # the next dmesg check fail too, for its Call Trace)
    say "domid $1 did not answer '$SEQ $2' within 60 s; its data/: $(xenstore-ls "/local/domain/$1/data" 2>&1 | tr '\n' ';')"
    xl sysrq "$NAME" 8
    xl sysrq "$NAME" w
    sleep 5
    return 1
}
dmesg_clean() { # dmesg_clean DOMID LABEL: the domU's kernel log has no BUG, WARNING, Oops, Call Trace
    guest "$1" dmesg
    bad=$(xenstore-read "/local/domain/$1/data/dmesg-bad" 2>/dev/null)
    res "dmesg-clean-$2" "$([ "$bad" = 0 ] && echo 0 || echo 1)" \
        "domid $1: ${bad:-no answer} BUG/WARNING/Oops/Call Trace lines in the guest's dmesg (DOMU: dmesg lines)"
}
TIMES=
OLD=none # every domid the guest had: none may keep a series
settled() { # settled STEP NEW OLD LIMIT [SINCE]: every set back, same UUID, values
    # moving; the time counts from SINCE (an uptime) when given, else from now
    OLD=$OLD,$3
    p=$(up)
    out=$(lc_probe settle "$2" "$OLD" "$UUID" $SETS "$4")
    rc=$?
    res "$1-active" $rc "$out"
    [ $rc = 0 ] || xl list 2>&1 | sed "s/^/LC: xl list after $1: /"
    ms=${out%% *}
    [ $rc = 0 ] && [ -n "${5:-}" ] && ms=$(awk "BEGIN{printf \"%.0f\", $ms + ($p - $5) * 1000}")
    say "TIME $1: time from xl $1 returning to every set active again: $ms ms (domid $3 -> $2)$(echo "$out" |
        sed -n 's/^-1 ms: not settled.*(\(every set active after -*[0-9]* ms\)).*/; not settled, \1/p')"
    TIMES="$TIMES $1=$ms"
    case $out in *" domain $NAME;"*) rc=0 ;; *) rc=1 ;; esac
    res "$1-name" $rc "xenstats_domain_info of domid $2 names the domain $NAME"
    out=$(lc_probe moving "$2" $SETS)
    res "$1-moving" $? "$out"
}
figure() { # figure STEP: p50 and max of its times
    echo "$TIMES" | tr ' ' '\n' | sed -n "s/^$1=//p" | grep -v '^-' | sort -n >/tmp/fig
    n=$(wc -l </tmp/fig)
    [ "$n" -gt 0 ] || return 0
    say "FIGURE $1: time from xl $1 returning to every set active again over $n cycles:" \
        "p50 $(sed -n "$(((n + 1) / 2))p" /tmp/fig) ms, max $(tail -1 /tmp/fig) ms ($(tr '\n' ' ' </tmp/fig | sed 's/ $//'))"
}

. /dom0-up.sh
dom0_mounts
echo "E2E-BEGIN dom0 userspace at $(up)s"
CYCLES=$(arg lc_cycles)
CYCLES=${CYCLES:-1}
dom0_xen 60
res xenstored $? "ready at $(up)s"
xl info >/tmp/xlinfo 2>&1
grep -E "^(xen_version|xen_extra|virt_caps|free_memory)" /tmp/xlinfo | sed 's/^/LC: xl info: /'
# a PV guest's log-dirty mode, which live migration needs, is Xen's shadow
# paging code: `make xen-hypervisor` builds it in, Debian does not
grep "^virt_caps" /tmp/xlinfo | grep -qw shadow
res shadow-paging $? "virt_caps lists shadow: xl migrate can enable log-dirty mode"
dom0_backends /tmp
res backends $? "bridge xenbr0 and a 16 MiB disk on /dev/loop7"
# devtmpfs has no /dev/stdin & co.; libxl's scripts and xl expect them
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

# the agent first: it creates the domain's `stats` node, which publish needs
xenstats -v agent --interval 1s >/tmp/agent.log 2>&1 &
AGENT=$!

T0=$(up)
xlrun create 300 create $CFG
D=$(domid)
[ -n "$D" ] || finish
# both console logs: a migrated-in domain is created as NAME--incoming
tail -F /var/log/xen/console/guest-$NAME.log /var/log/xen/console/guest-$NAME--incoming.log 2>/dev/null |
    while IFS= read -r l; do echo "DOMU-CONSOLE: $l"; done &
xl list -v "$NAME" >/tmp/xl.list 2>&1
UUID=$(awk 'NR == 2 {print $7}' /tmp/xl.list)
say "domU $NAME: domid $D, uuid $UUID (xl list -v)"
out=$(lc_probe baseline "$D" $SETS 240)
rc=$?
# with the kernel provider (/domu/kmod: LC_KMOD=1), its sets and those of
# publish must all be in the list that every later step checks: the two
# providers start at about the same time, so a list taken between them
# is taken again
if [ -f /domu/kmod ]; then
    i=0
    while :; do
        n=$(grep -c -e '^netfront	net eth0$' -e '^blkfront	disk xvda$' -e '^balloon	balloon$' $SETS)
        u=$(grep -c -v -e '^netfront	' -e '^blkfront	' -e '^balloon	' $SETS)
        [ "$n" = 3 ] && [ "$u" -gt 0 ] && break
        [ $i -lt 10 ] || { rc=1; break; }
        sleep 2
        out=$(lc_probe baseline "$D" $SETS 60)
        rc=$?
        i=$((i + 1))
    done
    res kmod-sets $rc "the kernel provider's 3 sets and $u of xenstats publish: $(tr '\t\n' ': ' <$SETS)"
fi
res publish-active $rc "$(awk "BEGIN{printf \"%.0f\", $(up) - $T0}")s after xl create: $out"
out=$(lc_probe settle "$D" none "$UUID" $SETS 10)
res identity $? "$out"

# The guest's blkfront sets up as many rings as blkback's max_queues allows
# when it connects: changed before a restore and before a migration, it
# makes blkfront's resume change its hardware queues
# (blk_mq_update_nr_hw_queues(), which frees tags) while the kernel
# provider's refresh (kmod/blkfront.c) may walk them and disk I/O runs.
MQ=/sys/module/xen_blkback/parameters/max_queues
queues() { # queues DOMID: the guest's hardware queues of xvda into Q,
    # its reads completed into R (the one before into R0)
    # (not in a $(...): guest's SEQ would go up in the subshell only, and
    # the guest ignores a command it has just answered)
    guest "$1" queues
    Q=$(xenstore-read "/local/domain/$1/data/queues" 2>/dev/null)
    R0=$R
    R=$(xenstore-read "/local/domain/$1/data/reads" 2>/dev/null)
}
R=
# (with the kernel provider only: without it, CI's default walk stays
# within its time limit)
set_queues() { # set_queues N DOMID: blkback's max_queues for the next connection
    [ -f /domu/kmod ] || return 0
    if [ -w $MQ ]; then
        echo "$1" >$MQ
        queues "$2"
        say "blkback max_queues $(cat $MQ); the guest has ${Q:-no answer} queues on xvda"
    else
        say "blkback has no writable max_queues: the queues stay as they are"
    fi
}
check_queues() { # check_queues STEP DOMID N
    [ -f /domu/kmod ] && [ -w $MQ ] || return 0
    queues "$2"
    res "$1-queues" "$([ "$Q" = "$3" ] && echo 0 || echo 1)" "xvda has ${Q:-no answer} hardware queues (want $3)"
    # the guest's I/O loop goes on over the new rings: more reads completed
    # than before the save or the migration
    res "$1-io" "$([ "${R:-0}" -gt "${R0:-0}" ] 2>/dev/null && echo 0 || echo 1)" \
        "xvda's reads completed ${R0:-none} before, ${R:-no answer} after"
}

# ---- save + restore, local live migration: the guest resumes under a new
# domid, its event channels and grants gone, its xenstore keys rewritten
# the limit for every set to be active again: with the kernel provider the
# guest's disk I/O loop shares its emulated vCPUs with xenstats publish,
# whose sets were not all back 30 s after xl restore at a host load of 19
# (the module's were), though they were a few seconds later
LIMIT=30
[ -f /domu/kmod ] && LIMIT=60
c=0
while [ $c -lt "$CYCLES" ]; do
    c=$((c + 1))
    say "cycle $c of $CYCLES"
    set_queues 2 "$D"
    xlrun save 300 save $NAME /tmp/ckpt || finish
    xlrun restore 300 restore /tmp/ckpt
    rm -f /tmp/ckpt
    NEW=$(domid)
    [ -n "$NEW" ] || finish
    settled restore "$NEW" "$D" $LIMIT
    D=$NEW
    check_queues restore "$D" 2
    [ -f /domu/kmod ] && dmesg_clean "$D" after-restore
    set_queues 1 "$D"
    xlrun migrate 300 migrate -s '' $NAME 'xl migrate-receive'
    NEW=$(domid)
    [ -n "$NEW" ] || finish
    [ "$NEW" != "$D" ] || { res migrate-domid 1 "still domid $D"; finish; }
    settled migrate "$NEW" "$D" $LIMIT
    D=$NEW
    check_queues migrate "$D" 1
done
[ "$CYCLES" -gt 1 ] && for s in restore migrate; do figure $s; done
# a provider that unbinds or closes a channel bound before the save hits
# `kernel BUG at drivers/xen/evtchn.c` in the guest
dmesg_clean "$D" after-resume

# ---- vCPUs: one taken away, then given back (the guest onlines it)
xlrun vcpu-set-1 60 vcpu-set $NAME 1
out=$(lc_probe vcpus "$D" $NAME 1 30)
res vcpus-down $? "$out"
xlrun vcpu-set-2 60 vcpu-set $NAME 2
out=$(lc_probe vcpus "$D" $NAME 2 30)
res vcpus-up $? "$out"

# ---- pause: no vCPU running, sets not timed out for not answering
xlrun pause 30 pause $NAME
say "xl list while paused: $(xl list $NAME 2>/dev/null | awk 'NR == 2 {print $5}')"
out=$(lc_probe paused "$D" $SETS 5)
res paused $? "$out"
xlrun unpause 30 unpause $NAME
out=$(lc_probe settle "$D" none "$UUID" $SETS 10)
res unpause-active $? "$out"
out=$(lc_probe moving "$D" $SETS)
res unpause-moving $? "$out"

# ---- ballooning: the target follows xl mem-set
for m in 128 192; do
    xlrun mem-set-$m 30 mem-set $NAME ${m}m
    out=$(lc_probe target "$D" $((m * 1048576)) 20)
    rc=$?
    kb=$(xenstore-read /local/domain/$D/memory/target 2>/dev/null)
    [ "$kb" = $((m * 1024)) ] || rc=1
    res mem-target-$m $rc "$out; xenstore memory/target $kb kB; xl list Mem $(xl list $NAME 2>/dev/null | awk 'NR == 2 {print $3}') MiB"
done
# ---- withdrawal after the resumes: the provider exits, which closes the
# event channel handles it held before them unless it kept them apart
guest "$D" stop
rc=$(xenstore-read /local/domain/$D/data/publish-rc 2>/dev/null)
res publish-exit "$([ "$rc" = 0 ] && echo 0 || echo 1)" "xenstats publish exited with ${rc:-no answer} on SIGTERM"
# the kernel provider's sets (netfront, blkfront, balloon) stay
grep -v -e '^netfront	' -e '^blkfront	' -e '^balloon	' $SETS >$SETS.publish
out=$(lc_probe withdrawn "$D" $SETS.publish 20)
res withdrawn $? "$out"
dmesg_clean "$D" after-withdraw

# ---- reboot: a new domain (new domid, same UUID) whose init publishes again
xlrun reboot 60 reboot $NAME
T=$(up)
NEW=
while [ -z "$NEW" ] && [ "$(awk "BEGIN{print ($(up) - $T) < 120}")" = 1 ]; do
    n=$(domid)
    [ -n "$n" ] && [ "$n" != "$D" ] && NEW=$n
    sleep 0.5
done
[ -n "$NEW" ] || { res reboot-domid 1 "no new domain 120 s after xl reboot"; finish; }
say "rebooted: domid $D -> $NEW after $(awk "BEGIN{printf \"%.1f\", $(up) - $T}")s"
settled reboot "$NEW" "$D" 150 "$T"
D=$NEW
dmesg_clean "$D" after-reboot

kill -0 $AGENT
res agent-alive $? "pid $AGENT through the whole walk"
finish
