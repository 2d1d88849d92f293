#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats vcpu` against a running `xenstats emu`, as separate processes.
. "$(dirname "$0")/lib.sh"

start_emu -p 2 -D name=busy,vcpus=2,workload=cpu -D name=idle,vcpus=2,workload=idle \
    -D name=part,vcpus=3,workload=io,offline=1 -D name=stock,vcpus=1,vcpu-stats=no

# Per vCPU the four times of an interval add up to the interval.  The
# staleness rule makes this exact up to clock reads; we allow 0.1%.
"$XENSTATS" vcpu --json --interval 1s --count 2 busy >"$XENSTATS_TEST_TMP/busy.json"
"$XENSTATS" vcpu --json --interval 1s --count 2 idle >"$XENSTATS_TEST_TMP/idle.json"
"$XENSTATS" vcpu --json --interval 1s --count 1 part >"$XENSTATS_TEST_TMP/part.json"
python3 - "$XENSTATS_TEST_TMP" <<'PY' || fail "interval accounting"
import json, sys
d = sys.argv[1]
def reports(name):
    return [json.loads(l) for l in open(f"{d}/{name}.json")]
busy, idle, part = reports("busy"), reports("idle"), reports("part")
assert len(busy) == 2 and len(idle) == 2 and len(part) == 1, "report counts"
for r in busy + idle + part:
    iv = r["interval_ns"]
    assert 0.9e9 < iv < 3e9, f"interval {iv}"
    for v in r["vcpus"]:
        total = sum(v[k] for k in ("running", "runnable", "blocked", "offline")) * 1e9
        assert abs(total - iv) <= iv * 0.001, f"{r['name']} vcpu {v['vcpu']}: {total} vs {iv}"
def share(reps, key):
    vals = [v[key + "_share"] for r in reps for v in r["vcpus"]]
    return sum(vals) / len(vals)
b, i = share(busy, "running"), share(idle, "running")
assert b > 0.5, f"busy running share {b}"
assert i < 0.1, f"idle running share {i}"
assert b > i
assert share(idle, "blocked") > 0.85
off = part[0]["vcpus"][2]
assert off["state"] == "offline" and off["offline_share"] == 1.0, off
print(f"busy running {b:.3f}, idle running {i:.3f}")
PY
pass "interval times add up; cpu-bound runs more than idle; offline vCPU offline"

# the cumulative view adds up to the vCPU's life (which started before)
out=$("$XENSTATS" vcpu busy)
echo "$out" | grep -q '^domain 1 (busy): 2 vCPUs' || fail "text header: $out"
[ "$(echo "$out" | grep -cE '^[01] +(running|runnable|blocked) ')" -eq 2 ] || fail "text rows: $out"
pass "text output"

# by name and by domid give the same domain
"$XENSTATS" vcpu --json 2 | grep -q '"name":"idle"' || fail "domid lookup"
pass "domain by id"

# errors: clear words and a non-zero exit
expect_fail "missing domain" "domain 42 does not exist" "$XENSTATS" vcpu 42
expect_fail "unknown name" "no domain is named 'nosuch'" "$XENSTATS" vcpu nosuch
expect_fail "unsupported region" "XENMEM_resource_stats_table unsupported" "$XENSTATS" vcpu stock
# each Xen version's refusal of a resource it lacks reads as "unsupported",
# never as a malformed region (4.20 answers EINVAL)
for answer in EOPNOTSUPP EINVAL ENOSYS ENOTTY; do
    expect_fail "unsupported region ($answer)" "XENMEM_resource_stats_table unsupported" \
        env XENSTATS_EMU_NO_RESOURCE=$answer "$XENSTATS" vcpu stock
done
expect_fail "bad XENSTATS_EMU_NO_RESOURCE" "is not one of" env XENSTATS_EMU_NO_RESOURCE=EIO "$XENSTATS" vcpu stock
expect_fail "own domain" "permission denied" "$XENSTATS" vcpu 0
expect_fail "guest is not privileged" "permission denied" env XENSTATS_EMU_DOMID=2 "$XENSTATS" vcpu 1
expect_fail "bad interval" "--interval" "$XENSTATS" vcpu -i 0 busy
expect_fail "bad count" "--count" "$XENSTATS" vcpu -c x busy
expect_fail "no domain argument" "Usage" "$XENSTATS" vcpu

