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
    struct export_snapshot *s = NULL, *again = NULL;
    struct export_strbuf b = {0};
    char err[256];

    if (export_snapshot_read_json((const char *)data, size, &s, err, sizeof(err)) < 0)
        return 0;
    if (export_render_prometheus(s, true, &b) < 0)
        abort();
    export_strbuf_free(&b);
    if (export_render_json(s, &b) < 0)
        abort();
    if (export_snapshot_read_json(b.data, b.len, &again, err, sizeof(err)) < 0)
        abort();
    export_strbuf_free(&b);
    export_snapshot_unref(again);
    export_snapshot_unref(s);
    return 0;
}
