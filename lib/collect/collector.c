/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The collector (collector.h): the one path from the host to a snapshot.
 * Domains are kept in a list sorted by domid; each keeps its vCPU map open
 * (mapping is the costly part) and is added to the PV stats monitor once.
 * A domid that comes back with another name is another domain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xenstats/pv.h>
#include <xenstats/vcpu.h>

#include "collector.h"
#include "util/util.h"
#include "vcpu/vcpu_fallback.h"

#define VCPU_RETRY_ROUNDS 10 /* retry a domain's region every N rounds */
/*
 * xenstore nodes of a domain are read seldom: reading 4 nodes of each of
 * 1000 domains every second would cost more than all the rest.  The
 * toolstack's (memory/target, memory/static-max) are read when the domain
 * is new, when the hypervisor's limit of its memory moves (xl mem-set sets
 * max_pages to the new target and a slack, so a new target shows at once),
 * and every TOOLSTACK_KEY_ROUNDS rounds; the guest's data/meminfo_* every
 * GUEST_KEY_ROUNDS (guest agents rewrite them about once a minute).  A
 * domain's turn comes by its domid, so the reads spread over the rounds.
 */
#define TOOLSTACK_KEY_ROUNDS 30
#define GUEST_KEY_ROUNDS 10
/* Guest-reported sizes above this (1 PiB) are not believed. */
#define GUEST_KIB_MAX (1ULL << 40)
#define MAX_PCPUS 4096
/*
 * Adding a domain to the PV stats monitor attaches what its providers have
 * published (xenstore reads, the stats node and its watch, and for each
 * set a map of its name pages and a bind of its event channel), in the
 * collector's thread.  On a host that starts with thousands of domains
 * that took minutes before the first round was done (2.3 domains a second
 * on a loaded emulated host of 4000).  So new domains are added to the
 * monitor in domid order a share of each round at a time: at a round's
 * start for 1/ATTACH_SHARE of the interval, and after its snapshot until
 * the next round is due (collector_idle()); one is started only when the
 * time left holds what one took on average, so a round keeps to its
 * interval, but one a round goes anyway after a round that added none.
 * Their domain and vCPU figures are there from the first round.
 */
#define ATTACH_SHARE 4

/* The xenstore nodes the collector reads for each domain. */
enum domain_key { KEY_TARGET, KEY_STATIC_MAX, KEY_MEMINFO_FREE, KEY_MEMINFO_TOTAL, NR_KEYS };
static const struct {
    const char *path;
    enum export_figure_id figure;
    bool guest; /* written by the guest: untrusted, rejections counted */
} domain_keys[NR_KEYS] = {
    [KEY_TARGET] = {"memory/target", EXPORT_FIG_DOMAIN_MEMORY_TARGET, false},
    [KEY_STATIC_MAX] = {"memory/static-max", EXPORT_FIG_DOMAIN_MEMORY_STATIC_MAX, false},
    [KEY_MEMINFO_FREE] = {"data/meminfo_free", EXPORT_FIG_DOMAIN_GUEST_MEMORY_FREE, true},
    [KEY_MEMINFO_TOTAL] = {"data/meminfo_total", EXPORT_FIG_DOMAIN_GUEST_MEMORY_TOTAL, true},
};

struct tracked {
    struct tracked *next;
    struct xenstats_domain_info info;
    struct xenstats_vcpu_map *map;
    char *vcpu_error;
    uint32_t retry_in;
    bool key_valid[NR_KEYS];
    uint64_t key_kib[NR_KEYS];
    uint64_t keys_rejected;
    bool keys_read;          /* at least once */
    uint64_t keys_max_kib;   /* max_memory_kib when the toolstack's were read */
    uint8_t keys_again;      /* rounds the toolstack's are read again after a move */
    bool pv;   /* added to the monitor */
    bool pv_pending; /* to be added to the monitor (attach_pending()) */
    bool seen; /* in the last domain list */
};

struct collector {
    struct xenstats_host *host;
    struct xenstats_monitor *monitor; /* NULL without grants/event channels */
    struct collector_opts opts;
    struct tracked *domains;
    uint32_t nr_domains;
    bool collecting;
    uint64_t round_start, round_deadline;
    uint64_t samples, errors;
    uint64_t rounds;
    uint64_t attach_avg_ns;    /* what adding a domain took, on average */
    uint32_t attached;         /* domains added this round */
    bool starved;              /* none added in the last round while some waited */
    uint32_t pending;          /* domains left to add */
    bool at_once;              /* collector_collect(): every new domain in its first round */
    int list_error; /* of the last domain list: 0, or a negative errno */
    bool no_keys, no_host, no_devices; /* the backend cannot tell: not asked again */
};

