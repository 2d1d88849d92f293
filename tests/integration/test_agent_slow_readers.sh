#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Memory under slow readers (docs/agent-api.md, "Slow readers"), at 1000
# domains.  The bounds rest on counts, not on how fast a busy machine runs:
#  1. The cap: 128 connections from 8 local addresses ask for /metrics,
#     plain and gzip, and read it at 64 KiB a second, each reopened when the
#     agent closes it, opened 8 a second so that they fall on many samples;
#     a Prometheus-like scraper (gzip) and a plain one ask every second.  The
#     agent's high-water mark (VmHWM) stays under 64 MiB, every gzip scrape
#     is answered whole, responses are cut to free older samples (counted),
#     and once nobody reopens, the agent lets go of every reader.
#  2. The deadline, with a fresh agent and no cap in the way: 8 readers
#     read the plain text a few KiB a second, and nobody else asks.  The
#     agent counts the bytes their sample pins while they are answered,
#     cuts each of them once its deadline (5 s, before libmicrohttpd's idle
#     timeout of 10 s) has passed and not before (the lower bound is exact;
#     only the upper one waits on the machine, with 30 s to spare), counts
#     exactly 8 expired responses and none superseded, and pins nothing
#     after.
#  3. The deadline between sampling ticks (interval 20 s): counted by the
#     next sample.
. "$(dirname "$0")/lib.sh"

DOMAINS=${SLOW_READERS_DOMAINS:-1000}
DEADLINE=8   # phase 1
DEADLINE2=5  # phase 2
for i in $(seq 1 "$DOMAINS"); do
    echo "domain name=g$i,vcpus=4,vifs=1,vbds=1"
done >"$XENSTATS_TEST_TMP/emu.conf"
start_emu_domains "$DOMAINS"

# meson sets MALLOC_PERTURB_, which fills every allocation and every freed chunk: pages that
# the agent never touches, or has given back, would count in its RSS
unset MALLOC_PERTURB_
start_agent --interval 1s --timeout 500ms --response-deadline ${DEADLINE}s
[ -n "${AGENT:-}" ] || fail "agent did not start"
wait_agent_domains "$DOMAINS"
size=$(curl -sf "$URL/metrics" | wc -c)
pass "the agent samples $DOMAINS domains; /metrics is $size bytes"

# ASan's redzones and quarantine multiply what every allocation holds: a
# sanitized build checks the rest, the plain builds the memory
SANITIZED=0
if grep -q __asan_init "$XENSTATS" 2>/dev/null; then SANITIZED=1; fi
# what both phases' Python share: the agent's sockets to the readers, its figures
cat >"$XENSTATS_TEST_TMP/common.py" <<'PY'
import gzip, re, socket, threading, time, urllib.request

def agent_sockets(port):
    """The agent's connections to 127.0.0.2-9, by the reader's port: True while the agent holds
    the socket (it has an inode; one the agent closed with bytes left to send has none)."""
    held = {}
    for line in open("/proc/net/tcp").readlines()[1:]:
        f = line.split()
        local, remote, inode = f[1], f[2], int(f[9])
        if int(local.split(":")[1], 16) == port and remote[:8] in {f"0{k}00007F" for k in range(2, 10)}:
            rport = int(remote.split(":")[1], 16)
            held[rport] = held.get(rport, False) or (inode != 0 and f[3] == "01")
    return held

def figures(port):
    """The agent's own HTTP figures, from one gzip scrape (what a scrape pins goes within ms)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=30) as r:
        text = gzip.decompress(r.read()).decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^xenstats_agent_http_(\w+) (\S+)$", text, re.M)}

drain = threading.Event()

class Reader(threading.Thread):
    """Asks once and reads a few KiB a second; once told to drain, reads what is left at full
    speed."""
    def __init__(self, i, port):
        super().__init__()
        self.agent_port = port
        self.gzip = False
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.s.bind((f"127.0.0.{2 + i}", 0))
        self.port = self.s.getsockname()[1]
        self.data = b""
        self.sent = self.let_go = None

    def run(self):
        self.s.connect(("127.0.0.1", self.agent_port))
        self.sent = time.monotonic()
        self.s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                       (b"Accept-Encoding: gzip\r\n" if self.gzip else b"") + b"\r\n")
        self.s.settimeout(1)
        while True:
            try:
                got = self.s.recv(65536)
            except socket.timeout:
                if drain.is_set():
                    break
                continue
            except OSError:
                break
            if not got:
                break
            self.data += got
            if not drain.is_set():
                time.sleep(1)
        self.s.close()

    def whole(self):
        head, _, body = self.data.partition(b"\r\n\r\n")
        if b"content-length:" in head.lower():
            n = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            return len(body) == n
        return body.endswith(b"\r\n0\r\n\r\n")


def let_go(port, readers, limit):
    """Wait (making no request) until the agent holds none of the readers' connections, or limit s."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and any(r.let_go is None for r in readers):
        held = agent_sockets(port)
        for r in readers:
            if r.let_go is None and not held.get(r.port, False):
                r.let_go = time.monotonic()
        time.sleep(0.1)
    drain.set()
    for r in readers:
        r.join()
    return [r.let_go - r.sent if r.let_go else None for r in readers]

