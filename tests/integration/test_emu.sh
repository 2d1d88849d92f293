#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats emu`: options, config file, control commands, clean shutdown.
. "$(dirname "$0")/lib.sh"

expect_fail "bad pcpus" "--pcpus" "$XENSTATS" emu -p 0
expect_fail "bad tick" "--tick" "$XENSTATS" emu -t 5us
expect_fail "bad domain spec" "workload=busy" "$XENSTATS" emu -D name=a,workload=busy
expect_fail "duplicate names" "two domains are named 'a'" "$XENSTATS" emu -D name=a -D name=a
expect_fail "control without emulator" "no emulated host is running" "$XENSTATS" emu list
"$XENSTATS" emu --help | grep -q "Usage: xenstats emu" || fail "--help"
pass "--help"

cat >"$XENSTATS_TEST_TMP/host.conf" <<'CONF'
# an emulated host
pcpus 3
tick 5ms
domain name=web vcpus=4 workload=cpu
domain name=db, vcpus=2, workload=mixed, offline=1
CONF
printf 'pcpus 2\nfrobnicate 1\n' >"$XENSTATS_TEST_TMP/bad.conf"
expect_fail "bad config" "bad.conf:2: unknown setting 'frobnicate'" "$XENSTATS" emu -c "$XENSTATS_TEST_TMP/bad.conf"

start_emu -c "$XENSTATS_TEST_TMP/host.conf" -D name=extra
grep -q "3 pCPUs, tick 5.0 ms" "$XENSTATS_TEST_TMP/emu.log" || fail "config not applied: $(cat "$XENSTATS_TEST_TMP/emu.log")"
list=$("$XENSTATS" emu list)
echo "$list" | grep -q "^1 web 4 cpu 0 yes " || fail "list: $list"
echo "$list" | grep -q "^2 db 2 mixed 1 yes " || fail "list: $list"
echo "$list" | grep -q "^3 extra 1 idle 0 yes " || fail "list: $list"
pass "config file and --domain"

expect_fail "second emulator refused" "already running" "$XENSTATS" emu
[ "$("$XENSTATS" emu create name=late,vcpus=2,workload=io)" = 4 ] || fail "create"
"$XENSTATS" vcpu late >/dev/null || fail "new domain readable"
expect_fail "create duplicate" "a domain named 'web' exists" "$XENSTATS" emu create name=web
expect_fail "create bad spec" "vcpus=0" "$XENSTATS" emu create name=x,vcpus=0
"$XENSTATS" emu destroy 4
expect_fail "destroy twice" "domain 4 does not exist" "$XENSTATS" emu destroy 4
expect_fail "destroy dom0" "Domain-0 cannot be destroyed" "$XENSTATS" emu destroy 0
[ ! -e "$XENSTATS_EMU_DIR/domains/4" ] || fail "destroyed domain's files remain"
pass "create and destroy while running"

# a control client sending garbage or an endless line is answered, and the
# emulator keeps serving
printf 'frobnicate\n' | python3 -c '
import socket, sys, os
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["XENSTATS_EMU_DIR"] + "/control")
s.sendall(b"frobnicate\n"); print(s.recv(200).decode().strip())
s2 = socket.socket(socket.AF_UNIX); s2.connect(os.environ["XENSTATS_EMU_DIR"] + "/control")
s2.sendall(b"x" * 5000); print(s2.recv(200).decode().strip())' >"$XENSTATS_TEST_TMP/ctl.txt"
grep -q "^error EINVAL unknown command" "$XENSTATS_TEST_TMP/ctl.txt" || fail "garbage: $(cat "$XENSTATS_TEST_TMP/ctl.txt")"
grep -q "^error E2BIG" "$XENSTATS_TEST_TMP/ctl.txt" || fail "long line: $(cat "$XENSTATS_TEST_TMP/ctl.txt")"
"$XENSTATS" emu list >/dev/null || fail "emulator stopped serving"
pass "bad control input"

# the mapping of a destroyed domain stays valid for its reader
stop_emu || fail "SIGTERM exit status"
for f in emu.pid control domains; do
    [ ! -e "$XENSTATS_EMU_DIR/$f" ] || fail "$f left behind after shutdown"
done
pass "SIGTERM shuts down cleanly and removes the run directory's files"

# --duration ends the emulator by itself
start_emu --duration 300ms
sleep 1
kill -0 "$EMU_PID" 2>/dev/null && fail "--duration ignored"
EMU_PID=
pass "--duration"
