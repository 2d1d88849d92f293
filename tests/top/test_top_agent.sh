#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats top` against the real thing: the emulated host, the agent, and
# the direct mode with no agent.
. "$XENSTATS_SOURCE_ROOT/tests/top/top_lib.sh"

AGENT=
trap 'rc=$?; [ -z "$AGENT" ] || { kill -TERM "$AGENT" 2>/dev/null; wait "$AGENT" 2>/dev/null; }; (exit $rc); cleanup' EXIT

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

# check_shares FILE: every domain with vCPU statistics has shares adding up
# to 100% (within rounding), web is busy, idle is mostly blocked, and half's
# second vCPU is offline all along.
check_shares() {
    awk '$1 ~ /^[0-9]+$/ && $4 != "-" {
             sum = $4 + $5 + $6 + $7
             if (sum < 98 || sum > 102) { print "sum " sum ": " $0; bad = 1 }
             seen[$2] = 1
         }
         $2 == "web" && $4 + $5 < 90 { print "web not busy: " $0; bad = 1 }
         $2 == "idle" && $6 < 80 { print "idle not blocked: " $0; bad = 1 }
         $2 == "half" && ($7 < 49 || $7 > 51) { print "half not half offline: " $0; bad = 1 }
         END { if (!seen["web"] || !seen["idle"] || !seen["half"]) { print "domains missing"; bad = 1 }; exit bad }' "$1"
}

out="$XENSTATS_TEST_TMP/top.txt"
"$XENSTATS" top -b -n 2 -d 500ms --url "$URL" >"$out" 2>"$XENSTATS_TEST_TMP/err" ||
    fail "top from the agent: $(cat "$XENSTATS_TEST_TMP/err")"
check_shares "$out" || fail "shares from the agent: $(cat "$out")"
grep -q '^     0 Domain-0 ' "$out" || fail "Domain-0 listed: $(cat "$out")"
pass "batch from the agent: shares add up per domain"

kill -TERM "$AGENT"
wait "$AGENT" || true
AGENT=
expect_fail "agent gone" "cannot reach the agent at $URL" "$XENSTATS" top -b -n 1 --url "$URL"

# No agent: --direct reads the vCPU statistics and monitors PV stats itself.
# One monitor per set (a set's event channel binds once), so only now, with
# the agent gone, does a guest publish.
"$XENSTATS" pv --toolstack --count 1 1 >/dev/null
XENSTATS_EMU_DOMID=1 "$XENSTATS_BUILD_ROOT/pv-provider" >"$XENSTATS_TEST_TMP/provider.log" 2>&1 &
PROVIDER=$!
trap 'rc=$?; kill -TERM "$PROVIDER" 2>/dev/null; wait "$PROVIDER" 2>/dev/null; (exit $rc); cleanup' EXIT
for _ in $(seq 1 100); do
    grep -q publishing "$XENSTATS_TEST_TMP/provider.log" && break
    sleep 0.05
done
"$XENSTATS" top -b -n 2 -d 500ms --direct >"$out" 2>"$XENSTATS_TEST_TMP/err" ||
    fail "top --direct: $(cat "$XENSTATS_TEST_TMP/err")"
check_shares "$out" || fail "shares in-process: $(cat "$out")"
awk '$2 == "web" && $9 == 1 && $10 == "active" { ok = 1 } END { exit !ok }' "$out" ||
    fail "web's PV stats set in-process: $(cat "$out")"
pass "batch with --direct: the same figures, and the guest's PV stats set, without the agent"
