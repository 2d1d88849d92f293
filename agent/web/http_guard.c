/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent's HTTP side (tools): admission of connections, see http_guard.h. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http_guard.h"

struct http_guard_conn {
    struct http_guard_conn *prev, *next;
    struct http_guard *guard;
    const void *tag; /* what the response in flight holds (http_guard_tag) */
    int fd;
    uint8_t client[16];
    uint64_t opened_ns, idle_since_ns, busy_since_ns;
    uint64_t requests; /* completed */
    bool busy;         /* a request is being answered */
    bool evicted;      /* shut down, waiting for the server to reap it */
};

struct http_guard {
    pthread_mutex_t lock; /* everything below */
    struct http_guard_limits limits;
    struct http_guard_conn *conns;
    unsigned int open; /* not evicted */
    struct http_guard_stats stats;
};

void http_client_key(const struct sockaddr *addr, socklen_t len, size_t v6_bytes, uint8_t key[16])
{
    memset(key, 0, 16);
    if (addr && addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
    } else if (addr && addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        memcpy(key, &((const struct sockaddr_in6 *)addr)->sin6_addr, v6_bytes < 16 ? v6_bytes : 16);
    }
}

static void client_key(const struct sockaddr *addr, socklen_t len, uint8_t key[16])
{
    http_client_key(addr, len, 16, key);
}

struct http_guard *http_guard_new(const struct http_guard_limits *limits)
{
    struct http_guard *g = calloc(1, sizeof(*g));

    if (!g)
        return NULL;
    pthread_mutex_init(&g->lock, NULL);
    if (limits)
        g->limits = *limits;
    if (!g->limits.max_connections)
        g->limits.max_connections = 128;
    if (!g->limits.max_per_client)
        g->limits.max_per_client = 16;
    if (!g->limits.grace_ns)
        g->limits.grace_ns = 1000000000ULL;
    if (g->limits.hard_max < g->limits.max_connections)
        g->limits.hard_max = 2 * g->limits.max_connections;
    if (!g->limits.protect_ns)
        g->limits.protect_ns = 50000000ULL;
    return g;
}

void http_guard_free(struct http_guard *g)
{
    if (!g)
        return;
    while (g->conns) {
        struct http_guard_conn *c = g->conns;

        g->conns = c->next;
        free(c);
    }
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/*
 * The connection to close to make room (of one client when key is set),
 * or NULL: first the oldest that sent no complete request within the
 * grace time, then the longest idle after a request, then one whose
 * response has not been read for four grace times (a client that asks and
 * never reads), and last the oldest of those still within their grace
 * time, if it had at least the protection time.  A burst of connections
 * then pushes out the older ones, and a scraper's new connection lives
 * long enough to send its request; connections being answered are never
 * closed.
 */
static struct http_guard_conn *victim(struct http_guard *g, const uint8_t *key, uint64_t now)
{
    struct http_guard_conn *c, *slow = NULL, *idle = NULL, *stuck = NULL, *young = NULL;

    for (c = g->conns; c; c = c->next) {
        if (c->evicted || (key && memcmp(c->client, key, 16)))
            continue;
        if (c->busy) {
            if (now - c->busy_since_ns >= 4 * g->limits.grace_ns && (!stuck || c->busy_since_ns < stuck->busy_since_ns))
                stuck = c;
        } else if (!c->requests) {
            if (now - c->opened_ns >= g->limits.grace_ns) {
                if (!slow || c->opened_ns < slow->opened_ns)
                    slow = c;
            } else if (now - c->opened_ns >= g->limits.protect_ns && (!young || c->opened_ns < young->opened_ns)) {
                young = c;
            }
        } else if (!idle || c->idle_since_ns < idle->idle_since_ns) {
            idle = c;
        }
    }
    return slow ? slow : idle ? idle : stuck ? stuck : young;
}

static void evict(struct http_guard *g, struct http_guard_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
    c->evicted = true;
    g->open--;
    g->stats.evicted++;
}

/*
 * Over a cap, the worst connection makes room.  When every candidate is
 * protected (answering, or just opened), the new one is let in anyway:
 * refusing it could refuse the scraper.  Only the hard cap refuses.
 */
bool http_guard_admit(struct http_guard *g, const struct sockaddr *addr, socklen_t len, uint64_t now)
{
    struct http_guard_conn *c, *v;
    unsigned int mine = 0;
    uint8_t key[16];

    client_key(addr, len, key);
    pthread_mutex_lock(&g->lock);
    for (c = g->conns; c; c = c->next)
        if (!c->evicted && !memcmp(c->client, key, 16))
            mine++;
    if (mine >= g->limits.max_per_client && (v = victim(g, key, now)))
        evict(g, v);
    if (g->open >= g->limits.max_connections && (v = victim(g, NULL, now)))
        evict(g, v);
    if (g->open >= g->limits.hard_max) {
        g->stats.refused++;
        pthread_mutex_unlock(&g->lock);
        return false;
    }
    g->stats.admitted++;
    pthread_mutex_unlock(&g->lock);
    return true;
}

struct http_guard_conn *http_guard_opened(struct http_guard *g, int fd, const struct sockaddr *addr, socklen_t len,
                                          uint64_t now)
{
    struct http_guard_conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->guard = g;
    c->fd = fd;
    client_key(addr, len, c->client);
    c->opened_ns = c->idle_since_ns = now;
    pthread_mutex_lock(&g->lock);
    c->next = g->conns;
    if (g->conns)
        g->conns->prev = c;
    g->conns = c;
    g->open++;
    pthread_mutex_unlock(&g->lock);
    return c;
}

void http_guard_closed(struct http_guard *g, struct http_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    if (!c->evicted)
        g->open--;
    if (c->prev)
        c->prev->next = c->next;
    else
        g->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&g->lock);
    free(c);
}

