#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guests' vifs and vbds on the emulated host, read by the same sysfs
# reader as on Xen: every counter equals what the emulator was told,
# exactly, in the public API, the agent's JSON and /metrics, and top
# (--direct and from the agent); devices attached and detached while the
# agent runs come and go in all of them; counters move with the workload
# and stop while the domain is paused; a counter file that is not a plain
# number leaves its device out instead of giving a wrong figure.  The
# vifs' counters come from the interface table (proc/net/dev), as on Xen.
. "$(dirname "$0")/lib.sh"

: "${XENSTATS_HOST_PROBE:?meson test sets XENSTATS_HOST_PROBE}"
PROBE=$XENSTATS_HOST_PROBE
SYS=$XENSTATS_EMU_DIR/sys
xsread() { XENSTORED_PATH="$XENSTATS_EMU_DIR/xenstore/0" xenstore-read "$@"; }

expect_fail "bad vifs" "vifs=65: expected 0..64" "$XENSTATS" emu -D name=a,vifs=65
expect_fail "bad vbds" "vbds=sda: expected a number of disks or vdevs" "$XENSTATS" emu -D name=a,vbds=sda
expect_fail "vbd twice" "vbds=xvda:xvda: xvda twice" "$XENSTATS" emu -D name=a,vbds=xvda:xvda
expect_fail "bad traffic" "traffic=maybe: expected yes or no" "$XENSTATS" emu -D name=a,traffic=maybe

start_emu -p 2 \
    -D name=web,vcpus=1,workload=cpu,vifs=1,vbds=xvda,traffic=no \
    -D name=db,vcpus=1,workload=idle,vifs=2,vbds=xvda:xvdb:xvdq,traffic=no \
    -D name=busy,vcpus=2,workload=io,vifs=1,vbds=1
web=1 db=2 busy=3

# ---- what the emulator shows, through the public API and xenstore ----
"$XENSTATS" emu vif-set web 0 rx_bytes=123456789012345678,rx_packets=1000001,rx_errors=3,rx_dropped=4,tx_bytes=18446744073709551615,tx_packets=6,tx_errors=7,tx_dropped=8
"$XENSTATS" emu vbd-set web xvda oo_req=11,rd_req=12,wr_req=13,f_req=14,ds_req=15,rd_sect=16,wr_sect=18446744073709551614
"$XENSTATS" emu vif-set db 0 rx_bytes=2048000,tx_bytes=1024000,rx_packets=10,tx_packets=20
"$XENSTATS" emu vif-set db 1 rx_bytes=1024,tx_bytes=3072,tx_packets=+5,tx_packets=+2
"$XENSTATS" emu vbd-set db xvda rd_req=100,wr_req=200,oo_req=3,rd_sect=4000,wr_sect=8000
"$XENSTATS" emu vbd-set db 51728 rd_req=1,wr_req=2,rd_sect=5,wr_sect=7
"$XENSTATS" emu vbd-set db xvdq f_req=9,ds_req=10
"$XENSTATS" emu vif-set web 0 rx_gso_checksum_fixup=1,tx_zerocopy_sent=2,tx_zerocopy_success=3,tx_zerocopy_fail=4,tx_frag_overflow=18446744073709551615
grep -qx "tx_frag_overflow: 18446744073709551615" "$SYS/class/net/vif1.0/ethtool" || fail "the tree's ethtool file"

"$PROBE" --devices | grep -E '^(vif|vbd) [12] ' >"$XENSTATS_TEST_TMP/probe"
cat >"$XENSTATS_TEST_TMP/want" <<EOF
vif 1 0 vif1.0 123456789012345678 1000001 3 4 18446744073709551615 6 7 8
vif 2 0 vif2.0 2048000 10 0 0 1024000 20 0 0
vif 2 1 vif2.1 1024 0 0 0 3072 7 0 0
vbd 1 51712 xvda 11 12 13 14 15 16 18446744073709551614
vbd 2 51712 xvda 3 100 200 0 0 4000 8000
vbd 2 51728 xvdb 0 1 2 0 0 5 7
vbd 2 268439552 xvdq 0 0 0 9 10 0 0
EOF
diff "$XENSTATS_TEST_TMP/want" "$XENSTATS_TEST_TMP/probe" || fail "the API's devices are not what the emulator was told"
[ "$(cat "$SYS/class/net/vif1.0/statistics/tx_bytes")" = 18446744073709551615 ] || fail "sysfs tx_bytes"
grep -Eq '^ *vif1\.0:123456789012345678 +1000001 +3 +4 +0 +0 +0 +0 +18446744073709551615 +6 +7 +8 +0 +0 +0 +0$' \
    "$XENSTATS_EMU_DIR/proc/net/dev" || fail "the interface table: $(cat "$XENSTATS_EMU_DIR/proc/net/dev")"
