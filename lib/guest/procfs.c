/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of /proc/meminfo, /proc/stat, /proc/loadavg, /proc/uptime,
 * /proc/net/dev and /proc/diskstats, and the lists they fill.
 *
 * The text is untrusted (a test feeds fixtures; a broken or hostile kernel
 * module could print anything): every scan is bounded by the length, never
 * by a NUL, and a line that does not have the expected form is skipped and
 * counted rather than trusted in part.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/guest_stats.h"
#include "guest/procfs_private.h"
#include "guest/text.h"
#include "util/util.h"

/* ---- lists ------------------------------------------------------------ */

void guest_stats_init(struct guest_stats *list)
{
    memset(list, 0, sizeof(*list));
}

void guest_stats_reset(struct guest_stats *list)
{
    list->count = 0;
    list->dropped = 0;
}

void guest_stats_free(struct guest_stats *list)
{
    if (!list)
        return;
    free(list->stat);
    guest_stats_init(list);
}

static bool name_ok(const char *name)
{
    size_t n = strnlen(name, GUEST_NAME_MAX + 1), i;

    if (n == 0 || n > GUEST_NAME_MAX)
        return false;
    for (i = 0; i < n; i++)
        if (name[i] <= 0x20 || name[i] >= 0x7f)
            return false;
    return true;
}

static struct guest_stat *stats_append(struct guest_stats *list, const char *name, enum guest_stat_type type)
{
    struct guest_stat *st;

    if (!name_ok(name)) {
        errno = EINVAL;
        return NULL;
    }
    /* Full first: past the cap every further line costs O(1). */
    if (list->count >= GUEST_STATS_MAX) {
        errno = E2BIG;
        return NULL;
    }
    /* Lists are small (tens of entries); a linear check keeps names unique
     * without an index, and the cap bounds the quadratic worst case. */
    if (guest_stats_find(list, name, list->count)) {
        errno = EEXIST;
        return NULL;
    }
    if (list->count == list->capacity) {
        size_t cap = list->capacity ? list->capacity * 2 : 16;
        struct guest_stat *grown;

        if (cap > GUEST_STATS_MAX)
            cap = GUEST_STATS_MAX;
        grown = realloc(list->stat, cap * sizeof(*grown));
        if (!grown) {
            errno = ENOMEM;
            return NULL;
        }
        list->stat = grown;
        list->capacity = cap;
    }
    st = &list->stat[list->count++];
    memset(st, 0, sizeof(*st));
    memcpy(st->name, name, strlen(name));
    st->type = type;
    return st;
}

int guest_stats_add_u64(struct guest_stats *list, const char *name, uint64_t value)
{
    struct guest_stat *st = stats_append(list, name, GUEST_STAT_U64);

    if (!st)
        return -errno;
    st->value.u64 = value;
    return 0;
}

int guest_stats_add_s64(struct guest_stats *list, const char *name, int64_t value)
{
    struct guest_stat *st = stats_append(list, name, GUEST_STAT_S64);

    if (!st)
        return -errno;
    st->value.s64 = value;
    return 0;
}

int guest_stats_add_double(struct guest_stats *list, const char *name, double value)
{
    struct guest_stat *st = stats_append(list, name, GUEST_STAT_DOUBLE);

    if (!st)
        return -errno;
    st->value.dbl = value;
    return 0;
}

int guest_stats_add_ascii(struct guest_stats *list, const char *name, const char *value)
{
    size_t n = strnlen(value, GUEST_ASCII_MAX + 1), i;
    struct guest_stat *st;

    if (n > GUEST_ASCII_MAX)
        return set_errno(-EINVAL);
    for (i = 0; i < n; i++)
        if (value[i] < 0x20 || value[i] >= 0x7f)
            return set_errno(-EINVAL);
    st = stats_append(list, name, GUEST_STAT_ASCII);
    if (!st)
        return -errno;
    memcpy(st->value.ascii, value, n);
    return 0;
}

