/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The value decoder: the first input byte is the type, the next 64 are the
 * entry (padded with zeros).  Each accepted value is compared with the
 * entry decoded another way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pv/parse.h"

#define ENTRY XEN_PV_STATS_ENTRY_SIZE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t entry[ENTRY] = {0}, type;
    char reason[PV_REASON_MAX];
    struct pv_value v;
    uint64_t bits = 0;
    const uint8_t *nul;
    size_t i;
    int r, ok;

    if (size == 0)
        return 0;
    type = data[0];
    memcpy(entry, data + 1, size - 1 < ENTRY ? size - 1 : ENTRY);
    for (i = 8; i-- > 0;)
        bits = bits << 8 | entry[i];

    nul = memchr(entry, 0, ENTRY);
    ok = type >= XEN_PV_STATS_TYPE_S64 && type <= XEN_PV_STATS_TYPE_ASCII;
    if (type == XEN_PV_STATS_TYPE_ASCII) {
        ok = nul != NULL;
        for (i = 0; ok && entry + i < nul; i++)
            ok = entry[i] >= 0x20 && entry[i] < 0x7f;
    }

    memset(&v, 0x5a, sizeof(v));
    r = pv_decode_value(type, entry, &v, reason);
    if (!memchr(reason, '\0', sizeof(reason)) || r != (ok ? 0 : -EINVAL) || (r < 0) != (reason[0] != '\0'))
        abort();
    if (r < 0)
        return 0;
    if (v.type != type)
        abort();
    switch (type) {
    case XEN_PV_STATS_TYPE_S64:
        if ((uint64_t)v.u.s64 != bits)
            abort();
        break;
    case XEN_PV_STATS_TYPE_U64:
        if (v.u.u64 != bits)
            abort();
        break;
    case XEN_PV_STATS_TYPE_DOUBLE:
        if (memcmp(&v.u.dbl, &bits, sizeof(bits)) != 0)
            abort();
        break;
    default:
        i = (size_t)(nul - entry);
        if (memcmp(v.u.ascii, entry, i + 1) != 0)
            abort();
        for (; i < ENTRY; i++)
            if (v.u.ascii[i] != '\0')
                abort();
    }
    return 0;
}
