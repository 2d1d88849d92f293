#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build what the QEMU boot needs, under $E2E_DIR:
#   meson/        a plain build of xenstats (+ the test providers)
#   img/xen       Debian's hypervisor, gunzipped (QEMU's multiboot loader
#                 wants the ELF)
#   img/vmlinuz   Debian's kernel, for dom0 and the domU
#   img/dom0.cpio, img/domu.cpio   the initramfs images: busybox,
#                 Xen's tools, xenstats and the test programs with the
#                 shared libraries ldd finds, the Xen kernel modules
# Needs install.sh to have run.  XEN_VERSION=4.20: Debian 13's packages,
# and the binaries built in the Debian 13 chroot (scripts/trixie.sh).
# XEN_ARCH=arm64: Debian 12's arm64 packages, and the binaries
# cross-compiled against the arm64 sysroot (scripts/cross/arm64.sh); img/xen
# and img/vmlinuz are then arm64 Images, which QEMU loads as they are.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
export XEN_VERSION=${XEN_VERSION:-4.17}
export XEN_ARCH=${XEN_ARCH:-amd64}
if [ "$XEN_ARCH" = arm64 ]; then E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-arm64}
elif [ "$XEN_VERSION" = 4.17 ]; then E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}; else E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-$XEN_VERSION}; fi
PKGROOT=$E2E_DIR/pkgroot
MB=$E2E_DIR/meson
IMG=$E2E_DIR/img
DOMU_VCPUS=${DOMU_VCPUS:-4}

[ -f "$PKGROOT/.complete" ] || [ -f "$PKGROOT/.packages" ] || { echo "e2e-xen build: run install.sh first" >&2; exit 1; }
[ "$XEN_ARCH" != arm64 ] || export ARM64_SYSROOT=$E2E_DIR/sysroot
[ "$XEN_VERSION" = 4.17 ] || export TRIXIE_ROOT=${TRIXIE_ROOT:-$("$ROOT/scripts/trixie.sh" chroot-dir)}
# shellcheck source=tests/e2e/initramfs.sh
. "$HERE/../initramfs.sh"
KVER=$(initramfs_kver "$PKGROOT")

