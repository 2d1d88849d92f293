#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build an upstream Xen tree with the xenstats series applied:
#
#   XEN_ARCH=x86_64 (default), XEN_VERSION=4.22 (default) or master: the
#     whole tree from its upstream archive, in a Debian 13 (trixie) build
#     chroot: the hypervisor (Debian 13's shipped 4.20 configuration,
#     shadow paging and the series' Kconfig options on, `make olddefconfig`)
#     and the dom0 tools of the same tree (libraries, xenstored, xl,
#     xenconsoled, xen-init-dom0, xentop, xl.conf ... and the series' tools/tests
#     programs), installed into a DESTDIR that tests/e2e/xen-hv/run.sh boots.
#     This is `make xen-tree [XEN_VERSION=master]`.
#   XEN_ARCH=arm64, XEN_VERSION=4.17, 4.20, 4.22 or master: the hypervisor
#     only, cross-compiled on this machine with Debian's
#     gcc-aarch64-linux-gnu (`defconfig` plus the series' Kconfig options).
#     This is `make xen-cross-arm64 [XEN_VERSION=...] [XEN_DEBUG=y]`.
#
# Every build is -Werror (Xen's own), and a `warning:` line in its log fails
# it too.  The build chroot and the compiler caches live outside the clone,
# in XEN_CACHE: a fresh machine makes the chroot with debootstrap (the
# mirror of the machine's apt configuration, which is never changed) and
# installs the build dependencies inside it with the chroot's own apt.
#
# Usage: xen/build-xen-tree.sh [build]     build (prints the hypervisor's path)
#        xen/build-xen-tree.sh chroot      make or refresh the chroot, print its path
#        xen/build-xen-tree.sh exec CMD... run CMD in the chroot, with this
#                         repository at /src and XEN_HV_DIR at /hv
#        xen/build-xen-tree.sh out         print the output directory
#        xen/build-xen-tree.sh xenstats    x86_64: xenstats built against the
#                         tree's tools (after a build), in a copy of the
#                         chroot with xenstats' build dependencies
#                         (<chroot>-xenstats, the root its libraries come
#                         from in dom0); prints the binary's path
#
# Environment:
#   XEN_VERSION   4.22 (default), master; with XEN_ARCH=arm64 also 4.17, 4.20
#   XEN_ARCH      x86_64 (default) or arm64
#   XEN_DEBUG=y   debug hypervisor (CONFIG_DEBUG: assertions on)
#   XEN_SERIES    the series to apply (default xen/patches/<XEN_VERSION>;
#                 a directory; an empty one, or "none", builds upstream)
#   XEN_HV_EXTRA_PATCHES  more patch directories, applied after the series
#                 (test-only patches); trees and outputs get their names
#   TOOLS=0       x86_64: the hypervisor only
#   XEN_CACHE     chroot and compiler caches (default /var/cache/xenstats-ci
#                 as root, else ~/.cache/xenstats)
#   XEN_HV_DIR    trees and outputs (default <repo>/build-xen-hv, ignored)
#   XEN_SRC_DIR   the upstream archives and their SHA256SUMS (default
#                 ../shared/xen-src beside the repository)
#   JOBS          parallel jobs (default 2); NICE (default "nice -n 10")
#   NO_CCACHE=1   compile without ccache
#   MIRROR        Debian mirror for debootstrap (default: the machine's)
#
# Outputs in $XEN_HV_DIR/out-<version>[-arm64][-debug][-<extra>]/: xen
# (x86: the multiboot ELF QEMU boots; arm64: the Image), xen-syms,
# build.log, config, times.txt; x86 also dist/ (the tools' DESTDIR),
# tools-build.log and xen.gz.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
log() { printf '[xen-tree] %s\n' "$*" >&2; }
die() { printf '[xen-tree] ERROR: %s\n' "$*" >&2; exit 1; }
# shellcheck source=xen/lib-tree.sh
. "$REPO/xen/lib-tree.sh"

