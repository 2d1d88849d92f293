/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats monitor, discovery: each monitored domain's xenstore tree
 * (docs/pv-stats.md) listed and watched, its sets read, checked, attached
 * (grants mapped, event channel bound) and withdrawn, within the domain's
 * budgets of xenstore reads and rescans.  Above the state
 * (monitor_state.h), whose state machine it drives; it calls nothing of
 * sampling.
 */
#include <string.h>
#include <sys/mman.h>

#include <xenstore.h>

#include "pv/monitor_discovery.h"

#define MAX_PROVIDERS 64  /* per domain */
#define MAX_SETS 64       /* per provider */
#define RESCAN_GAP_NS (50 * MS) /* a busy guest is rescanned at most 20 times a second */
/* The read budget (docs/pv-stats.md "Budgets"). */
#define READS_BURST_S 4    /* a burst of 4 s' worth of reads, e.g. a provider starting */
#define READS_PER_SCAN 128 /* a scan stops here and goes on after the gap */

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = data;

    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* xenstore reads on a domain's behalf, counted against its budget */
static void charge_read(struct mon_domain *d)
{
    d->xs_reads++;
    d->reads.tokens -= 1;
}

static char *dom_read(struct xenstats_monitor *m, struct mon_domain *d, const char *path, unsigned int *len)
{
    charge_read(d);
    return xs_read(m->xs, XBT_NULL, path, len);
}

static char **dom_directory(struct xenstats_monitor *m, struct mon_domain *d, const char *path, unsigned int *n)
{
    charge_read(d);
    return xs_directory(m->xs, XBT_NULL, path, n);
}

/*
 * Read the set's keys.  Returns 0 with keys filled, -ENOENT when the set is
 * not ready (no event-channel), or -EINVAL with s->reason.  *fingerprint
 * covers everything read, so a set is only judged again when the guest
 * changed something (or a retry is due).
 */
static int read_keys(struct xenstats_monitor *m, struct xenstats_pv_set *s, struct pv_set_keys *keys,
                     uint64_t *fingerprint, char reason[PV_REASON_MAX])
{
    const char *names[PV_MAX_SET_KEYS];
    size_t name_lens[PV_MAX_SET_KEYS], value_lens[PV_MAX_SET_KEYS];
    char *values[PV_MAX_SET_KEYS];
    unsigned int n = 0, i;
    char **dir;
    int r;

    dir = dom_directory(m, s->domain, s->path, &n);
    if (!dir)
        return -ENOENT;
    *fingerprint = 0xcbf29ce484222325ULL;
    if (n > PV_MAX_SET_KEYS) {
        *fingerprint = fnv1a(*fingerprint, &n, sizeof(n));
        snprintf(reason, PV_REASON_MAX, "%u keys (at most %u)", n, PV_MAX_SET_KEYS);
        free(dir);
        return -E2BIG;
    }
    for (i = 0; i < n; i++) {
        char path[PATH_LEN + XENSTORE_REL_PATH_MAX];
        unsigned int len = 0;

        names[i] = dir[i];
        name_lens[i] = strnlen(dir[i], XENSTORE_REL_PATH_MAX);
        snprintf(path, sizeof(path), "%s/%s", s->path, dir[i]);
        values[i] = dom_read(m, s->domain, path, &len);
        value_lens[i] = values[i] ? len : 0;
        *fingerprint = fnv1a(*fingerprint, names[i], name_lens[i] + 1);
        if (values[i])
            *fingerprint = fnv1a(*fingerprint, values[i], value_lens[i]);
    }
    r = pv_parse_set_keys(names, name_lens, (const char *const *)values, value_lens, n, keys, reason);
    for (i = 0; i < n; i++)
        free(values[i]);
    free(dir);
    if (r < 0)
        return r;
    if (!keys->have_event_channel)
        return -ENOENT;
    return 0;
}