const struct guest_stat *guest_stats_find(const struct guest_stats *list, const char *name, size_t hint)
{
    size_t i;

    if (hint < list->count && !strcmp(list->stat[hint].name, name))
        return &list->stat[hint];
    for (i = 0; i < list->count; i++)
        if (!strcmp(list->stat[i].name, name))
            return &list->stat[i];
    return NULL;
}

bool guest_stats_same_layout(const struct guest_stats *a, const struct guest_stats *b)
{
    size_t i;

    if (a->count != b->count)
        return false;
    for (i = 0; i < a->count; i++)
        if (a->stat[i].type != b->stat[i].type || strcmp(a->stat[i].name, b->stat[i].name))
            return false;
    return true;
}

void guest_devices_init(struct guest_devices *list)
{
    memset(list, 0, sizeof(*list));
}

void guest_devices_reset(struct guest_devices *list)
{
    size_t i;

    for (i = 0; i < list->count; i++)
        guest_stats_reset(&list->dev[i].stats);
    list->count = 0;
    list->dropped = 0;
}

void guest_devices_free(struct guest_devices *list)
{
    size_t i;

    if (!list)
        return;
    /* Entries past count keep their stats' memory for reuse: free them all. */
    for (i = 0; i < list->capacity; i++)
        guest_stats_free(&list->dev[i].stats);
    free(list->dev);
    guest_devices_init(list);
}

const struct guest_device *guest_devices_find(const struct guest_devices *list, const char *name, size_t hint)
{
    size_t i;

    if (hint < list->count && !strcmp(list->dev[hint].name, name))
        return &list->dev[hint];
    for (i = 0; i < list->count; i++)
        if (!strcmp(list->dev[i].name, name))
            return &list->dev[i];
    return NULL;
}

/*
 * A new device named by the `n` bytes at `name`, or NULL with errno
 * (EINVAL: empty, too long or holding a NUL; EEXIST; E2BIG; ENOMEM).
 */
static struct guest_device *devices_append(struct guest_devices *list, const char *name, size_t n)
{
    struct guest_device *dev;
    size_t i;

    if (n == 0 || n > GUEST_NAME_MAX || memchr(name, '\0', n)) {
        errno = EINVAL;
        return NULL;
    }
    if (list->count >= GUEST_DEVICES_MAX) {
        errno = E2BIG;
        return NULL;
    }
    for (i = 0; i < list->count; i++) {
        if (strlen(list->dev[i].name) == n && !memcmp(list->dev[i].name, name, n)) {
            errno = EEXIST;
            return NULL;
        }
    }
    if (list->count == list->capacity) {
        size_t cap = list->capacity ? list->capacity * 2 : 8;
        struct guest_device *grown;

        if (cap > GUEST_DEVICES_MAX)
            cap = GUEST_DEVICES_MAX;
        grown = realloc(list->dev, cap * sizeof(*grown));
        if (!grown) {
            errno = ENOMEM;
            return NULL;
        }
        for (i = list->capacity; i < cap; i++)
            guest_stats_init(&grown[i].stats);
        list->dev = grown;
        list->capacity = cap;
    }
    dev = &list->dev[list->count++];
    memset(dev->name, 0, sizeof(dev->name));
    memcpy(dev->name, name, n);
    guest_stats_reset(&dev->stats);
    return dev;
}

/* Adding a statistic the parser itself named can only fail for memory or
 * the list limit: a memory failure ends the parse, the rest is counted. */
static int add_checked(struct guest_stats *list, int r)
{
    if (r == -ENOMEM)
        return r;
    if (r < 0)
        list->dropped++;
    return 0;
}

/* ---- /proc/meminfo ---------------------------------------------------- */

/*
 * Keys whose words would read as abbreviated units (s, sec) in a
 * Prometheus name: named in full instead.
 */
static const struct {
    const char *key, *name;
} meminfo_renames[] = {
    {"SReclaimable", "slab_reclaimable"},
    {"SUnreclaim", "slab_unreclaimable"},
    {"SecPageTables", "secondary_page_tables"},
};

