/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON of json_writer.c read back into a snapshot: what `xenstats top`
 * decodes from an agent.  The agent is trusted-ish, but most of its strings
 * come from guests, so every member is type-checked and bounded; strings
 * are kept as they are (the model's), and whoever shows them escapes them.
 * The FIGUREs are read by their declarations, as they are written.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "export/private.h"

struct reader {
    char *err;
    size_t errlen;
    int r; /* the first error */
};

static int bad(struct reader *c, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(struct reader *c, const char *where, const char *key, const char *fmt, ...)
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

static int oom(struct reader *c)
{
    if (!c->r) {
        c->r = -ENOMEM;
        if (c->err && c->errlen)
            snprintf(c->err, c->errlen, "out of memory");
    }
    return c->r;
}

/* NULL when absent or null; *ret_present says which. */
static struct json_object *member(struct json_object *obj, const char *key, bool *ret_present)
{
    struct json_object *v = NULL;
    bool there = json_object_object_get_ex(obj, key, &v);

    if (ret_present)
        *ret_present = there;
    return there ? v : NULL;
}

/* A member that must be there: NULL and the reason when it is not. */
static struct json_object *required(struct reader *c, const char *where, struct json_object *obj, const char *key)
{
    bool there;
    struct json_object *v = member(obj, key, &there);

    if (!v)
        bad(c, where, key, there ? "must not be null" : "missing");
    return v;
}

static int get_uint(struct reader *c, const char *where, struct json_object *obj, const char *key, uint64_t max,
                    bool need, bool *ret_valid, uint64_t *ret_value)
{
    struct json_object *v = need ? required(c, where, obj, key) : member(obj, key, NULL);

    if (ret_valid)
        *ret_valid = false;
    if (!v)
        return c->r;
    if (!json_object_is_type(v, json_type_int))
        return bad(c, where, key, "expected an integer%s", need ? "" : " or null");
    /* json-c keeps integers above INT64_MAX as unsigned, negatives as signed */
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

/* A finite non-negative number (of seconds); null or absent leaves it not known. */
static int get_number(struct reader *c, const char *where, struct json_object *obj, const char *key,
                      bool *ret_valid, double *ret_value)
{
    struct json_object *v = member(obj, key, NULL);

    *ret_valid = false;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return bad(c, where, key, "expected a number or null");
    *ret_value = json_object_get_double(v);
    if (!isfinite(*ret_value) || *ret_value < 0)
        return bad(c, where, key, "expected a finite non-negative number");
    *ret_valid = true;
    return 0;
}

/* Seconds into nanoseconds: at most some 584 years. */
static int get_ns(struct reader *c, const char *where, struct json_object *obj, const char *key, bool *ret_valid,
                  uint64_t *ret_ns)
{
    double v = 0;

    if (get_number(c, where, obj, key, ret_valid, &v) || !*ret_valid)
        return c->r;
    if (v >= 1.8e10)
        return bad(c, where, key, "%g seconds is out of range", v);
    *ret_ns = (uint64_t)llround(v * 1e9);
    return 0;
}

/* A string member (NULL when null or absent, unless needed). */
static int get_string(struct reader *c, const char *where, struct json_object *obj, const char *key, bool need,
                      const char **ret_str)
{
    struct json_object *v = need ? required(c, where, obj, key) : member(obj, key, NULL);

    *ret_str = NULL;
    if (!v)
        return c->r;
    if (!json_object_is_type(v, json_type_string))
        return bad(c, where, key, "expected a string%s", need ? "" : " or null");
    *ret_str = json_object_get_string(v);
    return 0;
}

/*
 * A copy of string v as it came, but for U+0000, which the model's C
 * strings cannot hold: kept as C0 80 (as in Modified UTF-8), bytes no
 * valid UTF-8 has, so that a viewer can still show it.
 */
static char *keep_string(struct json_object *v)
{
    const char *s = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v), o = 0;
    char *out = malloc(2 * len + 1);

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i]) {
            out[o++] = s[i];
        } else {
            out[o++] = (char)0xc0;
            out[o++] = (char)0x80;
        }
    }
    out[o] = '\0';
    return out;
}

/* A string member kept (keep_string()), "" when null or absent. */
static int dup_string(struct reader *c, const char *where, struct json_object *obj, const char *key, bool need,
                      char **ret_str)
{
    const char *s;

    if (get_string(c, where, obj, key, need, &s))
        return c->r;
    *ret_str = s ? keep_string(member(obj, key, NULL)) : strdup("");
    return *ret_str ? 0 : oom(c);
}