/* The parser's descriptors of s (nr_stats of them) into s's own block. */
static int keep_declarations(struct xenstats_pv_set *s, const struct pv_stat_desc *descs)
{
    size_t n = s->nr_stats, text = 0, head = n * (sizeof(*s->names) + sizeof(*s->numbers) + 2);
    bool any_ascii = false;
    char *at;

    for (size_t i = 0; i < n; i++) {
        text += strlen(descs[i].name) + 1;
        any_ascii |= descs[i].type == XEN_PV_STATS_TYPE_ASCII;
    }
    s->stat_block = calloc(1, head + text + 1);
    if (any_ascii)
        s->texts = calloc(n, sizeof(*s->texts));
    if (!s->stat_block || (any_ascii && !s->texts)) {
        free(s->stat_block);
        free(s->texts);
        s->stat_block = NULL;
        s->texts = NULL;
        s->nr_stats = 0;
        return -ENOMEM;
    }
    s->names = s->stat_block;
    s->numbers = (union pv_number *)(s->names + n);
    s->types = (uint8_t *)(s->numbers + n);
    s->valid = (bool *)(s->types + n);
    at = (char *)(s->valid + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(descs[i].name) + 1;

        s->types[i] = descs[i].type;
        s->names[i] = memcpy(at, descs[i].name, len);
        at += len;
    }
    return 0;
}

/*
 * Xen refuses the map or the bind (EINVAL) when the domain has not granted
 * those refs, or offered that port, to us: keys left from before a restore
 * or a migration, copied, or hostile.  Shown so until the keys change.
 */
#define STALE "stale keys (not granted or offered to us): "

static int set_attach(struct xenstats_monitor *m, struct xenstats_pv_set *s, const struct pv_set_keys *keys)
{
    struct platform *pl = m->platform;
    struct pv_stat_desc *descs;
    uint8_t *name_copy;
    size_t bytes;
    int r;

    s->keys = *keys;
    bytes = (size_t)keys->nr_pages * XEN_PV_STATS_PAGE_SIZE;
    s->name_map = platform_grant_map(pl, s->domain->domid, keys->nr_pages, keys->name_type_ref, PROT_READ);
    if (!s->name_map) {
        mon_set_reason(s, "%scannot map name-type-ref grants: %s", errno == EINVAL ? STALE : "", strerror(errno));
        return -EAGAIN;
    }
    name_copy = bytes <= m->scratch_len ? m->scratch : NULL;
    if (!name_copy && mon_grow_scratch(m, bytes) == 0)
        name_copy = m->scratch;
    descs = calloc(PV_MAX_STATS < keys->nr_pages * XEN_PV_STATS_PER_PAGE ? PV_MAX_STATS
                                                                          : keys->nr_pages * XEN_PV_STATS_PER_PAGE,
                   sizeof(*descs));
    if (!name_copy || !descs) {
        free(descs);
        mon_set_reason(s, "out of memory");
        return -ENOMEM;
    }
    /* Copy once, then validate the copy: the guest may change the pages. */
    memcpy(name_copy, s->name_map, bytes);
    s->names_hash = mon_page_hash(name_copy, bytes);
    /* the names are never read again for meaning: not kept mapped (half
     * of a set's pages; sampling maps them now and then) */
    platform_grant_unmap(pl, (void *)s->name_map, keys->nr_pages);
    s->name_map = NULL;
    r = pv_parse_name_pages(name_copy, keys->nr_pages, descs, s->reason);
    if (r < 0) {
        free(descs);
        return r;
    }
    s->nr_stats = (uint32_t)r;
    r = keep_declarations(s, descs);
    free(descs);
    if (r < 0) {
        mon_set_reason(s, "out of memory");
        return r;
    }
    s->value_map = platform_grant_map(pl, s->domain->domid, keys->nr_pages, keys->value_ref, PROT_READ);
    if (!s->value_map) {
        mon_set_reason(s, "%scannot map val-ref grants: %s", errno == EINVAL ? STALE : "", strerror(errno));
        return -EAGAIN;
    }
    s->domain->mapped_pages += keys->nr_pages;
    r = platform_evtchn_bind_interdomain(pl, m->evtchn, s->domain->domid, keys->event_channel);
    if (r < 0) {
        mon_set_reason(s, "%scannot bind event-channel %u: %s", r == -EINVAL ? STALE : "", keys->event_channel,
                       strerror(-r));
        return -EAGAIN;
    }
    s->port = r;
    s->domain->live_sets++;
    mon_port_map(m, s->port, s);
    s->bind_event_due = true;
    s->bound_at = monotonic_ns();
    mon_set_state(m, s, XENSTATS_PV_SET_ACTIVE);
    s->reason[0] = '\0';
    s->timeouts_in_row = 0;
    s->transient = s->peer_closed = false;
    s->retry_at = 0;
    s->backoff_ms = 0;
    mon_dom_log(m, s->domain, XENSTATS_LOG_INFO, "monitoring set %s (%u statistics, %u pages)", s->path, s->nr_stats,
                keys->nr_pages);
    return 0;
}

