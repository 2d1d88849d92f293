/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest agent's publisher (publisher.h): the lists of procfs.c and
 * custom.c mapped onto provider sets, kept in step with the devices that
 * come and go; a set refreshed from its file at each sample request.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_stats.h"
#include "publisher.h"
#include "util/util.h"

#define MAX_SETS GUEST_PUBLISHER_MAX_SETS
#define MAX_WARNED 256

_Static_assert(GUEST_STAT_S64 == (int)XENSTATS_PV_S64 && GUEST_STAT_U64 == (int)XENSTATS_PV_U64 &&
                   GUEST_STAT_DOUBLE == (int)XENSTATS_PV_DOUBLE && GUEST_STAT_ASCII == (int)XENSTATS_PV_ASCII,
               "guest statistic types are the PV stats wire types");

static const struct {
    const char *name;
    enum guest_source source;
} kinds[] = {
    [GUEST_KIND_MEMORY] = {"memory", GUEST_SOURCE_MEMORY}, [GUEST_KIND_CPU] = {"cpu", GUEST_SOURCE_CPU},
    [GUEST_KIND_LOAD] = {"load", GUEST_SOURCE_LOAD},       [GUEST_KIND_NET] = {"net", GUEST_SOURCE_NET},
    [GUEST_KIND_DISK] = {"disk", GUEST_SOURCE_DISK},       [GUEST_KIND_CUSTOM] = {"custom", 0},
};

struct guest_publisher;

/* One published set. */
struct pub_set {
    struct guest_publisher *pub;
    struct xenstats_provider_set *set;
    enum guest_kind kind;
    char name[GUEST_NAME_MAX + 1];   /* the PV set name */
    char device[GUEST_NAME_MAX + 1]; /* NET, DISK: the kernel's name */
    const char *path;                /* CUSTOM: the file */
    struct guest_stats layout;       /* declared statistics, index = position */
    bool seen;                       /* still wanted by the current rescan */
    bool failing;                    /* the last refresh failed (logged once) */
    struct pub_set *next;
};

struct guest_publisher {
    const struct guest_publisher_opts *o;
    struct xenstats_provider *provider;
    struct pub_set *sets;
    unsigned int nr_sets;
    bool full_warned;
    /* Scratch lists, reused by every refresh and rescan. */
    struct guest_stats stats;
    struct guest_devices devices;
    struct guest_custom custom;
    char *warned[MAX_WARNED]; /* messages already logged once */
    unsigned int nr_warned;
};

/* Log a warning once per distinct text: a broken file must not flood the log
 * every sample, but a new problem is still reported. */
static void warn_once(struct guest_publisher *pub, const char *fmt, ...) XS_PRINTF(2, 3);

static void warn_once(struct guest_publisher *pub, const char *fmt, ...)
{
    char msg[512];
    unsigned int i;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    for (i = 0; i < pub->nr_warned; i++)
        if (!strcmp(pub->warned[i], msg))
            return;
    /* Past the bound, new texts are no longer remembered: they go to the
     * debug level so that a file changing every second cannot flood. */
    if (pub->nr_warned == MAX_WARNED) {
        log_debug("%s", msg);
        return;
    }
    log_warning("%s", msg);
    pub->warned[pub->nr_warned] = strdup(msg);
    if (pub->warned[pub->nr_warned])
        pub->nr_warned++;
}

/* ---- refreshing ------------------------------------------------------------ */

/* Copy the current values into the set, by name: a statistic missing from
 * this reading keeps its previous value rather than shifting the others. */
static void apply_values(struct pub_set *s, const struct guest_stats *now)
{
    size_t i;

    for (i = 0; i < s->layout.count; i++) {
        const struct guest_stat *want = &s->layout.stat[i], *st = guest_stats_find(now, want->name, i);

        if (!st || st->type != want->type)
            continue;
        switch (st->type) {
        case GUEST_STAT_U64:
            xenstats_provider_set_u64(s->set, (unsigned int)i, st->value.u64);
            break;
        case GUEST_STAT_S64:
            xenstats_provider_set_s64(s->set, (unsigned int)i, st->value.s64);
            break;
        case GUEST_STAT_DOUBLE:
            xenstats_provider_set_double(s->set, (unsigned int)i, st->value.dbl);
            break;
        case GUEST_STAT_ASCII:
            xenstats_provider_set_ascii(s->set, (unsigned int)i, st->value.ascii);
            break;
        }
    }
}

