#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The agent's endpoint as an operator configures it: gzip that decodes to
# the very exposition of the same snapshot; /healthz turning 503 with a
# reason when the domains cannot be listed, the host freezes (no round in
# three intervals) or goes away, and 200 when it is back; --web-config with TLS (a self-signed certificate made by
# openssl) and basic auth (a bcrypt hash made by htpasswd): 401 without or
# with wrong credentials, a bounded cost of a flood of wrong passwords,
# plain HTTP on the TLS port failing cleanly, client certificates; malformed
# files refused with the key and line, exit status 2.
. "$(dirname "$0")/lib.sh"
T=$XENSTATS_TEST_TMP
for tool in openssl htpasswd promtool; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done

start_emu -D name=web,vcpus=2,workload=cpu -D name=db,vcpus=1
# a long interval: one snapshot stays current for several requests
start_agent --interval 3s
[ -n "${AGENT:-}" ] && curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up: $(cat "$T/agent.log")"

# ---- gzip ------------------------------------------------------------------------
# plain, gzip, plain: when both plain ones are the same bytes they are one
# snapshot's (its counts are as of the snapshot), and so is the gzip one
same=
for _ in $(seq 1 10); do
    curl -sf -o "$T/plain1" "$URL/metrics"
    curl -sf -D "$T/gz.headers" -o "$T/metrics.gz" -H 'Accept-Encoding: gzip' "$URL/metrics"
    curl -sf -o "$T/plain2" "$URL/metrics"
    cmp -s "$T/plain1" "$T/plain2" && same=1 && break
done
[ -n "$same" ] || fail "no two scrapes of one snapshot in 10 tries"
grep -qi '^Content-Encoding: gzip' "$T/gz.headers" || fail "no Content-Encoding: gzip: $(cat "$T/gz.headers")"
grep -qi '^Vary: Accept-Encoding' "$T/gz.headers" || fail "no Vary: Accept-Encoding"
gzip -t "$T/metrics.gz" || fail "not a valid gzip stream"
gzip -dc "$T/metrics.gz" | cmp -s - "$T/plain1" || fail "the gzip scrape does not decode to the plain exposition"
plain_size=$(stat -c %s "$T/plain1")
gz_size=$(stat -c %s "$T/metrics.gz")
[ "$gz_size" -lt $((plain_size / 4)) ] || fail "gzip $gz_size bytes of $plain_size"
pass "gzip decodes to exactly the plain exposition of the same snapshot ($plain_size -> $gz_size bytes)"

# curl's own decoding, OpenMetrics and JSON too
curl -sf --compressed -o "$T/decoded" "$URL/metrics" && promtool check metrics <"$T/decoded" ||
    fail "curl --compressed /metrics"
curl -sf -H 'Accept-Encoding: gzip' -H 'Accept: application/openmetrics-text' "$URL/metrics" | gzip -dc |
    tail -1 | grep -qx '# EOF' || fail "OpenMetrics gzipped"
curl -sf -H 'Accept-Encoding: gzip' "$URL/api/v1/snapshot" | gzip -dc |
    python3 -c 'import json,sys; json.load(sys.stdin)' || fail "JSON gzipped"
pass "curl --compressed, OpenMetrics and JSON gzipped"

# ---- uncompressed answers, rendered as they are sent ------------------------------
# HEAD: the headers of a GET, and no renderer started for a body nobody reads
curl -sf -I -o /dev/null -D "$T/head.headers" "$URL/metrics" || fail "HEAD /metrics failed"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$T/head.headers" || fail "HEAD: $(cat "$T/head.headers")"
# six at once (more than the agent renders as it sends): each complete and
# valid, never cut short (beyond four, the text made whole serves them)
pids=
for i in 1 2 3 4 5 6; do
    curl -s -o "$T/par.$i" -w '%{http_code}' "$URL/metrics" >"$T/par.$i.code" &
    pids="$pids $!"