static struct xenstats_pv_set *set_find(struct mon_domain *d, const char *provider_key, const char *key)
{
    struct xenstats_pv_set *s;

    for (s = d->sets; s; s = s->next)
        if (!strcmp(s->provider_key, provider_key) && !strcmp(s->key, key))
            return s;
    return NULL;
}

/*
 * The name a node's value gives (docs/pv-stats.md: keys cannot spell every
 * name), or the key itself when the value is missing or not a valid name.
 */
static void node_name(struct xenstats_monitor *m, struct mon_domain *d, const char *path, const char *key,
                      char name[XEN_PV_STATS_NAME_MAX + 1])
{
    unsigned int len = 0;
    char *v = dom_read(m, d, path, &len);

    if (v && len > 0 && len <= XEN_PV_STATS_NAME_MAX && strlen(v) == len && xenstats_pv_name_check(v) == 0)
        memcpy(name, v, len + 1);
    else
        snprintf(name, XEN_PV_STATS_NAME_MAX + 1, "%s", key);
    free(v);
}

static struct xenstats_pv_set *set_new(struct xenstats_monitor *m, struct mon_domain *d, const char *provider_key,
                                       const char *key)
{
    char ppath[PATH_LEN + XEN_PV_STATS_NAME_MAX + 2];
    struct xenstats_pv_set *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->domain = d;
    s->port = -1;
    s->state = XENSTATS_PV_SET_WITHDRAWN; /* not published yet */
    strcpy(s->provider_key, provider_key);
    strcpy(s->key, key);
    if (snprintf(s->path, sizeof(s->path), "%s/%s/%s", d->stats, provider_key, key) >= (int)sizeof(s->path)) {
        free(s);
        return NULL;
    }
    snprintf(ppath, sizeof(ppath), "%s/%s", d->stats, provider_key);
    node_name(m, d, ppath, provider_key, s->provider);
    node_name(m, d, s->path, key, s->name);
    s->dirty = true;
    s->next = d->sets;
    d->sets = s;
    m->list_dirty = true;
    return s;
}

/*
 * Would attaching s (its keys) take its domain past a cap of dom0's
 * resources?  Then say which in s->reason, once in the log, and count it
 * against the domain's budgets.
 */
static bool over_caps(struct xenstats_monitor *m, struct xenstats_pv_set *s, const struct pv_set_keys *keys)
{
    struct mon_domain *d = s->domain;

    if (d->live_sets < m->opts.max_live_sets && d->mapped_pages + keys->nr_pages <= m->opts.max_mapped_pages)
        return false;
    if (d->live_sets >= m->opts.max_live_sets)
        mon_set_reason(s, "the domain has %u live sets, its cap (--pv-max-sets)", d->live_sets);
    else
        mon_set_reason(s, "%u more pages would pass the domain's cap of %u mapped pages (--pv-max-pages)",
                       keys->nr_pages, m->opts.max_mapped_pages);
    if (!d->sets_capped)
        mon_dom_log(m, d, XENSTATS_LOG_WARNING, "set %s refused: %s", s->path, s->reason);
    mon_over_budget(d, monotonic_ns(), "live sets and mapped pages");
    return true;
}

/*
 * Look at one set again: attach, keep, or withdraw it.  A live set stays
 * only if every key is as it was when attached and the provider's end of
 * the channel is still bound to ours: a provider that died and came back
 * gets new grant references, and often the same port number.
 */
