/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers of `xenstats publish`: the first input byte picks one, the
 * rest is its text.  Whatever the text, the lists stay within their bounds
 * and hold only names a PV stats set accepts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest_stats.h"
#include "guest/text.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *name)
{
    size_t n = strnlen(name, GUEST_NAME_MAX + 1), i;

    if (n == 0 || n > GUEST_NAME_MAX)
        abort();
    for (i = 0; i < n; i++)
        if (name[i] <= 0x20 || name[i] >= 0x7f)
            abort();
}

static void check_stats(const struct guest_stats *list)
{
    size_t i, j;

    if (list->count > GUEST_STATS_MAX || list->count > list->capacity)
        abort();
    for (i = 0; i < list->count; i++) {
        check_name(list->stat[i].name);
        if (list->stat[i].type < GUEST_STAT_S64 || list->stat[i].type > GUEST_STAT_ASCII)
            abort();
        if (list->stat[i].type == GUEST_STAT_ASCII && strnlen(list->stat[i].value.ascii, 64) > GUEST_ASCII_MAX)
            abort();
        for (j = 0; j < i; j++)
            if (!strcmp(list->stat[i].name, list->stat[j].name))
                abort();
    }
}

static void check_devices(const struct guest_devices *list)
{
    size_t i;

    if (list->count > GUEST_DEVICES_MAX)
        abort();
    for (i = 0; i < list->count; i++) {
        size_t n = strnlen(list->dev[i].name, GUEST_NAME_MAX + 1);

        if (n == 0 || n > GUEST_NAME_MAX)
            abort();
        check_stats(&list->dev[i].stats);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct guest_stats stats;
    struct guest_devices devs;
    struct guest_custom custom;
    const char *text = (const char *)data + 1;
    char err[256];
    size_t len, i;
    int r;

    if (size == 0)
        return 0;
    len = size - 1;
    guest_stats_init(&stats);
    guest_devices_init(&devs);
    guest_custom_init(&custom);
    switch (data[0] % 6) {
    case 0:
        guest_parse_meminfo(text, len, &stats);
        check_stats(&stats);
        break;
    case 1:
        guest_parse_cpu(text, len, 100, &stats);
        check_stats(&stats);
        break;
    case 2: {
        /* loadavg up to the first NUL byte, uptime after it */
        const char *split = memchr(text, '\0', len);
        size_t first = split ? (size_t)(split - text) : len;

        guest_parse_load(text, first, split ? split + 1 : NULL, split ? len - first - 1 : 0, &stats);
        check_stats(&stats);
        break;
    }
    case 3:
        guest_parse_netdev(text, len, &devs);
        check_devices(&devs);
        break;
    case 4:
        guest_parse_diskstats(text, len, data[0] & 0x80, &devs);
        check_devices(&devs);
        break;
    case 5:
        r = guest_parse_custom(text, len, "f", &custom, err, sizeof(err));
        if (r < 0 && (r != -EBADMSG || strncmp(err, "f:", 2) || strnlen(err, sizeof(err)) == sizeof(err)))
            abort();
        if (r == 0 && !custom.count)
            abort();
        for (i = 0; r == 0 && i < custom.count; i++) {
            if (!custom.set[i].stats.count)
                abort();
            check_stats(&custom.set[i].stats);
        }
        break;
    }
    guest_stats_free(&stats);
    guest_devices_free(&devs);
    guest_custom_free(&custom);
    return 0;
}
