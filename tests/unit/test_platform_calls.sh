#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every platform op is called through its wrapper in
# lib/platform/platform_ops.h, which alone decides what a missing op does.
# Fails on a caller that reaches into a backend's ops tables itself: a
# p->backend->table chain, or a local pointer to an ops table.
set -u
: "${XENSTATS_SOURCE_ROOT:?}"
cd "$XENSTATS_SOURCE_ROOT" || exit 1
dirs="lib tools tests bench"
wrappers=lib/platform/platform_ops.h
found=$(grep -rnE --include='*.c' --include='*.h' \
    -e '(->|\.)backend->' \
    -e 'struct platform_[a-z]+_ops \*[a-z_]+ *=' \
    $dirs | grep -v "^$wrappers:")
if [ -n "$found" ]; then
    echo "platform ops called around their wrappers (use lib/platform/platform_ops.h):"
    echo "$found"
    exit 1
fi
echo "every platform op goes through its wrapper"
