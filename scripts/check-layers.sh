#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Includes go downward only, layer by layer (README.md, "Layout"):
#
#   tools/                      the mains and the subcommand table: anything
#                               below
#   agent/ (with agent/web/),   the applications: each itself, cli/, the
#   top/                        library, util, public, ABI; not each other
#   cli/                        what every command shares (it prints): itself,
#                               the library, util, public, ABI
#   lib/{vcpu,pv,export,guest,  the library: itself, platform, util, public, ABI
#        collect}
#   lib/emu/                    the emulator (a server): itself, its protocol,
#                               util, public, ABI; nothing of lib/platform
#   lib/platform/               the backends (clients): itself, the emulator's
#                               protocol (lib/emu/proto/) and nothing else of
#                               lib/emu, util, public, ABI
#   lib/emu/proto/              the emulator's protocol: itself, util, public, ABI
#   lib/util/                   helpers: itself, public, ABI
#   include/xenstats/           the public API: itself and the ABI
#   include/xenstats/abi/       wire layouts: each other and freestanding C
#                               headers only (the hypervisor and a kernel
#                               module include them)
#   kmod/                       the kernel module: of the project, the ABI only
#
# Usage: check-layers.sh [ROOT] (default: this checkout).  Prints each
# include that goes the wrong way as file:line; exit 1 if any.
set -u
root=${1:-"$(dirname "$0")/.."}
cd "$root" || exit 2

# C11's freestanding headers, and the kernel's fixed-width types (the ABI
# takes those inside a Linux module, under __KERNEL__).
freestanding=" float.h iso646.h limits.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdnoreturn.h linux/types.h "

# layer=the layer a file of the checkout is in, or "" for one no rule covers.
layer_of() {
    case $1 in
    include/xenstats/abi/*) layer=abi ;;
    include/xenstats/*) layer=public ;;
    lib/util/*) layer=util ;;
    lib/emu/proto/*) layer=emu-proto ;;
    lib/emu/*) layer=emu ;;
    lib/platform/*) layer=platform ;;
    lib/*) layer=library ;;
    cli/*) layer=cli ;;
    agent/*) layer=agent ;;
    top/*) layer=top ;;
    tools/*) layer=tools ;;
    kmod/*) layer=kmod ;;
    *) layer="" ;;
    esac
}

# allowed=the layers a layer may include, itself among them.
allowed_from() {
    case $1 in
    abi) allowed="" ;;
    public) allowed="abi" ;;
    util) allowed="public abi" ;;
    emu-proto) allowed="util public abi" ;;
    platform) allowed="emu-proto util public abi" ;;
    emu) allowed="emu-proto util public abi" ;;
    library) allowed="platform util public abi" ;;
    cli) allowed="library util public abi" ;;
    agent | top) allowed="cli library util public abi" ;;
    tools) allowed="agent top cli library emu emu-proto platform util public abi" ;;
    kmod) allowed="abi" ;;
    esac
    allowed=" $1 $allowed "
}

# path=$1 without . and .. components
normalize() {
    local IFS=/ part out=()
    path=$1
    [[ $path == *./* ]] || return 0
    for part in $1; do
        case $part in
        '' | .) ;;
        ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
        *) out+=("$part") ;;
        esac
    done
    path="${out[*]}"
}

# target=the checkout's file an include names (quoted: beside the includer
# first, then the include path -Iinclude -Ilib -I.; <>: the include path),
# or "".
resolve() {
    local file=$1 kind=$2 name=$3 dir
    target=""
    if [ "$kind" = '"' ] && [ -f "${file%/*}/$name" ]; then
        normalize "${file%/*}/$name"
        target=$path
        return
    fi
    for dir in include lib .; do
        if [ -f "$dir/$name" ]; then
            normalize "$dir/$name"
            target=$path
            return
        fi
    done
}

include_re='^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"]'
bad=0
violation() {
    echo "check-layers: $1"
    bad=1
}

mapfile -t sources < <(find include lib cli agent top tools kmod -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) \
    2>/dev/null | LC_ALL=C sort)
[ ${#sources[@]} -gt 0 ] || { echo "check-layers: no sources under $root"; exit 2; }
while IFS= read -r line; do
    [[ $line =~ $include_re ]] || continue
    file=${BASH_REMATCH[1]}
    lineno=${BASH_REMATCH[2]}
    kind=${BASH_REMATCH[3]}
    name=${BASH_REMATCH[4]}
    layer_of "$file"
    from=$layer
    [ -n "$from" ] || continue
    resolve "$file" "$kind" "$name"
    if [ -z "$target" ]; then
        # a system header: only the ABI is restricted in those
        if [ "$from" = abi ] && [[ $freestanding != *" $name "* ]]; then
            violation "$file:$lineno: includes <$name>: the ABI headers include only freestanding C headers"
        fi
        continue
    fi
    layer_of "$target"
    allowed_from "$from"
    if [ -z "$layer" ]; then
        violation "$file:$lineno: includes $target, which is in no layer (tests/, bench/...)"
    elif [[ $allowed != *" $layer "* ]]; then
        violation "$file:$lineno: includes $target: $from may include only${allowed% }"
    fi
done < <(grep -H -n -E '^[[:space:]]*#[[:space:]]*include' "${sources[@]}")

[ $bad -eq 0 ] && echo "check-layers: ${#sources[@]} files, every include goes downward"
exit $bad
