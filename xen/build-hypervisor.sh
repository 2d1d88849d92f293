#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build the Xen hypervisor with the xenstats patch series applied: Xen 4.17
# (what Debian 12 ships, 4.17.7-based) or 4.20 (Debian 13's, 4.20.4-based).
# This is `make xen-hypervisor [XEN_VERSION=4.20]`.
#
#   1. Source: the hypervisor parts of upstream RELEASE-4.17.7 or
#      RELEASE-4.20.4 (archives in $XEN_SRC_DIR, checked against its
#      SHA256SUMS before use).  Debian's own source cannot be had through
#      apt for either: Debian 13's is not served, and Debian 12's is 4.17.5,
#      older than the 4.17.7 it ships.  The configuration is the one Debian's
#      hypervisor package ships (boot/xen-<version>-amd64.config of the
#      binary .deb, downloaded with apt: Debian 12's through the machine's
#      apt, Debian 13's inside the chroot of scripts/trixie.sh).
#   2. A working copy of it per configuration, with the series
#      (xen/patches/<version>/) applied by `git apply` (no fuzz: the build
#      fails loudly if a patch does not apply).  When the series changes,
#      the previously applied one is reversed first, so only the files it
#      touches are rebuilt.
#   3. Debian's configuration with CONFIG_SHADOW_PAGING=y (live migration
#      of PV guests), CONFIG_VCPU_STATS=y (the series' statistics tables,
#      off by default) and `make olddefconfig`, and only the
#      hypervisor (make -C xen), through ccache when it is installed.  Xen
#      builds with -Werror; the log is also checked for warnings.
#   4. xen (multiboot ELF, for QEMU -kernel), xen.gz and xen-syms are copied
#      to $XEN_HV_DIR/out[-4.20][-debug]/.
#
# Environment:
#   XEN_VERSION     4.17 (default) or 4.20; 4.22 and master are the whole
#                   tree, hypervisor and tools: xen/build-xen-tree.sh
#   XEN_SRC_DIR     the source archives (default: ../shared/xen-src beside
#                   the repository)
#   XEN_HV_DIR      work directory (default: <repo>/build-xen-hv, git-ignored)
#   XEN_DEBUG=y     debug hypervisor (assertions on), in its own tree
#   NO_EFI=1        skip linking xen.efi (default 1; QEMU boots xen directly)
#   XEN_HV_EXTRA_PATCHES  more patch directories to apply after the series
#                   (e.g. xen/patches/4.20-measure for the cost measurement);
#                   their trees and outputs get a suffix
#   SKIP_APT=1      never call apt (tools and the .deb must already be there)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
HV=${XEN_HV_DIR:-$REPO/build-xen-hv}
XEN_VERSION=${XEN_VERSION:-4.17}
case $XEN_VERSION in
4.17) UPSTREAM=4.17.7 VSUFFIX= ;;
4.20) UPSTREAM=4.20.4 VSUFFIX=-4.20 ;;
# the whole tree, hypervisor and tools, in a Debian 13 chroot
4.22 | master) exec "$REPO/xen/build-xen-tree.sh" ;;
*) echo "[xen-hypervisor] ERROR: XEN_VERSION must be 4.17, 4.20, 4.22 or master" >&2; exit 1 ;;
esac
SERIES_DIR=$REPO/xen/patches/$XEN_VERSION
XEN_SRC_DIR=${XEN_SRC_DIR:-$REPO/../shared/xen-src}
NO_EFI=${NO_EFI:-1}
XEN_DEBUG=${XEN_DEBUG:-n}
APT=(apt-get -o DPkg::Lock::Timeout=900 -y)

log() { printf '[xen-hypervisor] %s\n' "$*" >&2; }
die() { printf '[xen-hypervisor] ERROR: %s\n' "$*" >&2; exit 1; }
# shellcheck source=xen/lib-tree.sh
. "$REPO/xen/lib-tree.sh"

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

mkdir -p "$HV/src" "$HV/debs"

# --- 1. tools, source and Debian's configuration ----------------------------
need_pkgs=()
for t in gcc:gcc make:make bison:bison flex:flex python3:python3 \
         dpkg-deb:dpkg xz:xz-utils; do
    command -v "${t%%:*}" >/dev/null || need_pkgs+=("${t#*:}")
