#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats top --batch` against a fixture server: the computed shares, the
# escaping of guest strings, sorting, and clear errors.
. "$XENSTATS_SOURCE_ROOT/tests/top/top_lib.sh"

expect_fail "bad delay" "--delay" "$XENSTATS" top --delay 1ms
expect_fail "bad iterations" "--iterations" "$XENSTATS" top --iterations 0
expect_fail "-n is xentop's" "top's is --iterations" "$XENSTATS" top -b -n 1
expect_fail "-x is xentop's" "top's is --xentop" "$XENSTATS" top -b -x
expect_fail "-r is xentop's" "top's is --reverse" "$XENSTATS" top -b -r
expect_fail "bad sort key" "--sort cpu: unknown key" "$XENSTATS" top --sort cpu
expect_fail "url and direct" "exclude each other" "$XENSTATS" top --direct --url http://127.0.0.1:1
expect_fail "https url" "https is not supported" "$XENSTATS" top --url https://127.0.0.1:9740
expect_fail "extra argument" "unexpected argument" "$XENSTATS" top 7
"$XENSTATS" top --help | grep -q -- "--iterations N" || fail "--help"
pass "options"

port=$(dead_port)
expect_fail "agent unreachable" "cannot reach the agent at http://127.0.0.1:$port" \
    "$XENSTATS" top -b --iterations 1 --url "http://127.0.0.1:$port"
out=$("$XENSTATS" top -b --iterations 1 --url "http://127.0.0.1:$port" 2>&1 || true)
case "$out" in *"xenstats agent"*) pass "says how to start the agent" ;; *) fail "no hint: $out" ;; esac

start_server
expect_fail "not JSON" "bad snapshot from $SERVER_URL/garbage: snapshot: not JSON" \
    "$XENSTATS" top -b --iterations 1 --url "$SERVER_URL/garbage"
expect_fail "contract broken" "domains[0].domid: expected an integer" \
    "$XENSTATS" top -b --iterations 1 --url "$SERVER_URL/wrongtype"
expect_fail "HTTP error" "HTTP status 404" "$XENSTATS" top -b --iterations 1 --url "$SERVER_URL/nothing"

out="$XENSTATS_TEST_TMP/batch.txt"
"$XENSTATS" top --batch --delay 100ms --iterations 3 --url "$SERVER_URL/good" >"$out" 2>"$XENSTATS_TEST_TMP/err" ||
    fail "batch: $(cat "$XENSTATS_TEST_TMP/err")"
[ "$(grep -c '^ DOMID NAME' "$out")" -eq 3 ] || fail "3 iterations, each with a header: $(cat "$out")"
[ "$(grep -c '^# time 20[0-9-]*T[0-9:.]*Z$' "$out")" -eq 3 ] || fail "a time line per iteration: $(cat "$out")"
[ "$(wc -l <"$out")" -eq 15 ] || fail "a time, a header and 3 domains per iteration: $(cat "$out")"
pass "batch prints --iterations snapshots"

# Every iteration shows the exact shares of the fixture's rates.
# Columns are found by their header, so new columns do not move the checks.
awk '/^#/ { next }
     $1 ~ /^DOMID/ { for (i = 1; i <= NF; i++) { h = $i; sub(/\*$/, "", h); c[h] = i }; next }
     $1 == 1 { if ($2 != "web" || $c["VCPUS"] != 2 || $c["RUN%"] != "50.0" || $c["WAIT%"] != "25.0" ||
                   $c["BLOCK%"] != "25.0" || $c["OFF%"] != "0.0" || $c["CHG/S"] != "20.0" ||
                   $c["SETS"] != 1 || $c["WORST"] != "active") bad = 1; n++ }
     $1 == 2 { if ($2 != "db" || $c["RUN%"] != "20.0" || $c["WAIT%"] != "0.0" || $c["BLOCK%"] != "80.0" ||
                   $c["CHG/S"] != "4.0" || $c["WORST"] != "rejected") bad = 1 }
     $1 == 5 { if ($c["OFF%"] != "100.0" || $c["RUN%"] != "0.0") bad = 1 }
     END { exit bad || n != 3 }' "$out" || fail "shares: $(cat "$out")"
pass "shares of the interval from two snapshots"

grep -q '^     5 evil\\x1b\[2J\\x1b\]0;pwned\\x07name ' "$out" || fail "hostile name not escaped: $(cat -v "$out")"
if LC_ALL=C grep -q "$(printf '\033')" "$out"; then fail "an escape character reached the output"; fi
pass "guest strings are escaped"

"$XENSTATS" top -b --iterations 1 -d 100ms --sort running --url "$SERVER_URL/good" >"$out"
[ "$(awk 'NR > 2 { printf "%s ", $1 }' "$out")" = "1 2 5 " ] || fail "sort running: $(cat "$out")"
"$XENSTATS" top -b --iterations 1 -d 100ms --sort running --reverse --url "$SERVER_URL/good" >"$out"
[ "$(awk 'NR > 2 { printf "%s ", $1 }' "$out")" = "5 2 1 " ] || fail "sort running reversed: $(cat "$out")"
"$XENSTATS" top -b --iterations 1 -d 100ms --sort blocked --url "$SERVER_URL/good" >"$out"
[ "$(awk 'NR > 2 { printf "%s ", $1 }' "$out")" = "2 1 5 " ] || fail "sort blocked: $(cat "$out")"
pass "sort keys"

# Not a terminal: batch without asking.
"$XENSTATS" top --iterations 1 -d 100ms --url "$SERVER_URL/good" </dev/null | grep -q '^ DOMID NAME' || fail "auto batch"
pass "batch when stdout is not a terminal"

# A snapshot that never changes: say so instead of printing empty intervals.
expect_fail "agent not sampling" "did not change" \
    timeout 20 "$XENSTATS" top -b --iterations 1 -d 100ms --url "$SERVER_URL/stuck"

# A server that accepts and never answers in time: a timeout, not a hang.
expect_fail "agent too slow" "no complete answer within 5000 ms" "$XENSTATS" top -b --iterations 1 --url "$SERVER_URL/slow"
# ...and SIGTERM cuts the wait short.
"$XENSTATS" top -b --url "$SERVER_URL/slow" >"$out" 2>&1 &
pid=$!
# wait until it is fetching (its connection is up), however slow it starts
# (sanitizer builds on a loaded machine take a while to reach main)
for _ in $(seq 1 100); do
    ls -l "/proc/$pid/fd" 2>/dev/null | grep -q socket && break
    sleep 0.05
done
sleep 0.2
start=$(date +%s%N)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM while fetching: exit $rc: $(cat "$out")"
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 2000 ] || fail "SIGTERM while fetching took over 2 s"
pass "SIGTERM while waiting for the agent"

# SIGTERM ends batch mode cleanly.
"$XENSTATS" top -b -d 100ms --url "$SERVER_URL/good" >"$out" 2>&1 &
pid=$!
sleep 0.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM: exit $rc"
pass "SIGTERM stops batch mode with status 0"