/*
 * "MemTotal" -> "mem_total", "KReclaimable" -> "k_reclaimable",
 * "Active(anon)" -> "active_anon", "HugePages_Total" -> "huge_pages",
 * "DirectMap2M" -> "direct_map2m".  An underscore goes before an upper-case
 * letter that follows a lower-case one, or that starts a word after an
 * acronym; other punctuation becomes one underscore.  Every value of
 * meminfo is a gauge, so a count does not keep a final "_total" (which
 * names counters).  Returns false when the key has other characters or the
 * result does not fit.
 */
bool meminfo_name(const char *key, size_t n, const char *suffix, char *out, size_t outlen)
{
    size_t o = 0, i, slen = strlen(suffix);

    if (n == 0)
        return false;
    for (i = 0; i < ARRAY_SIZE(meminfo_renames); i++) {
        if (strlen(meminfo_renames[i].key) == n && !memcmp(key, meminfo_renames[i].key, n)) {
            if ((size_t)snprintf(out, outlen, "%s%s", meminfo_renames[i].name, suffix) >= outlen)
                return false;
            return true;
        }
    }
    for (i = 0; i < n; i++) {
        char c = key[i], prev = i ? key[i - 1] : 0, next = i + 1 < n ? key[i + 1] : 0;
        bool under = false;

        if (c >= 'A' && c <= 'Z') {
            if (is_lower(prev) || (is_upper(prev) && is_lower(next)))
                under = true;
            c = (char)(c - 'A' + 'a');
        } else if (c == '_' || c == '(' || c == ')') {
            if (o && out[o - 1] != '_' && i + 1 < n)
                c = '_';
            else
                continue;
        } else if (!is_lower(c) && !is_digit(c)) {
            return false;
        }
        if (under && o && out[o - 1] != '_') {
            if (o + 1 >= outlen)
                return false;
            out[o++] = '_';
        }
        if (o + 1 >= outlen)
            return false;
        out[o++] = c;
    }
    while (o && out[o - 1] == '_')
        o--;
    if (!slen && o > 6 && !memcmp(out + o - 6, "_total", 6))
        o -= 6;
    if (!o || o + slen >= outlen)
        return false;
    memcpy(out + o, suffix, slen + 1);
    return true;
}

int guest_parse_meminfo(const char *text, size_t len, struct guest_stats *ret_list)
{
    struct text_cursor cur = {text, text + len};
    const char *line;
    size_t n, good = 0;
    int r;

    guest_stats_reset(ret_list);
    while (text_next_line(&cur, &line, &n)) {
        const char *colon = memchr(line, ':', n), *tok;
        size_t pos, toklen, keylen;
        uint64_t value;
        bool kb = false;
        char name[GUEST_NAME_MAX + 1];

        if (!colon) {
            if (text_is_blank(line, n))
                continue;
            ret_list->dropped++;
            continue;
        }
        keylen = (size_t)(colon - line);
        pos = keylen + 1;
        if (!text_next_token(line, n, &pos, &tok, &toklen) || text_parse_u64(tok, toklen, &value) < 0) {
            ret_list->dropped++;
            continue;
        }
        if (text_next_token(line, n, &pos, &tok, &toklen)) {
            if (toklen != 2 || memcmp(tok, "kB", 2)) {
                ret_list->dropped++;
                continue;
            }
            kb = true;
        }
        if (text_next_token(line, n, &pos, &tok, &toklen)) {
            ret_list->dropped++;
            continue;
        }
        /* Byte conversions saturate: a wrapped value would pass for a reset. */
        if (kb)
            value = value > UINT64_MAX / 1024 ? UINT64_MAX : value * 1024;
        if (!meminfo_name(line, keylen, kb ? "_bytes" : "", name, sizeof(name))) {
            ret_list->dropped++;
            continue;
        }
        r = add_checked(ret_list, guest_stats_add_u64(ret_list, name, value));
        if (r < 0)
            return r;
        good++;
    }
    return good ? 0 : -EBADMSG;
}

