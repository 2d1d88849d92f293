/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the basic auth tests share: a bcrypt hash made here, and an Authorization header value. */
#ifndef XENSTATS_TESTS_AUTH_HELPERS_H
#define XENSTATS_TESTS_AUTH_HELPERS_H

#include <crypt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *bcrypt_hash(const char *password, unsigned long cost)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data data = {0};
    const char *h;

    assert_non_null(crypt_gensalt_rn("$2b$", cost, NULL, 0, salt, sizeof(salt)));
    h = crypt_rn(password, salt, &data, sizeof(data));
    assert_non_null(h);
    return strdup(h);
}

static char *basic(const char *user_password)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = strlen(user_password), o = 6;
    char *out = malloc(6 + (len + 2) / 3 * 4 + 1);

    memcpy(out, "Basic ", 6);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)user_password[i] << 16;

        if (i + 1 < len)
            v |= (uint32_t)(unsigned char)user_password[i + 1] << 8;
        if (i + 2 < len)
            v |= (unsigned char)user_password[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

#endif
