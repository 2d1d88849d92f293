/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The guest's own operating-system statistics, read from /proc, and the
 * custom-set text format of `xenstats publish` (docs/publish.md).
 *
 * This module knows nothing of the PV stats protocol: it turns untrusted
 * text into bounded lists of typed, named values, and `xenstats publish`
 * maps them onto PV stats sets.  It never prints: errors are -errno, and the
 * custom-set parser also fills a caller's buffer with "file:line: why".
 *
 * Every parser treats its input as hostile: it never reads past `len`, does
 * not rely on a NUL terminator, bounds every list, and skips (and counts)
 * lines it cannot make sense of instead of failing on them.
 */
#ifndef XENSTATS_GUEST_STATS_H
#define XENSTATS_GUEST_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same numbers as the PV stats wire types (abi/pv_stats.h). */
enum guest_stat_type {
    GUEST_STAT_S64 = 1,
    GUEST_STAT_U64 = 2,
    GUEST_STAT_DOUBLE = 3,
    GUEST_STAT_ASCII = 4,
};

#define GUEST_NAME_MAX 62   /* characters of a statistic or set name */
#define GUEST_ASCII_MAX 63  /* characters of an ASCII value */
#define GUEST_STATS_MAX 1024 /* statistics in one list; the rest are dropped */
#define GUEST_DEVICES_MAX 1024 /* devices in one list; the rest are dropped */
#define GUEST_CUSTOM_SETS_MAX 64 /* sets in one custom file */

/* Largest file each reader accepts (-EFBIG beyond). */
#define GUEST_PROC_FILE_MAX (4u << 20)
#define GUEST_CUSTOM_FILE_MAX (64u << 10)

struct guest_stat {
    char name[GUEST_NAME_MAX + 1];
    enum guest_stat_type type;
    union {
        uint64_t u64;
        int64_t s64;
        double dbl;
        char ascii[GUEST_ASCII_MAX + 1];
    } value;
};

/* A growable list of statistics with unique names. */
struct guest_stats {
    struct guest_stat *stat;
    size_t count, capacity;
    size_t dropped; /* entries skipped: malformed, duplicate, or over the limit */
};

void guest_stats_init(struct guest_stats *list);
/* Forget the entries, keep the memory (for the next sample). */
void guest_stats_reset(struct guest_stats *list);
/* Free the memory; the list is empty and reusable afterwards.  NULL is fine. */
void guest_stats_free(struct guest_stats *list);

/*
 * Append a statistic.  -EINVAL: name empty, too long or not printable ASCII
 * (space excluded); -EEXIST: the name is in the list; -E2BIG: the list is
 * full; -ENOMEM.  The value of an ASCII statistic must be printable ASCII
 * (space included) of at most GUEST_ASCII_MAX characters (-EINVAL).
 */
int guest_stats_add_u64(struct guest_stats *list, const char *name, uint64_t value);
int guest_stats_add_s64(struct guest_stats *list, const char *name, int64_t value);
int guest_stats_add_double(struct guest_stats *list, const char *name, double value);
int guest_stats_add_ascii(struct guest_stats *list, const char *name, const char *value);

/*
 * The statistic named `name`, or NULL.  `hint` is where it was last time:
 * lists rebuilt from the same file keep their order, so the lookup is O(1)
 * in the usual case.
 */
const struct guest_stat *guest_stats_find(const struct guest_stats *list, const char *name, size_t hint);

/* True when the two lists declare the same names and types in the same order. */
bool guest_stats_same_layout(const struct guest_stats *a, const struct guest_stats *b);

/* A device (network interface, block device) and its statistics. */
struct guest_device {
    char name[GUEST_NAME_MAX + 1]; /* as the kernel spells it: may hold any byte but NUL */
    struct guest_stats stats;
};

struct guest_devices {
    struct guest_device *dev;
    size_t count, capacity;
    size_t dropped; /* lines skipped: malformed, duplicate, or over the limit */
};