done
# shellcheck disable=SC2086
wait $pids
ok=0
for i in 1 2 3 4 5 6; do
    code=$(cat "$T/par.$i.code")
    case $code in
    # the last family is rendered last, whether it has samples or not
    200) grep -q '^# TYPE xenstats_pv_text_info gauge$' "$T/par.$i" && [ "$(tail -c 1 "$T/par.$i" | od -An -c | tr -d ' ')" = '\n' ] ||
             fail "answer $i is cut short: $(tail -c 200 "$T/par.$i")"
         promtool check metrics <"$T/par.$i" >/dev/null 2>&1 ||
             fail "answer $i is not a valid exposition: $(promtool check metrics <"$T/par.$i" 2>&1 | head -3)"
         ok=$((ok + 1)) ;;
    *) fail "answer $i: HTTP $code" ;;
    esac
done
pass "uncompressed: HEAD answers headers only; $ok of 6 concurrent scrapes complete and valid"

# what Accept-Encoding asks for, and what is sent
encoding() {
    curl -sf -D - -o /dev/null -H "Accept-Encoding: $1" "$URL/metrics" | tr -d '\r' |
        sed -n 's/^[Cc]ontent-[Ee]ncoding: //p'
}
for ask in 'gzip' 'GZIP' 'x-gzip' 'deflate, gzip;q=0.5' '*' 'br;q=1, *;q=0.1' 'gzip ; q=1.000'; do
    [ "$(encoding "$ask")" = gzip ] || fail "Accept-Encoding: $ask: not gzipped"
done
for ask in 'identity' 'gzip;q=0' 'gzip; q=0.000, identity' 'gzip;q=0, *' '*;q=0' 'deflate' 'gzip;q=2' \
    'gzip;q=' 'gzip;q=0.0001' 'gzipx'; do
    [ -z "$(encoding "$ask")" ] || fail "Accept-Encoding: '$ask': gzipped"
done
curl -sf -D - -o /dev/null "$URL/metrics" | grep -qi '^Vary: Accept-Encoding' || fail "no Vary on plain responses"
pass "Accept-Encoding: gzip, x-gzip, * and weights; q=0 and nonsense mean identity"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"

# ---- /healthz ----------------------------------------------------------------------
# healthz_until CODE TRIES PAUSE: ask /healthz until it answers CODE, at most
# TRIES times PAUSE seconds apart; the last status in $code, its body in
# $T/health, for the caller to check (under set -e it never fails itself)
healthz_until() {
    code=
    for _ in $(seq 1 "$2"); do
        code=$(curl -s -m 2 -o "$T/health" -w '%{http_code}' "$URL/healthz" || true)
        [ "$code" = "$1" ] && break
        sleep "$3"
    done
}
start_agent
curl -sf "$URL/healthz" | grep -qx ok || fail "healthz not ok"
# the domains cannot be listed while their folder is away
mv "$XENSTATS_EMU_DIR/domains" "$XENSTATS_EMU_DIR/domains.away"
healthz_until 503 50 0.1
mv "$XENSTATS_EMU_DIR/domains.away" "$XENSTATS_EMU_DIR/domains"
[ "$code" = 503 ] || fail "healthz $code while the domains cannot be listed"
grep -q '^cannot list domains: ' "$T/health" || fail "healthz reason: $(cat "$T/health")"
pass "/healthz 503 while domains cannot be listed: $(cat "$T/health")"
healthz_until 200 50 0.1
[ "$code" = 200 ] && grep -qx ok "$T/health" || fail "healthz not ok once listed again"
pass "/healthz 200 once the domains are listed again"