struct collector *collector_new(struct xenstats_host *host, const struct collector_opts *opts)
{
    struct xenstats_monitor_opts mo = {.size = sizeof(mo)};
    struct collector *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->host = host;
    c->opts = *opts;
    mo.sample_timeout_ms = opts->sample_timeout_ms;
    /* requests closer than half an interval are the same round's */
    mo.min_interval_ms = (uint32_t)(opts->interval_ns / 2000000ULL);
    mo.create_stats_node = opts->create_stats_node;
    mo.max_live_sets = opts->pv_max_live_sets;
    mo.max_mapped_pages = opts->pv_max_mapped_pages;
    if (opts->no_pv_stats)
        return c;
    c->monitor = xenstats_monitor_new(host, &mo);
    if (!c->monitor)
        log_warning("PV stats are not monitored: %s", strerror(errno));
    return c;
}

/* Stop mapping anything of the domain: its vCPU region and its PV stats sets. */
static void release_pages(struct collector *c, struct tracked *t)
{
    if (t->pv)
        xenstats_monitor_remove_domain(c->monitor, t->info.domid);
    t->pv = false;
    xenstats_vcpu_map_close(t->map);
    t->map = NULL;
}

static void tracked_free(struct collector *c, struct tracked *t)
{
    release_pages(c, t);
    free(t->vcpu_error);
    free(t);
}

void collector_free(struct collector *c)
{
    if (!c)
        return;
    while (c->domains) {
        struct tracked *t = c->domains;

        c->domains = t->next;
        tracked_free(c, t);
    }
    /* Closing every port lets providers see the monitor leave. */
    xenstats_monitor_free(c->monitor);
    free(c);
}

int collector_fd(const struct collector *c)
{
    return c->monitor ? xenstats_monitor_fd(c->monitor) : -1;
}

uint64_t collector_errors(const struct collector *c)
{
    return c->errors;
}

int collector_list_error(const struct collector *c)
{
    return c->list_error;
}

/* ---- domains ----------------------------------------------------------- */

static void try_map(struct collector *c, struct tracked *t)
{
    if (t->map || t->retry_in-- > 0)
        return;
    t->map = tool_vcpu_map_open(c->host, t->info.domid);
    free(t->vcpu_error);
    t->vcpu_error = NULL;
    if (t->map)
        return;
    if ((errno == EPERM || errno == EACCES) && t->info.domid == xenstats_host_self_domid(c->host))
        t->vcpu_error = strdup("a domain cannot map its own statistics");
    else
        t->vcpu_error = strdup(tool_vcpu_open_error(-errno));
    t->retry_in = VCPU_RETRY_ROUNDS;
}

static struct tracked *track(struct collector *c, struct tracked **pp, const struct xenstats_domain_info *info)
{
    struct tracked *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->info = *info;
    t->next = *pp;
    *pp = t;
    c->nr_domains++;
    log_info("tracking domain %u (%s)", info->domid, info->name);
    t->pv_pending = c->monitor && info->domid != xenstats_host_self_domid(c->host);
    return t;
}

static void read_keys(struct collector *c, struct tracked *t, bool toolstack, bool guest);

/*
 * New domains' first reads of their xenstore nodes and their addition to
 * the monitor, as long as one more fits before until_ns (ATTACH_SHARE).
 */
static void attach_pending(struct collector *c, uint64_t until_ns)
{
    uint64_t start = monotonic_ns();
    struct tracked *t;
    uint32_t left = 0;
    int r;

    for (t = c->domains; t; t = t->next) {
        bool keys = !t->keys_read && !c->no_keys && !(t->info.flags & XENSTATS_DOMAIN_DYING);

        if (!t->pv_pending && !keys)
            continue;
        if (!c->at_once && (c->attached || !c->starved) && start + c->attach_avg_ns > until_ns) {
            left += t->pv_pending;
            continue;
        }
        if (keys)
            read_keys(c, t, true, true);
        if (t->pv_pending) {
            t->pv_pending = false;
            r = xenstats_monitor_add_domain(c->monitor, t->info.domid);
            if (r < 0) {
                log_warning("domain %u: PV stats not monitored: %s", t->info.domid, strerror(-r));
                c->errors++;
            } else {
                t->pv = true;
            }
        }
        c->attached++;
        /* a moving average: the emulated host's answers come slower as it is loaded */
        c->attach_avg_ns = c->attach_avg_ns ? (c->attach_avg_ns * 7 + (monotonic_ns() - start)) / 8 : monotonic_ns() - start;
        start = monotonic_ns();
    }
    if (left && left != c->pending)
        log_debug("%u domains left to add to the PV stats monitor in the next rounds", left);
    c->pending = left;
}

