#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project's test command (README, .ci/run): install what is needed,
# build with warnings as errors, run every suite, then again under
# ASan+UBSan, the concurrency tests under TSan, and each fuzz target for a
# short while.  Prints "N passed, N failed" last; exit status 0 iff all pass.
#   scripts/test.sh            everything
#   QUICK=1 scripts/test.sh    the plain build's suites only
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
failures=()

# step NAME CMD...: run one step and count it
step() {
    local name=$1
    shift
    echo "=== $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "=== FAILED: $name"
    fi
}

# count the tests meson ran in a build dir into the totals
meson_suite() {
    local dir=$1
    shift
    local rc=0
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "$@" || rc=$?
    local log="$dir/meson-logs/testlog.json"
    if [ -f "$log" ]; then
        local ok bad
        ok=$(grep -c '"result": "OK"' "$log" || true)
        bad=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
        passed=$((passed + ok))
        failed=$((failed + bad))
        if [ "$bad" -gt 0 ]; then failures+=("$dir: $bad tests"); fi
    fi
    [ "$rc" -eq 0 ] || { [ -f "$log" ] || { failed=$((failed + 1)); failures+=("$dir: meson test"); }; }
    return 0
}

build() {
    local dir=$1
    shift
    if [ -d "$dir" ]; then
        meson setup --reconfigure "$dir" "$@" >/dev/null || meson setup --wipe "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi && ninja -C "$dir" -j "$jobs"
}

if build build-ci -Dwerror=true; then
    passed=$((passed + 1))
    meson_suite build-ci --no-suite fuzz
else
    failed=$((failed + 1)); failures+=("build (gcc, -Werror)")
fi

if [ -z "${QUICK:-}" ]; then
    if CC=clang build build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true \
        -Dfuzz_seconds="${FUZZ_SECONDS:-20}"; then
        passed=$((passed + 1))
        meson_suite build-asan
    else
        failed=$((failed + 1)); failures+=("build (clang, ASan+UBSan)")
    fi
    if CC=clang build build-tsan -Dwerror=true -Db_sanitize=thread -Db_lundef=false; then
        passed=$((passed + 1))
        meson_suite build-tsan --suite concurrency
    else
        failed=$((failed + 1)); failures+=("build (clang, TSan)")
    fi
fi

echo
for f in "${failures[@]+"${failures[@]}"}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
