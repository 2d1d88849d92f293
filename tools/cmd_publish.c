/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats publish: the guest agent.  Publishes the guest's own operating
 * system statistics (memory, CPU, load, each network interface and block
 * device) and users' custom sets as PV stats sets under one provider, and
 * refreshes a set from the real files only when the monitor asks for a
 * sample (docs/publish.md).
 *
 * What to read and how lives in lib/guest/; this file maps those lists onto
 * provider sets, keeps the sets in step with the devices that come and go,
 * and withdraws everything on SIGTERM/SIGINT.
 */
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <xenstats/pv.h>

#include "cli/tool.h"
#include "guest/guest_stats.h"
#include "util/util.h"

#define CMD "publish"
#define DEFAULT_PROVIDER "xenstats-publish"
#define MAX_CUSTOM_FILES 16
/* The monitor follows at most 64 sets of one provider (docs/pv-stats.md). */
#define MAX_SETS 64
#define MAX_WARNED 256

_Static_assert(GUEST_STAT_S64 == (int)XENSTATS_PV_S64 && GUEST_STAT_U64 == (int)XENSTATS_PV_U64 &&
                   GUEST_STAT_DOUBLE == (int)XENSTATS_PV_DOUBLE && GUEST_STAT_ASCII == (int)XENSTATS_PV_ASCII,
               "guest statistic types are the PV stats wire types");

enum kind { KIND_MEMORY, KIND_CPU, KIND_LOAD, KIND_NET, KIND_DISK, KIND_CUSTOM, NR_KINDS };

static const struct {
    const char *name;
    enum guest_source source;
} kinds[] = {
    [KIND_MEMORY] = {"memory", GUEST_SOURCE_MEMORY}, [KIND_CPU] = {"cpu", GUEST_SOURCE_CPU},
    [KIND_LOAD] = {"load", GUEST_SOURCE_LOAD},       [KIND_NET] = {"net", GUEST_SOURCE_NET},
    [KIND_DISK] = {"disk", GUEST_SOURCE_DISK},       [KIND_CUSTOM] = {"custom", 0},
};

struct options {
    const char *provider;
    int32_t monitor_domid;
    unsigned int kinds; /* bit per built-in kind */
    bool all_disks;
    const char *proc;
    uint64_t rescan_ns;
    const char *custom[MAX_CUSTOM_FILES];
    unsigned int nr_custom;
    int cpu; /* --cpu, -1: anywhere */
};

struct publisher;

/* One published set. */
struct pub_set {
    struct publisher *pub;
    struct xenstats_provider_set *set;
    enum kind kind;
    char name[GUEST_NAME_MAX + 1];   /* the PV set name */
    char device[GUEST_NAME_MAX + 1]; /* NET, DISK: the kernel's name */
    const char *path;                /* CUSTOM: the file */
    struct guest_stats layout;       /* declared statistics, index = position */
    bool seen;                       /* still wanted by the current rescan */
    bool failing;                    /* the last refresh failed (logged once) */
    struct pub_set *next;
};

struct publisher {
    const struct options *o;
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

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s publish [OPTIONS]\n"
            "       %s-publish [OPTIONS]   (the guest package's binary)\n\n"
            "Publish this guest's operating-system statistics as PV stats sets, refreshed from\n"
            "/proc whenever the monitor in the toolstack domain asks for a sample, until SIGTERM\n"
            "or SIGINT withdraws them.  Run it in a guest whose `stats` node exists.\n\n"
            "  -p, --provider NAME       provider name (default \"%s\")\n"
            "  -s, --sets LIST           built-in sets, comma-separated: memory,cpu,load,net,disk\n"
            "                            (default all; \"none\" for custom sets only)\n"
            "  -C, --custom FILE         also publish the sets FILE defines, re-read at every\n"
            "                            sample (repeatable; format in xenstats-publish(1))\n"
            "  -a, --all-disks           include partitions, loop and ram devices\n"
            "  -r, --rescan DURATION     look for new or vanished interfaces, disks and custom\n"
            "                            sets every DURATION (default 10s; 0 never)\n"
            "  -m, --monitor-domid DOMID grant to and signal DOMID (default: the value of the\n"
            "                            domain's `stats` node, else 0)\n"
            "      --cpu N               answer on CPU N: pin to it and deliver the sets' event\n"
            "                            channels there (root; one vCPU woken per sample)\n"
            "      --proc DIR            read DIR/meminfo etc. instead of /proc\n"
            "  -v, --verbose             say what is published and withdrawn (twice: debug)\n"
            "  -h, --help                show this help\n\n"
            "See xenstats-publish(1) for the statistics, their names and units.\n",
            PROG, PROG, DEFAULT_PROVIDER);
}

