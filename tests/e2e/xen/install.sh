#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install what the Xen end-to-end test needs.  Host side (apt-get install):
# QEMU (software emulation, no KVM), busybox-static and cpio for the
# initramfs images, ethtool to copy into dom0, plus the project's build dependencies.  Guest side
# (apt-get download + dpkg-deb -x, cached under $E2E_DIR/cache): Debian's
# Xen 4.17 hypervisor and tools and a Debian kernel, only extracted so that
# no boot hooks run and no Xen daemon starts on the host.  Idempotent.
# XEN_VERSION=4.20: Debian 13's Xen 4.20 and kernel instead, downloaded by
# the apt of the Debian 13 chroot (scripts/trixie.sh), whose libraries the
# images then use; default E2E_DIR build-e2e-4.20.
# XEN_ARCH=arm64: Debian 12's arm64 Xen 4.17, kernel and libraries, and the
# arm64 sysroot xenstats is cross-built against (scripts/cross/arm64.sh,
# cached outside the clone); $E2E_DIR/pkgroot and sysroot link to them.
# Default E2E_DIR build-e2e-arm64.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
XEN_VERSION=${XEN_VERSION:-4.17}
XEN_ARCH=${XEN_ARCH:-amd64}
if [ "$XEN_ARCH" = arm64 ]; then E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-arm64}
elif [ "$XEN_VERSION" = 4.17 ]; then E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}; else E2E_DIR=${E2E_DIR:-$ROOT/build-e2e-$XEN_VERSION}; fi
CACHE=$E2E_DIR/cache
PKGROOT=$E2E_DIR/pkgroot
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
APT_OPTS=(-o DPkg::Lock::Timeout=600 -y -q)
export DEBIAN_FRONTEND=noninteractive

HOST_PACKAGES="qemu-system-x86 busybox-static cpio gzip kmod libgcc-s1 ethtool"
if [ "$XEN_ARCH" = arm64 ]; then
    [ "$XEN_VERSION" = 4.17 ] || { echo "e2e-xen install: XEN_ARCH=arm64 is Debian 12's Xen 4.17" >&2; exit 1; }
    # busybox-static: only the names of its applets (initramfs_base)
    HOST_PACKAGES="qemu-system-arm busybox-static cpio binutils gcc-aarch64-linux-gnu"
fi
missing=
for p in $HOST_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "e2e-xen install: installing$missing"
    $SUDO apt-get "${APT_OPTS[@]}" update >/dev/null
    # shellcheck disable=SC2086
    $SUDO apt-get "${APT_OPTS[@]}" install --no-install-recommends $missing >/dev/null
fi
"$ROOT/scripts/install-deps.sh"

if [ "$XEN_ARCH" = arm64 ]; then
    mkdir -p "$E2E_DIR"
    ln -sfn "$("$ROOT/scripts/cross/arm64.sh" guest)" "$PKGROOT"
    ln -sfn "$("$ROOT/scripts/cross/arm64.sh" sysroot)" "$E2E_DIR/sysroot"
    basename "$(ls "$PKGROOT"/boot/vmlinuz-* | head -1)" >"$E2E_DIR/kernel-package"
    echo "e2e-xen install: arm64 packages in $(readlink "$PKGROOT") and $(readlink "$E2E_DIR/sysroot")"
    exit 0
fi
if [ -f "$PKGROOT/.complete" ]; then
    echo "e2e-xen install: guest packages already extracted"
    exit 0
fi
if [ "$XEN_VERSION" != 4.17 ]; then
    CH=$("$ROOT/scripts/trixie.sh" chroot-dir)
    mkdir -p "$CACHE" "$CH/debs"
    chmod 777 "$CH/debs"
    if [ ! -s "$CACHE/kernel-package" ]; then
        chroot "$CH" apt-cache depends linux-image-amd64 2>/dev/null |
            awk '/Depends: linux-image-[0-9]/ {print $2; exit}' >"$CACHE/kernel-package"
    fi
    KPKG=$(cat "$CACHE/kernel-package")
    [ -n "$KPKG" ] || { echo "e2e-xen install: no linux-image-amd64 candidate in the chroot" >&2; exit 1; }
    pkgs="xen-hypervisor-$XEN_VERSION-amd64 xen-utils-$XEN_VERSION xen-utils-common xenstore-utils $KPKG"
    echo "e2e-xen install: downloading $pkgs (Debian 13)"
    chroot "$CH" sh -c "cd /debs && apt-get -q download $pkgs" >/dev/null
    rm -rf "$PKGROOT"
    mkdir -p "$PKGROOT"
    for p in $pkgs; do dpkg-deb -x "$(ls "$CH/debs/${p}_"*.deb | head -1)" "$PKGROOT"; done
    echo "$KPKG" >"$PKGROOT/.kernel-package"
    touch "$PKGROOT/.complete"
    echo "e2e-xen install: Debian 13 packages extracted into $PKGROOT"
    exit 0
fi
# The kernel behind Debian's metapackage, resolved once and cached.
if [ ! -s "$CACHE/kernel-package" ]; then
    mkdir -p "$CACHE"
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}' \
        >"$CACHE/kernel-package"
fi
KPKG=$(cat "$CACHE/kernel-package")
[ -n "$KPKG" ] || { echo "e2e-xen install: no linux-image-amd64 candidate (apt-get update?)" >&2; exit 1; }
mkdir -p "$CACHE/debs"
# apt-get download runs as the _apt user when root: it needs to write here.
chmod 777 "$CACHE/debs"
need=
for p in xen-hypervisor-4.17-amd64 xen-utils-4.17 xen-utils-common xenstore-utils "$KPKG"; do
    ls "$CACHE/debs/${p}_"*.deb >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
    echo "e2e-xen install: downloading$need"
    # shellcheck disable=SC2086
    (cd "$CACHE/debs" && apt-get -o DPkg::Lock::Timeout=600 -q download $need >/dev/null 2>&1) || {
        $SUDO apt-get "${APT_OPTS[@]}" update >/dev/null
        # shellcheck disable=SC2086
        (cd "$CACHE/debs" && apt-get -o DPkg::Lock::Timeout=600 -q download $need >/dev/null)
    }
fi
rm -rf "$PKGROOT"
mkdir -p "$PKGROOT"
for d in "$CACHE/debs"/*.deb; do
    dpkg-deb -x "$d" "$PKGROOT"
done
echo "$KPKG" >"$PKGROOT/.kernel-package"
touch "$PKGROOT/.complete"
echo "e2e-xen install: guest packages extracted into $PKGROOT"
