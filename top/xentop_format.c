/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats xentop: one round of `xentop -b`, laid out as Xen's
 * tools/xentop/xentop.c lays it out (its output is the specification;
 * docs/xentop.md lists the rules, tests/top/xentop-fixtures/ holds output
 * of xentop itself that this must reproduce byte for byte).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "top/xentop.h"

enum field {
    F_NAME, F_STATE, F_CPU, F_CPU_PCT, F_MEM, F_MEM_PCT, F_MAXMEM, F_MAX_PCT, F_VCPUS, F_NETS, F_NET_TX,
    F_NET_RX, F_VBDS, F_VBD_OO, F_VBD_RD, F_VBD_WR, F_VBD_RSECT, F_VBD_WSECT, F_SSID, NR_FIELDS
};

static const struct {
    const char *header;
    unsigned int width; /* before any widening */
} fields[NR_FIELDS] = {
    [F_NAME] = {"NAME", 10},         [F_STATE] = {"STATE", 6},        [F_CPU] = {"CPU(sec)", 10},
    [F_CPU_PCT] = {"CPU(%)", 6},     [F_MEM] = {"MEM(k)", 10},        [F_MEM_PCT] = {"MEM(%)", 6},
    [F_MAXMEM] = {"MAXMEM(k)", 10},  [F_MAX_PCT] = {"MAXMEM(%)", 9},  [F_VCPUS] = {"VCPUS", 5},
    [F_NETS] = {"NETS", 4},          [F_NET_TX] = {"NETTX(k)", 8},    [F_NET_RX] = {"NETRX(k)", 8},
    [F_VBDS] = {"VBDS", 4},          [F_VBD_OO] = {"VBD_OO", 8},      [F_VBD_RD] = {"VBD_RD", 8},
    [F_VBD_WR] = {"VBD_WR", 8},      [F_VBD_RSECT] = {"VBD_RSECT", 10}, [F_VBD_WSECT] = {"VBD_WSECT", 10},
    [F_SSID] = {"SSID", 4},
};

/* "dsbcpr", as xentop's state column. */
static const struct {
    unsigned int flag;
    char letter;
} states[] = {
    {XENTOP_DYING, 'd'}, {XENTOP_SHUTDOWN, 's'}, {XENTOP_BLOCKED, 'b'},
    {XENTOP_CRASHED, 'c'}, {XENTOP_PAUSED, 'p'}, {XENTOP_RUNNING, 'r'},
};

static const char *const vbd_types[] = {"Unidentified", "BlkBack", "BlkTap", "Tapdisk3"};

void xentop_state_init(struct xentop_state *st)
{
    memset(st, 0, sizeof(*st));
    st->name_width = fields[F_NAME].width;
}

static unsigned long long net_total(const struct xentop_domain *d, bool rx)
{
    unsigned long long total = 0;

    for (uint32_t i = 0; i < d->num_networks; i++)
        total += rx ? d->networks[i].rbytes : d->networks[i].tbytes;
    return total;
}

/* The sum over the disks whose statistics were read; false when none was (and there is one). */
static bool vbd_total(const struct xentop_domain *d, enum field f, unsigned long long *ret)
{
    unsigned long long total = 0;
    bool shown = d->num_vbds == 0;

    for (uint32_t i = 0; i < d->num_vbds; i++) {
        const struct xentop_vbd *v = &d->vbds[i];

        if (v->error)
            continue;
        shown = true;
        switch (f) {
        case F_VBD_OO:
            total += v->oo_reqs;
            break;
        case F_VBD_RD:
            total += v->rd_reqs;
            break;
        case F_VBD_WR:
            total += v->wr_reqs;
            break;
        case F_VBD_RSECT:
            total += v->rd_sects;
            break;
        case F_VBD_WSECT:
            total += v->wr_sects;
            break;
        default:
            break;
        }
    }
    *ret = total;
    return shown;
}

/*
 * The digits xentop gives a figure: those of figure + 1, as a double's
 * log10 counts them (so 99999999 takes nine).  A figure of 2^64-1 wraps
 * to 0 there and never widens its column.
 */
static unsigned int digits_of(unsigned long long v)
{
    unsigned long long n = v + 1;

    return n ? (unsigned int)(log10((double)n) + 1) : 0;
}

static void widen(unsigned int *width, unsigned int length)
{
    if (length > *width)
        *width = length;
}

static int compare_names(const void *a, const void *b)
{
    const struct xentop_domain *x = *(const struct xentop_domain *const *)a, *y = *(const struct xentop_domain *const *)b;
    int c = strcasecmp(x->name, y->name);

    /* xentop's qsort keeps the hypervisor's (domid) order for equal names */
    if (c)
        return c;
    return x->domid < y->domid ? -1 : x->domid > y->domid;
}

