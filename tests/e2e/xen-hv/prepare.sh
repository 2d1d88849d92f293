#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Host packages and guest payload for booting the patched hypervisor under
# QEMU (TCG): qemu-system-x86, busybox-static, cpio, libxen-dev through
# apt-get install; the Debian kernel, xen-utils-4.17, xen-utils-common and
# xenstore-utils only downloaded and extracted into $WORK/pkgroot (no
# maintainer scripts run on the host).  Idempotent.
#
#   WORK   work directory (default <repo>/build-xen-hv/e2e, git-ignored)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
WORK=${WORK:-$REPO/build-xen-hv/e2e}
APT=(apt-get -o DPkg::Lock::Timeout=900 -y)
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$WORK"

need=()
for t in qemu-system-x86_64:qemu-system-x86 cpio:cpio gcc:gcc; do
    command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
[ -x /bin/busybox ] && /bin/busybox --list | grep -qx taskset || need+=(busybox-static)
[ -f /usr/include/xenforeignmemory.h ] || need+=(libxen-dev)
if [ ${#need[@]} -gt 0 ]; then
    "${APT[@]}" install --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -f "$WORK/pkgroot/.done" ]; then
    kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
    mkdir -p "$WORK/debs" "$WORK/pkgroot"
    chmod 777 "$WORK/debs"
    (cd "$WORK/debs" && apt-get -o DPkg::Lock::Timeout=900 download \
        xen-utils-4.17 xen-utils-common xenstore-utils xen-hypervisor-4.17-amd64 "$kpkg" >/dev/null)
    for d in "$WORK"/debs/*.deb; do dpkg-deb -x "$d" "$WORK/pkgroot"; done
    echo "$kpkg" >"$WORK/pkgroot/.done"
fi
echo "$WORK/pkgroot ready (kernel package $(cat "$WORK/pkgroot/.done"))"
