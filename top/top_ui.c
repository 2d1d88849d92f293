/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: the live ncurses view.  Everything drawn is built as plain
 * lines first (every string in the model is printable ASCII already), then
 * the visible window of them is drawn, so a small terminal scrolls instead
 * of hiding rows or columns.
 */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/tool.h"
#include "top/format.h"
#include "top/sort.h"
#include "top/source.h"
#include "top/ui.h"
#include "util/util.h"

#define KEY_ESCAPE 27
#define MIN_DELAY_NS 100000000ULL     /* 100 ms: the agent samples every second anyway */
#define MAX_DELAY_NS 3600000000000ULL /* an hour */
#define POLL_MS 200                   /* how soon a signal is noticed */
#define NAME_CAP 24                   /* NAME column in the list; longer names end in '~' */

enum view { VIEW_LIST, VIEW_DOMAIN, VIEW_HELP };

struct line {
    char *text;
    int attr;
    bool anchor; /* a PV stats set begins here: Tab jumps between them */
};

struct lines {
    struct line *v;
    size_t n, cap;
};

struct ui {
    struct top_source *src;
    struct top_snapshot *snap; /* shown, with rates against the one before */
    uint64_t delay_ns, iterations, updates;
    enum top_sort_key sort;
    bool reverse;
    enum view view, view_before_help;
    size_t *order;
    size_t order_cap;
    /* list view */
    bool have_selection;
    uint32_t selected; /* domid: the selection follows the domain when rows move */
    size_t list_top;
    /* domain view */
    uint32_t shown_domid;
    size_t detail_top;
    int jump; /* +1/-1: to the next/previous set, resolved when drawn */
    size_t hscroll;
    char status[512];
    bool status_is_error;
    uint64_t next_fetch;
    bool quit;
};

/* ---- lines ------------------------------------------------------------ */

static void lines_clear(struct lines *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i].text);
    l->n = 0;
}

static void lines_free(struct lines *l)
{
    lines_clear(l);
    free(l->v);
    l->v = NULL;
    l->cap = 0;
}

static void lines_add(struct lines *l, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void lines_add(struct lines *l, int attr, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    int n;

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct line *v = realloc(l->v, cap * sizeof(*v));

        if (!v)
            return; /* out of memory: the line is missing, the view goes on */
        l->v = v;
        l->cap = cap;
    }
    va_start(ap, fmt);
    n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    l->v[l->n].text = text;
    l->v[l->n].attr = attr;
    l->v[l->n].anchor = false;
    l->n++;
}

/* ---- drawing ------------------------------------------------------------ */

/*
 * Draw `text` on row y from column hscroll on, clipped to the screen; a '<'
 * or '>' in the first/last column says there is more to that side.
 */
static void draw_text(int y, const char *text, int attr, size_t hscroll)
{
    size_t len = strlen(text), cols = (size_t)COLS;
    const char *visible = hscroll < len ? text + hscroll : "";
    size_t vlen = strlen(visible);

    if (y < 0 || y >= LINES || !cols)
        return;
    attrset(attr);
    move(y, 0);
    addnstr(visible, (int)(vlen < cols ? vlen : cols));
    if (attr & A_REVERSE) {
        size_t x;

        for (x = vlen; x < cols; x++)
            addch(' ');
    } else {
        clrtoeol();
    }
    attrset(A_NORMAL);
    if (hscroll && len) {
        mvaddch(y, 0, '<' | (chtype)attr);
    }
    if (vlen > cols)
        mvaddch(y, (int)cols - 1, '>' | (chtype)attr);
}

static void draw_title(struct ui *ui, const char *what)
{
    char buf[1024], when[32] = "";
    time_t t;
    struct tm tm;

    if (ui->snap->time > 0) {
        t = (time_t)ui->snap->time;
        if (localtime_r(&t, &tm))
            strftime(when, sizeof(when), "%H:%M:%S", &tm);
    }
    snprintf(buf, sizeof(buf), "xenstats top - %s - %s%s%zu domains - delay %.2gs%s%s", top_source_name(ui->src),
             when, *when ? " - " : "", ui->snap->nr_domains, (double)ui->delay_ns / 1e9, *what ? " - " : "", what);
    draw_text(0, buf, A_BOLD, 0);
}

static void draw_status(struct ui *ui, const char *hint)
{
    if (LINES < 2)
        return;
    draw_text(LINES - 1, *ui->status ? ui->status : hint, ui->status_is_error ? A_BOLD : A_NORMAL, 0);
}

