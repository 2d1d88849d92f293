/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats provider: the guest side of docs/pv-stats.md.  Publishing
 * follows the seed: pages granted read-only to the monitor, the ref keys
 * written first and `event-channel` last; withdrawal deletes
 * `event-channel`, waits for the monitor to close its port, then removes
 * the keys.
 *
 * Resume (docs/pv-stats.md "Lifecycle"): after a restore or a migration
 * the domain has a new id, no key it wrote, a new grant table and dead
 * event channels.  A watch on the relative key `domid` fires once after
 * every resume (the guest's kernel registers its watches again, and
 * xenstored fires a watch when it is registered); the provider then reads
 * `domid` and its own `event-channel` keys, and if the domain moved or the
 * keys are gone it publishes every set again with fresh grants, a fresh
 * event channel handle and fresh keys.  The old handle is never unbound nor
 * closed: Linux 6.1 BUGs on a port bound before the suspend.
 */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xenstore.h>

#include <xenstats/pv_provider.h>

#include "platform/platform.h"
#include "pv/parse.h"
#include "util/util.h"

#define PATH_LEN 512
#define DEFAULT_WITHDRAW_MS 2000
/* Watch tokens: our domain's id, and `stats` while waiting for it. */
#define TOKEN_DOMID "xenstats-provider-domid"
#define TOKEN_STATS "xenstats-provider-stats"

struct xenstats_provider_set {
    struct xenstats_provider_set *next;
    struct xenstats_provider *provider;
    char name[XEN_PV_STATS_NAME_MAX + 1];
    char key[XEN_PV_STATS_NAME_MAX + 1];
    char path[PATH_LEN];
    bool republish; /* published before a resume: to publish again */
    xenstats_provider_refresh_fn refresh;
    void *userdata;
    struct pv_stat_desc *descs;
    uint32_t count, cap;
    uint32_t nr_pages;
    bool published;
    /* before publishing values live here; after, in the granted pages */
    uint8_t *staging;
    uint8_t *name_pages;  /* granted read-only to the monitor */
    uint8_t *value_pages; /* granted read-only to the monitor */
    uint32_t *name_refs, *value_refs;
    int port;
};

struct xenstats_provider {
    struct xenstats_host *host;
    struct platform *platform;
    struct xs_handle *xs;
    struct platform_evtchn *evtchn;
    /* handles whose ports went stale in a resume: never unbound or closed */
    struct platform_evtchn **stale;
    size_t nr_stale;
    int epfd; /* xenstats_provider_fd(): evtchn and xenstore */
    char name[XEN_PV_STATS_NAME_MAX + 1];
    char key[XEN_PV_STATS_NAME_MAX + 1];
    uint32_t domid;      /* the domain we publish in */
    char home[PATH_LEN]; /* /local/domain/<id>/stats/<key> */
    uint32_t monitor;
    bool monitor_forced; /* opts.monitor_domid, kept across a resume */
    bool watching_stats; /* a resume waits for the monitor's `stats` */
    bool republish;      /* some set waits to be published again */
    uint32_t withdraw_timeout_ms;
    bool key_written;
    struct xenstats_provider_set *sets;
    int cpu;                /* xenstats_provider_set_cpu(), -1: none */
    bool steer_warned;
    char irq_name[32];      /* "evtchn:<comm>", Linux's name of our interrupts */
};

static struct platform *platform_of(struct xenstats_host *host)
{
    return &host->platform;
}

static int read_monitor_domid(struct xs_handle *xs, const char *stats, uint32_t *ret)
{
    unsigned int len = 0;
    char *v = xs_read(xs, XBT_NULL, stats, &len);

    if (!v)
        return negative_errno();
    *ret = 0;
    /* An empty or unreadable value means the default monitor, dom0. */
    if (len && pv_parse_number(v, len, XENSTATS_DOMID_MAX, ret) < 0)
        *ret = 0;
    free(v);
    return 0;
}

/* p->home and every set's path, in the domain `domid`; stats: its `stats`. */
static int make_paths(struct xenstats_provider *p, uint32_t domid, char stats[PATH_LEN])
{
    struct xenstats_provider_set *s;
    char *home = xs_get_domain_path(p->xs, domid);
    int r = 0;

    if (!home)
        return negative_errno();
    if (snprintf(stats, PATH_LEN, "%s/%s", home, XEN_PV_STATS_TOP) >= PATH_LEN ||
        snprintf(p->home, sizeof(p->home), "%s/%s", stats, p->key) >= (int)sizeof(p->home))
        r = -ENAMETOOLONG;
    for (s = p->sets; s && r == 0; s = s->next)
        if (snprintf(s->path, sizeof(s->path), "%s/%s", p->home, s->key) >= (int)sizeof(s->path))
            r = -ENAMETOOLONG;
    free(home);
    return r;
}