void guest_devices_init(struct guest_devices *list);
void guest_devices_reset(struct guest_devices *list);
void guest_devices_free(struct guest_devices *list);
const struct guest_device *guest_devices_find(const struct guest_devices *list, const char *name, size_t hint);

/*
 * Parsers of the /proc formats.  Each resets its output list first, then
 * appends what it understood.  0, -EBADMSG when nothing in the text has the
 * expected form, -ENOMEM.  On failure the list may hold a partial result.
 */

/* /proc/meminfo: every "Key: value [kB]" line; see docs/publish.md for names. */
int guest_parse_meminfo(const char *text, size_t len, struct guest_stats *ret_list);
/* /proc/stat: aggregate CPU times in milliseconds (ticks of `user_hz`), counters. */
int guest_parse_cpu(const char *text, size_t len, long user_hz, struct guest_stats *ret_list);
/* /proc/loadavg and /proc/uptime, together (either may be NULL/0). */
int guest_parse_load(const char *loadavg, size_t loadavg_len, const char *uptime, size_t uptime_len,
                     struct guest_stats *ret_list);
/* /proc/net/dev: one device per interface. */
int guest_parse_netdev(const char *text, size_t len, struct guest_devices *ret_list);
/*
 * /proc/diskstats: one device per block device.  Unless `all`, loop and ram
 * devices and partitions (a name that is another listed device's name plus
 * a number, or plus "p" and a number after a digit) are left out.
 */
int guest_parse_diskstats(const char *text, size_t len, bool all, struct guest_devices *ret_list);

/* The built-in sources of `xenstats publish`. */
enum guest_source {
    GUEST_SOURCE_MEMORY,
    GUEST_SOURCE_CPU,
    GUEST_SOURCE_LOAD,
    GUEST_SOURCE_NET,
    GUEST_SOURCE_DISK,
};

/*
 * Read and parse the files of a source below `proc_root` (e.g. "/proc").
 * MEMORY, CPU and LOAD fill ret_stats; NET and DISK fill ret_devices.
 * Errors: those of open/read, -EFBIG (file larger than GUEST_PROC_FILE_MAX),
 * the parser's.
 */
int guest_read_stats(const char *proc_root, enum guest_source source, struct guest_stats *ret_stats);
int guest_read_devices(const char *proc_root, enum guest_source source, bool all_disks,
                       struct guest_devices *ret_devices);

/* ---- custom sets ---------------------------------------------------------
 *
 *   # comment
 *   [set name]
 *   TYPE NAME VALUE
 *
 * TYPE is u64, s64, double or ascii; NAME has no spaces; VALUE is the rest of
 * the line (an ascii value may hold spaces).  See docs/publish.md.
 */
struct guest_custom_set {
    char name[GUEST_NAME_MAX + 1];
    unsigned int line; /* where it was declared */
    struct guest_stats stats;
};

struct guest_custom {
    struct guest_custom_set *set;
    size_t count, capacity;
};

void guest_custom_init(struct guest_custom *custom);
void guest_custom_free(struct guest_custom *custom);
const struct guest_custom_set *guest_custom_find(const struct guest_custom *custom, const char *name);

/*
 * Parse a custom-set text; `origin` names it in errors.  0, or -EBADMSG with
 * "origin:line: reason" in err (always NUL terminated when errlen > 0),
 * -ENOMEM.  Unlike the /proc parsers it is strict: one bad line fails the
 * whole text, so a half-written file never publishes half its values.
 */
int guest_parse_custom(const char *text, size_t len, const char *origin, struct guest_custom *ret_custom, char *err,
                       size_t errlen);
/* Read and parse a custom file (at most GUEST_CUSTOM_FILE_MAX bytes). */
int guest_read_custom(const char *path, struct guest_custom *ret_custom, char *err, size_t errlen);

#endif /* XENSTATS_GUEST_STATS_H */
