#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian's xenstore-* tools and a libxenstore program against the emulator:
# the toolstack nodes, read/write/ls/rm/chmod, watches, transactions,
# domain introduction and release, the emu backend's store op.
. "$XENSTATS_SOURCE_ROOT/tests/integration/lib.sh"
. "$XENSTATS_SOURCE_ROOT/tests/xenstore/xs_lib.sh"

start_emu -D name=web,vcpus=2,offline=1 -D name=db
wait_for_socket 0
wait_for_socket 2

# The nodes a toolstack writes.
check "dom0 name" "Domain-0" as_dom 0 xenstore-read /local/domain/0/name
check "guest name" "web" as_dom 0 xenstore-read /local/domain/1/name
check "guest domid" "1" as_dom 0 xenstore-read /local/domain/1/domid
check "guest reads its name relative" "web" as_dom 1 xenstore-read name
check "vCPU availability" "offline" as_dom 1 xenstore-read cpu/1/availability
vm=$(as_dom 0 xenstore-read /local/domain/2/vm)
case "$vm" in /vm/????????-????-????-????-????????????) pass "vm path $vm" ;; *) fail "vm path '$vm'" ;; esac
check "vm name" "db" as_dom 0 xenstore-read "$vm/name"
check "home perms" "OK n0,r1" xsc 1 getperms /local/domain/1
check "data perms" "OK n1" xsc 1 getperms data
check "control/shutdown perms" "OK n2" xsc 2 getperms control/shutdown
check "no stats node (a later issue decides)" "ERR ENOENT" xsc 0 read /local/domain/1/stats

# Basic tools.
as_dom 0 xenstore-write /test/a/b hello /test/c world
check "xenstore-write/read" "hello" as_dom 0 xenstore-read /test/a/b
check "xenstore-ls" "a = \"\"
 b = \"hello\"
c = \"world\"" as_dom 0 xenstore-ls /test
as_dom 0 xenstore-chmod /test/c n0 r1
check "xenstore-chmod" "OK n0,r1" xsc 0 getperms /test/c
check "guest reads granted node" "world" as_dom 1 xenstore-read /test/c
check "other guest does not" "ERR EACCES" xsc 2 read /test/c
as_dom 0 xenstore-rm /test/a
check "xenstore-rm recursive" "ERR ENOENT" xsc 0 read /test/a/b
check "ls after rm" "OK c" xsc 0 ls /test
check "guest writes its data" "OK" xsc 1 write data/k v
check "xenstore-read of guest data" "v" as_dom 0 xenstore-read /local/domain/1/data/k
check "domain path" "OK /local/domain/7" xsc 1 domainpath 7
check "introduced" "OK T" xsc 0 introduced 2
check "not introduced" "OK F" xsc 0 introduced 99

# Watches: initial event, then the change; relative for a guest.
check "watch (C client)" "EVENT /test tok
EVENT /test/w tok
OK" xsc 0 watch-check /test /test/w
check "relative watch" "EVENT data tok
EVENT data/x tok
OK" xsc 1 watch-check data /local/domain/1/data/x
# wait_lines FILE N: until FILE has N lines (the watcher is registered).
wait_lines() {
    local i
    for i in $(seq 1 200); do
        [ "$(wc -l <"$1")" -ge "$2" ] && return 0
        sleep 0.05
    done
    fail "$1: fewer than $2 lines: $(cat "$1")"
}
as_dom 0 xenstore-watch -n 2 /test/tool-watch >"$XENSTATS_TEST_TMP/watch" 2>&1 &
wpid=$!
wait_lines "$XENSTATS_TEST_TMP/watch" 1 # the initial event
xsc 0 write /test/tool-watch/x 1 >/dev/null
wait "$wpid" || fail "xenstore-watch failed: $(cat "$XENSTATS_TEST_TMP/watch")"
out=$(cat "$XENSTATS_TEST_TMP/watch")
[ "$out" = "/test/tool-watch
/test/tool-watch/x" ] || fail "xenstore-watch: '$out'"
pass "xenstore-watch"

# Transactions.
check "transaction isolated then committed" "OK before=(none) after=42" xsc 1 tx-commit data/tx 42
xsc 1 write data/conflict start >/dev/null
check "transaction conflict" "ERR EAGAIN" xsc 1 tx-conflict data/conflict
check "conflicting write lost" "OK outside" xsc 1 read data/conflict

# Domain lifecycle: @introduceDomain and @releaseDomain fire, nodes go.
XENSTORED_PATH=$(xs_sock 0) timeout 20 "$XS_CLIENT" wait-event @introduceDomain @introduceDomain >"$XENSTATS_TEST_TMP/intro" &
ipid=$!
XENSTORED_PATH=$(xs_sock 0) timeout 20 "$XS_CLIENT" wait-event @releaseDomain @releaseDomain >"$XENSTATS_TEST_TMP/release" &
rpid=$!
wait_lines "$XENSTATS_TEST_TMP/intro" 1 # READY: the watch is registered
wait_lines "$XENSTATS_TEST_TMP/release" 1
newid=$("$XENSTATS" emu create name=late)
wait "$ipid"
grep -q "^EVENT @introduceDomain$" "$XENSTATS_TEST_TMP/intro" || fail "@introduceDomain: $(cat "$XENSTATS_TEST_TMP/intro")"
pass "@introduceDomain on create"
check "new domain's socket" "late" as_dom "$newid" xenstore-read name
"$XENSTATS" emu destroy "$newid" >/dev/null
wait "$rpid"
grep -q "^EVENT @releaseDomain$" "$XENSTATS_TEST_TMP/release" || fail "@releaseDomain: $(cat "$XENSTATS_TEST_TMP/release")"
pass "@releaseDomain on destroy"
check "home removed" "ERR ENOENT" xsc 0 read "/local/domain/$newid"
[ ! -e "$(xs_sock "$newid")" ] || fail "socket of destroyed domain remains"
pass "socket removed"

# The emu backend's store op, as the library opens it.
check "platform store op as dom1" "OK web" env XENSTATS_EMU_DOMID=1 "$XS_CLIENT" platform read name
check "platform store op as dom0" "OK db" env XENSTATS_EMU_DOMID=0 "$XS_CLIENT" platform read /local/domain/2/name

stop_emu
[ ! -e "$XENSTATS_EMU_DIR/xenstore" ] || fail "xenstore directory left behind"
pass "clean shutdown"
