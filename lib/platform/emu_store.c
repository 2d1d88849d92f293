/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * emu backend, store ops: the caller's domain talks to the emulator's
 * xenstore socket <run dir>/xenstore/<domid>; which socket decides which
 * domain the store sees.  Access itself is Debian's libxenstore, as on Xen.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <xenstore.h>

#include "emu_backend.h"
#include "util/util.h"

static struct xs_handle *emu_store_open(struct platform *p, unsigned long xs_open_flags)
{
    char dir[PATH_MAX - 32], path[PATH_MAX];
    int r = emu_run_dir(dir, sizeof(dir));

    if (r < 0) {
        errno = -r;
        return NULL;
    }
    if (snprintf(path, sizeof(path), "%s/xenstore/%u", dir, p->self_domid) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    /* the domain was migrated, restored or rebooted: its processes are
     * the new domain's */
    if (access(path, F_OK) < 0 && errno == ENOENT)
        snprintf(path, sizeof(path), "%s/xenstore/%u", dir, emu_domid_follow(dir, p->self_domid));
    /*
     * libxenstore takes its socket from $XENSTORED_PATH and nowhere else.
     * Setting it is process-wide, so this is not thread-safe against
     * getenv() elsewhere; every open in a process names the same domain,
     * so concurrent opens agree on the value.
     */
    if (setenv("XENSTORED_PATH", path, 1) < 0)
        return NULL;
    return xs_open(xs_open_flags | XS_OPEN_SOCKETONLY);
}

const struct platform_store_ops emu_store_ops = {
    .open = emu_store_open,
};
