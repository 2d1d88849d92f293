#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Guest statistics by the naming convention (docs/pv-stats.md): what
# `xenstats publish` sends becomes counter and gauge families with the device
# as a label, in Prometheus text and OpenMetrics, and nowhere else; a literal
# seed provider and names outside the convention are in xenstats_pv_value
# only; guests that
# disagree on a family's kind cannot break the exposition; a real Prometheus
# reads a guest counter back.
. "$(dirname "$0")/../integration/lib.sh"
: "${PV_TEST_PROVIDER:?}" "${XENSTATS_SOURCE_ROOT:?}"
T=$XENSTATS_TEST_TMP

start_emu -D name=web,vcpus=1 -D name=db,vcpus=1
start_agent
cat >"$T/web.custom" <<'EOF'
[app web]
u64 requests_total 12
double temperature_celsius 21.5
s64 queue_delta -3
u64 latency_ms 7
u64 Weird 1
double broken_seconds_total nan
u64 clash 5
[Tx]
u64 packets_total 9
EOF
cat >"$T/db.custom" <<'EOF'
[app db]
u64 clash_total 6
u64 requests_total 3
EOF
XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --proc "$XENSTATS_SOURCE_ROOT/tests/publish/fixtures/proc" \
    --custom "$T/web.custom" --rescan 0 2>"$T/web.err" &
XENSTATS_EMU_DOMID=2 "$XENSTATS" publish --provider other --sets none --custom "$T/db.custom" --rescan 0 \
    2>"$T/db.err" &
XENSTATS_EMU_DOMID=2 "$PV_TEST_PROVIDER" --provider "Network #0" --set Tx --count 3 >"$T/literal.out" 2>&1 &

for _ in $(seq 1 100); do
    curl -sf "$URL/metrics" >"$T/m.txt" || true
    [ "$(grep -c '^xenstats_guest_app_requests_total{' "$T/m.txt")" = 2 ] &&
        grep -q 'provider="Network #0",set="Tx",statistic="stat_2"' "$T/m.txt" && break
    sleep 0.2
done
sleep 1 # one more round: every set sampled at least once
curl -sf "$URL/metrics" >"$T/m.txt"
curl -sf -H 'Accept: application/openmetrics-text' "$URL/metrics" >"$T/om.txt"
curl -sf "$URL/api/v1/snapshot" >"$T/snap.json"
promtool check metrics <"$T/m.txt" || fail "promtool (with its lint) rejects /metrics"
pass "promtool accepts /metrics, lint included, with guests publishing by the convention and outside it"

python3 - "$T" <<'PY' || fail "the guest families"
import json, re, sys, time
T = sys.argv[1]
created = []
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')

def parse(path, om):
    """families: name -> (type, unit, [(sample name, labels, value)]); strict on order and names."""
    fams, order, cur = {}, [], None
    lines = open(path).read().split("\n")
    assert lines[-1] == "", "no final newline"
    lines = lines[:-1]
    if om:
        assert lines[-1] == "# EOF", "OpenMetrics without # EOF"
        lines = lines[:-1]
    for l in lines:
        if l.startswith("# TYPE "):
            _, _, name, typ = l.split(" ")
            assert name not in fams, f"family {name} twice"
            fams[name] = [typ, "", []]
            order.append(name)
            cur = name
        elif l.startswith("# UNIT "):
            _, _, name, unit = l.split(" ")
            assert name == cur and name.endswith("_" + unit), l
            fams[name][1] = unit
        elif l.startswith("#"):
            continue
        else:
            m = sample.match(l)
            assert m, l
            name = m.group(1)
            typ = fams[cur][0]
            labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            if om and typ == "counter" and name == cur + "_created":
                # when the counter started (the set's attach): right after
                # its own _total, a time of this run
                prev = fams[cur][2][-1]
                assert prev[0] == cur + "_total" and prev[1] == labels, (prev, l)
                assert abs(float(m.group(3)) - time.time()) < 600, l
                created.append(name)
                continue
            if om and typ == "counter":
                assert name == cur + "_total", (cur, l)
            elif om and typ == "info":
                assert name == cur + "_info", (cur, l)
            else:
                assert name == cur, (cur, l)
            fams[cur][2].append((name, labels, m.group(3)))
    return fams

text, om = parse(f"{T}/m.txt", False), parse(f"{T}/om.txt", True)
# every guest counter of OpenMetrics says when it started; nothing else does
assert created and len(created) == sum(len([x for x in f[2] if x[0].endswith("_total")])
                                       for n, f in om.items() if n.startswith("xenstats_guest_")), len(created)

def one(fams, name, **labels):
    hits = [s for s in fams[name][2] if all(s[1].get(k) == v for k, v in labels.items())]
    assert len(hits) == 1, (name, labels, hits)
    return hits[0]

