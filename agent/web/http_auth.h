/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * HTTP basic authentication of the agent's scrapers (tools, the HTTP
 * side), against the bcrypt hashes of --web-config (libcrypt verifies).
 *
 * bcrypt is slow by design (tens of milliseconds at cost 10) and runs in
 * the HTTP thread, so:
 *  - a password once verified for a user is remembered, as an HMAC-SHA-256
 *    under a key drawn at start (never the password itself); a scraper
 *    presenting it again costs one HMAC, not a bcrypt;
 *  - verifications that miss that cache draw from two budgets: the
 *    client's own (its address; IPv6 by /64), a burst of 2 then 1 a
 *    second, and a global one, a burst of 4 then 2 a second.  Beyond
 *    either the answer is "busy" at once, without running bcrypt: a flood
 *    of wrong passwords costs a bounded share of a core, and one client's
 *    flood spends only its own budget;
 *  - the global budget is two: one for addresses that have passed a
 *    check since the start (verified), one for the others (strangers), so
 *    strangers never starve a verified client.  Of the strangers' budget,
 *    the last check is kept for an address that has had none for 10 s,
 *    so a few flooding addresses do not starve a scraper's first check
 *    after a restart either.  A client that shares its address with a
 *    flood shares its budget: give it an address (or a client
 *    certificate) of its own;
 *  - a check that finds no budget is not made to wait for one: it would
 *    wait in the one HTTP thread, or hold its connection while the
 *    flood's requests hold theirs, and Prometheus gains nothing from a
 *    slower answer (a scrape is tried again at the next interval, and with
 *    its own budget a scraper's first check runs at once).
 * User names are compared through their HMACs, the same 32 bytes for
 * every user, and an unknown user costs a bcrypt at the highest cost of
 * the configured hashes.  Decoded credentials and their HMACs are wiped
 * (explicit_bzero) on every path.
 *
 * Not thread-safe: the agent calls it from the HTTP server's one thread.
 */
#ifndef XENSTATS_HTTP_AUTH_H
#define XENSTATS_HTTP_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "web_config.h"

#define HTTP_AUTH_USER_MAX 256     /* bytes, NUL included */
#define HTTP_AUTH_PASSWORD_MAX 256 /* bcrypt reads 72 */

/*
 * The user and password of an Authorization header value (untrusted;
 * "Basic" and base64 of "user:password", RFC 7617), NUL-terminated into
 * ret_user and ret_password.  Returns 0; -EINVAL when it is not Basic or
 * not valid base64 of user:password (or holds a NUL); -E2BIG when a part
 * is longer than its buffer.  On failure both buffers are zeroed; on
 * success the caller wipes them (explicit_bzero) when done.
 */
int http_basic_credentials(const char *authorization, char ret_user[HTTP_AUTH_USER_MAX],
                           char ret_password[HTTP_AUTH_PASSWORD_MAX]);

enum http_auth_result { HTTP_AUTH_OK, HTTP_AUTH_DENIED, HTTP_AUTH_BUSY };

struct http_auth_stats {
    uint64_t remembered; /* accepted from the cache */
    uint64_t verified;   /* bcrypt runs */
    uint64_t denied;
    uint64_t busy;        /* refused for want of budget: all of them */
    uint64_t busy_client; /* of which the client's own budget was spent */
};

struct http_auth;

/* The users of config (copied).  NULL and errno: ENOMEM, or EIO without randomness. */
struct http_auth *http_auth_new(const struct web_config *config);
void http_auth_free(struct http_auth *a); /* accepts NULL */

/*
 * Check an Authorization header value (NULL when absent) of the client at
 * addr (NULL or another family than IPv4/IPv6: one budget for all such)
 * at now_ns.
 */
enum http_auth_result http_auth_check(struct http_auth *a, const char *authorization, const struct sockaddr *addr,
                                      socklen_t addr_len, uint64_t now_ns);

void http_auth_get_stats(const struct http_auth *a, struct http_auth_stats *ret_stats);

#endif