static void scan_set(struct xenstats_monitor *m, struct xenstats_pv_set *s)
{
    char reason[PV_REASON_MAX];
    struct pv_set_keys keys;
    uint64_t fp = 0;
    bool was_peer_closed = s->peer_closed;
    int r;

    s->dirty = false;
    s->retry_at = 0;
    memset(&keys, 0, sizeof(keys));
    reason[0] = '\0';
    r = read_keys(m, s, &keys, &fp, reason);

    if (live(s)) {
        if (r == 0 && fp == s->fingerprint && !mon_peer_gone(m, s))
            return;
        if (r == -ENOENT || r == -EAGAIN) {
            /* event-channel gone: withdrawn (seed); or changing under us */
            mon_set_withdraw(m, s, "event-channel removed");
            return;
        }
        if (r == 0 && fp == s->fingerprint) {
            mon_set_withdraw(m, s, "the provider closed its event channel");
            was_peer_closed = true;
        } else {
            mon_set_withdraw(m, s, "keys changed");
        }
    }
    /* Not (or no longer) published, or changing under us (a key vanished
     * while event-channel was there): look again on the next watch event. */
    if (r == -ENOENT || r == -EAGAIN)
        return;
    /* judged on exactly these keys before, and not for a reason that passes */
    if (s->state == XENSTATS_PV_SET_REJECTED && fp == s->fingerprint && !s->transient)
        return;
    if (r < 0) {
        snprintf(s->reason, sizeof(s->reason), "%s", reason);
        mon_set_reject(m, s, fp, false);
        m->list_dirty = true;
        return;
    }
    mon_set_detach(m, s);
    if (over_caps(m, s, &keys)) {
        mon_set_reject(m, s, fp, true); /* room may come free: retried */
        if (!s->capped) {
            s->capped = true;
            s->domain->sets_capped++;
        }
        m->list_dirty = true;
        return;
    }
    r = set_attach(m, s, &keys);
    if (r == 0) {
        s->fingerprint = fp;
    } else if (was_peer_closed && fp == s->fingerprint && r == -EAGAIN) {
        /* the dead provider's keys, still there: wait for it quietly */
        mon_set_detach(m, s);
        mon_set_reason(s, "the provider closed its event channel");
        s->peer_closed = true;
        mon_set_retry_later(m, s);
    } else {
        mon_set_reject(m, s, fp, r == -EAGAIN || r == -ENOMEM);
    }
    m->list_dirty = true;
}

/* The sets of one domain's tree, listed; new ones are created (within budget). */
static void list_sets(struct xenstats_monitor *m, struct mon_domain *d, uint64_t now)
{
    struct xenstats_pv_set *s, **pp;
    unsigned int np = 0, i, j, ignored = 0, idle = 0;
    char **providers;

    /* sets not live (rejected, or listed without a usable event-channel)
     * are what a hostile guest can multiply: at most max_rejected_sets */
    for (s = d->sets; s; s = s->next) {
        s->seen = false;
        idle += !live(s);
    }
    providers = dom_directory(m, d, d->stats, &np);
    for (i = 0; providers && i < np; i++) {
        char path[PATH_LEN + XENSTORE_REL_PATH_MAX];
        unsigned int ns = 0;
        char **sets;

        if (i >= MAX_PROVIDERS) {
            if (!d->warned_providers)
                mon_dom_log(m, d, XENSTATS_LOG_WARNING, "%u providers, only the first %u are monitored", np,
                            MAX_PROVIDERS);
            d->warned_providers = true;
            break;
        }
        if (!pv_key_ok(providers[i]))
            continue; /* no key xenstored would have accepted from us */
        snprintf(path, sizeof(path), "%s/%s", d->stats, providers[i]);
        sets = dom_directory(m, d, path, &ns);
        for (j = 0; sets && j < ns; j++) {
            if (j >= MAX_SETS) {
                if (!d->warned_sets)
                    mon_dom_log(m, d, XENSTATS_LOG_WARNING, "provider with %u sets, only the first %u are monitored",
                                ns, MAX_SETS);
                d->warned_sets = true;
                break;
            }
            if (!pv_key_ok(sets[j]))
                continue;
            s = set_find(d, providers[i], sets[j]);
            if (!s) {
                /* a guest with many bad sets gets no more of our reads */
                if (idle >= m->opts.max_rejected_sets) {
                    ignored++;
                    continue;
                }
                s = set_new(m, d, providers[i], sets[j]);
                if (!s)
                    continue;
                idle++;
            }
            s->seen = true;
        }
        free(sets);
    }
    free(providers);
    if (ignored && !d->sets_ignored)
        mon_dom_log(m, d, XENSTATS_LOG_WARNING, "%u sets not live: %u more sets ignored unread", idle, ignored);
    if (ignored) {
        /* list again later: room may come free (throttled: not soon) */
        mon_over_budget(d, now, "rejected sets");
        d->structure_dirty = d->dirty = true;
        m->any_dirty = m->timer_dirty = true;
    }
    d->sets_ignored = ignored;

    /* Sets whose keys vanished without ceremony are withdrawn too. */
    for (pp = &d->sets; (s = *pp);) {
        if (!s->seen) {
            mon_set_withdraw(m, s, s->state == XENSTATS_PV_SET_WITHDRAWN ? s->reason : "keys removed");
            *pp = s->next;
            mon_set_detach(m, s);
            free(s);
            m->list_dirty = true;
            continue;
        }
        pp = &s->next;
    }
}

