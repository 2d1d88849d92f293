# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the integration tests: they run the real binaries against a
# private emulated host.  Source it; it sets `set -eu` and cleans up on exit.
set -eu

: "${XENSTATS:?XENSTATS must name the xenstats binary (meson test sets it)}"
XENSTATS_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/xenstats-test.XXXXXX")
export XENSTATS_EMU_DIR="$XENSTATS_TEST_TMP/emu"
unset XENSTATS_EMU_DOMID
EMU_PID=
CHECKS=0

cleanup() {
    local rc=$?
    # whatever the test left running in the background goes too
    local jobs_left
    jobs_left=$(jobs -p)
    if [ -n "$jobs_left" ]; then
        # shellcheck disable=SC2086
        kill -TERM $jobs_left 2>/dev/null || true
    fi
    if [ -n "$EMU_PID" ] && kill -0 "$EMU_PID" 2>/dev/null; then
        kill -TERM "$EMU_PID" 2>/dev/null || true
        wait "$EMU_PID" 2>/dev/null || true
    fi
    if [ "$rc" -ne 0 ] && [ -f "$XENSTATS_TEST_TMP/emu.log" ]; then
        echo "--- emulator log ---" >&2
        tail -n 50 "$XENSTATS_TEST_TMP/emu.log" >&2
    fi
    rm -rf "$XENSTATS_TEST_TMP"
    exit "$rc"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

pass() {
    CHECKS=$((CHECKS + 1))
    echo "ok $CHECKS - $*"
}

# start_emu ARGS...: start `xenstats emu` in the background and wait until
# it serves its control socket.
start_emu() {
    "$XENSTATS" emu "$@" >"$XENSTATS_TEST_TMP/emu.log" 2>&1 &
    EMU_PID=$!
    local i
    for i in $(seq 1 100); do
        if [ -S "$XENSTATS_EMU_DIR/control" ] && [ -f "$XENSTATS_EMU_DIR/emu.pid" ]; then
            return 0
        fi
        kill -0 "$EMU_PID" 2>/dev/null || fail "emulator exited: $(cat "$XENSTATS_TEST_TMP/emu.log")"
        sleep 0.05
    done
    fail "emulator did not come up"
}

# start_emu_domains N [ARGS...]: start `xenstats emu` (8 pCPUs, 50 ms ticks,
# then ARGS) on $XENSTATS_TEST_TMP/emu.conf, which makes N domains, and wait
# (two minutes at most each) until it serves and has made them all.  For a
# thousand domains, which the emulator makes before it serves: start_emu
# waits 5 s.  They are counted in the run directory, not by `emu list`: a
# control request made while the emulator creates its domains was seen to
# wait for good.
start_emu_domains() {
    local n=$1
    shift
    "$XENSTATS" emu -p 8 --tick 50ms "$@" -c "$XENSTATS_TEST_TMP/emu.conf" >"$XENSTATS_TEST_TMP/emu.log" 2>&1 &
    EMU_PID=$!
    for _ in $(seq 1 600); do
        [ -S "$XENSTATS_EMU_DIR/control" ] && [ -f "$XENSTATS_EMU_DIR/emu.pid" ] && break
        kill -0 "$EMU_PID" 2>/dev/null || fail "emulator exited: $(cat "$XENSTATS_TEST_TMP/emu.log")"
        sleep 0.2
    done
    for _ in $(seq 1 600); do
        [ "$(ls "$XENSTATS_EMU_DIR/domains" | wc -l)" -ge $((n + 1)) ] && break
        sleep 0.2
    done
    [ "$(ls "$XENSTATS_EMU_DIR/domains" | wc -l)" -ge $((n + 1)) ] || fail "the emulator did not create $n domains"
}

# wait_agent_domains N: wait (a minute at most) until the agent that
# start_agent started tracks N domains (dom0 besides: N + 1).
wait_agent_domains() {
    local n=$1
    for _ in $(seq 1 300); do
        curl -sf "$URL/metrics" 2>/dev/null | grep -q "^xenstats_agent_domains $((n + 1))\$" && return 0
        sleep 0.2
    done
    fail "the agent does not see $n domains: $(tail -3 "$XENSTATS_TEST_TMP/agent.log")"
}

stop_emu() {
    [ -n "$EMU_PID" ] || return 0
    kill -TERM "$EMU_PID"
    local rc=0
    wait "$EMU_PID" || rc=$?
    EMU_PID=
    return "$rc"
}

# expect_fail "description" EXPECTED_STDERR_SUBSTRING CMD...: CMD must exit
# non-zero and say EXPECTED on stderr.
expect_fail() {
    local what=$1 want=$2
    shift 2
    local out rc=0
    out=$("$@" 2>&1 >/dev/null) || rc=$?
    [ "$rc" -ne 0 ] || fail "$what: exited 0"
    case "$out" in
    *"$want"*) pass "$what" ;;
    *) fail "$what: stderr '$out' lacks '$want'" ;;
    esac
}