/* Log a warning once per distinct text: a broken file must not flood the log
 * every sample, but a new problem is still reported. */
static void warn_once(struct publisher *pub, const char *fmt, ...) XS_PRINTF(2, 3);

static void warn_once(struct publisher *pub, const char *fmt, ...)
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
    struct publisher *pub = s->pub;
    const struct guest_device *dev;
    const struct guest_custom_set *cs;
    char err[512];
    int r;

    switch (s->kind) {
    case KIND_MEMORY:
    case KIND_CPU:
    case KIND_LOAD:
        r = guest_read_stats(pub->o->proc, kinds[s->kind].source, &pub->stats);
        if (r < 0) {
            warn_once(pub, "set \"%s\": cannot read %s/%s: %s", s->name, pub->o->proc,
                      s->kind == KIND_MEMORY ? "meminfo" : s->kind == KIND_CPU ? "stat" : "loadavg or uptime",
                      strerror(-r));
            return r;
        }
        *ret = &pub->stats;
        return 0;
    case KIND_NET:
    case KIND_DISK:
        /* All devices: the set exists, so it passed the filter once. */
        r = guest_read_devices(pub->o->proc, kinds[s->kind].source, true, &pub->devices);
        if (r < 0) {
            warn_once(pub, "set \"%s\": cannot read %s/%s: %s", s->name, pub->o->proc,
                      s->kind == KIND_NET ? "net/dev" : "diskstats", strerror(-r));
            return r;
        }
        dev = guest_devices_find(&pub->devices, s->device, 0);
        if (!dev)
            return -ENODEV; /* gone: the next rescan withdraws the set */
        *ret = &dev->stats;
        return 0;
    case KIND_CUSTOM:
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

static struct pub_set *find_set(struct publisher *pub, const char *name)
{
    struct pub_set *s;

    for (s = pub->sets; s; s = s->next)
        if (!strcmp(s->name, name))
            return s;
    return NULL;
}

static void withdraw(struct publisher *pub, struct pub_set *s)
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
static int publish(struct publisher *pub, enum kind kind, const char *name, const char *device, const char *path,
                   const struct guest_stats *layout)
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
static int sync_set(struct publisher *pub, enum kind kind, const char *name, const char *device, const char *path,
                    const struct guest_stats *layout)
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
static bool device_set_name(struct publisher *pub, enum kind kind, const char *device, char *out, size_t outlen)
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

static void keep_kind(struct publisher *pub, enum kind kind, const char *path)
{
    struct pub_set *s;

    for (s = pub->sets; s; s = s->next)
        if (s->kind == kind && (!path || s->path == path))
            s->seen = true;
}

/* The scans read into lists of their own: publishing a set runs its first
 * refresh, which reuses the publisher's scratch lists. */
static void scan_devices(struct publisher *pub, enum kind kind)
{
    struct guest_devices scan;
    char name[GUEST_NAME_MAX + 2];
    size_t i;
    int r;

    guest_devices_init(&scan);
    r = guest_read_devices(pub->o->proc, kinds[kind].source, pub->o->all_disks, &scan);
    if (r < 0) {
        warn_once(pub, "cannot list %s devices from %s/%s: %s", kinds[kind].name, pub->o->proc,
                  kind == KIND_NET ? "net/dev" : "diskstats", strerror(-r));
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

static void scan_stats(struct publisher *pub, enum kind kind)
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
static int scan_custom(struct publisher *pub, const char *path)
{
    struct guest_custom custom;
    char err[512];
    size_t i;
    int r;

    guest_custom_init(&custom);
    r = guest_read_custom(path, &custom, err, sizeof(err));
    if (r < 0) {
        warn_once(pub, "%s (its sets stay as they are)", err);
        keep_kind(pub, KIND_CUSTOM, path);
        goto out;
    }
    for (i = 0; i < custom.count; i++) {
        struct pub_set *other = find_set(pub, custom.set[i].name);

        if (other && other->kind == KIND_CUSTOM && other->path != path) {
            warn_once(pub, "%s:%u: set \"%s\" is already published from %s", path, custom.set[i].line,
                      custom.set[i].name, other->path);
            continue;
        }
        sync_set(pub, KIND_CUSTOM, custom.set[i].name, NULL, path, &custom.set[i].stats);
    }
out:
    guest_custom_free(&custom);
    return r;
}

/* Bring the published sets in line with what exists now. */
static void rescan(struct publisher *pub)
{
    struct pub_set *s, *next;
    unsigned int k;

    for (s = pub->sets; s; s = s->next)
        s->seen = false;
    for (k = 0; k < KIND_CUSTOM; k++) {
        if (!(pub->o->kinds & (1u << k)))
            continue;
        if (k == KIND_NET || k == KIND_DISK)
            scan_devices(pub, (enum kind)k);
        else
            scan_stats(pub, (enum kind)k);
    }
    for (k = 0; k < pub->o->nr_custom; k++)
        scan_custom(pub, pub->o->custom[k]);
    for (s = pub->sets; s; s = next) {
        next = s->next;
        if (!s->seen)
            withdraw(pub, s);
    }
}

/* ---- options and the main loop ------------------------------------------- */

static int parse_sets(const char *arg, unsigned int *ret_kinds)
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
        for (k = 0; k < KIND_CUSTOM; k++)
            if (!strcmp(tok, kinds[k].name))
                break;
        if (k == KIND_CUSTOM)
            return -EINVAL;
        mask |= 1u << k;
    }
    if (!mask)
        return -EINVAL;
    *ret_kinds = mask;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {
        {"provider", required_argument, NULL, 'p'}, {"sets", required_argument, NULL, 's'},
        {"custom", required_argument, NULL, 'C'},   {"all-disks", no_argument, NULL, 'a'},
        {"rescan", required_argument, NULL, 'r'},   {"monitor-domid", required_argument, NULL, 'm'},
        {"proc", required_argument, NULL, 'P'},     {"verbose", no_argument, NULL, 'v'},
        {"cpu", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    uint64_t v;
    int c;

    while ((c = getopt_long(argc, argv, "p:s:C:ar:m:vh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (xenstats_pv_name_check(optarg) < 0)
                return fail(CMD, "--provider '%s': expected 1 to 62 printable ASCII characters", optarg);
            o->provider = optarg;
            break;
        case 's':
            if (parse_sets(optarg, &o->kinds) < 0)
                return fail(CMD, "--sets %s: expected a comma-separated list of memory, cpu, load, net, disk "
                                 "(or none)",
                            optarg);
            break;
        case 'C':
            if (o->nr_custom == MAX_CUSTOM_FILES)
                return fail(CMD, "--custom: at most %d files", MAX_CUSTOM_FILES);
            o->custom[o->nr_custom++] = optarg;
            break;
        case 'a':
            o->all_disks = true;
            break;
        case 'r':
            if (parse_duration_ns(optarg, &o->rescan_ns) < 0 || (o->rescan_ns && o->rescan_ns < 100000000ULL))
                return fail(CMD, "--rescan %s: expected a duration of at least 100ms (e.g. 10s), or 0", optarg);
            break;
        case 'm':
            if (parse_u64(optarg, XENSTATS_DOMID_MAX, &v) < 0)
                return fail(CMD, "--monitor-domid %s: expected a domain id (0 to 32751)", optarg);
            o->monitor_domid = (int32_t)v;
            break;
        case 'P':
            o->proc = optarg;
            break;
        case 'c':
            if (parse_u64(optarg, CPU_SETSIZE - 1, &v) < 0)
                return fail(CMD, "--cpu %s: expected a CPU number (0 to %d)", optarg, CPU_SETSIZE - 1);
            o->cpu = (int)v;
            break;
        case 'v':
            global.verbosity++;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fail(CMD, "unexpected argument '%s'", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!o->kinds && !o->nr_custom)
        return fail(CMD, "nothing to publish: --sets none and no --custom file");
    return 0;
}

static void publisher_free(struct publisher *pub)
{
    unsigned int i;

    while (pub->sets)
        withdraw(pub, pub->sets);
    xenstats_provider_free(pub->provider);
    guest_stats_free(&pub->stats);
    guest_devices_free(&pub->devices);
    guest_custom_free(&pub->custom);
    for (i = 0; i < pub->nr_warned; i++)
        free(pub->warned[i]);
}

static const char *provider_error(int err)
{
    switch (err) {
    case ENOENT:
        return "this domain is not monitored: its `stats` node does not exist (the toolstack creates it; "
               "`xenstats agent` or `xenstats pv --toolstack DOMID` in the toolstack domain does too)";
    case ENOTSUP:
        return "this host has no grant tables or event channels for PV stats";
    case EACCES:
    case EPERM:
        return "permission denied on the domain's `stats` node";
    default:
        return strerror(err);
    }
}

int cmd_publish(int argc, char **argv)
{
    struct options o = {
        .provider = DEFAULT_PROVIDER,
        .monitor_domid = -1,
        .kinds = (1u << KIND_CUSTOM) - 1,
        .proc = "/proc",
        .rescan_ns = 10000000000ULL,
        .cpu = -1,
    };
    struct xenstats_provider_opts po = {.size = sizeof(po)};
    struct publisher pub = {.o = &o};
    struct xenstats_host *host = NULL;
    sigset_t block, orig;
    uint64_t next_rescan;
    unsigned int k;
    int r, status = 1;

    r = parse_options(argc, argv, &o);
    if (r)
        return r < 0 ? 0 : r;
    tool_log_init(CMD);
    guest_stats_init(&pub.stats);
    guest_devices_init(&pub.devices);
    guest_custom_init(&pub.custom);

    /* A bad custom file is the user's mistake: say so before publishing
     * anything.  Later, while running, a bad version only stales its sets. */
    for (k = 0; k < o.nr_custom; k++) {
        char err[512];

        r = guest_read_custom(o.custom[k], &pub.custom, err, sizeof(err));
        if (r < 0)
            return fail(CMD, "--custom %s", err);
        for (size_t i = 0; i < pub.custom.count; i++) {
            unsigned int b;

            for (b = 0; b < KIND_CUSTOM; b++)
                if ((o.kinds & (1u << b)) && !strcmp(pub.custom.set[i].name, kinds[b].name))
                    break;
            if (b < KIND_CUSTOM || ((o.kinds & (1u << KIND_NET)) && !strncmp(pub.custom.set[i].name, "net ", 4)) ||
                ((o.kinds & (1u << KIND_DISK)) && !strncmp(pub.custom.set[i].name, "disk ", 5))) {
                r = fail(CMD, "--custom %s:%u: set \"%s\" is a name of the built-in sets (rename it, or leave "
                              "the built-in out with --sets)",
                         o.custom[k], pub.custom.set[i].line, pub.custom.set[i].name);
                guest_custom_free(&pub.custom);
                return r;
            }
        }
    }
    guest_custom_free(&pub.custom);

    host = tool_host_open(CMD);
    if (!host)
        goto out;
    po.monitor_domid = o.monitor_domid;
    pub.provider = xenstats_provider_new(host, o.provider, &po);
    if (!pub.provider) {
        fail(CMD, "cannot publish as \"%s\" in domain %u: %s", o.provider, xenstats_host_self_domid(host),
             provider_error(errno));
        goto out;
    }
    if (o.cpu >= 0 && xenstats_provider_set_cpu(pub.provider, o.cpu) < 0) {
        if (errno == EINVAL) {
            fail(CMD, "--cpu %d: no such CPU", o.cpu);
            goto out;
        }
        /* pinned; the event channels stay where Linux put them (warned) */
    }
    /* Signals stay blocked except inside ppoll(), so a SIGTERM between
     * the check of tool_stop and the wait cannot be lost. */
    tool_trap_signals();
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &orig);

    rescan(&pub);
    if (!pub.nr_sets) {
        fail(CMD, "no set could be published (see the warnings above)");
        goto out;
    }
    log_info("publishing %u sets as provider \"%s\" to domain %u", pub.nr_sets, o.provider,
             xenstats_provider_monitor_domid(pub.provider));
    next_rescan = o.rescan_ns ? monotonic_ns() + o.rescan_ns : 0;
    while (!tool_stop) {
        struct pollfd pfd = {.fd = xenstats_provider_fd(pub.provider), .events = POLLIN};
        struct timespec ts, *tsp = NULL;
        uint64_t now = monotonic_ns();

        if (next_rescan) {
            uint64_t left = next_rescan > now ? next_rescan - now : 0;

            ts.tv_sec = (time_t)(left / 1000000000ULL);
            ts.tv_nsec = (long)(left % 1000000000ULL);
            tsp = &ts;
        }
        r = ppoll(&pfd, 1, tsp, &orig);
        if (r < 0 && errno != EINTR) {
            fail(CMD, "waiting for sample requests: %s", strerror(errno));
            goto out;
        }
        if (r > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
            fail(CMD, "lost the host's event channels (did the host go away?)");
            goto out;
        }
        if (r > 0) {
            r = xenstats_provider_dispatch(pub.provider);
            if (r < 0 && r != -EINTR) {
                fail(CMD, "answering sample requests: %s", strerror(-r));
                goto out;
            }
        }
        if (next_rescan && monotonic_ns() >= next_rescan) {
            rescan(&pub);
            next_rescan = monotonic_ns() + o.rescan_ns;
        }
    }
    log_info("withdrawing %u sets", pub.nr_sets);
    status = 0;
out:
    publisher_free(&pub);
    xenstats_host_close(host);
    return status;
}