def answered(readers):
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and not all(r.data for r in readers):
        time.sleep(0.1)
    return all(r.data for r in readers)
PY

python3 - "$port" "$AGENT" "$DEADLINE" "$SANITIZED" "$XENSTATS_TEST_TMP" <<'PY' || fail "slow readers: $(tail -5 "$XENSTATS_TEST_TMP/agent.log")"
import gzip, socket, subprocess, sys, threading, time
port, pid, deadline, sanitized = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
sys.path.insert(0, sys.argv[5])
from common import agent_sockets
READERS, RATE, SECONDS = 128, 8, 24
stop, no_reopen = threading.Event(), threading.Event()
lock = threading.Lock()
opened = [0]

def vm(key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024.0
    return 0.0

def reader(i):
    src = f"127.0.0.{2 + i % 8}"
    enc = b"Accept-Encoding: gzip\r\n" if i % 4 == 0 else b""
    while not stop.is_set() and not no_reopen.is_set():
        s = socket.socket()
        s.settimeout(1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        try:
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + enc + b"\r\n")
        except OSError:
            s.close()
            stop.wait(0.2)
            continue
        with lock:
            opened[0] += 1
        while not stop.is_set():
            try:
                if not s.recv(65536):
                    break
            except socket.timeout:
                continue
            except OSError:
                break
            time.sleep(1)
        s.close()
        stop.wait(0.2)

scrapes = {"gzip": [], "plain": []}
def scraper():
    while not no_reopen.is_set():
        for kind in ("gzip", "plain"):
            t0 = time.monotonic()
            args = ["curl", "-s", "--max-time", "30", "-o", "-", "-w", "\n%{http_code}",
                    f"http://127.0.0.1:{port}/metrics"]
            if kind == "gzip":
                args[1:1] = ["-H", "Accept-Encoding: gzip"]
            r = subprocess.run(args, capture_output=True)
            body, _, code = r.stdout.rpartition(b"\n")
            ok = code == b"200"
            if ok and kind == "gzip":
                try:
                    body = gzip.decompress(body)
                except Exception:
                    ok = False
            ok = ok and b"\nxenstats_agent_domains " in body and body.endswith(b"\n")
            scrapes[kind].append((ok, time.monotonic() - t0, code.decode()))
        stop.wait(1)

rss = []
def sampler():
    while not stop.is_set():
        rss.append(vm("VmRSS"))
        stop.wait(0.2)

threads = [threading.Thread(target=sampler), threading.Thread(target=scraper)]
for t in threads:
    t.start()
for i in range(READERS):
    t = threading.Thread(target=reader, args=(i,))
    t.start()
    threads.append(t)
    time.sleep(1.0 / RATE)
time.sleep(SECONDS - READERS / RATE)
hwm = vm("VmHWM")
# Nobody reopens and the scrapers stop: every reader's response ends within its deadline (a
# plain one read at 64 KiB a second would take 110 s), so the agent lets go of them all.
no_reopen.set()
threads[1].join()
t0 = time.monotonic()
held_at_stop = sum(agent_sockets(port).values())
while sum(agent_sockets(port).values()) and time.monotonic() - t0 < deadline + 30:
    time.sleep(0.2)
held_after, let_go = sum(agent_sockets(port).values()), time.monotonic() - t0
stop.set()
for t in threads:
    t.join()
# Prometheus asks for gzip: every one of those scrapes is answered.  A plain one (7 MB here)
# that takes longer than about two samples to read may be cut with the readers of its sample
# (docs/agent-api.md, "Slow readers"): counted, not asserted.
bad = [x for x in scrapes["gzip"] if not x[0]]
plain_cut = sum(not x[0] for x in scrapes["plain"])
worst = max(x[1] for k in scrapes for x in scrapes[k])
print(f"{READERS} slow readers ({opened[0]} requests), {SECONDS} s: VmRSS max {max(rss):.1f} MiB, "
      f"VmHWM {hwm:.1f} MiB; scrapes: {len(scrapes['gzip'])} gzip, {len(scrapes['plain'])} plain, "
      f"{len(bad)} gzip failed, {plain_cut} plain cut, worst {worst:.2f} s; readers' connections the agent held: "
      f"{held_at_stop} when nobody reopened, {held_after} {let_go:.1f} s later")
assert sanitized or hwm < 64, f"VmHWM {hwm:.1f} MiB: the readers pin more than the 64 MiB goal allows"
assert not bad, f"scrapes failed: {bad[:5]}"
assert held_after == 0, f"{held_after} readers still held {let_go:.0f} s after the last one opened (deadline {deadline:.0f} s)"
PY
if [ "$SANITIZED" = 1 ]; then
    pass "128 slow readers at $DOMAINS domains: every gzip scrape answered, every reader let go (memory: not measured under ASan)"
else
    pass "128 slow readers at $DOMAINS domains: VmHWM under 64 MiB, every gzip scrape answered, every reader let go"
fi
m=$(curl -sf "$URL/metrics")
echo "$m" | grep -Eq '^xenstats_agent_http_superseded_responses_total [1-9]' || fail "superseded responses not counted"
echo "$m" | grep -Eq '^xenstats_agent_http_pinned_bytes [0-9]+$' || fail "no pinned bytes gauge"
pass "responses cut to free older samples are counted"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit status"
pass "agent stops on SIGTERM"

# 2. The deadline, alone: a fresh agent, a cap no sample reaches, and no request while it runs out.
start_agent --interval 1s --timeout 500ms --response-deadline ${DEADLINE2}s --response-memory 1G
[ -n "${AGENT:-}" ] || fail "agent did not start"
wait_agent_domains "$DOMAINS"
python3 - "$port" "$DEADLINE2" "$XENSTATS_TEST_TMP" <<'PY' || fail "deadline: $(tail -5 "$XENSTATS_TEST_TMP/agent.log")"
import sys, time
port, deadline = int(sys.argv[1]), float(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from common import Reader, agent_sockets, answered, figures, let_go
readers = [Reader(i, port) for i in range(8)]
for r in readers:
    r.start()
assert answered(readers), "not every reader was answered within 60 s"
# a sample published after the 8 responses started: what they pin is counted
time.sleep(1.5)
pinned = figures(port).get("pinned_bytes", 0)
# no request from now on: the agent's own sweep keeps the deadline
lived = let_go(port, readers, deadline + 30)
# the figures of a sample published once the cut responses are reaped
for _ in range(20):
    time.sleep(1)
    f = figures(port)
    if f.get("pinned_bytes") == 0 and f.get("expired_responses_total") >= 8:
        break
print(f"8 readers, deadline {deadline:.0f} s: pinned {pinned / 1e6:.1f} MB while answered; "
      f"let go after {', '.join('never' if x is None else f'{x:.1f}' for x in lived)} s; "
      f"expired {f.get('expired_responses_total'):.0f}, superseded {f.get('superseded_responses_total'):.0f}, "
      f"pinned after {f.get('pinned_bytes'):.0f}")
assert pinned > 0, "the bytes the readers' sample holds were not counted"
assert all(x is not None for x in lived), f"responses outlived their {deadline:.0f} s deadline by 30 s: {lived}"
assert all(x >= deadline - 0.05 for x in lived), f"responses cut before their deadline: {lived}"
assert not any(r.whole() for r in readers), "a response was read whole: the deadline is not tested"
assert f.get("expired_responses_total") == 8, f"expired responses counted: {f.get('expired_responses_total')}, not 8"
assert f.get("superseded_responses_total") == 0, "responses superseded under a cap of 1G"
assert f.get("pinned_bytes") == 0, f"{f.get('pinned_bytes')} bytes still pinned after the responses were cut"
PY
pass "the deadline: 8 slow readers counted while answered, cut after ${DEADLINE2} s and not before, counted; nothing pinned after"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit status"

# 3. The deadline does not wait for a sampling tick.  With 20 s between samples, a 3 s
# deadline and no request, 4 readers are let go, and the next sample counts 4 expired
# responses: swept at the ticks, they would have met libmicrohttpd's idle timeout (10 s)
# first, which counts none.
start_agent --interval 20s --timeout 500ms --response-deadline 3s --response-memory 1G
[ -n "${AGENT:-}" ] || fail "agent did not start"
wait_agent_domains "$DOMAINS"
python3 - "$port" "$XENSTATS_TEST_TMP" <<'PY' || fail "deadline between ticks: $(tail -5 "$XENSTATS_TEST_TMP/agent.log")"
import sys, time
port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from common import Reader, answered, figures, let_go
readers = [Reader(i, port) for i in range(4)]
for r in readers:
    r.start()
assert answered(readers), "not every reader was answered within 60 s"
lived = let_go(port, readers, 3 + 30)
assert all(x is not None and x >= 3 - 0.05 for x in lived), f"not let go by their deadline: {lived}"
t0 = time.monotonic()
while time.monotonic() - t0 < 45:
    expired = figures(port).get("expired_responses_total")
    if expired:
        break
    time.sleep(2)
print(f"4 readers, interval 20 s, deadline 3 s: let go after {', '.join(f'{x:.1f}' for x in lived)} s; "
      f"the next sample counts {expired:.0f} expired")
assert expired == 4, f"{expired:.0f} responses counted expired, not 4: the deadline waited for a tick"
PY
pass "the deadline holds between sampling ticks (interval 20 s, deadline 3 s: 4 expired)"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit status"
