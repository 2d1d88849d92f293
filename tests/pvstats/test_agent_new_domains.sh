#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An agent that starts on a host of many guests that have published PV stats
# sets (docs/collector.md, "New domains"): its rounds stay within the
# interval from the first, every domain is in the first snapshot with its
# vCPUs, new domains are attached a share of each round at a time
# (xenstats_agent_pv_domains_pending falls to 0), and every set is then
# sampled.  Before, the first round attached every set first.
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_MANY_PROVIDERS:?}"

N=${NEW_DOMAINS:-300}
SETS=3
args=()
for i in $(seq 1 "$N"); do args+=(-D "name=g$i,vcpus=2"); done
start_emu "${args[@]}"
# a first agent makes the guests' `stats` nodes; the providers publish
start_agent
[ -n "${AGENT:-}" ] && curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up"
"$PV_MANY_PROVIDERS" 1 "$N" "$SETS" >"$XENSTATS_TEST_TMP/providers.out" 2>&1 &
for _ in $(seq 1 600); do
    grep -q "^published $N$" "$XENSTATS_TEST_TMP/providers.out" && break
    sleep 0.1
done
grep -q "^published $N$" "$XENSTATS_TEST_TMP/providers.out" || fail "providers: $(cat "$XENSTATS_TEST_TMP/providers.out")"
kill -TERM "$AGENT"
wait "$AGENT" || fail "the first agent: $(tail -3 "$XENSTATS_TEST_TMP/agent.log")"

# The agent under test, started by the script that watches it, so that its first sample is seen.
port=$(free_port)
URL="http://127.0.0.1:$port"
python3 - "$URL" "$N" "$SETS" "$XENSTATS" "$XENSTATS_TEST_TMP/agent2.log" <<'PY' ||
import atexit, re, subprocess, sys, time, urllib.request
url, n, sets, xenstats, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
agent = subprocess.Popen([xenstats, "agent", "--listen", url[len("http://"):], "--interval", "500ms", "--timeout", "150ms"],
                         stdout=open(log, "w"), stderr=subprocess.STDOUT)
atexit.register(lambda: agent.poll() is None and agent.kill())  # a failed check leaves none behind
def figures():
    try:
        text = urllib.request.urlopen(url + "/metrics").read().decode()
    except OSError as e:  # not listening yet; 503 before the first sample
        failures.append(str(e)[:40])
        return None, None
    f = {}
    for line in text.splitlines():
        m = re.match(r'^(xenstats_agent_\w+)(\{state="active"\})? (\S+)$', line)
        if m:
            f[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return f, text
rounds, failures, t0 = {}, [], time.monotonic()
deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    f, text = figures()
    if f is None:
        time.sleep(0.02)
        continue
    r = int(f["xenstats_agent_samples_total"])
    if r not in rounds:
        rounds[r] = (f["xenstats_agent_sample_duration_seconds"], f.get("xenstats_agent_pv_domains_pending", 0),
                     f.get('xenstats_agent_pv_sets{state="active"}', 0))
        if len(rounds) == 1:
            assert r == 1, f"the first round seen is {r} ({time.monotonic() - t0:.2f} s after the start; {failures})"
            assert f["xenstats_agent_domains"] == n + 1, f
            vcpus = len(re.findall(r'^xenstats_domain_vcpus\{domid="\d+",domain="g\d+"\} 2$', text, re.M))
            assert vcpus == n, f"the first round: {vcpus} of {n} domains with their vCPUs"
    if rounds[r][1] == 0 and rounds[r][2] == n * sets:
        break
    time.sleep(0.05)
last = rounds[max(rounds)]
print("round: (duration s, domains pending, sets active):", rounds)
assert last[1] == 0 and last[2] == n * sets, f"not every set sampled after {len(rounds)} rounds: {last}"
slow = {r: v for r, v in rounds.items() if v[0] >= 0.5}
assert not slow, f"rounds that took the interval: {slow}"
agent.terminate()
assert agent.wait(10) == 0, "the agent did not stop cleanly"
PY
    fail "new domains: $(tail -3 "$XENSTATS_TEST_TMP/agent2.log")"
pass "$N new domains of $SETS sets each: every one in the first sample, rounds within the interval, all sets sampled within a few rounds"
