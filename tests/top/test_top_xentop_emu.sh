#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats xentop` (and the xenstats-xentop link) on the emulated host, as
# a script that parses `xentop -b` sees it: domains named backup-server-01,
# Zed, alpha, café and back\slash, counters of 12 digits, a disk whose
# statistics are gone and one whose statistics cannot be read.  The
# expected figures come from the emulator (`emu devices`, `emu list`), the
# expected layout from xentop's rules (docs/xentop.md), not from our output.
. "$XENSTATS_SOURCE_ROOT/tests/top/top_lib.sh"

expect_fail "bad option" "invalid option" "$XENSTATS" xentop -Q
expect_fail "bad delay" "--delay abc" "$XENSTATS" xentop -b -d abc
expect_fail "bad iterations" "--iterations -1" "$XENSTATS" xentop -b -i -1
expect_fail "extra argument" "unexpected argument" "$XENSTATS" xentop -b 7
"$XENSTATS" xentop --help | grep -q -- "--repeat-header" || fail "--help"
"$XENSTATS" xentop -V | grep -q "xentop" || fail "-V"
pass "xentop's options: --help, -V, clear errors"

start_emu -p 4 -D name=backup-server-01,vcpus=7,vifs=1,vbds=2,traffic=no -D name=Zed,vcpus=2,vifs=2,traffic=no \
    -D name=alpha,traffic=no -D "name=café,vbds=1,traffic=no" -D 'name=back\slash,vbds=2,traffic=no'
E=("$XENSTATS" emu)
"${E[@]}" vif-set backup-server-01 0 tx_bytes=987654321098,rx_bytes=123456789012,rx_packets=98765432
"${E[@]}" vbd-set backup-server-01 xvda rd_req=123456789012,rd_sect=999999999999,wr_sect=5555555555,oo_req=12
"${E[@]}" vbd-set café xvda statistics=missing
"${E[@]}" vbd-set 'back\slash' xvda statistics=unreadable
"${E[@]}" vbd-set 'back\slash' xvdb rd_req=300,wr_req=400
"${E[@]}" devices | grep -q "statistics=unreadable" || fail "emu devices does not say a vbd's statistics are unreadable"
"${E[@]}" shutdown alpha --reason crash
# emu list prints xl list's rbpscd (its manual says so): alpha is shut down, for a crash
[ "$("${E[@]}" list | awk '$2 == "alpha" { print $7 }')" = "---sc-" ] || fail "emu list's state of a crashed domain"
pass "the emulator: big counters, a vbd's statistics missing or unreadable, names with UTF-8 and a backslash"

ln -s "$XENSTATS" "$XENSTATS_TEST_TMP/xenstats-xentop"
start=$(date +%s%N)
"$XENSTATS" xentop -b -i 2 -d 1 >"$XENSTATS_TEST_TMP/default.out" || fail "xentop -b -i 2 -d 1"
end=$(date +%s%N)
"$XENSTATS_TEST_TMP/xenstats-xentop" -b -i 1 -f -n -x -v >"$XENSTATS_TEST_TMP/extra.out" || fail "xenstats-xentop"
"$XENSTATS" xentop -b -i 1 -r -z >"$XENSTATS_TEST_TMP/repeat.out" || fail "xentop -r -z"
"${E[@]}" devices >"$XENSTATS_TEST_TMP/devices"
"${E[@]}" list >"$XENSTATS_TEST_TMP/list"

python3 - "$XENSTATS_TEST_TMP" "$(((end - start) / 1000000))" <<'PY' || fail "the layout is not xentop's"
import math, re, sys
d, elapsed_ms = sys.argv[1], int(sys.argv[2])
raw = lambda n: open(f"{d}/{n}", "rb").read()

# the emulator's own figures
devs = {}
for l in open(f"{d}/devices").read().splitlines()[1:]:
    w = l.split()
    kv = dict(x.split("=", 1) for x in w[5:])
    devs.setdefault(int(w[0]), []).append((w[1], int(w[2]), kv))
doms = {}
for l in open(f"{d}/list", encoding="utf-8").read().splitlines()[1:]:
    w = l.split()
    doms[w[1]] = int(w[0])
names = sorted(doms, key=lambda n: n.encode().lower())
assert set(names) == {"Domain-0", "backup-server-01", "Zed", "alpha", "café", "back\\slash"}, names

