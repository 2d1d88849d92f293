/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of guest-controlled PV stats data.  Everything here reads bytes
 * a hostile guest chose: every loop is bounded by an explicit length, no
 * string function runs on guest bytes before a NUL has been found within
 * bounds, multi-byte values are assembled byte by byte (no alignment or
 * host order assumption), and nothing allocates.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pv/parse.h"

#define XS_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Longest excerpt of a guest string quoted in a reason. */
#define QUOTE_MAX 32

static void XS_PRINTF(2, 3) set_reason(char reason[PV_REASON_MAX], const char *fmt, ...)
{
    va_list ap;

    if (!reason)
        return;
    va_start(ap, fmt);
    vsnprintf(reason, PV_REASON_MAX, fmt, ap);
    va_end(ap);
}

static void clear_reason(char reason[PV_REASON_MAX])
{
    if (reason)
        reason[0] = '\0';
}

/*
 * Copy at most QUOTE_MAX bytes of a guest string into out for a reason:
 * the log line must not carry control characters or bytes a terminal would
 * interpret, so anything outside the allowed set becomes '?'.
 */
static const char *quote(char out[QUOTE_MAX + 4], const char *s, size_t len)
{
    size_t i, n = len < QUOTE_MAX ? len : QUOTE_MAX;

    for (i = 0; i < n && s[i]; i++)
        out[i] = pv_char_ok((unsigned char)s[i]) ? s[i] : '?';
    if (i == QUOTE_MAX && len > QUOTE_MAX && s[i]) {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = '\0';
    return out;
}

/* Seed: isalnum || ispunct || ' ' in the C locale, which is exactly 0x20..0x7e. */
bool pv_char_ok(unsigned char c)
{
    return c >= 0x20 && c <= 0x7e;
}

/*
 * Shared by names and ASCII values: the string must end with a NUL within
 * `limit` bytes and hold only allowed characters before it.  Returns the
 * length or -EINVAL; `what` names the string in the reason.
 */
static int check_string(const char *s, size_t len, size_t limit, const char *what, char reason[PV_REASON_MAX])
{
    size_t i, n = len < limit ? len : limit;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '\0')
            return (int)i;
        if (!pv_char_ok(c)) {
            set_reason(reason, "%s byte %zu is 0x%02x (only printable ASCII 0x20..0x7e is allowed)", what, i, c);
            return -EINVAL;
        }
    }
    set_reason(reason, "%s has no NUL within %zu bytes", what, n);
    return -EINVAL;
}

int pv_name_check(const char *s, size_t len, char reason[PV_REASON_MAX])
{
    int r;

    clear_reason(reason);
    if (!s && len) {
        set_reason(reason, "name is missing");
        return -EINVAL;
    }
    r = check_string(s, len, XEN_PV_STATS_NAME_MAX + 1, "name", reason);
    if (r == 0) {
        set_reason(reason, "name is empty");
        return -EINVAL;
    }
    return r;
}

/* ---- name/type pages --------------------------------------------------- */

/* Name order, ties broken by position so duplicates come out in index order. */
static int desc_cmp(const struct pv_stat_desc *descs, uint16_t a, uint16_t b)
{
    int r = strcmp(descs[a].name, descs[b].name);

    return r ? r : (a > b) - (a < b);
}

static void sift_down(const struct pv_stat_desc *descs, uint16_t *idx, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        uint16_t tmp;

        if (child >= n)
            return;
        if (child + 1 < n && desc_cmp(descs, idx[child], idx[child + 1]) < 0)
            child++;
        if (desc_cmp(descs, idx[root], idx[child]) >= 0)
            return;
        tmp = idx[root];
        idx[root] = idx[child];
        idx[child] = tmp;
        root = child;
    }
}

/*
 * Heapsort: O(n log n) whatever order the guest chose, no recursion and no
 * allocation (qsort may allocate, and a hash table's worst case belongs to
 * whoever picks the keys).
 */
static void sort_by_name(const struct pv_stat_desc *descs, uint16_t *idx, size_t n)
{
    size_t i;

    for (i = n / 2; i-- > 0;)
        sift_down(descs, idx, i, n);
    for (i = n; i-- > 1;) {
        uint16_t tmp = idx[0];

        idx[0] = idx[i];
        idx[i] = tmp;
        sift_down(descs, idx, 0, i);
    }
}