/*
 * One scan of a domain: list the tree if it changed, then examine the sets
 * marked dirty, as far as the read budget and this scan's share go.  What
 * is left stays dirty for the next scan.
 */
static void scan_domain(struct xenstats_monitor *m, struct mon_domain *d, size_t slice)
{
    uint64_t now = monotonic_ns(), reads_at_start;
    struct xenstats_pv_set *s;
    bool left = false;

    d->dirty = false;
    d->last_scan = now;
    d->rescans++;
    if (now - d->window_start >= 1000 * MS) {
        d->window_start = now;
        d->rescans_in_window = 0;
    }
    if (++d->rescans_in_window > m->opts.max_rescans_per_s)
        mon_over_budget(d, now, "rescan");
    else if (!throttled(d, now))
        d->gap_ns = RESCAN_GAP_NS;
    mon_bucket_fill(&d->reads, now, m->opts.max_reads_per_s, (double)m->opts.max_reads_per_s * READS_BURST_S);
    reads_at_start = d->xs_reads;

    if (d->structure_dirty) {
        d->structure_dirty = false;
        list_sets(m, d, now);
    }
    for (s = d->sets; s; s = s->next) {
        if (s->retry_at && s->retry_at <= now)
            s->dirty = true;
        if (!s->dirty)
            continue;
        if (d->reads.tokens < 1 || d->xs_reads - reads_at_start >= slice) {
            left = true;
            continue;
        }
        scan_set(m, s);
    }
    if (d->reads.tokens < 1) {
        /* come back when the bucket holds a scan's worth again */
        double missing = (double)READS_PER_SCAN - d->reads.tokens;

        mon_over_budget(d, now, "xenstore read");
        d->not_before = now + (uint64_t)(missing / m->opts.max_reads_per_s * 1e9);
    }
    if (left) {
        d->dirty = true;
        m->any_dirty = true;
        m->timer_dirty = true;
    }
}

/* ---- domains ------------------------------------------------------------- */

struct mon_domain *mon_domain_find(struct xenstats_monitor *m, uint32_t domid)
{
    struct mon_domain *d;

    for (d = m->domains; d; d = d->next)
        if (d->domid == domid)
            return d;
    return NULL;
}

static int create_stats_node(struct xenstats_monitor *m, struct mon_domain *d)
{
    struct xs_permissions perms[2] = {
        {.id = d->domid, .perms = XS_PERM_NONE},            /* owner: the guest writes below */
        {.id = m->platform->self_domid, .perms = XS_PERM_READ},
    };
    char value[16];
    int n = snprintf(value, sizeof(value), "%u", m->platform->self_domid);

    if (!xs_write(m->xs, XBT_NULL, d->stats, value, (unsigned int)n))
        return negative_errno();
    if (!xs_set_permissions(m->xs, XBT_NULL, d->stats, perms, m->platform->self_domid == 0 ? 1 : 2))
        return negative_errno();
    return 0;
}

