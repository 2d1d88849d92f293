#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats emu` domain state and memory: pause, unpause, shutdown, mem-set,
# memory sizes and the host's memory, each read back through the public API
# (host_probe) and xenstore, and bad input to the new commands.
. "$(dirname "$0")/lib.sh"

: "${XENSTATS_HOST_PROBE:?meson test sets XENSTATS_HOST_PROBE}"
PROBE=$XENSTATS_HOST_PROBE
xsread() { XENSTORED_PATH="$XENSTATS_EMU_DIR/xenstore/0" xenstore-read "$@"; }

# field N of the probe's line for domain DOMID (1 = "domain")
dom_field() {
    "$PROBE" | awk -v d="$1" -v f="$2" '$1 == "domain" && $2 == d { print $f }'
}

expect_fail "bad --memory" "--memory 12Q" "$XENSTATS" emu --memory 12Q
expect_fail "dom0 above host" "--dom0-memory exceeds" "$XENSTATS" emu --memory 1G --dom0-memory 2G
expect_fail "domain above host" "has 1048576K free, it wants 4194304K" \
    "$XENSTATS" emu --memory 2G --dom0-memory 1G -D name=big,memory=4G
expect_fail "bad memory key" "memory=12x: expected a size" "$XENSTATS" emu -D name=a,memory=12x
expect_fail "maxmem below memory" "is below memory" "$XENSTATS" emu -D name=a,memory=1G,maxmem=512M
expect_fail "odd KiB" "whole 4 KiB pages" "$XENSTATS" emu -D name=a,memory=1001K
printf 'memory lots\n' >"$XENSTATS_TEST_TMP/bad.conf"
expect_fail "bad config memory" "bad.conf:1: memory" "$XENSTATS" emu -c "$XENSTATS_TEST_TMP/bad.conf"

printf 'memory 8G\ndomain name=web vcpus=2 workload=cpu memory=512M maxmem=1G\n' >"$XENSTATS_TEST_TMP/host.conf"
start_emu -p 2 -c "$XENSTATS_TEST_TMP/host.conf" --dom0-memory 2G -D name=db,vcpus=1,memory=256M,shared=8K,outstanding=16K
web=1 db=2

out=$("$PROBE")
echo "$out" | grep -q "^host emu emu 2 2400000 8388608 $((8388608 - 2097152 - 524288 - 262144)) 0$" ||
    fail "host figures: $out"
[ "$(echo "$out" | grep -c '^idle ')" = 2 ] || fail "two pCPUs' idle time: $out"
echo "$out" | grep -q "^domain 0 Domain-0 2 2 .* 2097152 - 0 0 00000000-0000-0000-0000-000000000000$" ||
    fail "Domain-0: $out"
echo "$out" | grep -Eq "^domain 1 web 2 2 [r-][b-]---- 0 [0-9]+ 524288 $((1048576 + 1024)) 0 0 [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$" ||
    fail "web: $out"
echo "$out" | grep -Eq "^domain 2 db 1 1 .* 262144 $((262144 + 1024)) 8 16 " || fail "db: $out"
pass "memory sizes, UUIDs and host memory through the API"

uuid=$(dom_field $web 13)
list=$("$XENSTATS" emu list)
echo "$list" | grep -Eq "^1 web 2 cpu 0 yes [r-][b-]---- 524288 524288 1049600 [0-9.]+ $uuid$" || fail "emu list: $list"
[ "$(xsread /local/domain/1/vm)" = "/vm/$uuid" ] || fail "/vm/<uuid> is not the domain's handle"
[ "$(xsread /local/domain/1/memory/target)" = 524288 ] || fail "memory/target"
[ "$(xsread /local/domain/1/memory/static-max)" = 1048576 ] || fail "memory/static-max"
[ "$(xsread /local/domain/0/memory/target)" = 2097152 ] || fail "dom0 memory/target"
pass "emu list, /vm/<uuid>, memory/target and memory/static-max"

