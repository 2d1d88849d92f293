/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's view of the host at one sampling round, and its renderings:
 * Prometheus text 0.0.4, OpenMetrics 1.0 and the JSON of docs/agent-api.md.
 * A snapshot is immutable once built and reference-counted, so HTTP
 * threads render and serve it while the sampler builds the next one.
 */
#ifndef XENSTATS_EXPORT_H
#define XENSTATS_EXPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xenstats/pv.h>
#include <xenstats/vcpu.h>

enum export_metric_kind { EXPORT_COUNTER, EXPORT_GAUGE, EXPORT_INFO };

/* What a FIGURE of metrics.def is one number of. */
enum export_figure_scope { EXPORT_SCOPE_AGENT, EXPORT_SCOPE_HOST, EXPORT_SCOPE_PCPU, EXPORT_SCOPE_DOMAIN, EXPORT_SCOPE_VIF, EXPORT_SCOPE_VBD, EXPORT_SCOPE_PV, EXPORT_SCOPE_SET };

/* How a figure's JSON member is written (FIGURE_AS). */
enum export_json_form { EXPORT_JSON_NUMBER, EXPORT_JSON_BOOL, EXPORT_JSON_DOUBLE };

enum export_metric_id {
#define METRIC(id, name, kind, unit, labels, help) EXPORT_METRIC_##id,
#define FIGURE_AS(id, scope, name, kind, unit, json, form, top, help) EXPORT_METRIC_##id,
#include "metrics.def"
#undef FIGURE_AS
#undef METRIC
    EXPORT_METRIC_COUNT
};

enum export_figure_id {
#define METRIC(id, name, kind, unit, labels, help)
#define FIGURE_AS(id, scope, name, kind, unit, json, form, top, help) EXPORT_FIG_##id,
#include "metrics.def"
#undef FIGURE_AS
#undef METRIC
    EXPORT_FIG_COUNT
};

struct export_metric_decl {
    const char *name; /* family name, without _total / _info; "" for a JSON member only */
    enum export_metric_kind kind;
    const char *unit;
    const char *labels;
    const char *help;
};

extern const struct export_metric_decl export_metric_decls[EXPORT_METRIC_COUNT];

struct export_figure_decl {
    enum export_metric_id metric;
    enum export_figure_scope scope;
    const char *json; /* key in the scope's JSON object; "" when not in the JSON */
    enum export_json_form json_form;
    const char *top; /* top's column header; "" when not a column */
    bool ns;         /* kept in ns, rendered in seconds */
};

extern const struct export_figure_decl export_figure_decls[EXPORT_FIG_COUNT];

/*
 * The figures of one object; a figure not known is absent from every
 * output.  An object holds only its scope's figures: each figure's slot is
 * its rank among its scope's (export_figure_slot), so a thousand domains,
 * their devices and their sets do not each carry room for every figure.
 */
#define EXPORT_FIGS_MAX 24 /* the most figures of one scope; decls.c checks it */
extern uint8_t export_figure_slot[EXPORT_FIG_COUNT];

struct export_figs {
    uint64_t v[EXPORT_FIGS_MAX];
    bool valid[EXPORT_FIGS_MAX];
};

static inline void export_figs_set(struct export_figs *f, enum export_figure_id id, uint64_t v)
{
    f->v[export_figure_slot[id]] = v;
    f->valid[export_figure_slot[id]] = true;
}

static inline void export_figs_forget(struct export_figs *f, enum export_figure_id id)
{
    f->valid[export_figure_slot[id]] = false;
}

static inline bool export_figs_known(const struct export_figs *f, enum export_figure_id id)
{
    return f->valid[export_figure_slot[id]];
}

/* The value of a figure of the object's scope (0 when not known). */
static inline uint64_t export_figs_get(const struct export_figs *f, enum export_figure_id id)
{
    return f->v[export_figure_slot[id]];
}

/* A vCPU statistics source's name as the JSON spells it ("resource"...). */
const char *export_vcpu_source_name(enum xenstats_vcpu_source source);

/* A UUID as 8-4-4-4-12 lower-case hex digits. */
void export_uuid_format(const uint8_t uuid[16], char out[37]);

/* The metrics reference (docs/metrics.md) as Markdown. */
void export_metrics_reference(FILE *out);

struct export_vcpu {
    uint8_t state;        /* a runstate, or 0xff unknown */
    bool time_valid[XENSTATS_VCPU_NR_RUNSTATES];
    uint64_t time_ns[XENSTATS_VCPU_NR_RUNSTATES];  /* staleness rule applied */
    bool changes_valid;
    uint64_t changes;
    /* read from JSON (export_snapshot_read_json): not in the list, a place
     * kept so that vcpus[k] is vCPU k; never set by a collector */
    bool absent;
};

