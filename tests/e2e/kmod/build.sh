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
# XEN_ARCH=arm64: Debian 12's arm64 Xen and kernel (E2E_DIR default
# build-e2e-arm64), the modules cross-built against Debian's arm64 headers
# (KMOD_ARCH=arm64 scripts/kmod-build.sh) and the programs against the
# arm64 sysroot (scripts/cross/arm64.sh), as tests/e2e/xen/build.sh does.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export XEN_ARCH=${XEN_ARCH:-amd64}
if [ "$XEN_ARCH" = arm64 ]; then E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-arm64}; else E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}; fi
PKGROOT=$E2E_DIR/pkgroot
MB=$E2E_DIR/meson
IMG=${KMOD_IMG:-$E2E_DIR/kmod/img}
[ -f "$PKGROOT/.complete" ] || [ -f "$PKGROOT/.packages" ] || { echo "kmod e2e build: run tests/e2e/xen/install.sh first" >&2; exit 1; }
[ "$XEN_ARCH" != arm64 ] || export ARM64_SYSROOT=$E2E_DIR/sysroot
KVER=$(basename "$(ls -d "$PKGROOT"/lib/modules/* | head -1)")
# shellcheck source=tests/e2e/initramfs.sh
. "$HERE/../initramfs.sh"

KM=${KMOD_BUILT:-$ROOT/kmod}
if [ -z "${KMOD_BUILT:-}" ]; then
    if [ "$XEN_ARCH" = arm64 ]; then
        KMOD_ARCH=arm64 "$ROOT/scripts/kmod-build.sh" all >/dev/null
    else
        E2E_DIR=$E2E_DIR "$ROOT/scripts/kmod-build.sh" all >/dev/null
    fi
fi
modinfo -F vermagic "$KM/xenstats.ko" | grep -q "^$KVER " ||
    { echo "kmod e2e build: xenstats.ko is not built for $KVER" >&2; exit 1; }

XE_LIBS="json-c xenstore xencontrol xenforeignmemory xengnttab xenevtchn xencall xentoollog"
CFLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -I$ROOT/include -I$ROOT/lib"
if [ "$XEN_ARCH" = arm64 ]; then
    [ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --cross-file "$("$ROOT/scripts/cross/arm64.sh" cross-file)" \
        --buildtype=debugoptimized -Dwerror=true >/dev/null
    SR=$ARM64_SYSROOT MA=aarch64-linux-gnu
    PC=(env PKG_CONFIG_LIBDIR="$SR/usr/lib/$MA/pkgconfig:$SR/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$SR" pkg-config)
    # shellcheck disable=SC2054 # the commas are the linker's
    CC=("$MA-gcc" --sysroot="$SR" -isystem "$SR/usr/include/$MA" -isystem "$SR/usr/include" -B"$SR/usr/lib/$MA/"
        -L"$SR/usr/lib/$MA" -L"$SR/lib/$MA" -Wl,-rpath-link="$SR/usr/lib/$MA" -Wl,-rpath-link="$SR/lib/$MA")
else
    [ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --buildtype=debugoptimized >/dev/null
    PC=(pkg-config)
    CC=(cc)
fi
ninja -C "$MB" xenstats xenstats-agent xenstats-top tests/pvstats/pv_test_provider libxenstats-internal.a >/dev/null
# shellcheck disable=SC2086
XLIBS=$("${PC[@]}" --libs $XE_LIBS)
# shellcheck disable=SC2086
"${CC[@]}" $CFLAGS -o "$MB/xen_e2e" "$ROOT/tests/e2e/xen/xen_e2e.c" "$MB/libxenstats-internal.a" $XLIBS -lpthread -lm
# shellcheck disable=SC2086
"${CC[@]}" $CFLAGS -o "$MB/kmod_e2e" "$HERE/kmod_e2e.c" "$MB/libxenstats-internal.a" $XLIBS -lpthread -lm

rm -rf "$IMG"
mkdir -p "$IMG"
if [ "$XEN_ARCH" = arm64 ]; then
    cp "$PKGROOT/boot/xen-4.17-arm64" "$IMG/xen"
else
    zcat "$PKGROOT/boot/xen-4.17-amd64.gz" >"$IMG/xen"
fi
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
# (Xen on Arm: one guest type, no type line; the arm64 kernel needs more memory)
DOMU_TYPE='type = "pv"' DOMU_MEM=128
[ "$XEN_ARCH" != arm64 ] || DOMU_TYPE='' DOMU_MEM=192
cat >"$D0/domu/domu.cfg" <<CFG
name = "domu1"
$DOMU_TYPE
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd"
extra = "console=hvc0 rdinit=/init quiet cryptomgr.notests page_poison=1"
memory = $DOMU_MEM
maxmem = $DOMU_MEM
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
