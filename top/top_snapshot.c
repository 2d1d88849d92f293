/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: the agent's JSON snapshot (docs/agent-api.md) into the
 * view's model.  The agent is trusted-ish but most of its strings come from
 * guests, so every member is type-checked and bounded and every string is
 * escaped before anything else sees it.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "top/snapshot.h"
#include "top/sort.h"

static const char *const severity_names[] = {
    [TOP_SET_ACTIVE] = "active",       [TOP_SET_SAMPLING] = "sampling", [TOP_SET_WITHDRAWN] = "withdrawn",
    [TOP_SET_STALE] = "stale",         [TOP_SET_TIMED_OUT] = "timed-out", [TOP_SET_REJECTED] = "rejected",
};

/* Bytes byte c takes escaped. */
static size_t escaped_size(unsigned char c)
{
    return c == '\\' ? 2 : (c < 0x20 || c > 0x7e) ? 4 : 1;
}

char *top_escape(const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, o = 0, size = 0, keep = 0;
    bool cut = false;
    char *out;

    /* Sized exactly: a large snapshot holds hundreds of thousands of names. */
    for (keep = 0; keep < len; keep++) {
        size_t need = escaped_size((unsigned char)s[keep]);

        if (size + need > TOP_MAX_STRING) {
            cut = true;
            break;
        }
        size += need;
    }
    out = malloc(size + (cut ? 3 : 0) + 1);
    if (!out)
        return NULL;
    for (i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
        } else if (escaped_size(c) == 4) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

int top_reason(char *err, size_t errlen, int r, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return r;
}

enum top_set_severity top_set_severity_of(const char *state)
{
    size_t i;

    for (i = 0; i < sizeof(severity_names) / sizeof(severity_names[0]); i++)
        if (!strcmp(state, severity_names[i]))
            return (enum top_set_severity)i;
    return TOP_SET_UNKNOWN;
}

/* ---- validation helpers ---------------------------------------------- */

struct ctx {
    char *err;
    size_t errlen;
    int r; /* first error */
};

static int bad(struct ctx *c, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(struct ctx *c, const char *where, const char *key, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (c->r)
        return c->r;
    c->r = -EBADMSG;
    if (!c->err || !c->errlen)
        return c->r;
    n = snprintf(c->err, c->errlen, "%s%s%s: ", where, *where && key ? "." : "", key ? key : "");
    if (n < 0 || (size_t)n >= c->errlen)
        return c->r;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return c->r;
}

static int oom(struct ctx *c)
{
    if (!c->r) {
        c->r = -ENOMEM;
        if (c->err && c->errlen)
            snprintf(c->err, c->errlen, "out of memory");
    }
    return c->r;
}

/* NULL when absent or JSON null. */
static struct json_object *member(struct json_object *obj, const char *key)
{
    struct json_object *v = NULL;

    return json_object_object_get_ex(obj, key, &v) ? v : NULL;
}

static bool present(struct json_object *obj, const char *key)
{
    return json_object_object_get_ex(obj, key, NULL);
}

/* An unsigned integer member no larger than max; required or null/absent. */
static int get_uint(struct ctx *c, const char *where, struct json_object *obj, const char *key, uint64_t max,
                    bool required, bool *ret_valid, uint64_t *ret_value)
{
    struct json_object *v = member(obj, key);

    if (ret_valid)
        *ret_valid = false;
    if (!v) {
        if (required)
            return bad(c, where, key, present(obj, key) ? "must not be null" : "missing");
        return 0;
    }
    if (!json_object_is_type(v, json_type_int))
        return bad(c, where, key, "expected an integer%s", required ? "" : " or null");
    /* json-c keeps integers above INT64_MAX as unsigned; negatives as signed. */
    if (json_object_get_int64(v) < 0)
        return bad(c, where, key, "negative");
    if (json_object_get_uint64(v) > max)
        return bad(c, where, key, "%llu is out of range (at most %llu)",
                   (unsigned long long)json_object_get_uint64(v), (unsigned long long)max);
    *ret_value = json_object_get_uint64(v);
    if (ret_valid)
        *ret_valid = true;
    return 0;
}

/* A finite non-negative number; null/absent leaves it invalid. */
static int get_seconds(struct ctx *c, const char *where, struct json_object *obj, const char *key, bool required,
                       bool *ret_valid, double *ret_value)
{
    struct json_object *v = member(obj, key);
    double d;

    *ret_valid = false;
    if (!v) {
        if (required)
            return bad(c, where, key, present(obj, key) ? "must not be null" : "missing");
        return 0;
    }
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return bad(c, where, key, "expected a number%s", required ? "" : " or null");
    d = json_object_get_double(v);
    if (!isfinite(d) || d < 0)
        return bad(c, where, key, "expected a finite non-negative number");
    *ret_value = d;
    *ret_valid = true;
    return 0;
}

/* An escaped copy of a string member; NULL (and 0) when null/absent and optional. */
static int get_string(struct ctx *c, const char *where, struct json_object *obj, const char *key, bool required,
                      char **ret_str)
{
    struct json_object *v = member(obj, key);

    *ret_str = NULL;
    if (!v) {
        if (required)
            return bad(c, where, key, present(obj, key) ? "must not be null" : "missing");
        return 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return bad(c, where, key, "expected a string%s", required ? "" : " or null");
    *ret_str = top_escape(json_object_get_string(v), (size_t)json_object_get_string_len(v));
    return *ret_str ? 0 : oom(c);
}

/* An array member of at most max elements; absent or null is empty. */
static int get_array(struct ctx *c, const char *where, struct json_object *obj, const char *key, size_t max,
                     struct json_object **ret_array, size_t *ret_len)
{
    struct json_object *v = member(obj, key);

    *ret_array = NULL;
    *ret_len = 0;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return bad(c, where, key, "expected an array");
    if (json_object_array_length(v) > max)
        return bad(c, where, key, "%zu elements is more than the %zu allowed", json_object_array_length(v), max);
    *ret_array = v;
    *ret_len = json_object_array_length(v);
    return 0;
}

static int expect_object(struct ctx *c, const char *where, struct json_object *v)
{
    if (!json_object_is_type(v, json_type_object))
        return bad(c, where, NULL, "expected an object");
    return 0;
}

/* ---- the snapshot ----------------------------------------------------- */

/* The path of an element for messages, such as "domains[2].vcpus[0]". */
static void path_of(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static int parse_vcpu(struct ctx *c, const char *where, struct json_object *o, struct top_vcpu *v)
{
    struct json_object *state;
    uint64_t n = 0;
    unsigned int s;

    v->state = -1;
    if (expect_object(c, where, o) || get_uint(c, where, o, "vcpu", TOP_MAX_VCPUS - 1, true, NULL, &n))
        return c->r;
    v->vcpu = (uint32_t)n;
    state = member(o, "state");
    if (state) {
        if (!json_object_is_type(state, json_type_string))
            return bad(c, where, "state", "expected a string or null");
        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++)
            if (!strcmp(json_object_get_string(state), xenstats_vcpu_runstate_name(s)))
                v->state = (int)s;
        /* An unknown state is shown as unknown, not trusted. */
    }
    for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++)
        if (get_seconds(c, where, o, xenstats_vcpu_runstate_name(s), false, &v->time_valid[s], &v->time[s]))
            return c->r;
    return get_uint(c, where, o, "state_changes", UINT64_MAX, false, &v->changes_valid, &v->changes);
}

static char *format_value(struct json_object *v)
{
    char buf[64];

    if (!v)
        return strdup("-");
    switch (json_object_get_type(v)) {
    case json_type_int:
        if (json_object_get_int64(v) < 0)
            snprintf(buf, sizeof(buf), "%lld", (long long)json_object_get_int64(v));
        else
            snprintf(buf, sizeof(buf), "%llu", (unsigned long long)json_object_get_uint64(v));
        return strdup(buf);
    case json_type_double:
        snprintf(buf, sizeof(buf), "%.6g", json_object_get_double(v));
        return strdup(buf);
    case json_type_boolean:
        return strdup(json_object_get_boolean(v) ? "true" : "false");
    case json_type_string:
        return top_escape(json_object_get_string(v), (size_t)json_object_get_string_len(v));
    default:
        return NULL;
    }
}

static int parse_stat(struct ctx *c, const char *where, struct json_object *o, struct top_stat *st)
{
    struct json_object *v;

    if (expect_object(c, where, o) || get_string(c, where, o, "name", true, &st->name) ||
        get_string(c, where, o, "type", false, &st->type))
        return c->r;
    if (!st->type && !(st->type = strdup("-")))
        return oom(c);
    v = member(o, "value");
    if (v && (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array)))
        return bad(c, where, "value", "expected a number, a string or null");
    st->value = format_value(v);
    return st->value ? 0 : oom(c);
}

static int parse_set(struct ctx *c, const char *where, struct json_object *o, struct top_set *set)
{
    struct json_object *stats;
    char sub[128];
    size_t i;

    if (expect_object(c, where, o) || get_string(c, where, o, "provider", true, &set->provider) ||
        get_string(c, where, o, "set", true, &set->set) || get_string(c, where, o, "state", true, &set->state) ||
        get_string(c, where, o, "reason", false, &set->reason) ||
        get_uint(c, where, o, "samples", UINT64_MAX, false, NULL, &set->samples) ||
        get_uint(c, where, o, "timeouts", UINT64_MAX, false, NULL, &set->timeouts) ||
        get_uint(c, where, o, "errors", UINT64_MAX, false, NULL, &set->errors) ||
        get_seconds(c, where, o, "latency", false, &set->latency_valid, &set->latency) ||
        get_array(c, where, o, "stats", TOP_MAX_STATS, &stats, &set->nr_stats))
        return c->r;
    set->severity = top_set_severity_of(set->state);
    if (!set->nr_stats)
        return 0;
    set->stats = calloc(set->nr_stats, sizeof(*set->stats));
    if (!set->stats) {
        set->nr_stats = 0;
        return oom(c);
    }
    for (i = 0; i < set->nr_stats; i++) {
        path_of(sub, sizeof(sub), "%s.stats[%zu]", where, i);
        if (parse_stat(c, sub, json_object_array_get_idx(stats, i), &set->stats[i]))
            return c->r;
    }
    return 0;
}

/* The state flags of the JSON, as xentop shows them. */
static int parse_state(struct ctx *c, const char *where, struct json_object *o, struct top_domain *d)
{
    static const struct {
        const char *name;
        char letter;
        int column;
    } flags[] = {{"dying", 'd', 0},   {"shutdown", 's', 1}, {"blocked", 'b', 2},
                 {"crashed", 'c', 3}, {"paused", 'p', 4},   {"running", 'r', 5}};
    struct json_object *state;
    size_t i, k, n;

    snprintf(d->state, sizeof(d->state), "?");
    if (get_array(c, where, o, "state", 16, &state, &n) || !state)
        return c->r;
    snprintf(d->state, sizeof(d->state), "------");
    for (i = 0; i < n; i++) {
        struct json_object *v = json_object_array_get_idx(state, i);

        if (!json_object_is_type(v, json_type_string))
            return bad(c, where, "state", "expected an array of strings");
        /* a flag this build does not know is left out */
        for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
            if (!strcmp(json_object_get_string(v), flags[k].name))
                d->state[flags[k].column] = flags[k].letter;
    }
    return 0;
}

/*
 * The FIGUREs of `scope` in object o, each optional: seconds for time
 * figures, integers otherwise; added into fig[] when `sum`.
 */
static int parse_figures(struct ctx *c, const char *where, struct json_object *o, enum figure_scope scope, bool sum,
                         bool *fig_valid, double *fig)
{
    for (int id = 0; id < FIG_COUNT; id++) {
        const struct figure_decl *fd = &figure_decls[id];
        bool valid = false;
        uint64_t u = 0;
        double v = 0;

        if (fd->scope != scope)
            continue;
        if (fd->ns) {
            if (get_seconds(c, where, o, fd->json, false, &valid, &v))
                return c->r;
        } else {
            if (get_uint(c, where, o, fd->json, UINT64_MAX, false, &valid, &u))
                return c->r;
            v = (double)u;
        }
        if (!valid)
            continue;
        fig[id] = sum && fig_valid[id] ? fig[id] + v : v;
        fig_valid[id] = true;
    }
    return 0;
}

/* A domain's vifs or vbds: counted, their figures summed into the domain's. */
static int parse_devices(struct ctx *c, const char *where, struct json_object *o, const char *key,
                         enum figure_scope scope, struct top_domain *d, size_t *ret_count)
{
    struct json_object *list;
    char sub[128];
    size_t i;

    if (get_array(c, where, o, key, 65536, &list, ret_count))
        return c->r;
    for (i = 0; i < *ret_count; i++) {
        struct json_object *dev = json_object_array_get_idx(list, i);

        path_of(sub, sizeof(sub), "%s.%s[%zu]", where, key, i);
        if (expect_object(c, sub, dev) || parse_figures(c, sub, dev, scope, true, d->fig_valid, d->fig))
            return c->r;
    }
    return 0;
}

static int parse_domain(struct ctx *c, const char *where, struct json_object *o, struct top_domain *d)
{
    struct json_object *vcpus, *sets;
    char sub[128];
    uint64_t n = 0;
    size_t i;

    if (expect_object(c, where, o) || get_uint(c, where, o, "domid", UINT32_MAX, true, NULL, &n))
        return c->r;
    d->domid = (uint32_t)n;
    n = 0;
    if (get_string(c, where, o, "name", false, &d->name) ||
        get_uint(c, where, o, "nr_vcpus", TOP_MAX_VCPUS, false, NULL, &n) ||
        get_string(c, where, o, "vcpu_source", false, &d->vcpu_source) ||
        get_string(c, where, o, "vcpu_error", false, &d->vcpu_error) ||
        get_array(c, where, o, "vcpus", TOP_MAX_VCPUS, &vcpus, &d->nr_vcpu_rows) ||
        get_array(c, where, o, "pv_sets", TOP_MAX_SETS, &sets, &d->nr_sets))
        return c->r;
    d->nr_vcpus = (uint32_t)n;
    if (!d->name && !(d->name = strdup("")))
        return oom(c);
    if (parse_state(c, where, o, d) || parse_figures(c, where, o, SCOPE_DOMAIN, false, d->fig_valid, d->fig) ||
        parse_devices(c, where, o, "vifs", SCOPE_VIF, d, &d->nr_vifs) ||
        parse_devices(c, where, o, "vbds", SCOPE_VBD, d, &d->nr_vbds))
        return c->r;
    if (d->nr_vcpu_rows) {
        d->vcpus = calloc(d->nr_vcpu_rows, sizeof(*d->vcpus));
        if (!d->vcpus) {
            d->nr_vcpu_rows = 0;
            return oom(c);
        }
    }
    for (i = 0; i < d->nr_vcpu_rows; i++) {
        path_of(sub, sizeof(sub), "%s.vcpus[%zu]", where, i);
        if (parse_vcpu(c, sub, json_object_array_get_idx(vcpus, i), &d->vcpus[i]))
            return c->r;
    }
    if (d->nr_sets) {
        d->sets = calloc(d->nr_sets, sizeof(*d->sets));
        if (!d->sets) {
            d->nr_sets = 0;
            return oom(c);
        }
    }
    for (i = 0; i < d->nr_sets; i++) {
        path_of(sub, sizeof(sub), "%s.pv_sets[%zu]", where, i);
        if (parse_set(c, sub, json_object_array_get_idx(sets, i), &d->sets[i]))
            return c->r;
    }
    return 0;
}

static int parse_root(struct ctx *c, struct json_object *root, struct top_snapshot *snap)
{
    struct json_object *domains, *host;
    char sub[32];
    uint64_t version = 0;
    bool valid;
    size_t i;

    if (expect_object(c, "snapshot", root) || get_uint(c, "", root, "version", UINT32_MAX, true, NULL, &version))
        return c->r;
    if (version != 1)
        return bad(c, "", "version", "%llu is not a version this xenstats top reads (1)",
                   (unsigned long long)version);
    if (get_uint(c, "", root, "monotonic_ns", UINT64_MAX, true, NULL, &snap->monotonic_ns) ||
        get_seconds(c, "", root, "time", false, &valid, &snap->time) ||
        get_seconds(c, "", root, "interval", false, &valid, &snap->interval))
        return c->r;
    host = member(root, "host");
    if (host && (expect_object(c, "host", host) || get_string(c, "host", host, "backend", false, &snap->backend) ||
                 get_string(c, "host", host, "xen_version", false, &snap->xen_version) ||
                 parse_figures(c, "host", host, SCOPE_HOST, false, snap->fig_valid, snap->fig)))
        return c->r;
    if (get_array(c, "", root, "domains", TOP_MAX_DOMAINS, &domains, &snap->nr_domains))
        return c->r;
    if (!domains && !present(root, "domains"))
        return bad(c, "", "domains", "missing");
    if (!snap->nr_domains)
        return 0;
    snap->domains = calloc(snap->nr_domains, sizeof(*snap->domains));
    if (!snap->domains) {
        snap->nr_domains = 0;
        return oom(c);
    }
    for (i = 0; i < snap->nr_domains; i++) {
        path_of(sub, sizeof(sub), "domains[%zu]", i);
        if (parse_domain(c, sub, json_object_array_get_idx(domains, i), &snap->domains[i]))
            return c->r;
    }
    return 0;
}

struct top_snapshot *top_snapshot_new(void)
{
    return calloc(1, sizeof(struct top_snapshot));
}

/*
 * The offset of the first raw control character inside a string, or -1.
 * RFC 8259 forbids them; json-c's strict mode lets them through up to 0.16
 * (Debian 12) and rejects them from 0.17 (Debian 13's 0.18), so they are
 * rejected here, before json-c, for one answer on every version.
 */
static long raw_control_in_string(const char *text, size_t len)
{
    bool in_string = false, escaped = false;
    size_t i;

    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];

        if (!in_string)
            in_string = ch == '"';
        else if (escaped)
            escaped = false;
        else if (ch == '\\')
            escaped = true;
        else if (ch == '"')
            in_string = false;
        else if (ch < 0x20)
            return (long)i;
    }
    return -1;
}

