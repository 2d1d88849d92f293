#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real Prometheus server scrapes the agent over TLS with basic auth, as an
# operator would set it up across a network, and reads back a vCPU series
# and a counter the guest publishes (`xenstats publish` in domain 1) through
# its HTTP API.  Skipped (77) only when Prometheus is not installed.
. "$(dirname "$0")/lib.sh"
T=$XENSTATS_TEST_TMP
if ! command -v prometheus >/dev/null; then
    echo "SKIP: prometheus is not installed (scripts/install-deps.sh)"
    exit 77
fi
for tool in openssl htpasswd; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=xenstats-agent \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null ||
    fail "openssl req"
password='scrape me, 15 s'
cat >"$T/web.yml" <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
basic_auth_users:
  prometheus: $(htpasswd -nbBC 10 prometheus "$password" | cut -d: -f2-)
YML
printf '%s' "$password" >"$T/password"

start_emu -D name=web,vcpus=2,workload=cpu -D name=db,vcpus=1
AGENT_SCHEME=https
AGENT_CURL=(--cacert "$T/cert.pem" -u "prometheus:$password")
start_agent --web-config "$T/web.yml"
curl -sf "${AGENT_CURL[@]}" "$URL/healthz" | grep -qx ok || fail "agent over TLS: $(cat "$T/agent.log")"
XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --sets cpu,memory >"$T/publish.log" 2>&1 &

# the guest's counter as the agent exports it: the first sample of a
# counter family with domain="web" and the publisher's provider label (its
# name follows docs/pv-stats.md), else any of its statistics
for _ in $(seq 1 50); do
    curl -sf "${AGENT_CURL[@]}" "$URL/metrics" >"$T/metrics.txt"
    grep -q 'provider="xenstats-publish"' "$T/metrics.txt" && break
    sleep 0.2
done
pv=$(python3 - "$T/metrics.txt" <<'PY'
import re, sys
counters, first_any = set(), None
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\}) \S+$')
for line in open(sys.argv[1]):
    if line.startswith("# TYPE ") and line.split()[3] == "counter":
        counters.add(line.split()[2])
        continue
    m = sample.match(line.strip())
    if not m or 'domain="web"' not in m[2] or 'provider="xenstats-publish"' not in m[2]:
        continue
    if m[1].startswith("xenstats_pv_set_"):
        continue  # the set's own bookkeeping, not a guest statistic
    name = m[1]
    if name in counters or name[:-len("_total")] in counters:
        print(name + m[2])
        sys.exit(0)
    first_any = first_any or name + m[2]
if first_any:
    print(first_any)
PY
)
[ -n "$pv" ] || fail "no guest statistic in /metrics: $(cat "$T/publish.log")"
# selectors of the series: drop label values PromQL would need escaped
pv_selector=$(python3 -c '
import re, sys
name, labels = re.match(r"^([^{]+)\{(.*)\}$", sys.argv[1]).groups()
keep = [l for l in re.findall(r"[a-zA-Z_]+=\"(?:[^\"\\\\]|\\\\.)*\"", labels)]
print(name + "{" + ",".join(keep) + "}")' "$pv")

PROM_JOB_EXTRA="    scheme: https
    tls_config:
      ca_file: $T/cert.pem
    basic_auth:
      username: prometheus
      password_file: $T/password"
export PROM_JOB_EXTRA
vcpu='xenstats_vcpu_runstate_seconds_total{domain="web",vcpu="0",runstate="running"}'
got=$(prometheus_query "$port" "$vcpu")
[ -n "$got" ] || fail "Prometheus read nothing of $vcpu: $(tail -5 "$T/prom/log")"
python3 -c 'import sys; assert float(sys.argv[1]) > 0' "$got" || fail "$vcpu = $got"
pass "Prometheus scraped over TLS with basic auth: $vcpu = $got"
got=$(prometheus_query "$port" "$pv_selector")
[ -n "$got" ] || fail "Prometheus read nothing of $pv_selector: $(tail -5 "$T/prom/log")"
pass "Prometheus read back the guest's statistic: $pv_selector = $got"
# the scrapes were authenticated and the target up
got=$(prometheus_query "$port" 'up{job="xenstats"}')
[ "$got" = 1 ] || fail "up = '$got'"
pass "the target is up in Prometheus"

# with a wrong password Prometheus' target is down (the agent said 401)
printf 'wrong' >"$T/password"
got=$(prometheus_query "$port" 'up{job="xenstats"} == 0')
[ "$got" = 0 ] || fail "up with a wrong password = '$got'"
grep -q '401' "$T/prom/log" || curl -s --cacert "$T/cert.pem" -u prometheus:wrong -o /dev/null -w '%{http_code}' \
    "$URL/metrics" | grep -qx 401 || fail "no 401"
pass "with a wrong password the target is down (401)"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"
echo "1..$CHECKS"
