/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the path and permission parsers, fed guest-controlled
 * strings.  Byte 0 picks the domain and flags; the rest, split at NULs, is
 * a path and permission strings.  A canonical path must satisfy the rules
 * it was checked against, and a parsed permission must format back to
 * the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emu/xenstore/xs_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const char *path, uint32_t domid, bool priv, bool special)
{
    static char buf[XS_PATH_MAX + 1];
    size_t n, i;

    if (xs_path_canonical(domid, priv, special, path, buf, sizeof(buf)) < 0)
        return;
    n = strlen(buf);
    if (n == 0 || n > XS_PATH_MAX)
        abort();
    if (buf[0] == '@') {
        if (!special || strchr(buf, '/'))
            abort();
        return;
    }
    if (buf[0] != '/' || (n > 1 && buf[n - 1] == '/') || strstr(buf, "//"))
        abort();
    for (i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/_@", buf[i]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text, *p, *end;
    uint32_t domid;
    bool first = true;

    if (size < 1 || size > 8192)
        return 0;
    domid = data[0] >> 2;
    text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    end = text + size - 1;
    for (p = text; p <= end; p += strlen(p) + 1) {
        struct xs_perm perm, again;
        char out[16];

        if (first) {
            check_path(p, domid, data[0] & 1, data[0] & 2);
            first = false;
            continue;
        }
        if (xs_perm_parse(p, &perm) < 0)
            continue;
        if (perm.domid > XS_DOMID_MAX || perm.perm > XS_STORE_PERM_BOTH)
            abort();
        if (xs_perm_format(&perm, out, sizeof(out)) < 0 || xs_perm_parse(out, &again) < 0 ||
            again.domid != perm.domid || again.perm != perm.perm)
            abort();
    }
    free(text);
    return 0;
}
