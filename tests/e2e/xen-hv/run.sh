#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boot a Xen hypervisor (default: the patched one `make xen-hypervisor`
# builds) with Debian's kernel as PV dom0 under QEMU (TCG, no KVM), create
# PV domUs and check their vCPU statistics regions from dom0 with
# tests/e2e/vcpustats-check.c (see dom0-init.sh for the sequence).
# Exit 0 iff dom0 finished and no "XT: ... FAIL" line was printed.
#
#   XEN=path       hypervisor (multiboot ELF, default build-xen-hv/out/xen)
#   WORK=dir       work directory (default build-xen-hv/e2e)
#   XENSTATS=path  the xenstats binary to run in dom0 (default: built in
#                  build-e2e/meson, the build `make e2e-xen` boots on stock
#                  Xen, so one binary is proved on both; xenstats-agent and
#                  xenstats-top are taken from beside it; "none" skips it)
#   TIMEOUT=s      QEMU time limit (default 1200, arm64 2400; a run takes
#                  2-5 min, on arm64 10-20)
#   SMP, MEM       QEMU CPUs (default 2) and MiB (default 2048)
#   DOM0_EXTRA=xt_stock  for an unpatched hypervisor: check that the
#                  resource fails cleanly and xenstats falls back
#   XEN_VERSION=4.20  Debian 13's kernel and Xen tools, binaries built in
#                  the Debian 13 chroot; defaults build-xen-hv/out-4.20/xen,
#                  build-xen-hv/e2e-4.20, build-e2e-4.20
#   XEN_VERSION=4.22 or master  a whole tree built by xen/build-xen-tree.sh
#                  (`make xen-tree`): its hypervisor with its OWN tools
#                  (that script's output directory for the same XEN_DEBUG,
#                  XEN_SERIES and XEN_HV_EXTRA_PATCHES), Debian 13's kernel
#                  fetched by the apt of that script's chroot, vcpustats-check
#                  built there against the tree's libraries; the series'
#                  tools/tests programs are run too.  XENSTATS defaults to
#                  none (the project's binary links Debian's 4.20 libraries).
#                  Work directory build-xen-hv/e2e-<version>[-debug...].
#                  XEN_TOOLS_ROOT=DIR takes the tools from another build
#                  of the same tree (a DESTDIR inside build-xen-hv)
#   XENSTATS=tree  (4.22 or master) xenstats built against the tree's
#                  tools (`xen/build-xen-tree.sh xenstats`), so that dom0
#                  runs xenstats' checks too (xenstats vcpu, the agent)
#   XEN_TREE_SYSROOT=DIR  with XENSTATS=path: a Debian 13 root holding the
#                  libraries that binary needs (a copy of the build chroot
#                  with xenstats' build dependencies and the tree's tools)
#   BENCH_VCPUS=N[,M]  vCPUs of the benchmark domUs (default 4,8; one
#                  number: one domU), for a loaded machine
#   DOM0_EXTRA=xt_rewrite [xt_rewrite_seconds=N]  the rewrite test instead
#                  (scripts/rewrite-test.sh)
#   TOOLS_SERIES=1 (4.22 or master) dom0 runs the tools series
#                  (xen/build-xen-tools.sh: <out>/dist-tools) and keeps the
#                  stock xentop and libxenstat in /opt/stock; after the
#                  tree's checks, tools-checks.sh (8 domUs of 4 vCPUs: the
#                  xentop -v shares, libxenstat against getvcpuinfo, batch
#                  output byte for byte, stock tools, libxenstat's time).
#                  With XEN=<a hypervisor without the series> and
#                  DOM0_EXTRA=xt_stock: the patched tools' fallback.
#                  Work directory .../e2e-<version>...-tools.
#                  TOOLS_ONLY=1: those checks alone, not the tree's;
#                  TOOLS_FILL=N: N idle domUs besides the three (default 5);
#                  TOOLS_VCPUS=N: vCPUs a domU (default 4);
#                  TOOLS_V1_LIB=DIR: v1's libxenstat, for the checks
#                  that must fail with it (tools-checks.sh);
#                  TOOLS_TIME_ONLY=1: the domUs, then only the time per
#                  xenstat_get_node(), both libraries, alternating
#   XEN_ARCH=arm64 (XEN_VERSION=4.17)  Xen on Arm under qemu-system-aarch64
#                  (`make xen-hypervisor-e2e-arm64`): the arm64 cross build
#                  of upstream 4.17.7 with xen/patches/4.17 (`make
#                  xen-cross-arm64 XEN_VERSION=4.17`, debug by default:
#                  XEN_DEBUG=n for the release build), Debian 12's arm64
#                  kernel and Xen 4.17 tools in dom0 (as `make e2e-xen
#                  XEN_ARCH=arm64`, build-e2e-arm64/), vcpustats-check,
#                  stats-rewrite, xenstats and the series' tools/tests
#                  checker (test-vcpu-stats, from xen/patches/4.22)
#                  cross-compiled.  After the
#                  checks, the rewrite test with the mapping every dom0 on
#                  Arm gets (writable, no test-only patch).  BENCH_VCPUS
#                  defaults to 4; work directory build-xen-hv/e2e-4.17-arm64
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
export XEN_VERSION=${XEN_VERSION:-4.17}
V=
[ "$XEN_VERSION" = 4.17 ] || V=-$XEN_VERSION
TREE_OUT=
ARM=0
case ${XEN_ARCH:-x86_64} in
arm64 | aarch64)
    ARM=1
    export XEN_ARCH=arm64
    [ "$XEN_VERSION" = 4.17 ] || { echo "XEN_ARCH=arm64: only XEN_VERSION=4.17 (Debian 12's arm64 Xen tools)" >&2; exit 1; }
    ARM_OUT=$(XEN_DEBUG=${XEN_DEBUG:-y} "$REPO/xen/build-xen-tree.sh" out) || exit 1
    V=-4.17-arm64${ARM_OUT##*-arm64}
    XEN=${XEN:-$ARM_OUT/xen}
    BENCH_VCPUS=${BENCH_VCPUS:-4}
    ;;
x86_64 | amd64) ;;
*) echo "XEN_ARCH must be x86_64 or arm64" >&2; exit 1 ;;
esac
case $XEN_VERSION in
4.22 | master)
    TREE_OUT=$("$REPO/xen/build-xen-tree.sh" out) || exit 1
    V=${TREE_OUT##*/out}
    [ "${TOOLS_SERIES:-0}" = 1 ] && V=$V-tools
    ;;
esac
WORK=${WORK:-$REPO/build-xen-hv/e2e$V}
XEN=${XEN:-${TREE_OUT:-$REPO/build-xen-hv/out$V}/xen}
TIMEOUT=${TIMEOUT:-$((1200 + ARM * 1200))}
SMP=${SMP:-2}
MEM=${MEM:-2048}

[ -f "$XEN" ] || { echo "no hypervisor at $XEN (make xen-hypervisor, xen-tree or xen-cross-arm64)" >&2; exit 1; }
B=$WORK/build
rm -rf "$B"; mkdir -p "$B" "$WORK/logs"
if [ $ARM = 1 ]; then
    # Debian 12's arm64 packages and sysroot, shared with `make e2e-xen
    # XEN_ARCH=arm64`; the checkers cross-compiled against that sysroot
    export E2E_DIR=${E2E_DIR:-$REPO/build-e2e-arm64}
    mkdir -p "$E2E_DIR/logs"
    "$REPO/tests/e2e/xen/install.sh" >"$E2E_DIR/logs/install.log" 2>&1 ||
        { tail -30 "$E2E_DIR/logs/install.log"; echo "xen-hypervisor-e2e arm64: install failed" >&2; exit 1; }
    PKGROOT=$E2E_DIR/pkgroot
    export ARM64_SYSROOT=$E2E_DIR/sysroot
    SR=$ARM64_SYSROOT MA=aarch64-linux-gnu
    for c in vcpustats-check stats-rewrite; do
        $MA-gcc --sysroot="$SR" -isystem "$SR/usr/include/$MA" -isystem "$SR/usr/include" -B"$SR/usr/lib/$MA/" \
            -L"$SR/usr/lib/$MA" -L"$SR/lib/$MA" -Wl,-rpath-link="$SR/usr/lib/$MA" -Wl,-rpath-link="$SR/lib/$MA" \
            -O2 -Wall -Wextra -Werror -I"$REPO/include" -o "$B/$c" "$REPO/tests/e2e/$c.c" \
            -lxenctrl -lxenforeignmemory || { echo "cross-compiling $c failed" >&2; exit 1; }
    done
    # the series' tools/tests checker (test-vcpu-stats, the program of
    # xen/patches/4.22's tools/tests patch, unchanged; the 4.17 series has
    # no tools patch) against the patched tree's public headers and
    # Debian 12's arm64 libxenctrl, which lacks xc_domain_getinfo_single()
    # (4.18): xc-compat-4.17.h supplies it
    TT=$B/tools-tests
    mkdir -p "$TT/src" "$TT/inc" "$TT/bin"
    ln -sfn "${ARM_OUT%/*}/tree${ARM_OUT##*/out}/xen/include/public" "$TT/inc/xen"
    TP=$(ls "$REPO"/xen/patches/4.22/*-tools-tests-*.patch)
    # (git apply must not see this repository: inside one it takes the
    # patch's paths from the top and skips those outside the directory)
    (cd "$TT/src" && GIT_CEILING_DIRECTORIES=$TT git apply --include='tools/tests/vcpu-stats/*.c' "$TP") &&
        [ -f "$TT/src/tools/tests/vcpu-stats/test-vcpu-stats.c" ] && [ -f "$TT/inc/xen/vcpu_stats.h" ] || { echo "no tools/tests checker from $TP or no patched headers" >&2; exit 1; }
    COMPAT=()
    grep -q xc_domain_getinfo_single "$SR/usr/include/xenctrl.h" ||
        COMPAT=(-include xenctrl.h -include "$HERE/xc-compat-4.17.h")
    $MA-gcc --sysroot="$SR" -I"$TT/inc" -isystem "$SR/usr/include/$MA" -isystem "$SR/usr/include" -B"$SR/usr/lib/$MA/" \
        -L"$SR/usr/lib/$MA" -L"$SR/lib/$MA" -Wl,-rpath-link="$SR/usr/lib/$MA" -Wl,-rpath-link="$SR/lib/$MA" \
        -O2 -Wall -Wextra -Werror "${COMPAT[@]}" -o "$TT/bin/test-vcpu-stats" \
        "$TT/src/tools/tests/vcpu-stats/test-vcpu-stats.c" -lxenctrl -lxenforeignmemory ||
        { echo "cross-compiling test-vcpu-stats failed" >&2; exit 1; }
    if [ -z "${XENSTATS:-}" ]; then
        MB=$E2E_DIR/meson
        { [ -f "$MB/build.ninja" ] || meson setup "$MB" "$REPO" --cross-file "$("$REPO/scripts/cross/arm64.sh" cross-file)" \
            --buildtype=debugoptimized -Dwerror=true >/dev/null; } &&
            nice -n 10 ninja -C "$MB" -j2 xenstats xenstats-agent xenstats-top >/dev/null ||
            { echo "xenstats arm64 cross build failed" >&2; exit 1; }
        XENSTATS=$MB/xenstats
    fi
elif [ -n "$TREE_OUT" ]; then
    if [ "${TOOLS_SERIES:-0}" = 1 ]; then
        export XEN_TOOLS_ROOT=${XEN_TOOLS_ROOT:-$TREE_OUT/dist-tools}
        [ -x "$XEN_TOOLS_ROOT/usr/sbin/xentop" ] || { echo "no tools series in $XEN_TOOLS_ROOT (xen/build-xen-tools.sh)" >&2; exit 1; }
    fi
    export XEN_TOOLS_ROOT=${XEN_TOOLS_ROOT:-$TREE_OUT/dist}
    [ -x "$XEN_TOOLS_ROOT/usr/sbin/xl" ] || { echo "no tools in $XEN_TOOLS_ROOT (make xen-tree)" >&2; exit 1; }
    for t in qemu-system-x86_64:qemu-system-x86 cpio:cpio busybox:busybox-static; do
        command -v "${t%%:*}" >/dev/null || [ -x "/bin/${t%%:*}" ] || apt-get -o DPkg::Lock::Timeout=600 -y -q install \
            --no-install-recommends "${t#*:}" >/dev/null || { echo "cannot install ${t#*:}" >&2; exit 1; }
    done
    export TRIXIE_ROOT
    TRIXIE_ROOT=$("$REPO/xen/build-xen-tree.sh" chroot) || exit 1
    # XENSTATS=tree: xenstats built against the tree's tools, in a copy of
    # the build chroot with xenstats' build dependencies, which is the
    # Debian 13 root its other libraries come from
    if [ "${XENSTATS:-}" = tree ]; then
        XENSTATS=$("$REPO/xen/build-xen-tree.sh" xenstats) || exit 1
        XEN_TREE_SYSROOT=$TRIXIE_ROOT-xenstats
    fi
    # XENSTATS built elsewhere against the tree's tools (see
    # docs/hypervisor.md): the Debian 13 root its libraries come from
    [ -n "${XEN_TREE_SYSROOT:-}" ] && TRIXIE_ROOT=$XEN_TREE_SYSROOT
    # Debian 13's kernel, through the chroot's apt
    E2E_DIR=${E2E_DIR:-$REPO/build-e2e-tree}
    PKGROOT=$E2E_DIR/pkgroot
    if [ ! -f "$PKGROOT/.complete" ]; then
        mkdir -p "$E2E_DIR/debs" && chmod 777 "$E2E_DIR/debs"
        KPKG=$(chroot "$TRIXIE_ROOT" apt-cache depends linux-image-amd64 2>/dev/null |
            awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
        [ -n "$KPKG" ] || { echo "no linux-image-amd64 candidate in the chroot" >&2; exit 1; }
        D=${E2E_DIR#"$REPO"/}
        case $D in /*) echo "E2E_DIR must be inside the repository for the chroot's apt" >&2; exit 1 ;; esac
        "$REPO/xen/build-xen-tree.sh" exec sh -c "cd /src/$D/debs && apt-get -q download $KPKG" >/dev/null ||
            { echo "downloading $KPKG failed" >&2; exit 1; }
        rm -rf "$PKGROOT"; mkdir -p "$PKGROOT"
        dpkg-deb -x "$(ls "$E2E_DIR/debs/${KPKG}_"*.deb | head -1)" "$PKGROOT"
        touch "$PKGROOT/.complete"
    fi
    # the checker against the tree's own libraries
    HVD=${XEN_HV_DIR:-$REPO/build-xen-hv}
    for d in "$B" "$XEN_TOOLS_ROOT"; do
        case $d in "$HVD"/*) ;; *) echo "$d must be inside $HVD (the chroot sees only that)" >&2; exit 1 ;; esac
    done
    IN=/hv/${XEN_TOOLS_ROOT#"$HVD"/}
    IB=/hv/${B#"$HVD"/}
    for c in vcpustats-check stats-rewrite; do
        "$REPO/xen/build-xen-tree.sh" exec gcc -O2 -Wall -Wextra -Werror -I/src/include -I"$IN/usr/include" \
            -o "$IB/$c" "/src/tests/e2e/$c.c" -L"$IN/usr/lib" \
            -Wl,-rpath-link,"$IN/usr/lib" -lxenctrl -lxenforeignmemory || exit 1
    done
    if [ "${TOOLS_SERIES:-0}" = 1 ]; then
        # libxenstat's figures against getvcpuinfo, and its time per call
        # (-DTIME_ONLY: today's API only, so the stock library runs it too)
        for c in xenstat-check:-DXS_ALL xenstat-time:-DTIME_ONLY; do
            "$REPO/xen/build-xen-tree.sh" exec gcc -O2 -Wall -Wextra -Werror "${c#*:}" -I"$IN/usr/include" \
                -o "$IB/${c%%:*}" /src/tests/e2e/xenstat-check.c -L"$IN/usr/lib" \
                -Wl,-rpath-link,"$IN/usr/lib" -lxenstat -lxenctrl || exit 1
        done
    fi
    XENSTATS=${XENSTATS:-none}
    # the checks only a tree's series passes (a vCPU set online after
    # publication, Domain-0's own records, its tools/tests checker)
    case " ${DOM0_EXTRA:-} " in *" xt_rewrite "*) ;; *) DOM0_EXTRA="${DOM0_EXTRA:-} xt_tree" ;; esac
else
# Debian's packages (host: QEMU, busybox, cpio; guest: kernel, Xen's tools),
# shared with `make e2e-xen`.
export E2E_DIR=${E2E_DIR:-$REPO/build-e2e$V}
mkdir -p "$E2E_DIR/logs"
"$REPO/tests/e2e/xen/install.sh" >"$E2E_DIR/logs/install.log" 2>&1 ||
    { tail -30 "$E2E_DIR/logs/install.log"; echo "xen-hypervisor-e2e: install failed" >&2; exit 1; }
PKGROOT=$E2E_DIR/pkgroot
[ "$XEN_VERSION" = 4.17 ] || export TRIXIE_ROOT=${TRIXIE_ROOT:-$("$REPO/scripts/trixie.sh" chroot-dir)}
fi
# shellcheck source=tests/e2e/initramfs.sh
. "$REPO/tests/e2e/initramfs.sh"
KVER=$(initramfs_kver "$PKGROOT")

if gzip -t "$XEN" 2>/dev/null; then zcat "$XEN" >"$B/xen"; else cp "$XEN" "$B/xen"; fi
cp "$PKGROOT/boot/vmlinuz-$KVER" "$B/vmlinuz"
if [ -n "$TREE_OUT" ] || [ $ARM = 1 ]; then
    : # built above
elif [ "$XEN_VERSION" = 4.17 ]; then
    gcc -O2 -Wall -Wextra -Werror -I"$REPO/include" -o "$B/vcpustats-check" "$REPO/tests/e2e/vcpustats-check.c" \
        -lxenctrl -lxenforeignmemory || exit 1
else
    # against Debian 13's libxen, in its chroot; xenstats as `make e2e-xen XEN_VERSION=4.20` builds it
    CMB=$("$REPO/scripts/trixie.sh" build) || { echo "xenstats build in the Debian 13 chroot failed" >&2; exit 1; }
    chroot "$TRIXIE_ROOT" gcc -O2 -Wall -Wextra -Werror -I/build/xenstats/include -o "$CMB/vcpustats-check" \
        /build/xenstats/tests/e2e/vcpustats-check.c -lxenctrl -lxenforeignmemory || exit 1
    cp "$TRIXIE_ROOT$CMB/vcpustats-check" "$B/vcpustats-check"
    [ -n "${XENSTATS:-}" ] || XENSTATS=$TRIXIE_ROOT$CMB/xenstats
fi
if [ -z "${XENSTATS:-}" ]; then
    MB=$E2E_DIR/meson
    { [ -f "$MB/build.ninja" ] || meson setup "$MB" "$REPO" --buildtype=debugoptimized >/dev/null; } &&
        ninja -C "$MB" xenstats xenstats-agent xenstats-top >/dev/null || { echo "xenstats build failed" >&2; exit 1; }
    XENSTATS=$MB/xenstats
fi

DU=$B/domu-root
initramfs_base "$DU"
initramfs_xenstore_cli "$DU"
install -m755 "$HERE/domu-init.sh" "$DU/init"
initramfs_pack "$DU" "$B/domu.cpio"

R=$B/dom0-root
initramfs_base "$R"
initramfs_dom0_tools "$R"
initramfs_bin "$R" "$B/vcpustats-check" /usr/bin/vcpustats-check
[ -f "$B/stats-rewrite" ] && initramfs_bin "$R" "$B/stats-rewrite" /usr/bin/stats-rewrite
if [ "${TOOLS_SERIES:-0}" = 1 ]; then
    initramfs_bin "$R" "$B/xenstat-check" /usr/bin/xenstat-check
    initramfs_bin "$R" "$B/xenstat-time" /usr/bin/xenstat-time
    # the stock xentop and libxenstat of the same tree
    mkdir -p "$R/opt/stock/lib"
    cp -L "$TREE_OUT/dist/usr/sbin/xentop" "$R/opt/stock/xentop"
    cp -L "$TREE_OUT"/dist/usr/lib/libxenstat.so.[0-9]* "$R/opt/stock/lib/"
    # TOOLS_V1_LIB=DIR: the libxenstat of v1 of the series, which the
    # checks of v1's review must fail with
    if [ -n "${TOOLS_V1_LIB:-}" ]; then mkdir -p "$R/opt/v1/lib"; cp -L "$TOOLS_V1_LIB"/libxenstat.so.[0-9]* "$R/opt/v1/lib/"; fi
    install -m644 "$HERE/tools-checks.sh" "$R/tools-checks.sh"
    case " ${DOM0_EXTRA:-} " in *" xt_tools "*) ;; *) DOM0_EXTRA="${DOM0_EXTRA:-} xt_tools" ;; esac
    [ "${TOOLS_ONLY:-0}" = 1 ] && DOM0_EXTRA="$DOM0_EXTRA xt_tools_only"
    [ -n "${TOOLS_FILL:-}" ] && DOM0_EXTRA="$DOM0_EXTRA xt_fill=$TOOLS_FILL"
    [ -n "${TOOLS_VCPUS:-}" ] && DOM0_EXTRA="$DOM0_EXTRA xt_vcpus=$TOOLS_VCPUS"
    [ "${TOOLS_TIME_ONLY:-0}" = 1 ] && DOM0_EXTRA="$DOM0_EXTRA xt_tools_only xt_time_only"
fi
if [ "$XENSTATS" != none ]; then
    initramfs_xenstats "$R" "$XENSTATS"
fi
# the series' tools/tests programs (build-xen-tree.sh copies them there;
# on Arm, cross-built above)
for t in "${XEN_TOOLS_ROOT:-/nonexistent}"/usr/lib/xen/tests/* "$B"/tools-tests/bin/*; do
    [ -f "$t" ] && initramfs_bin "$R" "$t" "/usr/lib/xen/tests/${t##*/}"
done
cp "$B/vmlinuz" "$R/domu/vmlinuz"
cp "$B/domu.cpio" "$R/domu/initrd"
# Xen on Arm has one guest type (no type line); its kernel needs more memory
DOMU_TYPE='type = "pv"' DOMU_MEM=96
[ $ARM = 0 ] || DOMU_TYPE='' DOMU_MEM=160
cat >"$R/domu/domu.cfg.in" <<CFG
name = "@NAME@"
$DOMU_TYPE
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd"
extra = "console=hvc0 rdinit=/init quiet @EXTRA@"
memory = $DOMU_MEM
vcpus = @VCPUS@
maxvcpus = @MAXVCPUS@
on_poweroff = "destroy"
on_crash = "destroy"
CFG
install -m755 "$HERE/dom0-init.sh" "$R/init"
initramfs_pack "$R" "$B/dom0.cpio"

LOG=${LOG:-$WORK/logs/serial-$(date +%Y%m%d-%H%M%S).log}
# boot: one QEMU run of Xen with this dom0, its console in $LOG
boot() {
    : >"$LOG"
    start=$(date +%s)
    echo "[host] $(date -u +%T) QEMU: $XEN, log $LOG"
    if [ $ARM = 1 ]; then
        # as tests/e2e/xen/boot.sh (tests/e2e/qemu-arm64.sh); dom0 and the
        # domUs on Arm map every table writable, so after the checks the
        # rewrite test runs too (xt_rewrite_after)
        XEN_CMDLINE="console=dtuart loglvl=all guest_loglvl=all conring_size=1M bootscrub=0 dom0_mem=768M dom0_max_vcpus=$SMP ${XEN_EXTRA:-}"
        DOM0_CMDLINE="console=hvc0 earlycon=xenboot rdinit=/init loglevel=4 xt_rewrite_after xt_rewrite_seconds=${REWRITE_SECONDS:-30} ${DOM0_EXTRA:-}${BENCH_VCPUS:+ xt_bench_vcpus=$BENCH_VCPUS}"
        command -v qemu-system-aarch64 >/dev/null || apt-get -o DPkg::Lock::Timeout=600 -y -q install \
            --no-install-recommends qemu-system-arm >/dev/null || { echo "cannot install qemu-system-arm" >&2; exit 1; }
        # shellcheck source=tests/e2e/qemu-arm64.sh
        . "$REPO/tests/e2e/qemu-arm64.sh"
        qemu_arm64 "$B/xen" "$B/vmlinuz" "$B/dom0.cpio" "$XEN_CMDLINE" "$DOM0_CMDLINE" "$LOG" "$SMP" "$MEM" \
            timeout --signal=KILL "$TIMEOUT" nice -n "${QEMU_NICE:-10}"
    else
        XEN_CMDLINE="console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all dom0_mem=768M,max:768M dom0_max_vcpus=$SMP ${XEN_EXTRA:-}"
        DOM0_CMDLINE="console=hvc0 earlyprintk=xen rdinit=/init loglevel=4 ${DOM0_EXTRA:-}${BENCH_VCPUS:+ xt_bench_vcpus=$BENCH_VCPUS}"
        timeout --signal=KILL "$TIMEOUT" qemu-system-x86_64 \
            -machine pc -accel tcg,thread=multi -cpu qemu64 -smp "$SMP" -m "$MEM" \
            -display none -monitor none -nic none -no-reboot -serial "file:$LOG" \
            -kernel "$B/xen" -append "$XEN_CMDLINE" \
            -initrd "$B/vmlinuz $DOM0_CMDLINE,$B/dom0.cpio" &
    fi
    QPID=$!
    done_at=0
    while kill -0 $QPID 2>/dev/null; do
        sleep 2
        if [ $done_at = 0 ] && grep -aq "XENTEST-DONE" "$LOG"; then done_at=$(date +%s); fi
        if [ $done_at != 0 ] && [ $(($(date +%s) - done_at)) -gt 30 ]; then kill $QPID; fi
    done
    wait $QPID
    echo "[host] QEMU ran $(($(date +%s) - start)) s"
}
boot
# shellcheck source=tests/e2e/early-panic.sh
. "$REPO/tests/e2e/early-panic.sh"
if early_panic "$LOG" XENTEST-BEGIN "[host]"; then
    boot
fi
grep -a "XT: \|XENTEST-\|XT-REWRITE-\|Xen version\|(XEN) \*\*\*\|Panic\|FATAL\|vcpu_stats cost" "$LOG" | tr -d '\r'
# Xen's own alarms: a crash, a failed assertion, a BUG or WARN (the debug
# build's checks) anywhere in the log fail the run
XEN_ALARM='\(XEN\).*(Assertion .* failed|Xen BUG at|Xen WARN at|FATAL|Panic on CPU|Xen call trace)'
alarm=0
if grep -aqE "$XEN_ALARM" "$LOG"; then
    alarm=1
    echo "[host] FAIL xen-alarm: Xen reported:"
    grep -aE -A3 "$XEN_ALARM" "$LOG" | tr -d '\r' | head -40
fi
if grep -aq "XT-REWRITE-BEGIN" "$LOG"; then
    # what Xen said while the table was rewritten
    echo "[host] Xen's messages during the rewrite:"
    sed -n '/XT-REWRITE-BEGIN/,/XT-REWRITE-END/p' "$LOG" | grep -a '^(XEN)' | tr -d '\r' | head -40
    echo "[host] $(sed -n '/XT-REWRITE-BEGIN/,/XT-REWRITE-END/p' "$LOG" | grep -ac '^(XEN)') (XEN) lines during the rewrite"
fi
if [ $alarm = 0 ] && grep -aq "XENTEST-DONE" "$LOG" && ! grep -aqE '^XT: ([A-Za-z0-9 -]+: )*FAIL ' "$LOG"; then
    echo "[host] OVERALL PASS (log: $LOG)"; exit 0
fi
echo "[host] OVERALL FAIL (log: $LOG)"; tail -30 "$LOG" | tr -d '\r'; exit 1
