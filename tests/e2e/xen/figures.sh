# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by tests/e2e/xen/dom0-init.sh, installed as /figures.sh: the
# agent's domain, host and device figures against what Xen's own tools and
# dom0's sysfs say on the same host: xl info, xl list, xl pause/unpause,
# xl mem-set, /sys/class/net/vif*/statistics, blkback's statistics/ and
# Debian's xentop (next to xenstats xentop: xentop_compare.awk).  Uses the caller's res(), say(), fetch() and $DOMID.

# fig KIND ... KEY: a figure of the last fetch ("host KEY", "dom ID KEY",
# "vif ID DEV KEY", "vbd ID DEV KEY")
flat() { xen_e2e flat /tmp/snapshot.json >/tmp/flat.txt; }
fig() {
    local want="$*"
    awk -v w="$want" '{ v = $NF; $NF = ""; sub(/ $/, ""); if ($0 == w) { print v; exit } }' /tmp/flat.txt
}
# within A B TOL: |A - B| <= TOL
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; }
# retry TRIES CMD...: fetch and flatten, then CMD, until it holds (a sample a second)
retry() {
    local n=$1 i=0
    shift
    while [ $i -lt "$n" ]; do
        fetch && flat && "$@" && return 0
        sleep 1
        i=$((i + 1))
    done
    return 1
}
sysfs_vif() { cat "/sys/class/net/vif$DOMID.0/statistics/$1" 2>/dev/null; }
sysfs_vbd() { cat "/sys/bus/xen-backend/devices/vbd-$DOMID-51712/statistics/$1" 2>/dev/null; }

# bracketed: every vif and vbd counter of the agent's sample lies between
# dom0's sysfs figure read more than a sampling interval before the fetch and
# the one read after it
VIF_KEYS="rx_bytes tx_bytes rx_packets tx_packets rx_dropped tx_dropped"
VBD_KEYS="oo_req rd_req wr_req f_req ds_req rd_sect wr_sect"
sysfs_all() { for k in $VIF_KEYS; do echo "vif $k $(sysfs_vif "$k")"; done; for k in $VBD_KEYS; do echo "vbd $k $(sysfs_vbd "$k")"; done; }
bracketed() {
    local k a b c bad=0
    sysfs_all >/tmp/before.txt
    sleep 1.2
    fetch && flat || return 1
    sysfs_all >/tmp/after.txt
    for k in $VIF_KEYS $VBD_KEYS; do
        a=$(awk -v k="$k" '$2 == k { print $3 }' /tmp/before.txt)
        c=$(awk -v k="$k" '$2 == k { print $3 }' /tmp/after.txt)
        case " $VIF_KEYS " in
        *" $k "*) b=$(fig vif "$DOMID" "vif$DOMID.0" "$k") ;;
        *) b=$(fig vbd "$DOMID" xvda "$k") ;;
        esac
        awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0 && b + 0 <= c + 0) }' ||
            { say "device $k: sysfs $a, agent $b, sysfs $c"; bad=1; }
    done
    return $bad
}

# netback's own statistics: the agent's between two readings of the real
# `ethtool -S`, every one of the five present on both sides
NETBACK_KEYS="rx_gso_checksum_fixup tx_zerocopy_sent tx_zerocopy_success tx_zerocopy_fail tx_frag_overflow"
ethtool_vif() { ethtool -S "vif$DOMID.0" 2>/dev/null | awk -F: 'NF == 2 { gsub(/ /, ""); print $1, $2 }'; }
netback_bracketed() {
    local k a b c bad=0
    ethtool_vif >/tmp/eth-before.txt
    sleep 1.2
    fetch && flat || return 1
    ethtool_vif >/tmp/eth-after.txt
    for k in $NETBACK_KEYS; do
        a=$(awk -v k="$k" '$1 == k { print $2 }' /tmp/eth-before.txt)
        c=$(awk -v k="$k" '$1 == k { print $2 }' /tmp/eth-after.txt)
        b=$(fig vif "$DOMID" "vif$DOMID.0" "netback_$k")
        say "netback $k: ethtool $a, agent $b, ethtool $c"
        awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0 && b + 0 <= c + 0) }' ||
            bad=1
    done
    return $bad
}