int top_snapshot_parse(const char *text, size_t len, struct top_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct ctx c = {.err = err, .errlen = errlen};
    struct json_tokener *tok = NULL;
    struct json_object *root = NULL;
    struct top_snapshot *snap = NULL;
    enum json_tokener_error jerr;
    long bad_at;

    if (len > INT32_MAX) /* json_tokener_parse_ex takes an int */
        return bad(&c, "snapshot", NULL, "too large");
    tok = json_tokener_new();
    snap = top_snapshot_new();
    if (!tok || !snap) {
        oom(&c);
        goto out;
    }
    /* Strict: no trailing commas, single quotes or other leniencies. */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    if ((bad_at = raw_control_in_string(text, len)) >= 0) {
        bad(&c, "snapshot", NULL, "not JSON: raw control character in a string at byte %ld", bad_at);
        goto out;
    }
    root = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    if (!root && jerr == json_tokener_continue) {
        bad(&c, "snapshot", NULL, "not JSON: truncated");
        goto out;
    }
    if (!root || jerr != json_tokener_success) {
        bad(&c, "snapshot", NULL, "not JSON: %s at byte %zu",
            jerr == json_tokener_success ? "null document" : json_tokener_error_desc(jerr),
            json_tokener_get_parse_end(tok));
        goto out;
    }
    if (json_tokener_get_parse_end(tok) < len) {
        size_t end = json_tokener_get_parse_end(tok);

        while (end < len && strchr(" \t\r\n", text[end]) && text[end])
            end++;
        if (end < len) {
            bad(&c, "snapshot", NULL, "not JSON: trailing data at byte %zu", end);
            goto out;
        }
    }
    if (parse_root(&c, root, snap) || (c.r = top_snapshot_finish(snap, err, errlen)) < 0)
        goto out;
    *ret_snapshot = snap;
    snap = NULL;
out:
    top_snapshot_free(snap);
    json_object_put(root);
    if (tok)
        json_tokener_free(tok);
    return c.r;
}