static void format_share_cells(char cells[XENSTATS_VCPU_NR_RUNSTATES][16], const bool *valid, const double *share)
{
    unsigned int s;

    for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
        if (valid[s])
            snprintf(cells[s], sizeof(cells[s]), "%.1f", share[s] * 100.0);
        else
            snprintf(cells[s], sizeof(cells[s]), "-");
    }
}

/* The rows the list can show between the title/header and the status line. */
static size_t list_rows(void)
{
    return LINES > 3 ? (size_t)LINES - 3 : 0;
}

static size_t selected_index(struct ui *ui)
{
    size_t i;

    for (i = 0; i < ui->snap->nr_domains; i++)
        if (ui->snap->domains[ui->order[i]].domid == ui->selected)
            return i;
    return 0;
}

static void draw_list(struct ui *ui)
{
    char header[512], row[8192], what[64];
    int width = top_name_width(ui->snap, NAME_CAP);
    size_t rows = list_rows(), n = ui->snap->nr_domains, sel, i;

    top_sort(ui->snap, ui->sort, ui->reverse, ui->order);
    if (n && !ui->have_selection) {
        ui->selected = ui->snap->domains[ui->order[0]].domid;
        ui->have_selection = true;
    }
    sel = selected_index(ui);
    if (n)
        ui->selected = ui->snap->domains[ui->order[sel]].domid;
    /* Keep the selection on screen. */
    if (sel < ui->list_top)
        ui->list_top = sel;
    if (rows && sel >= ui->list_top + rows)
        ui->list_top = sel - rows + 1;
    if (ui->list_top + rows > n)
        ui->list_top = n > rows ? n - rows : 0;

    snprintf(what, sizeof(what), "sort %s%s", top_sort_keys[ui->sort].name, ui->reverse ? " reversed" : "");
    draw_title(ui, what);
    if (LINES > 1) {
        top_format_header(header, sizeof(header), width, (int)ui->sort);
        draw_text(1, header, A_REVERSE, ui->hscroll);
    }
    for (i = 0; i < rows; i++) {
        size_t k = ui->list_top + i;

        if (k >= n) {
            move((int)i + 2, 0);
            clrtoeol();
            continue;
        }
        top_format_row(row, sizeof(row), &ui->snap->domains[ui->order[k]], width, false);
        draw_text((int)i + 2, row, k == sel ? A_REVERSE : A_NORMAL, ui->hscroll);
    }
    if (!n && rows)
        draw_text(2, ui->snap->have_rates || ui->updates ? "no domains" : "no domains yet", A_NORMAL, 0);
    if (n > rows && rows) {
        snprintf(row, sizeof(row), "rows %zu-%zu of %zu  (arrows/j/k, PgUp/PgDn to scroll)  h: help", ui->list_top + 1,
                 ui->list_top + rows < n ? ui->list_top + rows : n, n);
        draw_status(ui, row);
    } else {
        draw_status(ui, "Enter: details  s/S: sort  r: reverse  d: delay  h: help  q: quit");
    }
}

