# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the xenstore integration tests; source after lib.sh.
: "${XS_CLIENT:?XS_CLIENT must name the xs_client test program}"

# xs_sock DOMID: the socket a process of DOMID talks to.
xs_sock() {
    echo "$XENSTATS_EMU_DIR/xenstore/$1"
}

# as_dom DOMID CMD...: run CMD as a process of domain DOMID.
as_dom() {
    local d=$1
    shift
    XENSTORED_PATH=$(xs_sock "$d") timeout 20 "$@"
}

# xsc DOMID ARGS...: the C client as DOMID.
xsc() {
    local d=$1
    shift
    as_dom "$d" "$XS_CLIENT" "$@"
}

# check DESC WANT CMD...: CMD's stdout must be exactly WANT.
check() {
    local what=$1 want=$2
    shift 2
    local got
    got=$("$@" 2>&1) || true
    [ "$got" = "$want" ] || fail "$what: got '$got', want '$want'"
    pass "$what"
}

# wait_for_socket DOMID
wait_for_socket() {
    local i
    for i in $(seq 1 100); do
        [ -S "$(xs_sock "$1")" ] && return 0
        sleep 0.05
    done
    fail "no xenstore socket for domain $1"
}