# the emulated host freezes: rounds stop completing
kill -STOP "$EMU_PID"
healthz_until 503 40 0.2
kill -CONT "$EMU_PID"
[ "$code" = 503 ] || fail "healthz $code with the host frozen"
grep -q '^stalled: no sampling round has completed for ' "$T/health" || fail "healthz reason: $(cat "$T/health")"
pass "/healthz 503 with the host frozen: $(cat "$T/health")"
healthz_until 200 50 0.1
[ "$code" = 200 ] && grep -qx ok "$T/health" || fail "healthz not ok once the host thawed"
pass "/healthz 200 once the host runs again"

# the emulated host stops, and starts again
stop_emu || true
healthz_until 503 50 0.1
[ "$code" = 503 ] || fail "healthz $code with the host gone"
grep -Eq '^(lost the host|cannot list domains): ' "$T/health" || fail "healthz reason: $(cat "$T/health")"
kill -0 "$AGENT" 2>/dev/null || fail "the agent exited with the host gone: $(tail -3 "$T/agent.log")"
curl -sf -o /dev/null "$URL/metrics" || fail "/metrics not served with the host gone"
pass "/healthz 503 with the host gone: $(cat "$T/health"); the last sample still served"
start_emu -D name=web,vcpus=2 -D name=back,vcpus=1
healthz_until 200 100 0.1
[ "$code" = 200 ] && grep -qx ok "$T/health" || fail "healthz not ok with the host back: $(tail -3 "$T/agent.log")"
for _ in $(seq 1 30); do
    curl -sf "$URL/metrics" | grep -q 'domain="back"' && break
    sleep 0.2
done
curl -sf "$URL/metrics" | grep -q 'xenstats_domain_info{domid="2",domain="back"' || fail "the new host's domains"
pass "/healthz 200 when the host is back, and its domains sampled"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"

# ---- --web-config: errors ------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null ||
    fail "openssl req"
hash=$(htpasswd -nbBC 10 prometheus 'c0rrect horse' | cut -d: -f2-)
case "$hash" in '$2y$10$'*) ;; *) fail "htpasswd made '$hash'" ;; esac

# bad_config WHAT EXPECTED < FILE: the agent refuses FILE, exit 2, saying EXPECTED
bad_config() {
    local what=$1 want=$2 rc=0 out
    cat >"$T/bad.yml"
    out=$("$XENSTATS" agent --listen 127.0.0.1:1 --web-config "$T/bad.yml" 2>&1) || rc=$?
    [ "$rc" -eq 2 ] || fail "$what: exit status $rc (want 2): $out"
    case "$out" in
    *"$want"*) ;;
    *) fail "$what: '$out' lacks '$want'" ;;
    esac
    pass "--web-config $what: exit 2, \"${out#*bad.yml: }\""
}
bad_config "unknown key" "line 3: unknown key 'cert_fil' in tls_server_config" <<YML
tls_server_config:
  key_file: key.pem
  cert_fil: cert.pem
YML
bad_config "unknown top-level key" "line 2: unknown key 'basic_auth_user'" <<YML
# a comment
basic_auth_user:
  prometheus: '$hash'
YML
bad_config "unsupported key" "line 4: tls_server_config.cipher_suites is not supported" <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
  cipher_suites: [TLS_AES_128_GCM_SHA256]
YML
bad_config "not YAML" "not YAML" <<YML
tls_server_config:
 cert_file: "cert.pem
YML
bad_config "not a bcrypt hash" "line 2: basic_auth_users: prometheus: expected a bcrypt hash" <<YML
basic_auth_users:
  prometheus: secret
YML
bad_config "a key given twice" "line 3: tls_server_config: 'cert_file' is given twice" <<YML
tls_server_config:
  cert_file: cert.pem
  cert_file: cert.pem
  key_file: key.pem
YML
bad_config "cert without key" "cert_file and key_file are both needed" <<YML
tls_server_config:
  cert_file: cert.pem
YML
bad_config "a TLS version" "line 4: min_version: expected TLS10, TLS11, TLS12 or TLS13" <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
  min_version: SSL3
