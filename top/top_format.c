/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xenstats top: the domain list as text, shared by the live view and batch mode. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "top/format.h"
#include "top/sort.h"

/*
 * The domain list's columns: the fixed ones, with the FIGUREs of
 * metrics.def that name a top column between CPU% and VCPUS, in their
 * order there.
 */
enum cell {
    CELL_DOMID,
    CELL_NAME,
    CELL_STATE,
    CELL_CPU_PCT,
    CELL_FIGURES, /* every figure column goes here */
    CELL_VCPUS,
    CELL_RUNNING,
    CELL_RUNNABLE,
    CELL_BLOCKED,
    CELL_OFFLINE,
    CELL_CHANGES,
    CELL_SETS,
    CELL_WORST,
};

struct column {
    const char *title;
    int width;    /* 0: the name column */
    int sort_key; /* -1: not a sort column */
    enum cell cell;
};

static const struct column columns[] = {
    {"DOMID", 6, TOP_SORT_DOMID, CELL_DOMID},         {"NAME", 0, TOP_SORT_NAME, CELL_NAME},
    {"STATE", 6, -1, CELL_STATE},                     {"CPU%", 6, -1, CELL_CPU_PCT},
    {NULL, 7, -1, CELL_FIGURES},                      {"VCPUS", 5, TOP_SORT_VCPUS, CELL_VCPUS},
    /* the runstate shares: running, runnable (waiting for a pCPU), blocked, offline */
    {"RUN%", 6, TOP_SORT_RUNNING, CELL_RUNNING},      {"WAIT%", 6, TOP_SORT_RUNNABLE, CELL_RUNNABLE},
    {"BLOCK%", 6, TOP_SORT_BLOCKED, CELL_BLOCKED},    {"OFF%", 6, TOP_SORT_OFFLINE, CELL_OFFLINE},
    {"CHG/S", 7, TOP_SORT_CHANGES, CELL_CHANGES},     {"SETS", 5, TOP_SORT_SETS, CELL_SETS},
    {"WORST", 10, TOP_SORT_WORST, CELL_WORST},
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

/* A right-aligned cell (left for WORST), the name column padded to name_width. */
static void cell(char *buf, size_t len, size_t *pos, const struct column *c, int name_width, const char *text)
{
    const char *sep = *pos ? " " : "";

    if (!c->width)
        add(buf, len, pos, "%s%-*s", sep, name_width, text);
    else if (c->cell == CELL_WORST)
        add(buf, len, pos, "%s%-*s", sep, c->width, text);
    else
        add(buf, len, pos, "%s%*s", sep, c->width, text);
}

/* No trailing blanks: batch lines are compared and parsed. */
static void trim(char *buf, size_t pos)
{
    while (pos && buf[pos - 1] == ' ')
        buf[--pos] = '\0';
}

void top_format_header(char *buf, size_t len, int name_width, int sort)
{
    size_t i, pos = 0;
    char title[32];

    buf[0] = '\0';
    for (i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
        const struct column *c = &columns[i];

        if (c->cell == CELL_FIGURES) {
            for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
                if (export_figure_decls[id].scope != EXPORT_SCOPE_DOMAIN || !export_figure_decls[id].top[0])
                    continue;
                snprintf(title, sizeof(title), "%s%s", export_figure_decls[id].top,
                         sort == TOP_SORT_FIGURE + id ? "*" : "");
                cell(buf, len, &pos, c, name_width, title);
            }
            continue;
        }
        snprintf(title, sizeof(title), "%s%s", c->title, c->sort_key >= 0 && c->sort_key == sort ? "*" : "");
        cell(buf, len, &pos, c, name_width, title);
    }
    trim(buf, pos);
}

static void share(char *out, size_t len, bool valid, double value)
{
    if (valid)
        snprintf(out, len, "%.1f", value * 100.0);
    else
        snprintf(out, len, "-");
}

/* A figure for people: bytes as 1.5G, seconds whole, counts as they are. */
static void human(char *out, size_t len, enum export_figure_id id, bool valid, double v)
{
    static const char units[] = "BKMGTPE";
    const char *unit = export_metric_decls[export_figure_decls[id].metric].unit;
    int u = 0;

    if (!valid) {
        snprintf(out, len, "-");
    } else if (!strcmp(unit, "bytes")) {
        while (v >= 1024 && u < 6) {
            v /= 1024;
            u++;
        }
        snprintf(out, len, u && v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
    } else {
        snprintf(out, len, "%.0f", v);
    }
}

void top_format_row(char *buf, size_t len, const struct top_domain *d, int name_width, bool batch)
{
    char name[4 * TOP_MAX_STRING + 8], text[64];
    size_t pos = 0, o = 0, i;

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
    buf[0] = '\0';
    for (i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
        const struct column *c = &columns[i];

        switch (c->cell) {
        case CELL_DOMID:
            snprintf(text, sizeof(text), "%u", d->domid);
            break;
        case CELL_NAME:
            cell(buf, len, &pos, c, name_width, name);
            continue;
        case CELL_STATE:
            snprintf(text, sizeof(text), "%s", d->state[0] ? d->state : "?");
            break;
        case CELL_CPU_PCT:
            share(text, sizeof(text), d->cpu_pct_valid, d->cpu_pct / 100.0);
            break;
        case CELL_FIGURES:
            for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
                if (export_figure_decls[id].scope != EXPORT_SCOPE_DOMAIN || !export_figure_decls[id].top[0])
                    continue;
                human(text, sizeof(text), (enum export_figure_id)id, d->fig_valid[id], d->fig[id]);
                cell(buf, len, &pos, c, name_width, text);
            }
            continue;
        case CELL_VCPUS:
            snprintf(text, sizeof(text), "%u", d->nr_vcpus);
            break;
        case CELL_RUNNING:
        case CELL_RUNNABLE:
        case CELL_BLOCKED:
        case CELL_OFFLINE:
            share(text, sizeof(text), d->share_valid[c->cell - CELL_RUNNING], d->share[c->cell - CELL_RUNNING]);
            break;
        case CELL_CHANGES:
            if (d->rate_valid)
                snprintf(text, sizeof(text), "%.1f", d->changes_per_s);
            else
                snprintf(text, sizeof(text), "-");
            break;
        case CELL_SETS:
            snprintf(text, sizeof(text), "%zu", d->nr_sets);
            break;
        case CELL_WORST:
            snprintf(text, sizeof(text), "%s", d->worst_state ? d->worst_state : "-");
            break;
        }
        cell(buf, len, &pos, c, name_width, text);
    }
    trim(buf, pos);
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