# span_tolerance START: CPU seconds the domains can gain from START (an
# uptime) to now plus one sampling interval, at one per pCPU per second;
# at least 2.5 (xl's one decimal, top's whole seconds)
span_tolerance() {
    awk -v a="$1" -v b="$(up)" -v p="$(awk '$1 == "nr_cpus" { print $3 }' /tmp/xlinfo.txt)" \
        'BEGIN { t = (b - a + 1) * (p > 0 ? p : 1); print (t < 2.5 ? 2.5 : t) }'
}

# xentop_pair NAME "OURS" OPTION...: Debian's xentop and OURS with the same
# options, started together; their outputs compared (xentop_compare.awk)
xentop_pair() {
    local name=$1 ours=$2 x pid rc
    shift 2
    x=$(up)
    xentop "$@" >"/tmp/xentop-$name.txt" 2>"/tmp/xentop-$name.err" &
    pid=$!
    # shellcheck disable=SC2086
    $ours "$@" >"/tmp/ours-$name.txt" 2>"/tmp/ours-$name.err"
    wait $pid
    x=$(span_tolerance "$x")
    say "xentop $*: CPU(sec) tolerance ${x}s; $(wc -l <"/tmp/xentop-$name.txt") lines of xentop's, $(wc -l <"/tmp/ours-$name.txt") of $ours's"
    sed "s/^/XT: xentop $*: /" "/tmp/xentop-$name.txt" "/tmp/xentop-$name.err"
    sed "s/^/XT: $ours $*: /" "/tmp/ours-$name.txt" "/tmp/ours-$name.err"
    # CPU(%): each over its own second, not the same second: a busy 4-vCPU
    # guest under QEMU's TCG swings from one second to the next (seen 57
    # points apart at a host load of 9, 2 points at a load of 7), so the
    # share is checked loosely; CPU(sec) and the counters are the figures
    awk -v tol="$x" -v pct=75 -f /xentop_compare.awk "/tmp/xentop-$name.txt" "/tmp/ours-$name.txt" >"/tmp/xtdiff-$name.txt"
    rc=$?
    sed 's/^/XT: differs: /' "/tmp/xtdiff-$name.txt"
    return $rc
}

xentop_checks() {
    local long=backup-server-01-e2e rc

    xentop_pair plain "xenstats xentop" -b -i 2 -d 1
    res figures-xentop $? "xenstats xentop -b -i 2 -d 1 prints Debian's xentop's lines, headers, columns and figures"
    # a name longer than xentop's 10 bytes for -f (and cut without it)
    xl rename domu1 "$long" || say "xl rename failed"
    xentop_pair extra xenstats-xentop -b -i 2 -d 1 -f -n -x -v -r
    rc=$?
    grep -q "^ *$long " "/tmp/ours-extra.txt" || { say "no $long in -f's output"; rc=1; }
    xl rename "$long" domu1 || say "xl rename back failed"
    res figures-xentop-full $rc "xenstats-xentop -f -n -x -v -r: Debian's xentop's whole names, vCPU, network and disk lines"
}

