#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The agent's unit against Xen's start-up (docs/packaging.md, "The
# services"): systemd-analyze verify takes it beside a unit standing in
# for Debian 12's xen.service (the unit systemd makes of /etc/init.d/xen);
# it is ordered after and wants xen.service as well as Xen's own units; it
# is not skipped on a dom0 whose /dev/xen/privcmd comes late; a
# configuration error exits 2, which the unit does not restart.  Then what
# the unit counts on: the agent waits for a host that is not there yet and
# serves once it comes, and gives up after --wait-for-host saying why.
# The real start order is proved on real Xen by tests/e2e/units/.
. "$(dirname "$0")/../integration/lib.sh"
: "${XENSTATS_SOURCE_ROOT:?}"
T=$XENSTATS_TEST_TMP
UNIT=$XENSTATS_SOURCE_ROOT/contrib/systemd/xenstats-agent.service

# ---- the unit, as installed (ExecStart= this build's binary)
mkdir -p "$T/units"
sed "s|@bindir@/xenstats|$XENSTATS|" "$UNIT" >"$T/units/xenstats-agent.service"
cat >"$T/units/xen.service" <<'EOF'
[Unit]
Description=Stand-in for Debian 12's xen.service (generated from /etc/init.d/xen)
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
EOF
if command -v systemd-analyze >/dev/null; then
    out=$(systemd-analyze verify --man=no "$T/units/xenstats-agent.service" "$T/units/xen.service" 2>&1) ||
        fail "systemd-analyze verify: $out"
    [ -z "$out" ] || fail "systemd-analyze verify says: $out"
    pass "systemd-analyze verify: the unit and a stand-in xen.service, no complaint"
else
    echo "skip: no systemd-analyze"
fi

# key NAME: the words of every NAME= line of the unit's [Unit] or [Service]
key() { sed -n "s/^$1=//p" "$T/units/xenstats-agent.service" | tr '\n' ' '; }
for u in xen.service xenstored.service xen-init-dom0.service; do
    case " $(key After) " in *" $u "*) ;; *) fail "After= lacks $u: $(key After)" ;; esac
done
for u in xen.service xenstored.service; do
    case " $(key Wants) " in *" $u "*) ;; *) fail "Wants= lacks $u: $(key Wants)" ;; esac
done
pass "After= $(key After)and Wants= $(key Wants): Debian 12's xen.service and Xen's own units"
case $(key ConditionPathExists) in *privcmd*) fail "skipped when privcmd comes late: ConditionPathExists=$(key ConditionPathExists)" ;; esac
case $(key ExecStart) in *"--wait-for-host "*) ;; *) fail "ExecStart= does not wait for the host: $(key ExecStart)" ;; esac
pass "not skipped on a late /dev/xen/privcmd: $(key ExecStart)"
[ "$(key RestartPreventExitStatus)" = "2 " ] || fail "RestartPreventExitStatus=$(key RestartPreventExitStatus)"

# ---- a configuration error is status 2, which the unit does not restart
for bad in "--interval 5ms" "--listen nowhere" "--web-config $T/missing.yml" "--wait-for-host forever" "unexpected"; do
    # shellcheck disable=SC2086 # the option and its value
    "$XENSTATS" agent $bad >"$T/out" 2>&1 && fail "agent $bad: exit 0"
    rc=$?
    [ $rc = 2 ] || fail "agent $bad: exit $rc (want 2): $(cat "$T/out")"
done
pass "configuration errors exit 2: RestartPreventExitStatus=2"

# ---- --wait-for-host: the host comes after the agent
PORT=$((20000 + RANDOM % 20000))
"$XENSTATS" agent --listen 127.0.0.1:$PORT --wait-for-host 30s >"$T/agent.log" 2>&1 &
AGENT=$!
sleep 2
kill -0 $AGENT 2>/dev/null || fail "the agent did not wait: $(cat "$T/agent.log")"
grep -q "waiting at most 30 s for the host: the emulated host is not running" "$T/agent.log" ||
    fail "no word of what it waits for: $(cat "$T/agent.log")"
start_emu -D name=late,vcpus=1
ok=
for _ in $(seq 1 100); do
    if curl -sf "http://127.0.0.1:$PORT/metrics" 2>/dev/null | grep -q 'domain="late"'; then ok=1; break; fi
    kill -0 $AGENT 2>/dev/null || fail "the agent exited: $(cat "$T/agent.log")"
    sleep 0.1
done
[ -n "$ok" ] || fail "the agent does not serve the host that came: $(cat "$T/agent.log")"
grep -q "the host is ready after" "$T/agent.log" || fail "no word of the host coming: $(cat "$T/agent.log")"
pass "waits for a host that comes 2 s late, says so, then serves it"
kill -TERM $AGENT
wait $AGENT || fail "exit $? on SIGTERM"

# ---- and gives up, loudly, when it does not come: status 1, restarted
kill -TERM "$EMU_PID"
wait "$EMU_PID" 2>/dev/null || true
EMU_PID=
start=$(date +%s)
"$XENSTATS" agent --listen 127.0.0.1:$PORT --wait-for-host 2s >"$T/out" 2>&1 && fail "exit 0 without a host"
rc=$?
took=$(($(date +%s) - start))
[ $rc = 1 ] || fail "exit $rc without a host (want 1, which the unit restarts): $(cat "$T/out")"
grep -q "gave up after 2 s: the emulated host is not running" "$T/out" || fail "$(cat "$T/out")"
[ $took -ge 2 ] && [ $took -le 10 ] || fail "gave up after ${took}s"
pass "no host within --wait-for-host 2s: exit 1 after ${took}s, \"$(grep -o 'gave up.*' "$T/out")\""
if [ ! -e /dev/xen/privcmd ]; then
    "$XENSTATS" --backend xen agent --listen 127.0.0.1:$PORT --wait-for-host 1s >"$T/out" 2>&1 && fail "exit 0 off Xen"
    grep -q "gave up after 1 s: /dev/xen/privcmd is not there" "$T/out" || fail "$(cat "$T/out")"
    pass "--backend xen off Xen: \"$(grep -o 'gave up.*' "$T/out")\""
fi
