#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The agent with PV stats: guest-chosen names that try to break the
# exposition, hostile providers, promtool, and a real Prometheus server
# reading a published guest statistic back.
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}" "${PV_HOSTILE:?}"

start_emu -D name=web,vcpus=2,workload=cpu -D name=evil,vcpus=1
start_agent
# the agent created the guests' stats nodes: providers can start
weird='Weird "quoted" \ name} # x="1"'
XENSTATS_EMU_DOMID=1 "$PV_TEST_PROVIDER" --provider "$weird" --set 'Set {with} "braces"' --types \
    >"$XENSTATS_TEST_TMP/types.out" 2>&1 &
PIDS=($!)
for sc in name-no-nul flood duplicate-names no-answer healthy ascii-utf8; do
    XENSTATS_EMU_DOMID=2 "$PV_HOSTILE" "$sc" >"$XENSTATS_TEST_TMP/h-$sc.out" 2>&1 &
    PIDS+=($!)
done
for _ in $(seq 1 100); do
    grep -q published "$XENSTATS_TEST_TMP/types.out" 2>/dev/null && break
    sleep 0.1
done
sleep 2.5

curl -sf "$URL/metrics" >"$XENSTATS_TEST_TMP/metrics.txt"
promtool check metrics <"$XENSTATS_TEST_TMP/metrics.txt" || fail "promtool rejects /metrics with hostile names"
curl -sf -H 'Accept: application/openmetrics-text' "$URL/metrics" >"$XENSTATS_TEST_TMP/om.txt"
python3 - "$XENSTATS_TEST_TMP" "$weird" <<'PY' || fail "exposition with hostile names"
import re, sys
d, weird = sys.argv[1], sys.argv[2]
text = open(f"{d}/metrics.txt").read()
esc = weird.replace("\\", "\\\\").replace('"', '\\"')
# every sample line parses: name{labels} value, with escaped label values
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$')
families = set()
for line in text.splitlines():
    if line.startswith("#"):
        families.add(line.split()[2])
        continue
    m = sample.match(line)
    assert m, f"unparsable line: {line!r}"
    # every sample belongs to one of our declared families
    assert m.group(1) in families, line
    assert m.group(1).startswith("xenstats_"), line
def value(stat):
    pat = f'xenstats_pv_value{{domid="1",domain="web",provider="{esc}",set="Set {{with}} \\"braces\\"",statistic="{stat}",'
    hits = [l for l in text.splitlines() if l.startswith(pat)]
    assert len(hits) == 1, (stat, hits[:2])
    return hits[0].rsplit(" ", 1)[1]
assert value("neg") == "-42"
assert value("min") == "-9223372036854775808"
assert value("max") == "18446744073709551615"
assert value("quarter") == "3.25"
assert value("nan") == "NaN" and value("inf") == "+Inf" and value("ninf") == "-Inf"
assert f'xenstats_pv_text_info{{domid="1",domain="web",provider="{esc}"' in text
assert 'statistic="text",value="hello, world!"} 1' in text
# the states of hostile sets are visible
for sc, state in [("name-no-nul", "rejected"), ("duplicate-names", "rejected"), ("flood", "active"),
                  ("no-answer", "timed-out"), ("healthy", "active")]:
    line = f'xenstats_pv_set_state{{domid="2",domain="evil",provider="Hostile",set="{sc}",state="{state}"}} 1'
    assert line in text, (sc, state)
assert 'xenstats_agent_pv_sets{state="rejected"} 2' in text
om = open(f"{d}/om.txt").read()
assert om.endswith("# EOF\n") and "# TYPE xenstats_pv_text info" in om
print("ok")
PY
pass "promtool and a strict parser accept /metrics with hostile names; values, texts and states are right"

# a flooding provider costs the agent a few events a request, not a hundred
# a second: its unrequested events (its set's errors) over 5 s
flood_errors() { curl -sf "$URL/metrics" | awk '/^xenstats_pv_set_errors_total\{.*set="flood"/ { print $2 }'; }
e0=$(flood_errors)
sleep 5
e1=$(flood_errors)
[ -n "$e0" ] && [ -n "$e1" ] || fail "no errors figure for the flood set"
rate=$(((e1 - e0) / 5))
[ "$rate" -le 12 ] || fail "the flood cost the agent $rate unrequested events a second (at most 12: 4 tolerated a second, then masked until the next request, 2 requests a second)"
pass "a flooding provider: $rate unrequested events a second reach the agent"
n=$(grep -c "floods its event channel" "$XENSTATS_TEST_TMP/agent.log")
[ "$n" -le 1 ] || fail "the flood was logged $n times (once a set: it is masked after every request)"
pass "the flood is logged once ($n)"

# a text statistic holding UTF-8 and stray bytes: that value only is invalid
curl -sf "$URL/api/v1/snapshot" >"$XENSTATS_TEST_TMP/snap.json"
python3 - "$XENSTATS_TEST_TMP/snap.json" <<'PY' || fail "UTF-8 in a text statistic"
import json, sys
raw = open(sys.argv[1], "rb").read()
s = next(x for d in json.loads(raw.decode("utf-8"))["domains"] for x in d["pv_sets"] if x["set"] == "ascii-utf8")
st = {x["name"]: x["value"] for x in s["stats"]}
assert s["state"] == "active" and s["errors"] >= 1, s
assert st["text"] is None and isinstance(st["first"], int), st
PY
grep -q 'set="ascii-utf8",statistic="text"' "$XENSTATS_TEST_TMP/metrics.txt" && fail "an invalid text exported"
pass "a text statistic with UTF-8 or stray bytes is invalid alone; JSON and /metrics stay valid"

# a real Prometheus server reads back a published guest statistic
q='xenstats_pv_value{domain="web",statistic="neg"}'
got=$(prometheus_query "$port" "$q")
[ "$got" = "-42" ] || fail "Prometheus read $q = '$got': $(tail -3 "$XENSTATS_TEST_TMP/prom/log")"
pass "Prometheus read back the guest's statistic: $q = $got"

# the JSON API carries the same, with the set states
curl -sf "$URL/api/v1/snapshot" | python3 -c '
import json, sys
snap = json.load(sys.stdin)
web = next(d for d in snap["domains"] if d["name"] == "web")
s = web["pv_sets"][0]
vals = {x["name"]: x["value"] for x in s["stats"]}
assert vals["neg"] == -42 and vals["nan"] == "NaN" and vals["text"] == "hello, world!", vals
evil = next(d for d in snap["domains"] if d["name"] == "evil")
states = {x["set"]: x["state"] for x in evil["pv_sets"]}
assert states["name-no-nul"] == "rejected" and states["healthy"] == "active", states
assert snap["agent"]["pv_sets_rejected"] == 2' || fail "JSON snapshot"
pass "JSON snapshot"

# stopping the agent lets providers see the monitor leave: they withdraw at once
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit status"
start=$(date +%s%N)
kill -TERM "${PIDS[0]}"
wait "${PIDS[0]}" || fail "provider exit status"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 1500 ] || fail "provider waited $ms ms for a monitor that had left"
pass "after the agent stops, a provider withdraws without waiting ($ms ms)"
for p in "${PIDS[@]:1}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${PIDS[@]:1}"; do wait "$p" 2>/dev/null || true; done