/* ---- /proc/stat --------------------------------------------------------- */

static const char *const cpu_time_names[] = {
    "user_seconds_total",  "nice_seconds_total",    "system_seconds_total", "idle_seconds_total",
    "iowait_seconds_total", "irq_seconds_total",    "softirq_seconds_total", "steal_seconds_total",
    "guest_seconds_total", "guest_nice_seconds_total",
};

/*
 * ticks / hz in seconds: the whole seconds and the rest apart, so that the
 * result is as exact as a double allows for any tick count, and never
 * decreases while the ticks grow.
 */
double ticks_to_seconds(uint64_t ticks, uint64_t hz)
{
    return (double)(ticks / hz) + (double)(ticks % hz) / (double)hz;
}

static bool token_is(const char *tok, size_t n, const char *word)
{
    return strlen(word) == n && !memcmp(tok, word, n);
}

int guest_parse_cpu(const char *text, size_t len, long user_hz, struct guest_stats *ret_list)
{
    static const struct {
        const char *key, *name;
    } counters[] = {
        {"intr", "interrupts_total"},       {"ctxt", "context_switches_total"},
        {"btime", "boot_time_seconds"},     {"processes", "forks_total"},
        {"procs_running", "procs_running"}, {"procs_blocked", "procs_blocked"},
        {"softirq", "softirqs_total"},
    };
    struct text_cursor cur = {text, text + len};
    uint64_t cpus = 0;
    bool have_cpu = false;
    const char *line;
    size_t n, good = 0, i;
    int r;

    guest_stats_reset(ret_list);
    if (user_hz <= 0)
        return -EINVAL;
    while (text_next_line(&cur, &line, &n)) {
        const char *tok;
        size_t pos = 0, toklen;
        uint64_t value;

        if (!text_next_token(line, n, &pos, &tok, &toklen))
            continue;
        if (token_is(tok, toklen, "cpu")) {
            uint64_t ticks[ARRAY_SIZE(cpu_time_names)];
            size_t k = 0;
            bool ok = !have_cpu;

            /* Later kernels may add columns: the known ones are taken. */
            while (ok && k < ARRAY_SIZE(cpu_time_names) && text_next_token(line, n, &pos, &tok, &toklen))
                ok = text_parse_u64(tok, toklen, &ticks[k++]) == 0;
            /* Every kernel since 2.6 prints at least user..idle. */
            if (!ok || k < 4) {
                ret_list->dropped++;
                continue;
            }
            have_cpu = true;
            for (i = 0; i < k; i++) {
                r = add_checked(ret_list,
                                guest_stats_add_double(ret_list, cpu_time_names[i],
                                                       ticks_to_seconds(ticks[i], (uint64_t)user_hz)));
                if (r < 0)
                    return r;
            }
            good++;
            continue;
        }
        if (toklen > 3 && !memcmp(tok, "cpu", 3)) {
            if (text_parse_u64(tok + 3, toklen - 3, &value) == 0)
                cpus++;
            else
                ret_list->dropped++;
            continue;
        }
        for (i = 0; i < ARRAY_SIZE(counters); i++) {
            const char *vt;
            size_t vlen;

            if (!token_is(tok, toklen, counters[i].key))
                continue;
            /* intr and softirq: the first number is the total. */
            if (!text_next_token(line, n, &pos, &vt, &vlen) || text_parse_u64(vt, vlen, &value) < 0) {
                ret_list->dropped++;
                break;
            }
            r = add_checked(ret_list, guest_stats_add_u64(ret_list, counters[i].name, value));
            if (r < 0)
                return r;
            good++;
            break;
        }
    }
    if (!good)
        return -EBADMSG;
    if (cpus)
        return add_checked(ret_list, guest_stats_add_u64(ret_list, "cpus", cpus));
    return 0;
}

/* ---- /proc/loadavg and /proc/uptime -------------------------------------- */

