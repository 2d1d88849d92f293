# SPDX-License-Identifier: LGPL-2.1-or-later
# For the shell tests outside the integration harness: a scratch folder
# ($tmp, removed on exit) and TAP lines, `ok WHAT` counting, `not_ok WHAT`
# ending the test.  Sourced, after `set -eu`.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() {
    n=$((n + 1))
    echo "ok $n - $1"
}
not_ok() {
    echo "not ok $((n + 1)) - $1"
    exit 1
}
