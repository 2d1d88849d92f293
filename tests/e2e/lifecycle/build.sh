#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build what the lifecycle test's QEMU boot needs, under $E2E_DIR/lifecycle/img:
#   xen          the hypervisor: LC_XEN, default the patched one with shadow
#                paging that `make xen-hypervisor` builds (live migration
#                of a PV guest needs log-dirty mode, which Debian's lacks)
#   vmlinuz      Debian's kernel, for dom0 and the domU
#   domu.cpio    busybox, xenstats (publish), netfront and blkfront, and
#                the kernel provider kmod/xenstats.ko (LC_KMOD=0 leaves it
#                out), which the guest loads at boot, with disk I/O running
#   dom0.cpio    the harness's dom0 (tests/e2e/initramfs.sh), xenstats
#                (agent), lc_probe, libxl's save helper (xl save, restore
#                and migrate fork it), the backends, a bridge and the
#                busybox hotplug scripts, and the domU's image and config
# Needs tests/e2e/xen/install.sh to have run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
PKGROOT=$E2E_DIR/pkgroot
MB=$E2E_DIR/meson
OUT=$E2E_DIR/lifecycle
IMG=$OUT/img
XEN=${LC_XEN:-$ROOT/build-xen-hv/out/xen}
[ -f "$PKGROOT/.complete" ] || { echo "lifecycle build: run tests/e2e/xen/install.sh first" >&2; exit 1; }
[ -f "$XEN" ] || { echo "lifecycle build: no hypervisor at $XEN (make xen-hypervisor)" >&2; exit 1; }
# shellcheck source=tests/e2e/initramfs.sh
. "$HERE/../initramfs.sh"
KVER=$(initramfs_kver "$PKGROOT")
KMOD=${LC_KMOD:-1}
if [ "$KMOD" = 1 ]; then
    E2E_DIR=$E2E_DIR "$ROOT/scripts/kmod-build.sh" all >/dev/null
    modinfo -F vermagic "$ROOT/kmod/xenstats.ko" | grep -q "^$KVER " ||
        { echo "lifecycle build: kmod/xenstats.ko is not built for $KVER" >&2; exit 1; }
fi

[ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --buildtype=debugoptimized >/dev/null
ninja -C "$MB" xenstats xenstats-agent xenstats-top >/dev/null
cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$MB/lc_probe" "$HERE/lc_probe.c" -lm

rm -rf "$IMG"
mkdir -p "$IMG"
if gzip -t "$XEN" 2>/dev/null; then zcat "$XEN" >"$IMG/xen"; else cp "$XEN" "$IMG/xen"; fi
cp "$PKGROOT/boot/vmlinuz-$KVER" "$IMG/vmlinuz"

DU=$OUT/root-domu
rm -rf "$DU"
initramfs_base "$DU"
initramfs_xenstore_cli "$DU"
initramfs_bin "$DU" "$MB/xenstats" /usr/bin/xenstats
initramfs_modules "$DU" xen-evtchn xen-gntalloc xen-gntdev xen-netfront xen-blkfront
[ "$KMOD" = 1 ] && cp "$ROOT/kmod/xenstats.ko" "$DU/modules/"
install -m755 "$HERE/domu-init.sh" "$DU/init"
initramfs_pack "$DU" "$IMG/domu.cpio"

D0=$OUT/root-dom0
rm -rf "$D0"
initramfs_base "$D0"
initramfs_dom0_tools "$D0"
initramfs_bin "$D0" "$PKGROOT/usr/lib/xen-4.17/bin/libxl-save-helper" /usr/lib/xen-4.17/bin/libxl-save-helper
initramfs_xenstats "$D0" "$MB/xenstats"
initramfs_bin "$D0" "$MB/lc_probe" /usr/bin/lc_probe
initramfs_backends "$D0"
cp "$IMG/vmlinuz" "$D0/domu/vmlinuz"
cp "$IMG/domu.cpio" "$D0/domu/initrd"
# tells dom0 to check the kernel provider's sets too
[ "$KMOD" = 1 ] && touch "$D0/domu/kmod"
# page_poison=1: the guest's kernel fills freed pages and checks them when
# it hands them out again, so that a write into a freed page is reported
# ("pagealloc: memory corruption"), which dmesg_clean counts.
# on_reboot restart: the xl that created, restored or migrated the domain
# in stays behind and makes the new one
cat >"$D0/domu/lc.cfg" <<'CFG'
name = "domu"
type = "pv"
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd"
extra = "console=hvc0 rdinit=/init quiet cryptomgr.notests page_poison=1"
memory = 192
maxmem = 192
vcpus = 2
maxvcpus = 2
vif = [ 'bridge=xenbr0,mac=00:16:3e:4c:00:02,script=/etc/xen/scripts/hotplug-vif' ]
disk = [ 'format=raw,vdev=xvda,access=rw,script=/etc/xen/scripts/hotplug-block,target=/dev/loop7' ]
on_poweroff = "destroy"
on_reboot = "restart"
on_crash = "destroy"
CFG
install -m755 "$HERE/dom0-init.sh" "$D0/init"
initramfs_pack "$D0" "$IMG/dom0.cpio"
ls -l "$IMG" | awk 'NR > 1 {printf "lifecycle build: %-10s %8.1f MB\n", $9, $5 / 1048576}'
