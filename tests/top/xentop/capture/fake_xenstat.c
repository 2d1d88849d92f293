/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A test double of libxenstat (and of the two libxenctrl calls xentop's
 * pcpu.c makes) serving the figures of ../scenario.h, so that Xen's own,
 * unmodified tools/xentop/xentop.c prints the fixtures xenstats' layout is
 * checked against (capture.sh).  Round r is the r-th xenstat_get_node();
 * the clock is the scenario's: gettimeofday() and sleep() are wrapped
 * (-Wl,--wrap), so the interval between rounds is exactly the delay.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <xenstat.h>
#include <xenctrl.h>

#include "../scenario.h"

#define NR_DOMAINS (sizeof(scenario_domains) / sizeof(scenario_domains[0]))
#define NR_PCPUS (sizeof(scenario_pcpu_idle) / sizeof(scenario_pcpu_idle[0]))

struct xenstat_handle {
    unsigned int rounds;
};

struct xenstat_vcpu {
    unsigned int online;
    unsigned long long ns;
};

struct xenstat_network {
    unsigned int id;
    unsigned long long rbytes, rpackets, rerrs, rdrop, tbytes, tpackets, terrs, tdrop;
};

struct xenstat_vbd {
    unsigned int type, dev;
    bool error;
    unsigned long long oo, rd, wr, rsect, wsect;
};

struct xenstat_domain {
    const struct scenario_domain *s;
    unsigned long long cpu_ns;
    struct xenstat_vcpu *vcpus;
    struct xenstat_network *nets;
    struct xenstat_vbd *vbds;
};

struct xenstat_node {
    unsigned int num_domains;
    struct xenstat_domain domains[NR_DOMAINS];
};

static unsigned long long now_s = SCENARIO_START_S;

int __wrap_gettimeofday(struct timeval *tv, void *tz);
int __wrap_gettimeofday(struct timeval *tv, void *tz)
{
    (void)tz;
    tv->tv_sec = (time_t)now_s;
    tv->tv_usec = 0;
    return 0;
}

unsigned int __wrap_sleep(unsigned int seconds);
unsigned int __wrap_sleep(unsigned int seconds)
{
    now_s += seconds;
    return 0;
}

xenstat_handle *xenstat_init(void)
{
    return calloc(1, sizeof(xenstat_handle));
}

void xenstat_uninit(xenstat_handle *handle)
{
    free(handle);
}

xenstat_node *xenstat_get_node(xenstat_handle *handle, unsigned int flags)
{
    unsigned int r = handle->rounds++;
    xenstat_node *node = calloc(1, sizeof(*node));

    (void)flags;
    for (unsigned int i = 0; i < NR_DOMAINS; i++) {
        const struct scenario_domain *s = &scenario_domains[i];
        struct xenstat_domain *d = &node->domains[node->num_domains];

        if (r < s->first_round)
            continue;
        node->num_domains++;
        d->s = s;
        d->cpu_ns = scenario_value(s->cpu_ns, r);
        d->vcpus = calloc(s->nr_vcpus + 1, sizeof(*d->vcpus));
        d->nets = calloc(s->nr_nets + 1, sizeof(*d->nets));
        d->vbds = calloc(s->nr_vbds + 1, sizeof(*d->vbds));
        for (unsigned int k = 0; k < s->nr_vcpus; k++) {
            d->vcpus[k].online = (unsigned int)s->vcpus[k].online;
            d->vcpus[k].ns = scenario_value(s->vcpus[k].ns, r);
        }
        for (unsigned int k = 0; k < s->nr_nets; k++) {
            const struct scenario_net *n = &s->nets[k];

            d->nets[k] = (struct xenstat_network){
                k,
                scenario_value(n->rbytes, r), scenario_value(n->rpackets, r), scenario_value(n->rerrs, r),
                scenario_value(n->rdrop, r), scenario_value(n->tbytes, r), scenario_value(n->tpackets, r),
                scenario_value(n->terrs, r), scenario_value(n->tdrop, r),
            };
        }
        for (unsigned int k = 0; k < s->nr_vbds; k++) {
            const struct scenario_vbd *v = &s->vbds[k];

            d->vbds[k] = (struct xenstat_vbd){
                1, v->dev, v->error != 0,
                scenario_value(v->oo, r), scenario_value(v->rd, r), scenario_value(v->wr, r),
                scenario_value(v->rsect, r), scenario_value(v->wsect, r),
            };
        }
    }
    return node;
}

void xenstat_free_node(xenstat_node *node)
{
    if (!node)
        return;
    for (unsigned int i = 0; i < node->num_domains; i++) {
        free(node->domains[i].vcpus);
        free(node->domains[i].nets);
        free(node->domains[i].vbds);
    }
    free(node);
}

xenstat_domain *xenstat_node_domain(xenstat_node *node, unsigned int domid)
{
    for (unsigned int i = 0; i < node->num_domains; i++)
        if (node->domains[i].s->domid == domid)
            return &node->domains[i];
    return NULL;
}

xenstat_domain *xenstat_node_domain_by_index(xenstat_node *node, unsigned int index)
{
    return index < node->num_domains ? &node->domains[index] : NULL;
}

const char *xenstat_node_xen_version(xenstat_node *node)
{
    (void)node;
    return "4.22.0";
}

unsigned long long xenstat_node_tot_mem(xenstat_node *node)
{
    (void)node;
    return scenario_tot_mem;
}

