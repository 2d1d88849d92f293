# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by the harnesses that boot Xen on Arm (tests/e2e/xen/boot.sh,
# tests/e2e/xen-hv/run.sh).
#
# qemu_arm64 XEN KERNEL INITRD XEN_CMDLINE DOM0_CMDLINE LOG SMP MEM [CMD...]
# starts qemu-system-aarch64 in the background ($! is its pid, or that of
# CMD, e.g. `timeout ... nice ...`, which runs it).  QEMU's virt board with
# EL2 and no firmware: -kernel loads Xen (an arm64 Image) and passes it the
# device tree; each guest-loader device puts a file in RAM and names it in
# /chosen as a multiboot module (dom0's kernel with its command line, then
# its initramfs), which is how Xen on Arm finds dom0.  RAM starts at
# 0x40000000 and QEMU puts the device tree at RAM + 128 MiB without
# reporting an overlap: the modules go from 0x50000000, each on a 2 MiB
# boundary.  Xen's console is the PL011 the device tree names (dtuart); it
# carries dom0's hvc0, all into LOG.
qemu_arm64() {
    local xen=$1 kernel=$2 initrd=$3 xen_cmdline=$4 dom0_cmdline=$5 log=$6 smp=$7 mem=$8 kaddr iaddr
    shift 8
    kaddr=$((0x50000000))
    iaddr=$(((kaddr + $(stat -c %s "$kernel") + 0x1fffff) / 0x200000 * 0x200000))
    # a comma separates -device options: one in the command line is doubled
    "$@" qemu-system-aarch64 -machine virt,virtualization=on,gic-version=2 -cpu cortex-a57 -smp "$smp" -m "$mem" \
        -accel tcg,thread=multi -display none -monitor none -nic none -no-reboot -serial "file:$log" \
        -kernel "$xen" -append "$xen_cmdline" \
        -device "guest-loader,addr=$(printf 0x%x $kaddr),kernel=$kernel,bootargs=${dom0_cmdline//,/,,}" \
        -device "guest-loader,addr=$(printf 0x%x "$iaddr"),initrd=$initrd" &
}
