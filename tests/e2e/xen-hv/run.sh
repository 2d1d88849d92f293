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
#   XENSTATS=path  a xenstats binary to run in dom0 too (optional)
#   TIMEOUT=s      QEMU time limit (default 1200; a run takes 2-5 min)
#   SMP, MEM       QEMU CPUs (default 2) and MiB (default 2048)
#   DOM0_EXTRA=xt_stock  for an unpatched hypervisor: check that the
#                  resource fails cleanly and xenstats falls back
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
WORK=${WORK:-$REPO/build-xen-hv/e2e}
XEN=${XEN:-$REPO/build-xen-hv/out/xen}
TIMEOUT=${TIMEOUT:-1200}
SMP=${SMP:-2}
MEM=${MEM:-2048}
PK=$WORK/pkgroot
B=$WORK/build

[ -f "$XEN" ] || { echo "no hypervisor at $XEN (make xen-hypervisor)" >&2; exit 1; }
"$HERE/prepare.sh" || exit 1
KVER=$(basename "$(ls -d "$PK"/lib/modules/*)")
rm -rf "$B"; mkdir -p "$B" "$WORK/logs"
if file "$XEN" | grep -q gzip; then zcat "$XEN" >"$B/xen"; else cp "$XEN" "$B/xen"; fi
cp "$PK/boot/vmlinuz-$KVER" "$B/vmlinuz"
gcc -O2 -Wall -Wextra -I"$REPO/include" -o "$B/vcpustats-check" "$REPO/tests/e2e/vcpustats-check.c" \
    -lxenctrl -lxenforeignmemory || exit 1

copy_bin() { # ROOT SRC [DEST]: a binary and the libraries ldd lists
    local root=$1 src=$2 dest=${3:-$2}
    mkdir -p "$root$(dirname "$dest")"
    cp -L "$src" "$root$dest"
    ldd "$src" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
        [ -e "$lib" ] || continue
        mkdir -p "$root$(dirname "$lib")"
        cp -Ln "$lib" "$root$lib" 2>/dev/null || true
    done
}
make_base() { # ROOT: busybox with its applets, usrmerge links, loader, libgcc_s
    local root=$1
    mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,proc,sys,dev,tmp,run,etc,var,root}
    ln -s usr/bin "$root/bin"; ln -s usr/sbin "$root/sbin"; ln -s usr/lib "$root/lib"
    ln -s usr/lib64 "$root/lib64"
    cp /bin/busybox "$root/usr/bin/busybox"
    for a in $(/bin/busybox --list-full); do
        [ -e "$root/$a" ] || [ -L "$root/$a" ] || ln -s /usr/bin/busybox "$root/$a"
    done
    cp -L /lib64/ld-linux-x86-64.so.2 "$root/usr/lib64/"
    # glibc dlopen()s it for pthread_cancel (libxenstore's thread, xl)
    cp -L /lib/x86_64-linux-gnu/libgcc_s.so.1 "$root/usr/lib/x86_64-linux-gnu/"
}
copy_mods() { # ROOT MOD...
    local root=$1; shift
    mkdir -p "$root/usr/lib/modules/$KVER/extra"
    for m in "$@"; do
        cp "$(find "$PK/lib/modules/$KVER" -name "$m.ko*" | head -1)" "$root/usr/lib/modules/$KVER/extra/"
    done
}

DU=$B/domu-root
make_base "$DU"
copy_bin "$DU" "$PK/usr/bin/xenstore" /usr/bin/xenstore
ln -sf xenstore "$DU/usr/bin/xenstore-write"
install -m755 "$HERE/domu-init.sh" "$DU/init"
(cd "$DU" && find . | cpio -o -H newc --quiet) | gzip -6 >"$B/domu.cpio.gz"

R=$B/dom0-root
make_base "$R"
XB=/usr/lib/xen-4.17/bin
for b in xenstored xen-init-dom0 xenconsoled xl; do copy_bin "$R" "$PK$XB/$b" "$XB/$b"; done
copy_bin "$R" "$PK/usr/bin/xenstore" /usr/bin/xenstore
for t in read write ls list rm; do ln -sf xenstore "$R/usr/bin/xenstore-$t"; done
copy_bin "$R" "$B/vcpustats-check" /usr/bin/vcpustats-check
if [ -n "${XENSTATS:-}" ] && [ -x "$XENSTATS" ]; then
    copy_bin "$R" "$XENSTATS" /usr/bin/xenstats
fi
mkdir -p "$R/etc/xen" "$R/var/lib/xen" "$R/var/log/xen" "$R/domu"
cp "$PK/etc/xen/xl.conf" "$R/etc/xen/" 2>/dev/null || true
cp -r "$PK/etc/xen/scripts" "$R/etc/xen/" 2>/dev/null || true
copy_mods "$R" xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs
cp "$B/vmlinuz" "$R/domu/vmlinuz"
cp "$B/domu.cpio.gz" "$R/domu/initrd.gz"
cat >"$R/domu/domu.cfg.in" <<'CFG'
name = "@NAME@"
type = "pv"
kernel = "/domu/vmlinuz"
ramdisk = "/domu/initrd.gz"
extra = "console=hvc0 rdinit=/init quiet @EXTRA@"
memory = 96
vcpus = @VCPUS@
on_poweroff = "destroy"
on_crash = "destroy"
CFG
install -m755 "$HERE/dom0-init.sh" "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet) | gzip -6 >"$B/dom0.cpio.gz"

LOG=${LOG:-$WORK/logs/serial-$(date +%Y%m%d-%H%M%S).log}
XEN_CMDLINE="console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all dom0_mem=768M,max:768M dom0_max_vcpus=$SMP ${XEN_EXTRA:-}"
DOM0_CMDLINE="console=hvc0 earlyprintk=xen rdinit=/init loglevel=4 ${DOM0_EXTRA:-}"
: >"$LOG"
start=$(date +%s)
echo "[host] $(date -u +%T) QEMU: $XEN, log $LOG"
timeout --signal=KILL "$TIMEOUT" qemu-system-x86_64 \
    -machine pc -accel tcg,thread=multi -cpu qemu64 -smp "$SMP" -m "$MEM" \
    -display none -monitor none -nic none -no-reboot -serial "file:$LOG" \
    -kernel "$B/xen" -append "$XEN_CMDLINE" \
    -initrd "$B/vmlinuz $DOM0_CMDLINE,$B/dom0.cpio.gz" &
QPID=$!
done_at=0
while kill -0 $QPID 2>/dev/null; do
    sleep 2
    if [ $done_at = 0 ] && grep -aq "XENTEST-DONE" "$LOG"; then done_at=$(date +%s); fi
    if [ $done_at != 0 ] && [ $(($(date +%s) - done_at)) -gt 30 ]; then kill $QPID; fi
done
wait $QPID
echo "[host] QEMU ran $(($(date +%s) - start)) s"
grep -a "XT: \|XENTEST-\|Xen version\|(XEN) \*\*\*\|Panic\|FATAL" "$LOG" | tr -d '\r'
if grep -aq "XENTEST-DONE" "$LOG" && ! grep -aqE '^XT: ([A-Za-z0-9 -]+: )*FAIL ' "$LOG"; then
    echo "[host] OVERALL PASS (log: $LOG)"; exit 0
fi
echo "[host] OVERALL FAIL (log: $LOG)"; tail -30 "$LOG" | tr -d '\r'; exit 1
