/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The name/type page parser on up to FUZZ_PAGES pages (the input, padded
 * with zeros to whole pages), checked against a plain reference of the
 * rules so that a wrong verdict is a crash too, not only a bad access.
 * Every name the parser accepts also goes through the naming convention's
 * classifiers, as a statistic name and as a set name, against references
 * of their own.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);

    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* promtool's lint, word by word: a whole word of the list, or a prefix and a unit. */
static bool reference_word_ok(const char *w)
{
    static const char *const banned =
        " s ms us ns sec b kb mb gb tb pb m h d counter gauge histogram summary fahrenheit ";
    static const char *const prefixes[] = {"pico", "nano", "micro", "milli", "centi", "deci", "deca",
                                           "hecto", "kilo", "kibi", "mega", "mebi", "giga", "gibi",
                                           "tera", "tebi", "peta", "pebi", "exa",  "exbi"};
    static const char *const units =
        " seconds bytes meters metres grams amperes volts joules celsius kelvin hertz watts ";
    char padded[XEN_PV_STATS_NAME_MAX + 3];

    snprintf(padded, sizeof(padded), " %s ", w);
    if (strstr(banned, padded))
        return false;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t p = strlen(prefixes[i]);

        if (strncmp(w, prefixes[i], p) == 0 && w[p]) {
            snprintf(padded, sizeof(padded), " %s ", w + p);
            if (strstr(units, padded))
                return false;
        }
    }
    return true;
}

static bool reference_words_ok(const char *name)
{
    char copy[XEN_PV_STATS_NAME_MAX + 1], *save = NULL;

    snprintf(copy, sizeof(copy), "%s", name);
    for (char *w = strtok_r(copy, "_", &save); w; w = strtok_r(NULL, "_", &save))
        if (!reference_word_ok(w))
            return false;
    return true;
}

/* The convention for statistic names, the obvious way (a copy is cut). */
static int reference_classify(const char *name, uint8_t type, struct pv_stat_name *ret)
{
    static const char *const units[] = {"", "seconds", "bytes", "ratio", "hertz", "celsius", "joules",
                                        "watts", "volts", "amperes", "meters", "grams"};
    static const char *const reserved[] = {"_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum",
                                           "_info"};
    char base[XEN_PV_STATS_NAME_MAX + 1];
    size_t n = strlen(name), i;
    bool counter;

    if (n < 1 || n > 62 || !islower((unsigned char)name[0]) || strstr(name, "__") || name[n - 1] == '_')
        return -1;
    for (i = 0; i < n; i++)
        if (!islower((unsigned char)name[i]) && !isdigit((unsigned char)name[i]) && name[i] != '_')
            return -1;
    if (!reference_words_ok(name))
        return -1;
    counter = has_suffix(name, n, "_total");
    memcpy(base, name, n + 1);
    if (counter)
        base[n - 6] = '\0';
    if (type == XEN_PV_STATS_TYPE_ASCII || type == 0 || type > 4 || (counter && type == XEN_PV_STATS_TYPE_S64))
        return -1;
    for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (has_suffix(base, strlen(base), reserved[i]))
            return -1;
    ret->kind = counter ? PV_STAT_COUNTER : PV_STAT_GAUGE;
    ret->unit = PV_UNIT_NONE;
    ret->base_len = strlen(base);
    for (i = 1; i < sizeof(units) / sizeof(units[0]); i++) {
        char word[16];

        snprintf(word, sizeof(word), "_%s", units[i]);
        if (has_suffix(base, strlen(base), word) && strcmp(pv_unit_name((enum pv_unit)i), units[i]) == 0)
            ret->unit = (enum pv_unit)i;
    }
    return 0;
}

/* The convention for set names: "<group>" or "<group> <device>". */
static int reference_group(const char *set, const char **ret_device)
{
    const char *space = strchr(set, ' ');
    size_t group = space ? (size_t)(space - set) : strlen(set), i;

    if (group < 1 || group > PV_GROUP_MAX || !islower((unsigned char)set[0]))
        return -1;
    for (i = 0; i < group; i++)
        if (!islower((unsigned char)set[i]) && !isdigit((unsigned char)set[i]))
            return -1;
    {
        char word[PV_GROUP_MAX + 1];

        memcpy(word, set, group);
        word[group] = '\0';
        if (!reference_word_ok(word))
            return -1;
    }
    if (space && (space[1] == '\0' || space[1] == ' ' || set[strlen(set) - 1] == ' '))
        return -1;
    *ret_device = space ? space + 1 : NULL;
    return (int)group;
}

static void check_convention(const char *name, uint8_t type)
{
    struct pv_stat_name got = {0}, want = {0};
    const char *dev = "untouched", *want_dev = NULL;
    int r = pv_stat_classify(name, type, &got), g;

    if ((r == 0) != (reference_classify(name, type, &want) == 0) || (r != 0 && r != -EINVAL))
        abort();
    if (r == 0 && (got.kind != want.kind || got.unit != want.unit || got.base_len != want.base_len))
        abort();
    g = pv_set_group(name, &dev);
    if (g != reference_group(name, &want_dev) && !(g == -EINVAL && reference_group(name, &want_dev) < 0))
        abort();
    if (g >= 0 && dev != want_dev)
        abort();
    if (g < 0 && strcmp(dev, "untouched") != 0)
        abort();
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
        check_convention(descs[i].name, descs[i].type);
    }
    return 0;
}