void http_guard_busy(struct http_guard_conn *c, uint64_t now)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->guard->lock);
    if (!c->busy) {
        c->busy = true;
        c->busy_since_ns = now;
    }
    pthread_mutex_unlock(&c->guard->lock);
}

void http_guard_done(struct http_guard_conn *c, uint64_t now)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->guard->lock);
    if (c->busy) {
        c->busy = false;
        c->tag = NULL;
        c->requests++;
        c->idle_since_ns = now;
    }
    pthread_mutex_unlock(&c->guard->lock);
}

void http_guard_tag(struct http_guard_conn *c, const void *tag)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->guard->lock);
    c->tag = tag;
    pthread_mutex_unlock(&c->guard->lock);
}

/* Cut the response in flight on c: its connection goes, as an eviction does, but counted apart. */
static void cut(struct http_guard *g, struct http_guard_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
    c->evicted = true;
    c->tag = NULL;
    g->open--;
}

unsigned int http_guard_cut(struct http_guard *g, const void *tag)
{
    unsigned int n = 0;

    pthread_mutex_lock(&g->lock);
    for (struct http_guard_conn *c = g->conns; c; c = c->next) {
        if (!c->evicted && tag && c->tag == tag) {
            cut(g, c);
            n++;
        }
    }
    g->stats.cut += n;
    pthread_mutex_unlock(&g->lock);
    return n;
}

unsigned int http_guard_expire(struct http_guard *g, uint64_t now, uint64_t deadline_ns)
{
    unsigned int n = 0;

    pthread_mutex_lock(&g->lock);
    for (struct http_guard_conn *c = g->conns; c; c = c->next) {
        if (!c->evicted && c->busy && now - c->busy_since_ns >= deadline_ns) {
            cut(g, c);
            n++;
        }
    }
    g->stats.expired += n;
    pthread_mutex_unlock(&g->lock);
    return n;
}

void http_guard_get_stats(struct http_guard *g, struct http_guard_stats *ret_stats)
{
    pthread_mutex_lock(&g->lock);
    *ret_stats = g->stats;
    ret_stats->open = g->open;
    pthread_mutex_unlock(&g->lock);
}
