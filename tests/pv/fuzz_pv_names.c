/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The name/type page parser on up to FUZZ_PAGES pages (the input, padded
 * with zeros to whole pages), checked against a plain reference of the
 * rules so that a wrong verdict is a crash too, not only a bad access.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pv/parse.h"

#define FUZZ_PAGES 4U
#define PAGE XEN_PV_STATS_PAGE_SIZE
#define ENTRY XEN_PV_STATS_ENTRY_SIZE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t pages[FUZZ_PAGES * PAGE];
static struct pv_stat_desc descs[FUZZ_PAGES * XEN_PV_STATS_PER_PAGE];
static const char *sorted[FUZZ_PAGES * XEN_PV_STATS_PER_PAGE];

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The rules, written the obvious way: 1 if the set must be accepted. */
static int reference_count(size_t nr_pages)
{
    size_t total = nr_pages * XEN_PV_STATS_PER_PAGE, n = 0, i, j;

    while (n < total && pages[n * ENTRY] != 0)
        n++;
    for (i = n; i < total; i++)
        if (pages[i * ENTRY] != 0)
            return -1;
    if (n == 0)
        return -1;
    for (i = 0; i < n; i++) {
        const uint8_t *e = pages + i * ENTRY;

        if (e[0] > 4 || e[1] == 0)
            return -1;
        for (j = 1; j < ENTRY && e[j]; j++)
            if (e[j] < 0x20 || e[j] > 0x7e)
                return -1;
        if (j == ENTRY)
            return -1;
        sorted[i] = (const char *)e + 1;
    }
    qsort(sorted, n, sizeof(sorted[0]), cmp_names);
    for (i = 1; i < n; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0)
            return -1;
    return (int)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char reason[PV_REASON_MAX];
    size_t nr_pages, i;
    int r, expected;

    if (size > sizeof(pages))
        size = sizeof(pages);
    nr_pages = (size + PAGE - 1) / PAGE;
    memset(pages, 0, sizeof(pages));
    memcpy(pages, data, size);

    r = pv_parse_name_pages(pages, nr_pages, descs, reason);
    if (!memchr(reason, '\0', sizeof(reason)))
        abort();
    expected = reference_count(nr_pages);
    if (r != (expected < 0 ? -EBADMSG : expected))
        abort();
    if (r < 0) {
        if (reason[0] == '\0')
            abort();
        return 0;
    }
    if (reason[0] != '\0')
        abort();
    for (i = 0; i < (size_t)r; i++) {
        const uint8_t *e = pages + i * ENTRY;
        size_t len = strlen(descs[i].name);

        if (descs[i].type != e[0] || len > XEN_PV_STATS_NAME_MAX || memcmp(descs[i].name, e + 1, len + 1) != 0)
            abort();
    }
    return 0;
}