int guest_parse_load(const char *loadavg, size_t loadavg_len, const char *uptime, size_t uptime_len,
                     struct guest_stats *ret_list)
{
    static const char *const load_names[] = {"load1", "load5", "load15"};
    const char *tok, *line;
    size_t pos = 0, toklen, n, i, good = 0;
    struct text_cursor cur;
    double d[3];
    int r;

    guest_stats_reset(ret_list);
    /* "0.12 0.34 0.56 2/345 6789" */
    cur = (struct text_cursor){loadavg, loadavg ? loadavg + loadavg_len : NULL};
    if (loadavg && text_next_line(&cur, &line, &n)) {
        bool ok = true;
        uint64_t running = 0, total = 0;

        for (i = 0; i < 3 && ok; i++)
            ok = text_next_token(line, n, &pos, &tok, &toklen) && text_parse_real(tok, toklen, &d[i]) == 0;
        if (ok && text_next_token(line, n, &pos, &tok, &toklen)) {
            const char *slash = memchr(tok, '/', toklen);

            ok = slash && text_parse_u64(tok, (size_t)(slash - tok), &running) == 0 &&
                 text_parse_u64(slash + 1, toklen - (size_t)(slash - tok) - 1, &total) == 0;
        } else {
            ok = false;
        }
        if (ok) {
            for (i = 0; i < 3; i++) {
                r = add_checked(ret_list, guest_stats_add_double(ret_list, load_names[i], d[i]));
                if (r < 0)
                    return r;
            }
            if ((r = add_checked(ret_list, guest_stats_add_u64(ret_list, "tasks_running", running))) < 0 ||
                (r = add_checked(ret_list, guest_stats_add_u64(ret_list, "tasks", total))) < 0)
                return r;
            good++;
        } else {
            ret_list->dropped++;
        }
    }
    /* "350735.47 1380529.88": seconds up, and idle seconds summed over CPUs. */
    cur = (struct text_cursor){uptime, uptime ? uptime + uptime_len : NULL};
    if (uptime && text_next_line(&cur, &line, &n)) {
        pos = 0;
        if (text_next_token(line, n, &pos, &tok, &toklen) && text_parse_real(tok, toklen, &d[0]) == 0 &&
            text_next_token(line, n, &pos, &tok, &toklen) && text_parse_real(tok, toklen, &d[1]) == 0) {
            if ((r = add_checked(ret_list, guest_stats_add_double(ret_list, "uptime_seconds", d[0]))) < 0 ||
                (r = add_checked(ret_list, guest_stats_add_double(ret_list, "idle_seconds_total", d[1]))) < 0)
                return r;
            good++;
        } else {
            ret_list->dropped++;
        }
    }
    return good ? 0 : -EBADMSG;
}

/* ---- /proc/net/dev ------------------------------------------------------ */

/* The 16 columns, named like /sys/class/net/<if>/statistics/, counters all. */
static const char *const netdev_names[16] = {
    "rx_bytes_total",       "rx_packets_total",     "rx_errors_total",         "rx_dropped_total",
    "rx_fifo_errors_total", "rx_frame_errors_total", "rx_compressed_total",    "multicast_total",
    "tx_bytes_total",       "tx_packets_total",     "tx_errors_total",         "tx_dropped_total",
    "tx_fifo_errors_total", "collisions_total",     "tx_carrier_errors_total", "tx_compressed_total",
};