static void build_domain_lines(const struct top_domain *d, struct lines *l)
{
    char cells[XENSTATS_VCPU_NR_RUNSTATES][16], rate[32], run[32], lat[32];
    size_t i, j;

    lines_add(l, A_NORMAL, "domain %u  name %s  vCPUs %u  vCPU statistics: %s%s%s", d->domid, d->name, d->nr_vcpus,
              d->vcpu_source ? d->vcpu_source : "-", d->vcpu_error ? " - " : "", d->vcpu_error ? d->vcpu_error : "");
    if (d->fig_valid[EXPORT_FIG_DOMAIN_TABLE_MEMORY])
        lines_add(l, A_NORMAL, "statistics table: memory %.1f MiB  max %.1f MiB  outstanding %.1f MiB",
                  d->fig[EXPORT_FIG_DOMAIN_TABLE_MEMORY] / 1048576.0,
                  d->fig_valid[EXPORT_FIG_DOMAIN_TABLE_MEMORY_MAX] ? d->fig[EXPORT_FIG_DOMAIN_TABLE_MEMORY_MAX] / 1048576.0 : 0.0,
                  d->fig_valid[EXPORT_FIG_DOMAIN_TABLE_MEMORY_OUTSTANDING]
                      ? d->fig[EXPORT_FIG_DOMAIN_TABLE_MEMORY_OUTSTANDING] / 1048576.0
                      : 0.0);
    format_share_cells(cells, d->share_valid, d->share);
    lines_add(l, A_NORMAL, "interval: running %s%s  runnable %s%s  blocked %s%s  offline %s%s  changes/s %s", cells[0],
              d->share_valid[0] ? "%" : "", cells[1], d->share_valid[1] ? "%" : "", cells[2],
              d->share_valid[2] ? "%" : "", cells[3], d->share_valid[3] ? "%" : "",
              d->rate_valid ? (snprintf(rate, sizeof(rate), "%.1f", d->changes_per_s), rate) : "-");
    lines_add(l, A_NORMAL, "%s", "");
    lines_add(l, A_REVERSE, "%5s %-9s %9s %10s %9s %9s %10s %12s", "VCPU", "STATE", "RUNNING%", "RUNNABLE%", "BLOCKED%",
              "OFFLINE%", "CHANGES/S", "RUNNING(s)");
    for (i = 0; i < d->nr_vcpu_rows; i++) {
        const struct top_vcpu *v = &d->vcpus[i];

        format_share_cells(cells, v->share_valid, v->share);
        snprintf(rate, sizeof(rate), v->rate_valid ? "%.1f" : "-", v->changes_per_s);
        snprintf(run, sizeof(run), v->time_valid[0] ? "%.3f" : "-", v->time[0]);
        lines_add(l, A_NORMAL, "%5u %-9s %9s %10s %9s %9s %10s %12s", v->vcpu,
                  v->state >= 0 ? xenstats_vcpu_runstate_name(v->state) : "-", cells[0], cells[1], cells[2], cells[3], rate,
                  run);
    }
    if (!d->nr_vcpu_rows)
        lines_add(l, A_NORMAL, "  no vCPU statistics");
    lines_add(l, A_NORMAL, "%s", "");
    lines_add(l, A_BOLD, "PV stats sets: %zu", d->nr_sets);
    for (i = 0; i < d->nr_sets; i++) {
        const struct top_set *set = &d->sets[i];

        snprintf(lat, sizeof(lat), set->latency_valid ? "%.3f ms" : "-", set->latency * 1e3);
        lines_add(l, A_NORMAL, "%s", "");
        if (l->n)
            l->v[l->n - 1].anchor = true;
        lines_add(l, set->severity == TOP_SET_ACTIVE || set->severity == TOP_SET_SAMPLING ? A_NORMAL : A_BOLD,
                  "%s / %s: %s%s%s  samples %llu  timeouts %llu  errors %llu  latency %s", set->provider, set->set,
                  set->state, set->reason && *set->reason ? " - " : "", set->reason ? set->reason : "",
                  (unsigned long long)set->samples, (unsigned long long)set->timeouts,
                  (unsigned long long)set->errors, lat);
        if (set->nr_stats)
            lines_add(l, A_REVERSE, "    %-32s %-7s %s", "STATISTIC", "TYPE", "VALUE");
        for (j = 0; j < set->nr_stats; j++)
            lines_add(l, A_NORMAL, "    %-32s %-7s %s", set->stats[j].name, set->stats[j].type,
                      set->stats[j].value);
    }
}

static void draw_domain(struct ui *ui)
{
    const struct top_domain *d = top_snapshot_find(ui->snap, ui->shown_domid);
    struct lines l = {0};
    size_t rows = LINES > 2 ? (size_t)LINES - 2 : 0, i;
    char what[64], hint[160];

    snprintf(what, sizeof(what), "domain %u", ui->shown_domid);
    draw_title(ui, what);
    if (d)
        build_domain_lines(d, &l);
    else
        lines_add(&l, A_BOLD, "domain %u is gone (Esc: back to the list)", ui->shown_domid);
    if (ui->jump > 0) {
        for (i = ui->detail_top + 1; i < l.n && !l.v[i].anchor; i++)
            ;
        if (i < l.n)
            ui->detail_top = i;
    } else if (ui->jump < 0) {
        for (i = ui->detail_top < l.n ? ui->detail_top : l.n; i > 0 && !l.v[i - 1].anchor; i--)
            ;
        ui->detail_top = i ? i - 1 : 0;
    }
    ui->jump = 0;
    if (ui->detail_top + rows > l.n)
        ui->detail_top = l.n > rows ? l.n - rows : 0;
    for (i = 0; i < rows; i++) {
        if (ui->detail_top + i < l.n) {
            draw_text((int)i + 1, l.v[ui->detail_top + i].text, l.v[ui->detail_top + i].attr, ui->hscroll);
        } else {
            move((int)i + 1, 0);
            clrtoeol();
        }
    }
    if (l.n > rows)
        snprintf(hint, sizeof(hint), "lines %zu-%zu of %zu  (arrows/j/k, PgUp/PgDn to scroll)  Esc/q: back  h: help",
                 ui->detail_top + 1, ui->detail_top + rows < l.n ? ui->detail_top + rows : l.n, l.n);
    else
        snprintf(hint, sizeof(hint), "Esc/q: back to the list  d: delay  h: help");
    draw_status(ui, hint);
    lines_free(&l);
}

