#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile guests: every scenario of pv_hostile runs in one guest while a
# healthy provider runs in another.  The monitor must keep sampling the
# healthy set on schedule, stay small, log one reason per bad set, and say
# in each set's state what happened.
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}" "${PV_HOSTILE:?}"

start_emu -D name=good,vcpus=1 -D name=evil,vcpus=1 -D name=greedy,vcpus=1
"$XENSTATS" pv --toolstack --count 1 1 2 3 >/dev/null

XENSTATS_EMU_DOMID=1 "$PV_TEST_PROVIDER" --provider Healthy --count 16 >"$XENSTATS_TEST_TMP/healthy.out" 2>&1 &
PIDS=($!)
# many-keys runs into the guest's xenstore node quota: it gets a guest of its own
for sc in $("$PV_HOSTILE" --list); do
    dom=2
    [ "$sc" = many-keys ] && dom=3
    XENSTATS_EMU_DOMID=$dom "$PV_HOSTILE" "$sc" >"$XENSTATS_TEST_TMP/h-$sc.out" 2>&1 &
    PIDS+=($!)
done
sleep 1.5 # evtchn-early completes its keys after 1 s

"$XENSTATS" -v pv --json --interval 250ms --count 16 --timeout 100ms 1 2 3 \
    >"$XENSTATS_TEST_TMP/mon.json" 2>"$XENSTATS_TEST_TMP/mon.log" &
MON=$!
# watch the monitor's footprint while it runs
peak_rss=0
while kill -0 "$MON" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$MON/status" 2>/dev/null || echo 0)
    [ "${rss:-0}" -gt "$peak_rss" ] && peak_rss=$rss
    cpu=$(awk '{print $14 + $15}' "/proc/$MON/stat" 2>/dev/null || echo 0)
    sleep 0.2
done
wait "$MON" || fail "monitor exit status: $(tail "$XENSTATS_TEST_TMP/mon.log")"

python3 - "$XENSTATS_TEST_TMP" <<'PY' || { cat "$XENSTATS_TEST_TMP/mon.log"; fail "hostile scenarios"; }
import json, sys
d = sys.argv[1]
reports = [json.loads(l) for l in open(f"{d}/mon.json")]
assert len(reports) == 16, len(reports)
last = {(s["provider"], s["set"]): s for s in reports[-1]["sets"]}
H = lambda sc: last.get(("Hostile", sc))
expect_rejected = {
    "name-no-nul": "NUL", "bad-chars": "", "type0-then-more": "", "unknown-type": "type 9",
    "ref-not-number": "", "ref-huge": "", "ref-ungranted": "map", "ref-foreign": "map", "ref-gap": "",
    "many-keys": "64", "bad-port": "bind", "duplicate-names": "duplicate",
}
for sc, word in expect_rejected.items():
    s = H(sc)
    assert s, f"{sc}: set missing"
    assert s["state"] == "rejected", f"{sc}: {s['state']} {s['reason']}"
    assert word.lower() in s["reason"].lower(), f"{sc}: reason {s['reason']!r} lacks {word!r}"
# published in the wrong order, then completed: attached once complete
assert H("evtchn-early")["state"] == "active", H("evtchn-early")
# floods are counted and contained
f = H("flood"); assert f["state"] == "active" and f["errors"] > 0, f
# names rewritten after publishing: harmless, detected
r = H("rewrite-names"); assert r["state"] == "active" and r["errors"] >= 1, r
# its name page's grant revoked: the values still come, and the domain's
# names are still checked one set at a time when their one mapping fails
v = H("revoke-names"); assert v["state"] == "active" and v["samples"] >= 14, v
assert "first" in r["stats"] and "renamed" not in r["stats"], r["stats"]
# an ASCII value without NUL: that value only is invalid
a = H("ascii-no-nul"); assert a["state"] == "active" and a["errors"] >= 1, a
u = H("ascii-utf8"); assert u["state"] == "active" and u["errors"] >= 1, u
assert u["stats"]["text"]["value"] is None and u["stats"]["first"]["value"] is not None, u["stats"]
assert a["stats"]["text"]["value"] is None and a["stats"]["first"]["value"] is not None, a["stats"]
# never answers: stale, then timed out
n = H("no-answer"); assert n["state"] == "timed-out" and n["timeouts"] >= 3, n
# keys deleted in the middle of a sample: gone
assert H("keys-deleted") is None or H("keys-deleted")["state"] == "withdrawn", H("keys-deleted")
# the healthy provider was sampled on schedule all along
hs = [next(s for s in r["sets"] if s["provider"] == "Healthy") for r in reports]
# (a loaded test machine may make one answer late: allow two of sixteen)
samples = [s["samples"] for s in hs]
assert samples[-1] >= 14 and hs[-1]["state"] == "active", samples
assert sum(s["state"] == "active" for s in hs) >= 14, [s["state"] for s in hs]
lat = sorted(s["latency_ns"] for s in hs)[len(hs) // 2] / 1e6
h = H("healthy"); assert h["state"] == "active" and h["samples"] >= 14, h
print(f"healthy: {samples[-1]}/16 samples answered, median latency {lat:.2f} ms")
PY
pass "every hostile scenario is contained; the healthy provider answered every request"

# one clear log line per rejected set, not one per rescan
for sc in name-no-nul unknown-type ref-gap many-keys duplicate-names; do
    n=$(grep -c "Hostile/$sc rejected" "$XENSTATS_TEST_TMP/mon.log" || true)
    [ "$n" -eq 1 ] || fail "$sc: $n rejection lines"
done
pass "one log line per rejected set"

[ "$peak_rss" -lt 65536 ] || fail "monitor RSS peaked at $peak_rss kB"
pass "monitor peak RSS ${peak_rss} kB, CPU ${cpu} ticks over 4 s"

for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