/*
 * A dying domain is freed by Xen only once nobody maps its pages: its vCPU
 * statistics region and its PV stats sets are let go at once (after a
 * restore or a migration the old domain would otherwise stay dying for
 * good).  Its domain figures stay while Xen lists it.
 */
static void release_dying(struct collector *c, struct tracked *t)
{
    t->pv_pending = false;
    if (!t->map && !t->pv)
        return;
    log_info("domain %u (%s) is dying: its pages are let go", t->info.domid, t->info.name);
    release_pages(c, t);
    free(t->vcpu_error);
    t->vcpu_error = strdup("the domain is dying");
}

static void untrack(struct collector *c, struct tracked **pp)
{
    struct tracked *t = *pp;

    *pp = t->next;
    c->nr_domains--;
    log_info("domain %u (%s) is gone", t->info.domid, t->info.name);
    tracked_free(c, t);
}

/* Merge the sorted domain list into the sorted tracked list. */
static void refresh_domains(struct collector *c)
{
    struct xenstats_domain_info *list = NULL;
    struct tracked **pp = &c->domains;
    size_t n = 0, i = 0;
    int r;

    r = xenstats_host_list_domains(c->host, &list, &n);
    c->list_error = r < 0 ? r : 0;
    if (r < 0) {
        log_error("cannot list domains: %s", xenstats_strerror(r));
        c->errors++;
        return;
    }
    while (i < n || *pp) {
        struct tracked *t = *pp;

        if (t && (i == n || t->info.domid < list[i].domid)) {
            untrack(c, pp);
            continue;
        }
        if (t && t->info.domid == list[i].domid && strcmp(t->info.name, list[i].name)) {
            untrack(c, pp); /* the same domid under another name: a new domain */
            continue;
        }
        if (!t || t->info.domid > list[i].domid) {
            t = track(c, pp, &list[i]);
            if (!t) {
                c->errors++;
                i++;
                continue;
            }
        }
        t->info = list[i++];
        if (t->info.flags & XENSTATS_DOMAIN_DYING)
            release_dying(c, t);
        else
            try_map(c, t);
        pp = &t->next;
    }
    free(list);
}

int collector_dispatch(struct collector *c)
{
    int r = c->monitor ? xenstats_monitor_dispatch(c->monitor, 0) : 0;

    if (r < 0 && r != -EINTR)
        return r;
    /* a new domain (restored, migrated in, rebooted): track it now, so
     * that its providers can publish before the next round asks them */
    if (c->monitor && xenstats_monitor_domains_introduced(c->monitor)) {
        refresh_domains(c);
        attach_pending(c, c->round_start + c->opts.interval_ns / ATTACH_SHARE);
    }
    return 0;
}

/* ---- the round ---------------------------------------------------------- */

/*
 * A size in KiB as xenstore holds it: decimal digits only, no sign, no
 * space, no leading zero.  -EBADMSG for anything else.
 */
static int parse_kib(const char *text, size_t len, uint64_t max, uint64_t *ret_kib)
{
    uint64_t v = 0;

    if (!len || strlen(text) != len || (len > 1 && text[0] == '0'))
        return -EBADMSG;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9' || v > (max - (uint64_t)(text[i] - '0')) / 10)
            return -EBADMSG;
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    *ret_kib = v;
    return 0;
}

static void read_keys(struct collector *c, struct tracked *t, bool toolstack, bool guest)
{
    for (int k = 0; k < NR_KEYS; k++) {
        char buf[32];
        uint64_t kib;
        int n;

        if (!(domain_keys[k].guest ? guest : toolstack))
            continue;
        n = xenstats_host_read_domain_key(c->host, t->info.domid, domain_keys[k].path, buf, sizeof(buf));
        t->key_valid[k] = false;
        if (n == -EOPNOTSUPP) {
            c->no_keys = true;
            return;
        }
        if (n == -ENOENT || (n < 0 && n != -E2BIG))
            continue;
        if (n == -E2BIG ||
            parse_kib(buf, (size_t)n, domain_keys[k].guest ? GUEST_KIB_MAX : UINT64_MAX / 1024, &kib) < 0) {
            /* Only a guest's own nodes can hold nonsense; say so once per domain. */
            if (domain_keys[k].guest) {
                if (!t->keys_rejected)
                    log_info("domain %u: ignoring %s: not a size in KiB", t->info.domid, domain_keys[k].path);
                t->keys_rejected++;
            }
            continue;
        }
        t->key_kib[k] = kib;
        t->key_valid[k] = true;
    }
    if (toolstack)
        t->keys_max_kib = t->info.max_memory_kib;
    t->keys_read = true;
}

