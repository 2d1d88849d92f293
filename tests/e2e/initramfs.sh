# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the real-Xen runners (tests/e2e/xen/build.sh,
# tests/e2e/xen-hv/run.sh): building blocks of the busybox initramfs images
# booted as dom0 and domU.  Needs PKGROOT (Debian's packages extracted by
# tests/e2e/xen/install.sh) and KVER (the kernel version under it).
#
# XEN_VERSION=4.17 (default): Debian 12's Xen tools; every library comes
# from this (Debian 12) machine, found by its ldd.
# XEN_VERSION=4.20: Debian 13's; TRIXIE_ROOT is the Debian 13 chroot of
# scripts/trixie.sh, whose loader resolves every binary's libraries in
# PKGROOT first, then in the chroot (never on this machine: its glibc is
# older than Debian 13's binaries need).
# XEN_ARCH=arm64: Debian 12's arm64 packages; ARM64_SYSROOT is the tree of
# scripts/cross/arm64.sh sysroot.  This machine cannot run arm64 programs,
# so libraries are found by their DT_NEEDED entries (readelf) in PKGROOT,
# then in ARM64_SYSROOT.
# XEN_TOOLS_ROOT=DIR (with XEN_VERSION=4.22 or master): Xen's tools are a
# tree's own, installed into DIR with upstream's layout by
# xen/build-xen-tree.sh (binaries in /usr/sbin, /usr/bin and
# /usr/lib/xen/bin, libraries in /usr/lib); TRIXIE_ROOT is that script's
# build chroot, PKGROOT holds only Debian 13's kernel.

INITRAMFS_E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
XEN_VERSION=${XEN_VERSION:-4.17}
XEN_ARCH=${XEN_ARCH:-amd64}
SYSROOT=
[ "$XEN_VERSION" = 4.17 ] || SYSROOT=${TRIXIE_ROOT:?TRIXIE_ROOT: the Debian 13 chroot}
if [ "$XEN_ARCH" = arm64 ]; then
    : "${ARM64_SYSROOT:?ARM64_SYSROOT: the arm64 sysroot}"
    INITRAMFS_MA=aarch64-linux-gnu
    INITRAMFS_LOADER=lib/ld-linux-aarch64.so.1
else
    INITRAMFS_MA=x86_64-linux-gnu
    INITRAMFS_LOADER=lib64/ld-linux-x86-64.so.2
fi
XEN_TOOLS_ROOT=${XEN_TOOLS_ROOT:-}

# initramfs_kver PKGROOT: the kernel version of the extracted packages
# (Debian 13 is usr-merged: its modules are under usr/lib/modules)
initramfs_kver() {
    basename "$(ls -d "$1"/lib/modules/* "$1"/usr/lib/modules/* 2>/dev/null | head -1)"
}