# kinds and units: counters as counters (OpenMetrics: family without _total), gauges as gauges
web = dict(domain="web", provider="xenstats-publish")
assert text["xenstats_guest_net_rx_bytes_total"][0] == "counter"
assert om["xenstats_guest_net_rx_bytes"][:2] == ["counter", "bytes"]
assert one(text, "xenstats_guest_net_rx_bytes_total", device="eth0", **web)[2] == "187345112"
assert one(om, "xenstats_guest_net_rx_bytes", device="eth0", **web)[2] == "187345112"
assert om["xenstats_guest_cpu_user_seconds"][:2] == ["counter", "seconds"]
assert one(om, "xenstats_guest_cpu_user_seconds", **web)[2] == "101.32"
assert om["xenstats_guest_memory_mem_total_bytes"][:2] == ["gauge", "bytes"]
assert one(text, "xenstats_guest_memory_mem_total_bytes", **web)[2] == str(2029876 * 1024)
assert one(text, "xenstats_guest_disk_flush_time_seconds_total", device="xvda", **web)[2] == "1.2"
assert one(text, "xenstats_guest_load_tasks", **web)[2] == "187"
assert om["xenstats_guest_cpu_context_switches"][0] == "counter"
assert "device" not in one(text, "xenstats_guest_memory_mem_total_bytes", **web)[1]
# the device is a label, never a name
assert not [f for f in text if "eth0" in f or "xvda" in f], [f for f in text if "eth0" in f]

# every numeric statistic of xenstats publish (the JSON snapshot has them all;
# the fixtures do not move) is one sample of its typed family, with its value
snap = json.load(open(f"{T}/snap.json"))
typed = 0
for d in snap["domains"]:
    for s in d["pv_sets"]:
        if s["provider"] != "xenstats-publish" or s["set"] in ("app web", "Tx"):
            continue
        assert s["state"] == "active", s
        group, _, device = s["set"].partition(" ")
        for st in s["stats"]:
            if st["type"] == "ascii":
                continue
            name = f"xenstats_guest_{group}_{st['name']}"
            got = one(text, name, domain=d["name"], provider=s["provider"], **({"device": device} if device else {}))
            assert float(got[2]) == float(st["value"]), (name, got, st)
            typed += 1
assert typed > 100, typed
# and none is also in xenstats_pv_value: of xenstats publish and "other", only
# the names outside the convention, and the gauge that lost the kind clash
pv = sorted((s[1]["set"], s[1]["statistic"]) for s in text["xenstats_pv_value"][2]
            if s[1]["provider"] in ("xenstats-publish", "other"))
assert pv == sorted([("Tx", "packets_total"), ("app web", "Weird"), ("app web", "broken_seconds_total"),
                     ("app web", "clash"), ("app web", "latency_ms")]), pv

# a custom set by the convention; names outside it are in xenstats_pv_value
assert sorted(s[1]["device"] for s in text["xenstats_guest_app_requests_total"][2]) == ["db", "web"]
assert om["xenstats_guest_app_temperature_celsius"][:2] == ["gauge", "celsius"]
assert one(text, "xenstats_guest_app_queue_delta", device="web")[2] == "-3"
assert not [f for f in text if f.startswith(("xenstats_guest_app_latency", "xenstats_guest_app_weird",
                                              "xenstats_guest_tx_"))]
for outside in ("latency_ms", "Weird", "packets_total"):
    assert one(text, "xenstats_pv_value", domain="web", provider="xenstats-publish", statistic=outside), outside
# a counter that is NaN is not a counter sample; it is a pv_value instead
assert not [f for f in text if "broken" in f]
assert one(text, "xenstats_pv_value", statistic="broken_seconds_total")[2] == "NaN"

# a literal seed provider: exactly as before, and nothing else
lit = [s for s in text["xenstats_pv_value"][2] if s[1]["provider"] == "Network #0"]
assert sorted(s[1]["statistic"] for s in lit) == ["stat_0", "stat_1", "stat_2"], lit
assert all(s[1]["set"] == "Tx" and s[1]["type"] == "u64" for s in lit)
for fams in (text, om):
    for f, (_, _, samples) in fams.items():
        if f.startswith("xenstats_guest_"):
            assert not [s for s in samples if s[1].get("provider") == "Network #0"], f

# guests that disagree: gauge "clash" in web, counter "clash_total" in db; the counter wins
assert om["xenstats_guest_app_clash"][0] == "counter"
assert [s[1]["domain"] for s in om["xenstats_guest_app_clash"][2]] == ["db"]
assert "xenstats_guest_app_clash" not in text and "xenstats_guest_app_clash_total" in text
assert one(text, "xenstats_pv_value", domain="web", statistic="clash")[2] == "5"
print("ok")
PY
pass "counters and gauges typed by name, units, the device as a label, each statistic once; the literal provider and other names only in xenstats_pv_value; a kind clash resolved"

# a real Prometheus (it asks for OpenMetrics) reads a guest counter back
q='xenstats_guest_net_rx_bytes_total{domain="web",device="eth0"}'
got=$(prometheus_query "$port" "$q")
[ "$got" = "187345112" ] || fail "Prometheus read $q = '$got': $(tail -3 "$T/prom/log")"
pass "Prometheus scraped the OpenMetrics exposition and read $q = $got"