static int cmp_domain(const void *a, const void *b)
{
    const struct top_domain *x = a, *y = b;

    return x->domid < y->domid ? -1 : x->domid > y->domid;
}

static int cmp_vcpu(const void *a, const void *b)
{
    const struct top_vcpu *x = a, *y = b;

    return x->vcpu < y->vcpu ? -1 : x->vcpu > y->vcpu;
}

int top_snapshot_finish(struct top_snapshot *snap, char *err, size_t errlen)
{
    struct ctx c = {.err = err, .errlen = errlen};
    size_t i, j;

    /* The contract sorts them already; sorting again costs little and lets
     * everything else rely on it. */
    if (snap->nr_domains)
        qsort(snap->domains, snap->nr_domains, sizeof(*snap->domains), cmp_domain);
    for (i = 0; i < snap->nr_domains; i++) {
        struct top_domain *d = &snap->domains[i];
        char where[32];

        snprintf(where, sizeof(where), "domain %u", d->domid);
        if (i && snap->domains[i - 1].domid == d->domid)
            return bad(&c, where, NULL, "listed twice");
        if (d->nr_vcpu_rows)
            qsort(d->vcpus, d->nr_vcpu_rows, sizeof(*d->vcpus), cmp_vcpu);
        for (j = 1; j < d->nr_vcpu_rows; j++)
            if (d->vcpus[j - 1].vcpu == d->vcpus[j].vcpu)
                return bad(&c, where, NULL, "vCPU %u listed twice", d->vcpus[j].vcpu);
        d->worst = TOP_SET_ACTIVE;
        d->worst_state = NULL;
        for (j = 0; j < d->nr_sets; j++) {
            if (!d->worst_state || d->sets[j].severity > d->worst) {
                d->worst = d->sets[j].severity;
                d->worst_state = d->sets[j].state;
            }
        }
    }
    return 0;
}

