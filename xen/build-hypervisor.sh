#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the Xen 4.17 hypervisor from Debian's source package with the xenstats
# patch series (xen/patches/4.17/) applied.  This is `make xen-hypervisor`.
#
#   1. Debian source through apt: a deb-src twin of the machine's
#      debian.sources, then `apt-get source xen=<pinned version>` (the newest
#      listed version, bookworm-security's, has no downloadable source), which
#      unpacks it and applies Debian's own quilt patches.
#   2. A working copy of it per configuration, with the series applied by
#      `git apply` (no fuzz: the build fails loudly if a patch does not apply).
#      When the series changes, the previously applied one is reversed first,
#      so only the files it touches are rebuilt.
#   3. Debian's configuration (debian/xen-kconfig, CONFIG_DEBUG=n), and only
#      the hypervisor (make -C xen), through ccache when it is installed.
#      Xen builds with -Werror; the log is also checked for warnings.
#   4. xen (multiboot ELF, for QEMU -kernel), xen.gz and xen-syms are copied
#      to $XEN_HV_DIR/out[-debug]/.
#
# Environment:
#   XEN_HV_DIR      work directory (default: <repo>/build-xen-hv, git-ignored)
#   XEN_DEBUG=y     debug hypervisor (assertions on), in its own tree
#   NO_EFI=1        skip linking xen.efi (default 1; QEMU boots xen directly)
#   XEN_HV_EXTRA_PATCHES  more patch directories to apply after the series
#                   (e.g. xen/patches/4.17-measure for the cost measurement);
#                   their trees and outputs get a suffix
#   XEN_DEB_VERSION Debian source version (default 4.17.5+72-g01140da4e8-1)
#   SKIP_APT=1      never call apt (source and tools must already be there)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
HV=${XEN_HV_DIR:-$REPO/build-xen-hv}
SERIES_DIR=$REPO/xen/patches/4.17
DEB_VERSION=${XEN_DEB_VERSION:-4.17.5+72-g01140da4e8-1}
NO_EFI=${NO_EFI:-1}
XEN_DEBUG=${XEN_DEBUG:-n}
APT=(apt-get -o DPkg::Lock::Timeout=900 -y)

