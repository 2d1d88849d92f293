#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# PV stats end to end: providers in guests, the monitor in dom0, all real
# processes on the emulated host.
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}"

start_emu -D name=g1,vcpus=1 -D name=g2,vcpus=1 -D name=g3,vcpus=1
"$XENSTATS" pv --toolstack --count 1 1 2 3 >/dev/null

# providers refuse to start where nobody monitors
"$XENSTATS" emu create name=unmonitored >/dev/null
expect_fail "provider in an unmonitored domain" "No such file or directory" env XENSTATS_EMU_DOMID=4 "$PV_TEST_PROVIDER"

PIDS=()
provider() { # DOMID ARGS...
    local dom=$1
    shift
    XENSTATS_EMU_DOMID=$dom "$PV_TEST_PROVIDER" "$@" >"$XENSTATS_TEST_TMP/p$dom-${#PIDS[@]}.out" 2>&1 &
    PIDS+=($!)
}
wait_published() {
    local i f
    for i in $(seq 1 100); do
        local all=1
        for f in "$XENSTATS_TEST_TMP"/p*.out; do grep -q published "$f" || all=0; done
        [ $all = 1 ] && return 0
        sleep 0.05
    done
    fail "providers did not publish: $(cat "$XENSTATS_TEST_TMP"/p*.out)"
}

# A set's event channel binds to one monitor: two monitors of one domain
# would fight over the port, so each monitor here watches its own domains.
# A monitor started before the providers, for domains 2 and 3:
"$XENSTATS" pv --json --interval 300ms --timeout 200ms 2 3 >"$XENSTATS_TEST_TMP/early.json" \
    2>"$XENSTATS_TEST_TMP/early.log" &
EARLY=$!
sleep 0.3

provider 1 --provider "Types #0" --set "All types" --types
provider 1 --provider "Big" --set "Wide" --count 150
provider 1 --provider "Big" --set "Narrow" --count 3
provider 2 --provider "Other" --set "S" --count 5
provider 2 --provider "Other" --set "T" --count 2
wait_published
# and every set's event-channel is in xenstore, as dom0 sees it
for set in Types_0/All_types Big/Wide Big/Narrow; do
    for _ in $(seq 1 100); do
        XENSTORED_PATH=$XENSTATS_EMU_DIR/xenstore/0 xenstore-read "/local/domain/1/stats/$set/event-channel" \
            >/dev/null 2>&1 && break
        sleep 0.05
    done
done

# a monitor started after them, for domain 1
"$XENSTATS" pv --json --timeout 500ms 1 >"$XENSTATS_TEST_TMP/late.json"
python3 - "$XENSTATS_TEST_TMP/late.json" <<'PY' || fail "round trip"
import json, math, sys
sets = {(s["domid"], s["provider"], s["set"]): s for s in json.load(open(sys.argv[1]))["sets"]}
assert set(sets) == {(1, "Types #0", "All types"), (1, "Big", "Wide"), (1, "Big", "Narrow")}, sets.keys()
t = sets[(1, "Types #0", "All types")]
assert t["state"] == "active" and t["samples"] == 1 and t["errors"] == 0, t
# the sample is this request's: refreshed at publishing (1), then once per request
assert t["stats"]["samples"]["value"] == 2, t["stats"]["samples"]
v = {k: x["value"] for k, x in t["stats"].items()}
ty = {k: x["type"] for k, x in t["stats"].items()}
assert v["neg"] == -42 and ty["neg"] == "s64"
assert v["min"] == -2**63
assert v["max"] == 2**64 - 1 and ty["max"] == "u64"
assert v["quarter"] == 3.25 and ty["quarter"] == "double"
assert v["nan"] == "NaN" and v["inf"] == "+Inf" and v["ninf"] == "-Inf"
assert v["text"] == "hello, world!" and ty["text"] == "ascii"
assert v["empty"] == ""
w = sets[(1, "Big", "Wide")]
assert len(w["stats"]) == 150, len(w["stats"])
# one sample is self-consistent: every value carries the same sample number
base = {x["value"] - int(k.split("_")[1]) * 1000 for k, x in w["stats"].items()}
assert len(base) == 1 and min(base) >= 1, base
print("ok")
PY
pass "every type round trips; 150 statistics over 3 pages; several providers, sets and domains"