void top_snapshot_free(struct top_snapshot *snap)
{
    size_t i, j, k;

    if (!snap)
        return;
    /* A parse that failed half-way leaves counts without arrays. */
    for (i = 0; snap->domains && i < snap->nr_domains; i++) {
        struct top_domain *d = &snap->domains[i];

        for (j = 0; d->sets && j < d->nr_sets; j++) {
            struct top_set *set = &d->sets[j];

            for (k = 0; set->stats && k < set->nr_stats; k++) {
                free(set->stats[k].name);
                free(set->stats[k].type);
                free(set->stats[k].value);
            }
            free(set->stats);
            free(set->provider);
            free(set->set);
            free(set->state);
            free(set->reason);
        }
        free(d->sets);
        free(d->vcpus);
        free(d->name);
        free(d->vcpu_source);
        free(d->vcpu_error);
    }
    free(snap->domains);
    free(snap->backend);
    free(snap->xen_version);
    free(snap);
}

const struct top_domain *top_snapshot_find(const struct top_snapshot *snap, uint32_t domid)
{
    struct top_domain key = {.domid = domid};

    if (!snap || !snap->nr_domains)
        return NULL;
    return bsearch(&key, snap->domains, snap->nr_domains, sizeof(*snap->domains), cmp_domain);
}

