#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install the Debian 12 packages xenstats needs to build, test and run.
# Idempotent; needs root (or sudo) on a machine that reaches Debian's mirrors.
set -eu

PACKAGES="
build-essential clang meson ninja-build pkg-config
libxen-dev xenstore-utils
libjson-c-dev libcmocka-dev libmicrohttpd-dev libncurses-dev
zlib1g-dev libyaml-dev libcrypt-dev libgnutls28-dev
libclang-rt-14-dev
curl procps tmux python3 prometheus openssl apache2-utils
debhelper lintian bash-completion systemd
"

missing=
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
