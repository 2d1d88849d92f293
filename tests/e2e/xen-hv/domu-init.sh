#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# /init of the test domU: with "busy" on the kernel command line, vCPU 1
# spins (pinned inside the guest) while vCPU 0 stays idle; otherwise all
# vCPUs idle.  Tells dom0 it is up through xenstore, then sleeps.
export PATH=/bin:/usr/bin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
if grep -qw busy /proc/cmdline; then
    taskset 0x2 sh -c 'while :; do :; done' &
    echo "DOMU busy loop on vCPU 1 (pid $!)"
fi
# What udev does: a vCPU that dom0 makes available (xl vcpu-set) is only
# present until user space brings it online (the file read by the shell
# itself).  The loop looks again when something under cpu/ changes (the
# watch's first event is its own registration, the second a change), or
# after 10 s: polling each second a present but offline vCPU's
# availability cost vCPU 0 a third of its time under emulation (32 %
# running on 4.22 at load 3), which the idle-vCPU checks then saw.
(
    while :; do
        for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
            n=${f#/sys/devices/system/cpu/cpu}; n=${n%/online}
            read -r on <"$f" 2>/dev/null || continue
            [ "$on" = 0 ] && [ "$(xenstore-read "cpu/$n/availability" 2>/dev/null)" = online ] &&
                echo 1 >"$f" 2>/dev/null
        done
        timeout 10 xenstore-watch -n 2 cpu >/dev/null 2>&1 || sleep 1
    done
) &
xenstore-write data/alive "$(grep -c ^processor /proc/cpuinfo) cpus" || echo "DOMU xenstore-write failed"
echo "DOMU up: $(grep -c ^processor /proc/cpuinfo) vCPUs"
while :; do sleep 3600; done