YML
bad_config "a missing key file" "key_file $T/missing.pem: No such file or directory" <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: missing.pem
YML
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=other \
    -keyout "$T/other.key" -out "$T/other.pem" 2>/dev/null || fail "openssl req"
bad_config "a key that is not the certificate's" "The certificate and the given key do not match" <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: other.key
YML
printf -- '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n' >"$T/junk.pem"
bad_config "a PEM GnuTLS cannot read" "cert_file $T/junk.pem: " <<YML
tls_server_config:
  cert_file: junk.pem
  key_file: key.pem
YML
printf -- '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' >"$T/junk.key"
bad_config "a key GnuTLS cannot read" "key_file $T/junk.key: " <<YML
tls_server_config:
  cert_file: cert.pem
  key_file: junk.key
YML
bad_config "not a mapping" "line 1: the configuration: expected a mapping" <<YML
- tls_server_config
YML
rc=0
out=$("$XENSTATS" agent --web-config "$T/none.yml" 2>&1) || rc=$?
[ "$rc" -eq 2 ] && [[ "$out" == *"none.yml: No such file"* ]] || fail "a missing --web-config: $rc $out"
pass "a missing --web-config file: exit 2"

# ---- TLS and basic auth -----------------------------------------------------------
other=$(htpasswd -nbBC 4 other 'pw' | cut -d: -f2-)
cat >"$T/web.yml" <<YML
# as node_exporter takes it; file names relative to this file
tls_server_config:
  cert_file: cert.pem
  key_file: "key.pem"
  min_version: TLS12
basic_auth_users:
  prometheus: '$hash'
  other: $other
YML
AGENT_SCHEME=https
AGENT_CURL=(--cacert "$T/cert.pem" -u 'prometheus:c0rrect horse')
start_agent --web-config "$T/web.yml"
curl -sf "${AGENT_CURL[@]}" "$URL/healthz" | grep -qx ok || fail "TLS + basic auth: $(cat "$T/agent.log")"
grep -q "serving https://127.0.0.1:$port/metrics with basic auth" "$T/agent.log" || fail "log: $(cat "$T/agent.log")"
curl -sf "${AGENT_CURL[@]}" "$URL/metrics" | grep -q '^xenstats_vcpu_runstate_seconds_total{domid="1",domain="web"' ||
    fail "/metrics over TLS"
pass "TLS with a self-signed certificate, basic auth with an htpasswd bcrypt hash: 200"

# status_of CURL_ARGS...: the status of a request; a 429 (the bcrypt budget
# spent by the checks before, 4 at once then 2 a second) is tried again
status_of() {
    local code
    for _ in 1 2 3 4 5; do
        code=$(curl -s --cacert "$T/cert.pem" -o "$T/body" -D "$T/headers" -w '%{http_code}' "$@")
        [ "$code" = 429 ] || break
        sleep 1
    done
    echo "$code"
}
[ "$(status_of "$URL/metrics")" = 401 ] || fail "no credentials: $(cat "$T/headers")"
grep -qi '^WWW-Authenticate: Basic realm="xenstats"' "$T/headers" || fail "no WWW-Authenticate: $(cat "$T/headers")"
pass "no credentials: 401 with WWW-Authenticate: Basic realm=\"xenstats\""
[ "$(status_of -u 'prometheus:wrong' "$URL/metrics")" = 401 ] || fail "wrong password"
[ "$(status_of -u 'nobody:c0rrect horse' "$URL/metrics")" = 401 ] || fail "unknown user"
[ "$(status_of -u 'other:c0rrect horse' "$URL/metrics")" = 401 ] || fail "another user's password"
[ "$(status_of -H 'Authorization: Bearer x' "$URL/metrics")" = 401 ] || fail "another scheme"
[ "$(status_of -H 'Authorization: Basic !!!!' "$URL/metrics")" = 401 ] || fail "bad base64"
[ "$(status_of -u 'other:pw' "$URL/healthz")" = 200 ] || fail "the other user"
pass "wrong password, unknown user, another user's password, another scheme, bad base64: 401"

