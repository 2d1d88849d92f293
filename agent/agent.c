/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats agent: the dom0 daemon.  Tracks domains, maps their vCPU
 * statistics, plays the toolstack's part of the PV stats protocol (each
 * domain's `stats` node) and monitors every provider, samples everything
 * on an interval from one event loop, and serves the latest sample over
 * HTTP (libmicrohttpd, its own thread) as Prometheus/OpenMetrics text and
 * JSON.  Samples are immutable snapshots handed to HTTP threads by
 * reference, so scrapes never wait for sampling and vice versa.  gzip
 * renderings are made after a round by a thread of their own, for the
 * scrapes to come, and a scrape is sent the latest made (render ahead,
 * below); a plain one is rendered as it is sent (the text of a thousand
 * domains is some 17 MB, held only while more than four are sent at
 * once).  What responses in flight hold is capped, and each has a total
 * deadline (pin(), http_guard_expire()).  --web-config adds
 * TLS and basic auth (web_config.h, http_auth.h).  A host that goes away
 * is looked for again (lose_host()), /healthz saying 503 meanwhile.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include <xenstats/pv.h>
#include <xenstats/vcpu.h>

#include "cli/tool.h"
#include "collect/collector.h"
#include "export/export.h"
#include "util/util.h"
#include "web/http_auth.h"
#include "web/http_encoding.h"
#include "web/http_guard.h"
#include "web/web_config.h"

#define CMD "agent"
#define DEFAULT_PORT 9740
#define DEFAULT_PV_MAX_SETS 256   /* per domain: the monitor's defaults, said once here */
#define DEFAULT_PV_MAX_PAGES 1024
#define DEFAULT_RESPONSE_DEADLINE_NS (30 * 1000000000ULL)
#define DEFAULT_RESPONSE_MEMORY (32u << 20)
#define MAX_PINS 512 /* above the connection limit: one pin per response at most */
#define RESPONSE_SWEEP_NS 1000000000ULL /* the deadline is kept this often, whatever the interval */
/* A connection's kernel send buffer (SO_SNDBUF; the kernel reserves twice
 * this): what a response hands the kernel, out of the guard's reach.  It
 * holds a gzip scrape of 1000 domains whole (0.6 MB), so a scraper slowed
 * by a busy machine gets its answer from the kernel and is never cut, and
 * keeps the plain text (7-18 MB there) in the agent, where it is counted. */
#define HTTP_SNDBUF (1024 * 1024)

/*
 * What responses in flight hold (a sample, or a gzip rendering made ahead
 * of one), and what it costs: the memory a slow reader can keep from
 * being freed (see pin()).
 */
struct pin {
    const void *held; /* the sample or the rendering; NULL: a free slot */
    uint64_t born_ns; /* its round's sampling time: the oldest go first */
    size_t bytes;     /* what it held at the last response's start */
    unsigned int responses;
    bool cut; /* its responses were cut to make room: no longer counted against the cap */
};

struct agent {
    struct xenstats_host *host;
    struct collector *collector;
    struct MHD_Daemon *httpd;
    struct http_guard *guard; /* the HTTP thread's only */
    struct web_config *web;   /* NULL without --web-config */
    struct http_auth *auth;   /* NULL without users; the HTTP thread's only */
    uint64_t http_refused, http_evicted; /* atomic: HTTP thread */
    uint64_t interval_ns;
    uint32_t pv_max_sets, pv_max_pages; /* per domain (--pv-max-sets, --pv-max-pages) */
    int epfd, tfd, sfd;
    bool collecting; /* a round is in progress */
    unsigned int reopen_in, reopen_every; /* ticks, while the host is lost */
    uint64_t scrapes; /* atomic: HTTP threads */
    uint64_t last_gzip_ns[3];       /* atomic: HTTP threads; the last gzip request, by enum export_format */
    uint64_t gzip_period_ns[3];     /* atomic: the time between the last two of them */
    unsigned int streams;           /* atomic: plain renderings being sent */
    uint64_t response_deadline_ns;  /* --response-deadline */
    size_t response_memory;         /* --response-memory */

    pthread_mutex_t pins_lock; /* pins, pinned, held */
    struct pin pins[MAX_PINS];
    size_t pinned; /* the bytes of the pins not cut: at most response_memory, but for one pin alone */
    size_t held;   /* and with the ones cut, until their responses are reaped */

    /* render ahead: the renderer thread and what it made */
    pthread_t renderer;
    bool renderer_running;
    pthread_mutex_t render_lock; /* the members down to rendered[] */
    pthread_cond_t render_wake;
    struct export_snapshot *to_render; /* the newest round not yet taken by the renderer */
    uint64_t to_render_round;
    bool render_busy; /* the renderer is at a round */
    bool render_stop;
    struct rendering *rendered[3];  /* the newest made ahead, by enum export_format */
    uint64_t render_ns[3];          /* atomic: how long the last gzip rendering took, by format */
    uint64_t planned_for[3];        /* the renderer's: the predicted scrape last rendered for */
    uint64_t renders_ahead, request_renders; /* atomic */

    pthread_mutex_t lock; /* current, round, last_complete_ns, unhealthy */
    struct export_snapshot *current;
    uint64_t round; /* current's: rounds published so far */
    uint64_t last_complete_ns;
    char unhealthy[192]; /* why /healthz says 503 whatever the rounds do; "" when nothing */
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
            "      --pv-max-sets N       live PV stats sets one domain may hold, one event\n"
            "                            channel each (default %d)\n"
            "      --pv-max-pages N      value pages of one domain's sets mapped at once\n"
            "                            (default %d, 4 KiB each)\n"
            "      --response-deadline DURATION  time a response may take in all, however\n"
            "                            slowly read (default 30s)\n"
            "      --response-memory SIZE  memory the samples and gzip renderings held by\n"
            "                            responses in flight may take; older ones' slow\n"
            "                            readers are cut to make room (default 32M; K, M, G:\n"
            "                            powers of 1024)\n"
            "      --web-config FILE     TLS and basic auth, in the Prometheus exporter-toolkit's\n"
            "                            web configuration format (see xenstats-agent(1))\n"
            "      --wait-for-host DURATION  wait at most DURATION for the host at start (on\n"
            "                            Xen: /dev/xen/privcmd, and xenstore answering),\n"
            "                            saying what is missing (default 0: fail at once)\n"
            "      --list-metrics        print the metrics reference (Markdown) and exit\n"
            "  -h, --help                show this help\n\n"
            "Logs go to standard error; -v for more.  SIGINT/SIGTERM stop it cleanly.\n",
            PROG, DEFAULT_PORT, DEFAULT_PV_MAX_SETS, DEFAULT_PV_MAX_PAGES);
}

/* ---- the round ---------------------------------------------------------------- */

