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
# Needs install.sh to have run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
PKGROOT=$E2E_DIR/pkgroot
MB=$E2E_DIR/meson
IMG=$E2E_DIR/img
DOMU_VCPUS=${DOMU_VCPUS:-4}

[ -f "$PKGROOT/.complete" ] || { echo "e2e-xen build: run install.sh first" >&2; exit 1; }
KVER=$(basename "$(ls -d "$PKGROOT"/lib/modules/* | head -1)")

# ---- binaries
[ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --buildtype=debugoptimized >/dev/null
ninja -C "$MB" xenstats tests/pvstats/pv_test_provider tests/pvstats/pv_hostile libxenstats-internal.a >/dev/null
# shellcheck disable=SC2046
cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/lib" \
    -o "$MB/xen_e2e" "$HERE/xen_e2e.c" "$MB/libxenstats-internal.a" \
    $(pkg-config --libs json-c xenstore xencontrol xenforeignmemory xengnttab xenevtchn xentoollog) -lpthread -lm

rm -rf "$IMG"
mkdir -p "$IMG"
zcat "$PKGROOT/boot/xen-4.17-amd64.gz" >"$IMG/xen"
cp "$PKGROOT/boot/vmlinuz-$KVER" "$IMG/vmlinuz"

# install_bin ROOT SRC DEST: a binary and every library ldd resolves for it
install_bin() {
    local root=$1 src=$2 dest=$3 lib
    mkdir -p "$root$(dirname "$dest")"
    cp -L "$src" "$root$dest"
    for lib in $(ldd "$src" 2>/dev/null | grep -o '/[^ )]*'); do
        [ -e "$lib" ] && [ ! -e "$root$lib" ] || continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# base ROOT: busybox with its applets, the dynamic loader, libgcc_s (glibc
# dlopen()s it for pthread_cancel, which libxenstore's xs_close() and xl
# use; ldd does not list it)
base() {
    local root=$1 applet
    mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,proc,sys,dev,tmp,run,etc,var,root}
    ln -s usr/bin "$root/bin"
    ln -s usr/sbin "$root/sbin"
    ln -s usr/lib "$root/lib"
    ln -s usr/lib64 "$root/lib64"
    cp /bin/busybox "$root/usr/bin/busybox"
    for applet in $(/bin/busybox --list-full); do
        [ -e "$root/$applet" ] || [ -L "$root/$applet" ] || ln -s /usr/bin/busybox "$root/$applet"
    done
    cp -L /lib64/ld-linux-x86-64.so.2 "$root/usr/lib64/"
    cp -L /lib/x86_64-linux-gnu/libgcc_s.so.1 "$root/usr/lib/x86_64-linux-gnu/"
}

# modules ROOT NAME...: Xen's modules (=m in Debian's kernel) into /modules
modules() {
    local root=$1 m f
    shift
    mkdir -p "$root/modules"
    for m in "$@"; do
        f=$(find "$PKGROOT/lib/modules/$KVER" -name "$m.ko*" | head -1)
        [ -n "$f" ] || { echo "e2e-xen build: module $m not found" >&2; exit 1; }
        case $f in
        *.xz) xz -dc "$f" >"$root/modules/$m.ko" ;;
        *.zst) zstd -qdc "$f" >"$root/modules/$m.ko" ;;
        *) cp "$f" "$root/modules/$m.ko" ;;
        esac
    done
}

xenstore_cli() {
    local root=$1 t
    install_bin "$root" "$PKGROOT/usr/bin/xenstore" /usr/bin/xenstore
    for t in read write ls list watch rm exists chmod; do ln -sf xenstore "$root/usr/bin/xenstore-$t"; done
}

test_programs() {
    local root=$1
    install_bin "$root" "$MB/xenstats" /usr/bin/xenstats
    install_bin "$root" "$MB/tests/pvstats/pv_test_provider" /usr/bin/pv_test_provider
    install_bin "$root" "$MB/tests/pvstats/pv_hostile" /usr/bin/pv_hostile
    install_bin "$root" "$MB/xen_e2e" /usr/bin/xen_e2e
}

# ---- domU
DU=$E2E_DIR/root-domu
rm -rf "$DU"
base "$DU"
xenstore_cli "$DU"
test_programs "$DU"
modules "$DU" xen-evtchn xen-gntalloc xen-gntdev
install -m755 "$HERE/domu-init.sh" "$DU/init"
# Uncompressed: inflating tens of MB under software emulation costs more
# than copying them.
(cd "$DU" && find . | cpio -o -H newc --quiet) >"$IMG/domu.cpio"

# ---- dom0
D0=$E2E_DIR/root-dom0
rm -rf "$D0"
base "$D0"
XB=/usr/lib/xen-4.17/bin
for b in xenstored xen-init-dom0 xenconsoled xl; do
    install_bin "$D0" "$PKGROOT$XB/$b" "$XB/$b"
done
xenstore_cli "$D0"
test_programs "$D0"
modules "$D0" xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs
mkdir -p "$D0/etc/xen" "$D0/var/lib/xen" "$D0/var/log/xen"
cp "$PKGROOT/etc/xen/xl.conf" "$D0/etc/xen/" 2>/dev/null || true
mkdir -p "$D0/domu"
cp "$IMG/vmlinuz" "$D0/domu/vmlinuz"
cp "$IMG/domu.cpio" "$D0/domu/initrd"
cat >"$D0/domu/domu.cfg" <<CFG
name = "domu1"
type = "pv"
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd"
extra = "console=hvc0 rdinit=/init quiet cryptomgr.notests"
memory = 192
vcpus = $DOMU_VCPUS
on_poweroff = "destroy"
on_crash = "destroy"
CFG
install -m755 "$HERE/dom0-init.sh" "$D0/init"
(cd "$D0" && find . | cpio -o -H newc --quiet) >"$IMG/dom0.cpio"
ls -l "$IMG" | awk 'NR > 1 {printf "e2e-xen build: %-14s %8.1f MB\n", $9, $5 / 1048576}'