/*
 * Read the statistics of set s now into *ret (a scratch list of pub).
 * 0, or -errno with a warning that names the file and the reason.
 */
static int read_current(struct pub_set *s, const struct guest_stats **ret)
{
    struct guest_publisher *pub = s->pub;
    const struct guest_device *dev;
    const struct guest_custom_set *cs;
    char err[512];
    int r;

    switch (s->kind) {
    case GUEST_KIND_MEMORY:
    case GUEST_KIND_CPU:
    case GUEST_KIND_LOAD:
        r = guest_read_stats(pub->o->proc, kinds[s->kind].source, &pub->stats);
        if (r < 0) {
            warn_once(pub, "set \"%s\": cannot read %s/%s: %s", s->name, pub->o->proc,
                      s->kind == GUEST_KIND_MEMORY ? "meminfo"
                      : s->kind == GUEST_KIND_CPU  ? "stat"
                                                   : "loadavg or uptime",
                      strerror(-r));
            return r;
        }
        *ret = &pub->stats;
        return 0;
    case GUEST_KIND_NET:
    case GUEST_KIND_DISK:
        /* All devices: the set exists, so it passed the filter once. */
        r = guest_read_devices(pub->o->proc, kinds[s->kind].source, true, &pub->devices);
        if (r < 0) {
            warn_once(pub, "set \"%s\": cannot read %s/%s: %s", s->name, pub->o->proc,
                      s->kind == GUEST_KIND_NET ? "net/dev" : "diskstats", strerror(-r));
            return r;
        }
        dev = guest_devices_find(&pub->devices, s->device, 0);
        if (!dev)
            return -ENODEV; /* gone: the next rescan withdraws the set */
        *ret = &dev->stats;
        return 0;
    case GUEST_KIND_CUSTOM:
        r = guest_read_custom(s->path, &pub->custom, err, sizeof(err));
        if (r < 0) {
            warn_once(pub, "%s (set \"%s\" keeps its last values, and the monitor sees it stale)", err,
                      s->name);
            return r;
        }
        cs = guest_custom_find(&pub->custom, s->name);
        if (!cs) {
            warn_once(pub, "%s: set \"%s\" is no longer defined", s->path, s->name);
            return -ENOENT;
        }
        *ret = &cs->stats;
        return 0;
    default:
        return -EINVAL;
    }
}

static int refresh(struct xenstats_provider_set *set, void *userdata)
{
    struct pub_set *s = userdata;
    const struct guest_stats *now = NULL;
    int r;

    (void)set;
    r = read_current(s, &now);
    if (r < 0) {
        s->failing = true;
        return r;
    }
    if (s->failing)
        log_info("set \"%s\": refreshing again", s->name);
    s->failing = false;
    apply_values(s, now);
    return 0;
}

/* ---- publishing and withdrawing ----------------------------------------- */

static struct pub_set *find_set(struct guest_publisher *pub, const char *name)
{
    struct pub_set *s;

    for (s = pub->sets; s; s = s->next)
        if (!strcmp(s->name, name))
            return s;
    return NULL;
}

static void withdraw(struct guest_publisher *pub, struct pub_set *s)
{
    struct pub_set **pp;
    int r;

    for (pp = &pub->sets; *pp && *pp != s; pp = &(*pp)->next)
        ;
    if (*pp) {
        *pp = s->next;
        pub->nr_sets--;
    }
    r = xenstats_provider_set_withdraw(s->set);
    if (r == -ETIMEDOUT)
        log_info("withdrew set \"%s\" (the monitor did not close its port in time)", s->name);
    else
        log_info("withdrew set \"%s\"", s->name);
    guest_stats_free(&s->layout);
    free(s);
}

