/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top's decoding on arbitrary bytes: lib/export's JSON reader
 * and top's view of what it reads (top_snapshot_parse()) must never crash
 * or leak, and whatever they accept must hold printable text only, down
 * to the rows the view draws.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "top/format.h"
#include "top/snapshot.h"
#include "top/sort.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct top_snapshot *a = NULL, *b = NULL;
    char err[256], row[8192];
    size_t i, j, k, *order;

    if (top_snapshot_parse((const char *)data, size, &a, err, sizeof(err)) < 0)
        return 0;
    /* The same input twice, one second apart: the share computation runs. */
    if (top_snapshot_parse((const char *)data, size, &b, err, sizeof(err)) < 0)
        abort();
    b->monotonic_ns = a->monotonic_ns + 1000000000ULL;
    if (b->monotonic_ns > a->monotonic_ns)
        top_snapshot_rates(b, a);
    order = calloc(b->nr_domains + 1, sizeof(*order));
    if (!order)
        abort();
    for (k = 0; k < TOP_NR_SORT_KEYS; k++)
        top_sort(b, (enum top_sort_key)k, k & 1, order);
    for (i = 0; i < b->nr_domains; i++) {
        const struct top_domain *d = &b->domains[order[i]];

        top_format_row(row, sizeof(row), d, top_name_width(b, 24), false);
        check_printable(row);
        for (j = 0; j < d->nr_sets; j++) {
            check_printable(d->sets[j].provider);
            check_printable(d->sets[j].set);
            check_printable(d->sets[j].state);
            for (k = 0; k < d->sets[j].nr_stats; k++) {
                check_printable(d->sets[j].stats[k].name);
                check_printable(d->sets[j].stats[k].value);
            }
        }
    }
    free(order);
    top_snapshot_free(a);
    top_snapshot_free(b);
    return 0;
}