figures_checks() {
    local mib=1048576 x

    # ---- host: xl info
    xl info >/tmp/xlinfo.txt 2>&1
    xi() { awk -v k="$1" '$1 == k { sub(/^[^:]*: */, ""); print; exit }' /tmp/xlinfo.txt; }
    fetch && flat
    say "xl info: xen_version $(xi xen_version) scheduler $(xi xen_scheduler) nr_cpus $(xi nr_cpus) total $(xi total_memory) free $(xi free_memory)"
    say "agent: xen_version $(fig host xen_version) scheduler $(fig host scheduler) pcpus $(fig host nr_pcpus) total $(fig host memory_total) free $(fig host memory_free)"
    [ "$(fig host xen_version)" = "$(xi xen_version)" ] && [ "$(fig host scheduler)" = "$(xi xen_scheduler)" ] &&
        [ "$(fig host nr_pcpus)" = "$(xi nr_cpus)" ] &&
        [ "$(($(fig host memory_total) / mib))" = "$(xi total_memory)" ] &&
        within "$(($(fig host memory_free) / mib))" "$(xi free_memory)" 8
    res figures-host $? "Xen version, scheduler, pCPUs and memory equal xl info's"

    # ---- domains: xl list (Mem in MiB, Time(s) with one decimal), next to a
    # fetch; CPU seconds within what the domains can use in the span and
    # the sample's age (an interval)
    x=$(up)
    fetch && flat
    xl list >/tmp/xllist.txt
    x=$(span_tolerance "$x")
    say "CPU seconds tolerance: ${x}s"
    ok=0
    for d in 0 "$DOMID"; do
        line=$(awk -v d="$d" '$2 == d' /tmp/xllist.txt)
        mem=$(echo "$line" | awk '{ print $3 }')
        vcpus=$(echo "$line" | awk '{ print $4 }')
        cpu=$(echo "$line" | awk '{ print $6 }')
        say "xl list domain $d: mem $mem vcpus $vcpus time $cpu; agent: memory $(fig dom "$d" memory) vcpus_online $(fig dom "$d" vcpus_online) cpu_time $(fig dom "$d" cpu_time)"
        [ "$(($(fig dom "$d" memory) / mib))" = "$mem" ] && [ "$(fig dom "$d" vcpus_online)" = "$vcpus" ] &&
            within "$(fig dom "$d" cpu_time)" "$cpu" "$x" || ok=1
    done
    res figures-xl-list $ok "memory, online vCPUs and CPU seconds (within one sample) equal xl list's"

    # ---- xentop: Debian's own and the drop-in (xenstats xentop, the
    # xenstats-xentop link), the same options at the same time, compared
    # line for line by /xentop_compare.awk: the same lines per round, the
    # headers byte for byte, the same column boundaries and names in the
    # same order, each figure within what the interval can change
    xentop_checks

    # ---- devices: equal to sysfs within a sample, before and after traffic
    bracketed
    res figures-devices-idle $? "vif and vbd counters equal dom0's sysfs (between two readings around the sample)"
    rx0=$(sysfs_vif rx_bytes) wr0=$(sysfs_vbd wr_sect)
    # the agent keeps these files open and reads them with pread() at
    # offset 0: each must give its current value, the same as a fresh open
    local files="" k
    for k in $VBD_KEYS; do files="$files /sys/bus/xen-backend/devices/vbd-$DOMID-51712/statistics/$k"; done
    for k in $VIF_KEYS; do files="$files /sys/class/net/vif$DOMID.0/statistics/$k"; done
    rm -f /tmp/pread.stop
    xen_e2e pread-watch /tmp/pread.stop $files >/tmp/pread.txt 2>&1 &
    local pread_pid=$!
    sleep 1
    xenstore-write /local/domain/$DOMID/data/phase traffic
    ping -c 10 -s 1000 10.99.0.2 >/tmp/ping.txt 2>&1
    say "ping: $(tail -2 /tmp/ping.txt | tr '\n' ' ')"
    i=0
    while [ -z "$(xenstore-read /local/domain/$DOMID/data/traffic-done 2>/dev/null)" ] && [ $i -lt 120 ]; do
        sleep 1
        i=$((i + 1))
    done
    sleep 2
    say "after traffic: vif rx_bytes $rx0 -> $(sysfs_vif rx_bytes), vbd wr_sect $wr0 -> $(sysfs_vbd wr_sect)"
    retry 5 sh -c "[ \"\$(awk '\$1 == \"vbd\" && \$4 == \"wr_sect\" { print \$5 }' /tmp/flat.txt)\" -ge $((wr0 + 16384)) ]" &&
        retry 5 sh -c "[ \"\$(awk '\$1 == \"vif\" && \$4 == \"rx_bytes\" { print \$5 }' /tmp/flat.txt)\" -gt $((rx0 + 10000)) ]" &&
        bracketed
    res figures-devices-traffic $? "the agent's counters moved with 8 MiB written and pings, and equal sysfs"
    touch /tmp/pread.stop
    wait $pread_pid
    x=$?
    sed 's/^/XT: pread: /' /tmp/pread.txt
    # FILE FIRST A B C: A <= B <= C (the kept-open reads bracket the fresh
    # one), and the counters the traffic moves moved while the file was open
    awk -v rc="$x" 'BEGIN { bad = rc != 0 } NF == 5 { n++
            if (!($3 <= $4 && $4 <= $5)) { print "not fresh: " $0; bad = 1 }
            if ($1 ~ /(rd_req|wr_req|rd_sect|wr_sect|rx_bytes|tx_bytes|rx_packets|tx_packets)$/ && !($3 > $2)) { print "did not move: " $0; bad = 1 } }
        END { exit bad || n != 13 }' /tmp/pread.txt >/tmp/pread-bad.txt
    x=$?
    sed 's/^/XT: pread: /' /tmp/pread-bad.txt
    res pread-fresh $x "blkback's and netback's sysfs counters kept open give pread() at offset 0 their current value"
    netback_bracketed
    res figures-netback $? "netback's own statistics equal ethtool -S's (between two readings around the sample)"

    # ---- pause, unpause, mem-set
    xl pause "$DOMID"
    retry 5 sh -c "grep -q '^dom $DOMID state .*paused' /tmp/flat.txt"
    x=$?
    xl unpause "$DOMID"
    [ $x = 0 ] && retry 5 sh -c "! grep -q '^dom $DOMID state .*paused' /tmp/flat.txt"
    res figures-pause $? "xl pause shows paused, xl unpause shows it no more"
    xl mem-set "$DOMID" 160m 2>/tmp/mem-set.err
    x=$?
    sed 's/^/XT: xl mem-set: /' /tmp/mem-set.err
    # Debian 12's arm64 xl (4.17.7) aborts here on an assertion in libxl
    # (libxl_defbool_val) and the target stays as it was: a failure of
    # Xen's tool, not of xenstats, so on Arm that abort alone is shown and
    # not counted (any other failure of xl, or on x86, fails the check)
    if [ $x = 134 ] && [ "$(uname -m)" = aarch64 ] && grep -q libxl_defbool_val /tmp/mem-set.err; then
        say "SKIP figures-mem-set: xl mem-set itself aborted on this arm64 dom0 (above); nothing to compare"
    else
        [ $x = 0 ] && retry 12 sh -c "grep -q '^dom $DOMID memory_target $((160 * mib))\$' /tmp/flat.txt"
        res figures-mem-set $? "xl mem-set 160m moves the balloon target ($(fig dom "$DOMID" memory_target)) and then memory ($(fig dom "$DOMID" memory))"
    fi
}