static const char *const help_text[] = {
    "xenstats top: keys",
    "",
    "  Up/Down, j/k     move the selection (list) or scroll (details)",
    "  PgUp/PgDn        a page up or down",
    "  Home/End, g/G    first or last",
    "  Left/Right       scroll sideways when lines are wider than the screen",
    "  Enter            details of the selected domain: vCPUs and PV stats sets",
    "  Esc, q           back from the details; q in the list quits",
    "  Tab/Shift-Tab, ] [   next / previous PV stats set in the details",
    "  s / S            sort by the next / previous column",
    "  i n v u w b o c p x   sort by domid, name, vcpus, running, runnable,",
    "                   blocked, offline, changes, sets, worst set state",
    "  r                reverse the order",
    "  d                change the delay between updates",
    "  h, ?             this help",
    "  q                quit",
    "",
    "Shares are of the last interval, averaged over a domain's vCPUs (100% =",
    "every vCPU in that state for the whole interval); changes/s sums the",
    "runstate changes of all its vCPUs.  '-' means not known yet or not",
    "provided.  Text from guests is shown escaped (\\xHH).",
    "",
    "Press any key to go back.",
};

static void draw_help(struct ui *ui)
{
    size_t i, n = sizeof(help_text) / sizeof(help_text[0]);
    size_t rows = LINES > 1 ? (size_t)LINES - 1 : 0;

    if (ui->detail_top > (n > rows ? n - rows : 0))
        ui->detail_top = n > rows ? n - rows : 0;
    for (i = 0; i < rows; i++) {
        if (i + ui->detail_top < n)
            draw_text((int)i, help_text[i + ui->detail_top], i + ui->detail_top ? A_NORMAL : A_BOLD, ui->hscroll);
        else {
            move((int)i, 0);
            clrtoeol();
        }
    }
    draw_status(ui, n > rows ? "more below: Down/PgDn; any other key: back" : "any key: back");
}

static void draw(struct ui *ui)
{
    erase();
    if (ui->view == VIEW_HELP)
        draw_help(ui);
    else if (ui->view == VIEW_DOMAIN)
        draw_domain(ui);
    else
        draw_list(ui);
    refresh();
}

/* ---- updates ---------------------------------------------------------- */