done
command -v ccache >/dev/null || [ "${NO_CCACHE:-0}" = 1 ] || need_pkgs+=(ccache)
command -v x86_64-linux-gnu-ld >/dev/null || need_pkgs+=(binutils)
dpkg -s libc6-dev >/dev/null 2>&1 || need_pkgs+=(libc6-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    [ "${SKIP_APT:-0}" = 1 ] && die "missing tools (${need_pkgs[*]}) and SKIP_APT=1"
    log "installing ${need_pkgs[*]}"
    as_root "${APT[@]}" install --no-install-recommends "${need_pkgs[@]}" >/dev/null ||
        { as_root "${APT[@]}" update >/dev/null && as_root "${APT[@]}" install --no-install-recommends "${need_pkgs[@]}" >/dev/null; }
fi

SRC=$HV/src/xen-$UPSTREAM
tree_unpack "$XEN_SRC_DIR/xen-hypervisor-$UPSTREAM.tar.xz" "$SRC"

# Debian's shipped configuration, from its hypervisor .deb
CONFIG=$HV/debian-$XEN_VERSION.config
if [ ! -s "$CONFIG" ]; then
    pkg=xen-hypervisor-$XEN_VERSION-amd64
    deb=$(ls "$HV/debs/${pkg}_"*.deb 2>/dev/null | head -1 || true)
    if [ -z "$deb" ]; then
        [ "${SKIP_APT:-0}" = 1 ] && die "no $pkg .deb in $HV/debs and SKIP_APT=1"
        chmod 777 "$HV/debs" # apt-get download runs as _apt
        if [ "$XEN_VERSION" = 4.17 ]; then
            (cd "$HV/debs" && apt-get -q download "$pkg" >/dev/null 2>&1) ||
                { as_root "${APT[@]}" update >/dev/null && (cd "$HV/debs" && apt-get -q download "$pkg" >/dev/null); }
        else
            CH=$("$REPO/scripts/trixie.sh" chroot-dir)
            mkdir -p "$CH/debs" && chmod 777 "$CH/debs"
            chroot "$CH" sh -c "cd /debs && apt-get -q download $pkg" >/dev/null
            cp "$CH/debs/${pkg}_"*.deb "$HV/debs/"
        fi
        deb=$(ls "$HV/debs/${pkg}_"*.deb | head -1)
    fi
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "./boot/xen-$XEN_VERSION-amd64.config" >"$CONFIG.tmp"
    grep -q '^CONFIG_X86_64=y' "$CONFIG.tmp" || die "no hypervisor config in $(basename "$deb")"
    mv "$CONFIG.tmp" "$CONFIG"
    log "configuration of $(basename "$deb")"
fi

# --- 2. working tree and the series ---------------------------------------
series=("$SERIES_DIR"/*.patch)
[ -e "${series[0]}" ] || die "no patches in $SERIES_DIR"
suffix=
[ "$XEN_DEBUG" = y ] && suffix=-debug
tree_add_extras
TREE=$HV/tree$VSUFFIX$suffix
OUT=$HV/out$VSUFFIX$suffix
tree_copy "$SRC" "$TREE" "$UPSTREAM"
tree_apply "$TREE" "${series[@]}"
cd "$TREE"
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

# Debian's configuration plus shadow paging: a PV guest's log-dirty mode,
# which `xl migrate` needs (and `xl save` does not), lives in Xen's shadow
# code, and Debian builds without it (XEN_DOMCTL_SHADOW_OP_ENABLE_LOGDIRTY
# then fails with EOPNOTSUPP).  A tree configured before this is configured
# again.
if [ ! -f xen/.config ] || ! grep -q '^CONFIG_SHADOW_PAGING=y' xen/.config ||
   ! grep -q '^CONFIG_VCPU_STATS=y' xen/.config; then
    cp "$CONFIG" xen/.config
    sed -i '/CONFIG_SHADOW_PAGING/d; /CONFIG_VCPU_STATS/d' xen/.config
    echo CONFIG_SHADOW_PAGING=y >>xen/.config
    # The series' feature is a Kconfig option, off by default.
    echo CONFIG_VCPU_STATS=y >>xen/.config
    if [ "$XEN_DEBUG" = y ]; then
        sed -i '/^CONFIG_DEBUG=/d; /^# CONFIG_DEBUG is not set/d' xen/.config
        echo CONFIG_DEBUG=y >>xen/.config
    fi
    make -C xen olddefconfig "${MAKE_ARGS[@]}" >/dev/null
    grep -q '^CONFIG_SHADOW_PAGING=y' xen/.config || die "olddefconfig dropped CONFIG_SHADOW_PAGING"
    grep -q '^CONFIG_VCPU_STATS=y' xen/.config || die "olddefconfig dropped CONFIG_VCPU_STATS"
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
grep -E 'CONFIG_(DEBUG|SHADOW_PAGING|VCPU_STATS)[= ]' xen/.config >"$OUT/config"
log "built in ${secs}s, no warnings: $OUT/xen (${#series[@]} patches)"
echo "$OUT/xen"
