/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the series' tools/tests checker (test-vcpu-stats, from
 * xen/patches/4.22's tools/tests patch) needs of libxenctrl and Debian 12's
 * 4.17 lacks: xc_domain_getinfo_single(), added in Xen 4.18.  Force-included
 * after <xenctrl.h> by tests/e2e/xen-hv/run.sh when the arm64 sysroot's
 * xenctrl.h does not declare it, so that the checker is built unchanged for
 * the arm64 dom0 of the patched 4.17 boot.
 *
 * As 4.18's: 0 and *info filled when DOMID exists, else -1 with errno set
 * (ESRCH when the first domain at or after DOMID is another one).
 */
#ifndef XENSTATS_XC_COMPAT_417_H
#define XENSTATS_XC_COMPAT_417_H

#include <errno.h>
#include <xenctrl.h>

static inline int xc_domain_getinfo_single(xc_interface *xch, uint32_t domid,
                                           xc_domaininfo_t *info)
{
    int n = xc_domain_getinfolist(xch, domid, 1, info);

    if ( n < 0 )
        return -1;
    if ( n != 1 || info->domain != domid )
    {
        errno = ESRCH;
        return -1;
    }

    return 0;
}

#endif
