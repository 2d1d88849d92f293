#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guest package's program: xenstats-publish publishes and withdraws like
# `xenstats publish` (same code), and links no dom0-only library.
. "$(dirname "$0")/../integration/lib.sh"
: "${XENSTATS_PUBLISH:?}"
T=$XENSTATS_TEST_TMP

libs=$(ldd "$XENSTATS_PUBLISH")
if grep -E 'libxenctrl|libxenguest|libxenlight|microhttpd|gnutls|ncurses|tinfo|json-c' <<<"$libs"; then
    fail "xenstats-publish links a dom0-only library"
fi
pass "links only: $(awk '{print $1}' <<<"$libs" | grep -v -e linux-vdso -e ld-linux | tr '\n' ' ')"

"$XENSTATS_PUBLISH" --version | grep -q "^xenstats-publish [0-9]" || fail "--version"
"$XENSTATS_PUBLISH" --help | grep -q -- "--custom FILE" || fail "--help"
expect_fail "bad --sets" "--sets cpu,foo" "$XENSTATS_PUBLISH" --sets cpu,foo

start_emu -D name=guest,vcpus=1
"$XENSTATS" pv --toolstack --count 1 1 >/dev/null
XENSTATS_EMU_DOMID=1 "$XENSTATS_PUBLISH" --provider Guest --sets memory,load >"$T/pub.out" 2>"$T/pub.err" &
PUB=$!
for _ in $(seq 1 60); do
    n=$("$XENSTATS" pv --json --timeout 2s 1 2>/dev/null | python3 -c '
import json, sys
print(sum(1 for s in json.load(sys.stdin)["sets"] if s["provider"] == "Guest" and s["state"] == "active"))' || echo 0)
    [ "$n" = 2 ] && break
    kill -0 $PUB 2>/dev/null || fail "xenstats-publish exited: $(cat "$T/pub.err")"
    sleep 0.2
done
[ "$n" = 2 ] || fail "expected 2 active sets of Guest, saw $n: $(cat "$T/pub.err")"
pass "publishes memory and load in the guest"
kill -TERM $PUB
wait $PUB || fail "exited $? on SIGTERM: $(cat "$T/pub.err")"
"$XENSTATS" pv --json --timeout 2s 1 | grep -q '"Guest"' && fail "sets left after SIGTERM"
pass "withdraws on SIGTERM"

# What the guest package installs is a provider: xenstats-publish carries
# the library's provider and none of its monitor or vCPU reader.
syms=$(nm "$XENSTATS_PUBLISH" 2>/dev/null)
grep -q ' T xenstats_provider_new$' <<<"$syms" || fail "no symbols in $XENSTATS_PUBLISH to look at (stripped?)"
if grep -E ' [TtDdBbRr] (xenstats_monitor_|mon_|xenstats_vcpu_)' <<<"$syms"; then
    fail "xenstats-publish carries the PV monitor or the vCPU reader"
fi
pass "carries the PV provider, not the monitor or the vCPU reader"
