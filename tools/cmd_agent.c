/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats agent: the dom0 daemon.  Tracks domains, maps their vCPU
 * statistics, plays the toolstack's part of the PV stats protocol (each
 * domain's `stats` node) and monitors every provider, samples everything
 * on an interval from one event loop, and serves the latest sample over
 * HTTP (libmicrohttpd, its own thread) as Prometheus/OpenMetrics text and
 * JSON.  Samples are immutable snapshots handed to HTTP threads by
 * reference, so scrapes never wait for sampling and vice versa.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include <xenstats/pv.h>
#include <xenstats/vcpu.h>

#include "export/export.h"
#include "http_guard.h"
#include "tool.h"
#include "util/util.h"
#include "vcpu_fallback.h"

#define CMD "agent"
#define DEFAULT_PORT 9740
#define VCPU_RETRY_ROUNDS 10 /* retry a domain's region every N rounds */

struct tracked {
    struct tracked *next;
    struct xenstats_domain_info info;
    struct xenstats_vcpu_map *map;
    char *vcpu_error;
    uint32_t retry_in;
    bool pv;   /* added to the monitor */
    bool seen; /* in the last domain list */
};

struct agent {
    struct xenstats_host *host;
    struct xenstats_monitor *monitor;
    struct tracked *domains;
    struct MHD_Daemon *httpd;
    struct http_guard *guard; /* the HTTP thread's only */
    uint64_t http_refused, http_evicted; /* atomic: HTTP thread */
    uint64_t interval_ns;
    bool toolstack;
    int epfd, tfd, sfd;

    /* the round in progress */
    bool collecting;
    uint64_t round_start, round_deadline;

    uint64_t samples, errors;
    uint64_t scrapes; /* atomic: HTTP threads */

    pthread_mutex_t lock; /* current */
    struct snapshot *current;
    uint64_t last_complete_ns;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s agent [OPTIONS]\n\n"
            "Monitor every domain of this host (vCPU statistics and PV stats) and serve the\n"
            "samples over HTTP: /metrics (Prometheus, OpenMetrics), /api/v1/snapshot (JSON),\n"
            "/healthz.\n\n"
            "  -l, --listen ADDR:PORT    where to serve (default 127.0.0.1:%d; [::1]:PORT for IPv6)\n"
            "  -i, --interval DURATION   sampling interval (default 1s)\n"
            "  -t, --timeout DURATION    time a PV stats provider has to answer (default 500ms)\n"
            "      --no-toolstack        do not create domains' `stats` nodes (another\n"
            "                            toolstack component does)\n"
            "      --list-metrics        print the metrics reference (Markdown) and exit\n"
            "  -h, --help                show this help\n\n"
            "Logs go to standard error; -v for more.  SIGINT/SIGTERM stop it cleanly.\n",
            PROG, DEFAULT_PORT);
}

/* ---- domains ----------------------------------------------------------------- */

static void tracked_free(struct agent *a, struct tracked *t)
{
    if (t->pv)
        xenstats_monitor_remove_domain(a->monitor, t->info.domid);
    xenstats_vcpu_map_close(t->map);
    free(t->vcpu_error);
    free(t);
}

static void try_map(struct agent *a, struct tracked *t)
{
    if (t->map || t->retry_in-- > 0)
        return;
    t->map = tool_vcpu_map_open(a->host, t->info.domid);
    free(t->vcpu_error);
    t->vcpu_error = NULL;
    if (t->map)
        return;
    if ((errno == EPERM || errno == EACCES) && t->info.domid == xenstats_host_self_domid(a->host))
        t->vcpu_error = strdup("a domain cannot map its own statistics");
    else
        t->vcpu_error = strdup(tool_vcpu_open_error(-errno));
    t->retry_in = VCPU_RETRY_ROUNDS;
}

