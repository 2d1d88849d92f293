#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion cannot drift from the commands: every subcommand
# `xenstats --help` lists, every emu action its usage names and every
# option (long and short) each --help mentions must be offered by
# contrib/bash-completion/xenstats, for xenstats, xenstats-publish and
# xenstats-xentop.
set -u
: "${XENSTATS:?}" "${XENSTATS_PUBLISH:?}" "${XENSTATS_SOURCE_ROOT:?}"
# shellcheck source=contrib/bash-completion/xenstats
. "$XENSTATS_SOURCE_ROOT/contrib/bash-completion/xenstats"
bad=0
checked=0

# offers WORD ARGV...: does completing the last word of ARGV offer WORD?
offers() {
    local want=$1 w
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _xenstats
    for w in "${COMPREPLY[@]+"${COMPREPLY[@]}"}"; do [ "$w" = "$want" ] && return 0; done
    return 1
}

# expect WORD CONTEXT...: WORD must be offered in one of the contexts
# (argument lists with '|' between them; the word typed is WORD itself)
expect() {
    local want=$1 ctx=()
    shift
    checked=$((checked + 1))
    for w in "$@" "|"; do
        if [ "$w" = "|" ]; then
            offers "$want" "${ctx[@]}" "$want" && return 0
            ctx=()
        else
            ctx+=("$w")
        fi
    done
    echo "not offered: '$want' after '$*'"
    bad=$((bad + 1))
}

# the options a --help text mentions: --long anywhere, -x where listed
options_of() {
    grep -oE -- '(^|[ [(,])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+'
    printf '%s\n' "$1" | grep -oE -- '^ +-[A-Za-z],' | grep -oE -- '-[A-Za-z]'
}

top_help=$("$XENSTATS" --help) || { echo "xenstats --help failed"; exit 1; }
commands=$(printf '%s\n' "$top_help" | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 {print $1}')
[ -n "$commands" ] || { echo "no commands in xenstats --help"; exit 1; }
for c in $commands; do expect "$c" xenstats; done
for o in $(options_of "$top_help" <<<"$top_help") -b -v -q -h -V; do expect "$o" xenstats; done

for c in $commands; do
    help=$("$XENSTATS" "$c" --help) || { echo "xenstats $c --help failed"; bad=$((bad + 1)); continue; }
    if [ "$c" = emu ]; then
        for a in $(printf '%s\n' "$help" | grep -oE 'xenstats emu [a-z|-]+' | awk '{print $3}' | tr '|' ' ' |
            sed 's/\[run\]/run/'); do
            expect "$a" xenstats emu
        done
        ctx=(xenstats emu "|" xenstats emu run "|" xenstats emu shutdown web "|" xenstats emu destroy 3)
    else
        ctx=(xenstats "$c")
    fi
    for o in $(options_of "$help" <<<"$help"); do expect "$o" "${ctx[@]}"; done
done

help=$("$XENSTATS_PUBLISH" --help) || { echo "xenstats-publish --help failed"; exit 1; }
for o in $(options_of "$help" <<<"$help") --version; do expect "$o" xenstats-publish; done
"$XENSTATS_PUBLISH" --version >/dev/null || { echo "xenstats-publish --version failed"; bad=$((bad + 1)); }

# the xenstats-xentop link completes xentop's options
help=$("$XENSTATS" xentop --help) || { echo "xenstats xentop --help failed"; exit 1; }
for o in $(options_of "$help" <<<"$help"); do expect "$o" xenstats-xentop; done

echo "$checked words checked, $bad not offered"
[ "$bad" -eq 0 ] && [ "$checked" -gt 50 ]