def sums(domid):
    vifs = [kv for k, _, kv in devs.get(domid, []) if k == "vif"]
    vbds = [kv for k, _, kv in devs.get(domid, []) if k == "vbd"]
    ok = [kv for kv in vbds if "statistics" not in kv]
    s = {"NETS": len(vifs), "VBDS": len(vbds),
         "NETTX(k)": sum(int(v["tx_bytes"]) for v in vifs) // 1024,
         "NETRX(k)": sum(int(v["rx_bytes"]) for v in vifs) // 1024}
    for col, key in [("VBD_OO", "oo_req"), ("VBD_RD", "rd_req"), ("VBD_WR", "wr_req"),
                     ("VBD_RSECT", "rd_sect"), ("VBD_WSECT", "wr_sect")]:
        s[col] = sum(int(v[key]) for v in ok) if ok or not vbds else None
    return s

cols = ["NAME", "STATE", "CPU(sec)", "CPU(%)", "MEM(k)", "MEM(%)", "MAXMEM(k)", "MAXMEM(%)", "VCPUS", "NETS",
        "NETTX(k)", "NETRX(k)", "VBDS", "VBD_OO", "VBD_RD", "VBD_WR", "VBD_RSECT", "VBD_WSECT", "SSID"]
base = [10, 6, 10, 6, 10, 6, 10, 9, 5, 4, 8, 8, 4, 8, 8, 8, 10, 10, 4]

def widths(name_width=10):
    # xentop widens these to the digits of (figure + 1), as log10 counts them
    w = list(base)
    w[0] = name_width
    for c in ["NETTX(k)", "NETRX(k)", "VBD_RD", "VBD_WR", "VBD_RSECT", "VBD_WSECT"]:
        for n in names:
            v = sums(doms[n])[c] or 0
            w[cols.index(c)] = max(w[cols.index(c)], int(math.log10(v + 1) + 1))
    return w

def header(w):
    return " ".join(c.rjust(x) for c, x in zip(cols, w)).encode() + b"\n"

def check_row(line, w, name, first_round):
    # each field right-aligned in its column: the boundaries are the header's
    pos, fields = 0, []
    for i, x in enumerate(w):
        f = line[pos:pos + x]
        fields.append(f)
        pos += x + 1
        assert i == len(w) - 1 or line[pos - 1:pos] == b" ", (line, i)
    assert line[pos - 1:] == b"\n", (line, pos)
    want_name = name.encode() if w[0] != 10 else name.encode()[:10]
    assert fields[0] == want_name.rjust(w[0]), (fields[0], name)
    s = sums(doms[name])
    got = dict(zip(cols, (f.strip().decode("utf-8", "replace") for f in fields)))
    for c in ["NETS", "VBDS", "NETTX(k)", "NETRX(k)", "VBD_OO", "VBD_RD", "VBD_WR", "VBD_RSECT", "VBD_WSECT"]:
        want = "-" if s[c] is None else str(s[c])
        assert got[c] == want, (name, c, got[c], want)
    assert got["SSID"] == "0"
    if first_round:
        assert got["CPU(%)"] == "0.0", (name, got)

# -b -i 2 -d 1: two rounds, each a header and a row per domain, by name ignoring case
out = raw("default.out")
lines = out.splitlines(keepends=True)
assert len(lines) == 2 * (1 + len(names)), out
w = widths()
assert w[cols.index("NETTX(k)")] == 9 and w[cols.index("VBD_RD")] == 12 and w[cols.index("VBD_RSECT")] == 13, w
for r in range(2):
    chunk = lines[r * (1 + len(names)):(r + 1) * (1 + len(names))]
    assert chunk[0] == header(w), (chunk[0], header(w))
    for name, line in zip(names, chunk[1:]):
        check_row(line, w, name, r == 0)
assert b"caf\xc3\xa9" in out and b"back\\slash" in out and b"\\x" not in out, out
assert b"backup-ser " in out and b"backup-server-01" not in out
# the first round at once, the second a delay later, none after the last
assert elapsed_ms < 1000 + 2500, elapsed_ms

# -f -n -x -v (through the xenstats-xentop link): whole names, and the lines of each domain
lines = raw("extra.out").splitlines(keepends=True)
w = widths(name_width=len("backup-server-01"))
assert lines[0] == header(w), (lines[0], header(w))
i = 1
for name in names:
    assert i < len(lines), (name, lines)
    check_row(lines[i], w, name, True)
    i += 1
    assert lines[i].startswith(b"VCPUs(sec): "), lines[i]
    i += 1
    while re.match(rb"         [ \d]\d: ", lines[i]):  # five vCPUs to a line
        i += 1
    for k, devid, kv in devs.get(doms[name], []):
        if k != "vif":
            continue
        m = re.fullmatch(rb"Net(\d+) RX: +(\d+)bytes +(\d+)pkts +(\d+)err +(\d+)drop  TX: +(\d+)bytes +(\d+)pkts +(\d+)err +(\d+)drop\n",
                         lines[i])
        assert m, lines[i]
        assert [int(x) for x in m.groups()[1:]] == [int(kv[c]) for c in ["rx_bytes", "rx_packets", "rx_errors", "rx_dropped",
                                                                           "tx_bytes", "tx_packets", "tx_errors", "tx_dropped"]], lines[i]
        i += 1
    for k, devid, kv in devs.get(doms[name], []):
        if k != "vbd":
            continue
        det = ("[%2x:%2x] " % (devid >> 8, devid & 0xff)).encode()
        if "statistics" in kv:
            want = b"VBD BlkBack %4d %s OO: %8s   RD: %8s   WR: %8s   RSECT: %10s   WSECT: %10s\n" % (
                devid, det, b"-", b"-", b"-", b"-", b"-")
        else:
            want = b"VBD BlkBack %4d %s OO: %8d   RD: %8d   WR: %8d   RSECT: %10d   WSECT: %10d\n" % (
                devid, det, int(kv["oo_req"]), int(kv["rd_req"]), int(kv["wr_req"]), int(kv["rd_sect"]), int(kv["wr_sect"]))
        assert lines[i] == want, (lines[i], want)
        i += 1
assert i == len(lines), lines[i:]

# -r -z: Domain-0 first, then by name; the header before every domain
lines = raw("repeat.out").splitlines(keepends=True)
order = ["Domain-0"] + [n for n in names if n != "Domain-0"]
assert len(lines) == 2 * len(order)
for k, name in enumerate(order):
    assert lines[2 * k] == header(widths()), lines[2 * k]
    check_row(lines[2 * k + 1], widths(), name, True)
PY
pass "xentop -b: xentop's rows, order, widths, widening, cut and raw names, '-' for unreadable disks, first round at once"
pass "xenstats-xentop -f -n -x -v: whole names and each domain's vCPU, network and disk lines"
pass "xentop -r -z: the header before each domain, Domain-0 first"

# the figures of a disk come back when its statistics do
"${E[@]}" vbd-set café xvda statistics=present,rd_req=7
"$XENSTATS" xentop -b -i 1 -x | grep -a -A1 "^     café " | tail -1 | grep -q "RD:        7 " ||
    fail "café's xvda after statistics=present: $("$XENSTATS" xentop -b -i 1 -x)"
pass "a disk's statistics present again: its figures again"

# --pcpus: the emulator has no idle times per pCPU? then xentop's failure; else the table
if "$XENSTATS" xentop -b -i 2 -d 0.2 -p >"$XENSTATS_TEST_TMP/pcpus.out" 2>"$XENSTATS_TEST_TMP/pcpus.err"; then
    grep -c "^| [0-9]" "$XENSTATS_TEST_TMP/pcpus.out" | grep -qx 8 || fail "-p: $(cat "$XENSTATS_TEST_TMP/pcpus.out")"
else
    grep -q "idle time" "$XENSTATS_TEST_TMP/pcpus.err" || fail "-p: $(cat "$XENSTATS_TEST_TMP/pcpus.err")"
fi
pass "-p: a table of the pCPUs after each round, or a clear error"

# SIGTERM ends it cleanly, between rounds
"$XENSTATS" xentop -b -d 10 >"$XENSTATS_TEST_TMP/term.out" &
pid=$!
sleep 1
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM: exit status $rc"
[ "$(grep -c NAME "$XENSTATS_TEST_TMP/term.out")" -eq 1 ] || fail "SIGTERM: $(cat "$XENSTATS_TEST_TMP/term.out")"
pass "SIGTERM ends xentop -b with status 0 after a whole round"