/* ---- render ahead ------------------------------------------------------------ */

/*
 * A gzip rendering of one round, made ahead by the renderer thread and
 * shared by the responses that send it.
 */
struct rendering {
    unsigned int refs; /* atomic */
    uint64_t round;
    uint64_t monotonic_ns; /* its sample's */
    size_t len;
    char *data;
};

static void rendering_unref(void *cls)
{
    struct rendering *r = cls;

    if (r && !__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL)) {
        free(r->data);
        free(r);
    }
}

/*
 * Is format f to be rendered now, for the scrapes to come?  Scrapes come
 * from scrapers that keep their period (Prometheus' 15 s, say: the time
 * between a format's last two gzip requests).  A scraper at least every
 * other interval gets every round.  A slower one gets one rendering per
 * scrape, of the last round whose rendering will be done before its next
 * scrape is due: the round after this one would finish too late when its
 * publication (an interval on), the last rendering's time and a quarter
 * interval's slack pass the predicted scrape.  The scrape then finds the
 * round before the current one, or the current one, made.  A format
 * nobody asks for with gzip, or whose scraper stopped, costs nothing.
 */
static bool render_due(struct agent *a, int f, uint64_t now)
{
    uint64_t last = __atomic_load_n(&a->last_gzip_ns[f], __ATOMIC_RELAXED);
    uint64_t period = __atomic_load_n(&a->gzip_period_ns[f], __ATOMIC_RELAXED);
    uint64_t took = __atomic_load_n(&a->render_ns[f], __ATOMIC_RELAXED), interval = a->interval_ns, next;

    if (!last || !period || period > 600 * 1000000000ULL)
        return false;
    if (period <= 2 * interval)
        return now - last <= 2 * interval;
    next = last + period;
    if (a->planned_for[f] == next || now > next + interval || now + interval + took + interval / 4 < next)
        return false;
    a->planned_for[f] = next;
    return true;
}

static void render_ahead(struct agent *a, struct export_snapshot *s, uint64_t round, int f)
{
    uint64_t start = monotonic_ns();
    struct rendering *r = calloc(1, sizeof(*r)), *old;
    int err = r ? http_gzip_snapshot(s, (enum export_format)f, &r->data, &r->len) : -ENOMEM;

    if (err < 0) {
        log_debug("cannot render a snapshot ahead: %s", strerror(-err));
        free(r);
        return;
    }
    __atomic_store_n(&a->render_ns[f], monotonic_ns() - start, __ATOMIC_RELAXED);
    __atomic_add_fetch(&a->renders_ahead, 1, __ATOMIC_RELAXED);
    r->refs = 1;
    r->round = round;
    r->monotonic_ns = s->monotonic_ns;
    pthread_mutex_lock(&a->render_lock);
    old = a->rendered[f];
    a->rendered[f] = r;
    pthread_mutex_unlock(&a->render_lock);
    rendering_unref(old);
}

/*
 * The renderer thread: takes each round as the sampler publishes it (a
 * round it had no time for is dropped for the newer one) and makes the
 * gzip renderings due, so that the sampler never waits for a rendering
 * and a scrape is a transfer (a thousand domains' /metrics took half a
 * second to a second to render and compress on a loaded machine).
 */
static void *renderer_main(void *arg)
{
    struct agent *a = arg;

    pthread_mutex_lock(&a->render_lock);
    for (;;) {
        struct export_snapshot *s;
        uint64_t round;

        while (!a->to_render && !a->render_stop)
            pthread_cond_wait(&a->render_wake, &a->render_lock);
        if (a->render_stop)
            break;
        s = a->to_render;
        round = a->to_render_round;
        a->to_render = NULL;
        a->render_busy = true;
        pthread_mutex_unlock(&a->render_lock);
        for (int f = 0; f < 3; f++)
            if (render_due(a, f, monotonic_ns()))
                render_ahead(a, s, round, f);
        export_snapshot_unref(s);
        pthread_mutex_lock(&a->render_lock);
        a->render_busy = false;
    }
    pthread_mutex_unlock(&a->render_lock);
    return NULL;
}

/* Give round `round` to the renderer, when anyone has asked for gzip. */
static void queue_render(struct agent *a, struct export_snapshot *s, uint64_t round)
{
    struct export_snapshot *old;
    bool asked = false;

    for (int f = 0; f < 3; f++)
        asked |= __atomic_load_n(&a->last_gzip_ns[f], __ATOMIC_RELAXED) != 0;
    if (!asked || !a->renderer_running)
        return;
    pthread_mutex_lock(&a->render_lock);
    old = a->to_render;
    a->to_render = export_snapshot_ref(s);
    a->to_render_round = round;
    pthread_cond_signal(&a->render_wake);
    pthread_mutex_unlock(&a->render_lock);
    export_snapshot_unref(old);
}

/*
 * The newest rendering of `format` made ahead, with a reference, if it is
 * recent enough for a scrape at round `current`: of the current round or
 * the one before, or older by the rounds its rendering takes, and by one
 * more while the renderer is at a newer round or has one waiting (on a
 * loaded machine it may be scheduled a round late: its copy comes soon,
 * and a scrape waiting on a rendering of its own would come later).  NULL
 * when there is none (the caller renders the current round, and counts it).
 */
static struct rendering *rendering_for_request(struct agent *a, enum export_format format, uint64_t current)
{
    uint64_t took = __atomic_load_n(&a->render_ns[format], __ATOMIC_RELAXED);
    uint64_t behind = 1 + took / a->interval_ns;
    struct rendering *r;

    pthread_mutex_lock(&a->render_lock);
    if (a->render_busy || a->to_render)
        behind++;
    r = a->rendered[format];
    if (r && r->round + behind >= current)
        __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
    else
        r = NULL;
    pthread_mutex_unlock(&a->render_lock);
    return r;
}

static int start_renderer(struct agent *a)
{
    int err = pthread_create(&a->renderer, NULL, renderer_main, a);

    if (err)
        return -err;
    a->renderer_running = true;
    return 0;
}

static void stop_renderer(struct agent *a)
{
    if (a->renderer_running) {
        pthread_mutex_lock(&a->render_lock);
        a->render_stop = true;
        pthread_cond_signal(&a->render_wake);
        pthread_mutex_unlock(&a->render_lock);
        pthread_join(a->renderer, NULL);
        a->renderer_running = false;
    }
    export_snapshot_unref(a->to_render);
    a->to_render = NULL;
    for (int f = 0; f < 3; f++) {
        rendering_unref(a->rendered[f]);
        a->rendered[f] = NULL;
    }
}

/* ---- the round ---------------------------------------------------------------- */