void collector_begin(struct collector *c)
{
    struct tracked *t;

    c->round_start = monotonic_ns();
    c->rounds++;
    c->starved = c->pending && !c->attached;
    c->attached = 0;
    refresh_domains(c);
    attach_pending(c, c->round_start + c->opts.interval_ns / ATTACH_SHARE);
    for (t = c->domains; t && !c->no_keys; t = t->next) {
        bool toolstack;

        if (!t->keys_read)
            continue; /* a new domain's turn is attach_pending()'s */

        /* libxl moves max_pages before it writes the target: read the next round too */
        if (t->keys_read && t->info.max_memory_kib != t->keys_max_kib)
            t->keys_again = 2;
        toolstack = !t->keys_read || t->keys_again || (t->info.domid + c->rounds) % TOOLSTACK_KEY_ROUNDS == 0;
        if (t->keys_again)
            t->keys_again--;
        bool guest = !t->keys_read || (t->info.domid + c->rounds) % GUEST_KEY_ROUNDS == 0;

        if (toolstack || guest)
            read_keys(c, t, toolstack, guest);
    }
    if (c->monitor)
        xenstats_monitor_request_all(c->monitor);
    c->collecting = true;
    c->round_deadline = c->round_start + c->opts.interval_ns / 2;
}

void collector_idle(struct collector *c, uint64_t until_ns)
{
    if (c->pending && !c->collecting)
        attach_pending(c, until_ns);
}

bool collector_round_done(const struct collector *c, uint64_t now_ns)
{
    /* Every answer in, or the slowest provider timed out. */
    return !c->collecting || !c->monitor || !xenstats_monitor_pending(c->monitor) || now_ns >= c->round_deadline;
}

int collector_round_wait_ms(const struct collector *c, uint64_t now_ns)
{
    if (!c->collecting)
        return -1;
    return now_ns >= c->round_deadline ? 0 : (int)((c->round_deadline - now_ns) / 1000000ULL) + 1;
}

/* ---- the snapshot ------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* The domain section of a version 2 table, where there is one: its page counts, in bytes. */
static void fill_table_memory(struct tracked *t, struct export_domain *d)
{
    static const struct {
        unsigned int counter;
        enum export_figure_id fig;
    } map[] = {
        {XEN_VCPU_STATS_DOMAIN_TOT_PAGES, EXPORT_FIG_DOMAIN_TABLE_MEMORY},
        {XEN_VCPU_STATS_DOMAIN_MAX_PAGES, EXPORT_FIG_DOMAIN_TABLE_MEMORY_MAX},
        {XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES, EXPORT_FIG_DOMAIN_TABLE_MEMORY_OUTSTANDING},
    };
    struct xenstats_vcpu_domain_sample dom;

    if (xenstats_vcpu_map_snapshot_domain(t->map, &dom) < 0)
        return;
    for (size_t k = 0; k < ARRAY_SIZE(map); k++)
        if (xenstats_vcpu_domain_status(&dom, map[k].counter) == XENSTATS_COUNTER_VALID)
            export_figs_set(&d->figs, map[k].fig, xenstats_vcpu_domain_value(&dom, map[k].counter) * 4096);
}

