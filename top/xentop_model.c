/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats xentop: libxenstat's model (what xentop prints) made from a
 * snapshot of lib/export, collected in-process or read from the agent.
 * One allocation holds the model and everything it points to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/xenstats.h>

#include "top/xentop.h"

static unsigned int state_of(const struct export_domain *d)
{
    unsigned int s = 0;

    if (d->flags_unknown)
        return 0;
    if (d->flags & XENSTATS_DOMAIN_DYING)
        s |= XENTOP_DYING;
    /* libxenstat: shut down for a crash is "crashed", for any other reason "shutdown" */
    if (d->flags & XENSTATS_DOMAIN_SHUTDOWN)
        s |= d->shutdown_reason == XENSTATS_SHUTDOWN_CRASH ? XENTOP_CRASHED : XENTOP_SHUTDOWN;
    if (d->flags & XENSTATS_DOMAIN_BLOCKED)
        s |= XENTOP_BLOCKED;
    if (d->flags & XENSTATS_DOMAIN_PAUSED)
        s |= XENTOP_PAUSED;
    if (d->flags & XENSTATS_DOMAIN_RUNNING)
        s |= XENTOP_RUNNING;
    return s;
}

/*
 * xentop shows a vCPU's running time if Xen calls it online (not down).
 * The runstate says offline for a vCPU that is down, and also for every
 * vCPU of a paused domain: those beyond the domain's count of online
 * vCPUs are the ones down (a guest takes its highest vCPUs down).
 */
static void fill_vcpus(const struct export_domain *d, struct xentop_vcpu *out, uint32_t n)
{
    uint64_t online = export_figs_known(&d->figs, EXPORT_FIG_DOMAIN_VCPUS_ONLINE)
                          ? export_figs_get(&d->figs, EXPORT_FIG_DOMAIN_VCPUS_ONLINE)
                          : n;
    uint32_t counted = 0;

    for (uint32_t k = 0; k < n; k++) {
        const struct export_vcpu *v = k < d->nr_vcpus && d->vcpus ? &d->vcpus[k] : NULL;

        out[k].online = v && !v->absent && v->state != XEN_VCPU_STATS_RUNSTATE_OFFLINE;
        out[k].ns = v && !v->absent && v->time_valid[XEN_VCPU_STATS_RUNSTATE_RUNNING]
                        ? v->time_ns[XEN_VCPU_STATS_RUNSTATE_RUNNING]
                        : 0;
        counted += out[k].online;
    }
    for (uint32_t k = 0; k < n && counted < online; k++) {
        const struct export_vcpu *v = k < d->nr_vcpus && d->vcpus ? &d->vcpus[k] : NULL;

        if (!out[k].online && v && !v->absent) {
            out[k].online = true;
            counted++;
        }
    }
}

static void fill_network(const struct export_device *dev, struct xentop_net *n)
{
    const struct export_figs *f = &dev->figs;

    n->rbytes = export_figs_get(f, EXPORT_FIG_VIF_RX_BYTES);
    n->rpackets = export_figs_get(f, EXPORT_FIG_VIF_RX_PACKETS);
    n->rerrs = export_figs_get(f, EXPORT_FIG_VIF_RX_ERRORS);
    n->rdrop = export_figs_get(f, EXPORT_FIG_VIF_RX_DROPS);
    n->tbytes = export_figs_get(f, EXPORT_FIG_VIF_TX_BYTES);
    n->tpackets = export_figs_get(f, EXPORT_FIG_VIF_TX_PACKETS);
    n->terrs = export_figs_get(f, EXPORT_FIG_VIF_TX_ERRORS);
    n->tdrop = export_figs_get(f, EXPORT_FIG_VIF_TX_DROPS);
}

static void fill_vbd(const struct export_device *dev, struct xentop_vbd *v)
{
    static const enum export_figure_id needed[] = {EXPORT_FIG_VBD_OO, EXPORT_FIG_VBD_READS, EXPORT_FIG_VBD_WRITES,
                                                   EXPORT_FIG_VBD_READ_SECTORS, EXPORT_FIG_VBD_WRITE_SECTORS};
    const struct export_figs *f = &dev->figs;

    v->dev = dev->devid;
    v->type = XENTOP_VBD_BLKBACK; /* the library lists blkback's vbd-D-N devices */
    /* a disk whose statistics could not be read has none (an agent may leave one out: 0) */
    v->error = true;
    for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
        if (export_figs_known(f, needed[i]))
            v->error = false;
    if (v->error)
        return;
    v->oo_reqs = export_figs_get(f, EXPORT_FIG_VBD_OO);
    v->rd_reqs = export_figs_get(f, EXPORT_FIG_VBD_READS);
    v->wr_reqs = export_figs_get(f, EXPORT_FIG_VBD_WRITES);
    v->rd_sects = export_figs_get(f, EXPORT_FIG_VBD_READ_SECTORS);
    v->wr_sects = export_figs_get(f, EXPORT_FIG_VBD_WRITE_SECTORS);
}

