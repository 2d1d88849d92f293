#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# contrib/grafana: every PromQL expression of the dashboard (panels and
# template variables), and every recording rule of contrib/prometheus, run
# against a real Prometheus that scrapes a real `xenstats agent` on the
# emulated host, with `xenstats publish` in a guest; each must return data.
# The guests have a vif and a vbd each, whose counters move with their
# workload, so the device panels have data too.
. "$(dirname "$0")/../integration/lib.sh"
: "${XENSTATS_SOURCE_ROOT:?}"
command -v prometheus >/dev/null || { echo "prometheus not installed (Debian: prometheus)"; exit 77; }
T=$XENSTATS_TEST_TMP

start_emu -D name=web,vcpus=2,workload=cpu,vifs=1,vbds=1 -D name=db,vcpus=1,workload=io,vifs=1,vbds=1
start_agent
XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --rescan 0 2>"$T/publish.err" &

prom=$(free_port)
mkdir -p "$T/prom"
cp "$XENSTATS_SOURCE_ROOT/contrib/prometheus/xenstats-rules.yml" "$T/prom/"
cat >"$T/prom/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [xenstats-rules.yml]
scrape_configs:
  - job_name: xenstats
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
prometheus --config.file="$T/prom/prometheus.yml" --storage.tsdb.path="$T/prom/data" \
    --web.listen-address="127.0.0.1:$prom" >"$T/prom/log" 2>&1 &

python3 - "$XENSTATS_SOURCE_ROOT" "http://127.0.0.1:$prom" "127.0.0.1:$port" <<'PY' ||
import json, re, sys, time, urllib.parse, urllib.request
root, api, instance = sys.argv[1:]
dash = json.load(open(f"{root}/contrib/grafana/xenstats-host.json"))
subst = {"$instance": instance, "$domain": "web", "$__rate_interval": "15s"}

def expand(e):
    for k, v in subst.items():
        e = e.replace(k, v)
    assert "$" not in e, f"unknown variable in {e}"
    return e

def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))

exprs = []  # (where, PromQL, the label it must carry or None)
for p in panels(dash["panels"]):
    for t in p.get("targets", []):
        exprs.append((f"panel '{p['title']}' {t['refId']}", t["expr"], None))
for v in dash["templating"]["list"]:
    if v["type"] != "query":
        continue
    q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
    assert m, f"variable {v['name']}: {q}"
    exprs.append((f"variable ${v['name']}", m.group(1), m.group(2)))
rules = re.findall(r"^\s+- record: (\S+)", open(f"{root}/contrib/prometheus/xenstats-rules.yml").read(), re.M)
exprs += [(f"recording rule {r}", r, None) for r in rules]
assert len(exprs) > 40, len(exprs)

def query(e):
    url = f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": e})
    try:
        r = json.load(urllib.request.urlopen(url, timeout=5))
    except Exception as err:  # Prometheus not up yet, or a bad expression (HTTP 400)
        return None, str(err)
    return r["data"]["result"], None

deadline = time.time() + 60
while True:
    missing, errors = [], []
    for where, e, label in exprs:
        result, err = query(expand(e))
        if result is None:
            errors.append(f"{where}: {e}: {err}")
        elif not result or (label and not any(label in s["metric"] for s in result)):
            missing.append(f"{where}: {e}")
        elif label == "domain" and "web" not in {s["metric"]["domain"] for s in result}:
            missing.append(f"{where}: no domain web")
        elif label == "instance" and instance not in {s["metric"]["instance"] for s in result}:
            missing.append(f"{where}: no instance {instance}")
    if (not missing and not errors) or time.time() > deadline:
        break
    time.sleep(1)
for m in errors + missing:
    print("no data:" if m in missing else "error:", m, file=sys.stderr)
if errors or missing:
    sys.exit(1)
# the guest panels read typed families: xenstats publish follows the naming
# convention in full, so none of its statistics is also a xenstats_pv_value
assert not [e for _, e, _ in exprs if "xenstats_pv_value" in e]
result, err = query('xenstats_pv_value{provider="xenstats-publish"}')
assert result == [], (err, result[:3])
rules_state = json.load(urllib.request.urlopen(f"{api}/api/v1/rules"))["data"]["groups"]
bad = [r["name"] for g in rules_state for r in g["rules"] if r["health"] != "ok"]
assert not bad, f"rules that fail to evaluate: {bad}"
print(f"{len(exprs)} expressions returned data, the device panels' included")
PY
    fail "dashboard or rule expressions without data; Prometheus: $(tail -3 "$T/prom/log")"
pass "every dashboard expression and recording rule returns data from a real agent through a real Prometheus"
