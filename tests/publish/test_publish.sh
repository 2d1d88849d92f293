#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `xenstats publish` end to end: the guest agent in domain 1 of an emulated
# host, sampled by `xenstats pv` in dom0; the published figures are checked
# against this machine's /proc and /sys at the time of the sample.
. "$(dirname "$0")/../integration/lib.sh"
: "${XENSTATS_SOURCE_ROOT:?}"
T=$XENSTATS_TEST_TMP

start_emu -D name=guest,vcpus=1 -D name=spare,vcpus=1
"$XENSTATS" pv --toolstack --count 1 1 >/dev/null

# ---- errors: clear words, non-zero exit --------------------------------------
expect_fail "domain without a stats node" "this domain is not monitored" \
    env XENSTATS_EMU_DOMID=2 "$XENSTATS" publish
expect_fail "no host" "no Xen host found" env XENSTATS_EMU_DIR="$T/nothing" XENSTATS_EMU_DOMID=1 "$XENSTATS" publish
expect_fail "bad --sets" "--sets cpu,foo" "$XENSTATS" publish --sets cpu,foo
expect_fail "nothing to publish" "nothing to publish" "$XENSTATS" publish --sets none
expect_fail "bad --rescan" "--rescan" "$XENSTATS" publish --rescan 5ms
expect_fail "bad --provider" "--provider" "$XENSTATS" publish --provider ""
expect_fail "stray argument" "unexpected argument" "$XENSTATS" publish 1
printf '[app]\nu64 ok 1\nu64 bad -1\n' >"$T/bad.custom"
expect_fail "bad custom file" "bad.custom:3: value '-1' of 'bad' is not a valid u64" \
    env XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --custom "$T/bad.custom"
printf '[memory]\nu64 x 1\n' >"$T/clash.custom"
expect_fail "custom set named like a built-in" "clash.custom:1: set \"memory\" is a name of the built-in sets" \
    env XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --custom "$T/clash.custom"
expect_fail "missing custom file" "No such file" env XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --custom "$T/none"
"$XENSTATS" publish --help | grep -q -- "--custom FILE" || fail "--help"
pass "--help"
expect_fail "bad --cpu" "--cpu x: expected a CPU number" "$XENSTATS" publish --cpu x
expect_fail "--cpu of no CPU" "--cpu 1000: no such CPU" env XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --cpu 1000

# ---- the agent on the real /proc ---------------------------------------------
write_custom() { # VALUE: rewrite the custom file the way users should: temp + rename
    printf '# test\n[app]\nu64 requests_total %s\nascii version 1.0 beta\ndouble ratio 0.25\n' "$1" >"$T/app.tmp"
    mv "$T/app.tmp" "$T/app.custom"
}
write_custom 41
XENSTATS_EMU_DOMID=1 "$XENSTATS" publish -v --custom "$T/app.custom" --rescan 500ms \
    >"$T/publish.out" 2>"$T/publish.err" &
PUB=$!

# A monitor's first sample after it binds a set's port may be answered by
# the event Xen marks pending on binding, before the provider refreshed (it
# then shows the values of the previous request); every check of values
# uses the second sample of one monitor.
# The timeout is generous: the test machine may be busy, and only a set that
# never answers should look stale.
pv_fresh() { # ARGS...: the last of two samples
    "$XENSTATS" pv --json --interval 300ms --count 2 --timeout 2s "$@" | tail -n 1
}

wait_sets() { # PROVIDER COUNT: until the monitor sees COUNT active sets of PROVIDER
    local i
    for i in $(seq 1 60); do
        if "$XENSTATS" pv --json --timeout 2s 1 2>/dev/null | python3 -c '
import json, sys
sets = [s for s in json.load(sys.stdin)["sets"] if s["provider"] == sys.argv[1] and s["state"] == "active"]
sys.exit(0 if len(sets) == int(sys.argv[2]) else 1)' "$1" "$2"; then
            return 0
        fi
        kill -0 "$PUB" 2>/dev/null || fail "publish exited: $(cat "$T/publish.err")"
        sleep 0.2
    done
    fail "$1: expected $2 active sets; publish said: $(cat "$T/publish.err")"
}

# --cpu: answers from one CPU (the emulated host has no interrupts to steer)
XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --provider Pinned --sets load --cpu 0 \
    >"$T/pinned.out" 2>"$T/pinned.err" &
PUB_MAIN=$PUB
PUB=$!
wait_sets Pinned 1
[ "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/$PUB/status)" = 0 ] ||
    fail "--cpu 0: $(grep Cpus_allowed_list /proc/$PUB/status)"
