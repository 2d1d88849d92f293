#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No test or benchmark #includes a .c file: they link the libraries they
# test (an application, lib/guest, ...), so what they test is what ships.
# The scan runs on this checkout, then on a scratch tree with one planted
# include of each form, which it must catch.
set -eu
: "${XENSTATS_SOURCE_ROOT:?}"
. "$(dirname "$0")/../tap.sh"

# scan ROOT: print each FILE:LINE of tests/ or bench/ that includes a .c
# (quoted or <>, spaces after # allowed); status 1 if any.
scan() {
    local dirs=() d
    for d in tests bench; do
        [ -d "$1/$d" ] && dirs+=("$d")
    done
    [ ${#dirs[@]} -gt 0 ] || { echo "no tests/ or bench/ under $1"; return 2; }
    ! (cd "$1" && grep -rnI -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*\.c[">]' "${dirs[@]}")
}

scan "$XENSTATS_SOURCE_ROOT" >"$tmp/out" || { cat "$tmp/out"; not_ok "tests/ and bench/ include no .c file"; }
ok "tests/ and bench/ include no .c file"

mkdir -p "$tmp/tree/tests/x" "$tmp/tree/bench"
printf '#include "a.h"\n#include "b.c.h"\n' >"$tmp/tree/tests/x/clean.c"
scan "$tmp/tree" >"$tmp/out" || { cat "$tmp/out"; not_ok "headers whose names hold .c pass"; }
ok "headers whose names hold .c pass"
for line in '#include "../../lib/guest/text.c"' '#  include <parse.c>' '	#include "render.c"'; do
    for f in tests/x/t.c bench/b.c; do
        printf '#include "a.h"\n%s\n' "$line" >"$tmp/tree/$f"
        if scan "$tmp/tree" >"$tmp/out"; then
            not_ok "planted '$line' in $f: not caught"
        fi
        grep -q "^$f:2:" "$tmp/out" || { cat "$tmp/out"; not_ok "planted '$line' in $f: not named as $f:2"; }
        rm "$tmp/tree/$f"
    done
    ok "catches '$line' in tests/ and bench/"
done