static double cpu_pct(const struct xentop_domain *d, const struct xentop_node *cur, const struct xentop_node *prev)
{
    double us_elapsed;

    if (!prev)
        return 0.0;
    for (uint32_t i = 0; i < prev->num_domains; i++) {
        if (prev->domains[i].domid != d->domid)
            continue;
        /* whole microseconds, as gettimeofday() gives xentop */
        us_elapsed = (double)(cur->monotonic_ns / 1000 - prev->monotonic_ns / 1000);
        return ((double)(d->cpu_ns - prev->domains[i].cpu_ns) / 10.0) / us_elapsed;
    }
    return 0.0;
}

static void print_header(FILE *out, const unsigned int *width)
{
    for (int f = 0; f < NR_FIELDS; f++)
        fprintf(out, "%s%*s", f ? " " : "", (int)width[f], fields[f].header);
    fputc('\n', out);
}

static void print_vbd_figure(FILE *out, const struct xentop_domain *d, enum field f, unsigned int width)
{
    unsigned long long v;

    if (vbd_total(d, f, &v))
        fprintf(out, " %*llu", (int)width, v);
    else
        fprintf(out, " %*c", (int)width, '-');
}

static void print_domain(FILE *out, const struct xentop_domain *d, const struct xentop_node *cur,
                         const struct xentop_node *prev, const struct xentop_options *opts, const unsigned int *width)
{
    double tot = (double)cur->tot_mem;

    if (opts->full_name)
        fprintf(out, "%*s ", (int)width[F_NAME], d->name);
    else
        fprintf(out, "%10.10s ", d->name);
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
        fputc(d->state & states[i].flag ? states[i].letter : '-', out);
    fprintf(out, " %10llu %6.1f %10llu %6.1f", (unsigned long long)(d->cpu_ns / 1000000000ULL), cpu_pct(d, cur, prev),
            (unsigned long long)(d->cur_mem / 1024), (double)d->cur_mem / tot * 100);
    if (d->max_mem == XENTOP_NO_LIMIT)
        fprintf(out, " %10s %9s", "no limit", "n/a");
    else
        fprintf(out, " %10llu %9.1f", (unsigned long long)(d->max_mem / 1024), (double)d->max_mem / tot * 100);
    fprintf(out, " %5u %4u %*llu %*llu %4u", d->num_vcpus, d->num_networks, (int)width[F_NET_TX],
            net_total(d, false) / 1024, (int)width[F_NET_RX], net_total(d, true) / 1024, d->num_vbds);
    print_vbd_figure(out, d, F_VBD_OO, 8); /* never widened */
    for (int f = F_VBD_RD; f <= F_VBD_WSECT; f++)
        print_vbd_figure(out, d, (enum field)f, width[f]);
    fprintf(out, " %4u\n", d->ssid);
}

static void print_vcpus(FILE *out, const struct xentop_domain *d)
{
    fputs("VCPUs(sec): ", out);
    for (uint32_t i = 0; i < d->num_vcpus; i++) {
        if (!d->vcpus[i].online)
            continue;
        if (i != 0 && i % 5 == 0)
            fputs("\n        ", out);
        fprintf(out, " %2u: %10llus", i, (unsigned long long)(d->vcpus[i].ns / 1000000000ULL));
    }
    fputc('\n', out);
}

static void print_networks(FILE *out, const struct xentop_domain *d)
{
    for (uint32_t i = 0; i < d->num_networks; i++) {
        const struct xentop_net *n = &d->networks[i];

        fprintf(out, "Net%d RX: %8llubytes %8llupkts %8lluerr %8lludrop  ", (int)i, (unsigned long long)n->rbytes,
                (unsigned long long)n->rpackets, (unsigned long long)n->rerrs, (unsigned long long)n->rdrop);
        fprintf(out, "TX: %8llubytes %8llupkts %8lluerr %8lludrop\n", (unsigned long long)n->tbytes,
                (unsigned long long)n->tpackets, (unsigned long long)n->terrs, (unsigned long long)n->tdrop);
    }
}

static void print_vbds(FILE *out, const struct xentop_domain *d)
{
    for (uint32_t i = 0; i < d->num_vbds; i++) {
        const struct xentop_vbd *v = &d->vbds[i];
        const char *type = (unsigned int)v->type < 4 ? vbd_types[v->type] : vbd_types[0];
        char details[20];

        /* Linux's MAJOR() and MINOR() of <linux/kdev_t.h>, cut as xentop cuts them */
        snprintf(details, sizeof(details), "[%2x:%2x] ", v->dev >> 8, v->dev & 0xff);
        if (v->error)
            fprintf(out, "VBD %s %4d %s OO: %8c   RD: %8c   WR: %8c   RSECT: %10c   WSECT: %10c\n", type, (int)v->dev,
                    details, '-', '-', '-', '-', '-');
        else
            fprintf(out, "VBD %s %4d %s OO: %8llu   RD: %8llu   WR: %8llu   RSECT: %10llu   WSECT: %10llu\n", type,
                    (int)v->dev, details, (unsigned long long)v->oo_reqs, (unsigned long long)v->rd_reqs,
                    (unsigned long long)v->wr_reqs, (unsigned long long)v->rd_sects, (unsigned long long)v->wr_sects);
    }
}

