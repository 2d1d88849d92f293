#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build what the kernel provider's QEMU boot needs, under $E2E_DIR/kmod/img:
# the xenstats module and its example (kmod/, against Debian's headers for
# the domU's kernel), the domU image that loads them with xen-netfront and
# xen-blkfront, and the dom0 image with the backends, a bridge, libxl's
# save helper, busybox hotplug scripts and the test programs.
# Needs tests/e2e/xen/install.sh to have run.
# KMOD_BUILT=DIR: the modules already built in DIR (xenstats.ko and
# example/xenstats_example.ko, e.g. an older tree's, to see a check fail).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
PKGROOT=$E2E_DIR/pkgroot
MB=$E2E_DIR/meson
IMG=${KMOD_IMG:-$E2E_DIR/kmod/img}
[ -f "$PKGROOT/.complete" ] || { echo "kmod e2e build: run tests/e2e/xen/install.sh first" >&2; exit 1; }
KVER=$(basename "$(ls -d "$PKGROOT"/lib/modules/* | head -1)")
# shellcheck source=tests/e2e/initramfs.sh
. "$HERE/../initramfs.sh"

KM=${KMOD_BUILT:-$ROOT/kmod}
[ -n "${KMOD_BUILT:-}" ] || E2E_DIR=$E2E_DIR "$ROOT/scripts/kmod-build.sh" all >/dev/null
modinfo -F vermagic "$KM/xenstats.ko" | grep -q "^$KVER " ||
    { echo "kmod e2e build: xenstats.ko is not built for $KVER" >&2; exit 1; }

[ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --buildtype=debugoptimized >/dev/null
ninja -C "$MB" xenstats xenstats-agent xenstats-top tests/pvstats/pv_test_provider libxenstats-internal.a >/dev/null
XLIBS=$(pkg-config --libs json-c xenstore xencontrol xenforeignmemory xengnttab xenevtchn xencall xentoollog)
CFLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -I$ROOT/include -I$ROOT/lib"
# shellcheck disable=SC2086
cc $CFLAGS -o "$MB/xen_e2e" "$ROOT/tests/e2e/xen/xen_e2e.c" "$MB/libxenstats-internal.a" $XLIBS -lpthread -lm
# shellcheck disable=SC2086
cc $CFLAGS -o "$MB/kmod_e2e" "$HERE/kmod_e2e.c" "$MB/libxenstats-internal.a" $XLIBS -lpthread -lm

rm -rf "$IMG"
mkdir -p "$IMG"
zcat "$PKGROOT/boot/xen-4.17-amd64.gz" >"$IMG/xen"
cp "$PKGROOT/boot/vmlinuz-$KVER" "$IMG/vmlinuz"

DU=$E2E_DIR/kmod/root-domu
rm -rf "$DU"
initramfs_base "$DU"
initramfs_xenstore_cli "$DU"
initramfs_bin "$DU" "$MB/xenstats" /usr/bin/xenstats
initramfs_bin "$DU" "$MB/tests/pvstats/pv_test_provider" /usr/bin/pv_test_provider
initramfs_modules "$DU" xen-evtchn xen-gntalloc xen-gntdev xen-netfront xen-blkfront
cp "$KM/xenstats.ko" "$KM/example/xenstats_example.ko" "$DU/modules/"
install -m755 "$HERE/domu-init.sh" "$DU/init"
initramfs_pack "$DU" "$IMG/domu.cpio"

D0=$E2E_DIR/kmod/root-dom0
rm -rf "$D0"
initramfs_base "$D0"
initramfs_dom0_tools "$D0"
initramfs_bin "$D0" "$PKGROOT/usr/lib/xen-4.17/bin/libxl-save-helper" /usr/lib/xen-4.17/bin/libxl-save-helper
initramfs_xenstats "$D0" "$MB/xenstats"
initramfs_bin "$D0" "$MB/xen_e2e" /usr/bin/xen_e2e
initramfs_bin "$D0" "$MB/kmod_e2e" /usr/bin/kmod_e2e
initramfs_backends "$D0"
cp "$IMG/vmlinuz" "$D0/domu/vmlinuz"
cp "$IMG/domu.cpio" "$D0/domu/initrd"
# page_poison=1: the guest's kernel fills freed pages and checks them when
# it hands them out again: a write into a freed page (a value setter racing
# a withdrawal) is reported as "pagealloc: memory corruption".
cat >"$D0/domu/domu.cfg" <<CFG
name = "domu1"
type = "pv"
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd"
extra = "console=hvc0 rdinit=/init quiet cryptomgr.notests page_poison=1"
memory = 128
maxmem = 128
vcpus = 2
vif = [ 'bridge=xenbr0,mac=00:16:3e:4c:00:02,script=/etc/xen/scripts/hotplug-vif' ]
disk = [ 'format=raw,vdev=xvda,access=rw,script=/etc/xen/scripts/hotplug-block,target=/dev/loop7' ]
on_poweroff = "destroy"
on_reboot = "destroy"
on_crash = "destroy"
CFG
install -m755 "$HERE/dom0-init.sh" "$D0/init"
initramfs_pack "$D0" "$IMG/dom0.cpio"
ls -l "$IMG" | awk 'NR > 1 {printf "kmod e2e build: %-14s %8.1f MB\n", $9, $5 / 1048576}'