# free_port: a TCP port on loopback nobody listens on now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# prometheus_query TARGET_PORT QUERY: start a real Prometheus server on
# loopback scraping 127.0.0.1:TARGET_PORT every second, wait (30 s at most)
# until QUERY has a value, print it (empty if never), stop the server.
# PROM_JOB_EXTRA, when set, is more of the scrape job's YAML (scheme,
# tls_config, basic_auth), indented by four spaces.
prometheus_query() {
    local target=$1 query=$2 port dir=$XENSTATS_TEST_TMP/prom got= pid
    port=$(free_port)
    mkdir -p "$dir"
    cat >"$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: xenstats
${PROM_JOB_EXTRA:-}
    static_configs:
      - targets: ['127.0.0.1:$target']
YML
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
        --web.listen-address="127.0.0.1:$port" >"$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do
        got=$(curl -sf -G "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=$query" |
            python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' \
                2>/dev/null) || true
        [ -n "$got" ] && break
        sleep 0.5
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
    [ -n "$got" ] || echo "prometheus_query: $(tail -3 "$dir/log")" >&2
    echo "$got"
}

# start_agent [ARGS...]: run `xenstats agent` on a free loopback port (500 ms
# interval, 200 ms provider timeout, then ARGS: a later option wins) and wait
# (10 s at most) until /healthz answers.  With AGENT_SCHEME=https and
# AGENT_CURL (an array of curl options: --cacert, -u) for one with a
# --web-config.  Sets port, URL and AGENT; the log is
# $XENSTATS_TEST_TMP/agent.log.
start_agent() {
    port=$(free_port)
    URL="${AGENT_SCHEME:-http}://127.0.0.1:$port"
    "$XENSTATS" agent --listen "127.0.0.1:$port" --interval 500ms --timeout 200ms "$@" \
        >"$XENSTATS_TEST_TMP/agent.log" 2>&1 &
    AGENT=$!
    for _ in $(seq 1 100); do
        curl -sf ${AGENT_CURL[@]+"${AGENT_CURL[@]}"} "$URL/healthz" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
}

# snap: the agent's (start_agent) one sample's JSON and /metrics (retried until both are of the same sample)
snap() {
    for _ in $(seq 1 20); do
        curl -sf "$URL/api/v1/snapshot" >"$XENSTATS_TEST_TMP/s.json" &&
            curl -sf "$URL/metrics" >"$XENSTATS_TEST_TMP/m.txt" &&
            curl -sf "$URL/api/v1/snapshot" >"$XENSTATS_TEST_TMP/s2.json" &&
            cmp -s "$XENSTATS_TEST_TMP/s.json" "$XENSTATS_TEST_TMP/s2.json" && return 0
        sleep 0.1
    done
    return 1
}

# check WHAT PY: python over the sample (j: JSON, m: {(family, labels): value}, raw: the same with
# the values as written) until it holds, 10 s
check() {
    local what=$1 code=$2
    for _ in $(seq 1 40); do
        snap || fail "no consistent sample"
        python3 - "$XENSTATS_TEST_TMP" "$code" <<'PY' >"$XENSTATS_TEST_TMP/check.out" 2>&1 && return 0
import json, re, sys
d, code = sys.argv[1], sys.argv[2]
j = json.load(open(f"{d}/s.json"))
m, raw = {}, {}
for line in open(f"{d}/m.txt"):
    if line.startswith("#"):
        continue
    mm = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line.rstrip("\n"))
    assert mm, line
    labels = tuple(sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', mm.group(2) or "")))
    m[(mm.group(1), labels)] = float(mm.group(3))
    raw[(mm.group(1), labels)] = mm.group(3)
dom = {x["name"]: x for x in j["domains"]}
def metric(family, **labels):
    return m.get((family, tuple(sorted((k, str(v)) for k, v in labels.items()))))
def dm(family, name, **labels):
    return metric(family, domid=dom[name]["domid"], domain=name, **labels)
def dmraw(family, name, **labels):
    return raw.get((family, tuple(sorted([("domid", str(dom[name]["domid"])), ("domain", name)] +
                                         [(k, str(v)) for k, v in labels.items()]))))
exec(code)
PY
        sleep 0.25
    done
    cat "$XENSTATS_TEST_TMP/check.out" >&2
    fail "$what"
}