kill -TERM $PUB
wait $PUB || fail "publish --cpu 0 exited $?: $(cat "$T/pinned.err")"
PUB=$PUB_MAIN
pass "--cpu 0: pinned, its set answered, withdrawn on SIGTERM"

# One set per interface and per whole disk, plus memory, cpu, load, app.
snapshot() { # DIR: the figures of this machine now
    mkdir -p "$1"
    cp /proc/meminfo /proc/stat /proc/loadavg /proc/uptime /proc/diskstats "$1/"
    cp /proc/net/dev "$1/netdev"
    local d
    for d in /sys/class/net/*; do
        [ -r "$d/statistics/rx_bytes" ] || continue
        printf '%s %s %s\n' "${d##*/}" "$(cat "$d/statistics/rx_bytes")" "$(cat "$d/statistics/tx_bytes")"
    done >"$1/sysnet"
    for d in /sys/block/*; do
        [ -r "$d/stat" ] && printf '%s %s\n' "${d##*/}" "$(cat "$d/stat")"
    done >"$1/sysblock"
}
expected=$(python3 - <<'PY'
import re
def is_partition(name, names):
    base = name.rstrip("0123456789")
    if base == name or not base:
        return False
    return base in names or (base.endswith("p") and base[-2:-1].isdigit() and base[:-1] in names)
names = [l.split()[2] for l in open("/proc/diskstats") if len(l.split()) >= 14]
disks = [n for n in names if not n.startswith(("loop", "ram")) and not is_partition(n, names)]
nets = [l.split(":")[0].strip() for l in open("/proc/net/dev") if ":" in l and "|" not in l]
print(min(64, 4 + len(disks) + len(nets)))
PY
)
wait_sets xenstats-publish "$expected"
pass "published $expected sets (memory, cpu, load, app, every interface and whole disk)"

sample() { # N: /proc before, the monitor's sample, /proc after
    snapshot "$T/before$1"
    pv_fresh 1 >"$T/sample$1.json"
    snapshot "$T/after$1"
}
sample 1
sleep 1.1
sample 2

python3 - "$T" <<'PY' || fail "published values against /proc and /sys"
import json, os, sys
T = sys.argv[1]
HZ = os.sysconf("SC_CLK_TCK")

def sets(n):
    out = {}
    for s in json.load(open(f"{T}/sample{n}.json"))["sets"]:
        if s["provider"] != "xenstats-publish":
            continue
        assert s["state"] == "active", s
        out[s["set"]] = {k: v["value"] for k, v in s["stats"].items()}
    return out

def meminfo(d):
    return {l.split(":")[0]: int(l.split()[1]) * (1024 if l.split()[-1] == "kB" else 1) for l in open(f"{d}/meminfo")}

def stat(d):
    r = {}
    for l in open(f"{d}/stat"):
        f = l.split()
        if f and f[0] == "cpu":
            for name, v in zip(["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"], f[1:]):
                r[name + "_seconds_total"] = int(v) / HZ
        elif f and f[0] in ("ctxt", "processes", "intr"):
            r[{"ctxt": "context_switches_total", "processes": "forks_total", "intr": "interrupts_total"}[f[0]]] = \
                int(f[1])
    return r

def netdev(d):
    r = {}
    for l in open(f"{d}/netdev"):
        if ":" in l and "|" not in l:
            name, rest = l.split(":", 1)
            v = [int(x) for x in rest.split()]
            r[name.strip()] = {"rx_bytes_total": v[0], "rx_packets_total": v[1], "tx_bytes_total": v[8],
                               "tx_packets_total": v[9]}
    return r

def diskstats(d):
    r = {}
    for l in open(f"{d}/diskstats"):
        f = l.split()
        if len(f) >= 14:
            r[f[2]] = {"reads_completed_total": int(f[3]), "read_bytes_total": int(f[5]) * 512,
                       "writes_completed_total": int(f[7]), "written_bytes_total": int(f[9]) * 512,
                       "io_time_seconds_total": int(f[12]) / 1000}
    return r

def sysfs(d):
    net = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(f"{d}/sysnet")}
    blk = {l.split()[0]: [int(x) for x in l.split()[1:]] for l in open(f"{d}/sysblock")}
    return net, blk

def between(what, lo, v, hi):
    assert lo <= v <= hi, f"{what}: {v} not within [{lo}, {hi}]"

