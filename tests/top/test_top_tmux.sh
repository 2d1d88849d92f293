#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The live view of `xenstats top` in a real terminal: tmux runs it at a
# fixed size, keys go in with send-keys, the screen comes back with
# capture-pane.
. "$XENSTATS_SOURCE_ROOT/tests/top/top_lib.sh"

command -v tmux >/dev/null || fail "tmux is not installed (scripts/install-deps.sh)"
start_server
SESSION="xenstats-top-test-$$"
export TMUX_TMPDIR="$XENSTATS_TEST_TMP"
trap 'rc=$?; tmux kill-server 2>/dev/null; stop_server; (exit $rc); cleanup' EXIT

# Rows of the list in screen order: their domids.
domids() { screen | awk 'NR > 2 && $1 ~ /^[0-9]+$/ { printf "%s ", $1 }'; }

# The pane runs this: top, then its exit status, kept on screen.
RUN="$XENSTATS_TEST_TMP/run-top.sh"
cat >"$RUN" <<EOS
#!/bin/bash
export TERM=screen
echo \$\$ >"$XENSTATS_TEST_TMP/top.pid"
"$XENSTATS" top --url "$SERVER_URL/good" --delay 300ms
echo EXITED \$?
sleep 30
EOS
chmod +x "$RUN"
tmux new-session -d -s "$SESSION" -x 150 -y 24 "$RUN"
wait_for "xenstats top - $SERVER_URL/good"
wait_for "DOMID* NAME"
# Shares appear once two snapshots came in.
wait_for "     1 web  "
wait_for "2   50.0   25.0   25.0    0.0    20.0     1 active"
pass "list with the interval's shares"

screen | grep -qF 'evil\x1b[2J\x1b]0;pwned~' || fail "hostile name not escaped or not cut visibly:
$(screen)"
pass "guest names escaped and cut visibly"

[ "$(domids)" = "1 2 5 " ] || fail "domid order: $(domids)"
tmux send-keys -t "$SESSION" b
wait_for "BLOCK%*"
[ "$(domids)" = "2 1 5 " ] || fail "sort by blocked (b): $(domids)"
tmux send-keys -t "$SESSION" r
wait_for "sort blocked reversed"
[ "$(domids)" = "5 1 2 " ] || fail "reversed (r): $(domids)"
tmux send-keys -t "$SESSION" r s
wait_for "OFF%*"
[ "$(domids)" = "5 1 2 " ] || fail "next sort key (s) is offline: $(domids)"
tmux send-keys -t "$SESSION" i
wait_for "DOMID*"
pass "sort keys: column keys, s, r"

# Enter on the second row (db), then back with Esc and q.
tmux send-keys -t "$SESSION" g j Enter
wait_for "domain 2  name db  vCPUs 1"
wait_for "PV stats sets: 1"
wait_for 'Disk / bad\x07set: rejected - bad name page'
tmux send-keys -t "$SESSION" Escape
wait_for "DOMID* NAME"
tmux send-keys -t "$SESSION" k Enter
wait_for "domain 1  name web  vCPUs 2"
wait_for "    1 runnable       50.0       25.0      25.0       0.0       10.0"
wait_for 'driver                           ascii   netfront\x1b[31m'
tmux send-keys -t "$SESSION" q
wait_for "DOMID* NAME"
pass "drill-down: vCPU rows and PV sets with their statistics; Esc and q go back"

tmux send-keys -t "$SESSION" h
wait_for "xenstats top: keys"
tmux send-keys -t "$SESSION" x
wait_for "DOMID* NAME"
pass "help"

# A small screen scrolls instead of hiding rows.
tmux resize-window -t "$SESSION" -x 60 -y 5
wait_for "rows 1-2 of 3"
screen | grep -q '>$' || fail "no marker for text beyond the right edge:
$(screen)"
tmux send-keys -t "$SESSION" G
wait_for "rows 2-3 of 3"
screen | grep -qF "     5 evil" || fail "last row not scrolled into view:
$(screen)"
tmux send-keys -t "$SESSION" Right Right Right Right Right
wait_for "<"
tmux resize-window -t "$SESSION" -x 150 -y 24
wait_gone "rows "
pass "resize and scrolling"

tmux send-keys -t "$SESSION" d
wait_for "Delay (e.g. 2s"
tmux send-keys -t "$SESSION" 2 s Enter
wait_for "delay 2s"
pass "d changes the delay"

tmux send-keys -t "$SESSION" q
wait_for "EXITED 0"
pass "q quits with status 0"

# SIGTERM restores the terminal and exits 0.
rm -f "$XENSTATS_TEST_TMP/top.pid"
tmux respawn-pane -k -t "$SESSION" "$RUN"
wait_for "DOMID* NAME"
# The runner's shell waits for top: signal its child, xenstats itself.
pid=$(pgrep -P "$(cat "$XENSTATS_TEST_TMP/top.pid")" -x xenstats) || fail "top is not running"
kill -TERM "$pid"
wait_for "EXITED 0"
pass "SIGTERM exits cleanly"

# The agent goes away: the last snapshot stays, the error shows, q still quits.
rm -f "$XENSTATS_TEST_TMP/top.pid"
tmux respawn-pane -k -t "$SESSION" "$RUN"
wait_for "2   50.0   25.0   25.0    0.0    20.0     1 active"
stop_server
wait_for "cannot reach the agent at $SERVER_URL/good"
screen | grep -qF "     1 web  " || fail "the last snapshot is gone:
$(screen)"
tmux send-keys -t "$SESSION" q
wait_for "EXITED 0"
pass "agent gone: last snapshot kept, error shown"
