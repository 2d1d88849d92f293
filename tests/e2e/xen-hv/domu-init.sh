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
xenstore-write data/alive "$(grep -c ^processor /proc/cpuinfo) cpus" || echo "DOMU xenstore-write failed"
echo "DOMU up: $(grep -c ^processor /proc/cpuinfo) vCPUs"
while :; do sleep 3600; done