int xenstats_monitor_add_domain(struct xenstats_monitor *monitor, uint32_t domid)
{
    struct mon_domain *d;
    char *home;
    int r;

    if (mon_domain_find(monitor, domid))
        return set_errno(-EEXIST);
    d = calloc(1, sizeof(*d));
    if (!d)
        return set_errno(-ENOMEM);
    d->monitor = monitor;
    d->domid = domid;
    d->gap_ns = RESCAN_GAP_NS;
    d->structure_dirty = true;
    home = xs_get_domain_path(monitor->xs, domid);
    if (!home) {
        free(d);
        return set_errno(negative_errno());
    }
    snprintf(d->stats, sizeof(d->stats), "%s/%s", home, XEN_PV_STATS_TOP);
    free(home);
    snprintf(d->token, sizeof(d->token), "xenstats-pv-%u", domid);
    if (monitor->opts.create_stats_node) {
        r = create_stats_node(monitor, d);
        if (r < 0) {
            log_error("domain %u: cannot create %s: %s", domid, d->stats, strerror(-r));
            free(d);
            return set_errno(r);
        }
    }
    /* The watch fires once at once: that first event triggers the scan. */
    if (!xs_watch(monitor->xs, d->stats, d->token)) {
        r = negative_errno();
        free(d);
        return set_errno(r);
    }
    d->next = monitor->domains;
    monitor->domains = d;
    monitor->by_domid_dirty = true;
    /* Attach what is already published now; the watch's first event
     * only causes a cheap rescan. */
    scan_domain(monitor, d, SIZE_MAX); /* as far as the burst goes */
    monitor->timer_dirty = true;
    return 0;
}

void mon_domain_free(struct xenstats_monitor *m, struct mon_domain *d, const char *why)
{
    while (d->sets) {
        struct xenstats_pv_set *s = d->sets;

        d->sets = s->next;
        mon_set_withdraw(m, s, why);
        free(s);
    }
    free(d);
    m->list_dirty = true;
    m->by_domid_dirty = true;
}

int xenstats_monitor_remove_domain(struct xenstats_monitor *monitor, uint32_t domid)
{
    struct mon_domain **pp, *d;

    for (pp = &monitor->domains; *pp && (*pp)->domid != domid; pp = &(*pp)->next)
        ;
    d = *pp;
    if (!d)
        return set_errno(-ENOENT);
    *pp = d->next;
    xs_unwatch(monitor->xs, d->stats, d->token);
    mon_domain_free(monitor, d, "no longer monitored");
    return 0;
}

/*
 * @releaseDomain: drop the domains that are gone, or dying: Xen frees a
 * dying domain only once nobody maps its pages, ours included.
 */
static void reap_domains(struct xenstats_monitor *m)
{
    struct mon_domain **pp = &m->domains, *d;
    struct xenstats_domain_info info;

    while ((d = *pp)) {
        int r = platform_domain_info(m->platform, d->domid, &info);

        if (r == -ESRCH || (r == 0 && (info.flags & XENSTATS_DOMAIN_DYING))) {
            *pp = d->next;
            xs_unwatch(m->xs, d->stats, d->token);
            log_info("domain %u destroyed", d->domid);
            mon_domain_free(m, d, "domain destroyed");
            continue;
        }
        pp = &d->next;
    }
}

/* ---- watches ------------------------------------------------------------- */

/* Copy the path segment at p (up to '/' or the end) into out; NULL when
 * it does not fit, else where it ends. */
static const char *path_segment(const char *p, char out[XENSTORE_REL_PATH_MAX + 1])
{
    size_t n = strcspn(p, "/");

    if (n > XENSTORE_REL_PATH_MAX)
        return NULL;
    memcpy(out, p, n);
    out[n] = '\0';
    return p + n;
}