[ -d "$SYS/bus/xen-backend/devices/vif-2-1" ] && [ -d "$SYS/bus/xen-backend/devices/vbd-2-268439552/statistics" ] ||
    fail "the tree lacks db's devices: $(ls "$SYS/bus/xen-backend/devices")"
[ "$(xsread /local/domain/0/backend/vbd/2/51728/dev)" = xvdb ] || fail "blkback's dev node"
[ "$(xsread /local/domain/2/device/vif/1/backend)" = /local/domain/0/backend/vif/2/1 ] || fail "netfront's backend node"
[ "$(XENSTATS_EMU_DOMID=$db "$PROBE" --devices | grep -c '^v')" = 0 ] || fail "a guest sees backends"
"$XENSTATS" emu devices | grep -q "^2 vif 1 vif2.1 no rx_bytes=1024 .* tx_packets=7 " || fail "emu devices: $("$XENSTATS" emu devices)"
pass "every vif and vbd counter through the API equals what the emulator set (names from blkback's dev node)"

expect_fail "vif-set unknown counter" "a vif has no counter 'rd_req'" "$XENSTATS" emu vif-set web 0 rd_req=1
expect_fail "vif-set bad value" "rx_bytes=-1: expected a number" "$XENSTATS" emu vif-set web 0 rx_bytes=-1
expect_fail "vif-set overflow" "would pass 2^64-1" "$XENSTATS" emu vif-set web 0 tx_bytes=+1
expect_fail "vif-set no device" "domain 1 has no vif 5" "$XENSTATS" emu vif-set web 5 rx_bytes=1
expect_fail "vbd-set by bad name" "'sda' is not a vbd" "$XENSTATS" emu vbd-set web sda rd_req=1
expect_fail "vif-set usage" "usage: xenstats emu vif-set DOMAIN DEVID" "$XENSTATS" emu vif-set web 0
expect_fail "attach twice" "domain 1 has vif 0 already" "$XENSTATS" emu network-attach web 0
expect_fail "attach bad vdev" "'hda' is not a vdev" "$XENSTATS" emu block-attach web hda
expect_fail "detach missing" "domain 2 has no vbd xvdz" "$XENSTATS" emu block-detach db xvdz
expect_fail "attach no domain" "no domain is named 'nope'" "$XENSTATS" emu network-attach nope
"$PROBE" --devices | grep -E '^vif 1 0 ' | grep -q " 18446744073709551615 6 7 8$" || fail "a refused set changed a counter"

# ---- the agent: JSON and /metrics of one sample ----
start_agent
check "the agent's devices equal the emulator's" "
want = {}
for line in open('$XENSTATS_TEST_TMP/want'):
    f = line.split()
    want.setdefault((f[0], int(f[1])), []).append((int(f[2]), f[3], [int(x) for x in f[4:]]))
vif_keys = ['rx_bytes', 'rx_packets', 'rx_errors', 'rx_dropped', 'tx_bytes', 'tx_packets', 'tx_errors', 'tx_dropped']
vbd_keys = ['oo_req', 'rd_req', 'wr_req', 'f_req', 'ds_req', 'rd_sect', 'wr_sect']
families = {'rx_bytes': 'xenstats_vif_receive_bytes_total', 'rx_packets': 'xenstats_vif_receive_packets_total',
            'rx_errors': 'xenstats_vif_receive_errors_total', 'rx_dropped': 'xenstats_vif_receive_drops_total',
            'tx_bytes': 'xenstats_vif_transmit_bytes_total', 'tx_packets': 'xenstats_vif_transmit_packets_total',
            'tx_errors': 'xenstats_vif_transmit_errors_total', 'tx_dropped': 'xenstats_vif_transmit_drops_total',
            'oo_req': 'xenstats_vbd_out_of_requests_total', 'rd_req': 'xenstats_vbd_read_requests_total',
            'wr_req': 'xenstats_vbd_write_requests_total', 'f_req': 'xenstats_vbd_flush_requests_total',
            'ds_req': 'xenstats_vbd_discard_requests_total', 'rd_sect': 'xenstats_vbd_read_sectors_total',
            'wr_sect': 'xenstats_vbd_write_sectors_total'}
