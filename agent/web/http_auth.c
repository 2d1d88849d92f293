/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* HTTP basic authentication: see http_auth.h. */
#include <crypt.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/random.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "http_auth.h"
#include "http_guard.h"

#define DIGEST 32 /* HMAC-SHA-256 */

/* The budgets of http_auth.h: a burst, then one each period. */
#define CLIENT_BURST 2
#define CLIENT_EVERY_NS 1000000000ULL
#define GLOBAL_BURST 4
#define GLOBAL_EVERY_NS 500000000ULL
#define FRESH_NS 10000000000ULL /* a stranger with no check for this long may take the last one */
#define CLIENTS_MAX 256         /* addresses remembered; the least recently checked go first */

struct user {
    char *hash;
    uint8_t name_mac[DIGEST];
    uint8_t password_mac[DIGEST]; /* of the password last verified */
    bool remembered;
};

struct bucket {
    unsigned int tokens;
    uint64_t since_ns; /* of the tokens not yet earned */
};

struct client {
    uint8_t key[16]; /* the address: IPv4 mapped, IPv6 to its /64 */
    struct bucket budget;
    uint64_t last_check_ns; /* 0: never */
    bool verified;          /* has passed a check */
};

struct http_auth {
    uint8_t key[DIGEST];
    struct user *users;
    size_t nr_users;
    const char *dearest; /* the hash of the highest cost: an unknown user's */
    struct crypt_data *crypt; /* 32 KiB: one, not on the stack */
    struct bucket strangers, verified;
    struct client *clients; /* CLIENTS_MAX */
    size_t nr_clients;
    struct http_auth_stats stats;
};

/* ---- the header ------------------------------------------------------------- */

static int base64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Standard base64 with padding (or without), into out; -EINVAL, -E2BIG. */
static int base64_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *ret_len)
{
    uint32_t bits = 0;
    size_t n = 0, i, pad = 0;
    int have = 0;

    while (len && in[len - 1] == '=' && pad < 2) {
        len--;
        pad++;
    }
    if (pad && (len + pad) % 4)
        return -EINVAL;
    if (len % 4 == 1)
        return -EINVAL;
    for (i = 0; i < len; i++) {
        int v = base64_value((unsigned char)in[i]);

        if (v < 0)
            return -EINVAL;
        bits = (bits << 6) | (uint32_t)v;
        have += 6;
        if (have >= 8) {
            have -= 8;
            if (n == cap)
                return -E2BIG;
            out[n++] = (uint8_t)(bits >> have);
            bits &= (1u << have) - 1;
        }
    }
    if (bits) /* the unused low bits of the last character must be zero */
        return -EINVAL;
    *ret_len = n;
    return 0;
}

int http_basic_credentials(const char *authorization, char ret_user[HTTP_AUTH_USER_MAX],
                           char ret_password[HTTP_AUTH_PASSWORD_MAX])
{
    uint8_t plain[HTTP_AUTH_USER_MAX + HTTP_AUTH_PASSWORD_MAX];
    const char *p = authorization, *colon;
    size_t len, n = 0, user_len;
    int r;

    explicit_bzero(ret_user, HTTP_AUTH_USER_MAX);
    explicit_bzero(ret_password, HTTP_AUTH_PASSWORD_MAX);
    if (!p || strncasecmp(p, "Basic", 5) || (p[5] != ' ' && p[5] != '\t'))
        return -EINVAL;
    p += 5;
    while (*p == ' ' || *p == '\t')
        p++;
    len = strcspn(p, " \t");
    if (p[len + strspn(p + len, " \t")]) /* token68, then nothing */
        return -EINVAL;
    /* from here plain holds secrets, whole or in part: one way out */
    r = base64_decode(p, len, plain, sizeof(plain), &n);
    if (r < 0)
        goto out;
    r = -EINVAL;
    if (memchr(plain, '\0', n))
        goto out;
    colon = memchr(plain, ':', n);
    if (!colon)
        goto out;
    user_len = (size_t)(colon - (char *)plain);
    r = -E2BIG;
    if (user_len >= HTTP_AUTH_USER_MAX || n - user_len - 1 >= HTTP_AUTH_PASSWORD_MAX)
        goto out;
    memcpy(ret_user, plain, user_len);
    memcpy(ret_password, colon + 1, n - user_len - 1);
    r = 0;
out:
    explicit_bzero(plain, sizeof(plain));
    return r;
}