/* An array member of at most max elements; null or absent is empty. */
static int get_array(struct reader *c, const char *where, struct json_object *obj, const char *key, size_t max,
                     struct json_object **ret_array, uint32_t *ret_len)
{
    struct json_object *v = member(obj, key, NULL);

    *ret_array = NULL;
    *ret_len = 0;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return bad(c, where, key, "expected an array");
    if (json_object_array_length(v) > max)
        return bad(c, where, key, "%zu elements is more than the %zu allowed", json_object_array_length(v), max);
    *ret_array = v;
    *ret_len = (uint32_t)json_object_array_length(v);
    return 0;
}

static int expect_object(struct reader *c, const char *where, struct json_object *v)
{
    if (!json_object_is_type(v, json_type_object))
        return bad(c, where, NULL, "expected an object");
    return 0;
}

/* n zeroed elements of size each, or NULL for none. */
static void *elements(struct reader *c, uint32_t n, size_t size)
{
    void *p = n ? calloc(n, size) : NULL;

    if (n && !p)
        oom(c);
    return p;
}

static void path_of(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* A name out of `names`, or `unknown`. */
static unsigned int name_index(const char *s, const char *(*name)(unsigned int), unsigned int n, unsigned int unknown)
{
    for (unsigned int i = 0; s && i < n; i++)
        if (name(i) && !strcmp(s, name(i)))
            return i;
    return unknown;
}

static const char *runstate_name(unsigned int i)
{
    return xenstats_vcpu_runstate_name(i);
}

static const char *set_state_name(unsigned int i)
{
    return xenstats_pv_set_state_name((enum xenstats_pv_set_state)i);
}

static const char *type_name(unsigned int i)
{
    return xenstats_pv_type_name(i);
}

static const char *source_name(unsigned int i)
{
    return export_vcpu_source_names[i];
}

static const char *domain_state_name(unsigned int i)
{
    return export_domain_state_names[i];
}

static const char *shutdown_name(unsigned int i)
{
    return export_shutdown_name(i);
}

/* Every FIGURE of `scope` in object o, as json_writer.c writes it; each may be null or absent. */
static int read_figures(struct reader *c, const char *where, struct json_object *o, enum export_figure_scope scope,
                        struct export_figs *f)
{
    for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
        const struct export_figure_decl *fd = &export_figure_decls[id];
        struct json_object *v;

        if (fd->scope != scope || !fd->json[0])
            continue;
        if (fd->json_form == EXPORT_JSON_BOOL) {
            if (!(v = member(o, fd->json, NULL)))
                continue;
            if (!json_object_is_type(v, json_type_boolean))
                return bad(c, where, fd->json, "expected true, false or null");
            export_figs_set(f, (enum export_figure_id)id, json_object_get_boolean(v));
        } else {
            bool valid = false;
            uint64_t u = 0;

            if (fd->ns ? get_ns(c, where, o, fd->json, &valid, &u)
                       : get_uint(c, where, o, fd->json, UINT64_MAX, false, &valid, &u))
                return c->r;
            if (valid)
                export_figs_set(f, (enum export_figure_id)id, u);
        }
    }
    return 0;
}

static int read_vcpu(struct reader *c, const char *where, struct json_object *o, struct export_vcpu *v)
{
    const char *state;

    if (expect_object(c, where, o) || get_string(c, where, o, "state", false, &state))
        return c->r;
    /* a state this build does not know is not known */
    v->state = (uint8_t)name_index(state, runstate_name, XENSTATS_VCPU_NR_RUNSTATES, 0xff);
    for (unsigned int s = 0; s < XENSTATS_VCPU_NR_RUNSTATES; s++)
        if (get_ns(c, where, o, xenstats_vcpu_runstate_name(s), &v->time_valid[s], &v->time_ns[s]))
            return c->r;
    return get_uint(c, where, o, "state_changes", UINT64_MAX, false, &v->changes_valid, &v->changes);
}