static void fill_vcpus(struct collector *col, struct tracked *t, struct export_domain *d)
{
    uint32_t n = t->map ? xenstats_vcpu_map_nr_vcpus(t->map) : 0, i;
    struct xenstats_vcpu_sample *samples;
    uint64_t now = 0;

    d->vcpu_source = XENSTATS_VCPU_SOURCE_NONE;
    d->vcpu_error = t->vcpu_error ? strdup(t->vcpu_error) : NULL;
    if (!n)
        return;
    samples = calloc(n, sizeof(*samples));
    d->vcpus = calloc(n, sizeof(*d->vcpus));
    if (!samples || !d->vcpus || xenstats_vcpu_map_snapshot_all(t->map, samples, n) < 0 ||
        xenstats_vcpu_map_clock(t->map, &now) < 0) {
        free(d->vcpu_error);
        d->vcpu_error = strdup("cannot read the vCPU statistics");
        free(d->vcpus);
        d->vcpus = NULL;
        free(samples);
        col->errors++;
        return;
    }
    d->vcpu_source = xenstats_vcpu_map_source(t->map);
    d->nr_vcpus = n;
    for (i = 0; i < n; i++) {
        struct export_vcpu *v = &d->vcpus[i];
        uint64_t times[XENSTATS_VCPU_NR_RUNSTATES];

        xenstats_vcpu_sample_project(&samples[i], now, times);
        for (int s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            v->time_valid[s] = xenstats_vcpu_sample_status(&samples[i], (unsigned int)s) == XENSTATS_COUNTER_VALID;
            v->time_ns[s] = times[s];
        }
        v->state = xenstats_vcpu_sample_status(&samples[i], XEN_VCPU_STATS_STATE) == XENSTATS_COUNTER_VALID &&
                           samples[i].raw[XEN_VCPU_STATS_STATE] < XENSTATS_VCPU_NR_RUNSTATES
                       ? (uint8_t)samples[i].raw[XEN_VCPU_STATS_STATE]
                       : 0xff;
        v->changes_valid =
            xenstats_vcpu_sample_status(&samples[i], XEN_VCPU_STATS_STATE_CHANGES) == XENSTATS_COUNTER_VALID;
        v->changes = xenstats_vcpu_sample_value(&samples[i], XEN_VCPU_STATS_STATE_CHANGES);
    }
    free(samples);
    fill_table_memory(t, d);
}

static int compare_sets(const void *x, const void *y)
{
    const struct export_set *a = x, *b = y;
    int c = strcmp(a->provider, b->provider);

    return c ? c : strcmp(a->set, b->set);
}

static struct export_domain *find_domain(struct export_snapshot *s, uint32_t domid)
{
    uint32_t lo = 0, hi = s->nr_domains;

