#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make kmod` / `make kmod-check`: build kmod/ against Debian's
# linux-headers for the kernel the e2e domU boots (the one behind the
# linux-image-amd64 metapackage, resolved as tests/e2e/xen/install.sh does
# and cached with it), installing the headers through apt when missing.
#   scripts/kmod-build.sh [all|check|clean|checkpatch]
# checkpatch: the kernel's scripts/checkpatch.pl --strict, taken from
# Debian's linux-source package of the same kernel (apt-get download, cached).
# KMOD_ARCH=arm64: against Debian 12's arm64 headers for the arm64 e2e
# guest's kernel, cross-compiled (scripts/cross/arm64.sh kernel-headers);
# the module objects are left in kmod/ as for amd64.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${KMOD_ARCH:-amd64}" = arm64 ] && [ "${1:-all}" != checkpatch ]; then
    if [ "${1:-all}" = check ] && ! command -v sparse >/dev/null; then
        apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends sparse >/dev/null
    fi
    KDIR=$("$ROOT/scripts/cross/arm64.sh" kernel-headers)
    exec make -C "$ROOT/kmod" KDIR="$KDIR" CROSS_COMPILE=aarch64-linux-gnu- "${1:-all}"
fi
E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
CACHE=$E2E_DIR/cache
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ ! -s "$CACHE/kernel-package" ]; then
    mkdir -p "$CACHE"
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}' \
        >"$CACHE/kernel-package"
fi
KPKG=$(cat "$CACHE/kernel-package")
[ -n "$KPKG" ] || { echo "kmod: no linux-image-amd64 candidate (apt-get update?)" >&2; exit 1; }
KVER=${KPKG#linux-image-}
HPKG=linux-headers-$KVER
if ! dpkg-query -W -f='${Status}' "$HPKG" 2>/dev/null | grep -q "install ok installed"; then
    echo "kmod: installing $HPKG"
    $SUDO apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends "$HPKG" >/dev/null || {
        $SUDO apt-get -o DPkg::Lock::Timeout=600 -y -q update >/dev/null
        $SUDO apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends "$HPKG" >/dev/null
    }
fi
if [ "${1:-all}" = check ] && ! command -v sparse >/dev/null; then
    $SUDO apt-get -o DPkg::Lock::Timeout=600 -y -q install --no-install-recommends sparse >/dev/null
fi
if [ "${1:-all}" = checkpatch ]; then
    SRC=linux-source-$(echo "$KVER" | cut -d. -f1,2)
    CP=$CACHE/checkpatch/scripts/checkpatch.pl
    if [ ! -f "$CP" ]; then
        mkdir -p "$CACHE/checkpatch/deb"
        chmod 777 "$CACHE/checkpatch/deb"
        (cd "$CACHE/checkpatch/deb" && apt-get -o DPkg::Lock::Timeout=600 -q download "$SRC" >/dev/null)
        dpkg-deb --fsys-tarfile "$CACHE"/checkpatch/deb/"$SRC"_*.deb |
            tar -xO "./usr/src/$SRC.tar.xz" |
            tar -xJ -C "$CACHE/checkpatch" --strip-components=1 \
                "$SRC/scripts/checkpatch.pl" "$SRC/scripts/spelling.txt" "$SRC/scripts/const_structs.checkpatch"
        rm -rf "$CACHE/checkpatch/deb"
    fi
    cd "$ROOT/kmod"
    # CamelCase: the kernel's own enum xenbus_state
    # shellcheck disable=SC2046 # the sources, not kbuild's generated .mod.c
    exec perl "$CP" --no-tree --strict --terse --ignore CAMELCASE -f \
        $(find . -name '*.[ch]' ! -name '*.mod.c' | sort)
fi
exec make -C "$ROOT/kmod" KDIR="/usr/src/linux-headers-$KVER" "${1:-all}"