/* A statistic's value as it came, for a value its type cannot hold. */
static char *value_text(struct json_object *v)
{
    char buf[64];

    if (json_object_is_type(v, json_type_string))
        return keep_string(v);
    if (json_object_is_type(v, json_type_boolean))
        return strdup(json_object_get_boolean(v) ? "true" : "false");
    if (json_object_is_type(v, json_type_double))
        snprintf(buf, sizeof(buf), "%.6g", json_object_get_double(v));
    else if (json_object_get_int64(v) < 0)
        snprintf(buf, sizeof(buf), "%lld", (long long)json_object_get_int64(v));
    else
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)json_object_get_uint64(v));
    return strdup(buf);
}

static int read_stat(struct reader *c, const char *where, struct json_object *o, struct export_stat *st)
{
    struct json_object *v;
    const char *type;
    bool is_int, is_double, is_string;

    if (expect_object(c, where, o) || dup_string(c, where, o, "name", true, &st->name) ||
        get_string(c, where, o, "type", false, &type))
        return c->r;
    st->type = (uint8_t)name_index(type, type_name, XEN_PV_STATS_TYPE_ASCII + 1, 0);
    if (type && !st->type && !(st->type_text = keep_string(member(o, "type", NULL))))
        return oom(c);
    if (!(v = member(o, "value", NULL)))
        return 0;
    if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
        return bad(c, where, "value", "expected a number, a string or null");
    is_int = json_object_is_type(v, json_type_int);
    is_double = json_object_is_type(v, json_type_double);
    is_string = json_object_is_type(v, json_type_string);
    st->valid = true;
    if (st->type == XEN_PV_STATS_TYPE_S64 && is_int &&
        (json_object_get_int64(v) < 0 || json_object_get_uint64(v) <= INT64_MAX))
        st->v.s64 = json_object_get_int64(v);
    else if (st->type == XEN_PV_STATS_TYPE_U64 && is_int && json_object_get_int64(v) >= 0)
        st->v.u64 = json_object_get_uint64(v);
    else if (st->type == XEN_PV_STATS_TYPE_DOUBLE && (is_double || is_int))
        st->v.dbl = json_object_get_double(v);
    else if (st->type == XEN_PV_STATS_TYPE_DOUBLE && is_string) /* not a number: "NaN", "+Inf" */
        st->v.dbl = strtod(json_object_get_string(v), NULL);
    else
        st->valid = st->type == XEN_PV_STATS_TYPE_ASCII && is_string;
    /* anything but a number its type holds is kept as it came, for a viewer */
    if (is_string || !st->valid || (st->type == XEN_PV_STATS_TYPE_DOUBLE && !is_double)) {
        if (!(st->ascii = value_text(v)))
            return oom(c);
    }
    return 0;
}

static int read_set(struct reader *c, const char *where, struct json_object *o, struct export_set *set)
{
    struct json_object *stats;
    const char *state;
    bool valid;
    char sub[128];

    if (expect_object(c, where, o) || dup_string(c, where, o, "provider", true, &set->provider) ||
        dup_string(c, where, o, "set", true, &set->set) || get_string(c, where, o, "state", true, &state) ||
        dup_string(c, where, o, "reason", false, &set->reason) || read_figures(c, where, o, EXPORT_SCOPE_SET, &set->figs) ||
        get_number(c, where, o, "created", &valid, &set->created) ||
        get_array(c, where, o, "stats", EXPORT_READ_MAX_STATS, &stats, &set->nr_stats))
        return c->r;
    set->state = (enum xenstats_pv_set_state)name_index(state, set_state_name, XENSTATS_PV_NR_SET_STATES,
                                                          XENSTATS_PV_NR_SET_STATES);
    if (set->state == XENSTATS_PV_NR_SET_STATES && !(set->state_text = keep_string(member(o, "state", NULL))))
        return oom(c);
    set->stats = elements(c, set->nr_stats, sizeof(*set->stats));
    if (!set->stats)
        set->nr_stats = 0;
    for (uint32_t i = 0; i < set->nr_stats; i++) {
        path_of(sub, sizeof(sub), "%s.stats[%u]", where, i);
        if (read_stat(c, sub, json_object_array_get_idx(stats, i), &set->stats[i]))
            return c->r;
    }
    return c->r;
}

static int read_devices(struct reader *c, const char *where, struct json_object *o, const char *key,
                        enum export_figure_scope scope, struct export_device **ret_devs, uint32_t *ret_n)
{
    struct json_object *list;
    char sub[128];
    uint64_t devid;
    const char *name;