    /* the snapshot's domains are sorted by domid */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (s->domains[mid].domid == domid)
            return &s->domains[mid];
        if (s->domains[mid].domid < domid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void fill_set(struct export_set *out, const struct xenstats_pv_set *set, const struct xenstats_pv_set_info *info)
{
    out->provider = dup_or_empty(info->provider);
    out->set = dup_or_empty(info->set);
    out->reason = dup_or_empty(info->reason);
    out->state = info->state;
    export_figs_set(&out->figs, EXPORT_FIG_PV_SET_SAMPLES, info->samples);
    export_figs_set(&out->figs, EXPORT_FIG_PV_SET_TIMEOUTS, info->timeouts);
    export_figs_set(&out->figs, EXPORT_FIG_PV_SET_ERRORS, info->errors);
    if (info->samples)
        export_figs_set(&out->figs, EXPORT_FIG_PV_SET_LATENCY, info->last_latency_ns);
    out->stats = info->nr_stats ? calloc(info->nr_stats, sizeof(*out->stats)) : NULL;
    if (!out->stats)
        return;
    {
        struct xenstats_pv_stat st;
        size_t total = 0, used = 0;
        uint32_t k;

        /* names and texts of the set in one block: one allocation per set */
        for (k = 0; k < info->nr_stats; k++) {
            if (xenstats_pv_set_get_stat(set, k, &st) < 0)
                break;
            total += strlen(st.name) + 1;
            /*
             * Not `valid ? strlen(ascii) : 0`: gcc 14 -O2 (Debian 13) turns
             * it into an unconditional strlen() masked by valid, which read
             * NULL for an invalid text before value.ascii became "" then.
             */
            if (st.type == XENSTATS_PV_ASCII && st.valid)
                total += strlen(st.value.ascii) + 1;
            else if (st.type == XENSTATS_PV_ASCII)
                total += 1;
        }
        out->strings = malloc(total ? total : 1);
        if (!out->strings) {
            free(out->stats);
            out->stats = NULL;
            return;
        }
        for (k = 0; k < info->nr_stats; k++) {
            struct export_stat *o = &out->stats[k];
            size_t len;

            if (xenstats_pv_set_get_stat(set, k, &st) < 0)
                break;
            len = strlen(st.name) + 1;
            if (used + len > total)
                break; /* the set changed between the two passes: stop here */
            o->name = memcpy(out->strings + used, st.name, len);
            used += len;
            o->type = (uint8_t)st.type;
            o->valid = st.valid;
            if (st.type == XENSTATS_PV_ASCII) {
                const char *text = st.valid ? st.value.ascii : "";

                len = strlen(text) + 1;
                if (used + len > total)
                    break;
                o->ascii = memcpy(out->strings + used, text, len);
                used += len;
            } else {
                o->v.u64 = st.value.u64; /* the union's bits, whatever the type */
            }
        }
        out->nr_stats = k;
    }
}

/* Every monitored set into its domain: one pass to count, one to fill. */
static void fill_sets(struct collector *col, struct export_snapshot *s)
{
    size_t n = col->monitor ? xenstats_monitor_nr_sets(col->monitor) : 0, i;
    struct xenstats_pv_set_info info;
    struct export_domain *d;

    for (i = 0; i < n; i++) {
        xenstats_pv_set_get_info(xenstats_monitor_set(col->monitor, i), &info);
        d = find_domain(s, info.domid);
        if (d)
            d->nr_sets++; /* capacity for now */
    }
    for (i = 0; i < s->nr_domains; i++) {
        d = &s->domains[i];
        d->sets = d->nr_sets ? calloc(d->nr_sets, sizeof(*d->sets)) : NULL;
        d->nr_sets = 0;
    }
    for (i = 0; i < n; i++) {
        const struct xenstats_pv_set *set = xenstats_monitor_set(col->monitor, i);

        xenstats_pv_set_get_info(set, &info);
        d = find_domain(s, info.domid);
        if (!d || !d->sets)
            continue;
        uint64_t at = xenstats_pv_set_attached_ns(set);

        fill_set(&d->sets[d->nr_sets], set, &info);
        export_figs_set(&d->sets[d->nr_sets].figs, EXPORT_FIG_PV_SET_STATISTICS, d->sets[d->nr_sets].nr_stats);
        /* the monitor's clock is CLOCK_MONOTONIC, as the snapshot's */
        if (at && at <= s->monotonic_ns)
            d->sets[d->nr_sets].created = s->wall - (double)(s->monotonic_ns - at) / 1e9;
        d->nr_sets++;
        s->agent.sets_by_state[info.state < XENSTATS_PV_NR_SET_STATES ? info.state : 0]++;
    }
    for (i = 0; i < s->nr_domains; i++)
        if (s->domains[i].nr_sets > 1)
            qsort(s->domains[i].sets, s->domains[i].nr_sets, sizeof(struct export_set), compare_sets);
}

static void count_providers(struct export_snapshot *s)
{
    uint64_t providers = 0;

    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct export_domain *d = &s->domains[i];

        /* sets are sorted by provider: count the changes */
        for (uint32_t j = 0; j < d->nr_sets; j++)
            if (!j || strcmp(d->sets[j].provider, d->sets[j - 1].provider))
                providers++;
    }
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_PROVIDERS, providers);
}

static void fill_domain(struct collector *c, const struct tracked *t, struct export_domain *d)
{
    const struct xenstats_domain_info *in = &t->info;
    struct export_figs *f = &d->figs;

    (void)c;
    memcpy(d->uuid, in->uuid, sizeof(d->uuid));
    d->flags = in->flags;
    d->shutdown_reason = in->shutdown_reason;
    export_figs_set(f, EXPORT_FIG_DOMAIN_CPU, in->cpu_time_ns);
    export_figs_set(f, EXPORT_FIG_DOMAIN_VCPUS_ONLINE, in->nr_online_vcpus);
    export_figs_set(f, EXPORT_FIG_DOMAIN_MEMORY, in->memory_kib * 1024);
    if (in->max_memory_kib != XENSTATS_KIB_UNLIMITED)
        export_figs_set(f, EXPORT_FIG_DOMAIN_MEMORY_MAX, in->max_memory_kib * 1024);
    export_figs_set(f, EXPORT_FIG_DOMAIN_MEMORY_SHARED, in->shared_kib * 1024);
    export_figs_set(f, EXPORT_FIG_DOMAIN_MEMORY_OUTSTANDING, in->outstanding_kib * 1024);
    for (int k = 0; k < NR_KEYS; k++)
        if (t->key_valid[k])
            export_figs_set(f, domain_keys[k].figure, t->key_kib[k] * 1024);
    if (!c->no_keys)
        export_figs_set(f, EXPORT_FIG_DOMAIN_GUEST_REJECTED, t->keys_rejected);
}