sleep 1
tail -n 1 "$XENSTATS_TEST_TMP/early.json" | python3 -c '
import json, sys
sets = json.load(sys.stdin)["sets"]
names = sorted((s["domid"], s["provider"], s["set"]) for s in sets)
assert names == [(2, "Other", "S"), (2, "Other", "T")], names
assert all(s["state"] == "active" and s["samples"] >= 2 for s in sets), sets' || fail "early monitor: $(tail -n 1 "$XENSTATS_TEST_TMP/early.json")"
pass "a monitor started before the providers finds them and keeps sampling"

# withdrawal while a monitor samples: bounded, clean, seen by the monitor
"$XENSTATS" pv --json --interval 100ms --timeout 200ms 1 >"$XENSTATS_TEST_TMP/d1.json" 2>&1 &
D1=$!
sleep 0.5
start=$(date +%s%N)
kill -TERM "${PIDS[2]}"
rc=0
wait "${PIDS[2]}" || rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$rc" -eq 0 ] || fail "withdrawing provider exit $rc: $(cat "$XENSTATS_TEST_TMP"/p1-2.out)"
[ "$ms" -lt 1900 ] || fail "withdrawal took $ms ms: the monitor did not close its port"
gone=0
for _ in $(seq 1 60); do # the monitor's next samples, however slow the machine
    sleep 0.1
    tail -n 1 "$XENSTATS_TEST_TMP/d1.json" | python3 -c '
import json, sys
sets = {(s["domid"], s["provider"], s["set"]) for s in json.load(sys.stdin)["sets"]}
assert (1, "Big", "Narrow") not in sets and (1, "Big", "Wide") in sets, sets' 2>/dev/null && { gone=1; break; }
done
[ "$gone" = 1 ] || fail "withdrawn set still monitored: $(tail -n 1 "$XENSTATS_TEST_TMP/d1.json")"
kill -TERM "$D1"
wait "$D1" || fail "monitor of domain 1 exit status"
pass "withdrawal during sampling completes in $ms ms and the set disappears"

# domain destroyed while sampling
"$XENSTATS" emu destroy 2 >/dev/null
sleep 1
kill -0 "$EARLY" || fail "monitor died with the domain"
tail -n 1 "$XENSTATS_TEST_TMP/early.json" | python3 -c '
import json, sys
sets = json.load(sys.stdin)["sets"]
assert all(s["domid"] != 2 for s in sets), sets' || fail "destroyed domain: $(tail -n 1 "$XENSTATS_TEST_TMP/early.json")"
pass "a domain destroyed while sampled: its sets go, the monitor goes on"

# a provider that dies in the middle of a sample
XENSTATS_EMU_DOMID=3 "$PV_TEST_PROVIDER" --provider Dies --die-on-sample >"$XENSTATS_TEST_TMP/dies.out" 2>&1 &
DIES=$!
sleep 1.5
wait "$DIES" 2>/dev/null || true
tail -n 1 "$XENSTATS_TEST_TMP/early.json" | python3 -c '
import json, sys
s = [s for s in json.load(sys.stdin)["sets"] if s["provider"] == "Dies"]
assert s and s[0]["state"] in ("withdrawn", "timed-out", "stale"), s' || fail "dead provider: $(tail -n 1 "$XENSTATS_TEST_TMP/early.json")"
pass "a provider dying mid-sample is not waited for"

kill -TERM "$EARLY"
wait "$EARLY" || fail "monitor exit status"
for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