for name in ['web', 'db']:
    x = dom[name]
    for kind, keys in [('vif', vif_keys), ('vbd', vbd_keys)]:
        got = [(v['devid'], v['device'], [v[k] for k in keys]) for v in x[kind + 's']]
        assert got == want[(kind, x['domid'])], (name, kind, got, want[(kind, x['domid'])])
        for devid, device, values in got:
            for k, v in zip(keys, values):
                assert dmraw(families[k], name, device=device) == str(v), (name, device, k, dmraw(families[k], name, device=device), v)
assert dom['Domain-0']['vifs'] == [] and dom['Domain-0']['vbds'] == [], dom['Domain-0']
assert [v['device'] for v in dom['busy']['vifs']] == ['vif3.0'] and [v['device'] for v in dom['busy']['vbds']] == ['xvda']
"
pass "every vif and vbd figure in the agent's JSON and /metrics equals the emulator's, exactly"
check "netback's own statistics equal the emulator's" "
want = {'rx_gso_checksum_fixup': 1, 'tx_zerocopy_sent': 2, 'tx_zerocopy_success': 3, 'tx_zerocopy_fail': 4,
        'tx_frag_overflow': 18446744073709551615}
v = dom['web']['vifs'][0]
for k, n in want.items():
    assert v['netback_' + k] == n, (k, v)
    assert dmraw('xenstats_vif_netback_' + k + '_total', 'web', device='vif1.0') == str(n), k
assert all(x['netback_' + k] == 0 for x in dom['db']['vifs'] for k in want), dom['db']['vifs']
"
pass "netback's five statistics (the tree's ethtool file) reach JSON and /metrics exactly"
promtool check metrics <"$XENSTATS_TEST_TMP/m.txt" || fail "promtool rejects /metrics"

# top: xentop's columns from the agent and in-process, on db (sums of its devices)
top_db() { # top_db ARGS...: db's row of top -b -x as NAME=VALUE words, then web's and Domain-0's counts
    "$XENSTATS" top -b --xentop --iterations 1 -d 200ms "$@" | python3 -c '
import sys
lines = sys.stdin.read().splitlines()
head = lines[0].split()
# counted from the end: MAXMEM(k) of an unlimited domain is two words ("no limit")
rows = {l.split()[0]: dict(zip(head[-11:], l.split()[-11:])) for l in lines[1:]}
r = rows["db"]
print(" ".join(f"{k}={r[k]}" for k in ["NETS", "NETTX(k)", "NETRX(k)", "VBDS", "VBD_OO", "VBD_RD", "VBD_WR", "VBD_RSECT", "VBD_WSECT"]))
print(rows["web"]["NETS"], rows["web"]["VBDS"], rows["Domain-0"]["NETS"], rows["Domain-0"]["VBDS"])'
}
want_top="NETS=2 NETTX(k)=1003 NETRX(k)=2001 VBDS=3 VBD_OO=3 VBD_RD=101 VBD_WR=202 VBD_RSECT=4005 VBD_WSECT=8007
1 1 0 0"
[ "$(top_db --direct)" = "$want_top" ] || fail "top --direct: $(top_db --direct)"
[ "$(top_db --url "$URL")" = "$want_top" ] || fail "top from the agent: $(top_db --url "$URL")"
pass "top --batch --xentop, --direct and from the agent, shows db's devices summed exactly"