static void publish_snapshot(struct agent *a)
{
    struct export_agent counts = {0};
    struct export_snapshot *s, *old;
    uint64_t round;
    int list_error;

    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_SCRAPES, __atomic_load_n(&a->scrapes, __ATOMIC_RELAXED));
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_HTTP_REFUSED, __atomic_load_n(&a->http_refused, __ATOMIC_RELAXED));
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_HTTP_EVICTED, __atomic_load_n(&a->http_evicted, __ATOMIC_RELAXED));
    if (a->guard) {
        struct http_guard_stats gs;

        http_guard_get_stats(a->guard, &gs);
        export_figs_set(&counts.figs, EXPORT_FIG_AGENT_HTTP_EXPIRED, gs.expired);
        export_figs_set(&counts.figs, EXPORT_FIG_AGENT_HTTP_SUPERSEDED, gs.cut);
    }
    pthread_mutex_lock(&a->pins_lock);
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_HTTP_PINNED_BYTES, a->held);
    pthread_mutex_unlock(&a->pins_lock);
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_PV_MAX_LIVE_SETS, a->pv_max_sets);
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_PV_MAX_MAPPED_PAGES, a->pv_max_pages);
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_RENDERS_AHEAD, __atomic_load_n(&a->renders_ahead, __ATOMIC_RELAXED));
    export_figs_set(&counts.figs, EXPORT_FIG_AGENT_REQUEST_RENDERS,
                    __atomic_load_n(&a->request_renders, __ATOMIC_RELAXED));
    s = collector_snapshot(a->collector, &counts);
    if (!s) {
        log_error("cannot build a snapshot: %s", strerror(errno));
        return;
    }
    list_error = collector_list_error(a->collector);
    pthread_mutex_lock(&a->lock);
    old = a->current;
    a->current = export_snapshot_ref(s);
    round = ++a->round;
    a->last_complete_ns = s->monotonic_ns;
    if (list_error)
        snprintf(a->unhealthy, sizeof(a->unhealthy), "cannot list domains: %s", xenstats_strerror(list_error));
    else
        a->unhealthy[0] = '\0';
    pthread_mutex_unlock(&a->lock);
    export_snapshot_unref(old);
    queue_render(a, s, round);
    export_snapshot_unref(s);
}

static void maybe_finish_round(struct agent *a)
{
    struct itimerspec next;

    if (a->collecting && collector_round_done(a->collector, monotonic_ns())) {
        a->collecting = false;
        publish_snapshot(a);
        /* new domains are set up until the next round is due, less a tenth of the interval */
        if (timerfd_gettime(a->tfd, &next) == 0) {
            uint64_t left = (uint64_t)next.it_value.tv_sec * 1000000000ULL + (uint64_t)next.it_value.tv_nsec;

            if (left > a->interval_ns / 10)
                collector_idle(a->collector, monotonic_ns() + left - a->interval_ns / 10);
        }
    }
}

/* ---- HTTP ------------------------------------------------------------------------ */

/*
 * The memory slow readers can pin.  A response holds what it sends until
 * it is sent: its sample (some MB at a thousand domains, and its text,
 * when rendered whole, some 17 MB more), or a gzip rendering made ahead
 * (render ahead, above), which holds its bytes and not the sample.  The
 * responses of one sample or rendering share it, so what they pin is
 * bounded by samples and renderings, not by readers.  What responses in
 * flight hold is counted here, each sample or rendering once, at what it
 * holds when a response starts (export_snapshot_memory(), or the
 * rendering's bytes); when a new response takes the sum past
 * --response-memory, the responses of the oldest others (by their round)
 * are cut (their connections closed, oldest first) until the rest fits.
 * The new response is always taken: it is of the current sample, or of
 * the newest rendering, which the agent holds anyway, and a scraper is
 * never the one refused.  A reader is cut only when what it holds is
 * older than everything else in flight that fits, so only readers slower
 * than samples lose; --response-deadline bounds them all besides.
 */
static struct pin *find_pin(struct agent *a, const void *held)
{
    for (int i = 0; i < MAX_PINS; i++)
        if (a->pins[i].held == held)
            return &a->pins[i];
    return NULL;
}

/* The oldest pin other than keep whose responses still count; NULL when none. */
static struct pin *oldest_pin(struct agent *a, const struct pin *keep)
{
    struct pin *old = NULL;

    for (int i = 0; i < MAX_PINS; i++) {
        struct pin *p = &a->pins[i];

        if (p->held && p != keep && !p->cut && (!old || p->born_ns < old->born_ns))
            old = p;
    }
    return old;
}

/*
 * What MHD_get_connection_info() says is copied at once: libmicrohttpd
 * 1.0 answers from one buffer per connection, which its next call
 * overwrites ("The returned pointer is invalidated with the next call of
 * this function"), whereas 0.9.75 answered the address from the
 * connection itself.  Holding the answer across a second call is what
 * gave the guard the low bits of the address's pointer for a socket, on
 * Debian 13.
 */
static struct http_guard_conn *guard_conn(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

static const struct sockaddr *client_address(struct MHD_Connection *c, socklen_t *ret_len)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;

    *ret_len = sa && sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    return sa;
}

/*
 * A response on connection c starts, holding `held` (a sample or a
 * rendering, of the round sampled at born_ns), which holds `bytes`: count
 * it, making room if need be.  false: not counted.
 */
static bool pin(struct agent *a, struct MHD_Connection *c, const void *held, uint64_t born_ns, size_t bytes)
{
    struct http_guard_conn *gc = guard_conn(c);
    struct pin *p, *old;

    pthread_mutex_lock(&a->pins_lock);
    p = find_pin(a, held);
    if (!p && (p = find_pin(a, NULL)))
        *p = (struct pin){.held = held, .born_ns = born_ns};
    if (!p) {
        pthread_mutex_unlock(&a->pins_lock);
        return false; /* more pins than connections: cannot happen */
    }
    if (p->cut) {
        /* a rendering a round behind, cut to make room for a newer round: it counts again */
        p->cut = false;
        a->pinned += p->bytes;
    }
    a->held += bytes - p->bytes;
    a->pinned += bytes - p->bytes;
    p->bytes = bytes;
    p->responses++;
    while (a->pinned > a->response_memory && (old = oldest_pin(a, p))) {
        unsigned int n = a->guard ? http_guard_cut(a->guard, old->held) : 0;

        log_debug("http: %u slow response%s of a round %.1f s older cut: %zu bytes held in flight", n,
                  n == 1 ? "" : "s", (double)((int64_t)(born_ns - old->born_ns)) / 1e9, a->pinned);
        old->cut = true;
        a->pinned -= old->bytes;
    }
    pthread_mutex_unlock(&a->pins_lock);
    http_guard_tag(gc, held);
    return true;
}

static bool pin_snapshot(struct agent *a, struct MHD_Connection *c, struct export_snapshot *s)
{
    return pin(a, c, s, s->monotonic_ns, export_snapshot_memory(s));
}

