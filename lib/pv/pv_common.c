/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include <xenstats/pv_common.h>
#include <xenstats/pv_monitor.h>

#include "pv/parse.h"
#include "util/util.h"

const char *xenstats_pv_type_name(unsigned int type)
{
    static const char *const names[] = {NULL, "s64", "u64", "double", "ascii"};

    return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

int xenstats_pv_name_check(const char *name)
{
    char reason[PV_REASON_MAX];
    size_t len;

    if (!name)
        return set_errno(-EINVAL);
    len = strnlen(name, XEN_PV_STATS_NAME_SIZE);
    if (pv_name_check(name, len + (len < XEN_PV_STATS_NAME_SIZE ? 1 : 0), reason) < 0)
        return set_errno(-EINVAL);
    return 0;
}

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '@';
}

int xenstats_pv_name_key(const char *name, char *key, size_t len)
{
    size_t n = 0;
    bool gap = false;

    if (xenstats_pv_name_check(name) < 0)
        return -EINVAL;
    for (; *name; name++) {
        if (key_char(*name)) {
            if (gap && n) {
                if (n + 1 >= len)
                    return set_errno(-ENOBUFS);
                key[n++] = '_';
            }
            gap = false;
            if (n + 1 >= len)
                return set_errno(-ENOBUFS);
            key[n++] = *name;
        } else {
            gap = true;
        }
    }
    if (gap && n) {
        if (n + 1 >= len)
            return set_errno(-ENOBUFS);
        key[n++] = '_';
    }
    if (!n) { /* nothing usable, e.g. "###": a fixed key */
        if (len < 2)
            return set_errno(-ENOBUFS);
        key[n++] = '_';
    }
    key[n] = '\0';
    return 0;
}

/* 1 if s is a node name xenstored accepts (and so one of our keys could be). */
bool pv_key_ok(const char *s)
{
    size_t n = 0;

    for (; s[n]; n++)
        if (!key_char(s[n]) || n >= XEN_PV_STATS_NAME_MAX)
            return false;
    return n > 0;
}

const char *xenstats_pv_set_state_name(enum xenstats_pv_set_state state)
{
    static const char *const names[XENSTATS_PV_NR_SET_STATES] = {
        [XENSTATS_PV_SET_ACTIVE] = "active",     [XENSTATS_PV_SET_SAMPLING] = "sampling",
        [XENSTATS_PV_SET_STALE] = "stale",       [XENSTATS_PV_SET_TIMED_OUT] = "timed-out",
        [XENSTATS_PV_SET_REJECTED] = "rejected", [XENSTATS_PV_SET_WITHDRAWN] = "withdrawn",
    };

    return (unsigned int)state < XENSTATS_PV_NR_SET_STATES ? names[state] : "unknown";
}