static void fill_host(struct collector *c, struct export_snapshot *s)
{
    struct xenstats_host_info hi;
    uint64_t *idle;
    size_t n = 0;

    if (c->no_host)
        return;
    if (xenstats_host_info(c->host, &hi) < 0) {
        c->no_host = errno == EOPNOTSUPP;
        if (!c->no_host)
            c->errors++;
        return;
    }
    snprintf(s->xen_version, sizeof(s->xen_version), "%s", hi.xen_version);
    snprintf(s->scheduler, sizeof(s->scheduler), "%s", hi.scheduler);
    export_figs_set(&s->host, EXPORT_FIG_HOST_PCPUS, hi.nr_pcpus);
    export_figs_set(&s->host, EXPORT_FIG_HOST_CPU_HZ, (uint64_t)hi.cpu_khz * 1000);
    export_figs_set(&s->host, EXPORT_FIG_HOST_MEMORY_TOTAL, hi.total_memory_kib * 1024);
    export_figs_set(&s->host, EXPORT_FIG_HOST_MEMORY_FREE, hi.free_memory_kib * 1024);
    export_figs_set(&s->host, EXPORT_FIG_HOST_MEMORY_SCRUB, hi.scrub_memory_kib * 1024);
    idle = calloc(MAX_PCPUS, sizeof(*idle));
    if (idle && xenstats_host_pcpu_idle(c->host, idle, MAX_PCPUS, &n) == 0 && n) {
        s->pcpus = calloc(n, sizeof(*s->pcpus));
        for (size_t i = 0; s->pcpus && i < n; i++)
            export_figs_set(&s->pcpus[i], EXPORT_FIG_PCPU_IDLE, idle[i]);
        s->nr_pcpus = s->pcpus ? (uint32_t)n : 0;
    }
    free(idle);
}

/* Room for n devices of a domain; NULL (and *ret_n 0) when n is 0 or no memory. */
static struct export_device *new_devices(size_t n, uint32_t *ret_n)
{
    struct export_device *d = n ? calloc(n, sizeof(*d)) : NULL;

    *ret_n = d ? (uint32_t)n : 0;
    return d;
}

static void vif_figures(struct export_device *out, const struct xenstats_vif *in)
{
    struct export_figs *f = &out->figs;

    out->devid = in->devid;
    snprintf(out->name, sizeof(out->name), "%s", in->name);
    export_figs_set(f, EXPORT_FIG_VIF_RX_BYTES, in->rx_bytes);
    export_figs_set(f, EXPORT_FIG_VIF_RX_PACKETS, in->rx_packets);
    export_figs_set(f, EXPORT_FIG_VIF_RX_ERRORS, in->rx_errors);
    export_figs_set(f, EXPORT_FIG_VIF_RX_DROPS, in->rx_dropped);
    export_figs_set(f, EXPORT_FIG_VIF_TX_BYTES, in->tx_bytes);
    export_figs_set(f, EXPORT_FIG_VIF_TX_PACKETS, in->tx_packets);
    export_figs_set(f, EXPORT_FIG_VIF_TX_ERRORS, in->tx_errors);
    export_figs_set(f, EXPORT_FIG_VIF_TX_DROPS, in->tx_dropped);
    static const enum export_figure_id netback[XENSTATS_NETBACK_STATS] = {
        [XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP] = EXPORT_FIG_VIF_NB_CSUM_FIXUP,
        [XENSTATS_NETBACK_TX_ZEROCOPY_SENT] = EXPORT_FIG_VIF_NB_ZC_SENT,
        [XENSTATS_NETBACK_TX_ZEROCOPY_SUCCESS] = EXPORT_FIG_VIF_NB_ZC_SUCCESS,
        [XENSTATS_NETBACK_TX_ZEROCOPY_FAIL] = EXPORT_FIG_VIF_NB_ZC_FAIL,
        [XENSTATS_NETBACK_TX_FRAG_OVERFLOW] = EXPORT_FIG_VIF_NB_FRAG_OVERFLOW,
    };
    for (int i = 0; i < XENSTATS_NETBACK_STATS; i++)
        if (in->netback_present & (1u << i))
            export_figs_set(f, netback[i], in->netback[i]);
}

static void vbd_figures(struct export_device *out, const struct xenstats_vbd *in)
{
    struct export_figs *f = &out->figs;

    out->devid = in->devid;
    snprintf(out->name, sizeof(out->name), "%s", in->name);
    if (in->unreadable)
        return; /* listed, with no figures: nothing is exported of it, xentop shows '-' */
    export_figs_set(f, EXPORT_FIG_VBD_OO, in->oo_req);
    export_figs_set(f, EXPORT_FIG_VBD_READS, in->rd_req);
    export_figs_set(f, EXPORT_FIG_VBD_WRITES, in->wr_req);
    export_figs_set(f, EXPORT_FIG_VBD_FLUSHES, in->f_req);
    export_figs_set(f, EXPORT_FIG_VBD_DISCARDS, in->ds_req);
    export_figs_set(f, EXPORT_FIG_VBD_READ_SECTORS, in->rd_sect);
    export_figs_set(f, EXPORT_FIG_VBD_WRITE_SECTORS, in->wr_sect);
}

