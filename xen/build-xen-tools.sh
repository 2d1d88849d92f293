#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the dom0 tools of an upstream Xen tree with the tools series
# (xen/patches/tools: libxenstat reads the statistics tables, xentop -v
# shows runstate shares) on top of the hypervisor series, beside the stock
# tools that xen/build-xen-tree.sh builds from the same tree:
#
#   XEN_VERSION=4.22 (default, as xen/build-xen-tree.sh) or master
#   build-xen-hv/tools-tree-<version>/   upstream + hypervisor series +
#                                        tools series (a tree of its own:
#                                        the hypervisor tree keeps the stock
#                                        tools, so both can be booted)
#   <out>/dist-tools/                    their DESTDIR, where <out> is
#                                        `xen/build-xen-tree.sh out` for the
#                                        same XEN_VERSION, XEN_DEBUG and
#                                        XEN_HV_EXTRA_PATCHES (its dist/ has
#                                        the stock tools)
#   <out>/tools-series-build.log, times.txt (appended)
#
# The build runs in the Debian 13 chroot of xen/build-xen-tree.sh, through
# its ccache (/var/cache/xenstats-ci/ccache as root): a tree the other
# script built first leaves a warm cache, so only what the series changes
# is compiled.  NO_CCACHE=1 compiles everything (a cold figure).
#
#   XEN_TOOLS_SERIES  the tools series (default xen/patches/tools)
#   XEN_SERIES        the hypervisor series under it (default
#                     xen/patches/<version>: the public header)
#   JOBS (default 2), NICE (default "nice -n 10")
#   CLEAN=1           make the tree afresh
# Prints the DESTDIR.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
log() { printf '[xen-tools] %s\n' "$*" >&2; }
die() { printf '[xen-tools] ERROR: %s\n' "$*" >&2; exit 1; }
# shellcheck source=xen/lib-tree.sh
. "$REPO/xen/lib-tree.sh"

case ${1:-build} in
-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
build) ;;
*) die "unknown command '$1' (see --help)" ;;
esac

export XEN_VERSION=${XEN_VERSION:-4.22}
XEN_SRC_DIR=${XEN_SRC_DIR:-$REPO/../shared/xen-src}
HV=${XEN_HV_DIR:-$REPO/build-xen-hv}
JOBS=${JOBS:-2}
NICE=${NICE:-nice -n 10}
case $XEN_VERSION in
4.22) ARCHIVE=xen-4.22.0.tar.xz ;;
master)
    ARCHIVE=$(cd "$XEN_SRC_DIR" 2>/dev/null && ls xen-master-*.tar.xz 2>/dev/null | sort | tail -1 || true)
    [ -n "$ARCHIVE" ] || die "no xen-master-*.tar.xz in $XEN_SRC_DIR"
    ;;
*) die "XEN_VERSION must be master or 4.22" ;;
esac
NAME=${ARCHIVE%.tar.xz}
OUT=$("$REPO/xen/build-xen-tree.sh" out)
[ -x "$OUT/dist/usr/sbin/xl" ] || die "no stock tools in $OUT/dist: run xen/build-xen-tree.sh (make xen-tree) first"