/* ---- verification ------------------------------------------------------------ */

static bool equal_digests(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0;

    for (int i = 0; i < DIGEST; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

static int mac(const struct http_auth *a, const char *text, uint8_t out[DIGEST])
{
    return gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof(a->key), text, strlen(text), out) < 0 ? -EIO : 0;
}

void http_auth_free(struct http_auth *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nr_users; i++)
        free(a->users[i].hash);
    free(a->users);
    free(a->clients);
    if (a->crypt)
        explicit_bzero(a->crypt, sizeof(*a->crypt));
    free(a->crypt);
    explicit_bzero(a->key, sizeof(a->key));
    free(a);
}

struct http_auth *http_auth_new(const struct web_config *config)
{
    struct http_auth *a = calloc(1, sizeof(*a));

    if (!a)
        goto nomem;
    a->strangers.tokens = a->verified.tokens = GLOBAL_BURST;
    a->crypt = calloc(1, sizeof(*a->crypt));
    a->clients = calloc(CLIENTS_MAX, sizeof(*a->clients));
    a->users = config->nr_users ? calloc(config->nr_users, sizeof(*a->users)) : NULL;
    if (!a->crypt || !a->clients || (config->nr_users && !a->users))
        goto nomem;
    if (getrandom(a->key, sizeof(a->key), 0) != (ssize_t)sizeof(a->key)) {
        http_auth_free(a);
        errno = EIO;
        return NULL;
    }
    for (size_t i = 0; i < config->nr_users; i++) {
        a->users[i].hash = strdup(config->users[i].hash);
        if (!a->users[i].hash)
            goto nomem;
        a->nr_users++;
        /* "$2y$NN$": the cost, two digits that web_config checked */
        if (!a->dearest || strncmp(a->users[i].hash + 4, a->dearest + 4, 2) > 0)
            a->dearest = a->users[i].hash;
        if (mac(a, config->users[i].name, a->users[i].name_mac) < 0) {
            http_auth_free(a);
            errno = EIO;
            return NULL;
        }
    }
    return a;
nomem:
    http_auth_free(a);
    errno = ENOMEM;
    return NULL;
}

/* Bring b's tokens up to now: one each `every`, burst at most; earning starts at the first one spent. */
static void refill(struct bucket *b, unsigned int burst, uint64_t every, uint64_t now)
{
    uint64_t earned;

    if (b->tokens >= burst || now < b->since_ns) {
        if (b->tokens >= burst)
            b->since_ns = now;
        return;
    }
    earned = (now - b->since_ns) / every;
    if (earned >= burst - b->tokens) {
        b->tokens = burst;
        b->since_ns = now;
    } else {
        b->tokens += (unsigned int)earned;
        b->since_ns += earned * every;
    }
}

/* The client's address as a budget's key: one host often holds a whole
 * IPv6 /64, and its addresses share a budget. */
static void client_key(const struct sockaddr *addr, socklen_t len, uint8_t key[16])
{
    http_client_key(addr, len, 8, key);
}

/*
 * The client of key, added when new: in place of the least recently
 * checked stranger when the table is full, else of the least recently
 * checked client.
 */
static struct client *find_client(struct http_auth *a, const uint8_t key[16], uint64_t now)
{
    struct client *c, *oldest = NULL;

    for (size_t i = 0; i < a->nr_clients; i++) {
        c = &a->clients[i];
        if (!memcmp(c->key, key, 16))
            return c;
        if (!oldest || (oldest->verified && !c->verified) ||
            (oldest->verified == c->verified && c->last_check_ns < oldest->last_check_ns))
            oldest = c;
    }
    c = a->nr_clients < CLIENTS_MAX ? &a->clients[a->nr_clients++] : oldest;
    *c = (struct client){.budget = {.tokens = CLIENT_BURST, .since_ns = now}};
    memcpy(c->key, key, 16);
    return c;
}