# pause: the vCPUs stop, CPU time freezes
"$XENSTATS" emu pause web
[ "$(dom_field $web 6)" = "--p---" ] || fail "paused web: $("$PROBE")"
t1=$(dom_field $web 8)
sleep 0.3
[ "$(dom_field $web 8)" = "$t1" ] || fail "CPU time moved while paused"
"$XENSTATS" emu list | grep -q "^1 web .* --p--- " || fail "emu list while paused"
"$XENSTATS" emu unpause 1
sleep 0.2
[ "$(dom_field $web 6)" = "r-----" ] || fail "unpaused web: $("$PROBE")"
[ "$(dom_field $web 8)" -gt "$t1" ] || fail "CPU time still after unpause"
pass "pause and unpause (by name and domid)"

expect_fail "unpause not paused" "domain 1 is not paused" "$XENSTATS" emu unpause web
expect_fail "pause dom0" "Domain-0 cannot be paused" "$XENSTATS" emu pause 0
expect_fail "pause missing" "domain 9 does not exist" "$XENSTATS" emu pause 9
expect_fail "pause unknown name" "no domain is named 'nope'" "$XENSTATS" emu pause nope
expect_fail "pause no argument" "usage: xenstats emu pause DOMAIN" "$XENSTATS" emu pause
expect_fail "pause two arguments" "usage" "$XENSTATS" emu pause 1 2

# mem-set: the target moves at once, the memory follows
"$XENSTATS" emu mem-set web 256M
[ "$(xsread /local/domain/1/memory/target)" = 262144 ] || fail "mem-set target"
[ "$(dom_field $web 10)" = $((262144 + 1024)) ] || fail "mem-set max: $("$PROBE")"
for _ in $(seq 1 50); do
    [ "$(dom_field $web 9)" = 262144 ] && break
    sleep 0.1
done
[ "$(dom_field $web 9)" = 262144 ] || fail "memory did not reach the target: $("$PROBE")"
"$PROBE" | grep -q "^host emu emu 2 2400000 8388608 $((8388608 - 2097152 - 262144 - 262144)) 0$" ||
    fail "free memory after mem-set: $("$PROBE")"
pass "mem-set moves memory/target, max and memory, and the host's free memory"

expect_fail "mem-set above static-max" "above domain 1's static maximum 1048576K" "$XENSTATS" emu mem-set web 2G
expect_fail "mem-set bad size" "'12x' is not a memory size" "$XENSTATS" emu mem-set web 12x
expect_fail "mem-set zero" "'0' is not a memory size" "$XENSTATS" emu mem-set web 0
expect_fail "mem-set no size" "usage: xenstats emu mem-set DOMAIN SIZE" "$XENSTATS" emu mem-set web

# shutdown: the domain stays listed with its reason until destroyed
"$XENSTATS" emu shutdown db --reason crash
[ "$(dom_field $db 6)" = "---sc-" ] || fail "crashed db: $("$PROBE")"
[ "$(dom_field $db 7)" = 3 ] || fail "shutdown reason crash = 3"
"$XENSTATS" emu list | grep -q "^2 db .* ---sc- " || fail "emu list shut down"
"$XENSTATS" emu shutdown web
[ "$(dom_field $web 6)" = "---s--" ] || fail "powered-off web: $("$PROBE")"
[ "$(dom_field $web 7)" = 0 ] || fail "shutdown reason poweroff = 0"
expect_fail "shutdown twice" "domain 1 is already shut down (poweroff)" "$XENSTATS" emu shutdown web
"$XENSTATS" emu create name=x,memory=4M >/dev/null
expect_fail "shutdown bad reason" "unknown shutdown reason 'nap'" "$XENSTATS" emu shutdown x --reason nap
expect_fail "shutdown dom0" "Domain-0 cannot be shut down" "$XENSTATS" emu shutdown 0
expect_fail "shutdown usage" "usage: xenstats emu shutdown DOMAIN" "$XENSTATS" emu shutdown x --why
for r in reboot suspend watchdog soft_reset; do
    "$XENSTATS" emu create "name=r-$r,memory=4M" >/dev/null
    "$XENSTATS" emu shutdown "r-$r" --reason=$r