static const struct top_vcpu *find_vcpu(const struct top_domain *d, uint32_t vcpu)
{
    struct top_vcpu key = {.vcpu = vcpu};

    if (!d->nr_vcpu_rows)
        return NULL;
    return bsearch(&key, d->vcpus, d->nr_vcpu_rows, sizeof(*d->vcpus), cmp_vcpu);
}

void top_snapshot_rates(struct top_snapshot *cur, const struct top_snapshot *prev)
{
    double dt;
    size_t i, j;
    unsigned int s;

    cur->have_rates = false;
    if (!prev || prev->monotonic_ns >= cur->monotonic_ns)
        return;
    dt = (double)(cur->monotonic_ns - prev->monotonic_ns) / 1e9;
    cur->have_rates = true;
    cur->elapsed = dt;
    for (i = 0; i < cur->nr_domains; i++) {
        struct top_domain *d = &cur->domains[i];
        const struct top_domain *p = top_snapshot_find(prev, d->domid);
        double sum[XENSTATS_VCPU_NR_RUNSTATES] = {0}, changes = 0;
        size_t count[XENSTATS_VCPU_NR_RUNSTATES] = {0}, nchanges = 0;

        /* A reused domid is another domain: its counters restarted. */
        if (!p || strcmp(p->name, d->name))
            continue;
        for (j = 0; j < d->nr_vcpu_rows; j++) {
            struct top_vcpu *v = &d->vcpus[j];
            const struct top_vcpu *pv = find_vcpu(p, v->vcpu);

            if (!pv)
                continue;
            for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
                if (!v->time_valid[s] || !pv->time_valid[s] || v->time[s] < pv->time[s])
                    continue;
                v->share[s] = (v->time[s] - pv->time[s]) / dt;
                v->share_valid[s] = true;
                sum[s] += v->share[s];
                count[s]++;
            }
            if (v->changes_valid && pv->changes_valid && v->changes >= pv->changes) {
                v->changes_per_s = (double)(v->changes - pv->changes) / dt;
                v->rate_valid = true;
                changes += v->changes_per_s;
                nchanges++;
            }
        }
        for (s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++) {
            if (count[s]) {
                d->share[s] = sum[s] / (double)count[s];
                d->share_valid[s] = true;
            }
        }
        if (nchanges) {
            d->changes_per_s = changes;
            d->rate_valid = true;
        }
        if (d->fig_valid[FIG_DOMAIN_CPU] && p->fig_valid[FIG_DOMAIN_CPU] &&
            d->fig[FIG_DOMAIN_CPU] >= p->fig[FIG_DOMAIN_CPU]) {
            d->cpu_pct = (d->fig[FIG_DOMAIN_CPU] - p->fig[FIG_DOMAIN_CPU]) / dt * 100.0;
            d->cpu_pct_valid = true;
        }
    }
}