worst_mem = worst_uptime = 0.0
for n in (1, 2):
    s = sets(n)
    b, a = f"{T}/before{n}", f"{T}/after{n}"
    # memory: totals exact, moving figures within 5 % of /proc at the time
    mb, ma, m = meminfo(b), meminfo(a), s["memory"]
    assert m["mem_total_bytes"] == mb["MemTotal"], (m["mem_total_bytes"], mb["MemTotal"])
    assert m["swap_total_bytes"] == mb.get("SwapTotal", 0)
    for key, name in (("MemFree", "mem_free_bytes"), ("MemAvailable", "mem_available_bytes"),
                      ("Cached", "cached_bytes"), ("Buffers", "buffers_bytes")):
        lo, hi = min(mb[key], ma[key]), max(mb[key], ma[key])
        v = m[name]
        dev = 0.0 if lo <= v <= hi else min(abs(v - lo), abs(v - hi)) / max(mb["MemTotal"], 1)
        worst_mem = max(worst_mem, dev)
        assert dev <= 0.05, f"{name} {v} vs /proc {lo}..{hi}"
    assert len(m) >= 20, sorted(m)
    # cpu: every counter lies between /proc before and after the sample
    sb, sa, c = stat(b), stat(a), s["cpu"]
    for k in sb:
        between(f"cpu {k}", sb[k] - 1e-6, c[k], sa[k] + 1e-6)  # seconds as doubles
    assert c["cpus"] >= 1
    # load: equal to /proc/loadavg at the time; uptime within 2 s
    lb, la, ld = open(f"{b}/loadavg").read().split(), open(f"{a}/loadavg").read().split(), s["load"]
    for i, k in enumerate(("load1", "load5", "load15")):
        assert ld[k] in (float(lb[i]), float(la[i])), f"{k} {ld[k]} vs {lb[i]} / {la[i]}"
    ub, ua = float(open(f"{b}/uptime").read().split()[0]), float(open(f"{a}/uptime").read().split()[0])
    assert ub - 2 <= ld["uptime_seconds"] <= ua + 2, (ld["uptime_seconds"], ub, ua)
    worst_uptime = max(worst_uptime, 0.0 if ub <= ld["uptime_seconds"] <= ua else
                       min(abs(ld["uptime_seconds"] - ub), abs(ld["uptime_seconds"] - ua)))
    assert ld["tasks"] > 0
    # every interface: /proc/net/dev and /sys/class/net agree with the set
    nb, na = netdev(b), netdev(a)
    snb, sbb = sysfs(b)
    sna, sba = sysfs(a)
    for ifname in nb:
        v = s[f"net {ifname}"]
        for k in nb[ifname]:
            between(f"net {ifname} {k}", nb[ifname][k], v[k], na[ifname][k])
        if ifname in snb and ifname in sna:
            between(f"/sys {ifname} rx_bytes", snb[ifname][0], v["rx_bytes_total"], sna[ifname][0])
            between(f"/sys {ifname} tx_bytes", snb[ifname][1], v["tx_bytes_total"], sna[ifname][1])
    # every whole disk: /proc/diskstats and /sys/block/<dev>/stat
    db, da = diskstats(b), diskstats(a)
    for name in [k[5:] for k in s if k.startswith("disk ")]:
        v = s[f"disk {name}"]
        for k in db[name]:
            between(f"disk {name} {k}", db[name][k] - 1e-6, v[k], da[name][k] + 1e-6)
        if name in sbb and name in sba:
            between(f"/sys/block/{name} reads", sbb[name][0], v["reads_completed_total"], sba[name][0])
            between(f"/sys/block/{name} sectors read", sbb[name][2] * 512, v["read_bytes_total"], sba[name][2] * 512)
    assert not any(k.startswith(("disk loop", "disk ram")) for k in s), sorted(s)
    # the custom set
    assert s["app"] == {"requests_total": 41, "version": "1.0 beta", "ratio": 0.25}, s["app"]

# counters never go back between the two samples
s1, s2 = sets(1), sets(2)
for name in s1:
    if name in ("memory", "load", "app") or name not in s2:
        continue
    for k, v in s1[name].items():
        if k in ("procs_running", "procs_blocked", "io_in_progress", "cpus", "boot_time_seconds"):
            continue
        assert s2[name][k] >= v, f"{name} {k} went back: {v} -> {s2[name][k]}"
