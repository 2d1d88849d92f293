#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Capture the xentop layout fixtures: build Xen's own tools/xentop/xentop.c
# and pcpu.c, unmodified, from a release tarball, against fake_xenstat.c
# (which serves ../scenario.h's figures through libxenstat's API), run it
# with each line of ../cases and keep what it prints in ../fixtures/.
# Needs a C compiler, ncurses' and libxenctrl's headers (libncurses-dev,
# libxen-dev).  Xen's code is only compiled here, never kept.
#   capture.sh [XEN_TARBALL]   (default: ../shared/xen-src/xen-4.22.0.tar.xz
#                               beside the source tree)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tarball=${1:-$root/../shared/xen-src/xen-4.22.0.tar.xz}
[ -f "$tarball" ] || { echo "capture.sh: no Xen tarball at $tarball" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" --strip-components=1 --wildcards \
    '*/tools/xentop/xentop.c' '*/tools/xentop/pcpu.c' '*/tools/xentop/pcpu.h' '*/tools/include/xenstat.h'
# what Xen's configure would write: where curses' header is
printf '#define INCLUDE_CURSES_H <ncurses.h>\n' >"$tmp/config.h"
${CC:-cc} -O1 -w -DHOST_Linux -DGCC_PRINTF -include "$tmp/config.h" -I"$tmp/tools/include" -I"$tmp/tools/xentop" \
    -o "$tmp/xentop" "$tmp/tools/xentop/xentop.c" "$tmp/tools/xentop/pcpu.c" "$here/fake_xenstat.c" \
    -Wl,--wrap=gettimeofday -Wl,--wrap=sleep -lncurses -lm
mkdir -p "$here/../fixtures"
grep -v '^#' "$here/../cases" | while read -r name opts; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    "$tmp/xentop" $opts </dev/null >"$here/../fixtures/$name.out"
    echo "captured $name: xentop $opts ($(wc -l <"$here/../fixtures/$name.out") lines)"
done
{
    echo "Captured by tests/top/xentop/capture/capture.sh from $(basename "$tarball")"
    echo "(sha256 $(sha256sum "$tarball" | cut -d' ' -f1)): its tools/xentop/xentop.c and pcpu.c,"
    echo "unmodified, built against capture/fake_xenstat.c serving scenario.h's figures."
} >"$here/../fixtures/SOURCE"