/* ---- sorting ---------------------------------------------------------- */

const struct top_sort_info top_sort_keys[TOP_NR_SORT_KEYS] = {
    [TOP_SORT_DOMID] = {"domid", 'i', false},      [TOP_SORT_NAME] = {"name", 'n', false},
    [TOP_SORT_VCPUS] = {"vcpus", 'v', true},       [TOP_SORT_RUNNING] = {"running", 'u', true},
    [TOP_SORT_RUNNABLE] = {"runnable", 'w', true}, [TOP_SORT_BLOCKED] = {"blocked", 'b', true},
    [TOP_SORT_OFFLINE] = {"offline", 'o', true},   [TOP_SORT_CHANGES] = {"changes", 'c', true},
    [TOP_SORT_SETS] = {"sets", 'p', true},         [TOP_SORT_WORST] = {"worst", 'x', true},
};

int top_sort_parse(const char *name, enum top_sort_key *ret_key)
{
    unsigned int k;

    for (k = 0; k < TOP_NR_SORT_KEYS; k++) {
        if (!strcmp(name, top_sort_keys[k].name)) {
            *ret_key = (enum top_sort_key)k;
            return 0;
        }
    }
    return -EINVAL;
}

/* qsort has no context argument: the comparison reads these. */
static const struct top_snapshot *sort_snap;
static enum top_sort_key sort_key;
static bool sort_reverse;