assert s2["load"]["uptime_seconds"] >= s1["load"]["uptime_seconds"] + 1.0
print(f"memory: worst deviation from /proc {worst_mem * 100:.3f} % of MemTotal (allowed 5 %); "
      f"uptime: {worst_uptime:.2f} s outside the readings around the sample (allowed 2 s); "
      "counters, load and /sys figures within the readings")
PY
pass "values equal /proc and /sys at the time of the sample; counters monotonic"

# ---- custom values are live; a broken file stales its set, not the others -------
write_custom 42
pv_fresh 1 | grep -q '"requests_total":{"type":"u64","value":42}' || fail "custom value not re-read"
pass "custom file re-read on every sample"
printf '[app]\nu64 requests_total oops\n' >"$T/app.tmp" && mv "$T/app.tmp" "$T/app.custom"
pv_fresh 1 | python3 -c '
import json, sys
st = {s["set"]: s["state"] for s in json.load(sys.stdin)["sets"]}
assert st["app"] == "stale", st
assert st["memory"] == "active", st' || fail "a broken custom file"
grep -q "app.custom:2: value 'oops' of 'requests_total' is not a valid u64" "$T/publish.err" ||
    fail "no file:line warning: $(cat "$T/publish.err")"
write_custom 43
pv_fresh 1 | grep -q '"requests_total":{"type":"u64","value":43}' || fail "custom set did not recover"
pass "a broken custom file stales its set with a file:line warning, and recovers"

# a set added to the file is published at the next rescan
printf '[app]\nu64 requests_total 44\nascii version 1.0 beta\ndouble ratio 0.25\n[extra]\ns64 delta -5\n' >"$T/app.tmp"
mv "$T/app.tmp" "$T/app.custom"
wait_sets xenstats-publish $((expected + 1))
pass "custom set added at the rescan"

# ---- devices that come and go: a second provider on a fixture /proc ------------
cp -r "$XENSTATS_SOURCE_ROOT/tests/publish/fixtures/proc" "$T/proc"
XENSTATS_EMU_DOMID=1 "$XENSTATS" publish --provider fixture --proc "$T/proc" --rescan 300ms --sets memory,net,disk \
    2>"$T/fixture.err" &
FIX=$!
wait_sets fixture 9
pv_fresh 1 >"$T/fixture.json"
python3 - "$T/fixture.json" <<'PY' || fail "fixture values"
import json, sys
s = {x["set"]: {k: v["value"] for k, v in x["stats"].items()} for x in json.load(open(sys.argv[1]))["sets"]
     if x["provider"] == "fixture"}
assert sorted(s) == sorted(["memory", "net lo", "net eth0", "net vif-with-a-long-name0", "disk xvda", "disk xvdb",
                            "disk nvme0n1", "disk dm-0", "disk xvdc3"]), sorted(s)
assert s["memory"]["mem_total_bytes"] == 2029876 * 1024
assert s["memory"]["huge_pages"] == 0
assert s["net eth0"]["rx_bytes_total"] == 187345112 and s["net eth0"]["collisions_total"] == 3
assert s["disk xvda"]["read_bytes_total"] == 1581306 * 512 and s["disk xvda"]["flush_time_seconds_total"] == 1.2
assert len(s["disk xvdb"]) == 11
PY
pass "fixture /proc published exactly; partitions, loop and ram devices left out"

echo "  eth9: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16" >>"$T/proc/net/dev"
wait_sets fixture 10
sed -i '/eth0:/d' "$T/proc/net/dev"
wait_sets fixture 9
"$XENSTATS" pv --json 1 | python3 -c '
import json, sys
names = {s["set"] for s in json.load(sys.stdin)["sets"] if s["provider"] == "fixture"}
assert "net eth9" in names and "net eth0" not in names, names' || fail "rescan"
pass "an interface that appears is published, one that vanishes is withdrawn"

# ---- SIGTERM withdraws every set and exits 0 --------------------------------------
kill -TERM "$FIX"
rc=0
wait "$FIX" || rc=$?
[ "$rc" -eq 0 ] || fail "fixture publisher exited $rc: $(cat "$T/fixture.err")"
kill -TERM "$PUB"
rc=0
wait "$PUB" || rc=$?
[ "$rc" -eq 0 ] || fail "publish exited $rc: $(cat "$T/publish.err")"
grep -q 'withdrew set "memory"' "$T/publish.err" || fail "no withdrawal logged: $(cat "$T/publish.err")"
out=$("$XENSTATS" pv 1)
[ "$out" = "no PV stats sets published" ] || fail "sets left after SIGTERM: $out"
pass "SIGTERM withdraws every set and exits 0"

stop_emu