static void refresh_domains(struct agent *a)
{
    struct xenstats_domain_info *list = NULL;
    struct tracked *t, **pp;
    size_t n = 0, i;
    int r;

    r = xenstats_host_list_domains(a->host, &list, &n);
    if (r < 0) {
        log_error("cannot list domains: %s", xenstats_strerror(r));
        a->errors++;
        return;
    }
    for (t = a->domains; t; t = t->next)
        t->seen = false;
    for (i = 0; i < n; i++) {
        for (t = a->domains; t && t->info.domid != list[i].domid; t = t->next)
            ;
        if (!t) {
            t = calloc(1, sizeof(*t));
            if (!t)
                continue;
            t->info = list[i];
            /* keep the list sorted by domid */
            for (pp = &a->domains; *pp && (*pp)->info.domid < t->info.domid; pp = &(*pp)->next)
                ;
            t->next = *pp;
            *pp = t;
            log_info("tracking domain %u (%s)", t->info.domid, t->info.name);
            if (a->monitor && t->info.domid != xenstats_host_self_domid(a->host)) {
                r = xenstats_monitor_add_domain(a->monitor, t->info.domid);
                if (r < 0) {
                    log_warning("domain %u: PV stats not monitored: %s", t->info.domid, strerror(-r));
                    a->errors++;
                } else {
                    t->pv = true;
                }
            }
        }
        t->info = list[i];
        t->seen = true;
        try_map(a, t);
    }
    for (pp = &a->domains; (t = *pp);) {
        if (!t->seen) {
            *pp = t->next;
            log_info("domain %u (%s) is gone", t->info.domid, t->info.name);
            tracked_free(a, t);
            continue;
        }
        pp = &t->next;
    }
    free(list);
}

