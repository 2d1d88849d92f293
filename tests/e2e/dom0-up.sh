# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the /init of every QEMU dom0 (tests/e2e/{xen,xen-hv,kmod,
# lifecycle}/dom0-init.sh), installed as /dom0-up.sh: bringing up a
# minimal Xen control domain from busybox, and the result lines every
# harness prints.  Uses the caller's say(), which sets the lines' prefix.

# up: seconds since boot; arg NAME: NAME=value on the kernel command line;
# res NAME RC DETAIL...: a PASS or FAIL line, counted in PASSES and FAILS
PASSES=0
FAILS=0
up() { cut -d' ' -f1 /proc/uptime; }
res() { # res NAME RC DETAIL...
    n=$1 rc=$2
    shift 2
    if [ "$rc" = 0 ]; then say "PASS $n $*"; PASSES=$((PASSES + 1)); else say "FAIL $n (rc=$rc) $*"; FAILS=$((FAILS + 1)); fi
}
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }

# dom0_mounts: the filesystems and run directories of Xen's daemons, and lo
# for the agent's HTTP port
dom0_mounts() {
    mount -t proc proc /proc
    mount -t sysfs sysfs /sys
    mount -t devtmpfs devtmpfs /dev
    mkdir -p /dev/pts /dev/shm
    mount -t devpts devpts /dev/pts
    mount -t tmpfs tmpfs /dev/shm
    mount -t tmpfs tmpfs /run
    mount -t tmpfs tmpfs /tmp
    mkdir -p /run/xen /run/xenstored /var/lib/xenstored /var/lib/xen /var/log/xen/console /var/lock
    ln -sf /run /var/run 2>/dev/null
    ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
}

# dom0_xen SECONDS: Xen's modules and xenfs, the C xenstored (answering
# within SECONDS, else status 1), xen-init-dom0 and xenconsoled
dom0_xen() {
    for m in xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs; do
        insmod /modules/$m.ko || say "insmod $m failed"
    done
    mount -t xenfs xenfs /proc/xen
    sleep 1
    xenstored --pid-file /run/xenstored.pid
    i=0
    while ! xenstore-read / >/dev/null 2>&1 && [ $i -lt "$1" ]; do sleep 1; i=$((i + 1)); done
    xenstore-read / >/dev/null 2>&1
    ready=$?
    xen-init-dom0 >/dev/null 2>&1 || say "xen-init-dom0 rc=$?"
    xenconsoled --pid-file=/run/xenconsoled.pid --log=guest --log-dir=/var/log/xen/console
    return $ready
}

# dom0_backends [DIR]: the backends of a domU's vif and vbd (their modules
# and hotplug scripts come from initramfs_backends): netback's interfaces
# join the bridge xenbr0, with dom0 on 10.99.0.1/24; blkback serves
# /dev/loop7 over a 16 MiB file in DIR (default /tmp)
dom0_backends() {
    local dir=${1:-/tmp} m
    for m in loop llc stp bridge xen-netback xen-blkback; do
        insmod /modules/$m.ko || say "insmod $m failed"
    done
    brctl addbr xenbr0 || return 1
    # no spanning tree, no forwarding delay (not in every busybox: optional)
    brctl stp xenbr0 off 2>/dev/null
    brctl setfd xenbr0 0 2>/dev/null
    ip addr add 10.99.0.1/24 dev xenbr0 && ip link set xenbr0 up &&
        dd if=/dev/zero of="$dir/disk.img" bs=1M count=16 2>/dev/null &&
        { [ -e /dev/loop7 ] || mknod /dev/loop7 b 7 7; } && losetup /dev/loop7 "$dir/disk.img"
}
