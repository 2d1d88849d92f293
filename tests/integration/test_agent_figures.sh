#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The agent's domain and host figures on the emulated host: each equals
# what the emulator was told, exactly, across pause/unpause, shutdown,
# mem-set and a lingering destroy (dying); /metrics and /api/v1/snapshot of
# one sample agree; top from the agent and top --direct agree; the guest's
# own meminfo is believed only when it is a plain size.
. "$(dirname "$0")/lib.sh"

xswrite() { # xswrite DOMID PATH VALUE: as that domain, through its own socket
    XENSTORED_PATH="$XENSTATS_EMU_DIR/xenstore/$1" xenstore-write -- "$2" "$3"
}

start_emu -p 2 --memory 8G --dom0-memory 2G \
    -D name=web,vcpus=2,workload=cpu,memory=512M,maxmem=1G \
    -D name=db,vcpus=1,workload=io,memory=256M,shared=8K,outstanding=16K
start_agent

KiB=1024 MiB=1048576
check "memory and host figures equal what the emulator was told" "
h = j['host']
assert h['xen_version'] == 'emu' and h['scheduler'] == 'emu' and h['nr_pcpus'] == 2, h
assert h['memory_total'] == 8 * 1024 * $MiB, h
assert h['memory_free'] == (8192 - 2048 - 512 - 256) * $MiB, h
assert len(h['pcpus']) == 2 and all(p['idle'] >= 0 for p in h['pcpus']), h
assert metric('xenstats_host_memory_free_bytes') == h['memory_free']
assert metric('xenstats_host_info', xen_version='emu', scheduler='emu') == 1
w, b = dom['web'], dom['db']
assert w['memory'] == 512 * $MiB and w['memory_target'] == 512 * $MiB, w
assert w['memory_static_max'] == 1024 * $MiB and w['memory_max'] == 1025 * $MiB, w
assert b['memory'] == 256 * $MiB and b['memory_shared'] == 8 * $KiB and b['memory_outstanding'] == 16 * $KiB, b
assert w['vcpus_online'] == 2 and b['vcpus_online'] == 1
assert dom['Domain-0']['memory'] == 2048 * $MiB and dom['Domain-0']['memory_max'] is None
for name, x in dom.items():
    for key, family in [('memory', 'xenstats_domain_memory_bytes'), ('memory_target', 'xenstats_domain_memory_target_bytes'),
                        ('cpu_time', 'xenstats_domain_cpu_seconds_total'), ('vcpus_online', 'xenstats_domain_vcpus_online')]:
        assert abs(dm(family, name) - x[key]) < 1e-9, (name, key, dm(family, name), x[key])
    assert dm('xenstats_domain_info', name, uuid=x['uuid']) == 1
assert dm('xenstats_domain_memory_max_bytes', 'Domain-0') is None
assert 'running' in w['state'] and 'paused' not in w['state'], w['state']
"
uuid=$(python3 -c 'import json,sys; print([d["uuid"] for d in json.load(open(sys.argv[1]))["domains"] if d["name"] == "web"][0])' \
    "$XENSTATS_TEST_TMP/s.json")
"$XENSTATS" emu list | grep -q "^1 web .* $uuid$" || fail "web's UUID is not the emulator's: $("$XENSTATS" emu list)"
pass "host, memory, vCPU and UUID figures equal the emulator's, in JSON and /metrics of one sample"

"$XENSTATS" emu pause web
check "paused" "
w = dom['web']
assert w['state'] == ['paused'] or set(w['state']) <= {'paused', 'blocked'}, w['state']
assert dm('xenstats_domain_state', 'web', state='paused') == 1 and dm('xenstats_domain_state', 'web', state='running') == 0
open('$XENSTATS_TEST_TMP/cpu', 'w').write(repr(w['cpu_time']))
"
sleep 1.2
check "CPU time frozen while paused" "
assert dom['web']['cpu_time'] == float(open('$XENSTATS_TEST_TMP/cpu').read()), dom['web']['cpu_time']
"
"$XENSTATS" emu unpause web
check "unpaused" "
w = dom['web']
assert 'paused' not in w['state'] and 'running' in w['state'], w['state']
assert w['cpu_time'] > float(open('$XENSTATS_TEST_TMP/cpu').read())
"
pass "pause and unpause show within a sample; CPU time stops while paused"

"$XENSTATS" emu mem-set web 256M
check "mem-set" "
w = dom['web']
assert w['memory_target'] == 256 * $MiB and w['memory'] == 256 * $MiB and w['memory_max'] == 257 * $MiB, w
assert dm('xenstats_domain_memory_target_bytes', 'web') == 256 * $MiB
assert j['host']['memory_free'] == (8192 - 2048 - 256 - 256) * $MiB
"
pass "mem-set moves the target, then the memory and the host's free memory"