static int epoll_add(int epfd, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? negative_errno() : 0;
}

/* Open the event channel handle the sets bind their ports on. */
static int open_evtchn(struct xenstats_provider *p)
{
    int fd, r;

    p->evtchn = platform_evtchn_open(p->platform);
    if (!p->evtchn)
        return negative_errno();
    fd = platform_evtchn_fd(p->platform, p->evtchn);
    r = fd < 0 ? fd : epoll_add(p->epfd, fd);
    if (r < 0) {
        platform_evtchn_close(p->platform, p->evtchn);
        p->evtchn = NULL;
    }
    return r;
}

struct xenstats_provider *xenstats_provider_new(struct xenstats_host *host, const char *name,
                                                const struct xenstats_provider_opts *opts)
{
    struct xenstats_provider_opts o = {.size = sizeof(o), .monitor_domid = -1};
    struct xenstats_provider *p;
    struct platform *pl = platform_of(host);
    char stats[PATH_LEN];
    int r;

    char key[XEN_PV_STATS_NAME_MAX + 1];

    if (xenstats_pv_name_key(name, key, sizeof(key)) < 0) {
        log_error("provider name '%s' is invalid (1-62 printable ASCII characters)", name ? name : "");
        errno = EINVAL;
        return NULL;
    }
    if (OPTS_READ(&o, opts) < 0)
        return NULL;
    if (!platform_has_store_grant_evtchn(pl)) {
        errno = ENOTSUP;
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    p->host = host;
    p->platform = pl;
    p->epfd = -1;
    strcpy(p->name, name);
    strcpy(p->key, key);
    p->domid = pl->self_domid;
    p->withdraw_timeout_ms = o.withdraw_timeout_ms ? o.withdraw_timeout_ms : DEFAULT_WITHDRAW_MS;

    p->xs = platform_store_open(pl, 0);
    if (!p->xs) {
        r = negative_errno();
        goto fail;
    }
    r = make_paths(p, p->domid, stats);
    if (r < 0)
        goto fail;
    r = read_monitor_domid(p->xs, stats, &p->monitor);
    if (r == -ENOENT) {
        log_error("%s does not exist: the toolstack does not monitor PV stats of this domain", stats);
        goto fail;
    }
    if (r < 0)
        goto fail;
    if (o.monitor_domid >= 0) {
        p->monitor = (uint32_t)o.monitor_domid;
        p->monitor_forced = true;
    }
    p->cpu = -1;
    {
        /* Linux's evtchn device names its interrupts after the opener. */
        char comm[17] = "";

        prctl(PR_GET_NAME, comm, 0, 0, 0);
        snprintf(p->irq_name, sizeof(p->irq_name), "evtchn:%s", comm);
    }
    p->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (p->epfd < 0) {
        r = negative_errno();
        goto fail;
    }
    r = open_evtchn(p);
    if (r < 0)
        goto fail;
    /* A resume is seen through this watch (see the top of this file).  It
     * is relative, so it follows the domain to its new id. */
    if (!xs_watch(p->xs, "domid", TOKEN_DOMID)) {
        r = negative_errno();
        goto fail;
    }
    r = epoll_add(p->epfd, xs_fileno(p->xs));
    if (r < 0)
        goto fail;
    return p;
fail:
    if (p->evtchn)
        platform_evtchn_close(pl, p->evtchn);
    if (p->epfd >= 0)
        close(p->epfd);
    if (p->xs)
        xs_close(p->xs);
    free(p);
    set_errno(r);
    return NULL;
}

/*
 * Deliver our event channels to provider->cpu: on Linux their interrupts are
 * "evtchn:<comm>" in /proc/interrupts, and writing a CPU to an interrupt's
 * smp_affinity_list rebinds the channel to that vCPU.
 */
static int steer_event_channels(struct xenstats_provider *p)
{
    char *line = NULL, path[64];
    size_t cap = 0, want = strlen(p->irq_name);
    int r = 0, moved = 0;
    FILE *f;

    if (p->cpu < 0 || platform_kind(p->platform) != XENSTATS_BACKEND_XEN)
        return 0;
    f = fopen("/proc/interrupts", "re");
    if (!f)
        return negative_errno();
    while (getline(&line, &cap, f) > 0) {
        char *end, *name;
        long irq = strtol(line, &end, 10);
        size_t n = strlen(line);
        FILE *a;

        if (end == line || *end != ':')
            continue;
        while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
            line[--n] = '\0';
        name = strrchr(line, ' ');
        if (!name || strlen(name + 1) != want || memcmp(name + 1, p->irq_name, want))
            continue;
        snprintf(path, sizeof(path), "/proc/irq/%ld/smp_affinity_list", irq);
        a = fopen(path, "we");
        if (!a) {
            r = negative_errno();
            continue;
        }
        fprintf(a, "%d\n", p->cpu);
        if (fclose(a) != 0) { /* the write happens here */
            r = negative_errno();
            continue;
        }
        moved++;
    }
    free(line);
    fclose(f);
    if (r < 0 && !p->steer_warned) {
        p->steer_warned = true;
        log_warning("cannot deliver event channels (%s) to CPU %d: %s", p->irq_name, p->cpu, strerror(-r));
    }
    log_debug("%d event channel interrupts (%s) delivered to CPU %d", moved, p->irq_name, p->cpu);
    return r;
}

int xenstats_provider_set_cpu(struct xenstats_provider *provider, int cpu)
{
    cpu_set_t set;

    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return set_errno(-EINVAL);
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) < 0)
        return set_errno(negative_errno());
    provider->cpu = cpu;
    return set_errno(steer_event_channels(provider));
}

