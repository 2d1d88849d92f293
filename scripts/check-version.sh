#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The version is meson.build's project(version:); every other place that
# states it must agree: debian/changelog (the native package's version),
# the first version NEWS describes, the public header's XENSTATS_VERSION
# and the manual pages' footers.  Prints each disagreement; exit 1 if any.
set -u
cd "$(dirname "$0")/.." || exit 1
version=$(sed -n "/^project(/,/)/ s/.*version *: *'\([^']*\)'.*/\1/p" meson.build | head -1)
bad=0
[ -n "$version" ] || { echo "check-version: no version in meson.build's project()"; exit 1; }
disagree() {
    echo "check-version: $1 says '$2', meson.build says '$version'"
    bad=1
}

deb=$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null || sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
# a Debian revision (-N) may follow the upstream version, an epoch precede it
upstream=${deb#*:}
upstream=${upstream%-*}
[ "$upstream" = "$version" ] || disagree debian/changelog "$deb"
news=$(sed -n 's/^Version \([^ ]*\)$/\1/p' NEWS | head -1)
[ "$news" = "$version" ] || disagree "NEWS (its newest entry)" "$news"
header=$(sed -n 's/^#define XENSTATS_VERSION "\(.*\)"$/\1/p' include/xenstats/xenstats.h)
[ "$header" = "$version" ] || disagree include/xenstats/xenstats.h "$header"
for page in man/*.1; do
    th=$(sed -n 's/^\.TH .* "xenstats \([^"]*\)".*/\1/p' "$page")
    [ "$th" = "$version" ] || disagree "$page" "$th"
done
[ $bad -eq 0 ] && echo "check-version: $version everywhere"
exit $bad
