/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Admission of HTTP connections, so that no client can deny /metrics to
 * another, not even one on the same address (every local process is
 * 127.0.0.1).  A global cap and a lower per-client cap bound what one
 * client holds; when a new connection finds a cap reached, the worst
 * connection held makes room: first one that has sent no complete request
 * within the grace time (a slow or idle opener), then the longest idle
 * keep-alive connection, then one that does not read its response, and
 * last the oldest connection still in its grace time but past a short
 * protection.  A connection with a request being answered (and read) is
 * never closed to make room, nor one in its protection time, so a scraper's fresh
 * connection survives a burst of others; when nothing can give way the new
 * connection is let in above the cap, and only a hard cap (reached by
 * opening 256 connections within one protection time) refuses.
 *
 * Beside admission, a response in flight may be cut: when it has taken
 * longer than its total deadline (http_guard_expire(); libmicrohttpd's own
 * timeout is an idle one, which a client reading a byte now and then never
 * meets), or when what it holds must make room (http_guard_cut(), by the
 * tag the caller gave the connection).
 *
 * Calls are serialised by a mutex: the HTTP server's thread makes all but
 * http_guard_expire(), which the sampler's thread may make.  Connections
 * are closed with shutdown(2); the server then reaps them (it reports a
 * connection closed, http_guard_closed(), before it closes the socket, so
 * no shutdown(2) ever reaches a reused descriptor).
 */
#ifndef XENSTATS_HTTP_GUARD_H
#define XENSTATS_HTTP_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct http_guard_limits {
    unsigned int max_connections; /* all clients; 0: 128 */
    unsigned int max_per_client;  /* one address; 0: 16 */
    uint64_t grace_ns;            /* a new connection's time to send its request; 0: 1 s */
    uint64_t protect_ns;          /* never closed younger than this; 0: 50 ms */
    unsigned int hard_max;        /* refused beyond this, when all are protected;
                                     0 (or below max_connections): 2 * max_connections */
};

struct http_guard_stats {
    uint64_t admitted, refused, evicted;
    uint64_t expired; /* responses cut at their deadline */
    uint64_t cut;     /* responses cut by http_guard_cut() */
    unsigned int open;
};

struct http_guard;
struct http_guard_conn;

/* The client's address as 16 bytes: IPv4 as IPv4-mapped IPv6, IPv6 cut to
 * its first V6_BYTES (16: the whole address), anything else zeros. */
void http_client_key(const struct sockaddr *addr, socklen_t len, size_t v6_bytes, uint8_t key[16]);

struct http_guard *http_guard_new(const struct http_guard_limits *limits);
void http_guard_free(struct http_guard *g); /* accepts NULL */

/*
 * A client at addr wants to connect: true to accept, after closing another
 * connection if a cap is reached; false when nothing can give way.
 */
bool http_guard_admit(struct http_guard *g, const struct sockaddr *addr, socklen_t len, uint64_t now_ns);
/* The accepted connection: fd is its socket.  NULL when out of memory
 * (the connection is then not counted, nor ever evicted). */
struct http_guard_conn *http_guard_opened(struct http_guard *g, int fd, const struct sockaddr *addr,
                                          socklen_t len, uint64_t now_ns);
void http_guard_closed(struct http_guard *g, struct http_guard_conn *c); /* accepts NULL */
/* A complete request arrived / its response was sent (which forgets its tag). */
void http_guard_busy(struct http_guard_conn *c, uint64_t now_ns);
void http_guard_done(struct http_guard_conn *c, uint64_t now_ns);

/* What the connection's response in flight holds, for http_guard_cut(); NULL: nothing. */
void http_guard_tag(struct http_guard_conn *c, const void *tag);
/* Close every connection whose response holds tag (not NULL); how many. */
unsigned int http_guard_cut(struct http_guard *g, const void *tag);
/* Close every connection whose response has been in flight (from its
 * complete request) for deadline_ns or more; how many. */
unsigned int http_guard_expire(struct http_guard *g, uint64_t now_ns, uint64_t deadline_ns);

void http_guard_get_stats(struct http_guard *g, struct http_guard_stats *ret_stats);

#endif
