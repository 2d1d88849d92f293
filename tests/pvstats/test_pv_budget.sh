#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Three guests that each keep 225 malformed sets and change them 50 times a
# second, beside a healthy one: each hostile domain is held to its budgets
# (sets kept, xenstore reads, rescans, log lines), marked throttled, and its
# log lines are rate-limited with a count of what was dropped; the healthy
# guest is sampled every round and not marked.  (Speed is bench_hostile.py's.)
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}" "${PV_HOSTILE:?}"

start_emu -D name=good,vcpus=1 -D name=evil1,vcpus=1 -D name=evil2,vcpus=1 -D name=evil3,vcpus=1
start_agent # 500 ms interval
curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up"
XENSTATS_EMU_DOMID=1 "$PV_TEST_PROVIDER" --provider Healthy --count 32 >/dev/null 2>&1 &
for d in 2 3 4; do
    XENSTATS_EMU_DOMID=$d "$PV_HOSTILE" storm 225 50 >"$XENSTATS_TEST_TMP/storm$d.out" 2>&1 &
done
for d in 2 3 4; do
    for _ in $(seq 1 100); do grep -q published "$XENSTATS_TEST_TMP/storm$d.out" && break; sleep 0.1; done
done
sleep 2 # the first listings and rejections

python3 - "$URL" "$XENSTATS_TEST_TMP/agent.log" <<'PY' || fail "budgets"
import json, sys, time, urllib.request
url, log = sys.argv[1], sys.argv[2]
def snap():
    return json.load(urllib.request.urlopen(url + "/api/v1/snapshot", timeout=5))
def doms(s):
    return {d["domid"]: d for d in s["domains"]}
a, t0 = doms(snap()), time.monotonic()
log0 = open(log).read().count("\n")
time.sleep(6)
b, t1 = doms(snap()), time.monotonic()
w = t1 - t0
for d in (2, 3, 4):
    x, y = a[d]["pv_budget"], b[d]["pv_budget"]
    reads = y["xenstore_reads"] - x["xenstore_reads"]
    rescans = y["rescans"] - x["rescans"]
    print(f"domain {d}: {reads} reads and {rescans} rescans in {w:.1f} s; kept {y['sets_rejected']} rejected, "
          f"ignored {y['sets_ignored']}, {y['log_suppressed']} log lines dropped")
    assert y["throttled"] is True, y
    assert y["sets_rejected"] <= 32 and y["sets_ignored"] >= 225 - 32, y
    # 128 reads a second, plus a burst of 512 and one scan's share
    assert reads <= 128 * w + 512 + 128, f"domain {d}: {reads} reads in {w:.1f} s"
    assert rescans <= 10 * w + 1, f"domain {d}: {rescans} rescans in {w:.1f} s"
    assert y["budget_exceeded"] > x["budget_exceeded"], y
    assert y["log_suppressed"] > 0, y
assert b[1]["pv_budget"]["throttled"] is False, b[1]["pv_budget"]
assert b[1]["pv_budget"]["budget_exceeded"] == 0, b[1]["pv_budget"]
h0 = next(s for s in a[1]["pv_sets"] if s["provider"] == "Healthy")
h1 = next(s for s in b[1]["pv_sets"] if s["provider"] == "Healthy")
assert h1["state"] == "active", h1
assert h1["samples"] - h0["samples"] >= int(w / 0.5) - 2, (h0["samples"], h1["samples"])
# log lines: each hostile domain gets a burst of 32, then 1 a second
lines = open(log).read().splitlines()
for d in (2, 3, 4):
    n = sum(f"domain {d}:" in l for l in lines)
    assert n <= 32 + 1 * (time.monotonic() - t0 + 12) + 2, f"domain {d}: {n} log lines"
    assert any(f"domain {d}:" in l and "dropped by its log budget" in l for l in lines) or \
        b[d]["pv_budget"]["log_suppressed"] > 0, f"domain {d}: no drop reported"
print(f"healthy: {h1['samples'] - h0['samples']} samples in {w:.1f} s")
PY
pass "three hostile guests held to their budgets and marked throttled; the healthy guest sampled every round"

curl -sf "$URL/metrics" >"$XENSTATS_TEST_TMP/metrics.txt"
promtool check metrics <"$XENSTATS_TEST_TMP/metrics.txt" || fail "promtool"
grep -q '^xenstats_pv_domain_throttled{domid="2",domain="evil1"} 1$' "$XENSTATS_TEST_TMP/metrics.txt" || fail "evil1 not marked"
grep -q '^xenstats_pv_domain_throttled{domid="1",domain="good"} 0$' "$XENSTATS_TEST_TMP/metrics.txt" || fail "good marked"
pass "/metrics marks the hostile domains throttled and the healthy one not"

grep -q "dropped by its log budget" "$XENSTATS_TEST_TMP/agent.log" || fail "no line says how many were dropped"
grep -q "over its .* budget: throttled" "$XENSTATS_TEST_TMP/agent.log" || fail "throttling not logged"
pass "log lines rate-limited, with a count of what was dropped"