unsigned long long xenstat_node_free_mem(xenstat_node *node)
{
    (void)node;
    return scenario_free_mem;
}

long xenstat_node_freeable_mb(xenstat_node *node)
{
    (void)node;
    return 0;
}

unsigned int xenstat_node_num_domains(xenstat_node *node)
{
    return node->num_domains;
}

unsigned int xenstat_node_num_cpus(xenstat_node *node)
{
    (void)node;
    return NR_PCPUS;
}

unsigned long long xenstat_node_cpu_hz(xenstat_node *node)
{
    (void)node;
    return 2400000000ULL;
}

unsigned xenstat_domain_id(xenstat_domain *d)
{
    return d->s->domid;
}

char *xenstat_domain_name(xenstat_domain *d)
{
    return (char *)d->s->name;
}

unsigned long long xenstat_domain_cpu_ns(xenstat_domain *d)
{
    return d->cpu_ns;
}

unsigned int xenstat_domain_num_vcpus(xenstat_domain *d)
{
    return d->s->nr_vcpus;
}

xenstat_vcpu *xenstat_domain_vcpu(xenstat_domain *d, unsigned int vcpu)
{
    return vcpu < d->s->nr_vcpus ? &d->vcpus[vcpu] : NULL;
}

unsigned long long xenstat_domain_cur_mem(xenstat_domain *d)
{
    return d->s->cur_mem;
}

unsigned long long xenstat_domain_max_mem(xenstat_domain *d)
{
    return d->s->max_mem;
}

unsigned int xenstat_domain_ssid(xenstat_domain *d)
{
    (void)d;
    return 0;
}

#define STATE(fn, flag)                                                                                               \
    unsigned int fn(xenstat_domain *d)                                                                                \
    {                                                                                                                 \
        return (d->s->state & (flag)) != 0;                                                                           \
    }
STATE(xenstat_domain_dying, SCENARIO_DYING)
STATE(xenstat_domain_crashed, SCENARIO_CRASHED)
STATE(xenstat_domain_shutdown, SCENARIO_SHUTDOWN)
STATE(xenstat_domain_paused, SCENARIO_PAUSED)
STATE(xenstat_domain_blocked, SCENARIO_BLOCKED)
STATE(xenstat_domain_running, SCENARIO_RUNNING)

unsigned int xenstat_domain_num_networks(xenstat_domain *d)
{
    return d->s->nr_nets;
}

xenstat_network *xenstat_domain_network(xenstat_domain *d, unsigned int network)
{
    return network < d->s->nr_nets ? &d->nets[network] : NULL;
}

unsigned int xenstat_domain_num_vbds(xenstat_domain *d)
{
    return d->s->nr_vbds;
}

xenstat_vbd *xenstat_domain_vbd(xenstat_domain *d, unsigned int vbd)
{
    return vbd < d->s->nr_vbds ? &d->vbds[vbd] : NULL;
}

unsigned int xenstat_vcpu_online(xenstat_vcpu *v)
{
    return v->online;
}

unsigned long long xenstat_vcpu_ns(xenstat_vcpu *v)
{
    return v->ns;
}

unsigned int xenstat_network_id(xenstat_network *n)
{
    return n->id;
}

#define NET(fn, member)                                                                                               \
    unsigned long long fn(xenstat_network *n)                                                                         \
    {                                                                                                                 \
        return n->member;                                                                                             \
    }
NET(xenstat_network_rbytes, rbytes)
NET(xenstat_network_rpackets, rpackets)
NET(xenstat_network_rerrs, rerrs)
NET(xenstat_network_rdrop, rdrop)
NET(xenstat_network_tbytes, tbytes)
NET(xenstat_network_tpackets, tpackets)
NET(xenstat_network_terrs, terrs)
NET(xenstat_network_tdrop, tdrop)

unsigned int xenstat_vbd_type(xenstat_vbd *v)
{
    return v->type;
}

unsigned int xenstat_vbd_dev(xenstat_vbd *v)
{
    return v->dev;
}

bool xenstat_vbd_error(xenstat_vbd *v)
{
    return v->error;
}

#define VBD(fn, member)                                                                                               \
    unsigned long long fn(xenstat_vbd *v)                                                                             \
    {                                                                                                                 \
        return v->member;                                                                                             \
    }
VBD(xenstat_vbd_oo_reqs, oo)
VBD(xenstat_vbd_rd_reqs, rd)
VBD(xenstat_vbd_wr_reqs, wr)
VBD(xenstat_vbd_rd_sects, rsect)
VBD(xenstat_vbd_wr_sects, wsect)

/* ---- pcpu.c's two libxenctrl calls ---- */

static unsigned int pcpu_rounds;
static int fake_xc;

xc_interface *xc_interface_open(xentoollog_logger *logger, xentoollog_logger *dombuild_logger, unsigned open_flags)
{
    (void)logger;
    (void)dombuild_logger;
    (void)open_flags;
    return (xc_interface *)&fake_xc;
}

int xc_interface_close(xc_interface *xch)
{
    (void)xch;
    return 0;
}

int xc_getcpuinfo(xc_interface *xch, int max_cpus, xc_cpuinfo_t *info, int *nr_cpus)
{
    unsigned int r = pcpu_rounds++;
    int n = 0;

    (void)xch;
    for (unsigned int i = 0; i < NR_PCPUS && n < max_cpus; i++, n++)
        info[n].idletime = scenario_value(scenario_pcpu_idle[i], r);
    *nr_cpus = n;
    return 0;
}