static int find_duplicate(const struct pv_stat_desc *descs, size_t n, char reason[PV_REASON_MAX])
{
    uint16_t idx[PV_MAX_STATS];
    size_t i;

    for (i = 0; i < n; i++)
        idx[i] = (uint16_t)i;
    sort_by_name(descs, idx, n);
    for (i = 1; i < n; i++)
        if (strcmp(descs[idx[i - 1]].name, descs[idx[i]].name) == 0) {
            set_reason(reason, "duplicate name '%s' (statistics %u and %u)", descs[idx[i]].name,
                       (unsigned int)idx[i - 1], (unsigned int)idx[i]);
            return -EBADMSG;
        }
    return 0;
}

int pv_parse_name_pages(const uint8_t *pages, size_t nr_pages, struct pv_stat_desc *descs,
                        char reason[PV_REASON_MAX])
{
    char why[PV_REASON_MAX];
    size_t total, i, count = 0;
    bool ended = false;

    clear_reason(reason);
    if (nr_pages > PV_MAX_PAGES) {
        set_reason(reason, "%zu name/type pages (at most %u)", nr_pages, PV_MAX_PAGES);
        return -EINVAL;
    }
    if (nr_pages && (!pages || !descs)) {
        set_reason(reason, "no buffer");
        return -EINVAL;
    }
    total = nr_pages * XEN_PV_STATS_PER_PAGE;
    for (i = 0; i < total; i++) {
        /*
         * One read of the entry: should a caller hand us live shared memory
         * after all, what is validated is still what is stored.
         */
        uint8_t entry[XEN_PV_STATS_ENTRY_SIZE];
        unsigned int page = (unsigned int)(i / XEN_PV_STATS_PER_PAGE);
        unsigned int slot = (unsigned int)(i % XEN_PV_STATS_PER_PAGE);
        int len;

        memcpy(entry, pages + i * XEN_PV_STATS_ENTRY_SIZE, sizeof(entry));
        if (ended) {
            /* Pre-allocated pages are fine; anything declared past the end is not. */
            if (entry[0] == XEN_PV_STATS_TYPE_END)
                continue;
            if (page == count / XEN_PV_STATS_PER_PAGE)
                set_reason(reason, "statistic %zu (page %u, entry %u): type %u after the end marker at statistic %zu",
                           i, page, slot, entry[0], count);
            else
                set_reason(reason,
                           "statistic %zu (page %u, entry %u): type %u in a page after the end marker at statistic %zu",
                           i, page, slot, entry[0], count);
            return -EBADMSG;
        }
        if (entry[0] == XEN_PV_STATS_TYPE_END) {
            ended = true;
            continue;
        }
        if (entry[0] > XEN_PV_STATS_TYPE_ASCII) {
            set_reason(reason, "statistic %zu (page %u, entry %u): unknown type %u", i, page, slot, entry[0]);
            return -EBADMSG;
        }
        len = pv_name_check((const char *)entry + 1, XEN_PV_STATS_NAME_SIZE, why);
        if (len < 0) {
            set_reason(reason, "statistic %zu (page %u, entry %u): %s", i, page, slot, why);
            return -EBADMSG;
        }
        descs[count].type = entry[0];
        memcpy(descs[count].name, entry + 1, (size_t)len);
        memset(descs[count].name + len, 0, sizeof(descs[count].name) - (size_t)len);
        count++;
    }
    if (count == 0) {
        set_reason(reason, nr_pages ? "no statistics: the list ends at statistic 0" : "no name/type pages");
        return -EBADMSG;
    }
    if (find_duplicate(descs, count, reason) < 0)
        return -EBADMSG;
    return (int)count;
}