static bool pin_rendering(struct agent *a, struct MHD_Connection *c, struct rendering *r)
{
    return pin(a, c, r, r->monotonic_ns, sizeof(*r) + r->len);
}

/* A response of `held` is done with (sent, cut or failed). */
static void unpin(struct agent *a, const void *held)
{
    struct pin *p;

    pthread_mutex_lock(&a->pins_lock);
    p = find_pin(a, held);
    if (p && !--p->responses) {
        a->held -= p->bytes;
        if (!p->cut)
            a->pinned -= p->bytes;
        *p = (struct pin){0};
    }
    pthread_mutex_unlock(&a->pins_lock);
}

/* What a response made from a sample's bytes, or from a rendering made ahead, holds (one of them). */
struct held {
    struct agent *agent;
    struct export_snapshot *snap;
    struct rendering *rendering;
    bool pinned;
};

static void release_held(void *cls)
{
    struct held *h = cls;

    if (h->pinned)
        unpin(h->agent, h->snap ? (const void *)h->snap : h->rendering);
    export_snapshot_unref(h->snap);
    rendering_unref(h->rendering);
    free(h);
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned int status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Basic realm=\"xenstats\", charset=\"UTF-8\"");
    else if (status == MHD_HTTP_TOO_MANY_REQUESTS)
        MHD_add_response_header(r, "Retry-After", "1");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static bool wants_openmetrics(struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");

    return accept && strstr(accept, "application/openmetrics-text");
}

/*
 * With client_ca_file: the client's certificate, checked against it and
 * for the TLS client authentication key purpose, as exporter-toolkit (Go's
 * crypto/tls) checks it: a certificate that names its purposes must name
 * client authentication (or any purpose), and so must each certificate
 * above it that names any; one that names none may serve any purpose.
 * libmicrohttpd asks for a certificate when it has a trust list but
 * leaves the verdict to us.  NULL when the connection may go on, else why
 * not.
 */
static const char *client_certificate_refused(const struct agent *a, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci;
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    gnutls_session_t session;
    unsigned int status = 0, nr = 0;

    if (!a->web || !a->web->client_ca_file)
        return NULL;
    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return "no TLS session\n";
    session = (gnutls_session_t)ci->tls_session;
    if (!gnutls_certificate_get_peers(session, &nr) || !nr)
        return a->web->client_auth == WEB_CLIENT_REQUIRE_AND_VERIFY ? "a client certificate is required\n" : NULL;
    if (gnutls_certificate_verify_peers(session, &purpose, 1, &status) < 0)
        return "the client certificate is not trusted\n";
    if (status & GNUTLS_CERT_PURPOSE_MISMATCH)
        return "the client certificate is not for TLS client authentication\n";
    if (status)
        return "the client certificate is not trusted\n";
    return NULL;
}

static enum MHD_Result respond_health(struct agent *a, struct MHD_Connection *c)
{
    char reason[256];
    uint64_t last, now = monotonic_ns();

    pthread_mutex_lock(&a->lock);
    last = a->last_complete_ns;
    snprintf(reason, sizeof(reason), "%s\n", a->unhealthy);
    pthread_mutex_unlock(&a->lock);
    if (reason[0] != '\n')
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, reason);
    if (!last)
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "starting: no sampling round has completed yet\n");
    /* three intervals, and a second for a loaded host's scheduling */
    if (now - last > 3 * a->interval_ns + 1000000000ULL) {
        snprintf(reason, sizeof(reason), "stalled: no sampling round has completed for %.1f s\n",
                 (double)(now - last) / 1e9);
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, reason);
    }
    return respond_text(c, MHD_HTTP_OK, "ok\n");
}

/*
 * A plain rendering, sent as it is made: a thread renders the snapshot in
 * pieces into a pipe that the response reads, so neither holds more than
 * a piece and the pipe's buffer.  A client that goes away closes the
 * pipe, and the renderer stops at its next piece (EPIPE; SIGPIPE is
 * ignored).  A rendering that fails ends the response with an error, so
 * the client sees a broken transfer, never a short body that looks whole.
 * At most MAX_STREAMS at once: beyond that, -EBUSY, and the caller sends
 * the text rendered whole, once for the snapshot.  (The HTTP thread
 * waits on the pipe for each piece, as it waited for a whole rendering
 * before: a piece takes well under a millisecond to make.)
 */
#define MAX_STREAMS 4

struct stream {
    struct agent *agent;
    struct export_snapshot *snap;
    enum export_format format;
    int fds[2];        /* the pipe: the response reads [0], the renderer writes [1] */
    int error;         /* atomic: the rendering's error, set before [1] is closed */
    unsigned int refs; /* atomic: the renderer and the response */
    bool pinned;       /* the response counts snap (pin()) */
};

static void stream_unref(struct stream *st)
{
    struct agent *a = st->agent;

    if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL))
        return;
    export_snapshot_unref(st->snap);
    free(st);
    __atomic_sub_fetch(&a->streams, 1, __ATOMIC_RELAXED);
}