series=()
for dir in "${XEN_SERIES:-$REPO/xen/patches/$XEN_VERSION}" "${XEN_TOOLS_SERIES:-$REPO/xen/patches/tools}"; do
    case $dir in /*) ;; *) dir=$REPO/$dir ;; esac
    [ -d "$dir" ] || die "no series directory $dir"
    for p in "$dir"/*.patch; do [ -e "$p" ] && series+=("$p"); done
done
TREE=$HV/tools-tree-$XEN_VERSION
[ "${CLEAN:-0}" = 1 ] && rm -rf "$TREE"
mkdir -p "$HV/src"
exec 9>"$HV/.tools-tree-$XEN_VERSION.lock"
flock 9
tree_unpack "$XEN_SRC_DIR/$ARCHIVE" "$HV/src/$NAME"
tree_copy "$HV/src/$NAME" "$TREE" "$NAME"
tree_apply "$TREE" "${series[@]}"

IN_TREE=/hv/${TREE#"$HV"/}
IN_OUT=/hv/${OUT#"$HV"/}
cc_env="CCACHE_DIR=/ccache CCACHE_BASEDIR=$IN_TREE CCACHE_NOHASHDIR=1"
cc_env="$cc_env CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime"
[ "${NO_CCACHE:-0}" = 1 ] && cc_env="$cc_env CCACHE_DISABLE=1"
in_chroot() { # in_chroot LOG SHELL-COMMAND: in the tree, in the chroot
    local lg=$1
    shift
    XEN_HV_DIR=$HV "$REPO/xen/build-xen-tree.sh" exec env PATH=/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin \
        $cc_env WGET=/bin/false GIT=/bin/false $NICE sh -c "cd $IN_TREE && $*" >"$lg" 2>&1
}
# the configuration xen/build-xen-tree.sh gives the stock tools
flags="--prefix=/usr --disable-xen --disable-docs --disable-stubdom --with-system-qemu=/usr/bin/qemu-system-i386
    --disable-seabios --disable-ipxe --disable-rombios --disable-ovmf --disable-ocamltools --disable-golang
    --disable-pygrub --disable-pvshim --disable-xsmpolicy --with-xenstored=xenstored"
flags=$(echo $flags)
t0=$(date +%s)
if [ ! -f "$TREE/config/Tools.mk" ] || [ "$(cat "$TREE/.xenstats-configure" 2>/dev/null)" != "$flags" ]; then
    in_chroot "$OUT/tools-series-configure.log" ./configure "$flags" ||
        { tail -30 "$OUT/tools-series-configure.log" >&2; die "configure failed"; }
    echo "$flags" >"$TREE/.xenstats-configure"
fi
t1=$(date +%s)
dirs="libs xenstored xs-clients console helpers xl xentop hotplug examples tests/vcpu-stats"
build="make -j$JOBS -C tools/include"
inst="make -C tools/include install DESTDIR=$IN_OUT/dist-tools"
for d in $dirs; do
    build="$build && make -j$JOBS -C tools/$d"
    case $d in tests/*) ;; *) inst="$inst && make -C tools/$d install DESTDIR=$IN_OUT/dist-tools" ;; esac
done
log "building the tools of $NAME with ${#series[@]} patches (ccache: $([ "${NO_CCACHE:-0}" = 1 ] && echo off || echo on)) in $TREE"
in_chroot "$OUT/tools-series-build.log" "$build" ||
    { grep -E 'error|Error' "$OUT/tools-series-build.log" | head -40 >&2; die "build failed; log in $OUT/tools-series-build.log"; }
t2=$(date +%s)
if grep -E '(^|[^-])warning:' "$OUT/tools-series-build.log" >&2; then die "warnings in $OUT/tools-series-build.log"; fi
rm -rf "$OUT/dist-tools"
# each library installs its .pc into PKG_INSTALLDIR without making it: the
# first one would become a file of that name
mkdir -p "$OUT/dist-tools/usr/lib/pkgconfig"
in_chroot "$OUT/tools-series-install.log" "$inst" || { tail -30 "$OUT/tools-series-install.log" >&2; die "install failed"; }
mkdir -p "$OUT/dist-tools/usr/lib/xen/tests"
cp "$TREE/tools/tests/vcpu-stats/test-vcpu-stats" "$OUT/dist-tools/usr/lib/xen/tests/"
t3=$(date +%s)
printf '%s tools-series %s ccache=%s configure=%ss build=%ss install=%ss load=%s\n' "$(date -u +%FT%TZ)" "$NAME" \
    "$([ "${NO_CCACHE:-0}" = 1 ] && echo off || echo on)" $((t1 - t0)) $((t2 - t1)) $((t3 - t2)) \
    "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/times.txt" >&2
# the series is in: libxenstat links libxenforeignmemory, xentop knows -v's shares
readelf -d "$OUT/dist-tools/usr/lib/libxenstat.so" | grep -q 'libxenforeignmemory' ||
    die "the installed libxenstat does not link libxenforeignmemory: is the tools series applied?"
log "tools with the series installed in $OUT/dist-tools"
echo "$OUT/dist-tools"