/* ---- snapshots -------------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static void fill_vcpus(struct agent *a, struct tracked *t, struct snap_domain *d)
{
    uint32_t n = t->map ? xenstats_vcpu_map_nr_vcpus(t->map) : 0, i;
    struct xenstats_vcpu_sample *samples;
    uint64_t now = 0;

    d->vcpu_source = VCPU_SOURCE_NONE;
    d->vcpu_error = t->vcpu_error ? strdup(t->vcpu_error) : NULL;
    if (!n)
        return;
    samples = calloc(n, sizeof(*samples));
    d->vcpus = calloc(n, sizeof(*d->vcpus));
    if (!samples || !d->vcpus || xenstats_vcpu_map_snapshot_all(t->map, samples, n) < 0 ||
        xenstats_vcpu_map_clock(t->map, &now) < 0) {
        free(d->vcpu_error);
        d->vcpu_error = strdup("cannot read the vCPU statistics");
        free(d->vcpus);
        d->vcpus = NULL;
        free(samples);
        a->errors++;
        return;
    }
    d->vcpu_source = xenstats_vcpu_map_source(t->map) == XENSTATS_VCPU_SOURCE_HYPERCALL ? VCPU_SOURCE_HYPERCALL
                                                                                         : VCPU_SOURCE_RESOURCE;
    d->nr_vcpus = n;
    for (i = 0; i < n; i++) {
        struct snap_vcpu *v = &d->vcpus[i];
        uint64_t times[4];

        xenstats_vcpu_sample_project(&samples[i], now, times);
        for (int s = 0; s < 4; s++) {
            v->time_valid[s] = xenstats_vcpu_sample_status(&samples[i], (unsigned int)s) == XENSTATS_COUNTER_VALID;
            v->time_ns[s] = times[s];
        }
        v->state = xenstats_vcpu_sample_status(&samples[i], XEN_VCPU_STATS_STATE) == XENSTATS_COUNTER_VALID &&
                           samples[i].raw[XEN_VCPU_STATS_STATE] <= 3
                       ? (uint8_t)samples[i].raw[XEN_VCPU_STATS_STATE]
                       : 0xff;
        v->changes_valid =
            xenstats_vcpu_sample_status(&samples[i], XEN_VCPU_STATS_STATE_CHANGES) == XENSTATS_COUNTER_VALID;
        v->changes = xenstats_vcpu_sample_value(&samples[i], XEN_VCPU_STATS_STATE_CHANGES);
    }
    free(samples);
}

static int compare_sets(const void *x, const void *y)
{
    const struct snap_set *a = x, *b = y;
    int c = strcmp(a->provider, b->provider);

    return c ? c : strcmp(a->set, b->set);
}

static struct snap_domain *find_domain(struct snapshot *s, uint32_t domid)
{
    uint32_t lo = 0, hi = s->nr_domains;

    /* the snapshot's domains are sorted by domid */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (s->domains[mid].domid == domid)
            return &s->domains[mid];
        if (s->domains[mid].domid < domid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void fill_set(struct snap_set *out, const struct xenstats_pv_set *set, const struct xenstats_pv_set_info *info)
{
    out->provider = dup_or_empty(info->provider);
    out->set = dup_or_empty(info->set);
    out->reason = dup_or_empty(info->reason);
    out->state = info->state;
    out->samples = info->samples;
    out->timeouts = info->timeouts;
    out->errors = info->errors;
    out->latency_ns = info->last_latency_ns;
    out->stats = info->nr_stats ? calloc(info->nr_stats, sizeof(*out->stats)) : NULL;
    if (!out->stats)
        return;
    {
        struct xenstats_pv_stat st;
        size_t total = 0, used = 0;
        uint32_t k;

        /* names and texts of the set in one block: one allocation per set */
        for (k = 0; k < info->nr_stats; k++) {
            if (xenstats_pv_set_get_stat(set, k, &st) < 0)
                break;
            total += strlen(st.name) + 1;
            /*
             * Not `valid ? strlen(ascii) : 0`: gcc 14 -O2 (Debian 13) turns
             * it into an unconditional strlen() masked by valid, which read
             * NULL for an invalid text before value.ascii became "" then.
             */
            if (st.type == XENSTATS_PV_ASCII && st.valid)
                total += strlen(st.value.ascii) + 1;
            else if (st.type == XENSTATS_PV_ASCII)
                total += 1;
        }
        out->strings = malloc(total ? total : 1);
        if (!out->strings) {
            free(out->stats);
            out->stats = NULL;
            return;
        }
        for (k = 0; k < info->nr_stats; k++) {
            struct snap_stat *o = &out->stats[k];
            size_t len;

            if (xenstats_pv_set_get_stat(set, k, &st) < 0)
                break;
            len = strlen(st.name) + 1;
            if (used + len > total)
                break; /* the set changed between the two passes: stop here */
            o->name = memcpy(out->strings + used, st.name, len);
            used += len;
            o->type = (uint8_t)st.type;
            o->valid = st.valid;
            if (st.type == XENSTATS_PV_ASCII) {
                const char *text = st.valid ? st.value.ascii : "";

                len = strlen(text) + 1;
                if (used + len > total)
                    break;
                o->ascii = memcpy(out->strings + used, text, len);
                used += len;
            } else {
                o->v.u64 = st.value.u64; /* the union's bits, whatever the type */
            }
        }
        out->nr_stats = k;
    }
}

/* Every monitored set into its domain: one pass to count, one to fill. */
static void fill_sets(struct agent *a, struct snapshot *s)
{
    size_t n = a->monitor ? xenstats_monitor_nr_sets(a->monitor) : 0, i;
    struct xenstats_pv_set_info info;
    struct snap_domain *d;

    for (i = 0; i < n; i++) {
        xenstats_pv_set_get_info(xenstats_monitor_set(a->monitor, i), &info);
        d = find_domain(s, info.domid);
        if (d)
            d->nr_sets++; /* capacity for now */
    }
    for (i = 0; i < s->nr_domains; i++) {
        d = &s->domains[i];
        d->sets = d->nr_sets ? calloc(d->nr_sets, sizeof(*d->sets)) : NULL;
        d->nr_sets = 0;
    }
    for (i = 0; i < n; i++) {
        const struct xenstats_pv_set *set = xenstats_monitor_set(a->monitor, i);

        xenstats_pv_set_get_info(set, &info);
        d = find_domain(s, info.domid);
        if (!d || !d->sets)
            continue;
        fill_set(&d->sets[d->nr_sets++], set, &info);
        s->agent.sets_by_state[info.state < 6 ? info.state : 0]++;
    }
    for (i = 0; i < s->nr_domains; i++)
        if (s->domains[i].nr_sets > 1)
            qsort(s->domains[i].sets, s->domains[i].nr_sets, sizeof(struct snap_set), compare_sets);
}

static void count_providers(struct snapshot *s)
{
    for (uint32_t i = 0; i < s->nr_domains; i++) {
        const struct snap_domain *d = &s->domains[i];

        /* sets are sorted by provider: count the changes */
        for (uint32_t j = 0; j < d->nr_sets; j++)
            if (!j || strcmp(d->sets[j].provider, d->sets[j - 1].provider))
                s->agent.providers++;
    }
}

static void publish_snapshot(struct agent *a)
{
    struct snapshot *s = snapshot_new(), *old;
    struct timespec wall;
    struct tracked *t;
    uint32_t n = 0, i = 0;
    uint64_t now = monotonic_ns();

    if (!s) {
        a->errors++;
        return;
    }
    for (t = a->domains; t; t = t->next)
        n++;
    s->domains = calloc(n ? n : 1, sizeof(*s->domains));
    if (!s->domains) {
        snapshot_unref(s);
        a->errors++;
        return;
    }
    clock_gettime(CLOCK_REALTIME, &wall);
    s->wall = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    s->monotonic_ns = now;
    s->interval = (double)a->interval_ns / 1e9;
    s->backend = xenstats_host_backend(a->host) == XENSTATS_BACKEND_XEN ? "xen" : "emu";
    s->self_domid = xenstats_host_self_domid(a->host);
    for (t = a->domains; t; t = t->next, i++) {
        struct snap_domain *d = &s->domains[i];

        d->domid = t->info.domid;
        snprintf(d->name, sizeof(d->name), "%s", t->info.name);
        d->nr_vcpus = t->info.nr_vcpus;
        fill_vcpus(a, t, d);
        if (t->pv) {
            struct xenstats_pv_domain_info pi;

            if (xenstats_monitor_domain_info(a->monitor, t->info.domid, &pi) == 0) {
                d->pv_monitored = true;
                d->pv_throttled = pi.throttled;
                d->pv_sets_rejected = pi.sets_rejected;
                d->pv_sets_ignored = pi.sets_ignored;
                d->pv_rescans = pi.rescans;
                d->pv_xenstore_reads = pi.xenstore_reads;
                d->pv_budget_exceeded = pi.budget_exceeded;
                d->pv_log_suppressed = pi.log_suppressed;
            }
        }
    }
    s->nr_domains = n;
    fill_sets(a, s);
    count_providers(s);
    a->samples++;
    s->agent.samples = a->samples;
    s->agent.errors = a->errors;
    s->agent.scrapes = __atomic_load_n(&a->scrapes, __ATOMIC_RELAXED);
    s->agent.http_refused = __atomic_load_n(&a->http_refused, __ATOMIC_RELAXED);
    s->agent.http_evicted = __atomic_load_n(&a->http_evicted, __ATOMIC_RELAXED);
    s->agent.sample_duration = (double)(now - a->round_start) / 1e9;

    pthread_mutex_lock(&a->lock);
    old = a->current;
    a->current = s;
    a->last_complete_ns = now;
    pthread_mutex_unlock(&a->lock);
    snapshot_unref(old);
}

/* ---- the round ---------------------------------------------------------------- */

static void start_round(struct agent *a)
{
    a->round_start = monotonic_ns();
    refresh_domains(a);
    if (a->monitor)
        xenstats_monitor_request_all(a->monitor);
    a->collecting = true;
    a->round_deadline = a->round_start + a->interval_ns / 2;
}

static void maybe_finish_round(struct agent *a)
{
    if (!a->collecting)
        return;
    /* Every answer in, or the slowest provider timed out. */
    if (a->monitor && xenstats_monitor_pending(a->monitor) && monotonic_ns() < a->round_deadline)
        return;
    a->collecting = false;
    publish_snapshot(a);
}

/* ---- HTTP ------------------------------------------------------------------------ */

static void release_snapshot(void *cls)
{
    snapshot_unref(cls);
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static bool wants_openmetrics(struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");

    return accept && strstr(accept, "application/openmetrics-text");
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_size,
                                      void **req_cls)
{
    static int first_call_marker;
    struct agent *a = cls;
    enum render_format format;
    const char *type, *text;
    struct MHD_Response *r;
    struct snapshot *s;
    enum MHD_Result ret;
    size_t len;

    (void)version;
    (void)upload_data;
    if (!*req_cls) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        /* Headers only so far: decide once the request is complete. */
        *req_cls = &first_call_marker;
        http_guard_busy(ci ? ci->socket_context : NULL, monotonic_ns());
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* bodies are ignored (and refused below) */
        return MHD_YES;
    }
    __atomic_add_fetch(&a->scrapes, 1, __ATOMIC_RELAXED);
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return respond_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    if (!strcmp(url, "/")) {
        return respond_text(c, MHD_HTTP_OK,
                            "xenstats agent\n/metrics          Prometheus / OpenMetrics\n"
                            "/api/v1/snapshot  JSON\n/healthz          health\n");
    }
    if (!strcmp(url, "/healthz")) {
        uint64_t last;

        pthread_mutex_lock(&a->lock);
        last = a->last_complete_ns;
        pthread_mutex_unlock(&a->lock);
        if (last && monotonic_ns() - last <= 3 * a->interval_ns + 1000000000ULL)
            return respond_text(c, MHD_HTTP_OK, "ok\n");
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, last ? "stalled\n" : "starting\n");
    }
    if (!strcmp(url, "/metrics")) {
        format = wants_openmetrics(c) ? RENDER_OPENMETRICS : RENDER_PROMETHEUS;
        type = format == RENDER_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                            : "text/plain; version=0.0.4; charset=utf-8";
    } else if (!strcmp(url, "/api/v1/snapshot")) {
        format = RENDER_JSON;
        type = "application/json";
    } else {
        return respond_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics, /api/v1/snapshot, /healthz\n");
    }

    pthread_mutex_lock(&a->lock);
    s = a->current ? snapshot_ref(a->current) : NULL;
    pthread_mutex_unlock(&a->lock);
    if (!s)
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
    text = snapshot_render(s, format, &len);
    if (!text) {
        snapshot_unref(s);
        return respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    /* The response borrows the snapshot's text; the reference goes with it. */
    r = MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)text, release_snapshot, s);
    if (!r) {
        snapshot_unref(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- admission (tools/http_guard.h) ---- */

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
    struct agent *a = cls;
    struct http_guard_stats before, after;

    http_guard_get_stats(a->guard, &before);
    bool ok = http_guard_admit(a->guard, addr, len, monotonic_ns());

    http_guard_get_stats(a->guard, &after);
    if (after.evicted != before.evicted)
        __atomic_add_fetch(&a->http_evicted, after.evicted - before.evicted, __ATOMIC_RELAXED);
    if (!ok) {
        __atomic_add_fetch(&a->http_refused, 1, __ATOMIC_RELAXED);
        log_debug("http: connection refused: every connection of the client (or of all) is in use");
    }
    return ok ? MHD_YES : MHD_NO;
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    struct agent *a = cls;

    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = addr ? addr->client_addr : NULL;
        socklen_t len = sa && sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

        *socket_context = fd ? http_guard_opened(a->guard, fd->connect_fd, sa, len, monotonic_ns()) : NULL;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        http_guard_closed(a->guard, *socket_context);
        *socket_context = NULL;
    }
}

