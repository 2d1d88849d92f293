/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The HTTP response decoder of xenstats top on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "top/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *body, err[256];
    size_t len;

    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    if (top_http_parse_response(buf, size, &body, &len, err, sizeof(err)) == 0) {
        /* The body lies inside the buffer and ends with the NUL. */
        if (body < buf || body + len > buf + size || body[len] != '\0')
            abort();
    }
    free(buf);
    return 0;
}