# ---- devices attached and detached while the agent runs ----
[ "$("$XENSTATS" emu network-attach db)" = 2 ] || fail "network-attach's devid"
"$XENSTATS" emu vif-set db 2 rx_bytes=77,tx_dropped=5
[ "$("$XENSTATS" emu block-attach web xvdc)" = 51744 ] || fail "block-attach's devid"
"$XENSTATS" emu vbd-set web xvdc wr_req=42
"$XENSTATS" emu block-detach db xvdb
"$XENSTATS" emu network-detach web 0
check "attached and detached devices" "
d, w = dom['db'], dom['web']
assert [(v['devid'], v['device']) for v in d['vifs']] == [(0, 'vif2.0'), (1, 'vif2.1'), (2, 'vif2.2')], d['vifs']
assert d['vifs'][2]['rx_bytes'] == 77 and d['vifs'][2]['tx_dropped'] == 5 and d['vifs'][2]['tx_bytes'] == 0
assert [v['device'] for v in d['vbds']] == ['xvda', 'xvdq'], d['vbds']
assert w['vifs'] == [], w['vifs']
assert [(v['devid'], v['device'], v['wr_req'], v['rd_req']) for v in w['vbds']] == [(51712, 'xvda', 13, 12), (51744, 'xvdc', 42, 0)]
assert dmraw('xenstats_vif_receive_bytes_total', 'db', device='vif2.2') == '77'
assert dmraw('xenstats_vif_transmit_drops_total', 'db', device='vif2.2') == '5'
assert dmraw('xenstats_vbd_write_requests_total', 'web', device='xvdc') == '42'
assert dmraw('xenstats_vbd_read_requests_total', 'db', device='xvdb') is None
assert dmraw('xenstats_vif_receive_bytes_total', 'web', device='vif1.0') is None
assert not any(k[0].startswith('xenstats_vif_') and ('device', 'vif1.0') in k[1] for k in m)
"
[ -z "$(xsread /local/domain/0/backend/vbd/2/51728/dev 2>/dev/null)" ] || fail "a detached vbd's backend node stays"
[ ! -e "$SYS/bus/xen-backend/devices/vbd-2-51728" ] && [ ! -e "$SYS/class/net/vif1.0" ] &&
    [ ! -e "$SYS/bus/xen-backend/devices/vif-1-0" ] || fail "a detached device stays in the tree"
"$XENSTATS" top -b --xentop --iterations 1 -d 200ms --direct | awk '$1 == "web" || $1 == "db" { print $(NF - 9), $(NF - 6) }' \
    >"$XENSTATS_TEST_TMP/top.counts"
printf '3 2\n0 2\n' | diff - "$XENSTATS_TEST_TMP/top.counts" || fail "top --direct's NETS and VBDS after attach/detach"
"$XENSTATS" top -b --xentop --iterations 1 -d 200ms --url "$URL" | awk '$1 == "web" || $1 == "db" { print $(NF - 9), $(NF - 6) }' |
    diff - "$XENSTATS_TEST_TMP/top.counts" || fail "top from the agent disagrees with top --direct after attach/detach"
pass "devices attached and detached while the agent runs come and go in JSON, /metrics and top"

# a domain destroyed with its devices takes them along
"$XENSTATS" emu create name=gone,vifs=1,vbds=1,traffic=no >/dev/null
check "a new domain's devices" "
assert [v['device'] for v in dom['gone']['vifs']] == ['vif4.0'] and [v['device'] for v in dom['gone']['vbds']] == ['xvda']
"
"$XENSTATS" emu destroy 4
check "a destroyed domain's devices" "
assert 'gone' not in dom
assert not any(('domain', 'gone') in k[1] for k in m)
"
[ ! -e "$SYS/class/net/vif4.0" ] && [ ! -e "$SYS/bus/xen-backend/devices/vbd-4-51712" ] || fail "a destroyed domain's tree stays"
[ -z "$(xsread /local/domain/0/backend/vif/4 2>/dev/null)" ] || fail "a destroyed domain's backend nodes stay"
pass "a domain's devices come and go with it"