    if (get_array(c, where, o, key, EXPORT_READ_MAX_DEVICES, &list, ret_n))
        return c->r;
    if (!(*ret_devs = elements(c, *ret_n, sizeof(**ret_devs))))
        *ret_n = 0;
    for (uint32_t i = 0; i < *ret_n; i++) {
        struct json_object *dev = json_object_array_get_idx(list, i);
        struct export_device *d = &(*ret_devs)[i];

        path_of(sub, sizeof(sub), "%s.%s[%u]", where, key, i);
        devid = 0;
        if (expect_object(c, sub, dev) || get_string(c, sub, dev, "device", false, &name) ||
            get_uint(c, sub, dev, "devid", UINT32_MAX, false, NULL, &devid) ||
            read_figures(c, sub, dev, scope, &d->figs))
            return c->r;
        d->devid = (uint32_t)devid;
        snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
    }
    return c->r;
}

/* "state":[flags] and "shutdown_reason" into flags and shutdown_reason. */
static int read_domain_state(struct reader *c, const char *where, struct json_object *o, struct export_domain *d)
{
    struct json_object *state;
    const char *reason;
    uint32_t n;

    if (get_array(c, where, o, "state", 16, &state, &n) || get_string(c, where, o, "shutdown_reason", false, &reason))
        return c->r;
    d->flags_unknown = !state;
    for (uint32_t i = 0; i < n; i++) {
        struct json_object *v = json_object_array_get_idx(state, i);
        unsigned int f;

        if (!json_object_is_type(v, json_type_string))
            return bad(c, where, "state", "expected an array of strings");
        /* a flag this build does not know is left out */
        f = name_index(json_object_get_string(v), domain_state_name, EXPORT_NR_DOMAIN_STATES, 32);
        if (f < 32)
            d->flags |= 1u << f;
    }
    d->shutdown_reason = name_index(reason, shutdown_name, 6, 255);
    return 0;
}

static int read_domain_vcpus(struct reader *c, const char *where, struct json_object *o, struct export_domain *d)
{
    struct json_object *vcpus;
    const char *source, *error;
    uint32_t n;
    char sub[128];

    if (get_string(c, where, o, "vcpu_source", false, &source) ||
        get_string(c, where, o, "vcpu_error", false, &error) ||
        get_array(c, where, o, "vcpus", EXPORT_READ_MAX_VCPUS, &vcpus, &n))
        return c->r;
    d->vcpu_source = (enum xenstats_vcpu_source)name_index(source, source_name, 3, XENSTATS_VCPU_SOURCE_NONE);
    if (error && !(d->vcpu_error = keep_string(member(o, "vcpu_error", NULL))))
        return oom(c);
    /* the model has a vCPU's number as its place: vcpus[k] is vCPU k, and
     * nr_vcpus covers every vCPU listed */
    for (uint32_t i = 0; i < n; i++) {
        struct json_object *v = json_object_array_get_idx(vcpus, i);
        uint64_t k = 0;

        path_of(sub, sizeof(sub), "%s.vcpus[%u]", where, i);
        if (expect_object(c, sub, v) || get_uint(c, sub, v, "vcpu", EXPORT_READ_MAX_VCPUS - 1, true, NULL, &k))
            return c->r;
        if (k >= d->nr_vcpus)
            d->nr_vcpus = (uint32_t)k + 1;
    }
    if (!(d->vcpus = elements(c, d->nr_vcpus, sizeof(*d->vcpus))))
        return c->r;
    for (uint32_t i = 0; i < d->nr_vcpus; i++) {
        d->vcpus[i].state = 0xff;
        d->vcpus[i].absent = true;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct json_object *v = json_object_array_get_idx(vcpus, i);
        uint64_t k = 0;

        path_of(sub, sizeof(sub), "%s.vcpus[%u]", where, i);
        get_uint(c, sub, v, "vcpu", EXPORT_READ_MAX_VCPUS - 1, true, NULL, &k);
        if (!d->vcpus[k].absent)
            return bad(c, sub, NULL, "vCPU %llu listed twice", (unsigned long long)k);
        d->vcpus[k].absent = false;
        if (read_vcpu(c, sub, v, &d->vcpus[k]))
            return c->r;
    }
    return 0;
}