# a flood of wrong passwords: bcrypt runs are budgeted (429 beyond), and a
# scraper whose password was verified before is answered all along
python3 - "$port" "$T/cert.pem" <<'PY' || fail "flood"
import base64, http.client, ssl, sys, threading, time
port, ca = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=ca)
def get(user, pw):
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    auth = base64.b64encode(f"{user}:{pw}".encode()).decode()
    t = time.monotonic()
    c.request("GET", "/healthz", headers={"Authorization": "Basic " + auth})
    status = c.getresponse().status
    c.close()
    return status, time.monotonic() - t
codes, stop = {}, threading.Event()
def flood(n):
    i = 0
    while not stop.is_set():
        s, _ = get("prometheus", f"guess{n}-{i}")
        codes[s] = codes.get(s, 0) + 1
        i += 1
threads = [threading.Thread(target=flood, args=(n,)) for n in range(4)]
for t in threads:
    t.start()
worst, ok = 0.0, 0
t0 = time.monotonic()
while time.monotonic() - t0 < 3:
    s, dt = get("prometheus", "c0rrect horse")
    assert s == 200, s
    ok += 1
    worst = max(worst, dt)
    time.sleep(0.1)
stop.set()
for t in threads:
    t.join()
wrong = codes.get(401, 0)
print(f"flood: {codes}; the scraper: {ok} x 200, worst {worst * 1000:.0f} ms")
assert codes.get(429, 0) > 0, codes
# 4 at once, then 2 a second: at most about 4 + 2 * 3.5 bcrypt runs
assert wrong <= 14, codes
assert worst < 1.0, worst
PY
pass "a flood of wrong passwords: bcrypt budgeted (429 beyond), the remembered scraper answered"

# after a restart nothing is remembered: a flood from another address
# (127.0.0.2), as fast as plain HTTP goes, spends its own budget, and a
# scraper's first check, and every one after, is answered 200 (issue 29:
# 429 on every scrape)
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"
printf 'basic_auth_users:\n  prometheus: %s\n' "'$hash'" >"$T/auth-only.yml"
AGENT_SCHEME=http
AGENT_CURL=(-u 'prometheus:c0rrect horse')
start_agent --web-config "$T/auth-only.yml"
python3 - "$port" <<'PY' || fail "flood from another address"
import base64, http.client, sys, threading, time
port = int(sys.argv[1])
def get(user, pw, source):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    auth = base64.b64encode(f"{user}:{pw}".encode()).decode()
    try:
        c.request("GET", "/healthz", headers={"Authorization": "Basic " + auth})
        return c.getresponse().status
    except (http.client.HTTPException, OSError) as e:
        return type(e).__name__
    finally:
        c.close()
codes, stop = {}, threading.Event()
def flood(n):
    i = 0
    while not stop.is_set():
        s = get("prometheus", f"guess{n}-{i}", "127.0.0.2")
        codes[s] = codes.get(s, 0) + 1
        i += 1
threads = [threading.Thread(target=flood, args=(n,)) for n in range(8)]
for t in threads:
    t.start()
time.sleep(1)  # the flood has spent its budget
# the scraper keeps its connection open, as Prometheus does
scraper = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.1", 0))
auth = base64.b64encode(b"prometheus:c0rrect horse").decode()
got = []
t0 = time.monotonic()
while time.monotonic() - t0 < 5:
    scraper.request("GET", "/healthz", headers={"Authorization": "Basic " + auth})
    r = scraper.getresponse()
    r.read()
    got.append(r.status)
    time.sleep(0.2)
scraper.close()
stop.set()
for t in threads:
    t.join()
print(f"flood from 127.0.0.2: {codes}; the scraper from 127.0.0.1: {got}")
assert codes.get(429, 0) > 0, codes
assert all(s == 200 for s in got), got
PY
pass "after a restart, a flood from another address: the scraper's every scrape 200"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"
AGENT_SCHEME=https
AGENT_CURL=(--cacert "$T/cert.pem" -u 'prometheus:c0rrect horse')
start_agent --web-config "$T/web.yml"

