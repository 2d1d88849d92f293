#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats emu migrate|save|restore|reboot|vcpu-set`: what a guest's
# processes and dom0 see (lifecycle_check), the refusals, vCPUs going
# offline and online, a paused domain's vCPUs, and 20 cycles of each that
# leave the emulator's fds, RSS and grant entries at baseline.
. "$(dirname "$0")/lib.sh"

: "${XENSTATS_LIFECYCLE_CHECK:?meson test sets XENSTATS_LIFECYCLE_CHECK}"
CHECK=$XENSTATS_LIFECYCLE_CHECK
: "${XENSTATS_HOST_PROBE:?meson test sets XENSTATS_HOST_PROBE}"
PROBE=$XENSTATS_HOST_PROBE
export XENSTATS
# A sanitizer build: the emulator's memory is judged by LeakSanitizer at
# its exit (stop_emu's status), not by its RSS.
if grep -q __asan_init "$XENSTATS" 2>/dev/null; then
    export LIFECYCLE_SANITIZED=1
fi
xsread() { XENSTORED_PATH="$XENSTATS_EMU_DIR/xenstore/0" xenstore-read "$@"; }
stat_of() { "$XENSTATS" emu stats | awk -v k="$1" '$1 == k { print $2 }'; }
# the emu list line of domain $1 (a domid)
listed() { "$XENSTATS" emu list | awk -v d="$1" '$1 == d'; }

start_emu -p 2 -D name=g1,vcpus=2,vifs=1,vbds=xvda -D name=g2,vcpus=4,workload=cpu -D name=g3

# --- refusals ---
expect_fail "migrate without a domain" "usage: xenstats emu migrate DOMAIN" "$XENSTATS" emu migrate
expect_fail "restore of an unknown name" "no domain named 'nope' is saved" "$XENSTATS" emu restore nope
expect_fail "save of Domain-0" "Domain-0 cannot be saved" "$XENSTATS" emu save 0
expect_fail "migrate of Domain-0" "Domain-0 cannot be moved" "$XENSTATS" emu migrate Domain-0
expect_fail "migrate of a missing domain" "domain 9 does not exist" "$XENSTATS" emu migrate 9
"$XENSTATS" emu create name=down >/dev/null
"$XENSTATS" emu shutdown down
expect_fail "migrate of a shut-down domain" "is shut down" "$XENSTATS" emu migrate down
expect_fail "save of a shut-down domain" "is shut down" "$XENSTATS" emu save down
"$XENSTATS" emu create name=dying >/dev/null
"$XENSTATS" emu destroy 5 --linger 30s
expect_fail "reboot of a dying domain" "is dying" "$XENSTATS" emu reboot 5
expect_fail "vcpu-set 0" "from 1 to 2" "$XENSTATS" emu vcpu-set g1 0
expect_fail "vcpu-set above vcpus" "from 1 to 2" "$XENSTATS" emu vcpu-set g1 3
expect_fail "vcpu-set usage" "usage: xenstats emu vcpu-set DOMAIN N" "$XENSTATS" emu vcpu-set g1
[ "$(stat_of stale-evtchn-bugs)" = 0 ] || fail "stale-evtchn-bugs before anything moved"

# --- migrate: the devices come back with their counters at zero ---
"$XENSTATS" emu vif-set g1 0 rx_bytes=1000
"$XENSTATS" emu devices | grep -q "^1 vif 0 .* rx_bytes=1000" || fail "vif counter set: $("$XENSTATS" emu devices)"
"$CHECK" migrate g1 1
new=$(listed 6 | awk '{ print $2 }')
[ "$new" = g1 ] || fail "g1 is domain 6: $("$XENSTATS" emu list)"
devs=$("$XENSTATS" emu devices)
echo "$devs" | grep -q "^6 vif 0 " && echo "$devs" | grep -q "^6 vbd 51712 " || fail "same devices: $devs"
echo "$devs" | grep -q "^6 vif 0 .* rx_bytes=1000" && fail "the new backend kept its counters: $devs"
echo "$devs" | grep -q "^1 " && fail "old devices left: $devs"
[ "$(xsread /local/domain/6/name)" = g1 ] && [ "$(xsread /local/domain/6/domid)" = 6 ] || fail "new skeleton"
xsread /local/domain/6/memory/target >/dev/null || fail "memory/target in the new home"
xsread /local/domain/1/name 2>/dev/null && fail "the old home is still there"
[ "$(cat "$XENSTATS_EMU_DIR/moved/1")" = 6 ] || fail "forwarding record moved/1"
pass "migrate: same devices with fresh counters, new home, forwarding record"

