#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats agent` on the emulated host: exposition validity (promtool), a
# real Prometheus server scraping it, the JSON API, hostile HTTP clients.
. "$(dirname "$0")/lib.sh"

expect_fail "bad listen address" "--listen" "$XENSTATS" agent --listen nowhere
expect_fail "bad interval" "--interval" "$XENSTATS" agent --interval 1ms
expect_fail "unknown option" "Usage" "$XENSTATS" agent --frobnicate
"$XENSTATS" agent --list-metrics | grep -q '^| `xenstats_vcpu_runstate_seconds_total` | counter | seconds |' ||
    fail "--list-metrics"
# the committed reference is the generated one
diff -u "$XENSTATS_SOURCE_ROOT/docs/metrics.md" <("$XENSTATS" agent --list-metrics) || fail "docs/metrics.md is stale"
pass "options and the metrics reference"

start_emu -p 2 -D name=web,vcpus=2,workload=cpu -D name=idle,vcpus=1,workload=idle
start_agent
curl -sf "$URL/healthz" | grep -q '^ok$' || fail "healthz: $(cat "$XENSTATS_TEST_TMP/agent.log")"
pass "healthz"

curl -sf "$URL/metrics" >"$XENSTATS_TEST_TMP/metrics.txt"
promtool check metrics <"$XENSTATS_TEST_TMP/metrics.txt" || fail "promtool check metrics"
grep -q '^xenstats_vcpu_runstate_seconds_total{domid="1",domain="web",vcpu="0",runstate="running"} [0-9.]*$' \
    "$XENSTATS_TEST_TMP/metrics.txt" || fail "vCPU series missing"
pass "promtool accepts /metrics"

# the domain section of a version 2 table (the emulator writes one): the same
# memory as getdomaininfo, for a domain with a table; none for Domain-0 (the
# emulator gives dom0 no table of its own)
python3 - "$XENSTATS_TEST_TMP/metrics.txt" <<'PY' || fail "statistics table memory"
import re, sys
m = {}
for line in open(sys.argv[1]):
    r = re.match(r'^(xenstats_domain_(?:stats_table_)?memory(?:_max|_outstanding)?_bytes)\{domid="(\d+)",[^}]*\} (\S+)$', line)
    if r:
        m[(r.group(1), r.group(2))] = float(r.group(3))
for kind in ("", "_max", "_outstanding"):
    t = m.get((f"xenstats_domain_stats_table_memory{kind}_bytes", "1"))
    g = m.get((f"xenstats_domain_memory{kind}_bytes", "1"))
    assert t is not None and t == g, (kind, t, g)
assert m[("xenstats_domain_stats_table_memory_bytes", "1")] > 0
assert ("xenstats_domain_stats_table_memory_bytes", "0") not in m, "Domain-0 has no table here"
PY
pass "the table's domain counters agree with getdomaininfo"

curl -sf -D "$XENSTATS_TEST_TMP/om.headers" -H 'Accept: application/openmetrics-text; version=1.0.0' \
    "$URL/metrics" >"$XENSTATS_TEST_TMP/om.txt"
grep -qi '^content-type: application/openmetrics-text' "$XENSTATS_TEST_TMP/om.headers" || fail "OpenMetrics content type"
[ "$(tail -n 1 "$XENSTATS_TEST_TMP/om.txt")" = "# EOF" ] || fail "OpenMetrics ends with # EOF"
grep -q '^# UNIT xenstats_vcpu_runstate_seconds seconds$' "$XENSTATS_TEST_TMP/om.txt" || fail "OpenMetrics UNIT"
pass "OpenMetrics when asked for"

# the JSON API agrees with `xenstats vcpu` on the same domain
curl -sf "$URL/api/v1/snapshot" >"$XENSTATS_TEST_TMP/snap.json"
"$XENSTATS" vcpu --json web >"$XENSTATS_TEST_TMP/vcpu.json"
python3 - "$XENSTATS_TEST_TMP" <<'PY' || fail "JSON snapshot"
import json, sys
d = sys.argv[1]
snap = json.load(open(f"{d}/snap.json"))
vc = json.load(open(f"{d}/vcpu.json"))
assert snap["version"] == 1 and snap["host"]["backend"] == "emu"
doms = {x["name"]: x for x in snap["domains"]}
assert set(doms) >= {"Domain-0", "web", "idle"}, doms.keys()
web = doms["web"]
assert web["vcpu_source"] == "resource" and len(web["vcpus"]) == 2
assert doms["Domain-0"]["vcpu_source"] == "none" and doms["Domain-0"]["vcpu_error"]
for v, w in zip(web["vcpus"], vc["vcpus"]):
    a = v["running"]; b = w["running"]
    # the agent's sample is up to one interval older than the direct read
    assert 0 <= b - a < 1.5, (a, b)
    total = v["running"] + v["runnable"] + v["blocked"] + v["offline"]
    assert total > 0
print("ok")
PY
pass "JSON snapshot agrees with xenstats vcpu"

# a real Prometheus server scrapes the agent; we read a series back
q='xenstats_vcpu_runstate_seconds_total{domain="web",vcpu="0",runstate="running"}'
got=$(prometheus_query "$port" "$q")
[ -n "$got" ] || fail "Prometheus never scraped the series: $(tail -5 "$XENSTATS_TEST_TMP/prom/log")"
python3 -c "import sys; v=float('$got'); assert v > 0, v" || fail "scraped value $got"
pass "Prometheus scraped $q = $got"

# hostile HTTP clients: the agent keeps answering everyone else
python3 - "$port" <<'PY' || fail "bad HTTP input"
import socket, sys, threading, time, urllib.request
port = int(sys.argv[1]); url = f"http://127.0.0.1:{port}/metrics"
def raw(data, wait=2.0):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(wait)
    try:
        s.sendall(data)
        return s.recv(200)
    except (socket.timeout, ConnectionResetError):
        return b""
    finally:
        s.close()
# an oversized request header is refused, not served
r = raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n")
assert not r.startswith(b"HTTP/1.1 200"), r
# garbage request line
r = raw(b"\x00\x01garbage\r\n\r\n")
assert not r.startswith(b"HTTP/1.1 200"), r
# slow clients hold a connection each but do not block the others
slow = []
for _ in range(20):
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"GET /metr"); slow.append(s)
t0 = time.time()
assert urllib.request.urlopen(url, timeout=5).status == 200
assert time.time() - t0 < 2, "a scrape waited behind slow clients"
# many concurrent scrapes all succeed
ok, errors = [], []
def scrape():
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            ok.append(r.status == 200 and r.read().endswith(b"\n"))
    except Exception as e:
        ok.append(False)
        errors.append(repr(e))
ts = [threading.Thread(target=scrape) for _ in range(50)]
[t.start() for t in ts]; [t.join() for t in ts]
assert all(ok) and len(ok) == 50, (ok.count(False), errors[:3])
for s in slow: s.close()
print("ok")
PY
curl -sf "$URL/healthz" >/dev/null || fail "agent stopped answering"
pass "oversized and malformed requests, slow and concurrent clients"

kill -TERM "$AGENT"
rc=0
wait "$AGENT" || rc=$?
[ "$rc" -eq 0 ] || fail "agent exit status $rc after SIGTERM: $(cat "$XENSTATS_TEST_TMP/agent.log")"
pass "SIGTERM stops the agent cleanly"
