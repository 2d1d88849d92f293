# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by xen/build-hypervisor.sh and xen/build-xen-tree.sh: unpacking an
# upstream archive (checked against SHA256SUMS) and applying a patch series
# to a working copy, so that a rerun with another series only rebuilds what
# the two series touch.  The caller defines log() and die().

# tree_unpack ARCHIVE DEST: ARCHIVE (a path in a directory holding
# SHA256SUMS) unpacked into DEST, once; its first path component is dropped
tree_unpack() {
    local archive=$1 dest=$2 dir base
    [ -f "$dest/xen/Makefile" ] && return 0
    dir=$(dirname "$archive") base=$(basename "$archive")
    [ -f "$archive" ] || die "no $base in $dir (set XEN_SRC_DIR)"
    (cd "$dir" && grep " $base\$" SHA256SUMS | sha256sum -c --quiet -) ||
        die "$base does not match $dir/SHA256SUMS"
    rm -rf "$dest.tmp"
    mkdir -p "$dest.tmp"
    tar -xJf "$archive" -C "$dest.tmp" --strip-components=1
    mv "$dest.tmp" "$dest"
    log "unpacked $base (checksum verified)"
}

# tree_copy SRC TREE NAME: TREE made a copy of SRC unless it already is one
# of NAME (a tree of another source is made again)
tree_copy() {
    local src=$1 tree=$2 name=$3
    if [ -d "$tree" ] && [ "$(cat "$tree/.xenstats-source" 2>/dev/null)" != "$name" ]; then
        log "$tree is not of $name: making it again"
        rm -rf "$tree"
    fi
    [ -d "$tree" ] && return 0
    log "copying $name to $tree"
    rm -rf "$tree.tmp"
    cp -a "$src" "$tree.tmp"
    echo "$name" >"$tree.tmp/.xenstats-source"
    mv "$tree.tmp" "$tree"
}

# tree_apply TREE PATCH...: the patches applied to TREE in order with
# `git apply` (no fuzz: a patch that does not apply fails loudly), but for
# a cover letter.  Copies
# of what was applied are kept in TREE/.xenstats-applied; when the list
# differs, the old one is reversed first.
tree_apply() {
    local tree=$1 applied=$1/.xenstats-applied same=1 i n=0 p
    shift
    local series=() old=()
    # a series' cover letter (git format-patch --cover-letter) has no diff
    for p in "$@"; do
        case $(basename "$p") in 0000-cover-letter.patch) ;; *) series+=("$p") ;; esac
    done
    (
        cd "$tree" || exit 1
        # The tree may sit inside another git work tree (this repository's):
        # git apply would then take paths relative to that repository's top
        # and silently skip them.  Make it treat the tree as a plain directory.
        GIT_CEILING_DIRECTORIES=$(dirname "$tree")
        export GIT_CEILING_DIRECTORIES
        if [ -d "$applied" ]; then
            mapfile -t old < <(ls "$applied" | sort)
            if [ ${#old[@]} -ne ${#series[@]} ]; then
                same=0
            else
                for i in "${!series[@]}"; do
                    cmp -s "${series[$i]}" "$applied/${old[$i]}" || { same=0; break; }
                done
            fi
            if [ $same = 0 ]; then
                log "series changed: reversing the one applied before"
                for ((i = ${#old[@]} - 1; i >= 0; i--)); do
                    git apply -R "$applied/${old[$i]}" ||
                        die "cannot reverse ${old[$i]}; remove $tree and rerun"
                done
                rm -rf "$applied"
            fi
        else
            same=0
        fi
        [ $same = 1 ] && exit 0
        mkdir -p "$applied.new"
        for p in "${series[@]}"; do
            n=$((n + 1))
            log "applying $(basename "$p")"
            git apply --check "$p" 2>&1 || die "$(basename "$p") does not apply to $(cat .xenstats-source)"
            git apply "$p"
            cp "$p" "$applied.new/$(printf '%03d' $n)-$(basename "$p")"
        done
        mv "$applied.new" "$applied"
    )
}

# tree_add_extras: the patches of the directories in XEN_HV_EXTRA_PATCHES
# (relative to REPO) appended to the caller's array series, their names to
# its suffix
tree_add_extras() {
    local extra
    for extra in ${XEN_HV_EXTRA_PATCHES:-}; do
        case $extra in /*) ;; *) extra=$REPO/$extra ;; esac
        [ -d "$extra" ] || die "no patch directory $extra"
        series+=("$extra"/*.patch)
        suffix=$suffix-$(basename "$extra")
    done
}

# tree_kconfig_symbols PATCH...: the Kconfig symbols the patches add
tree_kconfig_symbols() {
    cat "$@" /dev/null | sed -n 's/^+config \([A-Z0-9_]*\).*/\1/p' | sort -u
}