# initramfs_libs BIN: "HOSTPATH IMAGEPATH" for every library BIN needs
initramfs_libs() {
    local lib tree found
    if [ "$XEN_ARCH" = arm64 ]; then
        initramfs_needed "$1"
        return
    fi
    if [ -z "$SYSROOT" ]; then
        for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ )]*'); do echo "$lib $lib"; done
        return 0
    fi
    "$SYSROOT/usr/lib64/ld-linux-x86-64.so.2" \
        --library-path "${XEN_TOOLS_ROOT:+$XEN_TOOLS_ROOT/usr/lib:}$PKGROOT/usr/lib/x86_64-linux-gnu:$SYSROOT/usr/lib/x86_64-linux-gnu" \
        --list "$1" | grep -o '=> /[^ ]*' | cut -c4- | while read -r lib; do
            found=
            for tree in ${XEN_TOOLS_ROOT:+"$XEN_TOOLS_ROOT"} "$PKGROOT" "$SYSROOT"; do
                case $lib in "$tree"/*) echo "$lib ${lib#"$tree"}"; found=1; break ;; esac
            done
            [ -n "$found" ] || { echo "initramfs: $1 needs $lib, outside Debian 13's trees" >&2; return 1; }
        done
}

# initramfs_needed BIN: initramfs_libs for an arm64 binary, following
# DT_NEEDED recursively through the multiarch directories of PKGROOT and
# ARM64_SYSROOT
initramfs_needed() {
    local -A seen=()
    local todo=("$1") f n tree dir hit
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}
        todo=("${todo[@]:1}")
        for n in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            [ -z "${seen[$n]:-}" ] || continue
            seen[$n]=1
            hit=
            for tree in "$PKGROOT" "$ARM64_SYSROOT"; do
                for dir in usr/lib/$INITRAMFS_MA lib/$INITRAMFS_MA usr/lib; do
                    if [ -e "$tree/$dir/$n" ]; then
                        hit=$tree/$dir/$n
                        echo "$hit /usr/lib/$INITRAMFS_MA/$n"
                        todo+=("$hit")
                        break 2
                    fi
                done
            done
            [ -n "$hit" ] || { echo "initramfs: $f needs $n, not in the arm64 trees" >&2; return 1; }
        done
    done
}

# initramfs_base ROOT: busybox with its applets, usrmerge links, the dynamic
# loader and libgcc_s (glibc dlopen()s it for pthread_cancel, which
# libxenstore's xs_close() and xl use; ldd does not list it)
initramfs_base() {
    local root=$1 applet
    mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/$INITRAMFS_MA,usr/lib64,proc,sys,dev,tmp,run,etc,var,root}
    ln -s usr/bin "$root/bin"
    ln -s usr/sbin "$root/sbin"
    ln -s usr/lib "$root/lib"
    ln -s usr/lib64 "$root/lib64"
    # busybox first: its applet list names bin/busybox, whose link must not
    # exist when it is copied (cp would follow it to this machine's)
    if [ "$XEN_ARCH" = arm64 ]; then
        cp "$PKGROOT/bin/busybox" "$root/usr/bin/busybox"
    else
        cp /bin/busybox "$root/usr/bin/busybox"
    fi
    # the applets' names from this machine's busybox-static: Debian builds
    # the arm64 one from the same configuration
    for applet in $(/bin/busybox --list-full); do
        [ -e "$root/$applet" ] || [ -L "$root/$applet" ] || ln -s /usr/bin/busybox "$root/$applet"
    done
    if [ "$XEN_ARCH" = arm64 ]; then
        cp -L "$ARM64_SYSROOT/$INITRAMFS_LOADER" "$root/usr/$INITRAMFS_LOADER"
        cp -L "$ARM64_SYSROOT/lib/$INITRAMFS_MA/libgcc_s.so.1" "$root/usr/lib/$INITRAMFS_MA/" 2>/dev/null ||
            cp -L "$PKGROOT/lib/$INITRAMFS_MA/libgcc_s.so.1" "$root/usr/lib/$INITRAMFS_MA/"
        return
    fi
    cp -L "$SYSROOT/lib64/ld-linux-x86-64.so.2" "$root/usr/lib64/"
    cp -L "$SYSROOT/lib/x86_64-linux-gnu/libgcc_s.so.1" "$root/usr/lib/x86_64-linux-gnu/"
}

# initramfs_bin ROOT SRC [DEST]: a binary and every library it needs
initramfs_bin() {
    local root=$1 src=$2 dest=${3:-$2} libs lib at
    mkdir -p "$root$(dirname "$dest")"
    cp -L "$src" "$root$dest"
    libs=$(initramfs_libs "$src") || return 1
    while read -r lib at; do
        [ -n "$lib" ] && [ -e "$lib" ] && [ ! -e "$root$at" ] || continue
        mkdir -p "$root$(dirname "$at")"
        cp -L "$lib" "$root$at"
    done <<<"$libs"
}

# initramfs_xenstats ROOT BIN: the xenstats binary BIN as /usr/bin/xenstats,
# with the application executables a build puts beside it (`xenstats agent`
# and `top` run those, looked up beside /usr/bin/xenstats first)
initramfs_xenstats() {
    local root=$1 bin=$2 app
    initramfs_bin "$root" "$bin" /usr/bin/xenstats || return 1
    for app in xenstats-agent xenstats-top; do
        [ -x "$(dirname "$bin")/$app" ] || { echo "initramfs: no $app beside $bin" >&2; return 1; }
        initramfs_bin "$root" "$(dirname "$bin")/$app" "/usr/bin/$app" || return 1
    done
}

# initramfs_modules ROOT NAME...: Xen's modules (=m in Debian's kernel),
# uncompressed, as ROOT/modules/NAME.ko (busybox insmod)
initramfs_modules() {
    local root=$1 m f
    shift
    mkdir -p "$root/modules"
    for m in "$@"; do
        f=$(find "$PKGROOT"/lib/modules/"$KVER" "$PKGROOT"/usr/lib/modules/"$KVER" -name "$m.ko*" 2>/dev/null | head -1 || true)
        [ -n "$f" ] || { echo "initramfs: module $m not found under $PKGROOT" >&2; return 1; }
        case $f in
        *.xz) xz -dc "$f" >"$root/modules/$m.ko" ;;
        *.zst) zstd -qdc "$f" >"$root/modules/$m.ko" ;;
        *) cp "$f" "$root/modules/$m.ko" ;;
        esac
    done
}

# initramfs_xenstore_cli ROOT: Debian's (or the tree's) xenstore client and
# its aliases
initramfs_xenstore_cli() {
    local root=$1 t
    initramfs_bin "$root" "${XEN_TOOLS_ROOT:-$PKGROOT}/usr/bin/xenstore" /usr/bin/xenstore
    for t in read write ls list watch rm exists chmod; do ln -sf xenstore "$root/usr/bin/xenstore-$t"; done
}

# initramfs_dom0_tools ROOT: what a minimal control domain runs (xenstored,
# xen-init-dom0, xenconsoled, xl), the directories they expect and
# /dom0-up.sh, which starts them
initramfs_dom0_tools() {
    local root=$1 b xb=/usr/lib/xen-$XEN_VERSION/bin
    if [ -n "$XEN_TOOLS_ROOT" ]; then
        for b in usr/sbin/xenstored usr/lib/xen/bin/xen-init-dom0 usr/sbin/xenconsoled usr/sbin/xl usr/sbin/xentop; do
            initramfs_bin "$root" "$XEN_TOOLS_ROOT/$b" "/$b"
        done
    else
        for b in xenstored xen-init-dom0 xenconsoled xl; do
            initramfs_bin "$root" "$PKGROOT$xb/$b" "$xb/$b"
        done
    fi
    initramfs_xenstore_cli "$root"
    mkdir -p "$root/etc/xen" "$root/var/lib/xen" "$root/var/log/xen" "$root/domu"
    cp "${XEN_TOOLS_ROOT:-$PKGROOT}/etc/xen/xl.conf" "$root/etc/xen/" 2>/dev/null || true
    initramfs_modules "$root" xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs
    install -m644 "$INITRAMFS_E2E_DIR/dom0-up.sh" "$root/dom0-up.sh"
}

# initramfs_pack ROOT FILE: a newc cpio archive, uncompressed (inflating
# tens of MB under software emulation costs more than copying them)
initramfs_pack() {
    (cd "$1" && find . | cpio -o -H newc --quiet) >"$2"
}

# initramfs_backends ROOT: what dom0_backends (dom0-up.sh) needs in a dom0
# image: the backend, bridge and loop modules and the busybox hotplug
# scripts the domU configurations name (/etc/xen/scripts/hotplug-*)
initramfs_backends() {
    local root=$1
    initramfs_modules "$root" loop llc stp bridge xen-netback xen-blkback
    mkdir -p "$root/etc/xen/scripts"
    install -m755 "$INITRAMFS_E2E_DIR/hotplug-vif" "$INITRAMFS_E2E_DIR/hotplug-block" "$root/etc/xen/scripts/"
    # libxl's default vif script, for an xl network-attach without script=
    # (it takes one key=value per argument: in one comma-separated argument
    # script= was part of the bridge's name)
    ln -sf hotplug-vif "$root/etc/xen/scripts/vif-bridge"
}
