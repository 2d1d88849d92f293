#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Grant tables and event channels of `xenstats emu` between real processes
# of different domains (tests/hyper/hyper_check.c does the work).
# Usage: test_hyper.sh HYPER_CHECK grants|evtchn|hostile|leak
. "$(dirname "$0")/../integration/lib.sh"

check=$1
what=$2
# A sanitizer build: memory is judged by LeakSanitizer at exit, not RSS.
if grep -q __asan_init "$XENSTATS" 2>/dev/null; then
    export HYPER_SANITIZED=1
fi
start_emu -D name=guest1 -D name=guest2
[ -S "$XENSTATS_EMU_DIR/hypercall/0" ] && [ -S "$XENSTATS_EMU_DIR/hypercall/2" ] || fail "hypercall sockets missing"
pass "a hypercall socket per domain"

"$check" "$what" || fail "hyper_check $what"

if [ "$what" = grants ]; then
    # a destroyed domain's grants die with it; the socket goes
    "$XENSTATS" emu destroy 2
    [ ! -e "$XENSTATS_EMU_DIR/hypercall/2" ] || fail "hypercall socket of a destroyed domain remains"
    pass "destroying a domain removes its hypercall socket"
fi
kill -0 "$EMU_PID" || fail "emulator died"
stop_emu || fail "emulator exit status"
[ ! -e "$XENSTATS_EMU_DIR/hypercall" ] || fail "hypercall directory left behind"
pass "clean shutdown"
