#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the PV domU.  Follows the phase dom0 writes to data/phase:
#   bench     a 64-statistic provider and the ad-hoc 64-key writer
#   test      xenstats publish, a provider with known values and hostile
#             providers, then data/ready
#   traffic   writes and reads its disk and pings dom0, then data/traffic-done
#   withdraw  SIGTERM to the known-values provider (it withdraws its set)
# and waits for `xl destroy`.  Its console goes to dom0's xenconsoled log.
export PATH=/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
for m in xen-evtchn xen-gntalloc xen-gntdev xen-netfront xen-blkfront; do
    insmod /modules/$m.ko || echo "DOMU: insmod $m failed"
done
sleep 1
ip addr add 10.99.0.2/24 dev eth0 && ip link set eth0 up || echo "DOMU: no eth0"
echo "DOMU: up $(cut -d' ' -f1 /proc/uptime)s, $(grep -c ^processor /proc/cpuinfo) vCPUs, domid $(xenstore-read domid)"

phase() { xenstore-read data/phase 2>/dev/null; }
wait_phase() {
    while [ "$(phase)" != "$1" ]; do sleep 1; done
    echo "DOMU: phase $1"
}
wait_stats() {
    while ! xenstore-exists stats 2>/dev/null; do sleep 1; done
}

wait_phase bench
wait_stats
# On vCPU 0 with its event channel (xenstats_provider_set_cpu()): a request
# wakes one vCPU, not the one Linux picked for the interrupt and then the
# provider's (docs/pv-stats.md, "Latency").
pv_test_provider --provider Bench --set Values --count 64 --cpu 0 >/tmp/bench-provider.log 2>&1 &
BP=$!
xen_e2e adhoc-guest >/tmp/adhoc.log 2>&1 &
AP=$!

wait_phase test
grep "evtchn:" /proc/interrupts | sed 's/^ */DOMU: interrupt /'
kill -TERM $BP $AP 2>/dev/null
wait $BP $AP 2>/dev/null
wait_stats
xenstats publish >/tmp/publish.log 2>&1 &
pv_test_provider --provider Known --set Values --types >/tmp/known.log 2>&1 &
KNOWN=$!
for sc in name-no-nul ref-foreign unknown-type flood; do
    pv_hostile $sc >/tmp/hostile-$sc.log 2>&1 &
done
sleep 2
for f in /tmp/known.log /tmp/publish.log; do sed "s|^|DOMU: $f: |" $f; done
xenstore-write data/ready 1

# traffic on both devices for dom0's counters: 8 MiB written past the page
# cache and read back, and pings
wait_phase traffic
dd if=/dev/urandom of=/dev/xvda bs=1M count=8 oflag=direct conv=fsync 2>&1 | sed 's/^/DOMU: dd: /'
dd if=/dev/xvda of=/dev/null bs=1M count=8 iflag=direct 2>&1 | sed 's/^/DOMU: dd: /'
ping -c 3 10.99.0.1 | tail -1 | sed 's/^/DOMU: ping: /'
xenstore-write data/traffic-done 1

wait_phase withdraw
kill -TERM $KNOWN
wait $KNOWN
echo "DOMU: known-values provider exited rc=$?"
xenstore-write data/withdrawn 1
while :; do sleep 60; done
