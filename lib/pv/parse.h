/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of guest-controlled PV stats data (docs/pv-stats.md).  Every
 * input comes from an untrusted guest: these functions only ever see
 * private copies, bound every loop by the input's length, never rely on
 * NUL termination, and explain a rejection in `reason`.
 */
#ifndef XENSTATS_PV_PARSE_H
#define XENSTATS_PV_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xenstats/abi/pv_stats.h>

/* Limits the monitor enforces on one set. */
#define PV_MAX_PAGES 64U                                   /* 4096 statistics */
#define PV_MAX_STATS (PV_MAX_PAGES * XEN_PV_STATS_PER_PAGE)
#define PV_MAX_SET_KEYS (2U * PV_MAX_PAGES + 16U)          /* directory entries looked at */
#define PV_REASON_MAX 160

/* One statistic as declared by the provider, after validation. */
struct pv_stat_desc {
    uint8_t type;                              /* XEN_PV_STATS_TYPE_S64..ASCII */
    char name[XEN_PV_STATS_NAME_MAX + 1];      /* NUL terminated, validated */
};

/* 1 if c may appear in a name or an ASCII value (seed: isalnum, ispunct or space, in ASCII). */
bool pv_char_ok(unsigned char c);

/*
 * Validate a NUL-terminated name of at most XEN_PV_STATS_NAME_MAX
 * characters held in the first `len` bytes of `s` (need not be terminated
 * within len: that is an error).  Returns the name's length, or -EINVAL
 * (empty, no NUL within len or within XEN_PV_STATS_NAME_MAX + 1 bytes, or a
 * character outside the allowed set) with a reason.
 */
int pv_name_check(const char *s, size_t len, char reason[PV_REASON_MAX]);

/*
 * Parse name/type pages: `pages` holds nr_pages private copies of 4096
 * bytes each, in name-type-ref index order.  Fills descs[] (room for
 * nr_pages * 64 entries) and returns the number of statistics (> 0),
 * -EINVAL for bad arguments (NULL buffers, nr_pages > PV_MAX_PAGES), or
 * -EBADMSG with a reason when the set must be rejected:
 *   - an unknown type (not 0..4);
 *   - a name that fails pv_name_check();
 *   - a non-zero type after the type 0 that ends the list;
 *   - a page after the one holding the end marker that is not all type 0
 *     (extra pages of zeros are tolerated: a provider may pre-allocate);
 *   - two statistics with the same name;
 *   - no statistics at all.
 * The list ends at the first type 0 or after the last page.  Only type
 * octets are looked at after the end marker.  On failure descs[] holds
 * garbage.
 */
int pv_parse_name_pages(const uint8_t *pages, size_t nr_pages, struct pv_stat_desc *descs,
                        char reason[PV_REASON_MAX]);

/* A decoded value. */
struct pv_value {
    uint8_t type;
    union {
        int64_t s64;
        uint64_t u64;
        double dbl;
        char ascii[XEN_PV_STATS_ENTRY_SIZE]; /* NUL terminated, validated */
    } u;
};

/*
 * Decode one 64-octet value entry (a private copy) of the given type.
 * Integers and doubles are little endian whatever the host's order; every
 * double is accepted, NaN and infinities included.  An ASCII value needs a
 * NUL within its 64 octets and only allowed characters.  Returns 0 or
 * -EINVAL (bad ASCII, unknown type) with a reason.
 */
int pv_decode_value(uint8_t type, const uint8_t entry[XEN_PV_STATS_ENTRY_SIZE], struct pv_value *ret_value,
                    char reason[PV_REASON_MAX]);

/* The keys of one published set, as read from xenstore. */
struct pv_set_keys {
    uint32_t nr_pages;                       /* name-type-ref0..N-1 and val-ref0..N-1 */
    uint32_t name_type_ref[PV_MAX_PAGES];
    uint32_t value_ref[PV_MAX_PAGES];
    bool have_event_channel;
    uint32_t event_channel;
};

/*
 * Parse a non-negative decimal that fits in `max` (a grant reference or a
 * port): digits only, no sign, blanks or leading zeros (except "0"), at
 * most `len` bytes of `s` looked at, `s` need not be NUL terminated (the
 * string ends at a NUL or after len bytes, here and in pv_classify_key()).
 * Returns 0 or -EINVAL / -ERANGE (*ret_value untouched on failure).
 */
int pv_parse_number(const char *s, size_t len, uint32_t max, uint32_t *ret_value);

/*
 * Classify one key name of a set's directory: returns
 *   PV_KEY_NAME_TYPE_REF or PV_KEY_VALUE_REF with *ret_index set,
 *   PV_KEY_EVENT_CHANNEL, or PV_KEY_OTHER (ignored for forward compatibility),
 * or -EINVAL when it looks like one of ours but its index is malformed
 * (name-type-ref07, val-ref-1, name-type-ref99999999999).
 */
