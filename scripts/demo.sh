#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo: install what is needed, build, start an emulated Xen host with a
# few domains of different workloads, and show their live statistics until
# Ctrl-C (or for DEMO_SECONDS seconds), then stop everything cleanly.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
    meson setup build >/dev/null
fi
ninja -C build >/dev/null

XENSTATS=$PWD/build/xenstats
export XENSTATS_EMU_DIR=${XENSTATS_EMU_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/xenstats-demo.XXXXXX")}
interval=${DEMO_INTERVAL:-2}

pids=()
stop() {
    trap - INT TERM EXIT
    echo
    echo "demo: stopping"
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$XENSTATS_EMU_DIR"
    exit 0
}
trap stop INT TERM EXIT

"$XENSTATS" emu -p 2 \
    -D name=web,vcpus=2,workload=cpu \
    -D name=db,vcpus=2,workload=io \
    -D name=batch,vcpus=3,workload=mixed,offline=1 \
    -D name=idle,vcpus=1,workload=idle &
pids+=($!)
for _ in $(seq 1 100); do
    [ -S "$XENSTATS_EMU_DIR/control" ] && break
    sleep 0.05
done

echo "demo: emulated Xen host in $XENSTATS_EMU_DIR with these domains:"
"$XENSTATS" emu list
echo "demo: live vCPU statistics every ${interval}s (Ctrl-C stops)"
echo "demo: try in another shell: XENSTATS_EMU_DIR=$XENSTATS_EMU_DIR $XENSTATS vcpu --interval 1s web"

end=$(( $(date +%s) + ${DEMO_SECONDS:-0} ))
while :; do
    sleep "$interval"
    [ -t 1 ] && clear
    date '+%H:%M:%S'
    for d in web db batch idle; do
        "$XENSTATS" vcpu "$d" || true
        echo
    done
    if [ "${DEMO_SECONDS:-0}" -gt 0 ] && [ "$(date +%s)" -ge "$end" ]; then
        break
    fi
done