struct export_stat {
    char *name;
    uint8_t type;
    bool valid;
    union {
        int64_t s64;
        uint64_t u64;
        double dbl;
    } v;
    /* an ascii value; read from JSON, also the value as it came when the
     * type cannot hold it ("NaN", a string, a number of an unknown type) */
    char *ascii;
    char *type_text; /* read from JSON: a type this build does not know, as it came */
};

struct export_set {
    char *provider, *set, *reason;
    enum xenstats_pv_set_state state;
    char *state_text; /* read from JSON: a state this build does not know, as it came */
    struct export_figs figs; /* EXPORT_SCOPE_SET */
    double created; /* Unix seconds the set was attached (its counters start), 0 if not live */
    uint32_t nr_stats;
    struct export_stat *stats;
    /* when set, every stats[].name and .ascii points into it: one
     * allocation per set instead of one per string (freed once) */
    char *strings;
};

/* A vif or a vbd of a domain. */
struct export_device {
    uint32_t devid;
    char name[XENSTATS_DEVICE_NAME_MAX];
    struct export_figs figs;
};

struct export_domain {
    uint32_t domid;
    char name[XENSTATS_DOMAIN_NAME_MAX];
    uint8_t uuid[16];
    uint32_t flags;           /* XENSTATS_DOMAIN_* */
    bool flags_unknown;       /* read from JSON without "state": flags say nothing */
    uint32_t shutdown_reason; /* with XENSTATS_DOMAIN_SHUTDOWN */
    struct export_figs figs;
    uint32_t nr_vifs, nr_vbds;
    struct export_device *vifs, *vbds;
    uint32_t nr_vcpus;
    enum xenstats_vcpu_source vcpu_source;
    char *vcpu_error;
    struct export_vcpu *vcpus;
    uint32_t nr_sets;
    struct export_set *sets;
    /* what the domain cost the PV stats monitor (EXPORT_SCOPE_PV), when it watches it */
    bool pv_monitored;
    struct export_figs pv;
};

/* The PV stats monitor's figures of a domain it watches (snap_domain.pv). */
void export_domain_set_pv(struct export_domain *d, const struct xenstats_pv_domain_info *info);

struct export_agent {
    /* EXPORT_SCOPE_AGENT; every one known (0) in a new snapshot; EXPORT_FIG_AGENT_DOMAINS
     * is the snapshot's nr_domains whatever it says */
    struct export_figs figs;
    uint32_t sets_by_state[XENSTATS_PV_NR_SET_STATES];
};

struct export_snapshot {
    pthread_mutex_t lock; /* refs and the cached renderings */
    unsigned int refs;
    double wall;           /* Unix seconds */
    uint64_t monotonic_ns;
    double interval;
    const char *backend;
    char *backend_copy; /* what backend points to in a snapshot read from JSON */
    uint32_t self_domid;
    /* the hypervisor; xen_version empty when the backend cannot tell */
    char xen_version[48], scheduler[32];
    struct export_figs host;
    uint32_t nr_pcpus;
    struct export_figs *pcpus;
    struct export_agent agent;
    uint32_t nr_domains;
    struct export_domain *domains;
    /* renderings, made on first use */
    char *text[3];
    size_t text_len[3];
    /* the renderings passed through the caller's encoder (gzip), on first use */
    char *encoded[3];
    size_t encoded_len[3];
    size_t model_memory; /* export_snapshot_memory()'s model part, on first use; 0 before */
};

enum export_format { EXPORT_FORMAT_PROMETHEUS = 0, EXPORT_FORMAT_OPENMETRICS = 1, EXPORT_FORMAT_JSON = 2 };

struct export_snapshot *export_snapshot_new(void);
struct export_snapshot *export_snapshot_ref(struct export_snapshot *s);
void export_snapshot_unref(struct export_snapshot *s); /* accepts NULL */

/*
 * The bytes s holds on the heap: the model and the renderings kept with it
 * so far (as the allocator counts them, malloc_usable_size()).  What a
 * response pins by holding a reference, for the agent's cap on it.
 */
size_t export_snapshot_memory(struct export_snapshot *s);

/*
 * The rendering of s in `format`, made once and kept with the snapshot:
 * valid while the caller holds a reference.  Counts such as scrapes are as
 * of the snapshot.  Returns NULL and errno on allocation failure.
 */
