# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the xenstats top tests: the integration library, plus a fixture
# HTTP server standing in for the agent.  Source it.
. "$XENSTATS_SOURCE_ROOT/tests/integration/lib.sh"

SERVER_PID=
TOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
# lib.sh's cleanup reads the exit status first: keep it through ours.
trap 'rc=$?; stop_server; (exit $rc); cleanup' EXIT

# start_server: run the fixture server; sets SERVER_URL (no path).
start_server() {
    local portfile="$XENSTATS_TEST_TMP/port" i
    python3 "$TOP_DIR/fixture_server.py" "$portfile" 2>"$XENSTATS_TEST_TMP/server.log" &
    SERVER_PID=$!
    for i in $(seq 1 100); do
        [ -s "$portfile" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || fail "fixture server exited: $(cat "$XENSTATS_TEST_TMP/server.log")"
        sleep 0.05
    done
    [ -s "$portfile" ] || fail "fixture server did not start"
    SERVER_URL="http://127.0.0.1:$(cat "$portfile")"
}

# A TCP port nothing listens on (bound then closed).
dead_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Reading the live view in a tmux session named $SESSION:
screen() { tmux capture-pane -p -t "$SESSION"; }

# wait_for TEXT: until the screen shows TEXT (fixed string), at most 10 s.
wait_for() {
    local i
    for i in $(seq 1 100); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    fail "screen lacks '$1':
$(screen)"
}

# wait_gone TEXT: until the screen no longer shows TEXT.
wait_gone() {
    local i
    for i in $(seq 1 100); do
        screen | grep -qF -- "$1" || return 0
        sleep 0.1
    done
    fail "screen still shows '$1':
$(screen)"
}