"$XENSTATS" emu shutdown db --reason crash
check "shutdown" "
b = dom['db']
assert 'shutdown' in b['state'] and 'crashed' in b['state'] and b['shutdown_reason'] == 'crash', b
assert dm('xenstats_domain_shutdown_info', 'db', reason='crash') == 1
assert dm('xenstats_domain_state', 'db', state='shutdown') == 1
assert dm('xenstats_domain_shutdown_info', 'web', reason='crash') is None
"
pass "a crashed domain stays listed, shut down with its reason"

# The guest's own data/meminfo_*: plain KiB is believed, anything else is
# counted and never exported as a number.
xswrite 1 data/meminfo_total 262144
xswrite 1 data/meminfo_free 100000
check "guest meminfo" "
w = dom['web']
assert w['guest_memory_total'] == 262144 * $KiB and w['guest_memory_free'] == 100000 * $KiB, w
assert w['guest_rejected'] == 0
"
n=0
# (a guest's node, path and value, may take at most 2048 bytes: the 4 KB one comes from dom0)
for bad in abc -5 18446744073709551616 1e9 ' 12' 007 "$(printf '%01900d' 1)" "$(printf '%04000d' 1)" "12 "; do
    if [ ${#bad} -gt 2048 ]; then
        xswrite 0 /local/domain/1/data/meminfo_free "$bad"
    else
        xswrite 1 data/meminfo_free "$bad"
    fi
    n=$((n + 1))
    check "hostile meminfo_free '${bad:0:20}'" "
w = dom['web']
assert w['guest_memory_free'] is None and w['guest_memory_total'] == 262144 * $KiB, w
assert w['guest_rejected'] >= $n, w['guest_rejected']
assert dm('xenstats_domain_guest_reported_memory_free_bytes', 'web') is None
assert dm('xenstats_domain_guest_reported_rejected_total', 'web') == w['guest_rejected']
"
done
pass "hostile guest meminfo (non-numeric, negative, huge, 4 KiB long) is rejected and counted"
promtool check metrics <"$XENSTATS_TEST_TMP/m.txt" || fail "promtool rejects /metrics"

# top from the agent and top --direct: the same domains and figures
"$XENSTATS" top -b --xentop --iterations 1 -d 200ms --url "$URL" >"$XENSTATS_TEST_TMP/agent.top" || fail "top --xentop from the agent"
"$XENSTATS" top -b --xentop --iterations 1 -d 200ms --direct >"$XENSTATS_TEST_TMP/direct.top" || fail "top --xentop --direct"
python3 - "$XENSTATS_TEST_TMP" <<'PY' || fail "top from the agent and top --direct disagree"
import sys
d = sys.argv[1]
def rows(name):
    lines = open(f"{d}/{name}").read().splitlines()
    head = lines[0].split()
    assert head[0] == "NAME" and head[-1] == "SSID", head
    return head, {l.split()[0]: dict(zip(head, l.split())) for l in lines[1:]}
ha, a = rows("agent.top")
hd, b = rows("direct.top")
assert ha == hd and sorted(a) == sorted(b) == ["Domain-0", "db", "web"], (a, b)
for name in a:
    for col in ["MEM(k)", "MAXMEM(k)", "VCPUS", "NETS", "VBDS", "SSID"]:
        assert a[name][col] == b[name][col], (name, col, a[name][col], b[name][col])
    assert abs(int(a[name]["CPU(sec)"]) - int(b[name]["CPU(sec)"])) <= 2, name
# libxenstat's flags: crashed is a shutdown for a crash, and then not "shutdown"
assert a["db"]["STATE"] == b["db"]["STATE"] == "---c--", a["db"]
assert a["web"]["MEM(k)"] == str(256 * 1024) and a["web"]["MAXMEM(k)"] == str(257 * 1024), a["web"]
PY
pass "top --batch --xentop from the agent and with --direct show the same domains and figures"

# A destroyed domain that lingers is shown dying until it is gone
"$XENSTATS" emu create name=doomed,vcpus=1,workload=cpu,memory=64M >/dev/null
doomed=$("$XENSTATS" emu list | awk '$2 == "doomed" { print $1 }')
check "a new domain" "assert 'running' in dom['doomed']['state'], dom['doomed']['state']"
"$XENSTATS" emu destroy "$doomed" --linger 5s
check "dying" "
x = dom['doomed']
assert x['state'] == ['dying'], x['state']
assert dm('xenstats_domain_state', 'doomed', state='dying') == 1
assert dm('xenstats_domain_state', 'doomed', state='running') == 0
"
for how in --direct "--url $URL"; do
    # shellcheck disable=SC2086
    state=$("$XENSTATS" top -b --xentop --iterations 1 -d 200ms $how | awk '$1 == "doomed" { print $2 }')
    [ "$state" = "d-----" ] || fail "top $how: doomed's STATE is '$state', not dying (d-----)"
done
check "gone after its linger" "assert 'doomed' not in dom and dm('xenstats_domain_state', 'web', state='dying') == 0"
pass "a domain destroyed with --linger shows dying in JSON, /metrics and top, then goes"
