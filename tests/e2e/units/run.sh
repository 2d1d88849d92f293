#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make e2e-units`: the agent's unit on a real Debian 12 dom0 booted by
# systemd.  A Debian 12 root (debootstrap: systemd, Debian's Xen 4.17
# hypervisor and tools, Debian's kernel and initramfs) on a virtio disk,
# with this tree's xenstats and contrib/systemd/xenstats-agent.service
# installed and enabled as the package does.  QEMU boots Debian's Xen,
# which boots that root as dom0 with systemd as init; Debian 12 starts Xen
# from /etc/init.d/xen (xen.service: the Xen drivers, xenstored,
# xen-init-dom0).  A check unit (check.sh) then verifies, at each of two
# boots (the second after `systemctl reboot`):
#   - the agent started after xen.service was up, was not restarted, and
#     serves dom0's figures;
#   - its log has no "waiting" line (the ordering made it unnecessary);
#   - at the second boot, a drop-in with a bad --web-config: the unit
#     fails with status 2 and is not restarted (RestartPreventExitStatus=2).
# Result lines "UNITS: PASS|FAIL ..."; exit 0 iff all passed at both boots.
#   E2E_DIR       default build-e2e (the root is cached in $E2E_DIR/units)
#   E2E_TIMEOUT   seconds QEMU may run (default 2400: a boot to the check took
#                 11 minutes under a host load of 20)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
E2E_DIR=${E2E_DIR:-$ROOT/build-e2e}
OUT=$E2E_DIR/units
LOGS=$E2E_DIR/logs
LOG=$LOGS/units-serial.log
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$OUT" "$LOGS"
t() { date +%s; }
T0=$(t)

# ---- the Debian 12 root, cached: only the packages, nothing of ours
BASE=$OUT/base
if [ ! -f "$BASE/.complete" ]; then
    rm -rf "$BASE"
    # the agent's libraries, and what the check uses (curl)
    pkgs=systemd-sysv,udev,kmod,iproute2,procps,linux-image-amd64,initramfs-tools
    pkgs=$pkgs,xen-hypervisor-4.17-amd64,xen-utils-4.17,xenstore-utils,curl
    pkgs=$pkgs,libmicrohttpd12,libgnutls30,libyaml-0-2,zlib1g,libjson-c5,libncursesw6
    echo "e2e-units: debootstrap bookworm (cached in $BASE)"
    nice -n 10 debootstrap --variant=minbase --include=$pkgs bookworm "$BASE" "$MIRROR" \
        >"$LOGS/units-debootstrap.log" 2>&1 ||
        { tail -20 "$LOGS/units-debootstrap.log"; echo "e2e-units: debootstrap failed"; exit 2; }
    touch "$BASE/.complete"
fi
T1=$(t)

# ---- this tree's xenstats (the e2e build), the unit as the package
# installs it, and the check
MB=$E2E_DIR/meson
[ -f "$MB/build.ninja" ] || meson setup "$MB" "$ROOT" --buildtype=debugoptimized >/dev/null
nice -n 10 ninja -C "$MB" xenstats xenstats-agent >/dev/null || { echo "e2e-units: build failed"; exit 3; }
R=$OUT/root
rm -rf "$R"
cp -a "$BASE" "$R"
install -m755 "$MB/xenstats" "$MB/xenstats-agent" "$R/usr/local/bin/"
# its shared libraries that the root lacks (none but Debian's, normally)
for lib in $(ldd "$MB/xenstats" "$MB/xenstats-agent" | awk '/=> \// {print $3}' | sort -u); do
    [ -e "$R$lib" ] || [ -e "$R/usr$lib" ] || cp -L "$lib" "$R/usr/local/lib/"
done
chroot "$R" ldconfig
sed 's|@bindir@|/usr/local/bin|' "$ROOT/contrib/systemd/xenstats-agent.service" \
    >"$R/etc/systemd/system/xenstats-agent.service"
