/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include <xenstats/pv.h>

#include "pv/parse.h"
#include "util/util.h"

const char *xenstats_pv_type_name(unsigned int type)
{
    static const char *const names[] = {NULL, "s64", "u64", "double", "ascii"};

    return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

int xenstats_pv_name_check(const char *name, bool is_path_component)
{
    char reason[PV_REASON_MAX];
    size_t len;

    if (!name)
        return set_errno(-EINVAL);
    len = strnlen(name, XEN_PV_STATS_NAME_SIZE);
    if (pv_name_check(name, len + (len < XEN_PV_STATS_NAME_SIZE ? 1 : 0), reason) < 0)
        return set_errno(-EINVAL);
    if (is_path_component && strchr(name, '/'))
        return set_errno(-EINVAL);
    return 0;
}

const char *xenstats_pv_set_state_name(enum xenstats_pv_set_state state)
{
    static const char *const names[] = {"active", "sampling", "stale", "timed-out", "rejected", "withdrawn"};

    return (unsigned int)state < ARRAY_SIZE(names) ? names[state] : "unknown";
}