# The agent's CPU against Debian's xentop over the same domains for 60 s,
# both sampling every second (docs/collector.md): /proc's user and system
# ticks of each, from xentop's start (its set-up counts) and over the same
# span for the agent, which runs on.  Uses the caller's $AGENT.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
# where the agent's ticks went: per thread (its name, ticks, wake-ups),
# and the PV sets' errors (a flooding provider's unrequested events)
threads() {
    local t
    for t in /proc/"$1"/task/*; do
        echo "${t##*/} $(cat "$t/comm") $(awk '{ print $14 + $15 }' "$t/stat")" \
            "$(awk '/ctxt_switches/ { n += $2 } END { print n }' "$t/status")"
    done 2>/dev/null
}
set_errors() { awk '/^xenstats_pv_set_errors_total/ { print $1, $2 }' /tmp/metrics.txt; }
agent_against_xentop() {
    local a0 a1 x1 xt
    fetch && set_errors >/tmp/errors0.txt
    threads "$AGENT" >/tmp/threads0.txt
    xentop -b -d 1 -i 65 >/dev/null 2>&1 &
    xt=$!
    a0=$(ticks "$AGENT")
    sleep 60
    a1=$(ticks "$AGENT")
    x1=$(ticks "$xt")
    threads "$AGENT" >/tmp/threads1.txt
    fetch && set_errors >/tmp/errors1.txt
    kill "$xt" 2>/dev/null
    wait "$xt" 2>/dev/null
    awk 'NR == FNR { t[$1] = $3; w[$1] = $4; next }
         { printf "XT: BENCH agent thread %s (%s): %d ticks, %d wake-ups in 60 s\n", $1, $2, $3 - t[$1], $4 - w[$1] }' \
        /tmp/threads0.txt /tmp/threads1.txt
    awk 'NR == FNR { e[$1] = $2; next } $2 - e[$1] > 0 { printf "XT: BENCH in 60 s: %s +%d\n", $1, $2 - e[$1] }' \
        /tmp/errors0.txt /tmp/errors1.txt
    say "BENCH agent-vs-xentop 60s: agent $((a1 - a0)) ticks, xentop -b -d 1 $x1 ticks ($(getconf CLK_TCK 2>/dev/null || echo 100)/s): ratio $(awk -v a="$((a1 - a0))" -v x="$x1" 'BEGIN { if (x > 0) printf "%.2fx", a / x; else print "n/a" }') (goal <= 1x)"
}