static int write_piece(void *ctx, const char *data, size_t len)
{
    const struct stream *st = ctx;

    while (len) {
        ssize_t n = write(st->fds[1], data, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return negative_errno();
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void *stream_main(void *arg)
{
    struct stream *st = arg;
    int r = export_snapshot_render_to(st->snap, st->format, write_piece, st);

    if (r < 0 && r != -EPIPE)
        log_debug("cannot send a rendering: %s", strerror(-r));
    __atomic_store_n(&st->error, r, __ATOMIC_RELEASE);
    close(st->fds[1]);
    stream_unref(st);
    return NULL;
}

/* The response's reader: the pipe's bytes, then the end, or an error if the rendering failed. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *st = cls;
    ssize_t n;

    (void)pos;
    do
        n = read(st->fds[0], buf, max);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        return n;
    if (n == 0 && __atomic_load_n(&st->error, __ATOMIC_ACQUIRE) == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* The response is done with, sent or not: closing the read end stops a renderer still at work. */
static void stream_response_free(void *cls)
{
    struct stream *st = cls;

    if (st->pinned)
        unpin(st->agent, st->snap);
    close(st->fds[0]);
    stream_unref(st);
}

/* Start sending s's rendering on c: 0 with *ret_response, taking s's reference; or -EBUSY / -errno. */
static int stream_rendering(struct agent *a, struct MHD_Connection *c, struct export_snapshot *s,
                            enum export_format format, struct MHD_Response **ret_response)
{
    struct stream *st = NULL;
    struct MHD_Response *r;
    pthread_attr_t attr;
    pthread_t thread;
    int err;

    *ret_response = NULL;
    if (__atomic_add_fetch(&a->streams, 1, __ATOMIC_RELAXED) > MAX_STREAMS) {
        err = -EBUSY;
        goto fail;
    }
    st = malloc(sizeof(*st));
    if (!st) {
        err = -ENOMEM;
        goto fail;
    }
    *st = (struct stream){.agent = a, .snap = s, .format = format, .fds = {-1, -1}, .refs = 2};
    if (pipe2(st->fds, O_CLOEXEC) < 0) {
        err = negative_errno();
        goto fail;
    }
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st, stream_response_free);
    if (!r) {
        err = -ENOMEM;
        goto fail;
    }
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    err = -pthread_create(&thread, &attr, stream_main, st);
    pthread_attr_destroy(&attr);
    if (err < 0) {
        /* the renderer's reference, and its end of the pipe, never taken */
        close(st->fds[1]);
        __atomic_sub_fetch(&st->refs, 1, __ATOMIC_RELAXED);
        st->snap = NULL; /* s stays the caller's */
        MHD_destroy_response(r); /* the read end and the last reference: the counter goes with it */
        return err;
    }
    st->pinned = pin_snapshot(a, c, s);
    *ret_response = r;
    return 0;
fail:
    if (st && st->fds[0] >= 0) {
        close(st->fds[0]);
        close(st->fds[1]);
    }
    free(st);
    __atomic_sub_fetch(&a->streams, 1, __ATOMIC_RELAXED);
    return err;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_size,
                                      void **req_cls)
{
    static int first_call_marker;
    struct agent *a = cls;
    enum export_format format;
    const char *type, *data, *refused;
    struct MHD_Response *r;
    struct export_snapshot *s;
    struct rendering *ahead = NULL;
    enum MHD_Result ret;
    uint64_t round;
    bool gzip;
    size_t len;

    (void)version;
    (void)upload_data;
    if (!*req_cls) {
        /* Headers only so far: decide once the request is complete. */
        *req_cls = &first_call_marker;
        http_guard_busy(guard_conn(c), monotonic_ns());
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* bodies are ignored (and refused below) */
        return MHD_YES;
    }
    __atomic_add_fetch(&a->scrapes, 1, __ATOMIC_RELAXED);
    if (a->guard)
        http_guard_expire(a->guard, monotonic_ns(), a->response_deadline_ns);
    refused = client_certificate_refused(a, c);
    if (refused)
        return respond_text(c, MHD_HTTP_FORBIDDEN, refused);
    if (a->auth) {
        const char *authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        socklen_t sa_len;
        const struct sockaddr *sa = client_address(c, &sa_len);

        switch (http_auth_check(a->auth, authorization, sa, sa_len, monotonic_ns())) {
        case HTTP_AUTH_OK:
            break;
        case HTTP_AUTH_BUSY:
            return respond_text(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many password checks: try again\n");
        default:
            return respond_text(c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n");
        }
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return respond_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    if (!strcmp(url, "/")) {
        return respond_text(c, MHD_HTTP_OK,
                            "xenstats agent\n/metrics          Prometheus / OpenMetrics\n"
                            "/api/v1/snapshot  JSON\n/healthz          health\n");
    }
    if (!strcmp(url, "/healthz"))
        return respond_health(a, c);
    if (!strcmp(url, "/metrics")) {
        format = wants_openmetrics(c) ? EXPORT_FORMAT_OPENMETRICS : EXPORT_FORMAT_PROMETHEUS;
        type = format == EXPORT_FORMAT_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                            : "text/plain; version=0.0.4; charset=utf-8";
    } else if (!strcmp(url, "/api/v1/snapshot")) {
        format = EXPORT_FORMAT_JSON;
        type = "application/json";
    } else {
        return respond_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics, /api/v1/snapshot, /healthz\n");
    }

    pthread_mutex_lock(&a->lock);
    s = a->current ? export_snapshot_ref(a->current) : NULL;
    round = a->round;
    pthread_mutex_unlock(&a->lock);
    if (!s)
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
    gzip = http_accepts_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
    r = NULL;
    data = NULL;
    if (gzip) {
        uint64_t now = monotonic_ns(), before = __atomic_exchange_n(&a->last_gzip_ns[format], now, __ATOMIC_RELAXED);

        if (before && now > before)
            __atomic_store_n(&a->gzip_period_ns[format], now - before, __ATOMIC_RELAXED);
        /* the latest made ahead; else the current round's, made now if no one has */
        ahead = rendering_for_request(a, format, round);
        if (ahead) {
            /* the response holds the rendering, not the sample: it is the rendering that counts */
            struct held *h = malloc(sizeof(*h));

            export_snapshot_unref(s);
            s = NULL;
            if (!h) {
                rendering_unref(ahead);
                return respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
            }
            *h = (struct held){.agent = a, .rendering = ahead, .pinned = pin_rendering(a, c, ahead)};
            r = MHD_create_response_from_buffer_with_free_callback_cls(ahead->len, ahead->data, release_held, h);
            if (!r) {
                release_held(h);
                return MHD_NO;
            }
        } else if (!(data = export_snapshot_encoded(s, format, &len))) {
            data = export_snapshot_render_encoded(s, format, http_gzip_snapshot, &len);
            __atomic_add_fetch(&a->request_renders, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&a->render_ns[format], monotonic_ns() - now, __ATOMIC_RELAXED);
        }
    } else if (!strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        /* no body will be read: no renderer to start */
        export_snapshot_unref(s);
        s = NULL;
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else if (stream_rendering(a, c, s, format, &r) == -EBUSY) {
        /* more at once than are rendered as sent: the text made whole, once for the snapshot */
        data = export_snapshot_render(s, format, &len);
    }
    if (s && !r) {
        struct held *h = data ? malloc(sizeof(*h)) : NULL;

        if (!h) {
            export_snapshot_unref(s);
            return respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
                                gzip || data ? "out of memory\n" : "cannot render\n");
        }
        /* The response borrows the snapshot's bytes; the reference goes with it. */
        *h = (struct held){.agent = a, .snap = s, .pinned = pin_snapshot(a, c, s)};
        r = MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)data, release_held, h);
        if (!r)
            release_held(h);
    }
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Vary", "Accept-Encoding");
    if (gzip)
        MHD_add_response_header(r, "Content-Encoding", "gzip");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- admission (agent/web/http_guard.h) ---- */

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
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        int fd = ci ? ci->connect_fd : -1; /* before the next call overwrites it */
        socklen_t len;
        const struct sockaddr *sa = client_address(c, &len);

        /*
         * The kernel's send buffer grows to tcp_wmem's maximum (4 MiB by
         * default) for a reader that does not read: a response that fits is
         * then done with, as far as the server knows, and neither its
         * deadline nor --response-memory sees the MB the reader pins.  A
         * fixed buffer keeps the rest of the response in the agent, where the
         * guard counts and cuts it (docs/agent-api.md, "Slow readers").
         */
        if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){HTTP_SNDBUF}, sizeof(int)) < 0)
            log_debug("http: cannot set a connection's send buffer: %s", strerror(errno));
        *socket_context = fd >= 0 ? http_guard_opened(a->guard, fd, sa, len, monotonic_ns()) : NULL;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        http_guard_closed(a->guard, *socket_context);
        *socket_context = NULL;
    }
}