case ${1:-build} in
-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
build | chroot | exec | out | xenstats) CMD=${1:-build}; [ $# -gt 0 ] && shift ;;
*) die "unknown command '$1' (see --help)" ;;
esac

XEN_VERSION=${XEN_VERSION:-4.22}
XEN_ARCH=${XEN_ARCH:-x86_64}
XEN_DEBUG=${XEN_DEBUG:-n}
XEN_SRC_DIR=${XEN_SRC_DIR:-$REPO/../shared/xen-src}
HV=${XEN_HV_DIR:-$REPO/build-xen-hv}
if [ -z "${XEN_CACHE:-}" ]; then
    if [ "$(id -u)" = 0 ]; then XEN_CACHE=/var/cache/xenstats-ci; else XEN_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xenstats; fi
fi
JOBS=${JOBS:-2}
read -r -a NICE <<<"${NICE:-nice -n 10}"
TOOLS=${TOOLS:-1}
CH=$XEN_CACHE/trixie-xen-build
BUILD_DEPS="gcc make binutils bison flex python3-dev python3-setuptools iasl uuid-dev libncurses-dev
libjson-c-dev zlib1g-dev liblzma-dev libzstd-dev liblz4-dev libbz2-dev pkgconf ccache"

case $XEN_ARCH in
x86_64 | amd64) XEN_ARCH=x86_64 ;;
arm64 | aarch64) XEN_ARCH=arm64 ;;
*) die "XEN_ARCH must be x86_64 or arm64" ;;
esac
# (chroot and exec need no tree)
case $CMD in chroot | exec) XEN_VERSION=none XEN_SERIES=none ;; esac
case $XEN_VERSION in
none) ARCHIVE=none ;;
4.17) ARCHIVE=xen-hypervisor-4.17.7.tar.xz ;;
4.20) ARCHIVE=xen-hypervisor-4.20.4.tar.xz ;;
4.22) ARCHIVE=xen-4.22.0.tar.xz ;;
master)
    ARCHIVE=$(cd "$XEN_SRC_DIR" 2>/dev/null && ls xen-master-*.tar.xz 2>/dev/null | sort | tail -1 || true)
    [ -n "$ARCHIVE" ] || die "no xen-master-*.tar.xz in $XEN_SRC_DIR"
    ;;
*) die "XEN_VERSION must be 4.22 or master (arm64: also 4.17 or 4.20)" ;;
esac
NAME=${ARCHIVE%.tar.xz}
NAME=${NAME/xen-hypervisor-/xen-}
if [ $XEN_ARCH = x86_64 ]; then
    case $XEN_VERSION in 4.17 | 4.20) die "x86_64 $XEN_VERSION is xen/build-hypervisor.sh (XEN_VERSION=$XEN_VERSION)" ;; esac
fi

