#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats top` against the real thing: the emulated host, the agent with
# a guest publishing PV stats, the live view in tmux, and the direct mode
# with no agent.
. "$XENSTATS_SOURCE_ROOT/tests/top/top_lib.sh"

AGENT=
PROVIDER=
SESSION="xenstats-top-agent-$$"
export TMUX_TMPDIR="$XENSTATS_TEST_TMP"
stop_provider() {
    [ -n "$PROVIDER" ] || return 0
    kill -TERM "$PROVIDER" 2>/dev/null || true
    wait "$PROVIDER" 2>/dev/null || true
    PROVIDER=
}
stop_agent() {
    [ -n "$AGENT" ] || return 0
    kill -TERM "$AGENT" 2>/dev/null || true
    wait "$AGENT" 2>/dev/null || true
    AGENT=
}
trap 'rc=$?; tmux kill-server 2>/dev/null; stop_provider; stop_agent; (exit $rc); cleanup' EXIT

# start_provider: pv-provider in domain 1, once its `stats` node exists.
start_provider() {
    local log="$XENSTATS_TEST_TMP/provider.log" i
    for i in $(seq 1 50); do
        XENSTATS_EMU_DOMID=1 "$XENSTATS_BUILD_ROOT/pv-provider" >"$log" 2>&1 &
        PROVIDER=$!
        sleep 0.2
        grep -q publishing "$log" && return 0
        # no `stats` node yet: the monitor has not reached the domain
        stop_provider
    done
    fail "the provider did not publish: $(cat "$log")"
}

start_emu -p 2 -D name=web,vcpus=2,workload=cpu -D name=idle,vcpus=1,workload=idle \
    -D name=half,vcpus=2,workload=idle,offline=1
port=$(dead_port)
URL="http://127.0.0.1:$port"
"$XENSTATS" agent --listen "127.0.0.1:$port" --interval 200ms >"$XENSTATS_TEST_TMP/agent.log" 2>&1 &
AGENT=$!
for _ in $(seq 1 100); do
    curl -sf "$URL/healthz" >/dev/null 2>&1 && break
    kill -0 "$AGENT" 2>/dev/null || fail "agent exited: $(cat "$XENSTATS_TEST_TMP/agent.log")"
    sleep 0.1
done
start_provider

# check_shares FILE: every domain with vCPU statistics has shares adding up
# to 100% (within rounding), web is busy and publishes one active set, idle
# is mostly blocked, and half's second vCPU is offline all along.
check_shares() {
    awk '$1 ~ /^DOMID/ { for (i = 1; i <= NF; i++) { h = $i; sub(/\*$/, "", h); c[h] = i }; next }
         { run = $c["RUN%"]; wait = $c["WAIT%"]; blk = $c["BLOCK%"]; off = $c["OFF%"] }
         $1 ~ /^[0-9]+$/ && run != "-" {
             sum = run + wait + blk + off
             if (sum < 98 || sum > 102) { print "sum " sum ": " $0; bad = 1 }
             seen[$2] = 1
         }
         $2 == "web" && run + wait < 90 { print "web not busy: " $0; bad = 1 }
         $2 == "web" && ($c["SETS"] != 1 || $c["WORST"] != "active") { print "web set: " $0; bad = 1 }
         $2 == "idle" && blk < 80 { print "idle not blocked: " $0; bad = 1 }
         $2 == "half" && (off < 49 || off > 51) { print "half not half offline: " $0; bad = 1 }
         END { if (!seen["web"] || !seen["idle"] || !seen["half"]) { print "domains missing"; bad = 1 }; exit bad }' "$1"
}

out="$XENSTATS_TEST_TMP/top.txt"
"$XENSTATS" top -b --iterations 2 -d 500ms --url "$URL" >"$out" 2>"$XENSTATS_TEST_TMP/err" ||
    fail "top from the agent: $(cat "$XENSTATS_TEST_TMP/err")"
check_shares "$out" || fail "shares from the agent: $(cat "$out")"
grep -q '^     0 Domain-0 ' "$out" || fail "Domain-0 listed: $(cat "$out")"
pass "batch from the agent: shares add up per domain, the guest's set is active"

# The live view of the same: web's details show its set and statistics.
tmux new-session -d -s "$SESSION" -x 120 -y 40 \
    "TERM=screen '$XENSTATS' top --url '$URL' --delay 300ms; echo EXITED \$?; sleep 30"
wait_for "DOMID* NAME"
wait_for "     1 web  "
tmux send-keys -t "$SESSION" g j Enter
wait_for "domain 1  name web  vCPUs 2  vCPU statistics: resource"
wait_for "Example #0 / Counters: active"
wait_for "    hostname                         ascii"
tmux send-keys -t "$SESSION" q q
wait_for "EXITED 0"
pass "live view from the agent: drill-down into a publishing guest"

stop_provider
stop_agent
expect_fail "agent gone" "cannot reach the agent at $URL" "$XENSTATS" top -b --iterations 1 --url "$URL"

# No agent: --direct reads the vCPU statistics and monitors PV stats itself.
# One monitor per set (a set's event channel binds once), so the guest
# publishes again only now, with the agent gone.
start_provider
"$XENSTATS" top -b --iterations 2 -d 500ms --direct >"$out" 2>"$XENSTATS_TEST_TMP/err" ||
    fail "top --direct: $(cat "$XENSTATS_TEST_TMP/err")"
check_shares "$out" || fail "shares in-process: $(cat "$out")"
pass "batch with --direct: the same figures, and the guest's PV stats set, without the agent"