static void request_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                              enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)req_cls;
    (void)toe;
    http_guard_done(guard_conn(c), monotonic_ns());
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

static void set_unhealthy(struct agent *a, const char *reason)
{
    pthread_mutex_lock(&a->lock);
    snprintf(a->unhealthy, sizeof(a->unhealthy), "%s", reason);
    pthread_mutex_unlock(&a->lock);
}

static int open_collector(struct agent *a, const struct collector_opts *co)
{
    a->collector = collector_new(a->host, co);
    if (!a->collector)
        return -ENOMEM;
    if (collector_fd(a->collector) >= 0 && epoll_add(a->epfd, collector_fd(a->collector), TAG_MONITOR) < 0) {
        int r = -errno;

        collector_free(a->collector);
        a->collector = NULL;
        return r;
    }
    return 0;
}

/*
 * xenstore or the event channel device is gone (an emulated host that
 * stopped, xenstored restarting): keep serving the last sample, say so on
 * /healthz, and open the host again at each tick (reopen_host()).
 */
static void lose_host(struct agent *a, int err)
{
    char reason[160];

    snprintf(reason, sizeof(reason), "lost the host: %s", strerror(-err));
    log_error("%s; opening it again, every interval at first", reason);
    set_unhealthy(a, reason);
    if (collector_fd(a->collector) >= 0)
        epoll_ctl(a->epfd, EPOLL_CTL_DEL, collector_fd(a->collector), NULL);
    collector_free(a->collector);
    a->collector = NULL;
    xenstats_host_close(a->host);
    a->host = NULL;
    a->collecting = false;
    a->reopen_in = 0;
    a->reopen_every = 1;
}

/*
 * Every tick at first, then less often (each failure logs a line), up to
 * every 10 s.
 */
static void reopen_host(struct agent *a, const struct collector_opts *co)
{
    uint64_t most = 10000000000ULL / a->interval_ns;

    if (a->reopen_in) {
        a->reopen_in--;
        return;
    }
    a->host = xenstats_host_open(global.backend);
    if (!a->host) {
        a->reopen_every = a->reopen_every * 2 < most ? a->reopen_every * 2 : (unsigned int)(most ? most : 1);
        a->reopen_in = a->reopen_every - 1;
        return;
    }
    if (open_collector(a, co) < 0) {
        xenstats_host_close(a->host);
        a->host = NULL;
        return;
    }
    log_warning("the host is back: sampling again");
}

/*
 * libmicrohttpd's timeout is an idle one: the responses' total deadline is
 * kept here, every second whatever the interval, as well as at each
 * request, so it holds when nobody else connects.  Returns the time to the
 * next sweep, in ms.
 */
static int sweep_responses(struct agent *a, uint64_t *next_ns)
{
    uint64_t now = monotonic_ns();

    if (now >= *next_ns) {
        if (a->guard)
            http_guard_expire(a->guard, now, a->response_deadline_ns);
        *next_ns = now + RESPONSE_SWEEP_NS;
    }
    return (int)((*next_ns - now + 999999) / 1000000);
}

static int run(struct agent *a, const struct collector_opts *co)
{
    uint64_t next_sweep_ns = 0;

    for (;;) {
        struct epoll_event evs[8];
        int n, i, timeout = sweep_responses(a, &next_sweep_ns);

        if (a->collecting) {
            int round = collector_round_wait_ms(a->collector, monotonic_ns());

            if (round >= 0 && round < timeout)
                timeout = round;
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
                if (read(a->tfd, &ticks, sizeof(ticks)) <= 0)
                    break;
                if (a->collecting)
                    break;
                if (!a->collector)
                    reopen_host(a, co);
                if (a->collector) {
                    collector_begin(a->collector);
                    a->collecting = true;
                }
                break;
            case TAG_MONITOR: {
                int r;

                if (!a->collector)
                    break; /* an event of the collector just closed */

                /* During a round, answers arrive by the thousand: let a
                 * millisecond's worth gather and take them in one go
                 * rather than waking for each. */
                if (a->collecting)
                    sleep_ns(1000000);
                r = collector_dispatch(a->collector);
                if (r < 0)
                    lose_host(a, r);
                break;
            }
            }
        }
        maybe_finish_round(a);
    }
}

/* What the command line asks for, beside what struct agent and the collector's options hold. */
struct options {
    const char *listen_arg, *web_config;
    struct sockaddr_storage addr;
    bool v6;
    uint64_t timeout_ns;
    uint64_t wait_ns; /* --wait-for-host */
};

/* A number of bytes, with K, M, G or T for powers of 1024 (up to 1T): 0 or -EINVAL. */
static int parse_size(const char *arg, size_t *ret_bytes)
{
    static const char units[] = "KMGT";
    char digits[24];
    size_t n = strspn(arg, "0123456789");
    const char *unit = NULL;
    uint64_t v;

    if (!n || n >= sizeof(digits) || (arg[n] && (arg[n + 1] || !(unit = strchr(units, arg[n])))))
        return -EINVAL;
    memcpy(digits, arg, n);
    digits[n] = '\0';
    if (parse_u64(digits, 1ULL << 40, &v) < 0)
        return -EINVAL;
    if (unit)
        for (const char *u = units; u <= unit; u++)
            v *= 1024;
    if (v > 1ULL << 40)
        return -EINVAL;
    *ret_bytes = (size_t)v;
    return 0;
}

