#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Per-domain caps on live sets and mapped pages (issue 29): with xenstored's
# node quota raised (the emulator's --xs-quota-nodes), one guest publishes
# 120 sets; an agent with --pv-max-sets 100 holds 100 live, refuses the
# rest, marks the domain throttled and says so in the budget figures;
# --pv-max-pages 40 holds it to 40 pages; the default caps (256 sets, 1024
# pages) are exported; a guest beside it is sampled all along.  (The
# emulator shares at most 256 regions per domain, two a set: 128 sets is
# as far as one emulated guest goes, short of the default cap.)
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}" "${XENSTATS_PUBLISH:?}"
T=$XENSTATS_TEST_TMP

start_emu --xs-quota-nodes 50000 -D name=greedy,vcpus=1 -D name=good,vcpus=1
start_agent --pv-max-sets 100
curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up: $(cat "$T/agent.log")"
XENSTATS_EMU_DOMID=2 "$PV_TEST_PROVIDER" --provider Healthy --count 4 >/dev/null 2>&1 &

# two providers of 60 one-page sets each
for i in $(seq 1 60); do printf '[s%02d]\nu64 value %d\n' "$i" "$i"; done >"$T/64.custom"
for p in 1 2; do
    XENSTATS_EMU_DOMID=1 "$XENSTATS_PUBLISH" --provider "many$p" --sets none --custom "$T/64.custom" \
        >"$T/pub$p.log" 2>&1 &
done

# budget DOMID: its pv_budget as JSON
budget() {
    curl -sf "$URL/api/v1/snapshot" | python3 -c '
import json, sys
d = next(d for d in json.load(sys.stdin)["domains"] if d["domid"] == int(sys.argv[1]))
print(json.dumps(d["pv_budget"]))' "$1"
}
# wait_budget DOMID PYTHON-CONDITION-ON-b: until it holds, 60 s
wait_budget() {
    python3 - "$URL" "$1" "$2" <<'PY' || fail "domain $1: $(budget "$1") never met $2"
import json, sys, time, urllib.request
url, domid, cond = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t0 = time.monotonic()
while time.monotonic() - t0 < 60:
    try:
        s = json.load(urllib.request.urlopen(url + "/api/v1/snapshot", timeout=5))
        b = next(d for d in s["domains"] if d["domid"] == domid)["pv_budget"]
        if eval(cond):
            sys.exit(0)
    except (OSError, StopIteration, KeyError):
        pass
    time.sleep(0.2)
sys.exit(1)
PY
}
wait_budget 1 'b["live_sets"] == 100 and b["sets_capped"] >= 1'
sleep 2
b=$(budget 1)
python3 -c '
import json, sys
b = json.loads(sys.argv[1])
assert b["live_sets"] == 100, b
assert b["mapped_pages"] == 100, b
assert b["throttled"] is True, b' "$b" || fail "domain 1: $b"
curl -sf "$URL/metrics" >"$T/metrics.txt"
grep -q '^xenstats_pv_domain_live_sets{domid="1",domain="greedy"} 100$' "$T/metrics.txt" || fail "no live_sets metric"
grep -q '^xenstats_pv_domain_mapped_pages{domid="1",domain="greedy"} 100$' "$T/metrics.txt" || fail "no mapped_pages"
grep -q '^xenstats_agent_pv_max_live_sets 100$' "$T/metrics.txt" || fail "no max_live_sets"
grep -q '^xenstats_pv_domain_sets_capped{domid="1",domain="greedy"} [1-9]' "$T/metrics.txt" || fail "no sets_capped"
grep -q "refused: the domain has 100 live sets, its cap" "$T/agent.log" || fail "no log line: $(tail -3 "$T/agent.log")"
wait_budget 2 'b["live_sets"] == 1 and b["throttled"] is False'
pass "120 sets published in one guest, --pv-max-sets 100: 100 live, the rest refused, throttled: $b"

# the defaults: every set live, the caps exported; then fewer pages
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"
start_agent
wait_budget 1 'b["live_sets"] == 120 and b["sets_capped"] == 0'
curl -sf "$URL/metrics" >"$T/metrics.txt"
grep -q '^xenstats_agent_pv_max_live_sets 256$' "$T/metrics.txt" || fail "default max_live_sets"
grep -q '^xenstats_agent_pv_max_mapped_pages 1024$' "$T/metrics.txt" || fail "default max_mapped_pages"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"
start_agent --pv-max-pages 40
wait_budget 1 'b["mapped_pages"] == 40 and b["live_sets"] == 40 and b["sets_capped"] >= 1'
curl -sf "$URL/metrics" | grep -q '^xenstats_agent_pv_max_mapped_pages 40$' || fail "--pv-max-pages not exported"
grep -q "more pages would pass the domain's cap of 40 mapped pages" "$T/agent.log" || fail "no log line"
pass "the default caps exported (256 sets, 1024 pages); --pv-max-pages 40 holds the domain to 40 pages"
expect_fail "--pv-max-sets 0" "--pv-max-sets 0: expected a number" "$XENSTATS" agent --pv-max-sets 0
pass "--pv-max-sets 0 refused"
echo "1..$CHECKS"