/* One more bcrypt run allowed now for client c?  Takes it from both budgets. */
static enum http_auth_result take_budget(struct http_auth *a, struct client *c, uint64_t now)
{
    struct bucket *global = c->verified ? &a->verified : &a->strangers;
    /* the strangers' last token waits for a client with no recent check */
    unsigned int keep = !c->verified && c->last_check_ns && now - c->last_check_ns < FRESH_NS ? 1 : 0;

    refill(&c->budget, CLIENT_BURST, CLIENT_EVERY_NS, now);
    if (!c->budget.tokens) {
        a->stats.busy_client++;
        return HTTP_AUTH_BUSY;
    }
    refill(global, GLOBAL_BURST, GLOBAL_EVERY_NS, now);
    if (global->tokens <= keep)
        return HTTP_AUTH_BUSY;
    c->budget.tokens--;
    global->tokens--;
    c->last_check_ns = now ? now : 1;
    return HTTP_AUTH_OK;
}

/* bcrypt of password against hash, compared in constant time; the work area (the key schedule) wiped. */
static bool bcrypt_matches(struct http_auth *a, const char *password, const char *hash)
{
    const char *out = crypt_rn(password, hash, a->crypt, (int)sizeof(*a->crypt));
    size_t len = strlen(hash);
    uint8_t diff = 0;

    a->stats.verified++;
    if (!out || strlen(out) != len) {
        diff = 1;
    } else {
        for (size_t i = 0; i < len; i++)
            diff |= (uint8_t)(out[i] ^ hash[i]);
    }
    explicit_bzero(a->crypt, sizeof(*a->crypt));
    return diff == 0;
}

enum http_auth_result http_auth_check(struct http_auth *a, const char *authorization, const struct sockaddr *addr,
                                      socklen_t addr_len, uint64_t now_ns)
{
    char user[HTTP_AUTH_USER_MAX], password[HTTP_AUTH_PASSWORD_MAX];
    uint8_t user_mac[DIGEST], password_mac[DIGEST], key[16];
    struct user *found = NULL;
    struct client *client;
    enum http_auth_result result = HTTP_AUTH_DENIED;
    bool ok;

    if (http_basic_credentials(authorization, user, password) < 0 || !a->nr_users)
        goto out;
    if (mac(a, user, user_mac) < 0 || mac(a, password, password_mac) < 0)
        goto out;
    /* every user compared, whichever matches */
    for (size_t i = 0; i < a->nr_users; i++) {
        bool same = equal_digests(a->users[i].name_mac, user_mac);

        found = same ? &a->users[i] : found;
    }
    if (found && found->remembered && equal_digests(found->password_mac, password_mac)) {
        a->stats.remembered++;
        result = HTTP_AUTH_OK;
        goto out;
    }
    client_key(addr, addr_len, key);
    client = find_client(a, key, now_ns);
    if (take_budget(a, client, now_ns) != HTTP_AUTH_OK) {
        result = HTTP_AUTH_BUSY;
        goto out;
    }
    /* an unknown user costs the same as the dearest known one, then no */
    ok = bcrypt_matches(a, password, found ? found->hash : a->dearest) && found;
    if (ok) {
        memcpy(found->password_mac, password_mac, DIGEST);
        found->remembered = true;
        client->verified = true;
        result = HTTP_AUTH_OK;
    }
out:
    if (result == HTTP_AUTH_DENIED)
        a->stats.denied++;
    else if (result == HTTP_AUTH_BUSY)
        a->stats.busy++;
    explicit_bzero(user, sizeof(user));
    explicit_bzero(password, sizeof(password));
    explicit_bzero(user_mac, sizeof(user_mac));
    explicit_bzero(password_mac, sizeof(password_mac));
    return result;
}

void http_auth_get_stats(const struct http_auth *a, struct http_auth_stats *ret_stats)
{
    *ret_stats = a->stats;
}