# --- save and restore, reboot ---
"$CHECK" save g1 6
"$CHECK" reboot g1 7
[ "$(listed 8 | awk '{ print $2 }')" = g1 ] || fail "g1 is domain 8 after reboot: $("$XENSTATS" emu list)"
pass "save/restore and reboot: domain 7 then 8"

# a saved domain's name while another runs under it
XENSTATS_EMU_DOMID=3 XENSTORED_PATH="$XENSTATS_EMU_DIR/xenstore/3" xenstore-watch data >/dev/null &
watcher=$!
sleep 0.3
"$XENSTATS" emu save g3
# stopped: a signal lands after kill() returns
is_stopped() {
    local i
    for i in $(seq 1 100); do
        grep -q '^State:.*T (stopped)' "/proc/$1/status" && return 0
        sleep 0.01
    done
    return 1
}
is_stopped "$watcher" || fail "xenstore-watch of g3 not stopped"
"$XENSTATS" emu saved | grep -q "^g3 3 1$" || fail "emu saved: $("$XENSTATS" emu saved)"
"$XENSTATS" emu list | grep -q " g3 " && fail "a saved domain is listed"
"$XENSTATS" emu create name=g3 >/dev/null
expect_fail "restore over a running name" "a domain named 'g3' is running" "$XENSTATS" emu restore g3
expect_fail "save of a second g3" "is saved already" "$XENSTATS" emu save g3
"$XENSTATS" emu destroy "$(xsread /local/domain/9/domid)"
out=$("$XENSTATS" emu restore g3)
[ "$out" = "domid 10" ] || fail "restore g3: $out"
sleep 0.1
grep -q '^State:.*T (stopped)' "/proc/$watcher/status" && fail "xenstore-watch still stopped"
kill "$watcher"
pass "save refuses a second image, restore a running name; SIGSTOP and SIGCONT"

# --- vcpu-set ---
"$XENSTATS" emu vcpu-set g2 1
listed 2 | grep -q "^2 g2 4 cpu 3 " || fail "emu list after vcpu-set 1: $(listed 2)"
[ "$(xsread /local/domain/2/cpu/3/availability)" = offline ] || fail "cpu/3/availability"
[ "$(xsread /local/domain/2/cpu/0/availability)" = online ] || fail "cpu/0/availability"
# the states of g2's vCPUs in its statistics region, "0:running 1:offline ..."
vcpu_states() { "$XENSTATS" vcpu g2 | awk '$1 ~ /^[0-9]+$/ { printf "%s:%s ", $1, $2 }'; }
states=$(vcpu_states)
case "$states" in
"0:offline "*) fail "vCPU 0 went offline: $states" ;;
*"1:offline 2:offline 3:offline ") ;;
*) fail "vCPUs 1-3 not offline in the region: $states" ;;
esac
"$PROBE" | awk '$1 == "domain" && $2 == 2 { print $5 }' | grep -qx 1 || fail "online vCPUs through the API: $("$PROBE")"
"$XENSTATS" emu vcpu-set g2 4
listed 2 | grep -q "^2 g2 4 cpu 0 " || fail "emu list after vcpu-set 4: $(listed 2)"
[ "$(xsread /local/domain/2/cpu/3/availability)" = online ] || fail "cpu/3/availability back"
sleep 0.2
states=$(vcpu_states)
case "$states" in
*offline*) fail "a vCPU stayed offline after vcpu-set 4: $states" ;;
esac
pass "vcpu-set down and up in emu list, xenstore, the API and the vCPU statistics"

# a paused domain's vCPUs are never running (Xen: offline or blocked)
"$XENSTATS" emu pause g2
sleep 0.1
states=$(vcpu_states)
case "$states" in
*running* | *runnable*) fail "paused g2's vCPUs: $states" ;;
esac
"$XENSTATS" emu unpause g2
sleep 0.2
vcpu_states | grep -q running || fail "unpaused g2 does not run: $(vcpu_states)"
pass "a paused domain's vCPUs are not running"


# --- 20 cycles of each ---
"$XENSTATS" emu create name=cyc >/dev/null
cyc=$(listed 11 | awk '{ print $1 }')
[ "$cyc" = 11 ] || fail "cyc is domain 11: $("$XENSTATS" emu list)"
"$CHECK" cycles cyc 11 20

stop_emu || fail "emulator exit status"
grep -q "kernel BUG at drivers/xen/evtchn.c:422" "$XENSTATS_TEST_TMP/emu.log" || fail "no log line of the stale unbind"
echo "1..$CHECKS"
