#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Permission matrix and quotas through the real protocol, exact errnos:
# a guest reaches neither another guest's nodes nor dom0's unless granted,
# writes its own writable subtrees, stays within its quotas; dom0 does
# everything.
. "$XENSTATS_SOURCE_ROOT/tests/integration/lib.sh"
. "$XENSTATS_SOURCE_ROOT/tests/xenstore/xs_lib.sh"

start_emu -D name=alice -D name=bob
wait_for_socket 2
xsc 0 write /dom0only secret >/dev/null
xsc 0 write /granted/r forall >/dev/null
xsc 0 setperms /granted/r n0 r1 >/dev/null
xsc 0 write /granted/w open >/dev/null
xsc 0 setperms /granted/w n0 b1 >/dev/null

# domain  operation           expected
matrix() {
    cat <<'M'
1 read /dom0only                   ERR EACCES
1 read /nonexistent                ERR EACCES
1 write /dom0only x                ERR EACCES
1 write /newtop x                  ERR EACCES
1 rm /dom0only                     ERR EACCES
1 ls /local/domain                 ERR EACCES
1 getperms /dom0only               ERR EACCES
1 read /local/domain/2/name        ERR EACCES
1 read /local/domain/2/nothing     ERR EACCES
1 write /local/domain/2/data/x y   ERR EACCES
1 rm /local/domain/2/data          ERR EACCES
1 read name                        OK alice
1 read /local/domain/1/domid       OK 1
1 read nothing                     ERR ENOENT
1 write name mallory               ERR EACCES
1 write newkey x                   ERR EACCES
1 rm name                          ERR EACCES
1 write data/x 1                   OK
1 write attr/a/b/c 1               OK
1 write error/e 1                  OK
1 write drivers/d 1                OK
1 write feature/f 1                OK
1 write control/shutdown poweroff  OK
1 write device/suspend/event-channel 5 OK
1 write control/other x            ERR EACCES
1 write cpu/0/availability offline ERR EACCES
1 getperms data/x                  OK n1
1 setperms data/x n1 r2            OK
1 setperms data/x n2               ERR EPERM
1 setperms name n1                 ERR EACCES
1 setperms data/x n1 r2 r3 r4 r5 r6 ERR ENOSPC
1 read /granted/r                  OK forall
1 write /granted/r x               ERR EACCES
1 write /granted/w mine            OK
1 read /granted/w                  OK mine
1 setperms /granted/w n1           ERR EACCES
1 rm /granted/w                    OK
1 mkdir data/m                     OK
1 rm data/m                        OK
1 read /vm                         ERR EACCES
1 introduced 2                     ERR EACCES
2 read /local/domain/1/data/x      OK 1
2 write /local/domain/1/data/x 9   ERR EACCES
2 read /local/domain/1/attr/a/b/c  ERR EACCES
2 read /granted/r                  ERR EACCES
0 read /dom0only                   OK secret
0 read /local/domain/1/data/x      OK 1
0 write /local/domain/2/data/y z   OK
0 write /local/domain/1/name alice OK
0 setperms /local/domain/1/data/x n2 OK
0 getperms /local/domain/1/data/x  OK n2
0 rm /local/domain/2/data/y        OK
0 ls /local/domain                 OK 0,1,2
0 introduced 1                     OK T
M
}
while read -r dom op args; do
    # shellcheck disable=SC2086
    set -- $args
    want=
    cmdargs=()
    while [ $# -gt 0 ]; do
        case "$1" in OK | ERR) want="$*"; break ;; esac
        cmdargs+=("$1")
        shift
    done
    check "dom$dom $op ${cmdargs[*]}" "$want" xsc "$dom" "$op" "${cmdargs[@]}"
done < <(matrix)

# Quotas of a guest, as C xenstored counts them.
check "node size: below 2048 bytes of record" "OK" xsc 2 writen data/big 2015
check "node size: ENOSPC at 2048" "ERR ENOSPC" xsc 2 writen data/big 2016
check "dom0 has no size quota" "OK" xsc 0 writen /local/domain/2/data/big 4000
xsc 0 rm /local/domain/2/data/big >/dev/null
# Bob owns 12 nodes already: the 11 guest-writable subtrees libxl creates
# and alice's data/x that dom0 gave him above.  fill writes data/d<i>/n<j>,
# 64 to a directory: 972 writes and their 16 directories make 1000.
check "node quota" "ERR ENOSPC after 972" xsc 2 fill nodes data
check "node quota holds" "ERR ENOSPC" xsc 2 write data/one-more x
check "dom0 still writes in the guest's tree" "OK" xsc 0 write /local/domain/2/data/by-dom0 x
check "watch quota" "ERR E2BIG after 128" xsc 2 fill watches data
check "transaction quota" "ERR ENOSPC after 10" xsc 2 fill transactions data
check "dom0 has no watch quota" "OK 4999" xsc 0 fill watches /
check "guest path length quota" "ERR EINVAL" xsc 1 write "data/$(head -c 2100 /dev/zero | tr '\0' a)" x
check "other guest unaffected by bob's quota" "OK" xsc 1 write data/after x
stop_emu