static void set_status(struct ui *ui, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_status(struct ui *ui, bool error, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
    va_end(ap);
    ui->status_is_error = error;
}

static int ensure_order(struct ui *ui, size_t n)
{
    size_t *order;

    if (n <= ui->order_cap)
        return 0;
    order = realloc(ui->order, n * sizeof(*order));
    if (!order)
        return -ENOMEM;
    ui->order = order;
    ui->order_cap = n;
    return 0;
}

static void update(struct ui *ui)
{
    struct top_snapshot *next = NULL;
    char err[768];
    uint64_t now = monotonic_ns();
    int r;

    r = top_source_fetch(ui->src, &next, err, sizeof(err));
    if (r < 0) {
        /* Keep showing the last good snapshot; the agent may come back. */
        set_status(ui, true, "%s", err);
        ui->next_fetch = now + ui->delay_ns;
        return;
    }
    if (next->monotonic_ns == ui->snap->monotonic_ns) {
        /* The agent has not sampled since: ask again soon, not a full delay later. */
        top_snapshot_free(next);
        ui->next_fetch = now + (ui->delay_ns / 4 < 250000000ULL ? ui->delay_ns / 4 : 250000000ULL);
        return;
    }
    if (ensure_order(ui, next->nr_domains) < 0) {
        top_snapshot_free(next);
        set_status(ui, true, "out of memory");
        ui->next_fetch = now + ui->delay_ns;
        return;
    }
    top_snapshot_rates(next, ui->snap);
    top_snapshot_free(ui->snap);
    ui->snap = next;
    if (ui->status_is_error)
        ui->status[0] = '\0';
    ui->updates++;
    ui->next_fetch = now + ui->delay_ns;
    if (ui->iterations && ui->updates >= ui->iterations)
        ui->quit = true;
}

/* ---- keys --------------------------------------------------------------- */

/* A line of input on the status line; false when cancelled. */
static bool prompt(struct ui *ui, const char *question, char *buf, size_t len)
{
    size_t n = 0;
    int ch;

    buf[0] = '\0';
    curs_set(1);
    for (;;) {
        if (LINES > 0) {
            attrset(A_BOLD);
            mvaddnstr(LINES - 1, 0, question, COLS);
            attrset(A_NORMAL);
            addnstr(buf, COLS > (int)strlen(question) ? COLS - (int)strlen(question) : 0);
            clrtoeol();
            refresh();
        }
        timeout(POLL_MS);
        ch = getch();
        if (tool_stop) {
            curs_set(0);
            return false;
        }
        if (ch == ERR)
            continue;
        if (ch == KEY_RESIZE) {
            draw(ui);
            continue;
        }
        if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
            break;
        if (ch == KEY_ESCAPE) {
            curs_set(0);
            return false;
        }
        if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
            buf[--n] = '\0';
        else if (ch >= 0x20 && ch < 0x7f && n + 1 < len) {
            buf[n++] = (char)ch;
            buf[n] = '\0';
        }
    }
    curs_set(0);
    return true;
}

static void change_delay(struct ui *ui)
{
    char buf[32];
    uint64_t ns;

    if (!prompt(ui, "Delay (e.g. 2s, 500ms; Esc cancels): ", buf, sizeof(buf)))
        return;
    if (parse_duration_ns(buf, &ns) < 0 || ns < MIN_DELAY_NS || ns > MAX_DELAY_NS) {
        set_status(ui, true, "delay '%s': expected a duration from 100ms to 1h, such as 2s", buf);
        return;
    }
    ui->delay_ns = ns;
    ui->next_fetch = monotonic_ns() + ns;
    set_status(ui, false, "delay %.3gs", (double)ns / 1e9);
}

static void move_selection(struct ui *ui, long delta)
{
    size_t n = ui->snap->nr_domains, sel;
    long target;

    if (!n)
        return;
    top_sort(ui->snap, ui->sort, ui->reverse, ui->order);
    sel = selected_index(ui);
    target = (long)sel + delta;
    if (target < 0)
        target = 0;
    if (target >= (long)n)
        target = (long)n - 1;
    ui->selected = ui->snap->domains[ui->order[target]].domid;
    ui->have_selection = true;
}

static bool sort_key_of(int ch, enum top_sort_key *ret)
{
    unsigned int k;

    for (k = 0; k < TOP_NR_SORT_KEYS; k++) {
        if (top_sort_keys[k].name && top_sort_keys[k].key == ch) {
            *ret = (enum top_sort_key)k;
            return true;
        }
    }
    return false;
}

/* Keys both scrolling views share; true when handled. */
static bool scroll_key(struct ui *ui, int ch, size_t *top)
{
    size_t page = LINES > 4 ? (size_t)LINES - 3 : 1;

    switch (ch) {
    case KEY_UP:
    case 'k':
        if (*top)
            (*top)--;
        return true;
    case KEY_DOWN:
    case 'j':
        (*top)++; /* clamped when drawn */
        return true;
    case KEY_PPAGE:
        *top = *top > page ? *top - page : 0;
        return true;
    case KEY_NPAGE:
    case ' ':
        *top += page;
        return true;
    case KEY_HOME:
    case 'g':
        *top = 0;
        return true;
    case KEY_END:
    case 'G':
        *top = SIZE_MAX / 2;
        return true;
    default:
        return false;
    }
}

static void handle_key(struct ui *ui, int ch)
{
    size_t page = list_rows() ? list_rows() : 1;
    enum top_sort_key key;

    if (ch == KEY_RESIZE)
        return; /* redrawn at the new size */
    if (ui->status[0] && !ui->status_is_error)
        ui->status[0] = '\0';
    if (ui->view == VIEW_HELP) {
        if (ch == KEY_DOWN || ch == 'j' || ch == KEY_NPAGE || ch == KEY_UP || ch == 'k' || ch == KEY_PPAGE)
            scroll_key(ui, ch, &ui->detail_top);
        else {
            ui->view = ui->view_before_help;
            ui->detail_top = 0;
        }
        return;
    }
    if (ch == 'h' || ch == '?' || ch == KEY_F(1)) {
        ui->view_before_help = ui->view;
        ui->view = VIEW_HELP;
        ui->detail_top = 0;
        return;
    }
    if (ch == KEY_LEFT) {
        ui->hscroll = ui->hscroll > 8 ? ui->hscroll - 8 : 0;
        return;
    }
    if (ch == KEY_RIGHT) {
        ui->hscroll += 8;
        if (ui->hscroll > 4 * TOP_MAX_STRING + 256)
            ui->hscroll = 4 * TOP_MAX_STRING + 256;
        return;
    }
    if (ch == 'd') {
        change_delay(ui);
        return;
    }
    if (ui->view == VIEW_DOMAIN) {
        if (ch == KEY_ESCAPE || ch == 'q' || ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
            ui->view = VIEW_LIST;
            ui->hscroll = 0;
            return;
        }
        if (ch == '\t' || ch == ']')
            ui->jump = 1;
        else if (ch == KEY_BTAB || ch == '[')
            ui->jump = -1;
        else
            scroll_key(ui, ch, &ui->detail_top);
        return;
    }
    switch (ch) {
    case 'q':
    case 'Q':
        ui->quit = true;
        return;
    case KEY_UP:
    case 'k':
        move_selection(ui, -1);
        return;
    case KEY_DOWN:
    case 'j':
        move_selection(ui, 1);
        return;
    case KEY_PPAGE:
        move_selection(ui, -(long)page);
        return;
    case KEY_NPAGE:
        move_selection(ui, (long)page);
        return;
    case KEY_HOME:
    case 'g':
        move_selection(ui, -(long)EXPORT_READ_MAX_DOMAINS);
        return;
    case KEY_END:
    case 'G':
        move_selection(ui, (long)EXPORT_READ_MAX_DOMAINS);
        return;
    case '\n':
    case '\r':
    case KEY_ENTER:
        if (ui->snap->nr_domains && ui->have_selection) {
            ui->view = VIEW_DOMAIN;
            ui->shown_domid = ui->selected;
            ui->detail_top = 0;
            ui->hscroll = 0;
        }
        return;
    case 's':
        ui->sort = top_sort_next(ui->sort, 1);
        return;
    case 'S':
        ui->sort = top_sort_next(ui->sort, -1);
        return;
    case 'r':
        ui->reverse = !ui->reverse;
        return;
    default:
        if (sort_key_of(ch, &key))
            ui->sort = key;
        return;
    }
}

int top_ui_run(struct top_source *src, struct top_snapshot *first, const struct top_ui_options *opts)
{
    struct ui ui = {
        .src = src,
        .snap = first,
        .delay_ns = opts->delay_ns,
        .iterations = opts->iterations,
        .sort = opts->sort,
        .reverse = opts->reverse,
    };
    SCREEN *screen;
    uint64_t now;
    int ch, wait_ms;

    if (ensure_order(&ui, first->nr_domains ? first->nr_domains : 1) < 0) {
        top_snapshot_free(first);
        return fail("top", "out of memory");
    }
    setlocale(LC_ALL, "");
    /* newterm, not initscr: an unusable terminal is an error to report, not an exit. */
    screen = newterm(NULL, stdout, stdin);
    if (!screen) {
        free(ui.order);
        top_snapshot_free(first);
        return fail("top", "cannot drive this terminal (TERM=%s); use --batch",
                    getenv("TERM") ? getenv("TERM") : "unset");
    }
    set_escdelay(25);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    ui.next_fetch = monotonic_ns() + ui.delay_ns;
    while (!tool_stop && !ui.quit) {
        draw(&ui);
        now = monotonic_ns();
        if (now >= ui.next_fetch) {
            update(&ui);
            if (ui.quit) /* the last of --iterations: show it before leaving */
                draw(&ui);
            continue;
        }
        wait_ms = (int)((ui.next_fetch - now) / 1000000ULL) + 1;
        timeout(wait_ms < POLL_MS ? wait_ms : POLL_MS);
        ch = getch();
        if (ch != ERR)
            handle_key(&ui, ch);
    }
    endwin();
    delscreen(screen);
    free(ui.order);
    top_snapshot_free(ui.snap);
    return 0;
}