enum { PV_KEY_OTHER = 0, PV_KEY_NAME_TYPE_REF = 1, PV_KEY_VALUE_REF = 2, PV_KEY_EVENT_CHANNEL = 3 };
int pv_classify_key(const char *name, size_t len, uint32_t *ret_index);

/*
 * Build pv_set_keys from a directory listing and the keys' values.
 * names[i] / values[i] (lengths name_lens[i] / value_lens[i]; values[i]
 * NULL when the key vanished between listing and reading) for i < count.
 * Rejects with a reason: -E2BIG for more than PV_MAX_SET_KEYS entries or
 * an index >= PV_MAX_PAGES; -EINVAL for a malformed or duplicate key, a
 * reference or port that is not a valid number, and, once event-channel
 * exists, no name-type-ref0, name-type-ref indices that are not exactly
 * 0..N-1 or val-ref indices that differ from them.  A missing (or
 * vanished) event-channel is not an error here (have_event_channel tells,
 * and the rest of *ret_keys is zero): the set is then not (or no longer)
 * ready and its provider may be half-way through writing or removing the
 * reference keys.  With event-channel present, a reference key that
 * vanished gives -EAGAIN: the set is changing, read it again on the next
 * watch event.
 */
int pv_parse_set_keys(const char *const *names, const size_t *name_lens, const char *const *values,
                      const size_t *value_lens, size_t count, struct pv_set_keys *ret_keys,
                      char reason[PV_REASON_MAX]);

/* true if s is a provider/set key as published (xenstored's node alphabet). */
bool pv_key_ok(const char *s);

/*
 * The naming convention of docs/pv-stats.md ("Names for Prometheus"): how
 * a set's name and a statistic's name say which family the statistic
 * belongs to, whether it is a counter or a gauge, and its unit.  Both take
 * a validated name (pv_name_check) and never fail on any other input: a
 * name outside the convention is simply not one of its names.
 */
#define PV_GROUP_MAX 32 /* letters and digits of a set's group */

/*
 * A set name "<group>" or "<group> <device>": group 1..PV_GROUP_MAX
 * lower-case letters and digits, starting with a letter, and not a word
 * pv_stat_classify() refuses; device the rest
 * after the first space: characters of the name alphabet, neither
 * beginning nor ending with a space.  Returns
 * the group's length, with *ret_device pointing at the device within
 * `set` (NULL when there is none), or -EINVAL when the set name does not
 * follow the convention (*ret_device untouched).
 */
int pv_set_group(const char *set, const char **ret_device);

enum pv_stat_kind { PV_STAT_GAUGE = 1, PV_STAT_COUNTER = 2 };

/* The base units of the convention; PV_UNIT_NONE is no unit suffix. */
enum pv_unit {
    PV_UNIT_NONE,
    PV_UNIT_SECONDS,
    PV_UNIT_BYTES,
    PV_UNIT_RATIO,
    PV_UNIT_HERTZ,
    PV_UNIT_CELSIUS,
    PV_UNIT_JOULES,
    PV_UNIT_WATTS,
    PV_UNIT_VOLTS,
    PV_UNIT_AMPERES,
    PV_UNIT_METERS,
    PV_UNIT_GRAMS,
    PV_UNIT_COUNT_
};

/* "seconds", "bytes", ...; "" for PV_UNIT_NONE. */
const char *pv_unit_name(enum pv_unit unit);

struct pv_stat_name {
    enum pv_stat_kind kind;
    enum pv_unit unit;
    size_t base_len; /* the name without "_total": the family's last part */
};

/*
 * Classify a statistic of `type` named `name` (NUL-terminated) by the
 * convention: 1..62 characters of [a-z0-9_], starting with a letter,
 * without "__" and not ending in '_'; no word (between underscores) that
 * promtool's lint refuses: an abbreviated unit (s, ms, us, ns, sec, b, kb,
 * mb, gb, tb, pb, m, h, d), a unit with a prefix (milliseconds,
 * kilobytes, ...; fahrenheit) or a metric type (counter, gauge,
 * histogram, summary); ending in "_total" it is a counter
 * (types u64 and double only) and otherwise a gauge (s64, u64, double);
 * the name before "_total" must not end in a suffix OpenMetrics reserves
 * (_total, _created, _count, _sum, _bucket, _gcount, _gsum, _info); its
 * last word, when one of pv_unit_name()'s, is the unit.  Returns 0 with
 * *ret filled, or -EINVAL (ASCII statistics included) when the statistic
 * is outside the convention (*ret untouched).
 */
int pv_stat_classify(const char *name, uint8_t type, struct pv_stat_name *ret);

#endif