static int read_domain(struct reader *c, const char *where, struct json_object *o, struct export_domain *d)
{
    struct json_object *sets, *pv;
    const char *uuid;
    char *name = NULL, sub[128];
    uint64_t n = 0;
    int len;

    if (expect_object(c, where, o) || get_uint(c, where, o, "domid", UINT32_MAX, true, NULL, &n))
        return c->r;
    d->domid = (uint32_t)n;
    n = 0;
    if (dup_string(c, where, o, "name", false, &name) ||
        get_uint(c, where, o, "nr_vcpus", EXPORT_READ_MAX_VCPUS, false, NULL, &n) ||
        get_string(c, where, o, "uuid", false, &uuid)) {
        free(name);
        return c->r;
    }
    /* a name longer than the model holds is cut, visibly */
    len = snprintf(d->name, sizeof(d->name), "%s", name);
    free(name);
    if (len >= (int)sizeof(d->name))
        memcpy(d->name + sizeof(d->name) - 4, "...", 4);
    d->nr_vcpus = (uint32_t)n;
    for (int i = 0, k = 0; uuid && uuid[k] && i < 32; k++) {
        const char *hex = "0123456789abcdef", *h = strchr(hex, uuid[k]);

        if (uuid[k] != '-' && h && *h)
            d->uuid[i / 2] |= (uint8_t)((h - hex) << (i % 2 ? 0 : 4)), i++;
    }
    if (read_domain_state(c, where, o, d) || read_figures(c, where, o, EXPORT_SCOPE_DOMAIN, &d->figs) ||
        read_devices(c, where, o, "vifs", EXPORT_SCOPE_VIF, &d->vifs, &d->nr_vifs) ||
        read_devices(c, where, o, "vbds", EXPORT_SCOPE_VBD, &d->vbds, &d->nr_vbds) || read_domain_vcpus(c, where, o, d))
        return c->r;
    if ((pv = member(o, "pv_budget", NULL))) {
        path_of(sub, sizeof(sub), "%s.pv_budget", where);
        if (expect_object(c, sub, pv) || read_figures(c, sub, pv, EXPORT_SCOPE_PV, &d->pv))
            return c->r;
        d->pv_monitored = true;
    }
    if (get_array(c, where, o, "pv_sets", EXPORT_READ_MAX_SETS, &sets, &d->nr_sets))
        return c->r;
    if (!(d->sets = elements(c, d->nr_sets, sizeof(*d->sets))))
        d->nr_sets = 0;
    for (uint32_t i = 0; i < d->nr_sets; i++) {
        path_of(sub, sizeof(sub), "%s.pv_sets[%u]", where, i);
        if (read_set(c, sub, json_object_array_get_idx(sets, i), &d->sets[i]))
            return c->r;
    }
    return c->r;
}

static int read_host(struct reader *c, struct json_object *host, struct export_snapshot *s)
{
    struct json_object *pcpus;
    const char *backend, *version, *scheduler;
    uint64_t self = 0;
    char sub[32];

    if (expect_object(c, "host", host) || get_string(c, "host", host, "backend", false, &backend) ||
        get_uint(c, "host", host, "self_domid", UINT32_MAX, false, NULL, &self) ||
        get_string(c, "host", host, "xen_version", false, &version) ||
        get_string(c, "host", host, "scheduler", false, &scheduler) ||
        read_figures(c, "host", host, EXPORT_SCOPE_HOST, &s->host) ||
        get_array(c, "host", host, "pcpus", EXPORT_READ_MAX_VCPUS, &pcpus, &s->nr_pcpus))
        return c->r;
    if (backend && !(s->backend = s->backend_copy = strdup(backend)))
        return oom(c);
    s->self_domid = (uint32_t)self;
    snprintf(s->xen_version, sizeof(s->xen_version), "%s", version ? version : "");
    snprintf(s->scheduler, sizeof(s->scheduler), "%s", scheduler ? scheduler : "");
    if (!(s->pcpus = elements(c, s->nr_pcpus, sizeof(*s->pcpus))))
        s->nr_pcpus = 0;
    for (uint32_t i = 0; i < s->nr_pcpus; i++) {
        struct json_object *p = json_object_array_get_idx(pcpus, i);

        path_of(sub, sizeof(sub), "host.pcpus[%u]", i);
        if (expect_object(c, sub, p) || read_figures(c, sub, p, EXPORT_SCOPE_PCPU, &s->pcpus[i]))
            return c->r;
    }
    return c->r;
}

