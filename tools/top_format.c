/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xenstats top: the domain list as text, shared by the live view and batch mode. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "top.h"

struct column {
    const char *title;
    int width; /* 0: the name column */
    enum top_sort_key key;
};

static const struct column columns[] = {
    {"DOMID", 6, TOP_SORT_DOMID},      {"NAME", 0, TOP_SORT_NAME},        {"VCPUS", 6, TOP_SORT_VCPUS},
    {"RUNNING%", 9, TOP_SORT_RUNNING}, {"RUNNABLE%", 10, TOP_SORT_RUNNABLE}, {"BLOCKED%", 9, TOP_SORT_BLOCKED},
    {"OFFLINE%", 9, TOP_SORT_OFFLINE}, {"CHANGES/S", 10, TOP_SORT_CHANGES}, {"SETS", 5, TOP_SORT_SETS},
    {"WORST", 10, TOP_SORT_WORST},
};

int top_name_width(const struct top_snapshot *snap, int cap)
{
    size_t i, w = 5; /* "NAME*" */

    for (i = 0; i < snap->nr_domains; i++)
        if (strlen(snap->domains[i].name) > w)
            w = strlen(snap->domains[i].name);
    return (int)w > cap ? cap : (int)w;
}

/* Append to buf[*pos..len) what snprintf would, never past the end. */
static void add(char *buf, size_t len, size_t *pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void add(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*pos >= len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos = *pos + (size_t)n >= len ? len - 1 : *pos + (size_t)n;
}

void top_format_header(char *buf, size_t len, int name_width, int sort)
{
    size_t i, pos = 0;
    char title[16];

    buf[0] = '\0';
    for (i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
        const struct column *c = &columns[i];

        snprintf(title, sizeof(title), "%s%s", c->title, (int)c->key == sort ? "*" : "");
        if (!c->width)
            add(buf, len, &pos, "%s%-*s", i ? " " : "", name_width, title);
        else if (c->key == TOP_SORT_WORST)
            add(buf, len, &pos, "%s%-*s", i ? " " : "", c->width, title);
        else
            add(buf, len, &pos, "%s%*s", i ? " " : "", c->width, title);
    }
    while (pos && buf[pos - 1] == ' ')
        buf[--pos] = '\0';
}

static void share(char *cell, size_t len, bool valid, double value)
{
    if (valid)
        snprintf(cell, len, "%.1f", value * 100.0);
    else
        snprintf(cell, len, "-");
}

void top_format_row(char *buf, size_t len, const struct top_domain *d, int name_width, bool batch)
{
    char name[4 * TOP_MAX_STRING + 8], cells[TOP_NR_RUNSTATES][32], rate[32];
    size_t pos = 0, o = 0, i;
    unsigned int s;

    for (i = 0; d->name[i] && o + 5 < sizeof(name); i++) {
        if (batch && d->name[i] == ' ') {
            memcpy(name + o, "\\x20", 4);
            o += 4;
        } else {
            name[o++] = d->name[i];
        }
    }
    name[o] = '\0';
    if (!batch && (int)o > name_width) {
        /* Cut, visibly: the full name is in the domain's details. */
        name[name_width > 1 ? name_width - 1 : 0] = '~';
        name[name_width > 1 ? name_width : 1] = '\0';
    }
    for (s = 0; s < TOP_NR_RUNSTATES; s++)
        share(cells[s], sizeof(cells[s]), d->share_valid[s], d->share[s]);
    if (d->rate_valid)
        snprintf(rate, sizeof(rate), "%.1f", d->changes_per_s);
    else
        snprintf(rate, sizeof(rate), "-");
    buf[0] = '\0';
    add(buf, len, &pos, "%6u %-*s %6u %9s %10s %9s %9s %10s %5zu %-10s", d->domid, name_width, name, d->nr_vcpus,
        cells[0], cells[1], cells[2], cells[3], rate, d->nr_sets, d->worst_state ? d->worst_state : "-");
    /* No trailing blanks: batch lines are compared and parsed. */
    while (pos && buf[pos - 1] == ' ')
        buf[--pos] = '\0';
}

void top_print_batch(FILE *out, const struct top_snapshot *snap, const size_t *order)
{
    char line[8192];
    int width = top_name_width(snap, 4 * TOP_MAX_STRING + 4);
    size_t i;

    top_format_header(line, sizeof(line), width, -1);
    fprintf(out, "%s\n", line);
    for (i = 0; i < snap->nr_domains; i++) {
        const struct top_domain *d = &snap->domains[order ? order[i] : i];

        top_format_row(line, sizeof(line), d, width, true);
        fprintf(out, "%s\n", line);
    }
    fflush(out);
}
