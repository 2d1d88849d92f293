#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Render ahead (docs/agent-api.md, "Renderings and memory"): once a gzip
# scraper's period is known, no GET renders (xenstats_agent_request_renders
# stays where the first two left it) and what it is sent is the latest round
# made, the current one or the one before (or, with the renderer a round
# late on a loaded machine, the one before that); for a scraper of every interval
# and for one slower than two intervals (as Prometheus' 15 s against 1 s).
. "$(dirname "$0")/lib.sh"

start_emu -D name=a,vcpus=2 -D name=b,vcpus=1
start_agent --interval 400ms --timeout 100ms
[ -n "${AGENT:-}" ] && curl -sf "$URL/healthz" >/dev/null || fail "agent did not come up"

# ---- render ahead -------------------------------------------------------------------
# period in s, scrapes: a gzip GET at fixed times; before it, the current
# round's number (plain JSON, rendered as sent); after the last, the count of
# renders made for a waiting GET.
scrape() {
    python3 - "$URL" "$1" "$2" <<'PY'
import gzip, json, re, sys, time, urllib.request
url, period, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
def samples(text):
    return int(float(re.search(r'^xenstats_agent_samples_total (\S+)$', text, re.M).group(1)))
def renders():
    text = urllib.request.urlopen(url + "/metrics").read().decode()
    return int(float(re.search(r'^xenstats_agent_request_renders_total (\S+)$', text, re.M).group(1)))
start = time.monotonic()
behind, before = [], None
for k in range(count):
    at = start + k * period
    time.sleep(max(0, at - time.monotonic()))
    current = json.load(urllib.request.urlopen(url + "/api/v1/snapshot"))["agent"]["samples"]
    req = urllib.request.Request(url + "/metrics", headers={"Accept-Encoding": "gzip"})
    resp = urllib.request.urlopen(req)
    assert resp.headers["Content-Encoding"] == "gzip"
    served = samples(gzip.decompress(resp.read()).decode())
    if k == 2:
        before = renders()  # the first two GETs may render: the period is not known yet
    if k >= 2:
        behind.append(current - served)
after = renders()
# the current round or the one before; one more while the renderer, on a loaded machine, is a round late
assert all(b <= 2 for b in behind), f"rounds behind the one current before the GET: {behind}"
assert sum(b == 2 for b in behind) <= len(behind) // 4, f"too often two rounds behind: {behind}"
assert after == before, f"{after - before} GETs rendered after the period was known (behind: {behind})"
print(f"behind {behind}, request renders {before} -> {after}")
PY
}
scrape 0.4 12 || fail "a gzip scraper every interval"
pass "a gzip scraper every interval: no GET renders, each sent the current round or the one before"
scrape 1.7 9 || fail "a gzip scraper every 1.7 s"
pass "a gzip scraper every 1.7 s (4 intervals): no GET renders, each sent the current round or the one before"
