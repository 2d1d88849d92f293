#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the kernel provider's PV domU (tests/e2e/kmod/).  Loads the
# frontends and the xenstats module at boot (before any monitor), then
# runs the commands dom0 writes to data/cmd ("SEQ VERB ARGS...") and
# answers in data/out and data/ack = SEQ.  Paths are relative: they follow
# the domain across a restore, when every key it wrote is gone.
export PATH=/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
trap 'sync; reboot -f' TERM
trap 'sync; poweroff -f' USR2
for m in xen-evtchn xen-gntalloc xen-gntdev xen-netfront xen-blkfront; do
    insmod /modules/$m.ko || echo "DOMU: insmod $m failed"
done
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
ip addr add 10.99.0.2/24 dev eth0
ip link set eth0 up
i=0
while [ ! -e /sys/block/xvda ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
insmod /modules/xenstats.ko || echo "DOMU: insmod xenstats failed"
echo "DOMU: up $(cut -d' ' -f1 /proc/uptime)s, domid $(xenstore-read domid), $(ls /sys/class/net | tr '\n' ' ')$(ls /sys/block | tr '\n' ' ')"

S=/sys/devices/system/xen_memory/xen_memory0
figures() { # the guest's own view of what the module publishes, in its units:
    # GROUP/DEVICE.STATISTIC=VALUE, the agent's xenstats_guest_GROUP_STATISTIC{device="DEVICE"}
    # shellcheck disable=SC2046 # the fields, split
    set -- $(cat /sys/block/xvda/stat)
    N=/sys/class/net/eth0/statistics
    echo "net/eth0.rx_bytes_total=$(cat $N/rx_bytes) net/eth0.tx_bytes_total=$(cat $N/tx_bytes)" \
        "net/eth0.rx_packets_total=$(cat $N/rx_packets) net/eth0.tx_packets_total=$(cat $N/tx_packets)" \
        "disk/xvda.reads_completed_total=$1 disk/xvda.read_bytes_total=$(($3 * 512))" \
        "disk/xvda.writes_completed_total=$5 disk/xvda.written_bytes_total=$(($7 * 512))" \
        "disk/xvda.io_in_progress=$9" \
        "balloon/.target_bytes=$(($(cat $S/target_kb) * 1024))" \
        "balloon/.current_bytes=$(($(cat $S/info/current_kb) * 1024))" \
        "balloon/.low_bytes=$(($(cat $S/info/low_kb) * 1024))" \
        "balloon/.high_bytes=$(($(cat $S/info/high_kb) * 1024))"
}
# what a leak would show: our interrupts, grant and memory figures
leak() {
    echo "irqs=$(grep -c xenstats: /proc/interrupts) dyn=$(grep -c xen-dyn /proc/interrupts)" \
        "memfree_kb=$(awk '/^MemFree:/ {print $2}' /proc/meminfo)" \
        "slab_kb=$(awk '/^Slab:/ {print $2}' /proc/meminfo)" \
        "unevictable_kb=$(awk '/^Unevictable:/ {print $2}' /proc/meminfo)"
}
oops() { # WARN, BUG, oops in the kernel log: count
    dmesg | grep -cE "WARNING:|BUG:|Oops|kernel BUG|Call Trace|general protection|refcount_t:|corruption"
}
stop() { # stop PROGRAM: SIGTERM (it withdraws its sets), then wait 15 s
    pids=$(pidof "$1")
    [ -n "$pids" ] || { echo "left="; return; }
    # shellcheck disable=SC2086 # one or more pids
    kill -TERM $pids
    i=0
    while [ -n "$(pidof "$1")" ] && [ $i -lt 75 ]; do sleep 0.2; i=$((i + 1)); done
    echo "left=$(pidof "$1") after $((i / 5)).$((i % 5 * 2))s"
}
run() {
    case $1 in
    load) shift; insmod /modules/xenstats.ko "$@" 2>&1; echo "rc=$?" ;;
    unload) rmmod xenstats 2>&1; echo "rc=$?" ;;
    example) insmod /modules/xenstats_example.ko count="$2" ${3:+timer_us=$3} 2>&1; echo "rc=$?" ;;
    rename) # eth0 to tmp0 and back at once
        ip link set eth0 down && ip link set eth0 name tmp0 && ip link set tmp0 name eth0 && ip link set eth0 up
        echo "rc=$?" ;;
    dmesgmark)
        dmesg | grep -c "its name is busy" >/tmp/busymark
        dmesg | grep -c "cannot publish" >/tmp/pubmark
        echo "rc=0" ;;
    busy) # the "name is busy" messages since dmesgmark
        echo "$(($(dmesg | grep -c "its name is busy") - $(cat /tmp/busymark 2>/dev/null || echo 0)))" ;;
    pubfail) # the "cannot publish" messages since dmesgmark
        echo "$(($(dmesg | grep -c "cannot publish") - $(cat /tmp/pubmark 2>/dev/null || echo 0)))" ;;
    ifname) ls /sys/class/net | grep -v '^lo$' | tr '\n' ' '; cat /sys/class/net/eth0/address 2>/dev/null ;;
    iostart) # direct reads and writes of xvda until iostop; /tmp/iodone
        # once the loop has ended (its I/O is then complete: direct I/O)
        rm -f /tmp/iostop /tmp/iodone
        (while [ ! -f /tmp/iostop ]; do
            dd if=/dev/xvda of=/dev/null bs=4k count=512 iflag=direct 2>/dev/null
            dd if=/dev/zero of=/dev/xvda bs=4k seek=2048 count=128 oflag=direct 2>/dev/null
        done
        touch /tmp/iodone) >/dev/null 2>&1 &
        echo "pid=$!" ;;
    iostop) # ask the loop to end and wait until it has (at most 60 s: a
        # round of it takes seconds under emulation)
        touch /tmp/iostop
        i=0
        while [ ! -f /tmp/iodone ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
        if [ -f /tmp/iodone ]; then echo "rc=0 stopped in $((i / 5)).$((i % 5 * 2))s"; else echo "rc=1 still running after 60s"; fi ;;
    unexample) rmmod xenstats_example 2>&1; echo "rc=$?" ;;
    figures) figures ;;
    leak) leak ;;
    oops) echo "oops=$(oops)"; dmesg | grep -E "xenstats|WARNING:|BUG:|Oops" | tail -5 | tr '\n' '|' ;;
    io) # 4 MiB written then read back, bypassing the page cache
        dd if=/dev/urandom of=/tmp/blk bs=1M count=4 2>/dev/null
        dd if=/tmp/blk of=/dev/xvda bs=1M oflag=direct conv=fsync 2>/dev/null
        dd if=/dev/xvda of=/dev/null bs=1M count=4 iflag=direct 2>/dev/null
        ping -c 5 -i 0.2 -s 1000 10.99.0.1 >/dev/null 2>&1
        echo "rc=$?" ;;
    cycle) # load and unload N times, the publishers on
        n=0 bad=0
        while [ $n -lt "$2" ]; do
            insmod /modules/xenstats.ko || bad=$((bad + 1))
            sleep 0.3
            rmmod xenstats || bad=$((bad + 1))
            n=$((n + 1))
        done
        echo "cycles=$n failures=$bad" ;;
    publish) xenstats publish >/tmp/publish.log 2>&1 & echo "pid=$!" ;;
    unpublish) stop xenstats ;;
    benchuser) pv_test_provider --provider Bench --set Values --count 64 --cpu 0 >/tmp/bench.log 2>&1 & echo "pid=$!" ;;
    benchuserstop) stop pv_test_provider ;;
    klog) dmesg | grep -iE "xenstats|xen:|grant|evtchn" | tail -12 | tr '\n' '|' ;;
    lsmod) lsmod | tr '\n' '|' ;;
    *) echo "unknown command $1" ;;
    esac
}
last=
while :; do
    c=$(xenstore-read data/cmd 2>/dev/null)
    seq=${c%% *}
    if [ -n "$c" ] && [ "$seq" != "$last" ]; then
        last=$seq
        # shellcheck disable=SC2086
        out=$(run ${c#* } 2>&1 | tr '\n' ' ' | cut -c1-1000)
        echo "DOMU: [$seq] ${c#* } -> $out"
        xenstore-write data/out "$out"
        xenstore-write data/ack "$seq"
    fi
    sleep 0.2
done