done
"$PROBE" | awk '$1 == "domain" && $3 ~ /^r-/ { print $3, $6, $7 }' >"$XENSTATS_TEST_TMP/reasons"
printf 'r-reboot ---s-- 1\nr-suspend ---s-- 2\nr-watchdog ---s-- 4\nr-soft_reset ---s-- 5\n' |
    diff - "$XENSTATS_TEST_TMP/reasons" || fail "shutdown reasons"
"$XENSTATS" emu destroy $db
[ -z "$(dom_field $db 1)" ] || fail "destroyed domain still listed"
pass "shutdown with each reason; a shut-down domain stays listed until destroyed"

# destroy --linger: listed as dying, its nodes and devices gone at once, then gone itself
"$XENSTATS" emu create name=doomed,memory=64M,vifs=1,vbds=1 >/dev/null
doomed=$("$XENSTATS" emu list | awk '$2 == "doomed" { print $1 }')
free_before=$("$PROBE" | awk '$1 == "host" { print $7 }')
expect_fail "linger too long" "--linger 3601s: expected a duration up to 3600s" "$XENSTATS" emu destroy "$doomed" --linger 3601s
expect_fail "linger usage" "usage: xenstats emu destroy DOMID [--linger DURATION]" "$XENSTATS" emu destroy "$doomed" --stay 2s
"$XENSTATS" emu destroy "$doomed" --linger 3s
[ "$(dom_field "$doomed" 6)" = "-----d" ] || fail "dying flags: $("$PROBE")"
t1=$(dom_field "$doomed" 8)
sleep 0.3
[ "$(dom_field "$doomed" 8)" = "$t1" ] || fail "a dying domain's CPU time moved"
"$XENSTATS" emu list | grep -q "^$doomed doomed .* -----d " || fail "emu list of a dying domain"
[ -z "$(xsread "/local/domain/$doomed/name" 2>/dev/null)" ] || fail "a dying domain keeps its xenstore home"
[ -z "$(xsread "/local/domain/0/backend/vif/$doomed" 2>/dev/null)" ] || fail "a dying domain keeps its backend nodes"
[ -z "$("$PROBE" --devices | awk -v d="$doomed" '($1 == "vif" || $1 == "vbd") && $2 == d')" ] ||
    fail "a dying domain keeps its devices"
[ "$("$PROBE" | awk '$1 == "host" { print $7 }')" = "$free_before" ] || fail "a dying domain's memory came back early"
expect_fail "pause dying" "domain $doomed is dying" "$XENSTATS" emu pause "$doomed"
expect_fail "mem-set dying" "domain $doomed is dying" "$XENSTATS" emu mem-set "$doomed" 32M
expect_fail "attach to dying" "domain $doomed is dying" "$XENSTATS" emu network-attach "$doomed"
"$XENSTATS" emu create name=doomed,memory=4M >/dev/null # its name is free again
for _ in $(seq 1 50); do
    [ -z "$(dom_field "$doomed" 1)" ] && break
    sleep 0.1
done
[ -z "$(dom_field "$doomed" 1)" ] || fail "a dying domain outlived its linger: $("$PROBE")"
[ "$("$PROBE" | awk '$1 == "host" { print $7 }')" = $((free_before + 65536 - 4096)) ] ||
    fail "a dead domain's memory did not come back: $("$PROBE")"
"$XENSTATS" emu create name=brief,memory=4M >/dev/null
brief=$("$XENSTATS" emu list | awk '$2 == "brief" { print $1 }')
"$XENSTATS" emu destroy "$brief" --linger 3600s
"$XENSTATS" emu destroy "$brief"
[ -z "$(dom_field "$brief" 1)" ] || fail "destroying a dying domain again does not end it"
pass "destroy --linger: dying, its nodes and devices gone at once, the domain and its memory after"

stop_emu || fail "emulator exit status"
