/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* HTTP basic authentication: see http_auth.h. */
#include <crypt.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "http_auth.h"

#define DIGEST 32                    /* HMAC-SHA-256 */
#define BUDGET_BURST 4               /* bcrypt runs at once */
#define BUDGET_EVERY_NS 500000000ULL /* then one each */

struct user {
    char *hash;
    uint8_t name_mac[DIGEST];
    uint8_t password_mac[DIGEST]; /* of the password last verified */
    bool remembered;
};

struct http_auth {
    uint8_t key[DIGEST];
    struct user *users;
    size_t nr_users;
    struct crypt_data *crypt; /* 32 KiB: one, not on the stack */
    unsigned int budget;
    uint64_t budget_at_ns;
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
    size_t len, n;
    int r;

    if (!p || strncasecmp(p, "Basic", 5) || (p[5] != ' ' && p[5] != '\t'))
        return -EINVAL;
    p += 5;
    while (*p == ' ' || *p == '\t')
        p++;
    len = strcspn(p, " \t");
    if (p[len + strspn(p + len, " \t")]) /* token68, then nothing */
        return -EINVAL;
    r = base64_decode(p, len, plain, sizeof(plain), &n);
    if (r < 0)
        return r;
    if (memchr(plain, '\0', n))
        return -EINVAL;
    colon = memchr(plain, ':', n);
    if (!colon)
        return -EINVAL;
    if ((size_t)(colon - (char *)plain) >= HTTP_AUTH_USER_MAX ||
        n - (size_t)(colon - (char *)plain) - 1 >= HTTP_AUTH_PASSWORD_MAX)
        return -E2BIG;
    memcpy(ret_user, plain, (size_t)(colon - (char *)plain));
    ret_user[colon - (char *)plain] = '\0';
    memcpy(ret_password, colon + 1, n - (size_t)(colon - (char *)plain) - 1);
    ret_password[n - (size_t)(colon - (char *)plain) - 1] = '\0';
    explicit_bzero(plain, sizeof(plain));
    return 0;
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
    a->budget = BUDGET_BURST;
    a->crypt = calloc(1, sizeof(*a->crypt));
    a->users = config->nr_users ? calloc(config->nr_users, sizeof(*a->users)) : NULL;
    if (!a->crypt || (config->nr_users && !a->users))
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

/* One more bcrypt run allowed now? */
static bool take_budget(struct http_auth *a, uint64_t now)
{
    if (a->budget < BUDGET_BURST && now > a->budget_at_ns) {
        uint64_t earned = (now - a->budget_at_ns) / BUDGET_EVERY_NS;

        if (earned >= BUDGET_BURST - a->budget) {
            a->budget = BUDGET_BURST;
        } else {
            a->budget += (unsigned int)earned;
            a->budget_at_ns += earned * BUDGET_EVERY_NS;
        }
    }
    if (!a->budget)
        return false;
    if (a->budget == BUDGET_BURST)
        a->budget_at_ns = now; /* earning starts at the first one spent */
    a->budget--;
    return true;
}

/* bcrypt of password against hash, compared in constant time. */
static bool bcrypt_matches(struct http_auth *a, const char *password, const char *hash)
{
    const char *out = crypt_rn(password, hash, a->crypt, (int)sizeof(*a->crypt));
    size_t len = strlen(hash);
    uint8_t diff = 0;

    a->stats.verified++;
    if (!out || strlen(out) != len)
        return false;
    for (size_t i = 0; i < len; i++)
        diff |= (uint8_t)(out[i] ^ hash[i]);
    return diff == 0;
}

enum http_auth_result http_auth_check(struct http_auth *a, const char *authorization, uint64_t now_ns)
{
    char user[HTTP_AUTH_USER_MAX], password[HTTP_AUTH_PASSWORD_MAX];
    uint8_t user_mac[DIGEST], password_mac[DIGEST];
    struct user *found = NULL;
    enum http_auth_result result = HTTP_AUTH_DENIED;
    bool ok;

    if (!a->nr_users || http_basic_credentials(authorization, user, password) < 0)
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
    if (!take_budget(a, now_ns)) {
        result = HTTP_AUTH_BUSY;
        goto out;
    }
    /* an unknown user costs the same: the first user's hash, then no */
    ok = bcrypt_matches(a, password, found ? found->hash : a->users[0].hash) && found;
    if (ok) {
        memcpy(found->password_mac, password_mac, DIGEST);
        found->remembered = true;
        result = HTTP_AUTH_OK;
    }
out:
    if (result == HTTP_AUTH_DENIED)
        a->stats.denied++;
    else if (result == HTTP_AUTH_BUSY)
        a->stats.busy++;
    explicit_bzero(password, sizeof(password));
    return result;
}

void http_auth_get_stats(const struct http_auth *a, struct http_auth_stats *ret_stats)
{
    *ret_stats = a->stats;
}
