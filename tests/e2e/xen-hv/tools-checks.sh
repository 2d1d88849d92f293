# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# Sourced by dom0-init.sh with xt_tools on the kernel command line (run.sh
# TOOLS_SERIES=1): the tools series (xen/patches/tools) in dom0, the stock
# tools of the same tree in /opt/stock (xentop, libxenstat).  Three domUs
# whose runstates are known (cpu: vCPU 1 spins; idle; offl: 2 of 4 vCPUs
# online) and xt_fill=N (default 5) more idle ones, 8 domUs of 4 vCPUs in
# all by default, then:
#   - the patched `xentop -b -v` shares against what each domU does;
#   - libxenstat against XEN_DOMCTL_getvcpuinfo read before and after its
#     call (xenstat-check compare), and that check failing on a stale
#     copy of a table (compare-stale);
#   - without -v, patched and stock xentop print the same bytes;
#   - the stock xentop runs (stock tools, patched hypervisor);
#   - with -v, the patched output less its new lines is the stock one;
#   - the review of v1 (xenstat-check refuse, inactive, paused-vcpu,
#     lifecycle), and, with v1's libxenstat in /opt/v1/lib (run.sh
#     TOOLS_V1_LIB=DIR), that each of those fails with it (DOM0_EXTRA=
#     xt_review_only: those alone, with one idle domU);
#   - time per xenstat_get_node(), patched and stock library, same boot.
# With xt_stock too (a hypervisor without the tables): the patched tools
# fall back, their -v output has no shares, and nothing is printed on
# stderr.

# shares FILE: "domain vcpu running runnable blocked offline" for each
# "VCPU n runstate shares:" line of the last iteration of `xentop -b -v`
# in FILE (the domain is that of the last line with a state column)
shares() {
    awk '/NAME  STATE/ {n++} {line[NR] = $0; it[NR] = n} END {
        for (i = 1; i <= NR; i++) {
            if (it[i] != n) continue
            $0 = line[i]
            if ($0 ~ /NAME  STATE/) continue
            if ($2 ~ /^[-a-z][-a-z][-a-z][-a-z][-a-z][-a-z]$/) { dom = $1; continue }
            if ($1 != "VCPU" || $3 != "runstate" || $4 != "shares:") continue
            v = $2; r = q = b = o = "-"
            for (f = 5; f <= NF; f++) {
                if ($f == "running") r = $(f + 1)
                if ($f == "runnable") q = $(f + 1)
                if ($f == "blocked") b = $(f + 1)
                if ($f == "offline") o = $(f + 1)
            }
            gsub("%", "", r); gsub("%", "", q); gsub("%", "", b); gsub("%", "", o)
            print dom, v, r, q, b, o
        }
    }' "$1"
}

# mask FILE: xentop -b [-v] output less the figures of Domain-0 that move
# between two runs (its CPU(sec) and VCPUs(sec) seconds) and less the
# lines the series adds
mask() {
    awk '$2 ~ /^[-a-z][-a-z][-a-z][-a-z][-a-z][-a-z]$/ { dom = $1 }
         dom == "Domain-0" && $2 ~ /^[-a-z]+$/ { $3 = "X" }
         dom == "Domain-0" && ($1 == "VCPUs(sec):" || $0 ~ /^        /) { gsub(/[0-9]+s/, "Xs") }
         $1 == "VCPU" && $3 == "runstate" && $4 == "shares:" { next }
         { print }' "$1"
}