# ---- counters move with the workload, and stop while paused ----
# next_sample: wait until the agent's samples began after now (two more rounds)
next_sample() {
    local first now
    first=$(curl -sf "$URL/api/v1/snapshot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["agent"]["samples"])')
    for _ in $(seq 1 50); do
        now=$(curl -sf "$URL/api/v1/snapshot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["agent"]["samples"])')
        [ "$now" -ge $((first + 2)) ] && return 0
        sleep 0.1
    done
    fail "the agent's samples do not move"
}
# busy's counters now, and those of the last `record` (a fixed reference)
moving='
b = dom["busy"]
now = [b["vifs"][0][k] for k in ("rx_bytes", "rx_packets", "tx_bytes", "tx_packets")] + \
      [b["vbds"][0][k] for k in ("rd_req", "wr_req", "rd_sect", "wr_sect")]
import os
path = os.path.join(sys.argv[1], "busy.ref")
last = eval(open(path).read()) if os.path.exists(path) else None
'
record() { check "busy's counters" "$moving
open(path, 'w').write(repr(now))
"; }
record
check "busy's counters move" "$moving
assert now[0] > 0 and now[2] > 0 and now[4] + now[5] > 0, now
assert all(n >= l for n, l in zip(now, last)) and now[0] > last[0] and now[4] + now[5] > last[4] + last[5], (last, now)
"
pass "an io-bound domain's vif and vbd counters move with its workload"
"$XENSTATS" emu pause busy # the pause shows what the domain did before it
next_sample
record
sleep 1.2
next_sample
check "busy's counters stay while paused" "$moving
assert now == last, (last, now)
"
"$XENSTATS" emu unpause busy
check "busy's counters move again" "$moving
assert now[0] > last[0] and now[4] + now[5] > last[4] + last[5], (last, now)
"
pass "a paused domain's devices carry no traffic"
"$XENSTATS" emu vif-set busy 0 traffic=no
"$XENSTATS" emu vbd-set busy xvda traffic=no
sleep 1.2 # traffic of bursts before the change is shown within a second
next_sample
record
sleep 1.2
next_sample
check "busy's counters stay with traffic=no" "$moving
assert now == last, (last, now)
"
pass "traffic=no stops a device's counters"

# ---- a hostile counter leaves its device out ----
# vifs: their line in the interface table (proc/net/dev); no traffic moves now, so no rewrite
NET_DEV=$XENSTATS_EMU_DIR/proc/net/dev
plant() { # plant VALUE: vif2.0's rx_errors (the third counter) in the table
    python3 - "$NET_DEV" "$1" <<'PY'
import os, sys
path, bad = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
for i, l in enumerate(lines):
    name, _, rest = l.partition(":")
    if name.strip() == "vif2.0":
        f = rest.split()
        f[2] = bad
        lines[i] = name + ":" + " ".join(f)
open(path + ".new", "w").write("\n".join(lines))
os.rename(path + ".new", path)
PY
}
for bad in "12abc" "" "-1" "18446744073709551616" "007" "1.5" "$(printf '%040d' 1)"; do
    plant "$bad"
    next_sample
    check "counter '$bad' leaves vif2.0 out" "
assert [v['device'] for v in dom['db']['vifs']] == ['vif2.1', 'vif2.2'], dom['db']['vifs']
assert dmraw('xenstats_vif_receive_bytes_total', 'db', device='vif2.0') is None
"
done
"$XENSTATS" emu vif-set db 0 rx_errors=1
check "vif2.0 back" "
assert [(v['device'], v['rx_errors'], v['rx_bytes']) for v in dom['db']['vifs']][0] == ('vif2.0', 1, 2048000), dom['db']['vifs']
"
# vbds: a counter file of blkback's statistics/, written in place as sysfs
# changes an attribute's text (the agent keeps the file open and reads it
# again at offset 0: docs/collector.md)
stats=$SYS/bus/xen-backend/devices/vbd-2-51712/statistics
for bad in "12abc" "" "-1" "18446744073709551616" "007" " 5" "$(printf '%040d' 1)"; do
    printf '%s\n' "$bad" >"$stats/rd_req"
    next_sample
    # listed, with no figure (xentop shows '-' for it)
    check "counter '$bad' leaves db's xvda without figures" "
assert [v['device'] for v in dom['db']['vbds']] == ['xvda', 'xvdq'], dom['db']['vbds']
assert all(dom['db']['vbds'][0].get(k) is None for k in ['oo_req', 'rd_req', 'wr_req', 'rd_sect', 'wr_sect']), dom['db']['vbds']
assert dmraw('xenstats_vbd_read_requests_total', 'db', device='xvda') is None
assert dmraw('xenstats_vbd_read_requests_total', 'db', device='xvdq') is not None
"
done
"$XENSTATS" emu vbd-set db xvda rd_req=101
check "xvda back" "
assert [(v['device'], v['rd_req']) for v in dom['db']['vbds']][0] == ('xvda', 101), dom['db']['vbds']
"
pass "a counter file that is not a plain number leaves its vif out and its vbd without figures, never a wrong number"

stop_emu || fail "emulator exit status"
[ ! -e "$SYS" ] || fail "the emulator leaves its sysfs tree behind"
pass "the emulator removes its tree when it stops"