# plain HTTP on the TLS port fails cleanly, and TLS still works after
rc=0
timeout 10 curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "plain HTTP on the TLS port: curl exit $rc"
timeout 10 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=8)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
assert b"xenstats_" not in data, data[:200]
' "$port" || fail "plain HTTP on the TLS port: no clean close"
kill -0 "$AGENT" 2>/dev/null || fail "agent died: $(tail -3 "$T/agent.log")"
curl -sf "${AGENT_CURL[@]}" "$URL/healthz" | grep -qx ok || fail "TLS after plain HTTP"
pass "plain HTTP on the TLS port: the connection closes (curl exit $rc), the agent serves TLS on"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"

# ---- client certificates ------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=xenstats-test-ca \
    -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null || fail "CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=scraper \
    -keyout "$T/client.key" -out "$T/client.csr" 2>/dev/null &&
    openssl x509 -req -in "$T/client.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
        -out "$T/client.pem" 2>/dev/null || fail "client certificate"
cat >"$T/mtls.yml" <<YML
tls_server_config:
  cert_file: $T/cert.pem
  key_file: $T/key.pem
  client_ca_file: ca.pem
  client_auth_type: RequireAndVerifyClientCert
YML
AGENT_CURL=(--cacert "$T/cert.pem" --cert "$T/client.pem" --key "$T/client.key")
start_agent --web-config "$T/mtls.yml"
curl -sf "${AGENT_CURL[@]}" "$URL/healthz" | grep -qx ok || fail "client certificate: $(cat "$T/agent.log")"
code=$(curl -s --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' "$URL/healthz") || true
[ "$code" != 200 ] || fail "no client certificate: 200"
code=$(curl -s --cacert "$T/cert.pem" --cert "$T/cert.pem" --key "$T/key.pem" -o /dev/null -w '%{http_code}' \
    "$URL/healthz") || true
[ "$code" != 200 ] || fail "a client certificate of another CA: 200"
pass "client_ca_file with RequireAndVerifyClientCert: the CA's client in, others out"
# the key purposes, as exporter-toolkit checks them: clientAuth (or any)
# in, a certificate of the CA for server authentication only out
client_cert() { # NAME EXTENDED_KEY_USAGE
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
        -keyout "$T/$1.key" -out "$T/$1.csr" 2>/dev/null &&
        printf 'extendedKeyUsage = %s\n' "$2" >"$T/$1.ext" &&
        openssl x509 -req -in "$T/$1.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
            -extfile "$T/$1.ext" -out "$T/$1.pem" 2>/dev/null || fail "certificate $1"
}
client_cert eku-client clientAuth
client_cert eku-both serverAuth,clientAuth
client_cert eku-server serverAuth
client_cert eku-email emailProtection
for name in eku-client eku-both; do
    code=$(curl -s --cacert "$T/cert.pem" --cert "$T/$name.pem" --key "$T/$name.key" -o /dev/null \
        -w '%{http_code}' "$URL/healthz") || true
    [ "$code" = 200 ] || fail "$name: HTTP $code"
done
for name in eku-server eku-email; do
    code=$(curl -s --cacert "$T/cert.pem" --cert "$T/$name.pem" --key "$T/$name.key" -o "$T/body" \
        -w '%{http_code}' "$URL/healthz") || true
    [ "$code" = 403 ] && grep -q 'not for TLS client authentication' "$T/body" ||
        fail "$name: HTTP $code, $(cat "$T/body" 2>/dev/null)"
done
pass "client certificates for clientAuth in; for serverAuth or emailProtection only: 403"
kill "$AGENT"
wait "$AGENT" || fail "agent exit status $?"
echo "1..$CHECKS"