static void request_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                              enum MHD_RequestTerminationCode toe)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    (void)cls;
    (void)req_cls;
    (void)toe;
    http_guard_done(ci ? ci->socket_context : NULL, monotonic_ns());
}

static void httpd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void httpd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];

    (void)cls;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    log_debug("http: %s", buf);
}

static int parse_listen(const char *arg, struct sockaddr_storage *ret, bool *ret_v6)
{
    char host[128];
    const char *colon;
    uint64_t port;

    memset(ret, 0, sizeof(*ret));
    if (arg[0] == '[') {
        const char *end = strchr(arg, ']');

        if (!end || end[1] != ':' || (size_t)(end - arg - 1) >= sizeof(host))
            return -EINVAL;
        memcpy(host, arg + 1, (size_t)(end - arg - 1));
        host[end - arg - 1] = '\0';
        colon = end + 1;
    } else {
        colon = strrchr(arg, ':');
        if (!colon || (size_t)(colon - arg) >= sizeof(host))
            return -EINVAL;
        memcpy(host, arg, (size_t)(colon - arg));
        host[colon - arg] = '\0';
    }
    if (parse_u64(colon + 1, 65535, &port) < 0 || !port)
        return -EINVAL;
    if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ret)->sin_addr) == 1) {
        ((struct sockaddr_in *)ret)->sin_family = AF_INET;
        ((struct sockaddr_in *)ret)->sin_port = htons((uint16_t)port);
        *ret_v6 = false;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ret)->sin6_addr) == 1) {
        ((struct sockaddr_in6 *)ret)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)ret)->sin6_port = htons((uint16_t)port);
        *ret_v6 = true;
        return 0;
    }
    return -EINVAL;
}