/*
 * Publish a set whose statistics are `layout` (names and types; values are
 * filled by the first refresh).  Failures are logged and return -errno.
 */
static int publish(struct guest_publisher *pub, enum guest_kind kind, const char *name, const char *device,
                   const char *path, const struct guest_stats *layout)
{
    struct pub_set *s;
    size_t i;
    int r;

    if (pub->nr_sets >= MAX_SETS) {
        if (!pub->full_warned)
            log_warning("set \"%s\" and later ones are not published: a monitor follows at most %d sets of "
                        "one provider (use --sets to choose)",
                        name, MAX_SETS);
        pub->full_warned = true;
        return -ENOSPC;
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->pub = pub;
    s->kind = kind;
    s->path = path;
    snprintf(s->name, sizeof(s->name), "%s", name);
    snprintf(s->device, sizeof(s->device), "%s", device ? device : "");
    guest_stats_init(&s->layout);
    for (i = 0; i < layout->count; i++) {
        const struct guest_stat *st = &layout->stat[i];

        switch (st->type) {
        case GUEST_STAT_U64:
            r = guest_stats_add_u64(&s->layout, st->name, 0);
            break;
        case GUEST_STAT_S64:
            r = guest_stats_add_s64(&s->layout, st->name, 0);
            break;
        case GUEST_STAT_DOUBLE:
            r = guest_stats_add_double(&s->layout, st->name, 0);
            break;
        default:
            r = guest_stats_add_ascii(&s->layout, st->name, "");
            break;
        }
        if (r < 0)
            goto fail;
    }
    s->set = xenstats_provider_add_set(pub->provider, name, refresh, s);
    if (!s->set) {
        r = -errno;
        if (r == -EEXIST)
            warn_once(pub, "set \"%s\" is not published: its xenstore key is another set's (names that differ "
                           "only in punctuation share a key)",
                      name);
        else
            warn_once(pub, "set \"%s\" is not published: %s", name, strerror(-r));
        goto fail;
    }
    for (i = 0; i < s->layout.count; i++) {
        r = xenstats_provider_set_declare(s->set, s->layout.stat[i].name,
                                          (enum xenstats_pv_type)s->layout.stat[i].type);
        if (r < 0) {
            warn_once(pub, "set \"%s\": cannot declare \"%s\": %s", name, s->layout.stat[i].name, strerror(-r));
            goto fail_set;
        }
        if ((size_t)r != i) {
            r = -EPROTO;
            goto fail_set;
        }
    }
    r = xenstats_provider_set_publish(s->set);
    if (r < 0) {
        warn_once(pub, "set \"%s\" is not published: %s", name, strerror(-r));
        goto fail_set;
    }
    s->next = pub->sets;
    pub->sets = s;
    pub->nr_sets++;
    s->seen = true;
    log_info("published set \"%s\": %zu statistics", name, s->layout.count);
    return 0;

fail_set:
    xenstats_provider_set_withdraw(s->set);
fail:
    guest_stats_free(&s->layout);
    free(s);
    return r;
}

/* Keep set `name` published with exactly `layout`: publish it, leave it, or
 * publish it again when its statistics changed (names never change in place). */
static int sync_set(struct guest_publisher *pub, enum guest_kind kind, const char *name, const char *device,
                    const char *path, const struct guest_stats *layout)
{
    struct pub_set *s = find_set(pub, name);

    if (s && s->kind == kind && guest_stats_same_layout(&s->layout, layout)) {
        s->seen = true;
        return 0;
    }
    if (s) {
        if (s->kind != kind) {
            warn_once(pub, "set \"%s\" of %s clashes with a %s set of that name; not published", name,
                      kinds[kind].name, kinds[s->kind].name);
            return -EEXIST;
        }
        log_info("set \"%s\" changed its statistics: publishing it again", name);
        withdraw(pub, s);
    }
    if (!layout->count)
        return 0;
    return publish(pub, kind, name, device, path, layout);
}

/* A PV set name for a device: "net eth0".  Bytes outside printable ASCII
 * become '?', and the user hears about it once. */
static bool device_set_name(struct guest_publisher *pub, enum guest_kind kind, const char *device, char *out,
                            size_t outlen)
{
    size_t i, n;
    bool changed = false;

    n = (size_t)snprintf(out, outlen, "%s %s", kinds[kind].name, device);
    for (i = 0; i < n && i + 1 < outlen; i++) {
        if (out[i] < 0x20 || out[i] >= 0x7f) {
            out[i] = '?';
            changed = true;
        }
    }
    if (n >= outlen) {
        warn_once(pub, "%s device \"%.40s...\" is not published: its name is too long for a set name",
                  kinds[kind].name, out + strlen(kinds[kind].name) + 1);
        return false;
    }
    if (changed)
        warn_once(pub, "%s device with bytes other than printable ASCII in its name is published as set \"%s\"",
                  kinds[kind].name, out);
    return true;
}

static void keep_kind(struct guest_publisher *pub, enum guest_kind kind, const char *path)
{
    struct pub_set *s;

    for (s = pub->sets; s; s = s->next)
        if (s->kind == kind && (!path || s->path == path))
            s->seen = true;
}

/* The scans read into lists of their own: publishing a set runs its first
 * refresh, which reuses the publisher's scratch lists. */
static void scan_devices(struct guest_publisher *pub, enum guest_kind kind)
{
    struct guest_devices scan;
    char name[GUEST_NAME_MAX + 2];
    size_t i;
    int r;

    guest_devices_init(&scan);
    r = guest_read_devices(pub->o->proc, kinds[kind].source, pub->o->all_disks, &scan);
    if (r < 0) {
        warn_once(pub, "cannot list %s devices from %s/%s: %s", kinds[kind].name, pub->o->proc,
                  kind == GUEST_KIND_NET ? "net/dev" : "diskstats", strerror(-r));
        /* A passing read error is no reason to withdraw every device. */
        keep_kind(pub, kind, NULL);
        goto out;
    }
    if (scan.dropped)
        log_debug("%s: %zu lines not understood", kinds[kind].name, scan.dropped);
    for (i = 0; i < scan.count; i++)
        if (device_set_name(pub, kind, scan.dev[i].name, name, sizeof(name) - 1))
            sync_set(pub, kind, name, scan.dev[i].name, NULL, &scan.dev[i].stats);
out:
    guest_devices_free(&scan);
}

static void scan_stats(struct guest_publisher *pub, enum guest_kind kind)
{
    struct guest_stats layout;
    int r;

    guest_stats_init(&layout);
    r = guest_read_stats(pub->o->proc, kinds[kind].source, &layout);
    if (r < 0) {
        warn_once(pub, "set \"%s\" is not published: cannot read it from %s: %s", kinds[kind].name,
                  pub->o->proc, strerror(-r));
        keep_kind(pub, kind, NULL);
    } else {
        if (layout.dropped)
            log_debug("%s: %zu lines not understood", kinds[kind].name, layout.dropped);
        sync_set(pub, kind, kinds[kind].name, NULL, NULL, &layout);
    }
    guest_stats_free(&layout);
}

/* Returns -EBADMSG (logged) when the file is bad; the sets it had stay. */
static int scan_custom(struct guest_publisher *pub, const char *path)
{
    struct guest_custom custom;
    char err[512];
    size_t i;
    int r;

    guest_custom_init(&custom);
    r = guest_read_custom(path, &custom, err, sizeof(err));
    if (r < 0) {
        warn_once(pub, "%s (its sets stay as they are)", err);
        keep_kind(pub, GUEST_KIND_CUSTOM, path);
        goto out;
    }
    for (i = 0; i < custom.count; i++) {
        struct pub_set *other = find_set(pub, custom.set[i].name);

        if (other && other->kind == GUEST_KIND_CUSTOM && other->path != path) {
            warn_once(pub, "%s:%u: set \"%s\" is already published from %s", path, custom.set[i].line,
                      custom.set[i].name, other->path);
            continue;
        }
        sync_set(pub, GUEST_KIND_CUSTOM, custom.set[i].name, NULL, path, &custom.set[i].stats);
    }
out:
    guest_custom_free(&custom);
    return r;
}

/* Bring the published sets in line with what exists now. */
void guest_publisher_rescan(struct guest_publisher *pub)
{
    struct pub_set *s, *next;
    unsigned int k;

    for (s = pub->sets; s; s = s->next)
        s->seen = false;
    for (k = 0; k < GUEST_KIND_CUSTOM; k++) {
        if (!(pub->o->kinds & (1u << k)))
            continue;
        if (k == GUEST_KIND_NET || k == GUEST_KIND_DISK)
            scan_devices(pub, (enum guest_kind)k);
        else
            scan_stats(pub, (enum guest_kind)k);
    }
    for (k = 0; k < pub->o->nr_custom; k++)
        scan_custom(pub, pub->o->custom[k]);
    for (s = pub->sets; s; s = next) {
        next = s->next;
        if (!s->seen)
            withdraw(pub, s);
    }
}

/* ---- the kinds and the publisher ------------------------------------------- */

int guest_kinds_parse(const char *arg, unsigned int *ret_kinds)
{
    char buf[256], *tok, *save = NULL;
    unsigned int mask = 0, k;

    if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
        return -EINVAL;
    if (!strcmp(buf, "none")) {
        *ret_kinds = 0;
        return 0;
    }
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (k = 0; k < GUEST_KIND_CUSTOM; k++)
            if (!strcmp(tok, kinds[k].name))
                break;
        if (k == GUEST_KIND_CUSTOM)
            return -EINVAL;
        mask |= 1u << k;
    }
    if (!mask)
        return -EINVAL;
    *ret_kinds = mask;
    return 0;
}

