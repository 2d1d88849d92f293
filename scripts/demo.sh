#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo: install what is needed, build, start an emulated Xen host with a
# few domains of different workloads, run the guest agent (`xenstats
# publish`) in each guest, start the dom0 agent, and show `xenstats top`
# (batch snapshots when there is no terminal) until Ctrl-C, or for
# DEMO_SECONDS seconds.  Everything stops cleanly on exit.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
    meson setup build >/dev/null
fi
ninja -C build >/dev/null

XENSTATS=$PWD/build/xenstats
PORT=${DEMO_PORT:-9740}
export XENSTATS_EMU_DIR=${XENSTATS_EMU_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/xenstats-demo.XXXXXX")}
LOGS=$XENSTATS_EMU_DIR.logs
mkdir -p "$LOGS"

pids=()
stop() {
    trap - INT TERM EXIT
    echo
    echo "demo: stopping (guests withdraw their statistics, the agent and the host stop)"
    # guest agents first so they withdraw while the agent still monitors
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${pids[$i]}" 2>/dev/null || true
        wait "${pids[$i]}" 2>/dev/null || true
    done
    rm -rf "$XENSTATS_EMU_DIR"
    echo "demo: logs are in $LOGS"
    exit 0
}
trap stop INT TERM EXIT

"$XENSTATS" emu -p 2 --memory 16G --dom0-memory 2G \
    -D name=web,vcpus=2,workload=cpu,memory=1G,maxmem=2G \
    -D name=db,vcpus=2,workload=io,memory=4G \
    -D name=batch,vcpus=3,workload=mixed,offline=1,memory=2G \
    -D name=idle,vcpus=1,workload=idle,memory=512M >"$LOGS/emu.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    [ -S "$XENSTATS_EMU_DIR/control" ] && break
    sleep 0.05
done

# the dom0 agent: it also creates each guest's `stats` node
"$XENSTATS" agent --listen "127.0.0.1:$PORT" >"$LOGS/agent.log" 2>&1 &
agent=$!
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    kill -0 "$agent" 2>/dev/null || { cat "$LOGS/agent.log"; exit 1; }
    sleep 0.1
done

# the guest agent in every guest (domids 1..4); one custom set in "web"
cat >"$LOGS/web-app.stats" <<'STATS'
# a custom set: the application's own figures
[web app]
u64    requests_total 1234
ascii  version        demo-1.0
STATS
for domid in 1 2 3 4; do
    extra=()
    [ "$domid" = 1 ] && extra=(--custom "$LOGS/web-app.stats")
    XENSTATS_EMU_DOMID=$domid "$XENSTATS" publish "${extra[@]}" >"$LOGS/publish-$domid.log" 2>&1 &
    pids+=($!)
done
pids=("${pids[0]}" "$agent" "${pids[@]:1}")

echo "demo: emulated Xen host in $XENSTATS_EMU_DIR; domains:"
"$XENSTATS" emu list
echo "demo: metrics at http://127.0.0.1:$PORT/metrics  (JSON: /api/v1/snapshot)"
echo "demo: Ctrl-C stops everything"
sleep 2

top_args=(--url "http://127.0.0.1:$PORT" --sort running)
if [ "${DEMO_SECONDS:-0}" -gt 0 ]; then
    top_args+=(--iterations "$DEMO_SECONDS")
fi
if [ -t 1 ] && [ "${DEMO_SECONDS:-0}" -eq 0 ]; then
    "$XENSTATS" top "${top_args[@]}" || true
else
    "$XENSTATS" top --batch --delay 1s "${top_args[@]}" || true
    [ "${DEMO_SECONDS:-0}" -gt 0 ] || wait
fi
