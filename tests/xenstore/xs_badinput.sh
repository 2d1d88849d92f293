#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile clients on the raw protocol: oversized lengths, garbage,
# unknown types, unterminated and empty paths, half a message then a
# hang-up, request floods, too many connections, a watcher that never
# reads.  Each gets an error or is disconnected; a well-behaved client
# keeps working throughout, and so do Debian's tools afterwards.
. "$XENSTATS_SOURCE_ROOT/tests/integration/lib.sh"
. "$XENSTATS_SOURCE_ROOT/tests/xenstore/xs_lib.sh"

start_emu -D name=evil
wait_for_socket 1
xsc 0 write /probe alive >/dev/null

python3 - "$(xs_sock 0)" "$(xs_sock 1)" <<'PY'
import os, socket, struct, sys, time

DOM0, DOM1 = sys.argv[1], sys.argv[2]
XS_READ, XS_WRITE, XS_WATCH, XS_ERROR, XS_DIRECTORY = 2, 11, 4, 16, 1
checks = 0

def ok(what):
    global checks
    checks += 1
    print(f"ok py{checks} - {what}", flush=True)

def fail(what):
    print(f"FAIL: {what}", file=sys.stderr, flush=True)
    sys.exit(1)

def conn(path, timeout=5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking: waits for room in the listen backlog
    s.settimeout(timeout)
    return s

def msg(t, body, req=7, tx=0, length=None):
    return struct.pack("<IIII", t, req, tx, len(body) if length is None else length) + body

def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf

def reply(s):
    hdr = recv_exact(s, 16)
    if hdr is None:
        return None
    t, req, tx, n = struct.unpack("<IIII", hdr)
    return t, req, recv_exact(s, n)

def closed(s):
    """True once the server has hung up (reads drain to EOF)."""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return True
    except (socket.timeout, BlockingIOError):
        return False
    except ConnectionResetError:
        return True

good = conn(DOM0)
def good_works(after):
    good.sendall(msg(XS_READ, b"/probe\0"))
    r = reply(good)
    if r is None or r[0] != XS_READ or r[2] != b"alive":
        fail(f"good client after {after}: {r}")
    ok(f"good client works after {after}")

def expect_error(path, data, name, what):
    s = conn(path)
    s.sendall(data)
    r = reply(s)
    if r is None or r[0] != XS_ERROR or r[2] != name.encode() + b"\0":
        fail(f"{what}: got {r}")
    # The connection stays usable after an error reply.
    s.sendall(msg(XS_READ, b"name\0" if path == DOM1 else b"/probe\0"))
    r = reply(s)
    if r is None or r[0] != XS_READ:
        fail(f"{what}: connection unusable after the error: {r}")
    s.close()
    ok(f"{what} -> {name}")
    good_works(what)

def expect_disconnect(path, data, what):
    s = conn(path)
    s.sendall(data)
    if not closed(s):
        fail(f"{what}: not disconnected")
    s.close()
    ok(f"{what} -> disconnected")
    good_works(what)

expect_disconnect(DOM1, msg(XS_READ, b"", length=4097), "length 4097")
expect_disconnect(DOM1, msg(XS_WRITE, b"", length=0xffffffff), "length 2^32-1")
expect_disconnect(DOM1, os.urandom(8) + struct.pack("<II", 0, 0x80000000), "garbage header")
expect_error(DOM1, msg(0x7777, b"x\0"), "ENOSYS", "unknown type")
expect_error(DOM1, msg(XS_ERROR, b""), "ENOSYS", "reply-only type")
expect_error(DOM1, msg(XS_READ, b"/probe"), "EINVAL", "unterminated path")
expect_error(DOM1, msg(XS_READ, b""), "EINVAL", "empty payload")
expect_error(DOM1, msg(XS_READ, b"\0"), "EINVAL", "empty path")
expect_error(DOM1, msg(XS_READ, b"/a//b\0"), "EINVAL", "double slash")
expect_error(DOM1, msg(XS_READ, b"/a\xff\0"), "EINVAL", "non-ASCII path")
expect_error(DOM1, msg(XS_WATCH, b"data\0"), "EINVAL", "watch without token")
expect_error(DOM1, msg(XS_READ, b"/probe\0", tx=12345), "ENOENT", "unknown transaction")
expect_error(DOM1, msg(XS_WRITE, b"data/x\0" + b"v" * 4000), "ENOSPC", "oversized value")

# Half a message, then hang up: nothing left behind, nothing stuck.
for cut in (3, 16, 20):
    s = conn(DOM1)
    s.sendall(msg(XS_WRITE, b"data/half\0value")[:cut])
    s.close()
good_works("half messages then hang-up")

# Random garbage streams.
for i in range(50):
    s = conn(DOM1)
    try:
        s.sendall(os.urandom(64 + i * 37))
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()
good_works("random byte streams")

# A flood of requests never read: dropped once its unread replies pass
# the per-client bound, while the good client is served meanwhile.
s = conn(DOM1)
s.setblocking(False)
req = msg(XS_DIRECTORY, b"/local/domain/1\0")
sent = 0
deadline = time.time() + 20
while time.time() < deadline:
    try:
        sent += s.send(req * 64)
    except BlockingIOError:
        time.sleep(0.01)
        good_works("flood in progress") if checks < 40 else None
        continue
    except (BrokenPipeError, ConnectionResetError):
        break
s.settimeout(5)
if not closed(s):
    fail("flooder not disconnected")
ok(f"flooder disconnected after {sent} bytes")
good_works("flood")

# Too many connections for one domain: the surplus is refused.
conns = []
for i in range(200):
    c = conn(DOM1)
    conns.append(c)
served = 0
for c in conns:
    try:
        c.sendall(msg(XS_READ, b"name\0"))
        r = reply(c)
        served += r is not None and r[0] == XS_READ
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
for c in conns:
    c.close()
if served != 128:
    fail(f"{served} of 200 connections served, want 128")
ok("connections per domain capped at 128")
good_works("connection storm")

# A watcher that never reads its events is dropped, the writer is not.
lazy = conn(DOM0)
lazy.sendall(msg(XS_WATCH, b"/\0lazy\0"))
w = conn(DOM0)
long = b"/spam/" + b"p" * 400
for i in range(4000):  # 4000 events of 420 bytes: past the bound and any socket buffer
    w.sendall(msg(XS_WRITE, long + b"/k%d\0" % (i % 10) + b"x"))
    r = reply(w)
    if r is None or r[0] != XS_WRITE:
        fail(f"writer failed at {i}: {r}")
lazy.settimeout(5)
if not closed(lazy):
    fail("lazy watcher not disconnected")
ok("watcher that never reads is disconnected")
good_works("event flood")
print(f"python checks: {checks}")
PY
pass "raw protocol abuse"
check "xenstore-read after all that" "alive" as_dom 0 xenstore-read /probe
check "guest tool after all that" "evil" as_dom 1 xenstore-read name
kill -0 "$EMU_PID" || fail "emulator died"
stop_emu
