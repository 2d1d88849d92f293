#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make kmod` / `make kmod-check`: build kmod/ against Debian's
# linux-headers for the kernel the e2e domU boots (the one behind the
# linux-image-amd64 metapackage, resolved as tests/e2e/xen/install.sh does
# and cached with it), installing the headers through apt when missing.
#   scripts/kmod-build.sh [all|check|clean]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
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
exec make -C "$ROOT/kmod" KDIR="/usr/src/linux-headers-$KVER" "${1:-all}"
