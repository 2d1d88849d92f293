#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Slow readers of gzip renderings made ahead count against --response-memory
# (docs/agent-api.md, "Slow readers").  A gzip answer sent from a rendering
# the renderer thread made holds that rendering, not its sample.  Where the
# answer outgrows what the kernel buffers for a connection (about 1.5 MB of
# a 1 MiB SO_SNDBUF), a reader that does not read keeps it in the agent;
# readers of different rounds then each hold a rendering.  Here the gzip
# answer is some 3 MB (1000 domains whose 63-byte random names compress
# badly), the cap is 1 MiB, and 4 gzip readers that stop reading after the
# headers ask 1.5 s apart, so each gets a newer rendering than the last:
# each new one must cut the older ones (superseded, counted), and the
# renderings are counted in xenstats_agent_http_pinned_bytes.  Before
# renderings were counted, the agent held all 4 until libmicrohttpd's idle
# timeout, counting nothing.  The bounds are counts, not timings.
. "$(dirname "$0")/lib.sh"

DOMAINS=1000
READERS=4
python3 - "$DOMAINS" >"$XENSTATS_TEST_TMP/emu.conf" <<'PY'
import random, string, sys
r = random.Random(29)
for _ in range(int(sys.argv[1])):
    name = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(63))
    print(f"domain name={name},vcpus=1,vifs=2,vbds=2")
PY
start_emu_domains "$DOMAINS"

# a deadline past libmicrohttpd's idle timeout (10 s): only the cap cuts here
start_agent --interval 1s --timeout 500ms --response-memory 1M --response-deadline 60s
[ -n "${AGENT:-}" ] || fail "agent did not start"
wait_agent_domains "$DOMAINS"

python3 - "$port" "$READERS" <<'PY' || fail "gzip readers: $(tail -5 "$XENSTATS_TEST_TMP/agent.log")"
import gzip, re, socket, sys, time, urllib.request
port, n = int(sys.argv[1]), int(sys.argv[2])

def gzip_get(url):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{url}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()

def held(ports):
    """The readers' connections the agent holds (one it closed with bytes left to send has no inode)."""
    h = set()
    for line in open("/proc/net/tcp").readlines()[1:]:
        f = line.split()
        if int(f[1].split(":")[1], 16) == port and int(f[9]) != 0 and f[3] == "01":
            rport = int(f[2].split(":")[1], 16)
            if rport in ports:
                h.add(rport)
    return h

# a gzip scraper every second: the renderer renders every round ahead (render_due())
size = 0
for _ in range(3):
    size = len(gzip_get("/metrics"))
    time.sleep(1)
assert size > 2 << 20, f"the gzip answer is {size} bytes: the kernel may buffer it whole, nothing is tested"

readers = []
for i in range(n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((f"127.0.0.{2 + i}", 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept-Encoding: gzip\r\n\r\n")
    s.settimeout(30)
    head = s.recv(4096)  # the headers, then nothing more is read
    assert head.startswith(b"HTTP/1.1 200") and b"content-encoding: gzip" in head.lower(), head[:200]
    readers.append(s)
    time.sleep(1.5)
ports = {s.getsockname()[1] for s in readers}
still = held(ports)
# the figures of the round published while the last reader was held (this scrape comes after it)
text = gzip.decompress(gzip_get("/metrics")).decode()
fig = {m.group(1): float(m.group(2)) for m in re.finditer(r"^xenstats_agent_(\w+) (\S+)$", text, re.M)}
for s in readers:
    s.close()
print(f"gzip answer {size} bytes; {n} readers 1.5 s apart, cap 1 MiB: the agent holds {len(still)}; "
      f"superseded {fig.get('http_superseded_responses_total'):.0f}, pinned {fig.get('http_pinned_bytes'):.0f} bytes; "
      f"renders ahead {fig.get('renders_ahead_total'):.0f}, on request {fig.get('request_renders_total'):.0f}")
assert fig.get("renders_ahead_total", 0) > 0, "no rendering made ahead: nothing is tested"
assert len(still) <= 2, f"the agent holds {len(still)} of {n} readers of older renderings, past a 1 MiB cap"
assert fig.get("http_superseded_responses_total", 0) >= n - 2, "readers of older renderings not counted as superseded"
assert fig.get("http_pinned_bytes", 0) > 0, "the renderings held by the readers are not counted"
PY
pass "slow gzip readers of renderings made ahead are counted and cut past --response-memory"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit status"
pass "agent stops on SIGTERM"