static int read_agent(struct reader *c, struct json_object *agent, struct export_snapshot *s)
{
    uint64_t total = 0, rejected = 0;

    if (expect_object(c, "agent", agent) || read_figures(c, "agent", agent, EXPORT_SCOPE_AGENT, &s->agent.figs) ||
        get_uint(c, "agent", agent, "pv_sets", UINT32_MAX, false, NULL, &total) ||
        get_uint(c, "agent", agent, "pv_sets_rejected", total, false, NULL, &rejected))
        return c->r;
    /* the JSON has the sets' total and the rejected ones, not every state */
    s->agent.sets_by_state[XENSTATS_PV_SET_REJECTED] = (uint32_t)rejected;
    s->agent.sets_by_state[XENSTATS_PV_SET_ACTIVE] = (uint32_t)(total - rejected);
    return 0;
}

static int cmp_domid(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* A domain listed twice is malformed. */
static int check_domids(struct reader *c, const struct export_snapshot *s)
{
    uint32_t *ids = elements(c, s->nr_domains, sizeof(*ids));
    char where[32];

    if (!ids)
        return c->r;
    for (uint32_t i = 0; i < s->nr_domains; i++)
        ids[i] = s->domains[i].domid;
    qsort(ids, s->nr_domains, sizeof(*ids), cmp_domid);
    for (uint32_t i = 1; i < s->nr_domains; i++) {
        if (ids[i] == ids[i - 1]) {
            path_of(where, sizeof(where), "domain %u", ids[i]);
            bad(c, where, NULL, "listed twice");
            break;
        }
    }
    free(ids);
    return c->r;
}

static int read_root(struct reader *c, struct json_object *root, struct export_snapshot *s)
{
    struct json_object *domains, *o;
    uint64_t version = 0;
    bool valid;
    char sub[32];

    if (expect_object(c, "snapshot", root) || get_uint(c, "", root, "version", UINT32_MAX, true, NULL, &version))
        return c->r;
    if (version != 1)
        return bad(c, "", "version", "%llu is not a version this xenstats reads (1)", (unsigned long long)version);
    if (get_uint(c, "", root, "monotonic_ns", UINT64_MAX, true, NULL, &s->monotonic_ns) ||
        get_number(c, "", root, "time", &valid, &s->wall) || get_number(c, "", root, "interval", &valid, &s->interval))
        return c->r;
    if ((o = member(root, "host", NULL)) && read_host(c, o, s))
        return c->r;
    if ((o = member(root, "agent", NULL)) && read_agent(c, o, s))
        return c->r;
    if (!required(c, "", root, "domains") ||
        get_array(c, "", root, "domains", EXPORT_READ_MAX_DOMAINS, &domains, &s->nr_domains))
        return c->r;
    if (!(s->domains = elements(c, s->nr_domains, sizeof(*s->domains))))
        s->nr_domains = 0;
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        path_of(sub, sizeof(sub), "domains[%u]", i);
        if (read_domain(c, sub, json_object_array_get_idx(domains, i), &s->domains[i]))
            return c->r;
    }
    return check_domids(c, s);
}

/*
 * The offset of the first raw control character inside a string, or -1.
 * RFC 8259 forbids them; json-c's strict mode lets them through up to 0.16
 * and rejects them from 0.17, so they are rejected here, before json-c,
 * for one answer on every version.
 */