const char *export_snapshot_render(struct export_snapshot *s, enum export_format format, size_t *ret_len);

/*
 * Where a rendering goes in pieces (export_snapshot_render_to()): 0 to go on, or
 * a negative errno, which ends the rendering with that error.
 */
typedef int export_render_sink(void *ctx, const char *data, size_t len);

/* The pieces a sink is given are about this long (longer only for one long line). */
#define EXPORT_RENDER_PIECE 65536

/*
 * Render s in `format` to sink, in pieces, holding at most about one
 * piece: the text of a thousand domains is some 17 MB, which a sender or
 * a compressor need never hold whole.  0, -ENOMEM, or the sink's error.
 * s is only read: any number of threads may render one snapshot at once.
 */
int export_snapshot_render_to(const struct export_snapshot *s, enum export_format format, export_render_sink *sink, void *ctx);

/*
 * An encoding of a rendering (the agent's gzip; the library has no
 * compressor of its own), which renders s itself through
 * export_snapshot_render_to(): returns 0 with *ret_data a malloc'd buffer the
 * snapshot then owns, or a negative errno.
 */
typedef int export_snapshot_encoder(const struct export_snapshot *s, enum export_format format, char **ret_data, size_t *ret_len);

/*
 * The rendering of s in `format` passed through `encode`, made once and
 * kept with the snapshot (without the text it was made of), so a scraper
 * asking for gzip costs one compression per snapshot and format, however
 * many scrape it.  Every caller of one snapshot passes the same encoder.
 * Valid while the caller holds a reference; NULL and errno when rendering
 * or encoding fails.
 */
const char *export_snapshot_render_encoded(struct export_snapshot *s, enum export_format format, export_snapshot_encoder *encode,
                                    size_t *ret_len);

/*
 * The encoding export_snapshot_render_encoded() made of s in `format`, if
 * it made one: never renders.  NULL when none is made yet (or it failed).
 */
const char *export_snapshot_encoded(struct export_snapshot *s, enum export_format format, size_t *ret_len);

/*
 * Rendering into a caller's growable buffer (for benchmarks and tests),
 * or, with a sink, in pieces to it: the buffer is then given to the sink
 * whenever it fills (sink_error keeps the sink's error).
 */
struct export_strbuf {
    char *data;
    size_t len, cap;
    bool failed;
    export_render_sink *sink;
    void *sink_ctx;
    int sink_error;
};
void export_strbuf_free(struct export_strbuf *b);
int export_render_prometheus(const struct export_snapshot *s, bool openmetrics, struct export_strbuf *out);
int export_render_json(const struct export_snapshot *s, struct export_strbuf *out);

/*
 * Escape a label value as the text formats want it (\\, \", \n); each byte
 * of an invalid UTF-8 sequence becomes U+FFFD.
 */
void export_strbuf_label_value(struct export_strbuf *b, const char *s);
/* A JSON string, quoted: UTF-8 unchanged, invalid bytes as U+FFFD. */
void export_strbuf_json_string(struct export_strbuf *b, const char *s);

/* The most a JSON snapshot may hold for export_snapshot_read_json(); more is malformed. */
#define EXPORT_READ_MAX_DOMAINS 65536
#define EXPORT_READ_MAX_VCPUS 16384
#define EXPORT_READ_MAX_DEVICES 65536
#define EXPORT_READ_MAX_SETS 4096
#define EXPORT_READ_MAX_STATS 65536

/*
 * Read the JSON of export_render_json() (docs/agent-api.md) back into a
 * snapshot: the model `xenstats top` shows an agent's samples in.  Every
 * member is type-checked and bounded; members null or absent are not
 * known; strings are kept as they come (escape them before a terminal
 * sees them), a domain's name cut to the model's size with "..." at the
 * end; a vCPU state or a flag this build does not know is not known, a
 * set state or a statistic's type is kept as text (state_text,
 * type_text), and a statistic's value its type cannot hold as text
 * (ascii).  vcpus[k] is vCPU k: nr_vcpus grows to cover every vCPU
 * listed, the others are absent.  A domain or a vCPU listed twice is
 * malformed.  The JSON
 * has the PV sets' total and the rejected ones only: the others are
 * counted as active.  Returns 0 and a snapshot the caller releases with
 * export_snapshot_unref(), or -EBADMSG with a reason such as
 * "domains[2].vcpus[0].running: expected a number or null" in err, or
 * -ENOMEM.  *ret_snapshot is untouched on failure.
 */
int export_snapshot_read_json(const char *text, size_t len, struct export_snapshot **ret_snapshot, char *err, size_t errlen);

#endif
