#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installed API headers: each is installed and compiles on its own (C11
# -pedantic, and C++); the provider's header declares nothing of the
# monitor and the monitor's nothing of the provider, while <xenstats/pv.h>
# still declares both; and none speaks the project's history.
set -eu
: "${XENSTATS_SOURCE_ROOT:?}"
. "$(dirname "$0")/../tap.sh"
cc=${CC:-cc}
cxx=${CXX:-c++}
root=$XENSTATS_SOURCE_ROOT

# compile LANG SOURCE: 0 when SOURCE (text) compiles; the messages in $tmp/err
compile() {
    if [ "$1" = c ]; then
        printf '%s\n' "$2" >"$tmp/t.c"
        "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -I"$root/include" -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"
    else
        printf '%s\n' "$2" >"$tmp/t.cc"
        "$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$root/include" -c "$tmp/t.cc" -o "$tmp/t.o" 2>"$tmp/err"
    fi
}

headers=()
for h in "$root"/include/xenstats/*.h "$root"/include/xenstats/abi/*.h; do
    headers+=("${h#"$root"/include/}")
done
[ ${#headers[@]} -ge 7 ] || not_ok "found only ${#headers[@]} headers under include/xenstats"

for h in "${headers[@]}"; do
    grep -q "'include/$h'" "$root/meson.build" || not_ok "$h is not installed (install_headers in meson.build)"
done
ok "every header under include/xenstats is installed"

for h in "${headers[@]}"; do
    compile c "#include <$h>" || { cat "$tmp/err"; not_ok "$h alone, C11"; }
    compile c++ "#include <$h>" || { cat "$tmp/err"; not_ok "$h alone, C++"; }
done
ok "each header compiles alone, as C11 and as C++"

# the monitor's options are not declared by the provider's header, and the
# other way round; each test fails for the name it is about
monitor_use='static struct xenstats_monitor_opts o = {sizeof(o), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};'
provider_use='static struct xenstats_provider_opts o = {sizeof(o), -1, 0};'
compile c "#include <xenstats/pv_monitor.h>
$monitor_use" || { cat "$tmp/err"; not_ok "pv_monitor.h declares the monitor"; }
compile c "#include <xenstats/pv_provider.h>
$provider_use" || { cat "$tmp/err"; not_ok "pv_provider.h declares the provider"; }
ok "each side's header declares its side"
if compile c "#include <xenstats/pv_provider.h>
$monitor_use" || ! grep -q xenstats_monitor_opts "$tmp/err"; then
    cat "$tmp/err"
    not_ok "pv_provider.h declares the monitor"
fi
if compile c "#include <xenstats/pv_monitor.h>
$provider_use" || ! grep -q xenstats_provider_opts "$tmp/err"; then
    cat "$tmp/err"
    not_ok "pv_monitor.h declares the provider"
fi
ok "the provider's header declares nothing of the monitor, nor the other way round"
compile c "#include <xenstats/pv.h>
$monitor_use
static struct xenstats_provider_opts p = {sizeof(p), -1, 0};
int use(void);
int use(void) { return xenstats_pv_name_check(\"x\") + (int)o.size + (int)p.size; }" ||
    { cat "$tmp/err"; not_ok "pv.h declares both sides"; }
ok "pv.h still declares both sides"

# words of the project's history (its design seeds), not of the API
if grep -n -i -E 'seed [0-9]{3}' "${headers[@]/#/$root/include/}"; then
    not_ok "an installed header speaks of the project's seeds"
fi
ok "no installed header speaks of the project's seeds"
