/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON and label string writers on any bytes (a guest's domain name,
 * text it wrote): the JSON must parse, every output must be valid UTF-8,
 * and valid input must come back unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "export/export.h"
#include "utf8_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    struct export_strbuf j = {0}, l = {0};
    struct json_object *o;
    size_t len;

    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    len = strlen(in);

    export_strbuf_json_string(&j, in);
    export_strbuf_label_value(&j, "");
    if (j.failed) {
        free(in);
        export_strbuf_free(&j);
        return 0;
    }
    if (!ref_utf8_valid((const unsigned char *)j.data, strlen(j.data)))
        abort();
    o = json_tokener_parse(j.data);
    if (!o || !json_object_is_type(o, json_type_string))
        abort();
    if (ref_utf8_valid((const unsigned char *)in, len) &&
        ((size_t)json_object_get_string_len(o) != len || memcmp(json_object_get_string(o), in, len)))
        abort();
    json_object_put(o);

    export_strbuf_label_value(&l, in);
    if (!l.failed) {
        if (!ref_utf8_valid((const unsigned char *)l.data, strlen(l.data)) || strchr(l.data, '\n'))
            abort();
        if (ref_utf8_valid((const unsigned char *)in, len) && !strchr(in, '\\') && !strchr(in, '"') &&
            !strchr(in, '\n') && strcmp(l.data, in))
            abort();
    }
    export_strbuf_free(&j);
    export_strbuf_free(&l);
    free(in);
    return 0;
}