bool guest_kinds_name_taken(unsigned int mask, const char *name)
{
    unsigned int k;

    for (k = 0; k < GUEST_KIND_CUSTOM; k++)
        if ((mask & (1u << k)) && !strcmp(name, kinds[k].name))
            return true;
    return ((mask & (1u << GUEST_KIND_NET)) && !strncmp(name, "net ", 4)) ||
           ((mask & (1u << GUEST_KIND_DISK)) && !strncmp(name, "disk ", 5));
}

struct guest_publisher *guest_publisher_new(struct xenstats_provider *provider,
                                            const struct guest_publisher_opts *opts)
{
    struct guest_publisher *pub = calloc(1, sizeof(*pub));

    if (!pub) {
        xenstats_provider_free(provider);
        errno = ENOMEM;
        return NULL;
    }
    pub->o = opts;
    pub->provider = provider;
    guest_stats_init(&pub->stats);
    guest_devices_init(&pub->devices);
    guest_custom_init(&pub->custom);
    return pub;
}

unsigned int guest_publisher_count(const struct guest_publisher *pub)
{
    return pub->nr_sets;
}

void guest_publisher_free(struct guest_publisher *pub)
{
    unsigned int i;

    if (!pub)
        return;
    /* all at once: one timeout for every set, however many (a stop
     * must fit in a service manager's stop timeout) */
    if (pub->sets && xenstats_provider_withdraw_all(pub->provider) == -ETIMEDOUT)
        log_info("the monitor did not close every port in time");
    while (pub->sets) {
        struct pub_set *s = pub->sets;

        pub->sets = s->next;
        log_info("withdrew set \"%s\"", s->name);
        guest_stats_free(&s->layout);
        free(s);
    }
    pub->nr_sets = 0;
    xenstats_provider_free(pub->provider);
    guest_stats_free(&pub->stats);
    guest_devices_free(&pub->devices);
    guest_custom_free(&pub->custom);
    for (i = 0; i < pub->nr_warned; i++)
        free(pub->warned[i]);
    free(pub);
}