install -m755 "$HERE/check.sh" "$R/usr/local/sbin/xenstats-e2e-check"
cat >"$R/etc/systemd/system/xenstats-e2e-check.service" <<'EOF'
[Unit]
Description=e2e-units: check the agent's unit
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/xenstats-e2e-check
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=default.target
EOF
# what `systemctl enable` does, without a running manager
mkdir -p "$R/etc/systemd/system/multi-user.target.wants" "$R/etc/systemd/system/default.target.wants"
ln -sf /etc/systemd/system/xenstats-agent.service "$R/etc/systemd/system/multi-user.target.wants/"
ln -sf /etc/systemd/system/xenstats-e2e-check.service "$R/etc/systemd/system/default.target.wants/"
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$R/etc/fstab"
echo dom0 >"$R/etc/hostname"
# the console is Xen's (hvc0): no getty waiting on a serial line
ln -sf /dev/null "$R/etc/systemd/system/serial-getty@hvc0.service"
ln -sf /dev/null "$R/etc/systemd/system/getty@tty1.service"
KVER=$(basename "$(ls -d "$R"/lib/modules/* | sort -V | tail -1)")
mkdir -p "$OUT/img"
zcat "$R"/boot/xen-4.17-amd64.gz >"$OUT/img/xen"
cp "$R/boot/vmlinuz-$KVER" "$OUT/img/vmlinuz"
cp "$R/boot/initrd.img-$KVER" "$OUT/img/initrd"
rm -f "$OUT/img/root.img"
mkfs.ext4 -q -F -L root -d "$R" "$OUT/img/root.img" 3G || { echo "e2e-units: mkfs failed"; exit 3; }
T2=$(t)

# ---- boot: Debian's Xen, Debian's kernel and initramfs, systemd as init;
# the dom0's `systemctl reboot` resets the machine (no -no-reboot), its
# poweroff ends QEMU
: >"$LOG"
XEN_CMDLINE="console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all dom0_mem=1024M,max:1024M dom0_max_vcpus=1"
DOM0_CMDLINE="root=/dev/vda rw console=hvc0 earlyprintk=xen systemd.show_status=1 loglevel=4 cryptomgr.notests"
nice -n 10 qemu-system-x86_64 -machine pc -accel tcg,thread=multi -cpu qemu64 -smp 2 -m 2048 \
    -display none -monitor none -nic none -serial "file:$LOG" \
    -drive "file=$OUT/img/root.img,format=raw,if=virtio" \
    -kernel "$OUT/img/xen" -append "$XEN_CMDLINE" \
    -initrd "$OUT/img/vmlinuz $DOM0_CMDLINE,$OUT/img/initrd" &
QPID=$!
TIMEOUT=${E2E_TIMEOUT:-2400}
echo "e2e-units: QEMU pid $QPID, serial log $LOG, timeout ${TIMEOUT}s"
hung=1
while kill -0 $QPID 2>/dev/null; do
    sleep 5
    if grep -aq "UNITS: DONE" "$LOG"; then hung=0; sleep 20; kill $QPID 2>/dev/null; break; fi
    [ $(($(t) - T2)) -lt "$TIMEOUT" ] || { kill -KILL $QPID; break; }
done
wait $QPID 2>/dev/null
grep -aq "UNITS: DONE" "$LOG" && hung=0
T3=$(t)
grep -a "UNITS: " "$LOG" | tr -d '\r'
echo "e2e-units timing: root $((T1 - T0))s, image $((T2 - T1))s, two boots and the checks $((T3 - T2))s"
pass=$(grep -ac "UNITS: PASS " "$LOG")
fail=$(grep -ac "UNITS: FAIL " "$LOG")
if [ $hung = 0 ] && [ "$pass" -gt 0 ] && [ "$fail" = 0 ]; then
    echo "e2e-units: PASS ($pass checks)"
    exit 0
fi
[ $hung = 1 ] && echo "e2e-units: no UNITS: DONE within ${TIMEOUT}s"
echo "e2e-units: FAIL ($pass passed, $fail failed); the last of the serial log:"
tail -60 "$LOG" | tr -d '\r'
exit 1
