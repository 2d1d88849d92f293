#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Each binary links only its own libraries (issue 27; README.md, "Layout"):
#
#   xenstats          the commands without an application: json-c
#   xenstats-agent    the agent: libmicrohttpd, gnutls, libyaml, zlib, libcrypt
#   xenstats-top      top: ncursesw (and its tinfo), json-c
#   xenstats-publish  the guest agent: nothing beyond the Xen libraries
#
# and each of them Xen's stable-soname libraries (libxenstore,
# libxenforeignmemory, libxengnttab, libxenevtchn, libxencall) and libc/libm.
# libxenctrl, libxenguest and libxenlight none of them link: libxenctrl is
# loaded on first use (lib/platform/xen_ctrl.c).
#
# For each binary, its direct needs (readelf -d) must all be in its list,
# `ldd` must name no library of the others' lists nor a dom0 toolstack
# library, and must name the one library the binary is there for.
#
# Usage: check-links.sh BINDIR APPDIR   (the build tree: both the build
# root; installed: /usr/bin and the libexec folder of xenstats).  Prints
# what each binary links and each fault; exit 1 if any.
set -u
[ $# -eq 2 ] || { echo "usage: $0 BINDIR APPDIR" >&2; exit 2; }
bindir=$1 appdir=$2

base='libc|libm|libpthread|libxenstore|libxenforeignmemory|libxengnttab|libxenevtchn|libxencall'
agent='libmicrohttpd|libgnutls|libyaml-0|libz|libcrypt'
top='libncursesw|libtinfo'
toolstack='libxenctrl|libxenguest|libxenlight'

bad=0
fault() {
    echo "check-links: $1"
    bad=1
}

# check BINARY OWN FOREIGN REQUIRED: direct needs within base|OWN, ldd naming
# nothing of FOREIGN or the toolstack, and naming REQUIRED.
check() {
    local bin=$1 own=$2 foreign=$3 required=$4 needed lib libs
    [ -x "$bin" ] || { fault "$bin: not there"; return; }
    needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p') || { fault "$bin: readelf failed"; return; }
    echo "check-links: $(basename "$bin") needs: $(echo $needed)"
    for lib in $needed; do
        [[ ${lib%%.so*} =~ ^($base|$own)$ ]] || fault "$bin: needs $lib, not one of its libraries"
    done
    libs=$(ldd "$bin" | awk '{print $1}') || { fault "$bin: ldd failed"; return; }
    for lib in $libs; do
        [[ ${lib%%.so*} =~ ^($foreign|$toolstack)$ ]] && fault "$bin: ldd names $lib, another binary's or the toolstack's"
    done
    grep -q -E "^($required)\.so" <<<"$libs" || fault "$bin: ldd does not name $required"
}

check "$bindir/xenstats" 'libjson-c' "$agent|$top" 'libjson-c'
check "$appdir/xenstats-agent" "$agent" "$top|libjson-c" 'libmicrohttpd'
check "$appdir/xenstats-top" "$top|libjson-c" "$agent" 'libncursesw'
check "$bindir/xenstats-publish" '' "$agent|$top|libjson-c" 'libxenstore'

[ $bad -eq 0 ] && echo "check-links: each binary links only its own libraries"
exit $bad
