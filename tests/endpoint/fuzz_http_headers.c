/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a client sends the agent's header parsers (agent/web/http_encoding.c,
 * agent/web/http_auth.c), on any bytes: Accept-Encoding and Authorization
 * values must not crash or read out of bounds; credentials that parse
 * encode back (a separate base64 encoder here) to a header that parses to
 * the same; and any user and password without NUL, encoded, come back
 * unchanged.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/web/http_auth.h"
#include "agent/web/http_encoding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *encode_basic(const char *user, const char *password)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t ul = strlen(user), pl = strlen(password), len = ul + 1 + pl, o = 6;
    char *plain = malloc(len + 1), *out = malloc(6 + (len + 2) / 3 * 4 + 1);

    if (!plain || !out)
        abort();
    memcpy(plain, user, ul);
    plain[ul] = ':';
    memcpy(plain + ul + 1, password, pl);
    memcpy(out, "Basic ", 6);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)plain[i] << 16;

        if (i + 1 < len)
            v |= (uint32_t)(unsigned char)plain[i + 1] << 8;
        if (i + 2 < len)
            v |= (unsigned char)plain[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    free(plain);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char user[HTTP_AUTH_USER_MAX], password[HTTP_AUTH_PASSWORD_MAX];
    char user2[HTTP_AUTH_USER_MAX], password2[HTTP_AUTH_PASSWORD_MAX];
    char *text = malloc(size + 1), *header, *colon;
    int r;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    (void)http_accepts_gzip(text);

    r = http_basic_credentials(text, user, password);
    if (r != 0 && r != -EINVAL && r != -E2BIG)
        abort();
    if (r == 0) {
        header = encode_basic(user, password);
        if (http_basic_credentials(header, user2, password2) || strcmp(user, user2) || strcmp(password, password2))
            abort();
        free(header);
    }

    /* the input as user:password (up to its first NUL) */
    colon = strchr(text, ':');
    if (colon) {
        *colon = '\0';
        header = encode_basic(text, colon + 1);
        r = http_basic_credentials(header, user, password);
        if (strlen(text) < HTTP_AUTH_USER_MAX && strlen(colon + 1) < HTTP_AUTH_PASSWORD_MAX) {
            if (r || strcmp(user, text) || strcmp(password, colon + 1))
                abort();
        } else if (r != -E2BIG && r != -EINVAL) {
            abort();
        }
        free(header);
    }
    free(text);
    return 0;
}
