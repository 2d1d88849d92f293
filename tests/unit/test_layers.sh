#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# scripts/check-layers.sh passes on this checkout, and fails, naming the
# place, on a copy of it with one include that goes the wrong way, for each
# of its rules.
set -eu
: "${XENSTATS_SOURCE_ROOT:?}"
check=$XENSTATS_SOURCE_ROOT/scripts/check-layers.sh
. "$(dirname "$0")/../tap.sh"

"$check" "$XENSTATS_SOURCE_ROOT" >"$tmp/out" || { cat "$tmp/out"; not_ok "this checkout"; }
ok "this checkout"

mkdir "$tmp/copy"
(cd "$XENSTATS_SOURCE_ROOT" && tar -cf - include lib cli agent top tools kmod) | tar -xf - -C "$tmp/copy"
"$check" "$tmp/copy" >"$tmp/out" || { cat "$tmp/out"; not_ok "a copy of it"; }
ok "a copy of it"

# plant FILE LINE WHY: the copy with LINE appended to FILE fails the check,
# which names FILE and the line; FILE is restored afterwards.
plant() {
    local file=$1 line=$2 why=$3 at out
    [ -f "$tmp/copy/$file" ] || not_ok "$why: no $file to plant in"
    cp "$tmp/copy/$file" "$tmp/saved"
    printf '%s\n' "$line" >>"$tmp/copy/$file"
    at=$(wc -l <"$tmp/copy/$file")
    if out=$("$check" "$tmp/copy" 2>&1); then
        not_ok "$why: passed with '$line' in $file"
    fi
    if [[ $out != *"$file:$at: "* ]]; then
        echo "$out"
        not_ok "$why: the failure does not name $file:$at"
    fi
    cp "$tmp/saved" "$tmp/copy/$file"
    ok "$why"
}

plant lib/platform/emu.c '#include "emu/emu.h"' "the emu backend includes the emulator"
plant lib/platform/emu_backend.h '#include "emu/hyper/hyper_private.h"' "the emu backend includes the emulator's private header"
plant lib/emu/emu_host.c '#include "platform/platform.h"' "the emulator includes the platform layer"
plant lib/emu/hyper/hyper.c '#  include "platform/emu_backend.h"' "the emulator includes the emu backend's header (spaced #  include)"
plant lib/emu/proto/run_dir.h '#include "emu/emu.h"' "the protocol includes the emulator above it"
plant lib/pv/provider.c '#include "../../cli/tool.h"' "the library includes cli/"
plant lib/collect/collector.c '#include "top/snapshot.h"' "the library includes an application"
plant cli/tool.c '#include "agent/web/http_guard.h"' "cli/ includes an application"
plant top/top_direct.c '#include "agent/web/http_guard.h"' "one application includes another"
plant agent/web/http_guard.c '#include "emu/emu.h"' "an application includes the emulator"
plant lib/platform/host.c '#include "pv/parse.h"' "the platform layer includes the library above it"
plant lib/util/util.h '#include "platform/platform.h"' "the helpers include the platform layer"
plant include/xenstats/xenstats.h '#include "../../lib/util/util.h"' "the public API includes lib/"
plant include/xenstats/abi/pv_stats.h '#include <string.h>' "the ABI includes a hosted C header"
plant include/xenstats/abi/vcpu_stats.h '#include <xenstats/xenstats.h>' "the ABI includes the public API"
plant kmod/main.c '#include <xenstats/pv.h>' "the kernel module includes more than the ABI"

"$check" "$tmp/copy" >"$tmp/out" || { cat "$tmp/out"; not_ok "the copy, restored"; }
ok "the copy, restored"