/*
 * What a watch event under a domain's tree asks for: a change inside a set
 * (stats/P/S/key) means that set only, so one busy set never costs the
 * reads of every other set; anything nearer the top (the set's own node
 * created or removed, or stats/P) means listing again.
 */
static void mark_dirty(struct mon_domain *d, const char *path)
{
    size_t len = strlen(d->stats);
    char provider[XENSTORE_REL_PATH_MAX + 1], set[XENSTORE_REL_PATH_MAX + 1];
    const char *rest = path + len;
    struct xenstats_pv_set *s;

    d->dirty = true;
    if (strncmp(path, d->stats, len) || rest[0] != '/' || !(rest = path_segment(rest + 1, provider)) ||
        rest[0] != '/' || !(rest = path_segment(rest + 1, set)) || rest[0] != '/' ||
        !(s = set_find(d, provider, set))) {
        d->structure_dirty = true;
        return;
    }
    s->dirty = true;
    if (live(s) && !strcmp(rest, "/" XEN_PV_STATS_KEY_EVENT_CHANNEL)) {
        s->urgent = d->urgent = true;
        d->monitor->any_urgent = true;
    }
}

void mon_handle_watches(struct xenstats_monitor *m)
{
    char **ev;
    int budget = 1024;

    while (budget-- > 0) {
        ev = xs_check_watch(m->xs);
        if (!ev) {
            if (errno != EAGAIN) {
                log_error("xenstore: %s", strerror(errno));
                m->broken = negative_errno();
            }
            break;
        }
        const char *path = ev[XS_WATCH_PATH];
        struct mon_domain *d;

        if (!strcmp(path, "@releaseDomain")) {
            reap_domains(m);
        } else if (!strcmp(path, "@introduceDomain")) {
            m->introduced++; /* (also once when the watch is set) */
        } else {
            for (d = m->domains; d; d = d->next)
                if (!strcmp(ev[XS_WATCH_TOKEN], d->token)) {
                    mark_dirty(d, path);
                    m->timer_dirty = true;
                    m->any_dirty = true;
                }
        }
        free(ev);
    }
}

void mon_handle_urgent(struct xenstats_monitor *m)
{
    struct mon_domain *d;
    struct xenstats_pv_set *s;

    if (!m->any_urgent)
        return;
    m->any_urgent = false;
    for (d = m->domains; d; d = d->next) {
        uint64_t now = monotonic_ns();

        if (!d->urgent)
            continue;
        d->urgent = false;
        mon_bucket_fill(&d->reads, now, m->opts.max_reads_per_s, (double)m->opts.max_reads_per_s * READS_BURST_S);
        for (s = d->sets; s; s = s->next) {
            char path[PATH_LEN + sizeof(XEN_PV_STATS_KEY_EVENT_CHANNEL) + 1];
            unsigned int len = 0;
            char *v;

            if (!s->urgent)
                continue;
            s->urgent = false;
            if (!live(s))
                continue;
            snprintf(path, sizeof(path), "%s/%s", s->path, XEN_PV_STATS_KEY_EVENT_CHANNEL);
            v = dom_read(m, d, path, &len);
            if (!v) {
                /* the seed's withdrawal: close our port now; the listing follows at its pace */
                mon_set_withdraw(m, s, "event-channel removed");
                continue;
            }
            free(v);
            if (d->reads.tokens >= 1)
                scan_set(m, s); /* a provider published again (a restart): attach it now */
        }
    }
}

void mon_rescan_dirty(struct xenstats_monitor *m)
{
    uint64_t now = monotonic_ns();
    struct mon_domain *d;

    /* most dispatches carry answers, not xenstore changes: stay O(1); and
     * while requests are out, answers come first (round time) */
    if (!m->any_dirty || m->outstanding)
        return;
    m->any_dirty = false;
    for (d = m->domains; d; d = d->next) {
        if (d->dirty && now >= d->last_scan + d->gap_ns && now >= d->not_before)
            scan_domain(m, d, READS_PER_SCAN);
        if (d->dirty) {
            m->timer_dirty = true; /* come back when the gap has passed */
            m->any_dirty = true;
        }
    }
}
