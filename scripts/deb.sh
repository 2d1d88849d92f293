#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian packages (debian/) from the checkout as it is, in
# build-deb/ (git-ignored), never in the checkout's parent directory:
#   scripts/deb.sh            build; the .debs land in build-deb/
#   scripts/deb.sh lintian    build, then lintian on the .changes
#   scripts/deb.sh check      install the built packages on this machine
#                             (root), run each binary from /usr/bin, check
#                             each binary's libraries (check-links.sh) and
#                             the units, then purge what was installed
# DEB_TARBALL=FILE builds from a `meson dist` tarball instead of the
# checkout, which proves the tarball complete.  DEB_BUILD_OPTIONS is passed
# through (nocheck skips the unit and packaging suites of the build).
# Needs debhelper and the build dependencies (scripts/install-deps.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${DEB_OUT:-$ROOT/build-deb}
VERSION=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
SRC=$OUT/xenstats-$VERSION

# check: the packages built last, installed as an operator would
check() {
    local before after new rc=0 b
    cd "$OUT"
    before=$(dpkg-query -W -f '${Package}\n' | sort)
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
        ./xenstats-guest_"$VERSION"_*.deb ./xenstats_"$VERSION"_*.deb ./libxenstats0_"$VERSION"_*.deb >install.log 2>&1 ||
        { tail -20 install.log >&2; echo "deb check: apt-get install failed" >&2; return 1; }
    after=$(dpkg-query -W -f '${Package}\n' | sort)
    new=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
    echo "deb check: installed $new" >&2
    check_installed || rc=1
    # shellcheck disable=SC2086
    apt-get -o DPkg::Lock::Timeout=300 purge -y -qq $new >>install.log 2>&1 ||
        { tail -20 install.log >&2; echo "deb check: purge failed" >&2; rc=1; }
    for b in /usr/bin/xenstats /usr/bin/xenstats-publish /usr/libexec/xenstats/xenstats-agent \
        /usr/libexec/xenstats/xenstats-top; do
        [ ! -e "$b" ] || { echo "deb check: $b left after the purge" >&2; rc=1; }
    done
    return $rc
}

check_installed() {
    local rc=0 c unitdir b
    for c in "xenstats --help" "xenstats --version" "xenstats-publish --help" "xenstats-publish --version"; do
        # shellcheck disable=SC2086
        /usr/bin/$c >/dev/null || { echo "deb check: /usr/bin/$c failed" >&2; rc=1; }
    done
    for c in vcpu pv agent top publish emu; do
        /usr/bin/xenstats "$c" --help >/dev/null || { echo "deb check: xenstats $c --help failed" >&2; rc=1; }
    done
    # the applications run from the package's libexec folder, not beside /usr/bin/xenstats
    for b in xenstats-agent xenstats-top; do
        dpkg -L xenstats | grep -qx "/usr/libexec/xenstats/$b" ||
            { echo "deb check: the package has no /usr/libexec/xenstats/$b" >&2; rc=1; }
    done
    # each installed binary links only its own libraries: the guest's no
    # dom0-only one, xenstats neither the agent's HTTP/TLS nor top's curses
    "$ROOT/scripts/check-links.sh" /usr/bin /usr/libexec/xenstats >&2 ||
        { echo "deb check: a binary links another's libraries (above)" >&2; rc=1; }
    # the library itself: stable-soname Xen libraries only
    if ldd "$(dpkg -L libxenstats0 | grep 'libxenstats\.so\.0$')" | grep libxenctrl; then
        echo "deb check: libxenstats links libxenctrl" >&2
        rc=1
    fi
    unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
    # the installed units, with the installed binaries and man pages
    systemd-analyze verify --man=no "$unitdir"/xenstats-agent.service "$unitdir"/xenstats-publish.service ||
        { echo "deb check: systemd-analyze verify failed" >&2; rc=1; }
    for c in xenstats-agent:4.0 xenstats-publish:3.0; do
        check_exposure "$unitdir/${c%:*}.service" "${c#*:}" || rc=1
    done
    return $rc
}

# check_exposure UNIT MAX: systemd-analyze security's overall exposure <= MAX
check_exposure() {
    local score
    score=$(systemd-analyze security --offline=yes "$1" 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    echo "deb check: $(basename "$1"): exposure $score (at most $2)" >&2
    [ -n "$score" ] && awk -v s="$score" -v m="$2" 'BEGIN { exit !(s <= m) }'
}

if [ "${1:-}" = check ]; then
    check
    exit
fi

rm -rf "$OUT"
mkdir -p "$SRC"
if [ -n "${DEB_TARBALL:-}" ]; then
    tar -xf "$DEB_TARBALL" -C "$SRC" --strip-components=1
elif git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    # the checkout as it is (tracked and untracked, not ignored files)
    (cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -x -C "$SRC"
else
    # a copy of the tree without git (scripts/trixie.sh's): all but builds
    tar -C "$ROOT" --exclude='./build*' --exclude=./ci-artifacts -cf - . | tar -x -C "$SRC"
fi
t0=$(date +%s)
(cd "$SRC" && dpkg-buildpackage -us -uc -b -j2 >"$OUT/build.log" 2>&1) ||
    { tail -40 "$OUT/build.log" >&2; echo "deb: dpkg-buildpackage failed (build-deb/build.log)" >&2; exit 1; }
rm -rf "$SRC"
echo "deb: built in $(($(date +%s) - t0)) s:" >&2
(cd "$OUT" && ls -l ./*.deb) >&2
if [ "${1:-}" = lintian ]; then
    # errors and warnings fail.  Debian 12's lintian also notes (info,
    # not shown by default) package-supports-alternative-init-but-no-init.d-script
    # for both units: no System V script on purpose, since it would run
    # the daemon without the unit's sandbox.  No override: Debian 13's
    # lintian no longer knows the tag and rejects overrides of it.
    lintian --fail-on error,warning --display-info "$OUT"/xenstats_"$VERSION"_*.changes
fi
