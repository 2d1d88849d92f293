/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON reader on any bytes: no crash, no leak, and what it accepts is
 * a snapshot the writers take (and, written as JSON, read again).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct snapshot *s = NULL, *again = NULL;
    struct strbuf b = {0};
    char err[256];

    if (snapshot_read_json((const char *)data, size, &s, err, sizeof(err)) < 0)
        return 0;
    if (render_prometheus(s, true, &b) < 0)
        abort();
    strbuf_free(&b);
    if (render_json(s, &b) < 0)
        abort();
    if (snapshot_read_json(b.data, b.len, &again, err, sizeof(err)) < 0)
        abort();
    strbuf_free(&b);
    snapshot_unref(again);
    snapshot_unref(s);
    return 0;
}