# ---- binaries
XE_LIBS="json-c xenstore xencontrol xenforeignmemory xengnttab xenevtchn xencall xentoollog"
XE_FLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE"
if [ "$XEN_ARCH" = arm64 ]; then
    [ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --cross-file "$("$ROOT/scripts/cross/arm64.sh" cross-file)" \
        --buildtype=debugoptimized -Dwerror=true >/dev/null
    ninja -C "$MB" xenstats xenstats-agent xenstats-top tests/pvstats/pv_test_provider tests/pvstats/pv_hostile libxenstats-internal.a >/dev/null
    SR=$E2E_DIR/sysroot
    MA=aarch64-linux-gnu
    # the cross file's flags: the sysroot's C library and pkg-config files
    # shellcheck disable=SC2046,SC2086
    PKG_CONFIG_LIBDIR=$SR/usr/lib/$MA/pkgconfig:$SR/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$SR \
        $MA-gcc --sysroot="$SR" -isystem "$SR/usr/include/$MA" -isystem "$SR/usr/include" -B"$SR/usr/lib/$MA/" \
        -L"$SR/usr/lib/$MA" -L"$SR/lib/$MA" -Wl,-rpath-link="$SR/usr/lib/$MA" -Wl,-rpath-link="$SR/lib/$MA" \
        $XE_FLAGS -I"$ROOT/include" -I"$ROOT/lib" -o "$MB/xen_e2e" "$HERE/xen_e2e.c" "$MB/libxenstats-internal.a" \
        $(PKG_CONFIG_LIBDIR=$SR/usr/lib/$MA/pkgconfig:$SR/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$SR \
            pkg-config --libs $XE_LIBS) -lpthread -lm
elif [ "$XEN_VERSION" = 4.17 ]; then
    [ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --buildtype=debugoptimized >/dev/null
    ninja -C "$MB" xenstats xenstats-agent xenstats-top tests/pvstats/pv_test_provider tests/pvstats/pv_hostile libxenstats-internal.a >/dev/null
    # shellcheck disable=SC2046,SC2086
    cc $XE_FLAGS -I"$ROOT/include" -I"$ROOT/lib" \
        -o "$MB/xen_e2e" "$HERE/xen_e2e.c" "$MB/libxenstats-internal.a" \
        $(pkg-config --libs $XE_LIBS) -lpthread -lm
else
    # the checkout as it is, built against Debian 13's libraries
    CMB=$("$ROOT/scripts/trixie.sh" build)
    chroot "$TRIXIE_ROOT" sh -c "cc $XE_FLAGS -I/build/xenstats/include -I/build/xenstats/lib \
        -o $CMB/xen_e2e /build/xenstats/tests/e2e/xen/xen_e2e.c $CMB/libxenstats-internal.a \
        \$(pkg-config --libs $XE_LIBS) -lpthread -lm"
    MB=$TRIXIE_ROOT$CMB
fi

# E2E_DEBS=DIR (Xen 4.17): xenstats and libxenstats from the Debian packages
# in DIR (scripts/deb.sh's build-deb/), extracted with dpkg-deb -x as
# Debian's own Xen is, instead of the plain build
XS_BIN=$MB/xenstats
XS_LIB=
if [ -n "${E2E_DEBS:-}" ]; then
    [ "$XEN_VERSION" = 4.17 ] || { echo "e2e-xen build: E2E_DEBS is for Xen 4.17" >&2; exit 1; }
    DEBROOT=$E2E_DIR/debroot
    rm -rf "$DEBROOT"
    for p in xenstats libxenstats0; do
        deb=$(ls "$E2E_DEBS"/${p}_*_"$XEN_ARCH".deb 2>/dev/null | head -1)
        [ -n "$deb" ] || { echo "e2e-xen build: no ${p} package in $E2E_DEBS" >&2; exit 1; }
        dpkg-deb -x "$deb" "$DEBROOT"
        echo "e2e-xen build: $(basename "$deb")"
    done
    XS_BIN=$DEBROOT/usr/bin/xenstats
    XS_LIB=$(ls "$DEBROOT"/usr/lib/*/libxenstats.so.0)
fi

rm -rf "$IMG"
mkdir -p "$IMG"
if [ "$XEN_ARCH" = arm64 ]; then
    cp "$PKGROOT/boot/xen-$XEN_VERSION-arm64" "$IMG/xen"
else
    zcat "$PKGROOT/boot/xen-$XEN_VERSION-amd64.gz" >"$IMG/xen"
fi
cp "$PKGROOT/boot/vmlinuz-$KVER" "$IMG/vmlinuz"

# xs_bin ROOT SRC DEST: one of xenstats' own binaries, with the package's
# library when it comes from the packages
xs_bin() {
    if [ -z "$XS_LIB" ]; then
        initramfs_bin "$@"
    elif [ "$XEN_ARCH" = arm64 ]; then
        PKGROOT=$DEBROOT initramfs_bin "$@"
    else
        LD_LIBRARY_PATH=$(dirname "$XS_LIB") initramfs_bin "$@"
    fi
}

test_programs() {
    local root=$1 app
    if [ -n "$XS_LIB" ]; then
        # the package's library where Debian puts it, so ldd and the
        # guest's loader find it
        mkdir -p "$root/usr/lib/$INITRAMFS_MA"
        cp -L "$XS_LIB" "$root/usr/lib/$INITRAMFS_MA/libxenstats.so.0"
    fi
    xs_bin "$root" "$XS_BIN" /usr/bin/xenstats
    # `xenstats agent` and `top` run executables of their own: the build's
    # beside xenstats, the package's where it installs them
    for app in xenstats-agent xenstats-top; do
        if [ -n "$XS_LIB" ]; then
            xs_bin "$root" "$DEBROOT/usr/libexec/xenstats/$app" "/usr/libexec/xenstats/$app"
        else
            xs_bin "$root" "$MB/$app" "/usr/bin/$app"
        fi
    done
    # the drop-in for xentop under its own name, as installed: a link to xenstats
    ln -sf xenstats "$root/usr/bin/xenstats-xentop"
    initramfs_bin "$root" "$MB/tests/pvstats/pv_test_provider" /usr/bin/pv_test_provider
    initramfs_bin "$root" "$MB/tests/pvstats/pv_hostile" /usr/bin/pv_hostile
    initramfs_bin "$root" "$MB/xen_e2e" /usr/bin/xen_e2e
}

# ---- domU
DU=$E2E_DIR/root-domu
rm -rf "$DU"
initramfs_base "$DU"
initramfs_xenstore_cli "$DU"
test_programs "$DU"
initramfs_modules "$DU" xen-evtchn xen-gntalloc xen-gntdev xen-netfront xen-blkfront
install -m755 "$HERE/domu-init.sh" "$DU/init"
initramfs_pack "$DU" "$IMG/domu.cpio"

# ---- dom0
D0=$E2E_DIR/root-dom0
rm -rf "$D0"
initramfs_base "$D0"
initramfs_dom0_tools "$D0"
test_programs "$D0"
# the domU's vif on a bridge and its file-backed vbd on a loop device, with
# hotplug scripts busybox can run; Debian's xentop to compare with
initramfs_backends "$D0"
initramfs_bin "$D0" "$PKGROOT/usr/lib/xen-$XEN_VERSION/bin/xentop" /usr/bin/xentop
# the real ethtool, to compare netback's own statistics with: this
# machine's, or the Debian 13 chroot's with its libraries for Xen 4.20
if [ "$XEN_ARCH" = arm64 ]; then
    ETHTOOL=$PKGROOT/sbin/ethtool
elif [ -n "$SYSROOT" ]; then
    ETHTOOL=$SYSROOT/usr/sbin/ethtool
else
    ETHTOOL=$(command -v ethtool || echo /usr/sbin/ethtool)
fi
initramfs_bin "$D0" "$ETHTOOL" /usr/sbin/ethtool
install -m644 "$HERE/figures.sh" "$D0/figures.sh"
install -m644 "$HERE/xentop_compare.awk" "$D0/xentop_compare.awk"
cp "$IMG/vmlinuz" "$D0/domu/vmlinuz"
cp "$IMG/domu.cpio" "$D0/domu/initrd"
# (Xen on Arm has one guest type, PVH-like with PV drivers: no type line)
DOMU_TYPE='type = "pv"'
[ "$XEN_ARCH" != arm64 ] || DOMU_TYPE=
cat >"$D0/domu/domu.cfg" <<CFG
name = "domu1"
$DOMU_TYPE
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd"
extra = "console=hvc0 rdinit=/init quiet cryptomgr.notests"
memory = 192
vcpus = $DOMU_VCPUS
vif = [ 'bridge=xenbr0,mac=00:16:3e:4c:00:01,script=/etc/xen/scripts/hotplug-vif' ]
disk = [ 'format=raw,vdev=xvda,access=rw,script=/etc/xen/scripts/hotplug-block,target=/dev/loop7' ]
on_poweroff = "destroy"
on_crash = "destroy"
CFG
install -m755 "$HERE/dom0-init.sh" "$D0/init"
initramfs_pack "$D0" "$IMG/dom0.cpio"
ls -l "$IMG" | awk 'NR > 1 {printf "e2e-xen build: %-14s %8.1f MB\n", $9, $5 / 1048576}'