/* pcpu.c's usage: 100 less the idle share of the time since the last round, from 0 to 100. */
static int update_pcpus(const struct xentop_node *cur, struct xentop_state *st)
{
    uint64_t now_us = cur->monotonic_ns / 1000, elapsed;
    uint32_t n;

    if (!cur->pcpus_valid)
        return -ENODATA;
    n = cur->num_pcpus < XENTOP_MAX_PCPUS ? cur->num_pcpus : XENTOP_MAX_PCPUS;
    if (!st->pcpus_started || n > st->pcpu_count) {
        /* the first round, or more pCPUs: start over, every usage 0 */
        for (uint32_t i = 0; i < n; i++) {
            st->pcpu_prev_idle_ns[i] = cur->pcpu_idle_ns[i] / 1000;
            st->pcpu_usage[i] = 0.0f;
        }
        st->pcpu_count = n;
        st->pcpus_started = true;
        st->pcpu_time_ns = now_us;
        return 0;
    }
    elapsed = now_us - st->pcpu_time_ns;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t idle = cur->pcpu_idle_ns[i] / 1000, idle_diff = idle - st->pcpu_prev_idle_ns[i];

        if (elapsed > 0) {
            double usage = 100.0 * (1.0 - ((double)idle_diff / (double)elapsed));

            st->pcpu_usage[i] = usage < 0 ? 0.0f : usage > 100 ? 100.0f : (float)usage;
        } else {
            st->pcpu_usage[i] = 0.0f;
        }
        st->pcpu_prev_idle_ns[i] = idle;
    }
    st->pcpu_time_ns = now_us;
    return 0;
}

static void print_pcpus(FILE *out, const struct xentop_state *st)
{
    if (!st->pcpus_started || !st->pcpu_count) {
        fputs("\nNo PCPU data available\n", out);
        return;
    }
    fputs("\nPhysical CPU Usage:\n+-------+--------+\n| Core  | Usage  |\n+-------+--------+\n", out);
    for (uint32_t i = 0; i < st->pcpu_count; i++)
        fprintf(out, "| %-5d | %5.1f%% |\n", (int)i, (double)st->pcpu_usage[i]);
    fputs("+-------+--------+\n", out);
}

int xentop_print_round(FILE *out, const struct xentop_node *cur, const struct xentop_node *prev,
                       const struct xentop_options *opts, struct xentop_state *st)
{
    const struct xentop_domain **order = malloc((cur->num_domains ? cur->num_domains : 1) * sizeof(*order));
    unsigned int width[NR_FIELDS];
    uint32_t n = cur->num_domains, i, start = 0;

    if (!order)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        order[i] = &cur->domains[i];
    /* -z: the domain named Domain-0 first, the others sorted after it */
    if (opts->dom0_first) {
        for (i = 0; i < n; i++) {
            if (!strcmp(order[i]->name, "Domain-0")) {
                const struct xentop_domain *first = order[0];

                order[0] = order[i];
                order[i] = first;
                start = 1;
                break;
            }
        }
    }
    qsort(order + start, n - start, sizeof(*order), compare_names);

    for (int f = 0; f < NR_FIELDS; f++)
        width[f] = fields[f].width;
    for (i = 0; i < n; i++) {
        const struct xentop_domain *d = order[i];
        unsigned long long v;

        if (opts->full_name && strlen(d->name) > st->name_width)
            st->name_width = (unsigned int)strlen(d->name);
        widen(&width[F_NET_TX], digits_of(net_total(d, false) / 1024));
        widen(&width[F_NET_RX], digits_of(net_total(d, true) / 1024));
        for (int f = F_VBD_RD; f <= F_VBD_WSECT; f++) {
            vbd_total(d, (enum field)f, &v);
            widen(&width[f], digits_of(v));
        }
    }
    width[F_NAME] = st->name_width;

    for (i = 0; i < n; i++) {
        if (i == 0 || opts->repeat_header)
            print_header(out, width);
        print_domain(out, order[i], cur, prev, opts, width);
        if (opts->vcpus)
            print_vcpus(out, order[i]);
        if (opts->networks)
            print_networks(out, order[i]);
        if (opts->vbds)
            print_vbds(out, order[i]);
    }
    free(order);
    if (opts->pcpus) {
        if (update_pcpus(cur, st) < 0)
            return -ENODATA;
        print_pcpus(out, st);
    }
    return 0;
}
