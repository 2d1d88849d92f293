#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The check of `make e2e-units` (tests/e2e/units/run.sh), run by a unit in
# the booted dom0 after multi-user.target.  Boot 1: the agent's start
# order and service, then `systemctl reboot`.  Boot 2: the same, then a bad
# --web-config must leave the unit failed with status 2 and no restart;
# then poweroff.  Lines "UNITS: PASS|FAIL NAME detail", "UNITS: DONE".
set -u
STATE=/var/lib/xenstats-e2e
mkdir -p $STATE
BOOT=$(($(cat $STATE/boots 2>/dev/null || echo 0) + 1))
echo $BOOT >$STATE/boots
sync
say() { echo "UNITS: $*" >/dev/console; echo "UNITS: $*"; }
res() { # res NAME STATUS DETAIL
    if [ "$2" = 0 ]; then say "PASS boot$BOOT-$1 $3"; else say "FAIL boot$BOOT-$1 $3"; fi
}
prop() { systemctl show -P "$2" "$1"; }
up() { cut -d' ' -f1 /proc/uptime; }

say "boot $BOOT at $(up)s: $(uname -r), $(cat /sys/hypervisor/type 2>/dev/null) $(cat /sys/hypervisor/version/major 2>/dev/null).$(cat /sys/hypervisor/version/minor 2>/dev/null), xen.service $(systemctl is-active xen.service), xenstored.service $(systemctl is-active xenstored.service 2>/dev/null)"

# the agent serves dom0's figures (it may still be waiting: 90 s at most)
i=0
m=
while [ $i -lt 90 ]; do
    m=$(curl -sf http://127.0.0.1:9740/metrics 2>/dev/null | grep -c '^xenstats_domain_info{.*domid="0"')
    [ "${m:-0}" -gt 0 ] && break
    sleep 1
    i=$((i + 1))
done
res serves "$([ "${m:-0}" -gt 0 ] && echo 0 || echo 1)" "/metrics has dom0's xenstats_domain_info after ${i}s more; agent $(systemctl is-active xenstats-agent.service)"

# the start order: the agent's process started after xen.service was up
X=$(prop xen.service ActiveEnterTimestampMonotonic)
A=$(prop xenstats-agent.service ExecMainStartTimestampMonotonic)
res order "$([ "${X:-0}" -gt 0 ] && [ "${A:-0}" -gt "${X:-0}" ] && echo 0 || echo 1)" \
    "xen.service active at $((X / 1000)) ms, the agent started at $((A / 1000)) ms (monotonic); After=$(prop xenstats-agent.service After | tr ' ' '\n' | grep -E '^xen' | tr '\n' ' ')"
W=$(prop xenstats-agent.service Wants)
case " $W " in *" xen.service "*) r=0 ;; *) r=1 ;; esac
res wants "$r" "Wants=$W"
n=$(prop xenstats-agent.service NRestarts)
res no-restart "$([ "$n" = 0 ] && echo 0 || echo 1)" "NRestarts=$n, Result=$(prop xenstats-agent.service Result)"
waits=$(journalctl -b -u xenstats-agent.service --no-pager 2>/dev/null | grep -c "waiting at most")
res no-wait "$([ "$waits" = 0 ] && echo 0 || echo 1)" "$waits \"waiting\" lines in the agent's log: the order made the wait unneeded"
journalctl -b -u xenstats-agent.service -u xen.service --no-pager -o short-monotonic 2>/dev/null | tail -12 |
    sed 's/^/UNITS: log: /' >/dev/console

if [ "$BOOT" = 1 ]; then
    say "rebooting"
    systemctl reboot
    exit 0
fi

# ---- a configuration error: status 2, not restarted
mkdir -p /etc/systemd/system/xenstats-agent.service.d
cat >/etc/systemd/system/xenstats-agent.service.d/bad.conf <<'EOF'
[Service]
ExecStart=
ExecStart=/usr/local/bin/xenstats --backend xen agent --wait-for-host 60s --web-config /nonexistent.yml
EOF
systemctl daemon-reload
systemctl restart xenstats-agent.service
sleep 8
st=$(prop xenstats-agent.service ExecMainStatus)
n=$(prop xenstats-agent.service NRestarts)
a=$(systemctl is-active xenstats-agent.service)
res config-error-no-restart "$([ "$st" = 2 ] && [ "$n" = 0 ] && [ "$a" = failed ] && echo 0 || echo 1)" \
    "bad --web-config: ExecMainStatus=$st, NRestarts=$n after 8 s, $a: $(journalctl -b -u xenstats-agent.service --no-pager -n 3 -o cat | tr '\n' ' ')"
rm -rf /etc/systemd/system/xenstats-agent.service.d
systemctl daemon-reload
say "DONE"
sync
systemctl poweroff