/* -1 to go on, else the exit status (--help, --list-metrics, a usage error). */
static int parse_options(int argc, char **argv, struct agent *a, struct collector_opts *co, struct options *o)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},  {"interval", required_argument, NULL, 'i'},
        {"timeout", required_argument, NULL, 't'}, {"no-toolstack", no_argument, NULL, 'N'},
        {"list-metrics", no_argument, NULL, 'M'},  {"help", no_argument, NULL, 'h'},
        {"web-config", required_argument, NULL, 'W'}, {"pv-max-sets", required_argument, NULL, 'S'},
        {"pv-max-pages", required_argument, NULL, 'P'}, {"wait-for-host", required_argument, NULL, 'H'},
        {"response-deadline", required_argument, NULL, 'D'}, {"response-memory", required_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "l:i:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            o->listen_arg = optarg;
            break;
        case 'i':
            if (parse_duration_ns(optarg, &a->interval_ns) < 0 || a->interval_ns < 100000000ULL ||
                a->interval_ns > 3600000000000ULL)
            {
                fail(CMD, "--interval %s: expected a duration between 100ms and 1h", optarg);
                return 2;
            }
            break;
        case 't':
            if (parse_duration_ns(optarg, &o->timeout_ns) < 0 || o->timeout_ns < 1000000ULL ||
                o->timeout_ns > 60000000000ULL)
            {
                fail(CMD, "--timeout %s: expected a duration between 1ms and 60s", optarg);
                return 2;
            }
            break;
        case 'N':
            co->create_stats_node = false;
            break;
        case 'W':
            o->web_config = optarg;
            break;
        case 'S':
        case 'P': {
            uint64_t v;

            if (parse_u64(optarg, 1000000, &v) < 0 || !v) {
                fail(CMD, "--pv-max-%s %s: expected a number from 1 to 1000000", c == 'S' ? "sets" : "pages", optarg);
                return 2;
            }
            *(c == 'S' ? &a->pv_max_sets : &a->pv_max_pages) = (uint32_t)v;
            break;
        }
        case 'H':
            if (parse_duration_ns(optarg, &o->wait_ns) < 0 || o->wait_ns > 3600000000000ULL) {
                fail(CMD, "--wait-for-host %s: expected a duration up to 1h", optarg);
                return 2;
            }
            break;
        case 'D':
            if (parse_duration_ns(optarg, &a->response_deadline_ns) < 0 || a->response_deadline_ns < 1000000000ULL ||
                a->response_deadline_ns > 3600000000000ULL)
            {
                fail(CMD, "--response-deadline %s: expected a duration between 1s and 1h", optarg);
                return 2;
            }
            break;
        case 'R':
            if (parse_size(optarg, &a->response_memory) < 0 || a->response_memory < (1u << 20)) {
                fail(CMD, "--response-memory %s: expected a size from 1M to 1T, such as 32M", optarg);
                return 2;
            }
            break;
        case 'M':
            export_metrics_reference(stdout);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fail(CMD, "unexpected argument '%s' (see --help)", argv[optind]);
        return 2;
    }
    if (parse_listen(o->listen_arg, &o->addr, &o->v6) < 0) {
        fail(CMD, "--listen %s: expected ADDRESS:PORT, e.g. 127.0.0.1:9740 or [::1]:9740", o->listen_arg);
        return 2;
    }
    co->pv_max_live_sets = a->pv_max_sets;
    co->pv_max_mapped_pages = a->pv_max_pages;
    if (o->timeout_ns * 2 > a->interval_ns)
        log_warning("--timeout is more than half the interval: slow providers delay samples");
    return -1;
}

/*
 * --web-config: a->web, a->auth and the server's TLS options (tls_opts
 * holds at least 5, ending with MHD_OPTION_END; priorities is theirs).  A
 * configuration that cannot be followed is a usage error, before anything
 * runs.  -1 to go on, else the exit status.
 */
static int load_web_config(struct agent *a, const char *path, struct MHD_OptionItem *tls_opts, char *priorities,
                           size_t priorities_len)
{
    unsigned int n = 0;
    char err[512];
    int r;

    tls_opts[0] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    if (!path)
        return -1;
    r = web_config_load(path, &a->web, err, sizeof(err));
    if (r == -ENOMEM)
        return fail(CMD, "out of memory");
    if (r < 0) {
        fail(CMD, "--web-config %s: %s", path, err);
        return 2;
    }
    if (a->web->nr_users) {
        a->auth = http_auth_new(a->web);
        if (!a->auth)
            return fail(CMD, "cannot set up basic auth: %s", strerror(errno));
        if (!a->web->tls)
            log_warning("--web-config %s: basic auth without TLS sends passwords in the clear", path);
    }
    if (!a->web->tls)
        return -1;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        fail(CMD, "--web-config %s: this libmicrohttpd was built without TLS", path);
        return 2;
    }
    web_config_priorities(a->web, priorities, priorities_len);
    tls_opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, a->web->cert_pem};
    tls_opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, a->web->key_pem};
    tls_opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, priorities};
    if (a->web->client_ca_pem)
        tls_opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, a->web->client_ca_pem};
    tls_opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return -1;
}

/*
 * Does xenstore answer?  In a child, for a bounded time: in dom0, a request
 * through /dev/xen/xenbus before xenstored runs waits for good.
 */
