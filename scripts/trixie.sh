#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build xenstats and run its emulated suites in a Debian 13 (trixie) chroot,
# against trixie's libxen-dev 4.20, json-c, libmicrohttpd and ncurses.
#   scripts/trixie.sh              chroot (cached), build, suites (no fuzz)
#   scripts/trixie.sh chroot       only make/refresh the chroot
#   scripts/trixie.sh chroot-dir   the same, then print the chroot's path
#   scripts/trixie.sh build        chroot + build (-Dtests=false), for the
#                                  Xen 4.20 end-to-end tests; prints the
#                                  build directory (inside the chroot)
#   scripts/trixie.sh deb          chroot + the Debian packages built
#                                  there (scripts/deb.sh) and lintian;
#                                  the .debs are kept in $TRIXIE_DIR/deb
# The chroot is made once with `debootstrap --variant=minbase trixie` from
# the mirror the machine already uses, and kept in $TRIXIE_DIR (default
# build-trixie/, git-ignored); a fresh machine spends about 1 minute on it.
# The machine's own apt configuration is never touched.  /proc, /dev,
# /dev/pts and /sys are bind-mounted only while the suites run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRIXIE_DIR=${TRIXIE_DIR:-$ROOT/build-trixie}
CH=$TRIXIE_DIR/chroot
SUITE=trixie
PACKAGES="build-essential meson ninja-build pkg-config libxen-dev libjson-c-dev libcmocka-dev
libmicrohttpd-dev libncurses-dev zlib1g-dev libyaml-dev libcrypt-dev libgnutls28-dev xenstore-utils curl procps
tmux python3 prometheus ca-certificates openssl apache2-utils debhelper lintian bash-completion systemd-dev
ethtool"
mkdir -p "$TRIXIE_DIR"
log() { printf 'trixie: %s\n' "$*" >&2; }

if [ -z "${MIRROR:-}" ]; then
    MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
        /etc/apt/sources.list 2>/dev/null || true)
fi
[ -n "$MIRROR" ] || { log "no Debian mirror in the machine's apt configuration; set MIRROR"; exit 1; }

MOUNTS=()
unmount_all() {
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        if mountpoint -q "${MOUNTS[$i]}"; then umount -l "${MOUNTS[$i]}" || true; fi
    done
    MOUNTS=()
}
trap unmount_all EXIT
mount_in() { # mount_in TYPE|bind SRC DIR
    local dir=$CH/$3
    mkdir -p "$dir"
    mountpoint -q "$dir" && return 0
    if [ "$1" = bind ]; then mount --bind "$2" "$dir"; else mount -t "$1" "$2" "$dir"; fi
    MOUNTS+=("$dir")
}

make_chroot() {
    local t0
    t0=$(date +%s)
    if [ ! -f "$CH/.debootstrap-done" ]; then
        command -v debootstrap >/dev/null || { apt-get -q update >/dev/null && apt-get -y -q install debootstrap >/dev/null; }
        rm -rf "$CH"
        debootstrap --variant=minbase "$SUITE" "$CH" "$MIRROR" >"$TRIXIE_DIR/debootstrap.log" 2>&1 ||
            { tail -20 "$TRIXIE_DIR/debootstrap.log" >&2; exit 1; }
        touch "$CH/.debootstrap-done"
        log "debootstrap $SUITE: $(($(date +%s) - t0)) s"
    fi
    # shellcheck disable=SC2086
    if [ "$(cat "$CH/.packages" 2>/dev/null)" != "$(echo $PACKAGES)" ]; then
        t0=$(date +%s)
        mount_in proc proc /proc
        chroot "$CH" env DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends \
            $PACKAGES >"$TRIXIE_DIR/apt.log" 2>&1 || { tail -20 "$TRIXIE_DIR/apt.log" >&2; exit 1; }
        chroot "$CH" apt-get clean
        unmount_all
        echo $PACKAGES >"$CH/.packages"
        log "packages installed in the chroot: $(($(date +%s) - t0)) s"
    fi
    log "$(chroot "$CH" dpkg-query -W -f='${Package} ${Version}, ' libxen-dev libjson-c-dev libmicrohttpd-dev libncurses-dev meson gcc-14 2>/dev/null)"
}

# the checkout as it is (tracked and untracked, not ignored files)
copy_tree() {
    rm -rf "$CH/build/xenstats"
    mkdir -p "$CH/build/xenstats"
    (cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -x -C "$CH/build/xenstats"
}

make_chroot
[ "${1:-}" = chroot ] && exit 0
if [ "${1:-}" = chroot-dir ]; then
    echo "$CH"
    exit 0
fi
copy_tree
if [ "${1:-}" = build ]; then
    mount_in proc proc /proc
    chroot "$CH" sh -c 'cd /build/xenstats && { [ -f /build/b-e2e/build.ninja ] || meson setup /build/b-e2e --buildtype=debugoptimized >/dev/null; } && ninja -C /build/b-e2e -j2 >/dev/null'
    echo /build/b-e2e
    exit 0
fi
if [ "${1:-}" = deb ]; then
    mount_in proc proc /proc
    rc=0
    # deb.sh builds from a copy of the tree it is given, in DEB_OUT
    chroot "$CH" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEB_OUT=/build/deb /build/xenstats/scripts/deb.sh lintian || rc=$?
    rm -rf "$TRIXIE_DIR/deb"
    mkdir -p "$TRIXIE_DIR/deb"
    cp "$CH"/build/deb/*.deb "$CH"/build/deb/build.log "$TRIXIE_DIR/deb/" 2>/dev/null || true
    log "packages built in the chroot: exit $rc"
    exit $rc
fi
mount_in proc proc /proc
mount_in bind /dev /dev
mount_in devpts devpts /dev/pts
mount_in sysfs sysfs /sys
t0=$(date +%s)
rc=0
chroot "$CH" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=xterm LANG=C.UTF-8 sh -c '
    cd /build/xenstats &&
    { [ -f /build/b/build.ninja ] || meson setup /build/b -Dwerror=true >/dev/null; } &&
    ninja -C /build/b -j2 &&
    meson test -C /build/b --no-suite fuzz --print-errorlogs --num-processes 2' || rc=$?
mkdir -p "$TRIXIE_DIR/logs"
cp "$CH/build/b/meson-logs/testlog.txt" "$TRIXIE_DIR/logs/" 2>/dev/null || true
log "build + suites in the chroot: $(($(date +%s) - t0)) s, exit $rc"
exit $rc