/* ---- values -------------------------------------------------------------- */

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    unsigned int i;

    for (i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

int pv_decode_value(uint8_t type, const uint8_t entry[XEN_PV_STATS_ENTRY_SIZE], struct pv_value *ret_value,
                    char reason[PV_REASON_MAX])
{
    uint8_t copy[XEN_PV_STATS_ENTRY_SIZE];
    struct pv_value v;
    uint64_t bits;
    int len;

    clear_reason(reason);
    if (!entry || !ret_value) {
        set_reason(reason, "no buffer");
        return -EINVAL;
    }
    memcpy(copy, entry, sizeof(copy));
    memset(&v, 0, sizeof(v));
    v.type = type;
    bits = get_le64(copy);
    switch (type) {
    case XEN_PV_STATS_TYPE_S64:
        /* memcpy, not a cast: the bits are two's complement by definition of int64_t. */
        memcpy(&v.u.s64, &bits, sizeof(bits));
        break;
    case XEN_PV_STATS_TYPE_U64:
        v.u.u64 = bits;
        break;
    case XEN_PV_STATS_TYPE_DOUBLE:
        memcpy(&v.u.dbl, &bits, sizeof(bits));
        break;
    case XEN_PV_STATS_TYPE_ASCII:
        len = check_string((const char *)copy, sizeof(copy), sizeof(copy), "ASCII value", reason);
        if (len < 0)
            return -EINVAL;
        memcpy(v.u.ascii, copy, (size_t)len);
        break;
    default:
        set_reason(reason, "unknown type %u", type);
        return -EINVAL;
    }
    *ret_value = v;
    return 0;
}

/* ---- xenstore keys ------------------------------------------------------- */

/* Length of s up to its first NUL, looking at no more than len bytes. */
static size_t bounded_len(const char *s, size_t len)
{
    const char *nul = memchr(s, '\0', len);

    return nul ? (size_t)(nul - s) : len;
}

int pv_parse_number(const char *s, size_t len, uint32_t max, uint32_t *ret_value)
{
    uint64_t v = 0;
    size_t i, n;

    if (!s || !ret_value)
        return -EINVAL;
    n = bounded_len(s, len);
    if (n == 0 || (s[0] == '0' && n > 1))
        return -EINVAL;
    /* Syntax first, so that "99999999999x" is malformed, not out of range. */
    for (i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
    for (i = 0; i < n; i++) {
        v = v * 10 + (uint64_t)(s[i] - '0');
        /* v <= max < 2^32 before the step, so v * 10 + 9 cannot wrap. */
        if (v > max)
            return -ERANGE;
    }
    *ret_value = (uint32_t)v;
    return 0;
}

static bool has_prefix(const char *s, size_t len, const char *prefix, size_t *ret_prefix_len)
{
    size_t n = strlen(prefix);

    if (len < n || memcmp(s, prefix, n) != 0)
        return false;
    *ret_prefix_len = n;
    return true;
}

int pv_classify_key(const char *name, size_t len, uint32_t *ret_index)
{
    size_t n, prefix;
    int kind;

    if (!name || !ret_index)
        return -EINVAL;
    n = bounded_len(name, len);
    if (n == strlen(XEN_PV_STATS_KEY_EVENT_CHANNEL) && memcmp(name, XEN_PV_STATS_KEY_EVENT_CHANNEL, n) == 0)
        return PV_KEY_EVENT_CHANNEL;
    /*
     * Whatever follows one of our prefixes is an index: a key that starts
     * like ours but is not exactly ours is a provider bug to report, not a
     * key from the future to ignore.
     */
    if (has_prefix(name, n, XEN_PV_STATS_KEY_NAME_TYPE_REF, &prefix))
        kind = PV_KEY_NAME_TYPE_REF;
    else if (has_prefix(name, n, XEN_PV_STATS_KEY_VALUE_REF, &prefix))
        kind = PV_KEY_VALUE_REF;
    else
        return PV_KEY_OTHER;
    if (pv_parse_number(name + prefix, n - prefix, UINT32_MAX, ret_index) < 0)
        return -EINVAL;
    return kind;
}

/* "0,1,3" or "0-5,9": ranges keep 64 indices within a reason. */
static void format_indices(char *out, size_t size, uint64_t mask)
{
    size_t used = 0;
    unsigned int i = 0;

    out[0] = '\0';
    while (i < 64 && used < size) {
        unsigned int j = i;
        int n;

        if (!(mask >> i & 1)) {
            i++;
            continue;
        }
        while (j + 1 < 64 && (mask >> (j + 1) & 1))
            j++;
        if (j >= i + 2)
            n = snprintf(out + used, size - used, "%s%u-%u", used ? "," : "", i, j);
        else if (j == i + 1)
            n = snprintf(out + used, size - used, "%s%u,%u", used ? "," : "", i, j);
        else
            n = snprintf(out + used, size - used, "%s%u", used ? "," : "", i);
        if (n < 0)
            break;
        used += (size_t)n;
        i = j + 1;
    }
}

/* Lowest index set in a but not in b, or -1. */
static int first_missing(uint64_t a, uint64_t b)
{
    unsigned int i;

    for (i = 0; i < 64; i++)
        if ((a >> i & 1) && !(b >> i & 1))
            return (int)i;
    return -1;
}

/* Check that mask is exactly {0..N-1}; *ret_n = N. */
static int check_sequence(uint64_t mask, const char *key, unsigned int *ret_n, char reason[PV_REASON_MAX])
{
    char have[PV_REASON_MAX / 2];
    unsigned int n = 0;

    while (n < 64 && (mask >> n & 1))
        n++;
    if (n == 64 || !(mask >> n)) {
        *ret_n = n;
        return 0;
    }
    format_indices(have, sizeof(have), mask);
    set_reason(reason, "%s%u missing (have %s)", key, n, have);
    return -EINVAL;
}

int pv_parse_set_keys(const char *const *names, const size_t *name_lens, const char *const *values,
                      const size_t *value_lens, size_t count, struct pv_set_keys *ret_keys,
                      char reason[PV_REASON_MAX])
{
    char q[QUOTE_MAX + 4], qv[QUOTE_MAX + 4];
    struct pv_set_keys keys;
    uint64_t nt_mask = 0, val_mask = 0;
    bool have_event_key = false;
    size_t vanished = SIZE_MAX; /* first reference key deleted before it was read */
    unsigned int n;
    size_t i;

    clear_reason(reason);
    if (count > PV_MAX_SET_KEYS) {
        set_reason(reason, "%zu keys in the set (at most %u)", count, PV_MAX_SET_KEYS);
        return -E2BIG;
    }
    if (count && (!names || !name_lens || !values || !value_lens)) {
        set_reason(reason, "no key list");
        return -EINVAL;
    }
    if (!ret_keys) {
        set_reason(reason, "no result");
        return -EINVAL;
    }
    memset(&keys, 0, sizeof(keys));
    for (i = 0; i < count; i++) {
        const char *what;
        uint32_t index = 0, number, *slot;
        uint64_t *mask;
        int kind, r;

        if (!names[i]) {
            set_reason(reason, "key %zu has no name", i);
            return -EINVAL;
        }
        kind = pv_classify_key(names[i], name_lens[i], &index);
        if (kind < 0) {
            set_reason(reason, "key '%s': malformed index (decimal, no leading zeros)",
                       quote(q, names[i], name_lens[i]));
            return -EINVAL;
        }
        switch (kind) {
        case PV_KEY_NAME_TYPE_REF:
            mask = &nt_mask;
            slot = &keys.name_type_ref[index < PV_MAX_PAGES ? index : 0];
            what = "grant reference";
            break;
        case PV_KEY_VALUE_REF:
            mask = &val_mask;
            slot = &keys.value_ref[index < PV_MAX_PAGES ? index : 0];
            what = "grant reference";
            break;
        case PV_KEY_EVENT_CHANNEL:
            if (have_event_key) {
                set_reason(reason, "duplicate key '%s'", XEN_PV_STATS_KEY_EVENT_CHANNEL);
                return -EINVAL;
            }
            have_event_key = true;
            mask = NULL;
            slot = &keys.event_channel;
            what = "port";
            break;
        default:
            continue; /* not ours: a later version's key */
        }
        if (mask) {
            if (index >= PV_MAX_PAGES) {
                set_reason(reason, "key '%s': index %u (at most %u pages)", quote(q, names[i], name_lens[i]),
                           (unsigned int)index, PV_MAX_PAGES);
                return -E2BIG;
            }
            if (*mask >> index & 1) {
                set_reason(reason, "duplicate key '%s'", quote(q, names[i], name_lens[i]));
                return -EINVAL;
            }
            *mask |= UINT64_C(1) << index;
        }
        if (!values[i]) {
            /* Deleted between listing and reading: the set is changing. */
            if (mask && vanished == SIZE_MAX)
                vanished = i;
            continue;
        }
        r = pv_parse_number(values[i], value_lens[i], UINT32_MAX, &number);
        if (r < 0) {
            set_reason(reason, "key '%s': %s '%s' is %s", quote(q, names[i], name_lens[i]), what,
                       quote(qv, values[i], value_lens[i]),
                       r == -ERANGE ? "out of range" : "not a decimal number (digits only, no leading zeros)");
            return -EINVAL;
        }
        *slot = number;
        if (!mask)
            keys.have_event_channel = true;
    }

    if (!keys.have_event_channel) {
        /*
         * Not ready: the provider may still be writing its keys, or be
         * removing them after a withdrawal, so their sequence means nothing
         * yet.  Nothing else is reported.
         */
        memset(&keys, 0, sizeof(keys));
        *ret_keys = keys;
        return 0;
    }
    if (!(nt_mask & 1)) {
        set_reason(reason, "no %s0", XEN_PV_STATS_KEY_NAME_TYPE_REF);
        return -EINVAL;
    }
    if (check_sequence(nt_mask, XEN_PV_STATS_KEY_NAME_TYPE_REF, &n, reason) < 0)
        return -EINVAL;
    if (val_mask != nt_mask) {
        int missing = first_missing(nt_mask, val_mask);

        if (missing >= 0)
            set_reason(reason, "%s%d missing (have %s0..%u)", XEN_PV_STATS_KEY_VALUE_REF, missing,
                       XEN_PV_STATS_KEY_NAME_TYPE_REF, n - 1);
        else
            set_reason(reason, "%s%d without %s%d", XEN_PV_STATS_KEY_VALUE_REF, first_missing(val_mask, nt_mask),
                       XEN_PV_STATS_KEY_NAME_TYPE_REF, first_missing(val_mask, nt_mask));
        return -EINVAL;
    }
    if (vanished != SIZE_MAX) {
        set_reason(reason, "key '%s' vanished while being read: the set is changing",
                   quote(q, names[vanished], name_lens[vanished]));
        return -EAGAIN;
    }
    keys.nr_pages = n;
    *ret_keys = keys;
    return 0;
}

/* ---- the naming convention ------------------------------------------------ */

static bool lower_or_digit(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * Words a family name must not hold (promtool's lint): abbreviated units,
 * units with a prefix instead of the base unit, and metric types.  Every
 * statistic of every sample goes through here, so the lists are searched
 * by length and by the unit a word ends in.
 */
#define WORD(s) {s, sizeof(s) - 1}
struct word {
    const char *s;
    size_t n;
};

static bool in_list(const char *w, size_t n, const struct word *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (list[i].n == n && memcmp(w, list[i].s, n) == 0)
            return true;
    return false;
}

static bool word_ok(const char *w, size_t n)
{
    static const struct word banned[] = {
        WORD("s"),  WORD("ms"), WORD("us"),      WORD("ns"),      WORD("sec"),     WORD("b"),
        WORD("kb"), WORD("mb"), WORD("gb"),      WORD("tb"),      WORD("pb"),      WORD("m"),
        WORD("h"),  WORD("d"),  WORD("counter"), WORD("gauge"),   WORD("histogram"), WORD("summary"),
        WORD("fahrenheit"),
    };
    static const struct word prefixes[] = {
        WORD("pico"), WORD("nano"), WORD("micro"), WORD("milli"), WORD("centi"), WORD("deci"), WORD("deca"),
        WORD("hecto"), WORD("kilo"), WORD("kibi"), WORD("mega"),  WORD("mebi"),  WORD("giga"), WORD("gibi"),
        WORD("tera"), WORD("tebi"), WORD("peta"),  WORD("pebi"),  WORD("exa"),   WORD("exbi"),
    };
    static const struct word units[] = {
        WORD("seconds"), WORD("bytes"),  WORD("meters"),  WORD("metres"), WORD("grams"), WORD("amperes"),
        WORD("volts"),   WORD("joules"), WORD("celsius"), WORD("kelvin"), WORD("hertz"), WORD("watts"),
    };

    if (n <= 10 && in_list(w, n, banned, sizeof(banned) / sizeof(banned[0])))
        return false;
    /* a prefix is 3 to 5 letters: most words are not long enough to be one and a unit */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (n >= units[i].n + 3 && n <= units[i].n + 5 && w[n - 1] == units[i].s[units[i].n - 1] &&
            memcmp(w + n - units[i].n, units[i].s, units[i].n) == 0 &&
            in_list(w, n - units[i].n, prefixes, sizeof(prefixes) / sizeof(prefixes[0])))
            return false;
    return true;
}
#undef WORD

int pv_set_group(const char *set, const char **ret_device)
{
    size_t n = strnlen(set, XEN_PV_STATS_NAME_MAX + 1), i;

    if (n == 0 || n > XEN_PV_STATS_NAME_MAX || set[0] < 'a' || set[0] > 'z')
        return -EINVAL;
    for (i = 1; i < n && lower_or_digit(set[i]); i++)
        ;
    if (i > PV_GROUP_MAX || !word_ok(set, i))
        return -EINVAL;
    if (i == n) {
        *ret_device = NULL;
        return (int)i;
    }
    /* one space, then a device of the name alphabet, not blank at either end */
    if (set[i] != ' ' || i + 1 == n || set[i + 1] == ' ' || set[n - 1] == ' ')
        return -EINVAL;
    for (size_t j = i + 1; j < n; j++)
        if (!pv_char_ok((unsigned char)set[j]))
            return -EINVAL;
    *ret_device = set + i + 1;
    return (int)i;
}

static const char *const unit_names[PV_UNIT_COUNT_] = {
    [PV_UNIT_NONE] = "",          [PV_UNIT_SECONDS] = "seconds", [PV_UNIT_BYTES] = "bytes",
    [PV_UNIT_RATIO] = "ratio",    [PV_UNIT_HERTZ] = "hertz",     [PV_UNIT_CELSIUS] = "celsius",
    [PV_UNIT_JOULES] = "joules",  [PV_UNIT_WATTS] = "watts",     [PV_UNIT_VOLTS] = "volts",
    [PV_UNIT_AMPERES] = "amperes", [PV_UNIT_METERS] = "meters",  [PV_UNIT_GRAMS] = "grams",
};

const char *pv_unit_name(enum pv_unit unit)
{
    return (unsigned int)unit < PV_UNIT_COUNT_ ? unit_names[unit] : "";
}

int pv_stat_classify(const char *name, uint8_t type, struct pv_stat_name *ret)
{
#define WORD(s) {s, sizeof(s) - 1}
    static const struct word reserved[] = {WORD("total"),  WORD("created"), WORD("count"), WORD("sum"),
                                           WORD("bucket"), WORD("gcount"),  WORD("gsum"),  WORD("info")};
#undef WORD
    size_t n = strnlen(name, XEN_PV_STATS_NAME_MAX + 1), base, word = 0, last = 0, before = 0, i;
    enum pv_stat_kind kind = PV_STAT_GAUGE;
    enum pv_unit unit = PV_UNIT_NONE;

    if (n == 0 || n > XEN_PV_STATS_NAME_MAX || name[0] < 'a' || name[0] > 'z' || name[n - 1] == '_')
        return -EINVAL;
    /* one pass: the alphabet, each word, and where the last two words start */
    for (i = 1; i <= n; i++) {
        if (i < n && lower_or_digit(name[i]))
            continue;
        if (i < n && (name[i] != '_' || name[i - 1] == '_'))
            return -EINVAL;
        if (!word_ok(name + word, i - word))
            return -EINVAL;
        before = last;
        last = word;
        word = i + 1;
    }
    base = n;
    if (last > 0 && n - last == 5 && memcmp(name + last, "total", 5) == 0) {
        kind = PV_STAT_COUNTER;
        base = last - 1;
        last = before;
    }
    if (type != XEN_PV_STATS_TYPE_U64 && type != XEN_PV_STATS_TYPE_DOUBLE &&
        (kind == PV_STAT_COUNTER || type != XEN_PV_STATS_TYPE_S64))
        return -EINVAL;
    /* the last word of the name before _total: not reserved, maybe a unit */
    if (last > 0) {
        if (in_list(name + last, base - last, reserved, sizeof(reserved) / sizeof(reserved[0])))
            return -EINVAL;
        for (i = 1; i < PV_UNIT_COUNT_; i++)
            if (strlen(unit_names[i]) == base - last && memcmp(name + last, unit_names[i], base - last) == 0)
                unit = (enum pv_unit)i;
    }
    ret->kind = kind;
    ret->unit = unit;
    ret->base_len = base;
    return 0;
}