int guest_parse_netdev(const char *text, size_t len, struct guest_devices *ret_list)
{
    struct text_cursor cur = {text, text + len};
    const char *line;
    size_t n, good = 0;

    guest_devices_reset(ret_list);
    while (text_next_line(&cur, &line, &n)) {
        const char *colon, *tok;
        size_t start = 0, pos, toklen, k;
        uint64_t v[16];
        struct guest_device *dev;

        /* The two header lines have '|' and no number after a colon. */
        if (memchr(line, '|', n) || text_is_blank(line, n))
            continue;
        colon = memchr(line, ':', n);
        if (!colon) {
            ret_list->dropped++;
            continue;
        }
        while (start < (size_t)(colon - line) && text_is_blank_char(line[start]))
            start++;
        pos = (size_t)(colon - line) + 1;
        for (k = 0; k < 16; k++)
            if (!text_next_token(line, n, &pos, &tok, &toklen) || text_parse_u64(tok, toklen, &v[k]) < 0)
                break;
        if (k < 16) {
            ret_list->dropped++;
            continue;
        }
        dev = devices_append(ret_list, line + start, (size_t)(colon - line) - start);
        if (!dev) {
            if (errno == ENOMEM)
                return -ENOMEM;
            ret_list->dropped++;
            continue;
        }
        for (k = 0; k < 16; k++)
            if (guest_stats_add_u64(&dev->stats, netdev_names[k], v[k]) == -ENOMEM)
                return -ENOMEM;
        good++;
    }
    return good || !ret_list->dropped ? 0 : -EBADMSG;
}

/* ---- /proc/diskstats ---------------------------------------------------- */

/* Fields after "major minor name": 11 (Linux 2.6), 15 (4.18), 17 (5.5). */
enum disk_unit { DISK_COUNT, DISK_SECTORS, DISK_MS };
static const struct {
    const char *name;
    enum disk_unit unit; /* sectors: 512 bytes, whatever the device's block size */
} disk_fields[17] = {
    {"reads_completed_total", DISK_COUNT},    {"reads_merged_total", DISK_COUNT},
    {"read_bytes_total", DISK_SECTORS},       {"read_time_seconds_total", DISK_MS},
    {"writes_completed_total", DISK_COUNT},   {"writes_merged_total", DISK_COUNT},
    {"written_bytes_total", DISK_SECTORS},    {"write_time_seconds_total", DISK_MS},
    {"io_in_progress", DISK_COUNT},           {"io_time_seconds_total", DISK_MS},
    {"io_weighted_time_seconds_total", DISK_MS}, {"discards_completed_total", DISK_COUNT},
    {"discards_merged_total", DISK_COUNT},    {"discarded_bytes_total", DISK_SECTORS},
    {"discard_time_seconds_total", DISK_MS},  {"flushes_completed_total", DISK_COUNT},
    {"flush_time_seconds_total", DISK_MS},
};

