#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the lifecycle test's PV domU: its vif and vbd up, `xenstats
# publish` once the agent in dom0 has created the domain's `stats` node,
# then a loop that does what a distribution's init and udev would:
#  - `xl reboot` and `xl shutdown` make the kernel run /sbin/reboot or
#    /sbin/poweroff (busybox), which signal PID 1 (TERM, USR2): a shell PID 1
#    only gets them with a trap, run between commands (so short sleeps);
#  - `xl vcpu-set` back up only hot-adds a vCPU: user space onlines it;
#  - dom0 sends commands as data/cmd "SEQ VERB", acked with data/ack SEQ
#    (data/ is the guest's own: xl restore and migrate empty it, so dom0
#    asks again under the new domid):
#      dmesg  count the kernel log's BUG/WARNING/Oops/Call Trace lines
#             into data/dmesg-bad
#      stop   SIGTERM to xenstats publish (it withdraws its sets); its exit
#             status into data/publish-rc
#      queues the hardware queues of xvda (blkfront's rings) into
#             data/queues, its reads completed (/sys/block/xvda/stat)
#             into data/reads
# With /modules/xenstats.ko (LC_KMOD=1, the default), the kernel provider
# is loaded before publish starts, and disk I/O runs the whole time
# (direct reads and writes of xvda), so that a save, a restore or a
# migration finds requests in flight and the module's blkfront refresh
# walking the tags while blkfront resumes.
export PATH=/usr/bin:/usr/sbin
up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "DOMU: $*"; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
trap 'say "SIGTERM to PID 1 (reboot request) at $(up)s"; sync; reboot -f' TERM
trap 'say "SIGUSR2 to PID 1 (poweroff request) at $(up)s"; sync; poweroff -f' USR2
for m in xen-evtchn xen-gntalloc xen-gntdev xen-netfront xen-blkfront; do
    insmod /modules/$m.ko || say "insmod $m failed"
done
# publish lists its devices at start: wait for both
i=0
while { [ ! -e /sys/class/net/eth0 ] || [ ! -b /dev/xvda ]; } && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
ip link set lo up
ip addr add 10.99.0.2/24 dev eth0 && ip link set eth0 up || say "no eth0"
say "up at $(up)s: domid $(xenstore-read domid), vCPUs online $(cat /sys/devices/system/cpu/online)"
if [ -f /modules/xenstats.ko ]; then
    insmod /modules/xenstats.ko && say "xenstats.ko loaded at $(up)s" || say "insmod xenstats failed"
    while :; do
        dd if=/dev/xvda of=/dev/null bs=4k count=512 iflag=direct 2>/dev/null
        dd if=/dev/zero of=/dev/xvda bs=4k seek=2048 count=128 oflag=direct 2>/dev/null
    done &
fi

i=0
while ! xenstore-exists stats 2>/dev/null && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
xenstats -v publish >/tmp/publish.log 2>&1 &
PUBLISH=$!
say "xenstats publish started at $(up)s (pid $PUBLISH)"

dmesg_bad() { dmesg | grep -E "BUG|WARNING|Oops|Call Trace|corruption"; }
# dom0 asks for the blocked tasks (xl sysrq w) when a command gets no answer
echo 1 >/proc/sys/kernel/sysrq
last='' lasterr=''
while :; do
    for c in /sys/devices/system/cpu/cpu[0-9]*; do
        [ -f "$c/online" ] && [ "$(cat "$c/online")" = 0 ] && echo 1 >"$c/online" 2>/dev/null &&
            say "onlined ${c##*/} at $(up)s"
    done
    c=$(xenstore-read data/cmd 2>/tmp/xs.err) || {
        e=$(cat /tmp/xs.err)
        [ "$e" = "$lasterr" ] || say "xenstore-read data/cmd at $(up)s: $e"
        lasterr=$e
    }
    if [ -n "$c" ] && [ "$c" != "$last" ]; then
        last=$c
        say "command $c at $(up)s"
        case ${c#* } in
        dmesg)
            dmesg_bad | head -40 | sed 's/^/DOMU: dmesg: /'
            sed 's/^/DOMU: publish: /' /tmp/publish.log | tail -20
            xenstore-write data/dmesg-bad "$(dmesg_bad | wc -l)"
            ;;
        queues)
            xenstore-write data/queues "$(ls -d /sys/block/xvda/mq/* 2>/dev/null | wc -l)" \
                data/reads "$(awk '{print $1}' /sys/block/xvda/stat)"
            ;;
        stop)
            kill -TERM $PUBLISH
            wait $PUBLISH
            rc=$?
            say "xenstats publish exited with $rc; held: $(ps -o comm | grep -c xenstats-keep) xenstats-keep"
            xenstore-write data/publish-rc $rc
            ;;
        esac
        xenstore-write data/ack "${c%% *}" 2>/tmp/xs.err || say "xenstore-write data/ack: $(cat /tmp/xs.err)"
    fi
    sleep 0.5
done
