#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian 12's arm64 packages for cross-building xenstats on an x86-64 host
# and for booting it under QEMU, fetched with a private apt configuration
# (its own sources list, lists, cache and an empty dpkg status) that never
# reads or changes the machine's /etc/apt or its dpkg database.  Nothing is
# installed and nothing runs: the .debs are only unpacked (dpkg-deb -x).
#   scripts/cross/arm64.sh sysroot     the build dependencies' closure
#                                      (libxen-dev, json-c, libmicrohttpd,
#                                      ncurses, gnutls, yaml, zlib, libcrypt,
#                                      cmocka, libc6-dev), unpacked; prints
#                                      the sysroot's path
#   scripts/cross/arm64.sh cross-file  the sysroot, then a meson cross file
#                                      for it; prints the file's path
#   scripts/cross/arm64.sh guest       what the arm64 end-to-end test boots:
#                                      Xen, its tools, the kernel behind
#                                      linux-image-arm64, busybox-static,
#                                      ethtool and their libraries; prints
#                                      the tree's path
#   scripts/cross/arm64.sh kernel-headers
#                                      Debian's arm64 linux-headers of the
#                                      guest's kernel, for kmod/; prints
#                                      the build directory
#   scripts/cross/arm64.sh build DIR [MESON OPTIONS...]
#                                      meson setup (once) and ninja in DIR
# Everything is kept in $XENSTATS_CACHE/arm64-bookworm (default
# ~/.cache/xenstats), outside the clone, and reused while the packages'
# versions stay the same; a fresh machine spends about a minute on it.
# Host packages: gcc-aarch64-linux-gnu (installed when missing), meson,
# ninja-build, pkgconf.  The mirror is the one the machine's apt uses
# (or MIRROR, SECURITY_MIRROR).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SUITE=bookworm
MA=aarch64-linux-gnu
CACHE=${XENSTATS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xenstats}/arm64-$SUITE
log() { printf 'cross-arm64: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The build dependencies of debian/control, for arm64
SYSROOT_SEEDS="libc6-dev linux-libc-dev libxen-dev libjson-c-dev libmicrohttpd-dev libncurses-dev
libgnutls28-dev libyaml-dev libcrypt-dev zlib1g-dev libcmocka-dev systemd bash-completion"
# What the end-to-end test's dom0 and domU run (the kernel and the
# hypervisor are resolved from their metapackages)
GUEST_SEEDS="xen-utils-common xenstore-utils busybox-static ethtool libgcc-s1 libc6"

mirrors() {
    local src=/etc/apt/sources.list.d/debian.sources
    if [ -z "${MIRROR:-}" ]; then
        MIRROR=$(awk '/^URIs:/ {print $2; exit}' "$src" 2>/dev/null || true)
        [ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
            /etc/apt/sources.list 2>/dev/null || true)
    fi
    [ -n "$MIRROR" ] || die "no Debian mirror in the machine's apt configuration: set MIRROR"
    if [ -z "${SECURITY_MIRROR+set}" ]; then
        # the URIs of the stanza whose Suites name a -security suite
        SECURITY_MIRROR=$(awk 'BEGIN {RS = ""} /Suites:[^\n]*-security/ {if (match($0, /URIs: *[^ \n]+/)) {
                s = substr($0, RSTART, RLENGTH); sub(/URIs: */, "", s); print s; exit}}' "$src" 2>/dev/null || true)
        [ -n "$SECURITY_MIRROR" ] || SECURITY_MIRROR=$(awk '$1 == "deb" && /-security/ {for (i = 2; i <= NF; i++)
                if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
    fi
}

APT=$CACHE/apt
apt_setup() {
    local key=/usr/share/keyrings/debian-archive-keyring.gpg
    mkdir -p "$APT/lists/partial" "$APT/archives/partial" "$CACHE/debs"
    [ -f "$APT/status" ] || : >"$APT/status"
    mirrors
    {
        echo "deb [arch=arm64 signed-by=$key] $MIRROR $SUITE main"
        echo "deb [arch=arm64 signed-by=$key] $MIRROR $SUITE-updates main"
        [ -z "$SECURITY_MIRROR" ] || echo "deb [arch=arm64 signed-by=$key] $SECURITY_MIRROR $SUITE-security main"
    } >"$APT/sources.list"
    APT_OPTS=(-o "Dir::Etc::sourcelist=$APT/sources.list" -o Dir::Etc::sourceparts=/dev/null
        -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null
        -o "Dir::State::Lists=$APT/lists" -o "Dir::State::status=$APT/status"
        -o "Dir::Cache=$APT" -o Dir::Cache::archives="$APT/archives"
        -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o Acquire::Languages=none)
    # the lists are refreshed once a day, or when a package is gone
    if [ -z "$(find "$APT/lists" -maxdepth 1 -name .stamp -mmin -1440 2>/dev/null)" ]; then
        apt_update
    fi
}
apt_update() {
    apt-get "${APT_OPTS[@]}" -q update >"$CACHE/apt-update.log" 2>&1 ||
        { tail -20 "$CACHE/apt-update.log" >&2; die "apt-get update (arm64, private) failed"; }
    touch "$APT/lists/.stamp"
}
acache() { apt-cache "${APT_OPTS[@]}" "$@"; }

# closure SEED...: NAME=VERSION of the seeds and of every package their
# Depends and Pre-Depends reach (the first of each alternative), sorted
closure() {
    local -A seen=()
    local level=("$@") next p
    while [ ${#level[@]} -gt 0 ]; do
        for p in "${level[@]}"; do seen[$p]=1; done
        next=()
        for p in $(acache show --no-all-versions "${level[@]}" 2>/dev/null |
            awk '/^(Depends|Pre-Depends):/ {sub(/^[^:]*: /, ""); n = split($0, a, ",");
                 for (i = 1; i <= n; i++) {split(a[i], alt, "|"); p = alt[1];
                     gsub(/\(.*\)|:any|:arm64|:native/, "", p); gsub(/ /, "", p); print p}}' | sort -u); do
            # what a sysroot and a busybox guest never use
            case $p in debconf | debconf-2.0 | perl* | python3* | dpkg | install-info | sensible-utils | \
                ucf | udev | kmod | initramfs-tools* | linux-base | lsb-base | init-system-helpers | \
                iproute2 | bridge-utils | xen-hypervisor-common | mawk | procps | libc-dev-bin | \
                rpcsvc-proto | libc-devtools | libtirpc-common | mount | adduser | systemd-sysv) continue ;;
            esac
            [ -n "${seen[$p]:-}" ] || next+=("$p")
        done
        level=("${next[@]}")
    done
    # shellcheck disable=SC2046  # package names
    acache show --no-all-versions $(printf '%s\n' "${!seen[@]}" | sort) 2>/dev/null |
        awk '/^Package:/ {p = $2} /^Version:/ {print p "=" $2}' | sort -u
}

# deb_of NAME VERSION: the cached .deb (apt writes an epoch's ":" as "%3a")
deb_of() { ls "$CACHE/debs/${1}_${2/:/%3a}_"*.deb 2>/dev/null | head -1; }

# unpack TREE SEED...: the seeds' closure downloaded (what is not cached
# yet) and unpacked into TREE, unless TREE already holds exactly that set
unpack() {
    local tree=$1 list need=() p v
    shift
    # the same seeds, and no newer lists since the tree was made: as it is
    if [ "$(cat "$tree/.seeds" 2>/dev/null)" = "$*" ] && [ "$tree/.packages" -nt "$APT/lists/.stamp" ]; then
        return 0
    fi
    list=$(closure "$@")
    [ -n "$list" ] || die "nothing resolved for: $*"
    for p in "$@"; do
        grep -q "^$p=" <<<"$list" || die "$p: not in $SUITE for arm64 (virtual package?)"
    done
    if [ -f "$tree/.packages" ] && [ "$(cat "$tree/.packages")" = "$list" ]; then
        echo "$*" >"$tree/.seeds"
        touch "$tree/.packages"
        return 0
    fi
    while IFS='=' read -r p v; do
        [ -n "$(deb_of "$p" "$v")" ] || need+=("$p=$v")
    done <<<"$list"
    if [ ${#need[@]} -gt 0 ]; then
        log "downloading ${#need[@]} arm64 packages"
        chmod 777 "$CACHE/debs"   # apt-get download runs as _apt when root
        (cd "$CACHE/debs" && apt-get "${APT_OPTS[@]}" -q download "${need[@]}") >"$CACHE/download.log" 2>&1 || {
            # a version the lists name may be gone from the mirror: once more
            # with fresh lists
            apt_update
            list=$(closure "$@")
            need=()
            while IFS='=' read -r p v; do
                [ -n "$(deb_of "$p" "$v")" ] || need+=("$p=$v")
            done <<<"$list"
            (cd "$CACHE/debs" && apt-get "${APT_OPTS[@]}" -q download "${need[@]}") >"$CACHE/download.log" 2>&1 ||
                { tail -20 "$CACHE/download.log" >&2; die "apt-get download failed"; }
        }
    fi
    log "unpacking $(wc -l <<<"$list") packages into $tree"
    rm -rf "$tree"
    mkdir -p "$tree"
    while IFS='=' read -r p v; do
        dpkg-deb -x "$(deb_of "$p" "$v")" "$tree"
    done <<<"$list"
    # absolute symbolic links (libfoo.so -> /lib/...) point into the tree
    find "$tree" -type l -lname '/*' -print0 | while IFS= read -r -d '' l; do
        ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$tree$(readlink "$l")")" "$l"
    done
    dpkg_db "$tree" "$list"
    echo "$*" >"$tree/.seeds"
    echo "$list" >"$tree/.packages"
}

# dpkg_db TREE LIST: a dpkg database of the unpacked packages in
# TREE/var/lib/dpkg, whose file lists name the files where they are (under
# TREE): dpkg-shlibdeps --admindir and dpkg-query --admindir then find
# which package ships a library of the sysroot, and its shlibs and
# symbols files, as they would on an arm64 machine (scripts/deb.sh)
dpkg_db() {
    local tree=$1 db=$1/var/lib/dpkg p v deb name ctl
    rm -rf "$db"
    mkdir -p "$db/info" "$db/updates"
    echo 1 >"$db/info/format"
    : >"$db/status"
    ctl=$(mktemp -d)
    while IFS='=' read -r p v; do
        deb=$(deb_of "$p" "$v")
        dpkg-deb -f "$deb" | awk '{print} /^Package:/ {print "Status: install ok installed"}' >>"$db/status"
        echo >>"$db/status"
        name=$p
        [ "$(dpkg-deb -f "$deb" Multi-Arch)" != same ] || name=$p:arm64
        dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e '/^$/d' |
            sed "s|^|$tree|" >"$db/info/$name.list"
        rm -rf "${ctl:?}"/*
        dpkg-deb -e "$deb" "$ctl"
        for f in shlibs symbols; do
            [ ! -f "$ctl/$f" ] || cp "$ctl/$f" "$db/info/$name.$f"
        done
    done <<<"$2"
    rm -rf "$ctl"
}

sysroot() {
    apt_setup
    # shellcheck disable=SC2086  # a word list
    unpack "$CACHE/sysroot" $SYSROOT_SEEDS
    echo "$CACHE/sysroot"
}

# The cross file: Debian's cross gcc searches its own C library
# (/usr/aarch64-linux-gnu) before --sysroot, so -isystem, -B (crt*.o) and
# -L put the target's own first, and -rpath-link lets ld follow the
# libraries' DT_NEEDED inside the sysroot.  pkg-config reads only the
# sysroot's .pc files and prefixes their paths with it.
cross_file() {
    local sr file=$CACHE/cross.ini flags
    sr=$(sysroot)
    command -v "$MA-gcc" >/dev/null || {
        log "installing gcc-$MA"
        apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends "gcc-$MA" >/dev/null
    }
    flags="'--sysroot=$sr', '-isystem', '$sr/usr/include/$MA', '-isystem', '$sr/usr/include'"
    cat >"$file.tmp" <<INI
# Generated by scripts/cross/arm64.sh: Debian 12 arm64 packages in a sysroot.
[binaries]
c = '$MA-gcc'
ar = '$MA-gcc-ar'
strip = '$MA-strip'
# (meson 1.0's spelling of pkg-config)
pkgconfig = 'pkg-config'

[built-in options]
c_args = [$flags]
c_link_args = ['--sysroot=$sr', '-B$sr/usr/lib/$MA/', '-L$sr/usr/lib/$MA', '-L$sr/lib/$MA', '-Wl,-rpath-link=$sr/usr/lib/$MA', '-Wl,-rpath-link=$sr/lib/$MA']

[properties]
sys_root = '$sr'
pkg_config_libdir = ['$sr/usr/lib/$MA/pkgconfig', '$sr/usr/share/pkgconfig']

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'aarch64'
endian = 'little'
INI
    mv "$file.tmp" "$file"
    echo "$file"
}

guest() {
    local kpkg hvpkg
    apt_setup
    kpkg=$(acache depends linux-image-arm64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    hvpkg=$(acache depends xen-system-arm64 | awk '/Depends: xen-hypervisor-[0-9]/ {print $2; exit}')
    [ -n "$kpkg" ] && [ -n "$hvpkg" ] || die "no linux-image-arm64 or xen-system-arm64 in $SUITE"
    local xv=${hvpkg#xen-hypervisor-}
    xv=${xv%-arm64}
    # shellcheck disable=SC2086
    unpack "$CACHE/guest" "$hvpkg" "xen-utils-$xv" "$kpkg" $GUEST_SEEDS
    echo "$CACHE/guest"
}

# Debian's arm64 kernel headers for the guest's kernel, for building kmod/
# on this machine: its arm64 linux-headers packages, with the kernel's
# build programs (fixdep, modpost, ...) of this machine's linux-kbuild of
# the same version in place of the arm64 ones they link to
kernel_headers() {
    local kver kbuild tree=$CACHE/kheaders
    apt_setup
    kver=$(acache depends linux-image-arm64 | awk '/Depends: linux-image-[0-9]/ {sub(/^linux-image-/, "", $2); print $2; exit}')
    [ -n "$kver" ] || die "no linux-image-arm64 in $SUITE"
    kbuild=linux-kbuild-$(echo "$kver" | cut -d. -f1,2)
    dpkg-query -W -f='${Status}' "$kbuild" 2>/dev/null | grep -q "install ok installed" ||
        apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends "$kbuild" >/dev/null
    if [ ! -f "$tree/.kver" ] || [ "$(cat "$tree/.kver")" != "$kver" ]; then
        rm -rf "$tree" "$CACHE/kdebs"
        mkdir -p "$tree" "$CACHE/kdebs"
        chmod 777 "$CACHE/kdebs"
        (cd "$CACHE/kdebs" && apt-get "${APT_OPTS[@]}" -q download "linux-headers-$kver" \
            "linux-headers-${kver%-arm64}-common") >"$CACHE/download.log" 2>&1 ||
            { tail -20 "$CACHE/download.log" >&2; die "apt-get download of the headers failed"; }
        for d in "$CACHE"/kdebs/*.deb; do dpkg-deb -x "$d" "$tree"; done
        rm -rf "$CACHE/kdebs"
        sed -i "s|/usr/src/|$tree/usr/src/|" "$tree/usr/src/linux-headers-$kver/Makefile"
        echo "$kver" >"$tree/.kver"
    fi
    mkdir -p "$tree/usr/lib"
    ln -sfn "/usr/lib/$kbuild" "$tree/usr/lib/$kbuild"
    echo "$tree/usr/src/linux-headers-$kver"
}

case ${1:-} in
sysroot) sysroot ;;
kernel-headers) kernel_headers ;;
cross-file) cross_file ;;
guest) guest ;;
build)
    [ $# -ge 2 ] || die "usage: $0 build DIR [MESON OPTIONS...]"
    dir=$2
    shift 2
    cf=$(cross_file)
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$ROOT" --cross-file "$cf" "$@" >&2
    fi
    nice -n "${NICE:-10}" ninja -C "$dir" -j "${JOBS:-2}" >&2
    ;;
-h | --help) sed -n '3,32p' "$0" | sed 's/^# \{0,1\}//' ;;
*) die "usage: $0 sysroot|cross-file|guest|kernel-headers|build DIR [MESON OPTIONS...] (--help)" ;;
esac
