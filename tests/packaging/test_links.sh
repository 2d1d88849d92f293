#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/check-links.sh passes on the binaries of this build, and fails,
# naming the binary and the library, when a binary of the build stands in
# for another that must not link what it links.
set -eu
: "${XENSTATS_SOURCE_ROOT:?}" "${XENSTATS_BUILD_ROOT:?}"
check=$XENSTATS_SOURCE_ROOT/scripts/check-links.sh
b=$XENSTATS_BUILD_ROOT
. "$(dirname "$0")/../tap.sh"

"$check" "$b" "$b" >"$tmp/out" || { cat "$tmp/out"; not_ok "this build"; }
cat "$tmp/out"
ok "this build: each binary links only its own libraries"

# swap NAME STANDIN EXPECT WHY: with build/STANDIN installed as NAME, the
# check fails and says EXPECT.
swap() {
    local name=$1 standin=$2 expect=$3 why=$4 x
    rm -rf "$tmp/bin"
    mkdir "$tmp/bin"
    for x in xenstats xenstats-agent xenstats-top xenstats-publish; do
        ln -s "$b/$x" "$tmp/bin/$x"
    done
    ln -sf "$b/$standin" "$tmp/bin/$name"
    if "$check" "$tmp/bin" "$tmp/bin" >"$tmp/out"; then
        cat "$tmp/out"
        not_ok "$why: passed"
    fi
    grep -q -- "$expect" "$tmp/out" || { cat "$tmp/out"; not_ok "$why: no '$expect'"; }
    ok "$why"
}

swap xenstats xenstats-agent "bin/xenstats: needs libmicrohttpd" "xenstats linking the agent's HTTP server"
swap xenstats xenstats-top "bin/xenstats: needs libncursesw" "xenstats linking top's curses"
swap xenstats-publish xenstats "bin/xenstats-publish: needs libjson-c" "the guest binary linking json-c"
swap xenstats-top xenstats-agent "bin/xenstats-top: needs libmicrohttpd" "top linking the agent's libraries"
swap xenstats-agent xenstats-publish "does not name libmicrohttpd" "an agent without its HTTP server"