static long raw_control_in_string(const char *text, size_t len)
{
    bool in_string = false, escaped = false;

    for (size_t i = 0; i < len; i++) {
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

/*
 * The code point of the valid UTF-8 sequence at s (at most n bytes), with
 * its length in *ret_len; -1 if it is not one (overlong, surrogate, out of
 * range or cut short).
 */
static long utf8_decode(const unsigned char *s, size_t n, size_t *ret_len)
{
    size_t want = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    static const long min[5] = {0, 0, 0x80, 0x800, 0x10000};
    long cp;

    if (!want || s[0] > 0xf4 || n < want)
        return -1;
    cp = s[0] & (0x7f >> want);
    for (size_t i = 1; i < want; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min[want] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    *ret_len = want;
    return cp;
}

/*
 * json-c's strict mode refuses every byte above 0x7f inside a string from
 * 0.17 on (Debian 13's 0.18; 0.16 lets them through), so a guest name in
 * UTF-8 would make the whole snapshot unreadable there.  Each valid UTF-8
 * sequence inside a string is therefore handed to json-c as its \u escape,
 * which every version decodes back to the same bytes; invalid bytes are
 * left as they are (the agent's writer never emits them).  Returns a copy
 * the caller frees, or NULL with *ret_len untouched when the text has no
 * such byte (or on allocation failure, when *ret_oom is set).
 */
static char *escape_utf8_in_strings(const char *text, size_t len, size_t *ret_len, bool *ret_oom)
{
    static const char hex[] = "0123456789abcdef";
    bool in_string = false, escaped = false;
    size_t i, o = 0;
    char *out;

    for (i = 0; i < len && (unsigned char)text[i] < 0x80; i++)
        ;
    if (i == len)
        return NULL;
    if (len > (SIZE_MAX - 1) / 6 || !(out = malloc(len * 6 + 1))) {
        *ret_oom = true;
        return NULL;
    }
    for (i = 0; i < len;) {
        const unsigned char *u = (const unsigned char *)text + i;
        size_t n;
        long cp;

        if (in_string && !escaped && u[0] >= 0x80 && (cp = utf8_decode(u, len - i, &n)) >= 0) {
            unsigned units[2] = {(unsigned)cp, 0};
            int k = 1;

            if (cp > 0xffff) {
                cp -= 0x10000;
                units[0] = 0xd800 + (unsigned)(cp >> 10);
                units[1] = 0xdc00 + (unsigned)(cp & 0x3ff);
                k = 2;
            }
            for (int j = 0; j < k; j++) {
                out[o++] = '\\';
                out[o++] = 'u';
                for (int shift = 12; shift >= 0; shift -= 4)
                    out[o++] = hex[(units[j] >> shift) & 15];
            }
            i += n;
            continue;
        }
        if (!in_string)
            in_string = u[0] == '"';
        else if (escaped)
            escaped = false;
        else if (u[0] == '\\')
            escaped = true;
        else if (u[0] == '"')
            in_string = false;
        out[o++] = (char)u[0];
        i++;
    }
    out[o] = '\0';
    *ret_len = o;
    return out;
}

/* Strict JSON of one value, nothing after it but white space. */
static struct json_object *parse(struct reader *c, const char *text, size_t len)
{
    struct json_tokener *tok;
    struct json_object *root = NULL;
    enum json_tokener_error jerr;
    char *copy = NULL;
    bool no_memory = false;
    long at;
    size_t end;

    if (len > INT32_MAX) /* json_tokener_parse_ex takes an int */
        return bad(c, "snapshot", NULL, "too large"), NULL;
    if ((at = raw_control_in_string(text, len)) >= 0)
        return bad(c, "snapshot", NULL, "not JSON: raw control character in a string at byte %ld", at), NULL;
    if ((copy = escape_utf8_in_strings(text, len, &len, &no_memory)))
        text = copy;
    else if (no_memory)
        return oom(c), NULL;
    if (len > INT32_MAX || !(tok = json_tokener_new())) {
        free(copy);
        return len > INT32_MAX ? (bad(c, "snapshot", NULL, "too large"), NULL) : (oom(c), NULL);
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (!root && jerr == json_tokener_continue)
        bad(c, "snapshot", NULL, "not JSON: truncated");
    else if (!root || jerr != json_tokener_success)
        bad(c, "snapshot", NULL, "not JSON: %s at byte %zu",
            jerr == json_tokener_success ? "null document" : json_tokener_error_desc(jerr), end);
    while (!c->r && end < len && strchr(" \t\r\n", text[end]) && text[end])
        end++;
    if (!c->r && end < len)
        bad(c, "snapshot", NULL, "not JSON: trailing data at byte %zu", end);
    json_tokener_free(tok);
    free(copy);
    if (c->r) {
        json_object_put(root);
        return NULL;
    }
    return root;
}

int export_snapshot_read_json(const char *text, size_t len, struct export_snapshot **ret_snapshot, char *err, size_t errlen)
{
    struct reader c = {.err = err, .errlen = errlen};
    struct json_object *root = parse(&c, text, len);
    struct export_snapshot *s;

    if (!root)
        return c.r;
    s = export_snapshot_new();
    if (!s)
        oom(&c);
    else if (read_root(&c, root, s) == 0)
        *ret_snapshot = s;
    else
        export_snapshot_unref(s);
    json_object_put(root);
    return c.r;
}
