# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Sourced by the real-Xen runners (tests/e2e/xen/run.sh,
# tests/e2e/xen-hv/run.sh).  Debian's dom0 kernel has been seen, once in
# many CI boots, to oops in an interrupt and panic 2 s into its boot under
# QEMU's TCG, before any test code ran.  Such a boot says nothing about
# Xen or xenstats, and the runners boot once more; a panic once dom0's
# /init has started is a failure like any other.

# early_panic LOG MARKER WHO: true when LOG shows a kernel panic and not
# MARKER (what dom0's /init prints first); then the console is kept as
# LOG.early-panic and WHO says so, with the panic's last lines
early_panic() {
    local log=$1 marker=$2 who=$3
    grep -aq "Kernel panic" "$log" && ! grep -aq "$marker" "$log" || return 1
    cp "$log" "$log.early-panic"
    echo "$who dom0's kernel panicked before its /init ran (console kept in $log.early-panic):"
    tr -d '\r' <"$log" | grep -a -B12 "Kernel panic" | head -30
    echo "$who booting once more"
}