/* The vCPUs xentop lists: max_vcpu_id + 1, which the collector and the agent's JSON give as nr_vcpus. */
static uint32_t vcpus_of(const struct export_domain *d)
{
    return d->nr_vcpus;
}

int xentop_node_from_snapshot(const struct export_snapshot *s, struct xentop_node **ret_node)
{
    size_t size = sizeof(struct xentop_node), names = 0, vcpus = 0, nets = 0, vbds = 0;
    struct xentop_node *node;
    char *p, *name;

    for (uint32_t i = 0; i < s->nr_domains; i++) {
        names += strnlen(s->domains[i].name, sizeof(s->domains[i].name)) + 1;
        vcpus += vcpus_of(&s->domains[i]);
        nets += s->domains[i].nr_vifs;
        vbds += s->domains[i].nr_vbds;
    }
    size += s->nr_domains * sizeof(struct xentop_domain) + vcpus * sizeof(struct xentop_vcpu) +
            nets * sizeof(struct xentop_net) + vbds * sizeof(struct xentop_vbd) + s->nr_pcpus * sizeof(uint64_t) +
            names;
    node = calloc(1, size);
    if (!node)
        return -ENOMEM;
    p = (char *)(node + 1);
    node->domains = (struct xentop_domain *)p;
    p += s->nr_domains * sizeof(struct xentop_domain);
    node->pcpu_idle_ns = (uint64_t *)p;
    p += s->nr_pcpus * sizeof(uint64_t);
    node->monotonic_ns = s->monotonic_ns;
    node->tot_mem = export_figs_get(&s->host, EXPORT_FIG_HOST_MEMORY_TOTAL);
    node->num_domains = s->nr_domains;
    node->num_pcpus = s->nr_pcpus;
    node->pcpus_valid = s->nr_pcpus > 0;
    for (uint32_t i = 0; i < s->nr_pcpus; i++) {
        if (!export_figs_known(&s->pcpus[i], EXPORT_FIG_PCPU_IDLE))
            node->pcpus_valid = false;
        node->pcpu_idle_ns[i] = export_figs_get(&s->pcpus[i], EXPORT_FIG_PCPU_IDLE);
    }
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct export_domain *in = &s->domains[i];
        struct xentop_domain *d = &node->domains[i];

        d->domid = in->domid;
        d->state = state_of(in);
        d->cpu_ns = export_figs_get(&in->figs, EXPORT_FIG_DOMAIN_CPU);
        d->cur_mem = export_figs_get(&in->figs, EXPORT_FIG_DOMAIN_MEMORY);
        d->max_mem = export_figs_known(&in->figs, EXPORT_FIG_DOMAIN_MEMORY_MAX)
                         ? export_figs_get(&in->figs, EXPORT_FIG_DOMAIN_MEMORY_MAX)
                         : XENTOP_NO_LIMIT;
        d->ssid = 0; /* the snapshot has no XSM label: 0 as on a host without FLASK */
        d->num_vcpus = vcpus_of(in);
        d->vcpus = (struct xentop_vcpu *)p;
        p += d->num_vcpus * sizeof(struct xentop_vcpu);
        fill_vcpus(in, d->vcpus, d->num_vcpus);
        d->num_networks = in->nr_vifs;
        d->networks = (struct xentop_net *)p;
        p += in->nr_vifs * sizeof(struct xentop_net);
        for (uint32_t k = 0; k < in->nr_vifs; k++)
            fill_network(&in->vifs[k], &d->networks[k]);
        d->num_vbds = in->nr_vbds;
        d->vbds = (struct xentop_vbd *)p;
        p += in->nr_vbds * sizeof(struct xentop_vbd);
        for (uint32_t k = 0; k < in->nr_vbds; k++)
            fill_vbd(&in->vbds[k], &d->vbds[k]);
    }
    /* the names last: their sizes keep nothing after them from alignment */
    name = p;
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        size_t len = strnlen(s->domains[i].name, sizeof(s->domains[i].name));

        memcpy(name, s->domains[i].name, len);
        name[len] = '\0';
        node->domains[i].name = name;
        name += len + 1;
    }
    *ret_node = node;
    return 0;
}

void xentop_node_free(struct xentop_node *node)
{
    free(node);
}