# review_checks LIBDIR TAG: the checks of the review of v1 (xenstat-check),
# with the libxenstat of LIBDIR ("" for the installed one); with TAG
# "v1", each must fail
review_checks() {
    idle=$(xl domid idle)
    for c in "refuse-self:refuse 0 EOPNOTSUPP" "refuse-flask-self:refuse 0 EPERM" \
        "refuse-flask-domu:refuse $idle EACCES" "inactive-counter:inactive $idle" \
        "paused-vcpu:paused-vcpu $idle" "lifecycle:lifecycle"; do
        n=${c%%:*}
        # shellcheck disable=SC2086
        LD_LIBRARY_PATH=${1:+$1:}$LD_LIBRARY_PATH timeout 180 xenstat-check ${c#*:} >/tmp/rv.out 2>&1
        rc=$?
        sed "s/^/XT: tools: $2 $n: /" /tmp/rv.out
        if [ "$2" = v1 ]; then
            # v1 kept a domU's refusal per domain once a table was mapped
            [ "$n" = refuse-flask-domu ] && continue
            [ "$rc" != 0 ]
            res "tools-v1-fails-$n" $? "the check fails with v1's libxenstat (rc=$rc)"
        else
            res "tools-$n" $rc "xenstat-check ${c#*:}"
        fi
    done
}

# tools_domus: the domUs of the checks (sets FILLS, V, H)
tools_domus() {
    export LD_LIBRARY_PATH=/usr/lib:$LD_LIBRARY_PATH
    # xt_fill=N idle domUs more (default 5: 8 domUs in all); the spinning
    # one last, so that the others boot on both pCPUs
    FILL=$(arg xt_fill)
    # xt_vcpus=N vCPUs a domU (default 4; offl has the upper half offline)
    V=$(arg xt_vcpus)
    V=${V:-4}
    H=$((V / 2))
    FILLS=
    n=1
    while [ "$n" -le "${FILL:-5}" ]; do FILLS="$FILLS fill$n"; n=$((n + 1)); done
    # the fill domUs are there to be read: all created at once (one after
    # the other, each xl create waited behind the boots of the ones
    # before: 136-142 s each for 8 domUs of 4 vCPUs at load 15).  Not with
    # less memory: the PV builder holds Debian's decompressed kernel
    # (0x3200 pages) in the domain, and at 64 MiB xl create fails
    T1=$(up)
    create idle $V idle
    create offl $H idle $V
    P=
    for d in $FILLS; do create "$d" "$V" idle & P="$P $!"; done
    # shellcheck disable=SC2086
    [ -z "$P" ] || wait $P   # not the agent dom0-init.sh may have left running
    create cpu $V busy
    for n in idle:$V:idle offl:$H:idle:$V $(for d in $FILLS; do printf '%s:%s:idle ' $d $V; done) cpu:$V:busy; do
        IFS=: read -r nm vc ex mx <<EOF
$n
EOF
        wait_alive "$nm" "$vc" "$ex" "$mx" || true
    done
    say "tools: $((3 + $(echo $FILLS | wc -w))) domUs of $V vCPUs created and up in $(awk "BEGIN{print $(up)-$T1}") s (load in dom0: $(cut -d' ' -f1-3 /proc/loadavg))"
    xl list 2>&1 | sed 's/^/XT: tools: xl list: /'
    sleep 5   # the busy loop and the guests settle
}

# tools_timing N: time per xenstat_get_node(), XENSTAT_VCPU (what the
# series changes) and XENSTAT_ALL (what xentop asks), both libraries,
# alternating which goes first
tools_timing() {
    for m in vtime time; do
        timeout 300 xenstat-time $m "$1" 2>&1 | sed "s/^/XT: tools: patched library: /"
        LD_LIBRARY_PATH=/opt/stock/lib timeout 300 xenstat-time $m "$1" 2>&1 | sed "s/^/XT: tools: stock library: /"
        LD_LIBRARY_PATH=/opt/stock/lib timeout 300 xenstat-time $m "$1" 2>&1 | sed "s/^/XT: tools: stock library: /"
        timeout 300 xenstat-time $m "$1" 2>&1 | sed "s/^/XT: tools: patched library: /"
    done
}

tools_checks() {
    # xt_review_only (DOM0_EXTRA): one idle domU, then the review's checks
    if grep -qw xt_review_only /proc/cmdline; then
        export LD_LIBRARY_PATH=/usr/lib:$LD_LIBRARY_PATH
        create idle 2 idle
        wait_alive idle 2 idle || true
        review_checks "" v2
        [ -d /opt/v1/lib ] && review_checks /opt/v1/lib v1
        return 0
    fi
    tools_domus
    if grep -qw xt_time_only /proc/cmdline; then
        N=$(arg xt_time_calls)
        tools_timing "${N:-10}"
        return 0
    fi

    if grep -qw xt_stock /proc/cmdline; then
        # patched tools, stock hypervisor: today's path, no message
        timeout 60 xentop -b -v -d 1 -i 2 >/tmp/xt.out 2>/tmp/xt.err
        rc=$?
        sed 's/^/XT: tools: xentop -v (stock hypervisor): /' /tmp/xt.out | tail -25
        n=$(grep -c 'running' /tmp/xt.out)
        [ "$rc" = 0 ] && [ "$n" = 0 ] && [ ! -s /tmp/xt.err ] && grep -q '^VCPUs(sec):' /tmp/xt.out
        res tools-fallback $? "patched xentop on a hypervisor without tables: rc=$rc, $n share lines, $(wc -c </tmp/xt.err) bytes on stderr"
        timeout 60 xenstat-check compare 20 >/tmp/xc.out 2>&1
        rc=$?
        sed 's/^/XT: tools: compare (fallback): /' /tmp/xc.out | tail -12
        grep -q ', 0 domains read from their table' /tmp/xc.out
        res tools-fallback-compare $(( rc | $? )) "libxenstat = getvcpuinfo without the tables"
        for m in time vtime; do
            timeout 120 xenstat-time $m 5 2>&1 | sed 's/^/XT: tools: patched library, stock hypervisor: /'
            LD_LIBRARY_PATH=/opt/stock/lib timeout 120 xenstat-time $m 5 2>&1 |
                sed 's/^/XT: tools: stock library, stock hypervisor: /'
        done
        return 0
    fi

    # 1. the patched xentop's shares over a 3 s interval
    timeout 60 xentop -b -v -d 3 -i 2 >/tmp/xt.out 2>/tmp/xt.err
    rc=$?
    sed 's/^/XT: tools: xentop -b -v: /' /tmp/xt.out | tail -60
    shares /tmp/xt.out >/tmp/shares.txt
    sed 's/^/XT: tools: shares: /' /tmp/shares.txt
    [ "$rc" = 0 ] && [ ! -s /tmp/xt.err ]
    res tools-xentop-v $? "rc=$rc, $(wc -l </tmp/shares.txt) vCPU lines with shares, $(wc -c </tmp/xt.err) bytes on stderr"
    # every line adds up to 100 (each share is rounded to 0.1)
    awk '{ s = $3 + $4 + $5 + $6; if (s < 99.7 || s > 100.3) { print "XT: tools: FAIL sum", $0, s; bad = 1 } } END { exit bad }' /tmp/shares.txt
    res tools-shares-sum $? "each vCPU's four shares add up to 100 +- 0.3"
    # what the domUs do, tolerance 10 points (QEMU TCG on 2 busy cores)
    awk '$1 == "cpu" && $2 == 1 { found = 1; if ($3 + $4 < 90) bad = 1 } END { exit bad || !found }' /tmp/shares.txt
    res tools-share-busy $? "cpu vCPU 1 (spinning) running + runnable >= 90%: $(awk '$1 == "cpu" && $2 == 1' /tmp/shares.txt)"
    awk -v v=$V '$1 == "idle" { found++; if ($5 < 90) bad = 1 } END { exit bad || found != v }' /tmp/shares.txt
    res tools-share-idle $? "idle: $V vCPUs blocked >= 90%: $(awk '$1 == "idle" {printf "%s ", $5}' /tmp/shares.txt)"
    awk -v h=$H -v v=$V '$1 == "offl" && $2 >= h { found++; if ($6 != "100.0") bad = 1 } $1 == "offl" && $2 < h && $6 + 0 > 0 { bad = 1 }
         END { exit bad || found != v - h }' /tmp/shares.txt
    res tools-share-offline $? "offl: vCPUs $H and up offline 100%, the others not: $(awk '$1 == "offl" {printf "v%s %s ", $2, $6}' /tmp/shares.txt)"
    n=$(awk '$1 == "Domain-0"' /tmp/shares.txt | wc -l)
    [ "$n" -ge 1 ]
    res tools-dom0-vcpus $? "Domain-0's own vCPUs have shares ($n lines)"

    # 1b. next to the project's own reader, when dom0 has xenstats built
    # against this tree (run.sh XENSTATS=...): its per-domain shares over
    # an interval of the same length, right after; each domain's mean of
    # the xentop shares of its vCPUs must be within 10 points
    if [ -x /usr/bin/xenstats ]; then
        timeout 60 xenstats top --batch --direct --delay 3s --iterations 2 >/tmp/xst.out 2>&1
        rc=$?
        sed 's/^/XT: tools: xenstats top --batch: /' /tmp/xst.out | tail -14
        for d in cpu idle offl; do
            timeout 60 xenstats vcpu -i 3s -c 1 "$(xl domid $d)" 2>&1 | sed "s/^/XT: tools: xenstats vcpu $d: /"
        done
        awk '$1 == "DOMID" { for (i = 1; i <= NF; i++) col[$i] = i; next }
             col["RUN%"] && NF >= col["OFF%"] { print $col["NAME"], $col["RUN%"], $col["WAIT%"], $col["BLOCK%"], $col["OFF%"] }' \
            /tmp/xst.out | sed 's/%//g' >/tmp/xst.txt
        awk 'NR == FNR { n[$1]++; r[$1] += $3; q[$1] += $4; b[$1] += $5; o[$1] += $6; next }
             ($1 in n) { last[$1] = $0 }
             END {
                for (d in last) {
                    split(last[d], f, " ")
                    dr = r[d] / n[d] - f[2]; dq = q[d] / n[d] - f[3]; db = b[d] / n[d] - f[4]; do_ = o[d] / n[d] - f[5]
                    printf "XT: tools: %s xentop mean run %.1f wait %.1f block %.1f off %.1f | xenstats top %s %s %s %s\n",
                        d, r[d] / n[d], q[d] / n[d], b[d] / n[d], o[d] / n[d], f[2], f[3], f[4], f[5]
                    if (d !~ /^(cpu|idle|offl)$/) continue
                    m++
                    if ((dr > 10 || dr < -10 || dq > 10 || dq < -10 || db > 10 || db < -10 || do_ > 10 || do_ < -10)) bad = 1
                }
                exit bad || m < 3
             }' /tmp/shares.txt /tmp/xst.txt
        res tools-vs-xenstats-top $(( rc | $? )) "per-domain shares: xentop -v's mean over the vCPUs vs xenstats top, 10 points"
    fi

    # 2. libxenstat against XEN_DOMCTL_getvcpuinfo, read before and after
    # its call (one read after it measured the time between the two reads
    # too: 300-500 ms under TCG at load 19)
    timeout 60 xenstat-check compare 20 >/tmp/xc.out 2>&1
    rc=$?
    sed 's/^/XT: tools: compare: /' /tmp/xc.out
    grep -q ' 0 domains read from their table' /tmp/xc.out && rc=1
    res tools-vs-getvcpuinfo $rc "running time of every vCPU between getvcpuinfo's before and after the call (+-20 ms), online flag"
    # the same check fails on a library reading a table one second old
    timeout 60 xenstat-check compare-stale "$(xl domid cpu)" 20 >/tmp/xcs.out 2>&1
    rc=$?
    sed 's/^/XT: tools: compare-stale: /' /tmp/xcs.out
    [ "$rc" = 1 ]
    res tools-vs-getvcpuinfo-stale $? "the same check on a copy of cpu's table one second old fails (rc=$rc)"

    # 2b. what the review of v1 found; each must fail with v1's library
    review_checks "" v2
    [ -d /opt/v1/lib ] && review_checks /opt/v1/lib v1

    # 3. without -v: the same bytes from the patched and the stock xentop,
    # the domUs paused so that no figure moves between the two runs (but
    # Domain-0's CPU seconds, masked)
    for d in cpu idle offl $FILLS; do xl pause $d; done
    timeout 30 xentop -b -i 1 >/tmp/new.out 2>&1
    LD_LIBRARY_PATH=/opt/stock/lib timeout 30 /opt/stock/xentop -b -i 1 >/tmp/old.out 2>&1
    rc=$?
    timeout 30 xentop -b -v -i 1 >/tmp/newv.out 2>&1
    LD_LIBRARY_PATH=/opt/stock/lib timeout 30 /opt/stock/xentop -b -v -i 1 >/tmp/oldv.out 2>&1
    for d in cpu idle offl $FILLS; do xl unpause $d; done
    for f in new old newv oldv; do mask /tmp/$f.out >/tmp/$f.masked; done
    sed 's/^/XT: tools: stock xentop -b: /' /tmp/old.out
    cmp /tmp/new.masked /tmp/old.masked >/dev/null
    res tools-batch-identical $? "xentop -b without -v: patched and stock outputs the same ($(wc -c </tmp/new.out) and $(wc -c </tmp/old.out) bytes; Domain-0's CPU(sec) masked)"
    cmp /tmp/new.out /tmp/old.out >/dev/null && say "tools: the unmasked outputs are identical too"
    n=$(grep -c '^VCPU .* runstate shares:' /tmp/newv.out)
    sed 's/^/XT: tools: patched xentop -b -v (paused): /' /tmp/newv.out | tail -20
    cmp /tmp/newv.masked /tmp/oldv.masked >/dev/null && [ "$n" -gt 0 ]
    res tools-batch-v-layout $? "xentop -b -v: the patched output less its $n share lines is the stock output (Domain-0's seconds masked)"
    cmp /tmp/newv.masked /tmp/oldv.masked >/dev/null || diff /tmp/oldv.masked /tmp/newv.masked | head -20 | sed 's/^/XT: tools: -v diff: /'

    # 4. the stock tools against the patched hypervisor
    LD_LIBRARY_PATH=/opt/stock/lib timeout 30 /opt/stock/xentop -b -v -d 1 -i 2 >/tmp/old.out 2>&1
    rc=$?
    sed 's/^/XT: tools: stock xentop -b -v: /' /tmp/old.out | tail -30
    [ "$rc" = 0 ] && [ "$(grep -c running /tmp/old.out)" = 0 ] && grep -q '^VCPUs(sec):' /tmp/old.out
    res tools-stock-on-patched $? "stock xentop -v on the patched hypervisor: rc=$rc, today's vCPU lines"

    # 5. time spent in libxenstat per xentop iteration, patched and stock
    # (xt_time_calls=N calls each, default 10: under QEMU TCG on a loaded
    # host one call can take seconds)
    N=$(arg xt_time_calls)
    tools_timing "${N:-10}"
    T0=$(up)
    timeout 120 xentop -b -d 1 -i 10 >/dev/null 2>&1
    say "tools: patched xentop -b -d 1 -i 10: $(awk "BEGIN{print $(up)-$T0}") s"
    T0=$(up)
    LD_LIBRARY_PATH=/opt/stock/lib timeout 120 /opt/stock/xentop -b -d 1 -i 10 >/dev/null 2>&1
    say "tools: stock xentop -b -d 1 -i 10: $(awk "BEGIN{print $(up)-$T0}") s"
}