static bool has_prefix(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* sda1 of sda, xvda2 of xvda, nvme0n1p1 of nvme0n1, mmcblk0p2 of mmcblk0. */
static bool is_partition(const struct guest_devices *list, const char *name)
{
    size_t n = strlen(name), base = n;
    char parent[GUEST_NAME_MAX + 1];

    while (base && is_digit(name[base - 1]))
        base--;
    if (base == n || base == 0)
        return false;
    memcpy(parent, name, base);
    parent[base] = '\0';
    if (guest_devices_find(list, parent, 0))
        return true;
    if (base >= 2 && name[base - 1] == 'p' && is_digit(name[base - 2])) {
        parent[base - 1] = '\0';
        return guest_devices_find(list, parent, 0) != NULL;
    }
    return false;
}

int guest_parse_diskstats(const char *text, size_t len, bool all, struct guest_devices *ret_list)
{
    struct text_cursor cur = {text, text + len};
    const char *line;
    size_t n, good = 0, i, kept;

    guest_devices_reset(ret_list);
    while (text_next_line(&cur, &line, &n)) {
        const char *tok, *name;
        size_t pos = 0, toklen, namelen, k;
        uint64_t v[17], major, minor;
        struct guest_device *dev;

        if (text_is_blank(line, n))
            continue;
        if (!text_next_token(line, n, &pos, &tok, &toklen) || text_parse_u64(tok, toklen, &major) < 0 ||
            !text_next_token(line, n, &pos, &tok, &toklen) || text_parse_u64(tok, toklen, &minor) < 0 ||
            !text_next_token(line, n, &pos, &name, &namelen)) {
            ret_list->dropped++;
            continue;
        }
        for (k = 0; k < 17; k++) {
            if (!text_next_token(line, n, &pos, &tok, &toklen))
                break;
            if (text_parse_u64(tok, toklen, &v[k]) < 0) {
                k = 0;
                break;
            }
        }
        if (k != 11 && k != 15 && k != 17) {
            ret_list->dropped++;
            continue;
        }
        dev = devices_append(ret_list, name, namelen);
        if (!dev) {
            if (errno == ENOMEM)
                return -ENOMEM;
            ret_list->dropped++;
            continue;
        }
        for (i = 0; i < k; i++) {
            uint64_t value = v[i];
            int r;

            if (disk_fields[i].unit == DISK_SECTORS)
                value = value > UINT64_MAX / 512 ? UINT64_MAX : value * 512;
            if (disk_fields[i].unit == DISK_MS)
                r = guest_stats_add_double(&dev->stats, disk_fields[i].name,
                                           (double)(value / 1000) + (double)(value % 1000) / 1000.0);
            else
                r = guest_stats_add_u64(&dev->stats, disk_fields[i].name, value);
            if (r == -ENOMEM)
                return -ENOMEM;
        }
        good++;
    }
    if (!good)
        return ret_list->dropped ? -EBADMSG : 0;
    if (all)
        return 0;
    /* Filter in place once every name is known (a partition can be listed
     * before its disk).  Removed entries swap to the tail so their memory
     * stays owned by the list. */
    kept = 0;
    for (i = 0; i < ret_list->count; i++) {
        const char *name = ret_list->dev[i].name;
        bool skip = has_prefix(name, "loop") || has_prefix(name, "ram") || is_partition(ret_list, name);

        if (!skip) {
            if (i != kept) {
                struct guest_device tmp = ret_list->dev[kept];

                ret_list->dev[kept] = ret_list->dev[i];
                ret_list->dev[i] = tmp;
            }
            kept++;
        }
    }
    /* Until here count covered every entry, so is_partition() saw every
     * name; a swap only moves an entry already looked at. */
    ret_list->count = kept;
    return 0;
}

/* ---- reading the files ---------------------------------------------------- */

static int read_proc(const char *root, const char *file, char **ret_text, size_t *ret_len)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", root, file);

    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    return read_small_file(path, GUEST_PROC_FILE_MAX, ret_text, ret_len);
}

int guest_read_stats(const char *proc_root, enum guest_source source, struct guest_stats *ret_stats)
{
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    long hz;
    int r;

    switch (source) {
    case GUEST_SOURCE_MEMORY:
        r = read_proc(proc_root, "meminfo", &text, &len);
        if (r == 0)
            r = guest_parse_meminfo(text, len, ret_stats);
        break;
    case GUEST_SOURCE_CPU:
        hz = sysconf(_SC_CLK_TCK);
        r = read_proc(proc_root, "stat", &text, &len);
        if (r == 0)
            r = guest_parse_cpu(text, len, hz > 0 ? hz : 100, ret_stats);
        break;
    case GUEST_SOURCE_LOAD:
        r = read_proc(proc_root, "loadavg", &text, &len);
        if (r == 0)
            r = read_proc(proc_root, "uptime", &text2, &len2);
        if (r == 0)
            r = guest_parse_load(text, len, text2, len2, ret_stats);
        break;
    default:
        r = -EINVAL;
        break;
    }
    free(text);
    free(text2);
    return set_errno(r);
}

int guest_read_devices(const char *proc_root, enum guest_source source, bool all_disks,
                       struct guest_devices *ret_devices)
{
    char *text = NULL;
    size_t len = 0;
    int r;

    switch (source) {
    case GUEST_SOURCE_NET:
        r = read_proc(proc_root, "net/dev", &text, &len);
        if (r == 0)
            r = guest_parse_netdev(text, len, ret_devices);
        break;
    case GUEST_SOURCE_DISK:
        r = read_proc(proc_root, "diskstats", &text, &len);
        if (r == 0)
            r = guest_parse_diskstats(text, len, all_disks, ret_devices);
        break;
    default:
        r = -EINVAL;
        break;
    }
    free(text);
    return set_errno(r);
}