log() { printf '[xen-hypervisor] %s\n' "$*" >&2; }
die() { printf '[xen-hypervisor] ERROR: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

mkdir -p "$HV/src"

# --- 1. tools and source --------------------------------------------------
need_pkgs=()
for t in gcc:gcc make:make bison:bison flex:flex python3:python3 \
         dpkg-source:dpkg-dev xz:xz-utils; do
    command -v "${t%%:*}" >/dev/null || need_pkgs+=("${t#*:}")
done
command -v ccache >/dev/null || [ "${NO_CCACHE:-0}" = 1 ] || need_pkgs+=(ccache)
command -v x86_64-linux-gnu-ld >/dev/null || need_pkgs+=(binutils)
dpkg -s libc6-dev >/dev/null 2>&1 || need_pkgs+=(libc6-dev)

SRC=$(ls -d "$HV"/src/xen-4.17*/ 2>/dev/null | head -1 || true)
SRC=${SRC%/}
if [ -z "$SRC" ] || [ ${#need_pkgs[@]} -gt 0 ]; then
    [ "${SKIP_APT:-0}" = 1 ] && die "missing source or tools (${need_pkgs[*]:-source}) and SKIP_APT=1"
    if [ -z "$SRC" ]; then
        list=/etc/apt/sources.list.d/debian-src.sources
        if [ ! -f "$list" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
            log "adding deb-src entries ($list)"
            sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
                as_root tee "$list" >/dev/null
        fi
        for i in 1 2 3 4 5; do
            as_root "${APT[@]}" update >/dev/null && break
            log "apt-get update failed (attempt $i), retrying"; sleep 20
        done
    fi
    if [ ${#need_pkgs[@]} -gt 0 ]; then
        log "installing ${need_pkgs[*]}"
        as_root "${APT[@]}" install --no-install-recommends "${need_pkgs[@]}" >/dev/null
    fi
    if [ -z "$SRC" ]; then
        command -v dpkg-source >/dev/null || as_root "${APT[@]}" install --no-install-recommends dpkg-dev >/dev/null
        log "fetching xen=$DEB_VERSION source"
        (cd "$HV/src" && "${APT[@]}" source "xen=$DEB_VERSION") >"$HV/src/fetch.log" 2>&1 ||
            { tail -20 "$HV/src/fetch.log" >&2; die "apt-get source xen=$DEB_VERSION failed"; }
        SRC=$(ls -d "$HV"/src/xen-4.17*/ | head -1); SRC=${SRC%/}
    fi
fi
[ -f "$SRC/xen/Makefile" ] || die "no Xen source in $SRC"
[ -f "$SRC/debian/xen-kconfig" ] || die "$SRC is not Debian's source (no debian/xen-kconfig)"

# --- 2. working tree and the series ---------------------------------------
series=("$SERIES_DIR"/*.patch)
[ -e "${series[0]}" ] || die "no patches in $SERIES_DIR"
suffix=
[ "$XEN_DEBUG" = y ] && suffix=-debug
for extra in ${XEN_HV_EXTRA_PATCHES:-}; do
    case $extra in /*) ;; *) extra=$REPO/$extra ;; esac
    [ -d "$extra" ] || die "no patch directory $extra"
    series+=("$extra"/*.patch)
    suffix=$suffix-$(basename "$extra")
done
TREE=$HV/tree$suffix
OUT=$HV/out$suffix
APPLIED=$TREE/.xenstats-applied   # copies of the patches applied, in order

if [ ! -d "$TREE" ]; then
    log "copying $(basename "$SRC") to $TREE"
    cp -a "$SRC" "$TREE.tmp"
    mv "$TREE.tmp" "$TREE"
fi
cd "$TREE"
# The tree may sit inside another git work tree (this repository's): git
# apply would then take paths relative to that repository's top and silently
# skip them.  Make it treat the tree as a plain directory.
export GIT_CEILING_DIRECTORIES=$(dirname "$TREE")

same=1
if [ -d "$APPLIED" ]; then
    mapfile -t old < <(ls "$APPLIED" | sort)
    if [ ${#old[@]} -ne ${#series[@]} ]; then
        same=0
    else
        for i in "${!series[@]}"; do
            cmp -s "${series[$i]}" "$APPLIED/${old[$i]}" || { same=0; break; }
        done
    fi
    if [ $same = 0 ]; then
        log "series changed: reversing the one applied before"
        for ((i = ${#old[@]} - 1; i >= 0; i--)); do
            git apply -R "$APPLIED/${old[$i]}" ||
                die "cannot reverse ${old[$i]}; remove $TREE and rerun"
        done
        rm -rf "$APPLIED"
    fi
else
    same=0
fi
if [ $same = 0 ]; then
    mkdir -p "$APPLIED.new"
    n=0
    for p in "${series[@]}"; do
        n=$((n + 1))
        log "applying $(basename "$p")"
        git apply --check "$p" 2>&1 || die "$(basename "$p") does not apply to $(basename "$SRC")"
        git apply "$p"
        cp "$p" "$APPLIED.new/$(printf '%03d' $n)-$(basename "$p")"
    done
    mv "$APPLIED.new" "$APPLIED"
fi
grep -q XENMEM_resource_stats_table xen/include/public/memory.h ||
    die "the series is recorded as applied but xen/include/public/memory.h lacks it"

# --- 3. configure and build ---------------------------------------------
MAKE_ARGS=(XEN_TARGET_ARCH=x86_64 XEN_COMPILE_ARCH=x86_64
           LD=x86_64-linux-gnu-ld)
if command -v ccache >/dev/null && [ "${NO_CCACHE:-0}" != 1 ]; then
    MAKE_ARGS+=("CC=ccache x86_64-linux-gnu-gcc")
    # __DATE__/__TIME__ and the tree's path must not defeat the cache, so
    # that a fresh tree (another checkout, another configuration) hits it.
    export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
    export CCACHE_BASEDIR=$TREE CCACHE_NOHASHDIR=1
else
    MAKE_ARGS+=(CC=x86_64-linux-gnu-gcc)
fi
[ "$NO_EFI" = 1 ] && MAKE_ARGS+=(XEN_BUILD_PE=n)
# As debian/rules: no userspace flags, no downloads.
unset CFLAGS CXXFLAGS CPPFLAGS LDFLAGS
export WGET=/bin/false GIT=/bin/false

if [ ! -f xen/.config ]; then
    cp debian/xen-kconfig xen/.config
    [ "$XEN_DEBUG" = y ] && sed -i 's/^CONFIG_DEBUG=n/CONFIG_DEBUG=y/' xen/.config
    make -C xen olddefconfig "${MAKE_ARGS[@]}" >/dev/null
fi

mkdir -p "$OUT"
start=$(date +%s)
log "building the hypervisor in $TREE (jobs $(nproc))"
if ! make -C xen -j"$(nproc)" "${MAKE_ARGS[@]}" >"$OUT/build.log" 2>&1; then
    grep -E 'error|Error' "$OUT/build.log" | head -40 >&2 || true
    die "build failed; log in $OUT/build.log"
fi
secs=$(($(date +%s) - start))
if grep -E '(^|[^-])warning:' "$OUT/build.log" >&2; then
    die "the build has warnings (log in $OUT/build.log)"
fi

# --- 4. outputs ------------------------------------------------------------
cp xen/xen xen/xen.gz xen/xen-syms "$OUT/"
grep -E 'CONFIG_DEBUG[= ]' xen/.config >"$OUT/config"
log "built in ${secs}s, no warnings: $OUT/xen (${#series[@]} patches)"
echo "$OUT/xen"