uint32_t xenstats_provider_monitor_domid(const struct xenstats_provider *provider)
{
    return provider->monitor;
}

int xenstats_provider_fd(const struct xenstats_provider *provider)
{
    return provider->epfd;
}

struct xenstats_provider_set *xenstats_provider_add_set(struct xenstats_provider *provider, const char *name,
                                                        xenstats_provider_refresh_fn refresh, void *userdata)
{
    struct xenstats_provider_set *s;
    char key[XEN_PV_STATS_NAME_MAX + 1], path[PATH_LEN];

    if (xenstats_pv_name_key(name, key, sizeof(key)) < 0) {
        log_error("set name '%s' is invalid (1-62 printable ASCII characters)", name ? name : "");
        errno = EINVAL;
        return NULL;
    }
    if (snprintf(path, sizeof(path), "%s/%s", provider->home, key) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    /* Two names with one key would share keys in xenstore. */
    for (s = provider->sets; s; s = s->next) {
        if (!strcmp(s->path, path)) {
            errno = EEXIST;
            return NULL;
        }
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    if (snprintf(s->path, sizeof(s->path), "%s", path) >= (int)sizeof(s->path)) {
        free(s);
        errno = ENAMETOOLONG;
        return NULL;
    }
    strcpy(s->name, name);
    strcpy(s->key, key);
    s->provider = provider;
    s->refresh = refresh;
    s->userdata = userdata;
    s->port = -1;
    s->next = provider->sets;
    provider->sets = s;
    return s;
}

unsigned int xenstats_provider_set_count(const struct xenstats_provider_set *set)
{
    return set->count;
}

int xenstats_provider_set_declare(struct xenstats_provider_set *set, const char *name, enum xenstats_pv_type type)
{
    uint32_t i;

    if (set->published)
        return set_errno(-EBUSY); /* names never change after publishing */
    if (xenstats_pv_name_check(name) < 0 || !xenstats_pv_type_name(type))
        return set_errno(-EINVAL);
    for (i = 0; i < set->count; i++)
        if (!strcmp(set->descs[i].name, name))
            return set_errno(-EEXIST);
    if (set->count == PV_MAX_STATS)
        return set_errno(-ENOSPC);
    if (set->count == set->cap) {
        uint32_t cap = set->cap ? set->cap * 2 : 64;
        struct pv_stat_desc *d = realloc(set->descs, cap * sizeof(*d));
        uint8_t *st = realloc(set->staging, (size_t)cap * XEN_PV_STATS_ENTRY_SIZE);

        if (d)
            set->descs = d;
        if (st)
            set->staging = st;
        if (!d || !st)
            return set_errno(-ENOMEM);
        set->cap = cap;
    }
    set->descs[set->count].type = (uint8_t)type;
    strcpy(set->descs[set->count].name, name);
    memset(set->staging + (size_t)set->count * XEN_PV_STATS_ENTRY_SIZE, 0, XEN_PV_STATS_ENTRY_SIZE);
    return (int)set->count++;
}

static uint8_t *value_entry(struct xenstats_provider_set *set, unsigned int index, uint8_t type)
{
    if (index >= set->count || set->descs[index].type != type)
        return NULL;
    return (set->published ? set->value_pages : set->staging) + (size_t)index * XEN_PV_STATS_ENTRY_SIZE;
}

/* Values are little endian on the wire whatever this CPU's order. */
static void put_le64(uint8_t *e, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        __atomic_store_n(&e[i], (uint8_t)(v >> (8 * i)), __ATOMIC_RELAXED);
}

int xenstats_provider_set_s64(struct xenstats_provider_set *set, unsigned int index, int64_t value)
{
    uint8_t *e = value_entry(set, index, XEN_PV_STATS_TYPE_S64);

    if (!e)
        return set_errno(-EINVAL);
    put_le64(e, (uint64_t)value);
    return 0;
}

int xenstats_provider_set_u64(struct xenstats_provider_set *set, unsigned int index, uint64_t value)
{
    uint8_t *e = value_entry(set, index, XEN_PV_STATS_TYPE_U64);

    if (!e)
        return set_errno(-EINVAL);
    put_le64(e, value);
    return 0;
}

int xenstats_provider_set_double(struct xenstats_provider_set *set, unsigned int index, double value)
{
    uint8_t *e = value_entry(set, index, XEN_PV_STATS_TYPE_DOUBLE);
    uint64_t bits;

    if (!e)
        return set_errno(-EINVAL);
    memcpy(&bits, &value, sizeof(bits));
    put_le64(e, bits);
    return 0;
}

int xenstats_provider_set_ascii(struct xenstats_provider_set *set, unsigned int index, const char *value)
{
    uint8_t *e = value_entry(set, index, XEN_PV_STATS_TYPE_ASCII);
    size_t len, i;

    if (!e || !value)
        return set_errno(-EINVAL);
    len = strnlen(value, XEN_PV_STATS_ENTRY_SIZE);
    if (len >= XEN_PV_STATS_ENTRY_SIZE)
        return set_errno(-EINVAL);
    for (i = 0; i < len; i++)
        if (!pv_char_ok((unsigned char)value[i]))
            return set_errno(-EINVAL);
    for (i = 0; i < XEN_PV_STATS_ENTRY_SIZE; i++)
        __atomic_store_n(&e[i], i < len ? (uint8_t)value[i] : 0, __ATOMIC_RELAXED);
    return 0;
}

static int write_key(struct xenstats_provider_set *set, const char *key, uint32_t v)
{
    char path[PATH_LEN + 32], value[16];
    int n;

    if (snprintf(path, sizeof(path), "%s/%s", set->path, key) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    n = snprintf(value, sizeof(value), "%u", v);
    if (!xs_write(set->provider->xs, XBT_NULL, path, value, (unsigned int)n))
        return negative_errno();
    return 0;
}

static void unpublish_pages(struct xenstats_provider_set *set)
{

    if (set->name_pages)
        platform_grant_unshare(set->provider->platform, set->name_pages, set->nr_pages);
    if (set->value_pages)
        platform_grant_unshare(set->provider->platform, set->value_pages, set->nr_pages);
    set->name_pages = set->value_pages = NULL;
}

int xenstats_provider_set_publish(struct xenstats_provider_set *set)
{
    struct xenstats_provider *p = set->provider;
    struct platform *pl = p->platform;
    char key[32];
    uint32_t i;
    int r;

    if (set->published)
        return set_errno(-EALREADY);
    if (!set->count)
        return set_errno(-ENODATA);
    if (p->republish && !set->republish) {
        /* after a resume, before the new domain is ready: with the others */
        set->republish = true;
        return 0;
    }
    if (!p->evtchn)
        return set_errno(-ENOTCONN); /* a resume could not open a new one yet */
    set->nr_pages = (set->count + XEN_PV_STATS_PER_PAGE - 1) / XEN_PV_STATS_PER_PAGE;
    set->name_refs = calloc(set->nr_pages, sizeof(uint32_t));
    set->value_refs = calloc(set->nr_pages, sizeof(uint32_t));
    if (!set->name_refs || !set->value_refs) {
        r = -ENOMEM;
        goto fail;
    }
    set->name_pages = platform_grant_share_pages(pl, p->monitor, set->nr_pages, set->name_refs, 0);
    if (!set->name_pages) {
        r = negative_errno();
        goto fail;
    }
    set->value_pages = platform_grant_share_pages(pl, p->monitor, set->nr_pages, set->value_refs, 0);
    if (!set->value_pages) {
        r = negative_errno();
        goto fail;
    }
    for (i = 0; i < set->count; i++) {
        struct xen_pv_stats_name_type *nt =
            (struct xen_pv_stats_name_type *)(set->name_pages + (size_t)i * XEN_PV_STATS_ENTRY_SIZE);

        nt->type = set->descs[i].type;
        memcpy(nt->name, set->descs[i].name, strlen(set->descs[i].name) + 1);
    }
    memcpy(set->value_pages, set->staging, (size_t)set->count * XEN_PV_STATS_ENTRY_SIZE);
    set->published = true;
    if (set->refresh && set->refresh(set, set->userdata) < 0)
        log_warning("set %s: first refresh failed", set->path);

    /* A node's value carries the name its key could not spell. */
    if (!p->key_written) {
        if (!xs_write(p->xs, XBT_NULL, p->home, p->name, (unsigned int)strlen(p->name))) {
            r = negative_errno();
            goto fail;
        }
        p->key_written = true;
    }
    /* Keys a process of ours left when it died (SIGKILL, a crash) go first:
     * the monitor sees the old set withdrawn before the new one appears. */
    xs_rm(p->xs, XBT_NULL, set->path);
    if (!xs_write(p->xs, XBT_NULL, set->path, set->name, (unsigned int)strlen(set->name))) {
        r = negative_errno();
        goto fail;
    }
    for (i = 0; i < set->nr_pages; i++) {
        snprintf(key, sizeof(key), "%s%u", XEN_PV_STATS_KEY_NAME_TYPE_REF, i);
        r = write_key(set, key, set->name_refs[i]);
        if (r == 0) {
            snprintf(key, sizeof(key), "%s%u", XEN_PV_STATS_KEY_VALUE_REF, i);
            r = write_key(set, key, set->value_refs[i]);
        }
        if (r < 0)
            goto fail_keys;
    }
    r = platform_evtchn_bind_unbound_port(pl, p->evtchn, p->monitor);
    if (r < 0)
        goto fail_keys;
    set->port = r;
    steer_event_channels(p); /* best effort: it only saves a wake-up */
    /* Last: its appearance tells the monitor everything else is there. */
    r = write_key(set, XEN_PV_STATS_KEY_EVENT_CHANNEL, (uint32_t)set->port);
    if (r < 0)
        goto fail_port;
    return 0;

fail_port:
    platform_evtchn_unbind(pl, p->evtchn, (uint32_t)set->port);
    set->port = -1;
fail_keys:
    xs_rm(p->xs, XBT_NULL, set->path);
fail:
    unpublish_pages(set);
    set->published = false;
    free(set->name_refs);
    free(set->value_refs);
    set->name_refs = set->value_refs = NULL;
    return set_errno(r);
}

static void sleep_ms(unsigned int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static void set_free(struct xenstats_provider_set *set)
{
    free(set->descs);
    free(set->staging);
    free(set->name_refs);
    free(set->value_refs);
    free(set);
}

/* ---- resume ------------------------------------------------------------ */

/* Our domain's id as xenstored resolves the relative `domid` now. */
static int read_own_domid(struct xenstats_provider *p, uint32_t *ret)
{
    unsigned int len = 0;
    char *v = xs_read(p->xs, XBT_NULL, "domid", &len);
    int r;

    if (!v)
        return negative_errno();
    r = pv_parse_number(v, len, XENSTATS_DOMID_MAX, ret);
    free(v);
    return r < 0 ? -EPROTO : 0;
}

/* Some published set's `event-channel` is not ours any more (or gone). */
static bool keys_lost(struct xenstats_provider *p)
{
    struct xenstats_provider_set *s;

    for (s = p->sets; s; s = s->next) {
        char path[PATH_LEN + 32];
        unsigned int len = 0;
        uint32_t port;
        char *v;
        bool lost;

        if (!s->published || s->port < 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", s->path, XEN_PV_STATS_KEY_EVENT_CHANNEL);
        v = xs_read(p->xs, XBT_NULL, path, &len);
        if (!v && errno != ENOENT)
            return false; /* cannot tell: the next event looks again */
        lost = !v || pv_parse_number(v, len, UINT32_MAX, &port) < 0 || port != (uint32_t)s->port;
        free(v);
        if (lost)
            return true;
    }
    return false;
}

/*
 * The domain was resumed elsewhere (or its keys were lost): forget every
 * grant, port and key of before, without touching the ports (see the top
 * of this file), and move to the domain's id now.
 */
static void forget_publication(struct xenstats_provider *p, uint32_t domid)
{
    struct xenstats_provider_set *s;
    struct platform_evtchn **stale;
    bool bound = false;
    char stats[PATH_LEN];

    for (s = p->sets; s; s = s->next) {
        if (!s->published)
            continue;
        /* values set outside a refresh callback are kept */
        memcpy(s->staging, s->value_pages, (size_t)s->count * XEN_PV_STATS_ENTRY_SIZE);
        /* the new grant table has none of these refs: ending them is safe */
        unpublish_pages(s);
        free(s->name_refs);
        free(s->value_refs);
        s->name_refs = s->value_refs = NULL;
        bound |= s->port >= 0;
        s->port = -1;
        s->published = false;
        s->republish = true;
        p->republish = true;
    }
    if (p->evtchn && bound) {
        stale = realloc(p->stale, (p->nr_stale + 1) * sizeof(*stale));
        if (stale) {
            int fd = platform_evtchn_fd(p->platform, p->evtchn);

            p->stale = stale;
            p->stale[p->nr_stale++] = p->evtchn;
            if (fd >= 0)
                epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
        } else {
            /* out of memory: keep using it rather than close it; its ports
             * are dead, so the new ones share it */
            log_warning("out of memory: the stale event channel handle stays in use");
            goto moved;
        }
        p->evtchn = NULL;
    }
moved:
    if (domid != p->domid) {
        /* the host's idea of our domain, for new connections (emulated) */
        p->platform->self_domid = domid;
        p->domid = domid;
    }
    p->key_written = false;
    if (make_paths(p, domid, stats) < 0)
        log_warning("domain %u: the provider's paths are too long", domid);
}

/*
 * Publish again what a resume dropped, once the monitor has created the
 * new domain's `stats` (until then, a watch on it says when).
 */
static int republish(struct xenstats_provider *p)
{
    struct xenstats_provider_set *s;
    char stats[PATH_LEN];
    bool waiting = false;
    uint32_t monitor;
    int r;

    r = make_paths(p, p->domid, stats);
    if (r < 0)
        return r;
    r = read_monitor_domid(p->xs, stats, &monitor);
    if (r == -ENOENT) {
        if (!p->watching_stats && xs_watch(p->xs, XEN_PV_STATS_TOP, TOKEN_STATS))
            p->watching_stats = true;
        return 0;
    }
    if (r < 0)
        return r;
    if (!p->monitor_forced)
        p->monitor = monitor;
    if (!p->evtchn) {
        r = open_evtchn(p);
        if (r < 0) {
            log_warning("cannot open an event channel handle after a resume: %s", strerror(-r));
            return r;
        }
    }
    for (s = p->sets; s; s = s->next) {
        if (!s->republish)
            continue;
        r = xenstats_provider_set_publish(s);
        if (r < 0 && r != -EALREADY) {
            log_warning("set %s: cannot publish it again after a resume: %s", s->path, strerror(-r));
            waiting = true;
            continue;
        }
        s->republish = false;
    }
    p->republish = waiting;
    if (!waiting) {
        log_info("provider %s: every set published again in domain %u", p->name, p->domid);
        if (p->watching_stats && xs_unwatch(p->xs, XEN_PV_STATS_TOP, TOKEN_STATS))
            p->watching_stats = false;
    } else if (!p->watching_stats && xs_watch(p->xs, XEN_PV_STATS_TOP, TOKEN_STATS)) {
        p->watching_stats = true; /* try again on the next change there */
    }
    return 0;
}

/* After a watch event: was the domain resumed?  Then publish again. */
static int check_resume(struct xenstats_provider *p)
{
    uint32_t domid;
    int r = read_own_domid(p, &domid);

    if (r < 0)
        return r == -ENOENT ? 0 : r; /* no `domid` to go by (a test host) */
    if (domid != p->domid || keys_lost(p)) {
        log_info("provider %s: domain %u %s: publishing every set again", p->name, p->domid,
                 domid != p->domid ? "resumed under a new id" : "lost its keys (resumed?)");
        if (domid != p->domid)
            log_info("provider %s: now domain %u", p->name, domid);
        forget_publication(p, domid);
    }
    return p->republish ? republish(p) : 0;
}

/* Read the watch events that are there; look for a resume if any came. */
static int handle_watches(struct xenstats_provider *p)
{
    bool ours = false;
    char **ev;

    while ((ev = xs_check_watch(p->xs))) {
        ours |= !strcmp(ev[XS_WATCH_TOKEN], TOKEN_DOMID) || !strcmp(ev[XS_WATCH_TOKEN], TOKEN_STATS);
        free(ev);
    }
    /* (not a transient error: the connection to xenstore is gone, and its
     * fd stays readable; the host went away, as a dead handle says) */
    if (errno != EAGAIN)
        return -ESRCH;
    return ours ? check_resume(p) : 0;
}

/* Take set off the provider's list. */
static void unlink_set(struct xenstats_provider *p, struct xenstats_provider_set *set)
{
    struct xenstats_provider_set **pp;

    for (pp = &p->sets; *pp && *pp != set; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = set->next;
}

/* The seed's first step: delete `event-channel`, the monitor's cue to close its port. */
static void withdraw_begin(struct xenstats_provider_set *set)
{
    char path[PATH_LEN + 32];

    snprintf(path, sizeof(path), "%s/%s", set->path, XEN_PV_STATS_KEY_EVENT_CHANNEL);
    xs_rm(set->provider->xs, XBT_NULL, path);
}

/* Has the monitor closed its end (our port fallen back to unbound, or gone)? */
static bool monitor_closed(struct xenstats_provider_set *set)
{
    struct xenstats_provider *p = set->provider;
    enum platform_evtchn_state st = PLATFORM_EVTCHN_UNBOUND;

    return platform_evtchn_status(p->platform, p->evtchn, (uint32_t)set->port, &st) < 0 ||
           st != PLATFORM_EVTCHN_INTERDOMAIN;
}

/* The rest: the set's keys, port and grants, and the provider's key when no set is left. */
static void withdraw_end(struct xenstats_provider_set *set)
{
    struct xenstats_provider *p = set->provider;

    xs_rm(p->xs, XBT_NULL, set->path);
    platform_evtchn_unbind(p->platform, p->evtchn, (uint32_t)set->port);
    unpublish_pages(set);
    if (!p->sets && p->key_written) {
        unsigned int left = 0;
        char **dir = xs_directory(p->xs, XBT_NULL, p->home, &left);

        /* Another process may publish under the same provider name. */
        if (!dir || !left)
            xs_rm(p->xs, XBT_NULL, p->home);
        free(dir);
        p->key_written = false;
    }
}

/*
 * Wait, under one deadline, until the monitor has closed the port of each
 * of the n sets, answering requests meanwhile (the monitor may be
 * mid-sample).  Returns how many it did not close in time.
 */
static size_t wait_monitor_closed(struct xenstats_provider *p, struct xenstats_provider_set **sets, size_t n)
{
    uint64_t deadline = monotonic_ns() + (uint64_t)p->withdraw_timeout_ms * 1000000ULL;
    size_t open = n;

    for (;;) {
        open = 0;
        for (size_t i = 0; i < n; i++)
            open += !monitor_closed(sets[i]);
        if (!open || monotonic_ns() >= deadline)
            return open;
        xenstats_provider_dispatch(p);
        sleep_ms(5);
    }
}

int xenstats_provider_set_withdraw(struct xenstats_provider_set *set)
{
    struct xenstats_provider *p = set->provider;
    int r = 0;

    /* A port from before a resume must never be unbound: look first. */
    if (set->published)
        check_resume(p);
    unlink_set(p, set);
    if (set->published) {
        withdraw_begin(set);
        if (wait_monitor_closed(p, &set, 1)) {
            log_warning("set %s: the monitor did not close its port within %u ms", set->path,
                        p->withdraw_timeout_ms);
            r = -ETIMEDOUT;
        }
        withdraw_end(set);
    }
    set_free(set);
    return r ? set_errno(r) : 0;
}

int xenstats_provider_withdraw_all(struct xenstats_provider *provider)
{
    struct xenstats_provider_set **published, *set;
    size_t n = 0, cap = 0, open;

    if (!provider->sets)
        return 0;
    check_resume(provider);
    for (set = provider->sets; set; set = set->next)
        cap++;
    published = calloc(cap, sizeof(*published));
    if (!published) {
        /* one at a time, then: slower, and no allocation */
        while (provider->sets)
            xenstats_provider_set_withdraw(provider->sets);
        return 0;
    }
    /* every event-channel key first, so the monitor closes every port in one go */
    for (set = provider->sets; set; set = set->next) {
        if (set->published) {
            withdraw_begin(set);
            published[n++] = set;
        }
    }
    open = wait_monitor_closed(provider, published, n);
    if (open)
        log_warning("provider %s: the monitor did not close %zu of %zu ports within %u ms", provider->name, open, n,
                    provider->withdraw_timeout_ms);
    while ((set = provider->sets)) {
        unlink_set(provider, set);
        if (set->published)
            withdraw_end(set);
        set_free(set);
    }
    free(published);
    return open ? set_errno(-ETIMEDOUT) : 0;
}

int xenstats_provider_dispatch(struct xenstats_provider *provider)
{
    int port, handled = 0;

    port = handle_watches(provider);
    if (port < 0)
        return set_errno(port);
    if (!provider->evtchn)
        return 0; /* a resume waits to open a new handle */
    while ((port = platform_evtchn_pending(provider->platform, provider->evtchn)) >= 0) {
        struct xenstats_provider_set *s;

        for (s = provider->sets; s && s->port != port; s = s->next)
            ;
        if (s && (!s->refresh || s->refresh(s, s->userdata) == 0)) {
            /* The seed: refresh the whole set, then signal back. */
            __atomic_thread_fence(__ATOMIC_RELEASE);
            platform_evtchn_notify(provider->platform, provider->evtchn, (uint32_t)port);
            handled++;
        }
        platform_evtchn_unmask(provider->platform, provider->evtchn, (uint32_t)port);
    }
    if (port != -EAGAIN)
        return set_errno(port);
    return handled;
}

/* The keeper (below) runs this: hold fds[n] until the host hangs them up. */
static void keeper_run(int *fds, size_t n)
{
    struct pollfd pfds[2 * 64];
    unsigned int from = 0;

    setsid();
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_NAME, "xenstats-keep", 0, 0, 0);
    /* fds[] ascending: close everything else (sockets, files of the caller) */
    for (size_t i = 0; i < n; i++) {
        if ((unsigned int)fds[i] > from)
            close_range(from, (unsigned int)fds[i] - 1, 0);
        from = (unsigned int)fds[i] + 1;
    }
    close_range(from, ~0U, 0);
    for (size_t i = 0; i < n; i++)
        pfds[i] = (struct pollfd){.fd = fds[i], .events = 0};
    for (;;) {
        if (poll(pfds, n, -1) < 0)
            continue;
        for (size_t i = 0; i < n; i++)
            if (pfds[i].revents & (POLLHUP | POLLNVAL))
                _exit(0); /* the emulated host went away: nothing to protect */
        sleep(1);         /* POLLERR alone: never close, never spin */
    }
}

static int compare_ints(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/*
 * Keep the stale handles open after we are gone: their last close would
 * BUG a Linux 6.1 guest (docs/pv-stats.md "Lifecycle").  A process of
 * their own ("xenstats-keep") holds them, and nothing else, until the
 * guest shuts down or the host hangs them up.
 */
static void hand_stale_to_keeper(struct xenstats_provider *p)
{
    int fds[2 * 64];
    size_t n = 0;
    pid_t pid;

    for (size_t i = 0; i < p->nr_stale; i++) {
        int got = platform_evtchn_fds(p->platform, p->stale[i], fds + n, ARRAY_SIZE(fds) - n);

        if (got > 0)
            n += (size_t)got;
    }
    if (!n)
        return;
    qsort(fds, n, sizeof(fds[0]), compare_ints);
    pid = fork();
    if (pid < 0) {
        log_warning("cannot start a process to keep %zu stale event channel handles: %s", p->nr_stale,
                    strerror(errno));
        return;
    }
    if (pid == 0) {
        /* the grandchild is the keeper, re-parented: nobody waits for it */
        if (fork() == 0)
            keeper_run(fds, n);
        _exit(0);
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    log_info("provider %s: %zu event channel handles from before a resume are kept open by a process of "
             "their own (closing them would crash a Linux 6.1 guest's kernel)",
             p->name, p->nr_stale);
}

void xenstats_provider_free(struct xenstats_provider *provider)
{
    if (!provider)
        return;
    xenstats_provider_withdraw_all(provider);
    if (provider->evtchn)
        platform_evtchn_close(provider->platform, provider->evtchn);
    if (provider->nr_stale)
        hand_stale_to_keeper(provider);
    /* our references only: the keeper's keep the handles open */
    for (size_t i = 0; i < provider->nr_stale; i++)
        platform_evtchn_close(provider->platform, provider->stale[i]);
    free(provider->stale);
    if (provider->epfd >= 0)
        close(provider->epfd);
    if (provider->xs)
        xs_close(provider->xs);
    free(provider);
}