# --- the series and the names of the tree and the output --------------------
SERIES=${XEN_SERIES:-$REPO/xen/patches/$XEN_VERSION}
series=()
if [ "$SERIES" != none ]; then
    case $SERIES in /*) ;; *) SERIES=$REPO/$SERIES ;; esac
    [ -d "$SERIES" ] || die "no series directory $SERIES (XEN_SERIES=none builds upstream)"
    for p in "$SERIES"/*.patch; do [ -e "$p" ] && series+=("$p"); done
fi
suffix=-$XEN_VERSION
[ $XEN_ARCH = arm64 ] && suffix=$suffix-arm64
[ "$XEN_DEBUG" = y ] && suffix=$suffix-debug
[ "$SERIES" = none ] && suffix=$suffix-upstream
tree_add_extras
TREE=$HV/tree$suffix
OUT=$HV/out$suffix
if [ "$CMD" = out ]; then
    echo "$OUT"
    exit 0
fi

# --- the build chroot (x86_64) ----------------------------------------------
MOUNTS=()
unmount_all() {
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" || true
    done
    MOUNTS=()
}
trap unmount_all EXIT
mount_in() { # mount_in proc|bind SRC DIR-IN-CHROOT
    local dir=$CH$3
    mkdir -p "$dir"
    mountpoint -q "$dir" && return 0
    if [ "$1" = bind ]; then mount --bind "$2" "$dir"; else mount -t "$1" "$2" "$dir"; fi
    MOUNTS+=("$dir")
}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
host_install() { # host_install PKG...: what this machine lacks, with its apt
    local missing=() p
    for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$' || missing+=("$p"); done
    [ ${#missing[@]} = 0 ] && return 0
    log "installing on this machine: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -y -q install \
        --no-install-recommends "${missing[@]}" >/dev/null ||
        { as_root apt-get -o DPkg::Lock::Timeout=900 -q update >/dev/null &&
            as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -y -q install \
                --no-install-recommends "${missing[@]}" >/dev/null; }
}

make_chroot() {
    local t0 mirror
    [ "$(id -u)" = 0 ] || die "the build chroot needs root"
    mkdir -p "$XEN_CACHE"
    exec 8>"$XEN_CACHE/.chroot.lock"
    flock 8 # one user of the chroot at a time (mounts, apt, 2 cores)
    if [ ! -f "$CH/.debootstrap-done" ]; then
        host_install debootstrap debian-archive-keyring
        mirror=${MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
        [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
            /etc/apt/sources.list 2>/dev/null || true)
        [ -n "$mirror" ] || die "no Debian mirror in the machine's apt configuration; set MIRROR"
        t0=$(date +%s)
        rm -rf "$CH"
        "${NICE[@]}" debootstrap --variant=minbase trixie "$CH" "$mirror" >"$XEN_CACHE/debootstrap.log" 2>&1 ||
            { tail -20 "$XEN_CACHE/debootstrap.log" >&2; die "debootstrap trixie failed"; }
        touch "$CH/.debootstrap-done"
        log "debootstrap trixie: $(($(date +%s) - t0)) s"
    fi
    # shellcheck disable=SC2086
    if [ "$(cat "$CH/.xenstats-packages" 2>/dev/null)" != "$(echo $BUILD_DEPS)" ]; then
        t0=$(date +%s)
        mount_in proc proc /proc
        # shellcheck disable=SC2086
        chroot "$CH" env DEBIAN_FRONTEND=noninteractive "${NICE[@]}" apt-get -q -y install --no-install-recommends \
            $BUILD_DEPS >"$XEN_CACHE/chroot-apt.log" 2>&1 ||
            { chroot "$CH" apt-get -q update >>"$XEN_CACHE/chroot-apt.log" 2>&1 &&
                chroot "$CH" env DEBIAN_FRONTEND=noninteractive apt-get -q -y install --no-install-recommends \
                    $BUILD_DEPS >>"$XEN_CACHE/chroot-apt.log" 2>&1; } ||
            { tail -20 "$XEN_CACHE/chroot-apt.log" >&2; die "installing the build dependencies failed"; }
        chroot "$CH" apt-get clean
        unmount_all
        echo $BUILD_DEPS >"$CH/.xenstats-packages"
        log "build dependencies installed in the chroot: $(($(date +%s) - t0)) s"
    fi
    mount_in proc proc /proc
    mount_in bind "$REPO" /src
    mkdir -p "$HV" "$XEN_CACHE/ccache"
    mount_in bind "$HV" /hv
    mount_in bind "$XEN_CACHE/ccache" /ccache
}

if [ "$CMD" = chroot ]; then
    make_chroot
    echo "$CH"
    exit 0
fi
if [ "$CMD" = exec ]; then
    [ $# -gt 0 ] || die "exec: no command"
    make_chroot
    rc=0
    chroot "$CH" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@" || rc=$?
    exit $rc
fi

# xenstats for a dom0 running the tree's tools: linked against the tree's
# libraries (libxenctrl's soname is the release's), built with meson in a
# copy of the build chroot that has xenstats' build dependencies too, so
# that the Xen build chroot itself stays as Xen's build needs it
XS_DEPS="meson ninja-build pkgconf libjson-c-dev libmicrohttpd-dev libncurses-dev zlib1g-dev libyaml-dev libcrypt-dev
libgnutls28-dev"
if [ "$CMD" = xenstats ]; then
    [ $XEN_ARCH = x86_64 ] || die "xenstats: x86_64 trees only"
    [ -x "$OUT/dist/usr/sbin/xl" ] || die "no tools in $OUT/dist: build the tree first"
    [ -d "$OUT/dist/usr/lib/pkgconfig" ] || die "$OUT/dist has no usr/lib/pkgconfig: build the tree again"
    XS=$CH-xenstats
    mkdir -p "$XEN_CACHE"
    exec 7>"$XEN_CACHE/.xenstats-root.lock"
    flock 7
    # shellcheck disable=SC2086
    if [ "$(cat "$XS/.xenstats-packages" 2>/dev/null)" != "$(echo $XS_DEPS)" ]; then
        t0=$(date +%s)
        make_chroot
        unmount_all
        if findmnt -rn -o TARGET | grep -q "^$CH/"; then die "something is mounted in $CH: not copying it"; fi
        rm -rf "$XS" "$XS.tmp"
        cp -a "$CH" "$XS.tmp"
        exec 8>&- # the build chroot is free again
        mount --bind /proc "$XS.tmp/proc" && MOUNTS+=("$XS.tmp/proc")
        # shellcheck disable=SC2086
        { chroot "$XS.tmp" apt-get -q update && chroot "$XS.tmp" env DEBIAN_FRONTEND=noninteractive \
            "${NICE[@]}" apt-get -q -y install --no-install-recommends $XS_DEPS; } >"$XEN_CACHE/xenstats-apt.log" 2>&1 ||
            { tail -20 "$XEN_CACHE/xenstats-apt.log" >&2; die "installing xenstats' build dependencies failed"; }
        chroot "$XS.tmp" apt-get clean
        unmount_all
        echo $XS_DEPS >"$XS.tmp/.xenstats-packages"
        mv "$XS.tmp" "$XS"
        log "xenstats build root $XS: $(($(date +%s) - t0)) s"
    fi
    # the tree's tools where its .pc files say, then the build
    XT=/opt/xen-tree$suffix
    rm -rf "$XS$XT"
    mkdir -p "$XS$XT"
    cp -a "$OUT/dist/usr" "$XS$XT/"
    sed -i -E "s#^(prefix|exec_prefix|includedir|libdir)=/usr([/]|\$)#\1=$XT/usr\2#" "$XS$XT"/usr/lib/pkgconfig/*.pc
    grep -q "^libdir=$XT/usr/lib\$" "$XS$XT/usr/lib/pkgconfig/xencontrol.pc" || die "no libdir=/usr/lib in the tree's xencontrol.pc"
    for d in proc src hv; do mkdir -p "$XS/$d"; done
    mount --bind /proc "$XS/proc" && MOUNTS+=("$XS/proc")
    mount --bind "$REPO" "$XS/src" && MOUNTS+=("$XS/src")
    mkdir -p "$HV"
    mount --bind "$HV" "$XS/hv" && MOUNTS+=("$XS/hv")
    XB=/hv/${OUT#"$HV"/}/xenstats-build
    t0=$(date +%s)
    chroot "$XS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        PKG_CONFIG_PATH=$XT/usr/lib/pkgconfig CFLAGS="-I$XT/usr/include" LDFLAGS="-Wl,-rpath-link,$XT/usr/lib" \
        "${NICE[@]}" sh -c \
        "{ [ -f $XB/build.ninja ] || { rm -rf $XB && meson setup $XB /src -Dtests=false --buildtype=debugoptimized; }; } &&
         ninja -j$JOBS -C $XB xenstats xenstats-agent xenstats-top" >"$OUT/xenstats-build.log" 2>&1 ||
        { tail -30 "$OUT/xenstats-build.log" >&2; die "xenstats build against $NAME's tools failed"; }
    log "xenstats against $NAME's tools: $(($(date +%s) - t0)) s ($XS)"
    echo "$OUT/xenstats-build/xenstats"
    exit 0
fi

# --- build ------------------------------------------------------------------
mkdir -p "$HV/src" "$OUT"
exec 9>"$HV/.tree$suffix.lock"
flock 9 # one build of a tree at a time
tree_unpack "$XEN_SRC_DIR/$ARCHIVE" "$HV/src/$NAME"
tree_copy "$HV/src/$NAME" "$TREE" "$NAME"
tree_apply "$TREE" "${series[@]+"${series[@]}"}"
symbols=$(tree_kconfig_symbols "${series[@]+"${series[@]}"}")
: >"$OUT/times.txt"
timed() { # timed WHAT SECONDS
    printf '%s %s %ss\n' "$(date -u +%FT%TZ)" "$1" "$2" >>"$OUT/times.txt"
    log "$1: $2 s"
}
no_warnings() { # no_warnings LOG
    if grep -E '(^|[^-])warning:' "$1" >&2; then die "warnings in $1"; fi
}
config_tail() { # the series' Kconfig options, shadow paging (x86), debug
    local s
    for s in $symbols; do sed -i "/^CONFIG_$s=/d; /^# CONFIG_$s is not set/d" xen/.config; echo "CONFIG_$s=y" >>xen/.config; done
    if [ "$XEN_DEBUG" = y ]; then
        sed -i '/^CONFIG_DEBUG=/d; /^# CONFIG_DEBUG is not set/d' xen/.config
        echo CONFIG_DEBUG=y >>xen/.config
    fi
}
config_check() {
    local s
    for s in $symbols; do
        grep -q "^CONFIG_$s=y" xen/.config || die "CONFIG_$s (added by the series) is not on after olddefconfig"
    done
    if [ "$XEN_DEBUG" = y ]; then grep -q '^CONFIG_DEBUG=y' xen/.config || die "CONFIG_DEBUG is not on"; fi
    grep -E "^CONFIG_(DEBUG|SHADOW_PAGING$(for s in $symbols; do printf '|%s' "$s"; done))[= ]" xen/.config >"$OUT/config" || true
}
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime CCACHE_NOHASHDIR=1
unset CFLAGS CXXFLAGS CPPFLAGS LDFLAGS
export WGET=/bin/false GIT=/bin/false # as debian/rules: nothing is fetched

if [ $XEN_ARCH = arm64 ]; then
    host_install gcc-aarch64-linux-gnu make bison flex python3 xz-utils
    MAKE_ARGS=(XEN_TARGET_ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
    if [ "${NO_CCACHE:-0}" != 1 ] && command -v ccache >/dev/null; then
        export CCACHE_DIR=$XEN_CACHE/ccache-host CCACHE_BASEDIR=$TREE
        MAKE_ARGS+=("CC=ccache aarch64-linux-gnu-gcc")
    fi
    cd "$TREE"
    want="$XEN_DEBUG $symbols"
    if [ ! -f xen/.config ] || [ "$(cat xen/.xenstats-config 2>/dev/null)" != "$want" ]; then
        make -C xen "${MAKE_ARGS[@]}" defconfig >/dev/null
        config_tail
        make -C xen "${MAKE_ARGS[@]}" olddefconfig >/dev/null
        echo "$want" >xen/.xenstats-config
    fi
    config_check
    t0=$(date +%s)
    log "cross-building $NAME for arm64 (debug=$XEN_DEBUG, ${#series[@]} patches, options: ${symbols:-none}) in $TREE"
    "${NICE[@]}" make -C xen -j"$JOBS" "${MAKE_ARGS[@]}" >"$OUT/build.log" 2>&1 ||
        { grep -E 'error|Error' "$OUT/build.log" | head -40 >&2; die "build failed; log in $OUT/build.log"; }
    timed "hypervisor $NAME arm64 debug=$XEN_DEBUG" $(($(date +%s) - t0))
    no_warnings "$OUT/build.log"
    cp xen/xen xen/xen-syms "$OUT/"
    log "built, no warnings: $OUT/xen"
    echo "$OUT/xen"
    exit 0
fi

make_chroot
IN_TREE=/hv/${TREE#"$HV"/}
IN_OUT=/hv/${OUT#"$HV"/}
in_chroot() { # in_chroot LOG CMD: CMD (sh) in the tree, in the chroot, through ccache
    local lg=$1 cc=()
    shift
    [ "${NO_CCACHE:-0}" = 1 ] && cc=(CCACHE_DISABLE=1)
    chroot "$CH" env -i PATH=/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        CCACHE_DIR=/ccache CCACHE_BASEDIR="$IN_TREE" CCACHE_SLOPPINESS="$CCACHE_SLOPPINESS" CCACHE_NOHASHDIR=1 \
        "${cc[@]+"${cc[@]}"}" WGET=/bin/false GIT=/bin/false \
        "${NICE[@]}" sh -c "cd $IN_TREE && $*" >"$lg" 2>&1
}

# Debian 13's hypervisor configuration, from its .deb (the chroot's apt)
CONFIG=$HV/debian-4.20.config
if [ ! -s "$CONFIG" ]; then
    mkdir -p "$HV/debs" && chmod 777 "$HV/debs" # apt-get download runs as _apt
    chroot "$CH" sh -c "cd /hv/debs && apt-get -q download xen-hypervisor-4.20-amd64" >/dev/null ||
        die "cannot download xen-hypervisor-4.20-amd64 in the chroot"
    dpkg-deb --fsys-tarfile "$(ls "$HV"/debs/xen-hypervisor-4.20-amd64_*.deb | head -1)" |
        tar -xO ./boot/xen-4.20-amd64.config >"$CONFIG.tmp"
    grep -q '^CONFIG_X86_64=y' "$CONFIG.tmp" || die "no hypervisor configuration in xen-hypervisor-4.20-amd64"
    mv "$CONFIG.tmp" "$CONFIG"
fi
cd "$TREE"
want="$XEN_DEBUG $symbols $(sha256sum <"$CONFIG")"
if [ ! -f xen/.config ] || [ "$(cat xen/.xenstats-config 2>/dev/null)" != "$want" ]; then
    cp "$CONFIG" xen/.config
    # shadow paging: a PV guest's log-dirty mode (xl migrate), which Debian
    # builds without (as xen/build-hypervisor.sh)
    sed -i '/CONFIG_SHADOW_PAGING/d' xen/.config
    echo CONFIG_SHADOW_PAGING=y >>xen/.config
    config_tail
    in_chroot "$OUT/olddefconfig.log" make -C xen olddefconfig || { cat "$OUT/olddefconfig.log" >&2; die "olddefconfig failed"; }
    echo "$want" >xen/.xenstats-config
fi
config_check

t0=$(date +%s)
log "building the hypervisor of $NAME (debug=$XEN_DEBUG, ${#series[@]} patches, options: ${symbols:-none}) in $TREE"
in_chroot "$OUT/build.log" make -C xen -j"$JOBS" XEN_BUILD_PE=n ||
    { grep -E 'error|Error' "$OUT/build.log" | head -40 >&2; die "hypervisor build failed; log in $OUT/build.log"; }
timed "hypervisor $NAME x86_64 debug=$XEN_DEBUG" $(($(date +%s) - t0))
no_warnings "$OUT/build.log"
cp xen/xen xen/xen.gz xen/xen-syms "$OUT/"

if [ "$TOOLS" = 1 ]; then
    # the dom0 tools, without anything that downloads (QEMU, firmware,
    # stubdoms), OCaml, Go, pygrub or the docs; --disable-xen: the
    # hypervisor is built above, with its own configuration
    flags="--prefix=/usr --disable-xen --disable-docs --disable-stubdom --with-system-qemu=/usr/bin/qemu-system-i386
        --disable-seabios --disable-ipxe --disable-rombios --disable-ovmf --disable-ocamltools --disable-golang
        --disable-pygrub --disable-pvshim --disable-xsmpolicy --with-xenstored=xenstored"
    flags=$(echo $flags)
    if [ ! -f config/Tools.mk ] || [ "$(cat .xenstats-configure 2>/dev/null)" != "$flags" ]; then
        t0=$(date +%s)
        in_chroot "$OUT/tools-configure.log" ./configure "$flags" ||
            { tail -30 "$OUT/tools-configure.log" >&2; die "tools configure failed"; }
        echo "$flags" >.xenstats-configure
        timed "tools configure $NAME" $(($(date +%s) - t0))
    fi
    # what a dom0 runs, and the tools/tests programs the series adds
    dirs="libs xenstored xs-clients console helpers xl xentop hotplug examples"
    tests=$(cat "${series[@]+"${series[@]}"}" /dev/null | sed -n 's|^+++ b/tools/tests/\([^/]*\)/.*|\1|p' | sort -u)
    for t in $tests; do dirs="$dirs tests/$t"; done
    build_cmd="make -j$JOBS -C tools/include"
    for d in $dirs; do build_cmd="$build_cmd && make -j$JOBS -C tools/$d"; done
    t0=$(date +%s)
    log "building the tools of $NAME: $dirs"
    in_chroot "$OUT/tools-build.log" "$build_cmd" ||
        { grep -E 'error|Error' "$OUT/tools-build.log" | head -40 >&2; die "tools build failed; log in $OUT/tools-build.log"; }
    timed "tools $NAME" $(($(date +%s) - t0))
    no_warnings "$OUT/tools-build.log"
    rm -rf "$OUT/dist"
    # each directory's install puts its .pc into usr/lib/pkgconfig, which
    # no install makes: without it the first one became a file of that name
    mkdir -p "$OUT/dist/usr/lib/pkgconfig"
    inst_cmd="make -C tools/include install DESTDIR=$IN_OUT/dist" # Xen's public headers
    for d in $dirs; do
        case $d in
        tests/*) ;; # not installed upstream: copied below
        *) inst_cmd="$inst_cmd && make -C tools/$d install DESTDIR=$IN_OUT/dist" ;;
        esac
    done
    in_chroot "$OUT/tools-install.log" "$inst_cmd" || { tail -30 "$OUT/tools-install.log" >&2; die "tools install failed"; }
    for t in $tests; do
        mkdir -p "$OUT/dist/usr/lib/xen/tests"
        find "tools/tests/$t" -maxdepth 1 -type f -perm -u+x -exec sh -c \
            'head -c4 "$1" | grep -q ELF && cp "$1" "$2/"' sh {} "$OUT/dist/usr/lib/xen/tests" \;
    done
    for f in usr/sbin/xl usr/sbin/xenstored usr/sbin/xenconsoled usr/lib/xen/bin/xen-init-dom0 usr/bin/xenstore; do
        [ -x "$OUT/dist/$f" ] || die "the tools' install lacks $f"
    done
    log "tools installed in $OUT/dist ($(du -sm "$OUT/dist" | cut -f1) MB; tests: $(ls "$OUT/dist/usr/lib/xen/tests" 2>/dev/null | tr '\n' ' '))"
fi
if [ "${NO_CCACHE:-0}" != 1 ]; then
    chroot "$CH" env CCACHE_DIR=/ccache ccache -s 2>/dev/null | grep -Ei '^ *(hits|misses)' | tr -s ' ' | sed 's/^/[xen-tree] ccache: /' >&2 || true
fi
log "built, no warnings: $OUT/xen"
echo "$OUT/xen"
