#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Withdrawal is prompt at both ends (issue 29):
#  - a publisher with 64 sets stops within 3 s of SIGTERM when the monitor
#    never answers (it withdraws every set at once, under one deadline);
#  - in a domain over its budgets (a storm of malformed sets beside it),
#    the monitor closes every port of a 64-set withdrawal before the
#    provider's deadline: withdrawals go before what the budgets defer;
#  - on a busy machine (a CPU burner per core and a churning guest), a
#    provider killed and started again 50 ms later is sampled again within
#    two intervals, every time.
# The publisher is $XENSTATS_PUBLISH, the monitor $XENSTATS: either may be
# an older build.
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}" "${PV_HOSTILE:?}" "${XENSTATS_PUBLISH:?}"
T=$XENSTATS_TEST_TMP

start_emu -D name=guest,vcpus=1 -D name=storm,vcpus=1
start_agent # 500 ms interval, 200 ms timeout
curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up: $(cat "$T/agent.log")"

# 64 custom sets
for i in $(seq 1 64); do printf '[app%02d]\nu64 value %d\n' "$i" "$i"; done >"$T/64.custom"

# active_sets PROVIDER: how many of its sets the agent samples
active_sets() {
    curl -sf "$URL/api/v1/snapshot" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(sum(1 for d in s["domains"] if d["domid"] == 1 for x in d["pv_sets"]
          if x["provider"] == sys.argv[1] and x["state"] == "active"))' "$1"
}
wait_active() { # PROVIDER N
    for _ in $(seq 1 150); do
        [ "$(active_sets "$1")" = "$2" ] && return 0
        sleep 0.1
    done
    fail "$1: $(active_sets "$1") of $2 sets active: $(tail -5 "$T/agent.log")"
}
# stop_within PID LOG SECONDS: SIGTERM, then the seconds it took (fails past SECONDS)
stop_within() {
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    kill -TERM "$1"
    for _ in $(seq 1 $(($3 * 100 + 500))); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.01
    done
    t1=$(date +%s.%N)
    if kill -0 "$1" 2>/dev/null; then
        kill -KILL "$1"
        fail "still running $(awk "BEGIN{print $t1 - $t0}") s after SIGTERM: $(tail -3 "$2")"
    fi
    wait "$1" || rc=$?
    [ "$rc" -eq 0 ] || fail "exit status $rc: $(tail -3 "$2")"
    took=$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")
    awk "BEGIN{exit !($took <= $3)}" || fail "stopped $took s after SIGTERM (at most $3 s): $(tail -3 "$2")"
}

# ---- a monitor that never answers -------------------------------------------------
XENSTATS_EMU_DOMID=1 "$XENSTATS_PUBLISH" --provider many --sets none --custom "$T/64.custom" -v \
    >"$T/pub1.log" 2>&1 &
PUB=$!
wait_active many 64
kill -STOP "$AGENT" # holds every port, closes none
stop_within "$PUB" "$T/pub1.log" 3
kill -CONT "$AGENT"
left=$("$XENSTATS" pv 1 2>&1 | grep -c 'app' || true)
[ "$left" -eq 0 ] || fail "$left sets left in xenstore after the publisher stopped"
pass "64 sets, the monitor stopped: the publisher exits ${took} s after SIGTERM, its keys removed"

# ---- a domain over its budgets ------------------------------------------------------
# the 64 sets first (the storm's sets would leave no room for them: the
# monitor keeps 32 that are not live), then a storm beside them
XENSTATS_EMU_DOMID=1 "$XENSTATS_PUBLISH" --provider many --sets none --custom "$T/64.custom" -v \
    >"$T/pub2.log" 2>&1 &
PUB=$!
wait_active many 64
XENSTATS_EMU_DOMID=1 "$PV_HOSTILE" storm 24 100 >"$T/storm.out" 2>&1 &
STORM=$!
for _ in $(seq 1 100); do grep -q published "$T/storm.out" && break; sleep 0.1; done
throttled=
for _ in $(seq 1 50); do
    curl -sf "$URL/api/v1/snapshot" | python3 -c '
import json, sys
d = next(d for d in json.load(sys.stdin)["domains"] if d["domid"] == 1)
sys.exit(0 if d["pv_budget"]["throttled"] else 1)' && throttled=1 && break
    sleep 0.2
done
[ -n "$throttled" ] || fail "the storm did not throttle domain 1"
stop_within "$PUB" "$T/pub2.log" 2
grep -q "did not close" "$T/pub2.log" && fail "the monitor did not close every port in time: $(tail -3 "$T/pub2.log")"
pass "64 sets in a throttled domain: the monitor closed every port in time, the publisher exited in ${took} s"
kill "$STORM"
wait "$STORM" || true

# ---- restarts on a busy machine ------------------------------------------------------
burners=
for _ in $(seq 1 "$(nproc)"); do
    timeout 120 sh -c 'while :; do :; done' &
    burners="$burners $!"
done
XENSTATS_EMU_DOMID=2 "$PV_HOSTILE" storm 64 200 >"$T/churn.out" 2>&1 &
CHURN=$!
python3 - "$URL" "$PV_TEST_PROVIDER" "$T" <<'PY' || fail "restart under load"
import json, os, signal, subprocess, sys, time, urllib.request
url, libprov, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
interval = 0.5
env = dict(os.environ, XENSTATS_EMU_DOMID="1")

def counters():
    snap = json.load(urllib.request.urlopen(url + "/api/v1/snapshot", timeout=5))
    dom = next(d for d in snap["domains"] if d["domid"] == 1)
    return next((s for s in dom["pv_sets"] if s["provider"] == "Lib" and s["set"] == "counters"), None)

def start():
    p = subprocess.Popen([libprov, "--provider", "Lib", "--set", "counters", "--count", "8"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert "published" in p.stdout.readline(), "never published"
    return p, time.monotonic()

def active_again(before, t0):
    while time.monotonic() - t0 < 10:
        s = counters()
        if s and s["state"] == "active" and s["samples"] >= 1 and s["samples"] != before:
            return time.monotonic() - t0
        time.sleep(0.02)
    raise AssertionError(f"not sampled again in 10 s: {counters()}")

p, t0 = start()
active_again(-1, t0)
took_all = []
for trial in range(5):
    time.sleep(1.0)
    p.kill()
    p.wait()
    time.sleep(0.05)
    before = (counters() or {}).get("samples", -1)
    p, t0 = start()
    took = active_again(before, t0)
    took_all.append(took)
    print(f"trial {trial}: sampled again {took * 1000:.0f} ms after publishing "
          f"(load {os.getloadavg()[0]:.1f})")
p.terminate()
p.wait()
# two intervals, and a busy machine's scheduling slack
assert max(took_all) <= 2 * interval + 0.5, took_all
PY
# shellcheck disable=SC2086
kill $burners "$CHURN" 2>/dev/null || true
wait $burners "$CHURN" 2>/dev/null || true
pass "a provider killed and started again on a busy machine is sampled within two intervals, 5 of 5"
echo "1..$CHECKS"