static bool xenstore_answers(void)
{
    pid_t pid = fork();
    int status, i;

    if (pid < 0)
        return false;
    if (pid == 0) {
        struct xenstats_host *host = xenstats_host_open(XENSTATS_BACKEND_XEN);
        char buf[16];
        int r;

        if (!host)
            _exit(1);
        /* an absent key is an answer too */
        r = xenstats_host_read_domain_key(host, xenstats_host_self_domid(host), "domid", buf, sizeof(buf));
        _exit(r >= 0 || r == -ENOENT ? 0 : 1);
    }
    for (i = 0; i < 40; i++) { /* 2 s */
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        sleep_ns(50000000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return false;
}

/* What the host still lacks for the agent to start, or NULL. */
static const char *host_missing(void)
{
    struct xenstats_host *host;

    if (global.backend == XENSTATS_BACKEND_XEN ||
        (global.backend == XENSTATS_BACKEND_AUTO && !getenv("XENSTATS_EMU_DIR"))) {
        if (access("/dev/xen/privcmd", F_OK) < 0 && access("/proc/xen/privcmd", F_OK) < 0)
            return "/dev/xen/privcmd is not there (the Xen drivers are not loaded yet, or this is not a Xen "
                   "control domain)";
        if (!xenstore_answers())
            return "xenstore does not answer (xenstored has not started yet)";
        return NULL;
    }
    /* the library's own error, every half second, would say it again */
    xenstats_set_log(NULL, XENSTATS_LOG_ERROR, NULL);
    host = xenstats_host_open(global.backend);
    tool_log_init(CMD);
    if (!host)
        return "the emulated host is not running";
    xenstats_host_close(host);
    return NULL;
}

/*
 * --wait-for-host: at boot the agent may start before Xen's services have
 * loaded the drivers and started xenstored (docs/packaging.md, "The
 * units").  Wait for them at most wait_ns, saying what is missing; 0, or
 * the exit status after saying why not.
 */
static int wait_for_host(uint64_t wait_ns)
{
    uint64_t start = monotonic_ns();
    const char *missing, *said = NULL;

    while ((missing = host_missing())) {
        if (missing != said)
            log_warning("waiting at most %.0f s for the host: %s", (double)wait_ns / 1e9, missing);
        said = missing;
        if (monotonic_ns() - start >= wait_ns) {
            fail(CMD, "gave up after %.0f s: %s", (double)wait_ns / 1e9, missing);
            return 1;
        }
        sleep_ns(500000000);
    }
    if (said)
        log_warning("the host is ready after %.1f s", (double)(monotonic_ns() - start) / 1e9);
    return 0;
}

/* The host, the event loop (epoll, the interval's timerfd, SIGINT/SIGTERM's signalfd) and the collector. */
static int open_sampling(struct agent *a, struct collector_opts *co, uint64_t timeout_ns)
{
    struct itimerspec its = {0};
    sigset_t mask;

    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    a->host = tool_host_open(CMD);
    if (!a->host)
        return -1;
    co->interval_ns = a->interval_ns;
    co->sample_timeout_ms = (uint32_t)(timeout_ns / 1000000ULL);
    a->epfd = epoll_create1(EPOLL_CLOEXEC);
    a->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    a->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    its.it_interval.tv_sec = (time_t)(a->interval_ns / 1000000000ULL);
    its.it_interval.tv_nsec = (long)(a->interval_ns % 1000000000ULL);
    its.it_value.tv_nsec = 1; /* first round at once */
    if (a->epfd < 0 || a->tfd < 0 || a->sfd < 0 || timerfd_settime(a->tfd, 0, &its, NULL) < 0 ||
        epoll_add(a->epfd, a->tfd, TAG_TIMER) < 0 || epoll_add(a->epfd, a->sfd, TAG_SIGNAL) < 0)
        return fail(CMD, "cannot set up the event loop: %s", strerror(errno));
    if (open_collector(a, co) < 0)
        return fail(CMD, "cannot set up the collector: %s", strerror(errno));
    return 0;
}

/* The HTTP server, in its own thread; 0, or nonzero after saying why. */
static int start_serving(struct agent *a, const struct options *o, struct MHD_OptionItem *tls_opts)
{
    /* The guard decides who gets a connection (docs/agent-api.md,
     * "Connection limits"); the server's own cap is above the guard's, so
     * connections the guard shut down can drain while new ones come in. */
    a->guard = http_guard_new(NULL);
    if (!a->guard)
        return fail(CMD, "out of memory");
    a->httpd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                                    (o->v6 ? MHD_USE_IPv6 : 0) | (a->web && a->web->tls ? MHD_USE_TLS : 0),
                                0, accept_policy, a, handle_request, a, MHD_OPTION_EXTERNAL_LOGGER, httpd_log,
                                NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&o->addr, MHD_OPTION_CONNECTION_LIMIT,
                                (unsigned int)320, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_NOTIFY_CONNECTION,
                                notify_connection, a, MHD_OPTION_NOTIFY_COMPLETED, request_completed, a,
                                MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_END);
    if (!a->httpd)
        /* the certificate and key were checked already (web_config_load()) */
        return fail(CMD, "cannot listen on %s%s: %s", o->listen_arg, a->web && a->web->tls ? " with TLS" : "",
                    strerror(errno ? errno : EADDRINUSE));
    fprintf(stderr, "%s %s: serving %s://%s/metrics%s (sampling every %.3g s); Ctrl-C stops\n", PROG, CMD,
            a->web && a->web->tls ? "https" : "http", o->listen_arg, a->auth ? " with basic auth" : "",
            (double)a->interval_ns / 1e9);
    return 0;
}

/* Whatever of the agent was set up, in reverse. */
static void close_agent(struct agent *a)
{
    if (a->httpd)
        MHD_stop_daemon(a->httpd);
    /* the daemon closed their pipes: the renderers stop at their next piece */
    while (__atomic_load_n(&a->streams, __ATOMIC_RELAXED))
        usleep(1000);
    stop_renderer(a);
    http_guard_free(a->guard);
    http_auth_free(a->auth);
    web_config_free(a->web);
    collector_free(a->collector);
    xenstats_host_close(a->host);
    export_snapshot_unref(a->current);
    if (a->epfd >= 0)
        close(a->epfd);
    if (a->tfd >= 0)
        close(a->tfd);
    if (a->sfd >= 0)
        close(a->sfd);
    pthread_mutex_destroy(&a->pins_lock);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->render_wake);
    pthread_mutex_destroy(&a->render_lock);
}

/*
 * The collector keeps each backend device's counter files open (eight
 * descriptors a vbd: docs/collector.md), within RLIMIT_NOFILE's soft
 * limit.  The soft limit of 1024 is kept for programs that use select();
 * this one does not (epoll), so it takes up to the hard limit, which the
 * unit raises (LimitNOFILE=).  Where it may not (a seccomp filter, no
 * hard limit above), the devices beyond are read by path.
 */
static void raise_open_files(void)
{
    struct rlimit rl;
    rlim_t want;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    want = rl.rlim_max < (rlim_t)1 << 20 ? rl.rlim_max : (rlim_t)1 << 20;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int cmd_agent(int argc, char **argv)
{
    struct agent a = {.interval_ns = 1000000000ULL,
                      .pv_max_sets = DEFAULT_PV_MAX_SETS,
                      .pv_max_pages = DEFAULT_PV_MAX_PAGES,
                      .response_deadline_ns = DEFAULT_RESPONSE_DEADLINE_NS,
                      .response_memory = DEFAULT_RESPONSE_MEMORY,
                      .epfd = -1,
                      .tfd = -1,
                      .sfd = -1};
    struct collector_opts co = {.create_stats_node = true};
    struct options o = {.listen_arg = "127.0.0.1:9740", .timeout_ns = 500000000ULL};
    struct MHD_OptionItem tls_opts[5];
    char priorities[128];
    int status;

    status = parse_options(argc, argv, &a, &co, &o);
    if (status >= 0)
        return status;
    status = load_web_config(&a, o.web_config, tls_opts, priorities, sizeof(priorities));
    if (status >= 0) {
        http_auth_free(a.auth);
        web_config_free(a.web);
        return status;
    }
    pthread_mutex_init(&a.lock, NULL);
    pthread_mutex_init(&a.render_lock, NULL);
    pthread_cond_init(&a.render_wake, NULL);
    pthread_mutex_init(&a.pins_lock, NULL);
    /*
     * A rendering's and a round's large buffers (the index of a thousand
     * guests' statistics, a compressed /metrics) come and go in several
     * threads: mapped and unmapped each time, rather than left in an
     * arena after glibc raises its threshold past them, which kept each
     * thread's peak as RSS.
     */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    raise_open_files();
    status = 1;
    if ((!o.wait_ns || wait_for_host(o.wait_ns) == 0) && open_sampling(&a, &co, o.timeout_ns) == 0 &&
        start_serving(&a, &o, tls_opts) == 0) {
        int r = start_renderer(&a);

        status = r < 0 ? fail(CMD, "cannot start the renderer thread: %s", strerror(-r)) : run(&a, &co);
    }
    close_agent(&a);
    return status;
}
