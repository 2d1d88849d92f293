#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The agent's HTTP side under abuse and odd text: one local process holding
# (or churning) many slow connections cannot deny /metrics to another local
# process; domain names in UTF-8, and invalid UTF-8, come out as valid JSON
# (Python's parser) and valid exposition (promtool).
. "$(dirname "$0")/lib.sh"

start_emu -D name=$'caf\xc3\xa9',vcpus=1 -D name=$'bad\xff\xfe',vcpus=1 -D $'name=\xe6\x97\xa5\xe6\x9c\xac',vcpus=1
start_agent
[ -n "${AGENT:-}" ] && curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up"

# ---- text -----------------------------------------------------------------------
curl -sf "$URL/api/v1/snapshot" >"$XENSTATS_TEST_TMP/snap.json" || fail "snapshot"
python3 - "$XENSTATS_TEST_TMP/snap.json" <<'PY' || fail "JSON names"
import json, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict: the document is valid UTF-8
names = {d["domid"]: d["name"] for d in json.loads(raw)["domains"]}
assert names[1] == "caf\u00e9", ascii(names[1])
assert names[2] == "bad\ufffd\ufffd", ascii(names[2])
assert names[3] == "\u65e5\u672c", ascii(names[3])
assert b"\\u00c3" not in raw, "UTF-8 escaped byte by byte"
PY
pass "JSON: UTF-8 names unchanged, invalid bytes as U+FFFD, the document valid UTF-8"
curl -sf "$URL/metrics" >"$XENSTATS_TEST_TMP/metrics.txt" || fail "metrics"
promtool check metrics <"$XENSTATS_TEST_TMP/metrics.txt" || fail "promtool rejects /metrics"
grep -Eq $'^xenstats_domain_info{domid="1",domain="caf\xc3\xa9",uuid="[0-9a-f-]{36}"} 1$' "$XENSTATS_TEST_TMP/metrics.txt" || fail "café label"
grep -Eq $'^xenstats_domain_info{domid="2",domain="bad\xef\xbf\xbd\xef\xbf\xbd",uuid="[0-9a-f-]{36}"} 1$' "$XENSTATS_TEST_TMP/metrics.txt" ||
    fail "invalid bytes label"
pass "/metrics: the same names, and promtool accepts it"

# ---- connections ----------------------------------------------------------------
# One process holds 100 connections that never finish their request (a byte
# of header every 0.3 s), reopening any that is closed; then one that replaces
# all 100 every 0.2 s (about 500 connections a second); another scrapes.
python3 - "$port" <<'PY' || fail "$(tail -5 "$XENSTATS_TEST_TMP/agent.log")"
import socket, subprocess, sys, threading, time
port = int(sys.argv[1])
stop = threading.Event()
held = {"open": 0, "reopened": 0}

def attacker(churn):
    socks = []
    def one():
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            s.close()
            return None
        return s
    socks = [one() for _ in range(100)]
    while not stop.is_set():
        for i, s in enumerate(socks):
            if s is None or churn:
                if s:
                    s.close()
                socks[i] = one()
                held["reopened"] += 1
                continue
            try:
                s.send(b"X")
            except OSError:
                s.close()
                socks[i] = None
        held["open"] = sum(s is not None for s in socks)
        time.sleep(0.3 if not churn else 0.2)
    for s in socks:
        if s:
            s.close()

for churn in (False, True):
    stop.clear()
    t = threading.Thread(target=attacker, args=(churn,))
    t.start()
    time.sleep(1.5)  # the attacker's connections are past any grace time
    ok = bad = 0
    for src in ["127.0.0.1"] * 20 + ["127.0.0.2"] * 5:
        r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
                            "--interface", src, f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True)
        if r.stdout == "200":
            ok += 1
        else:
            bad += 1
            print(f"scrape from {src}: {r.stdout} {r.stderr.strip()}", file=sys.stderr)
        time.sleep(0.1)
    stop.set()
    t.join()
    mode = "churning" if churn else "holding"
    print(f"{mode} attacker ({held['reopened']} reopened): {ok}/{ok + bad} local scrapes answered")
    assert bad == 0, f"{bad} scrapes failed beside a {mode} attacker"
PY
pass "100 slow connections from one local process (held, or replaced 500 times a second) deny no scrape to another"

curl -sf "$URL/metrics" | grep -E '^xenstats_agent_http_evicted_connections_total [1-9]' >/dev/null ||
    fail "evictions not counted"
pass "evicted connections are counted"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit status"
pass "agent stops on SIGTERM"
