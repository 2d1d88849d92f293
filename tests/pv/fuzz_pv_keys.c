/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The key parsers.  The input is a directory listing, one key a line:
 * "name=value", or "name" alone for a key that vanished before its value
 * was read.  Names and values point straight into the input, never NUL
 * terminated, so a read past a length is caught.  Every accepted set is
 * checked against the keys re-read one by one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/xenstats.h>

#include "pv/parse.h"

#define MAX_LINES 1024

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *names[MAX_LINES], *values[MAX_LINES];
static size_t name_lens[MAX_LINES], value_lens[MAX_LINES];

/* The number rules the obvious way, for a string ending at len or a NUL. */
static int reference_number(const char *s, size_t len, uint32_t max, uint32_t *ret)
{
    uint64_t v = 0;
    size_t n = 0, i;

    while (n < len && s[n])
        n++;
    if (n == 0 || (n > 1 && s[0] == '0'))
        return -EINVAL;
    for (i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
    if (n > 10)
        return -ERANGE;
    for (i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > max)
        return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

static void check_number(const char *s, size_t len, uint32_t max)
{
    uint32_t got = 0, want = 0;
    int r = pv_parse_number(s, len, max, &got), expected = reference_number(s, len, max, &want);

    if (r != expected || (r == 0 && got != want))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    char reason[PV_REASON_MAX];
    struct pv_set_keys keys;
    size_t count = 0, i;
    int r;

    while (p < end && count < MAX_LINES) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *line_end = nl ? nl : end;
        const char *eq = memchr(p, '=', (size_t)(line_end - p));

        names[count] = p;
        name_lens[count] = (size_t)((eq ? eq : line_end) - p);
        values[count] = eq ? eq + 1 : NULL;
        value_lens[count] = eq ? (size_t)(line_end - eq - 1) : 0;
        count++;
        p = nl ? nl + 1 : end;
    }

    for (i = 0; i < count; i++) {
        uint32_t index = 0;

        check_number(names[i], name_lens[i], UINT32_MAX);
        if (values[i]) {
            check_number(values[i], value_lens[i], UINT32_MAX);
            check_number(values[i], value_lens[i], XENSTATS_DOMID_MAX);
        }
        r = pv_classify_key(names[i], name_lens[i], &index);
        if (r != -EINVAL && (r < PV_KEY_OTHER || r > PV_KEY_EVENT_CHANNEL))
            abort();
    }

    memset(&keys, 0x5a, sizeof(keys));
    r = pv_parse_set_keys(names, name_lens, values, value_lens, count, &keys, reason);
    if (!memchr(reason, '\0', sizeof(reason)) || (r < 0) != (reason[0] != '\0'))
        abort();
    if (r < 0) {
        if (r != -EINVAL && r != -E2BIG && r != -EAGAIN)
            abort();
        return 0;
    }
    if (r != 0 || count > PV_MAX_SET_KEYS)
        abort();
    if (!keys.have_event_channel) {
        if (keys.nr_pages != 0)
            abort();
        return 0;
    }
    if (keys.nr_pages == 0 || keys.nr_pages > PV_MAX_PAGES)
        abort();
    /* every reference key found is in range and holds exactly its value */
    for (i = 0; i < count; i++) {
        uint32_t index = 0, v = 0;
        int kind = pv_classify_key(names[i], name_lens[i], &index);

        if (kind == PV_KEY_OTHER)
            continue;
        if (!values[i] || pv_parse_number(values[i], value_lens[i], UINT32_MAX, &v) < 0)
            abort();
        if (kind == PV_KEY_EVENT_CHANNEL ? keys.event_channel != v
            : index >= keys.nr_pages ||
                  (kind == PV_KEY_NAME_TYPE_REF ? keys.name_type_ref[index] : keys.value_ref[index]) != v)
            abort();
    }
    return 0;
}