# a dump read back offline; malformed dumps refused
"$XENSTATS" emu dump busy "$XENSTATS_TEST_TMP/busy.dump"
[ "$(stat -c %s "$XENSTATS_TEST_TMP/busy.dump")" -eq $((192 + 2 * 128)) ] || fail "dump size"
# version 2 as the emulator writes it: the domain section holds busy's
# memory (128 MiB: 32768 pages), every record its magic, a time base
python3 - "$XENSTATS_TEST_TMP/busy.dump" <<'PY' || fail "version 2 dump"
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, offset, size, stride, hsize, version, nr, arch, doff, dsize = struct.unpack_from("<10I", b)
assert (magic, version, nr, hsize, size) == (0xaabbccdd, 2, 2, 72, 72), (magic, version, nr, hsize, size)
assert b[hsize:doff] == bytes(doff - hsize), "reserved bytes not zero"
seq, dmagic, tot, maxp, outst = struct.unpack_from("<2I3Q", b, doff)
assert dmagic == 0x4d4f4478 and seq % 2 == 0 and seq > 0, (hex(dmagic), seq)
assert tot == 32768 and maxp == 32768 + 256 and outst == 0, (tot, maxp, outst)
for v in range(nr):
    rseq, rmagic = struct.unpack_from("<2I", b, offset + v * stride)
    assert rmagic == 0x55504376 and rseq % 2 == 0, (v, hex(rmagic), rseq)
    ticks = struct.unpack_from("<Q", b, offset + v * stride + 64)[0]
    source, domid, hz = struct.unpack_from("<2IQ", b, 56)
    assert source == 0 or (hz > 0 and ticks < 1 << 63), (source, hz, ticks)
PY
"$XENSTATS" vcpu --json --file "$XENSTATS_TEST_TMP/busy.dump" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert len(r["vcpus"]) == 2 and r["clock_ns"] is None
assert all(v["running"] > 0 for v in r["vcpus"])' || fail "dump read back"
pass "dump and --file"

# the domain section's counters (version 2): busy's 128 MiB, live and from the dump,
# in the text and the JSON; a domain without a region has none to show
"$XENSTATS" vcpu --json busy | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["domain_counters"] == {"tot_pages": 32768, "max_pages": 33024, "outstanding_pages": 0}, r["domain_counters"]' ||
    fail "domain counters in the JSON"
"$XENSTATS" vcpu --json --file "$XENSTATS_TEST_TMP/busy.dump" | grep -q '"tot_pages":32768' || fail "domain counters of a dump"
"$XENSTATS" vcpu busy | grep -qx 'domain counters: tot_pages 32768 max_pages 33024 outstanding_pages 0 (4 KiB pages)' ||
    fail "domain counters in the text: $("$XENSTATS" vcpu busy)"
pass "domain counters of the table's domain section"
python3 - "$XENSTATS_TEST_TMP" <<'PY'
import sys
d = sys.argv[1]
b = bytearray(open(f"{d}/busy.dump", "rb").read())
bad = bytearray(b); bad[0] ^= 0xff; open(f"{d}/magic.dump", "wb").write(bad)
open(f"{d}/short.dump", "wb").write(b[:100])
bad = bytearray(b); bad[12:16] = (96).to_bytes(4, "little"); open(f"{d}/stride.dump", "wb").write(bad)
off, stride = int.from_bytes(b[4:8], "little"), int.from_bytes(b[12:16], "little")
bad = bytearray(b); bad[off + stride + 4] ^= 1; open(f"{d}/record.dump", "wb").write(bad)
PY
expect_fail "dump with bad magic" "bad magic" "$XENSTATS" vcpu --file "$XENSTATS_TEST_TMP/magic.dump"
expect_fail "truncated dump" "beyond the mapping" "$XENSTATS" vcpu --file "$XENSTATS_TEST_TMP/short.dump"
expect_fail "dump with bad stride" "inconsistent header" "$XENSTATS" vcpu --file "$XENSTATS_TEST_TMP/stride.dump"
expect_fail "dump with a record's magic wrong" "bad magic" "$XENSTATS" vcpu --file "$XENSTATS_TEST_TMP/record.dump"
expect_fail "missing dump" "No such file" "$XENSTATS" vcpu --file "$XENSTATS_TEST_TMP/none.dump"

# streaming stops cleanly on SIGINT, and notices a destroyed domain
"$XENSTATS" vcpu -i 100ms busy >"$XENSTATS_TEST_TMP/stream.txt" 2>&1 &
pid=$!
sleep 0.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT exit status $rc"
grep -q "interval" "$XENSTATS_TEST_TMP/stream.txt" || fail "no report before SIGINT"
pass "SIGINT stops streaming with status 0"

"$XENSTATS" vcpu -i 100ms idle >/dev/null 2>"$XENSTATS_TEST_TMP/gone.txt" &
pid=$!
sleep 0.4
"$XENSTATS" emu destroy 2 >/dev/null
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 1 ] || fail "destroyed domain exit status $rc"
grep -q "was destroyed" "$XENSTATS_TEST_TMP/gone.txt" || fail "destroyed message: $(cat "$XENSTATS_TEST_TMP/gone.txt")"
pass "a destroyed domain ends streaming with a clear error"

stop_emu || fail "emulator exit status"
expect_fail "no host" "no Xen host found" "$XENSTATS" vcpu 1
