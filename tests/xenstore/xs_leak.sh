#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 10,000 connect / request / disconnect cycles (with a watch and an open
# transaction left behind by each) must leave the emulator's open fds
# exactly where they were and its resident memory within a stated
# tolerance: 1 MiB, or 8 MiB under a sanitizer (whose allocator keeps
# freed memory in quarantine; we shrink the quarantine to keep it honest).
. "$XENSTATS_SOURCE_ROOT/tests/integration/lib.sh"
. "$XENSTATS_SOURCE_ROOT/tests/xenstore/xs_lib.sh"

export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=1:thread_local_quarantine_size_kb=64"
start_emu -D name=churn
wait_for_socket 1

tolerance_kb=1024
case "${XS_SANITIZE:-none}" in none | "") ;; *) tolerance_kb=8192 ;; esac

fds() { ls "/proc/$EMU_PID/fd" | wc -l; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$EMU_PID/status"; }

churn() {
    python3 - "$(xs_sock 1)" "$1" <<'PY'
import socket, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
def msg(t, body, tx=0):
    return struct.pack("<IIII", t, 1, tx, len(body)) + body
def reply(s):
    buf = b""
    while len(buf) < 16:
        buf += s.recv(16 - len(buf))
    t, _, _, l = struct.unpack("<IIII", buf)
    body = b""
    while len(body) < l:
        body += s.recv(l - len(body))
    return t, body
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(msg(2, b"name\0"))                 # READ
    assert reply(s) == (2, b"churn"), "read"
    s.sendall(msg(4, b"data\0tok\0"))           # WATCH (+ initial event)
    assert reply(s)[0] == 4, "watch"
    reply(s)
    s.sendall(msg(6, b"\0"))                     # TRANSACTION_START
    t, body = reply(s)
    assert t == 6, "transaction"
    tx = int(body.rstrip(b"\0"))
    s.sendall(msg(11, b"data/k\0v", tx))        # WRITE inside it
    assert reply(s)[0] == 11, "write"
    s.close()                                    # leave both behind
PY
}

churn 1000 # warm up allocator and caches
fd0=$(fds)
rss0=$(rss_kb)
churn 10000
sleep 0.5
fd1=$(fds)
rss1=$(rss_kb)
echo "fds: $fd0 -> $fd1; VmRSS: $rss0 kB -> $rss1 kB (tolerance $tolerance_kb kB)"
[ "$fd1" -eq "$fd0" ] || fail "fd count changed: $fd0 -> $fd1"
pass "fd count unchanged after 10000 cycles ($fd1)"
[ "$rss1" -le $((rss0 + tolerance_kb)) ] || fail "RSS grew by $((rss1 - rss0)) kB"
pass "RSS within $tolerance_kb kB (grew $((rss1 - rss0)) kB)"
check "store intact: no leftover transaction write" "ERR ENOENT" xsc 1 read data/k
# Leaked watches or transactions would still count against the quotas.
check "watch quota whole again" "ERR E2BIG after 128" xsc 1 fill watches data
check "transaction quota whole again" "ERR ENOSPC after 10" xsc 1 fill transactions data
stop_emu