static void fill_devices(struct collector *c, struct export_snapshot *s)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    size_t nv = 0, nb = 0, vi = 0, bi = 0, first;

    if (c->no_devices)
        return;
    if (xenstats_host_list_devices(c->host, &vifs, &nv, &vbds, &nb) < 0) {
        c->no_devices = errno == EOPNOTSUPP;
        if (!c->no_devices)
            c->errors++;
        return;
    }
    /* the domains and both lists are in domid order: walk along them */
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        struct export_domain *d = &s->domains[i];

        while (vi < nv && vifs[vi].domid < d->domid)
            vi++;
        for (first = vi; vi < nv && vifs[vi].domid == d->domid;)
            vi++;
        d->vifs = new_devices(vi - first, &d->nr_vifs);
        for (uint32_t k = 0; k < d->nr_vifs; k++)
            vif_figures(&d->vifs[k], &vifs[first + k]);
        while (bi < nb && vbds[bi].domid < d->domid)
            bi++;
        for (first = bi; bi < nb && vbds[bi].domid == d->domid;)
            bi++;
        d->vbds = new_devices(bi - first, &d->nr_vbds);
        for (uint32_t k = 0; k < d->nr_vbds; k++)
            vbd_figures(&d->vbds[k], &vbds[first + k]);
    }
    free(vifs);
    free(vbds);
}

struct export_snapshot *collector_snapshot(struct collector *c, const struct export_agent *agent)
{
    struct export_snapshot *s = export_snapshot_new();
    struct xenstats_pv_domain_info pv;
    struct timespec wall;
    struct tracked *t;
    uint32_t i = 0;
    uint64_t now = monotonic_ns();

    c->collecting = false;
    if (!s)
        return NULL;
    s->domains = calloc(c->nr_domains ? c->nr_domains : 1, sizeof(*s->domains));
    if (!s->domains) {
        export_snapshot_unref(s);
        errno = ENOMEM;
        return NULL;
    }
    clock_gettime(CLOCK_REALTIME, &wall);
    s->wall = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    /* the round's domain figures (CPU time above all) were read at its
     * start: a rate over two snapshots must divide by the time between
     * those reads, not between the rounds' ends (a first round that maps
     * every table ends late, and the next rate came out twice too high) */
    s->monotonic_ns = c->round_start && c->round_start <= now ? c->round_start : now;
    s->interval = (double)c->opts.interval_ns / 1e9;
    s->backend = xenstats_host_backend(c->host) == XENSTATS_BACKEND_XEN ? "xen" : "emu";
    s->self_domid = xenstats_host_self_domid(c->host);
    for (t = c->domains; t; t = t->next, i++) {
        struct export_domain *d = &s->domains[i];

        d->domid = t->info.domid;
        snprintf(d->name, sizeof(d->name), "%s", t->info.name);
        d->nr_vcpus = t->info.nr_vcpus;
        fill_domain(c, t, d);
        fill_vcpus(c, t, d);
        if (t->pv && xenstats_monitor_domain_info(c->monitor, t->info.domid, &pv) == 0)
            export_domain_set_pv(d, &pv);
    }
    s->nr_domains = i;
    fill_host(c, s);
    fill_devices(c, s);
    if (agent)
        s->agent = *agent;
    fill_sets(c, s);
    count_providers(s);
    c->samples++;
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_SAMPLES, c->samples);
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_ERRORS, c->errors);
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_PV_DOMAINS_PENDING, c->pending);
    export_figs_set(&s->agent.figs, EXPORT_FIG_AGENT_SAMPLE_DURATION, now - c->round_start);
    /* the times of the vCPUs are on the producer's clock: so is the snapshot's */
    return s;
}

/*
 * A caller that collects a round at a time (xenstats top --direct) has no
 * time between rounds to spread new domains over, and shows what it has
 * at once: every new domain is set up in the round that finds it.
 */
struct export_snapshot *collector_collect(struct collector *c, const struct export_agent *agent)
{
    c->at_once = true;
    collector_begin(c);
    if (c->monitor)
        xenstats_monitor_sample(c->monitor);
    return collector_snapshot(c, agent);
}