/* Figure of d for the key, and whether it is known. */
static bool figure(const struct top_domain *d, enum top_sort_key key, double *ret)
{
    switch (key) {
    case TOP_SORT_VCPUS:
        *ret = d->nr_vcpus;
        return true;
    case TOP_SORT_RUNNING:
    case TOP_SORT_RUNNABLE:
    case TOP_SORT_BLOCKED:
    case TOP_SORT_OFFLINE:
        *ret = d->share[key - TOP_SORT_RUNNING];
        return d->share_valid[key - TOP_SORT_RUNNING];
    case TOP_SORT_CHANGES:
        *ret = d->changes_per_s;
        return d->rate_valid;
    case TOP_SORT_SETS:
        *ret = (double)d->nr_sets;
        return true;
    case TOP_SORT_WORST:
        *ret = d->worst;
        return d->nr_sets > 0;
    default:
        *ret = d->domid;
        return true;
    }
}

static int cmp_order(const void *a, const void *b)
{
    const struct top_domain *x = &sort_snap->domains[*(const size_t *)a];
    const struct top_domain *y = &sort_snap->domains[*(const size_t *)b];
    bool descending = top_sort_keys[sort_key].descending != sort_reverse;
    double fx, fy;
    bool vx, vy;
    int r = 0;

    if (sort_key == TOP_SORT_NAME) {
        r = strcmp(x->name, y->name);
    } else if (sort_key != TOP_SORT_DOMID) {
        vx = figure(x, sort_key, &fx);
        vy = figure(y, sort_key, &fy);
        if (vx != vy)
            return vx ? -1 : 1; /* unknown figures last, either way */
        if (vx)
            r = fx < fy ? -1 : fx > fy;
    }
    if (descending)
        r = -r;
    /* Ties stay in domid order whichever way the key sorts. */
    if (!r || sort_key == TOP_SORT_DOMID)
        r = (x->domid < y->domid ? -1 : x->domid > y->domid) * (sort_key == TOP_SORT_DOMID && descending ? -1 : 1);
    return r;
}

void top_sort(const struct top_snapshot *snap, enum top_sort_key key, bool reverse, size_t *order)
{
    size_t i;

    for (i = 0; i < snap->nr_domains; i++)
        order[i] = i;
    if (snap->nr_domains < 2)
        return;
    sort_snap = snap;
    sort_key = key;
    sort_reverse = reverse;
    qsort(order, snap->nr_domains, sizeof(*order), cmp_order);
    sort_snap = NULL;
}