/* ---- main ---------------------------------------------------------------------- */

static void sleep_ns(long ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ns};

    nanosleep(&ts, NULL);
}

static int epoll_add(int epfd, int fd, uint32_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

enum { TAG_TIMER = 1, TAG_SIGNAL = 2, TAG_MONITOR = 3 };

static int run(struct agent *a)
{
    for (;;) {
        struct epoll_event evs[8];
        int n, i, timeout = -1;

        if (a->collecting) {
            uint64_t now = monotonic_ns();

            timeout = now >= a->round_deadline ? 0 : (int)((a->round_deadline - now) / 1000000ULL) + 1;
        }
        n = epoll_wait(a->epfd, evs, 8, timeout);
        if (n < 0 && errno != EINTR)
            return fail(CMD, "epoll_wait: %s", strerror(errno));
        for (i = 0; i < n; i++) {
            uint64_t ticks;
            struct signalfd_siginfo si;

            switch (evs[i].data.u32) {
            case TAG_SIGNAL:
                if (read(a->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                    log_info("caught signal %u, shutting down", si.ssi_signo);
                    return 0;
                }
                break;
            case TAG_TIMER:
                if (read(a->tfd, &ticks, sizeof(ticks)) > 0 && !a->collecting)
                    start_round(a);
                break;
            case TAG_MONITOR: {
                int r;

                /* During a round, answers arrive by the thousand: let a
                 * millisecond's worth gather and take them in one go
                 * rather than waking for each. */
                if (a->collecting)
                    sleep_ns(1000000);
                r = xenstats_monitor_dispatch(a->monitor, 0);

                /* xenstore or the event channel device is gone: exit non-zero
                 * and let the service manager start us again */
                if (r < 0 && r != -EINTR)
                    return fail(CMD, "lost the host: %s", strerror(-r));
                break;
            }
            }
        }
        maybe_finish_round(a);
    }
}

int cmd_agent(int argc, char **argv)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},  {"interval", required_argument, NULL, 'i'},
        {"timeout", required_argument, NULL, 't'}, {"no-toolstack", no_argument, NULL, 'N'},
        {"list-metrics", no_argument, NULL, 'M'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct agent a = {.interval_ns = 1000000000ULL, .toolstack = true, .epfd = -1, .tfd = -1, .sfd = -1};
    struct xenstats_monitor_opts mo = {.size = sizeof(mo)};
    const char *listen_arg = "127.0.0.1:9740";
    struct sockaddr_storage addr;
    uint64_t timeout_ns = 500000000ULL;
    struct itimerspec its = {0};
    bool v6 = false;
    sigset_t mask;
    int c, status = 1;

    while ((c = getopt_long(argc, argv, "l:i:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            listen_arg = optarg;
            break;
        case 'i':
            if (parse_duration_ns(optarg, &a.interval_ns) < 0 || a.interval_ns < 100000000ULL ||
                a.interval_ns > 3600000000000ULL)
                return fail(CMD, "--interval %s: expected a duration between 100ms and 1h", optarg);
            break;
        case 't':
            if (parse_duration_ns(optarg, &timeout_ns) < 0 || timeout_ns < 1000000ULL || timeout_ns > 60000000000ULL)
                return fail(CMD, "--timeout %s: expected a duration between 1ms and 60s", optarg);
            break;
        case 'N':
            a.toolstack = false;
            break;
        case 'M':
            metrics_reference(stdout);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc)
        return fail(CMD, "unexpected argument '%s' (see --help)", argv[optind]);
    if (parse_listen(listen_arg, &addr, &v6) < 0)
        return fail(CMD, "--listen %s: expected ADDRESS:PORT, e.g. 127.0.0.1:9740 or [::1]:9740", listen_arg);
    if (timeout_ns * 2 > a.interval_ns)
        log_warning("--timeout is more than half the interval: slow providers delay samples");

    pthread_mutex_init(&a.lock, NULL);
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);

    a.host = tool_host_open(CMD);
    if (!a.host)
        goto out;
    mo.sample_timeout_ms = (uint32_t)(timeout_ns / 1000000ULL);
    mo.min_interval_ms = (uint32_t)(a.interval_ns / 2000000ULL);
    mo.create_stats_node = a.toolstack;
    a.monitor = xenstats_monitor_new(a.host, &mo);
    if (!a.monitor)
        log_warning("PV stats are not monitored: %s", strerror(errno));
    a.epfd = epoll_create1(EPOLL_CLOEXEC);
    a.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    a.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    its.it_interval.tv_sec = (time_t)(a.interval_ns / 1000000000ULL);
    its.it_interval.tv_nsec = (long)(a.interval_ns % 1000000000ULL);
    its.it_value.tv_nsec = 1; /* first round at once */
    if (a.epfd < 0 || a.tfd < 0 || a.sfd < 0 || timerfd_settime(a.tfd, 0, &its, NULL) < 0 ||
        epoll_add(a.epfd, a.tfd, TAG_TIMER) < 0 || epoll_add(a.epfd, a.sfd, TAG_SIGNAL) < 0 ||
        (a.monitor && epoll_add(a.epfd, xenstats_monitor_fd(a.monitor), TAG_MONITOR) < 0)) {
        fail(CMD, "cannot set up the event loop: %s", strerror(errno));
        goto out;
    }
    /* The guard decides who gets a connection (docs/agent-api.md,
     * "Connection limits"); the server's own cap is above the guard's, so
     * connections the guard shut down can drain while new ones come in. */
    a.guard = http_guard_new(NULL);
    if (!a.guard) {
        fail(CMD, "out of memory");
        goto out;
    }
    a.httpd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                                   (v6 ? MHD_USE_IPv6 : 0),
                               0, accept_policy, &a, handle_request, &a, MHD_OPTION_SOCK_ADDR,
                               (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)320,
                               MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                               (size_t)32768, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, &a,
                               MHD_OPTION_NOTIFY_COMPLETED, request_completed, &a, MHD_OPTION_EXTERNAL_LOGGER,
                               httpd_log, NULL, MHD_OPTION_END);
    if (!a.httpd) {
        fail(CMD, "cannot listen on %s: %s", listen_arg, strerror(errno ? errno : EADDRINUSE));
        goto out;
    }
    fprintf(stderr, "%s %s: serving http://%s/metrics (sampling every %.3g s); Ctrl-C stops\n", PROG, CMD,
            listen_arg, (double)a.interval_ns / 1e9);
    status = run(&a);
out:
    if (a.httpd)
        MHD_stop_daemon(a.httpd);
    http_guard_free(a.guard);
    while (a.domains) {
        struct tracked *t = a.domains;

        a.domains = t->next;
        tracked_free(&a, t);
    }
    /* Closing every port lets providers see the monitor leave. */
    xenstats_monitor_free(a.monitor);
    xenstats_host_close(a.host);
    snapshot_unref(a.current);
    if (a.epfd >= 0)
        close(a.epfd);
    if (a.tfd >= 0)
        close(a.tfd);
    if (a.sfd >= 0)
        close(a.sfd);
    pthread_mutex_destroy(&a.lock);
    return status;
}
