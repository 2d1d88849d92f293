/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's endpoint parts on their own: Accept-Encoding, the gzip
 * encoder, the Authorization header, the bcrypt cache and budget, and the
 * --web-config parser.
 */
#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <cmocka.h>
#include <zlib.h>

#include "export/export.h"

#include "agent/web/http_auth.h"
#include "agent/web/http_encoding.h"
#include "agent/web/web_config.h"

#include "auth_helpers.h"

#define MS 1000000ULL

/* ---- Accept-Encoding ---------------------------------------------------------- */

static void test_accepts_gzip(void **state)
{
    static const char *const yes[] = {
        "gzip", "GZip", "x-gzip", "deflate, gzip", "gzip;q=0.001", "gzip ;q=1", "gzip; Q=0.5", "*",
        "*;q=0.1", "br, *", "gzip;q=0, x-gzip;q=1", " , ,gzip", "gzip;level=9", "identity;q=0, gzip",
    };
    static const char *const no[] = {
        "", "identity", "deflate", "br", "gzip;q=0", "gzip;q=0.000", "gzip;q=0, *", "*;q=0", "gzip;q=",
        "gzip;q=1.5", "gzip;q=2", "gzip;q=0.0001", "gzip;q=-1", "gzip;q", "gzip;;q=1x", "gzipx", "xgzip",
        "gzip q=1", "*;q=0, gzip;q=0",
    };

    (void)state;
    assert_false(http_accepts_gzip(NULL));
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        if (!http_accepts_gzip(yes[i]))
            fail_msg("'%s' should accept gzip", yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (http_accepts_gzip(no[i]))
            fail_msg("'%s' should not accept gzip", no[i]);
}

/* A snapshot whose text is some n * 2.6 KB: many of EXPORT_RENDER_PIECE. */
static struct export_snapshot *big_snapshot(uint32_t n)
{
    struct export_snapshot *s = export_snapshot_new();

    assert_non_null(s);
    s->backend = "emu";
    s->nr_domains = n;
    s->domains = calloc(n, sizeof(*s->domains));
    assert_non_null(s->domains);
    for (uint32_t i = 0; i < n; i++) {
        struct export_domain *d = &s->domains[i];

        d->domid = i + 1;
        snprintf(d->name, sizeof(d->name), "guest-%u-\xff", i); /* an invalid byte: U+FFFD */
        d->nr_vcpus = 4;
        d->vcpus = calloc(4, sizeof(*d->vcpus));
        assert_non_null(d->vcpus);
        for (int v = 0; v < 4; v++) {
            d->vcpus[v].state = (uint8_t)v;
            d->vcpus[v].time_valid[v] = true;
            d->vcpus[v].time_ns[v] = 1000000007ULL * (i + 1);
        }
    }
    return s;
}

/* Inflate a gzip member whole; the text, NUL-terminated, in a malloc'd buffer. */
static char *gunzip(const char *gz, size_t gz_len, size_t max, size_t *ret_len)
{
    char *back = malloc(max + 1);
    z_stream z = {0};

    assert_non_null(back);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)(uintptr_t)gz;
    z.avail_in = (uInt)gz_len;
    z.next_out = (Bytef *)back;
    z.avail_out = (uInt)max;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    *ret_len = z.total_out;
    back[z.total_out] = '\0';
    inflateEnd(&z);
    return back;
}

static void test_gzip_round_trip(void **state)
{
    struct export_snapshot *s = big_snapshot(4000);
    const char *text;
    char *out = NULL, *back;
    size_t text_len = 0, out_len = 0, back_len = 0;

    (void)state;
    for (int f = 0; f < 3; f++) {
        text = export_snapshot_render(s, (enum export_format)f, &text_len);
        assert_non_null(text);
        assert_true(text_len > 8 * EXPORT_RENDER_PIECE);
        assert_int_equal(http_gzip_snapshot(s, (enum export_format)f, &out, &out_len), 0);
        assert_true(out_len < text_len / 5);
        assert_int_equal((unsigned char)out[0], 0x1f); /* gzip magic */
        assert_int_equal((unsigned char)out[1], 0x8b);
        back = gunzip(out, out_len, text_len + 1, &back_len);
        /* the same bytes as the whole rendering, made in pieces */
        assert_int_equal(back_len, text_len);
        assert_memory_equal(back, text, text_len);
        free(back);
        free(out);
    }
    export_snapshot_unref(s);
}

/* ---- rendering in pieces --------------------------------------------------------- */

struct collected {
    char *data;
    size_t len, cap, pieces, largest;
    size_t fail_at; /* the piece refused with -EPIPE; 0: none */
};

static int collect(void *ctx, const char *data, size_t len)
{
    struct collected *c = ctx;

    c->pieces++;
    if (c->fail_at && c->pieces == c->fail_at)
        return -EPIPE;
    if (len > c->largest)
        c->largest = len;
    assert_true(c->len + len <= c->cap);
    memcpy(c->data + c->len, data, len);
    c->len += len;
    return 0;
}

static void test_render_to_pieces(void **state)
{
    struct export_snapshot *s = big_snapshot(2000);
    struct collected c = {0};
    const char *text;
    size_t text_len = 0;

    (void)state;
    for (int f = 0; f < 3; f++) {
        text = export_snapshot_render(s, (enum export_format)f, &text_len);
        assert_non_null(text);
        c = (struct collected){.data = malloc(text_len), .cap = text_len};
        assert_non_null(c.data);
        assert_int_equal(export_snapshot_render_to(s, (enum export_format)f, collect, &c), 0);
        assert_int_equal(c.len, text_len);
        assert_memory_equal(c.data, text, text_len);
        /* never more than a piece held: no line here is longer than one */
        assert_true(c.largest <= EXPORT_RENDER_PIECE);
        assert_true(c.pieces >= text_len / EXPORT_RENDER_PIECE);
        /* a sink that refuses ends the rendering with its error, and is not called again */
        c.len = 0;
        c.pieces = 0;
        c.fail_at = 3;
        assert_int_equal(export_snapshot_render_to(s, (enum export_format)f, collect, &c), -EPIPE);
        assert_int_equal(c.pieces, 3);
        assert_true(c.len > 0 && c.len <= 2 * (size_t)EXPORT_RENDER_PIECE);
        free(c.data);
    }
    export_snapshot_unref(s);
}

/* ---- the snapshot's cache of the encoding -------------------------------------- */

static int encoder_calls, encoder_fails;

static int counting_gzip(const struct export_snapshot *s, enum export_format format, char **ret_data, size_t *ret_len)
{
    encoder_calls++;
    if (encoder_fails)
        return -ENOMEM;
    return http_gzip_snapshot(s, format, ret_data, ret_len);
}

static void test_snapshot_encoded(void **state)
{
    struct export_snapshot *s = export_snapshot_new();
    const char *text, *gz, *again;
    size_t text_len = 0, gz_len = 0, again_len = 0;
    char *back;
    uLongf back_len;

    (void)state;
    assert_non_null(s);
    s->backend = "emu";
    encoder_fails = 1;
    errno = 0;
    assert_null(export_snapshot_render_encoded(s, EXPORT_FORMAT_PROMETHEUS, counting_gzip, &gz_len));
    assert_int_equal(errno, ENOMEM);
    encoder_fails = 0;
    gz = export_snapshot_render_encoded(s, EXPORT_FORMAT_PROMETHEUS, counting_gzip, &gz_len);
    assert_non_null(gz);
    again = export_snapshot_render_encoded(s, EXPORT_FORMAT_PROMETHEUS, counting_gzip, &again_len);
    assert_ptr_equal(again, gz); /* kept, not made again */
    assert_int_equal(again_len, gz_len);
    assert_int_equal(encoder_calls, 2);
    /* the text it encodes is the snapshot's own rendering */
    text = export_snapshot_render(s, EXPORT_FORMAT_PROMETHEUS, &text_len);
    assert_non_null(text);
    back_len = (uLongf)text_len + 1;
    back = malloc(back_len);
    {
        z_stream z = {0};

        assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
        z.next_in = (Bytef *)(uintptr_t)gz;
        z.avail_in = (uInt)gz_len;
        z.next_out = (Bytef *)back;
        z.avail_out = (uInt)back_len;
        assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
        assert_int_equal(z.total_out, text_len);
        inflateEnd(&z);
    }
    assert_memory_equal(back, text, text_len);
    free(back);
    /* another format: its own encoding */
    assert_non_null(export_snapshot_render_encoded(s, EXPORT_FORMAT_JSON, counting_gzip, &again_len));
    assert_int_equal(encoder_calls, 3);
    export_snapshot_unref(s); /* frees the encodings too (ASan's leak check) */
}

/* ---- Authorization ------------------------------------------------------------- */

static void test_basic_credentials(void **state)
{
    char user[HTTP_AUTH_USER_MAX], password[HTTP_AUTH_PASSWORD_MAX];
    char big[1024];

    (void)state;
    assert_int_equal(http_basic_credentials("Basic dXNlcjpwYXNz", user, password), 0); /* user:pass */
    assert_string_equal(user, "user");
    assert_string_equal(password, "pass");
    assert_int_equal(http_basic_credentials("basic  dXNlcjpwYXNz  ", user, password), 0);
    /* "a:b:c": the password holds the later colons */
    assert_int_equal(http_basic_credentials("Basic YTpiOmM=", user, password), 0);
    assert_string_equal(user, "a");
    assert_string_equal(password, "b:c");
    /* ":" : empty user and password */
    assert_int_equal(http_basic_credentials("Basic Og==", user, password), 0);
    assert_string_equal(user, "");
    assert_string_equal(password, "");
    assert_int_equal(http_basic_credentials("Basic Og", user, password), 0); /* no padding */

    assert_int_equal(http_basic_credentials(NULL, user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Bearer dXNlcjpwYXNz", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Basicx dXNlcjpwYXNz", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Basic", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Basic dXNlcg==", user, password), -EINVAL);    /* no colon */
    assert_int_equal(http_basic_credentials("Basic dXNlcjpwYXNz x", user, password), -EINVAL); /* two tokens */
    assert_int_equal(http_basic_credentials("Basic dXNlcjpwYXN!", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Basic dXNlcjpwYXN=", user, password), -EINVAL); /* bits left */
    assert_int_equal(http_basic_credentials("Basic dXNlcjpwYXNz=", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Basic d", user, password), -EINVAL);
    assert_int_equal(http_basic_credentials("Basic YQA6Yg==", user, password), -EINVAL); /* "a\0:b" */
    /* 300 bytes of user */
    memset(big, 'Q', 402);
    memcpy(big, "Basic ", 6);
    memcpy(big + 402, "OnBh", 5); /* ...":pa" */
    assert_int_equal(http_basic_credentials(big, user, password), -E2BIG);
}

static void test_auth_remembers_and_budgets(void **state)
{
    struct web_user users[2] = {{.name = (char *)"prometheus"}, {.name = (char *)"other"}};
    struct web_config config = {.users = users, .nr_users = 2};
    struct sockaddr_in client = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    const struct sockaddr *sa = (const struct sockaddr *)&client;
    socklen_t len = sizeof(client);
    struct http_auth_stats st;
    struct http_auth *a;
    char *right, *wrong, *unknown, *others;
    uint64_t now = 1000 * MS;

    (void)state;
    users[0].hash = bcrypt_hash("right", 4);
    users[1].hash = bcrypt_hash("theirs", 4);
    a = http_auth_new(&config);
    assert_non_null(a);
    right = basic("prometheus:right");
    wrong = basic("prometheus:wrong");
    unknown = basic("nobody:right");
    others = basic("prometheus:theirs");

    assert_int_equal(http_auth_check(a, NULL, sa, len, now), HTTP_AUTH_DENIED);
    assert_int_equal(http_auth_check(a, "Basic !", sa, len, now), HTTP_AUTH_DENIED);
    http_auth_get_stats(a, &st);
    assert_int_equal(st.verified, 0); /* no bcrypt for what does not parse */

    /* verified once, then remembered */
    assert_int_equal(http_auth_check(a, right, sa, len, now), HTTP_AUTH_OK);
    for (int i = 0; i < 10; i++)
        assert_int_equal(http_auth_check(a, right, sa, len, now), HTTP_AUTH_OK);
    http_auth_get_stats(a, &st);
    assert_int_equal(st.verified, 1);
    assert_int_equal(st.remembered, 10);

    /* a wrong password costs a bcrypt: the client's second of 2 */
    assert_int_equal(http_auth_check(a, wrong, sa, len, now), HTTP_AUTH_DENIED);
    http_auth_get_stats(a, &st);
    assert_int_equal(st.verified, 2);
    /* the client's budget is spent: busy, and the remembered password still in */
    assert_int_equal(http_auth_check(a, unknown, sa, len, now), HTTP_AUTH_BUSY);
    assert_int_equal(http_auth_check(a, right, sa, len, now), HTTP_AUTH_OK);
    assert_int_equal(http_auth_check(a, others, sa, len, now + 999 * MS), HTTP_AUTH_BUSY);
    http_auth_get_stats(a, &st);
    assert_int_equal(st.verified, 2);
    assert_int_equal(st.busy, 2);
    assert_int_equal(st.busy_client, 2);
    /* one more each second, two at most; unknown users and others' passwords cost one too */
    assert_int_equal(http_auth_check(a, unknown, sa, len, now + 1000 * MS), HTTP_AUTH_DENIED);
    assert_int_equal(http_auth_check(a, others, sa, len, now + 1500 * MS), HTTP_AUTH_BUSY);
    assert_int_equal(http_auth_check(a, others, sa, len, now + 2000 * MS), HTTP_AUTH_DENIED);
    now += 60000 * MS;
    for (int i = 0; i < 2; i++)
        assert_int_equal(http_auth_check(a, wrong, sa, len, now), HTTP_AUTH_DENIED);
    assert_int_equal(http_auth_check(a, wrong, sa, len, now), HTTP_AUTH_BUSY);
    http_auth_get_stats(a, &st);
    assert_int_equal(st.verified, 6);

    /* the other user, with its own password */
    free(others);
    others = basic("other:theirs");
    now += 60000 * MS;
    assert_int_equal(http_auth_check(a, others, sa, len, now), HTTP_AUTH_OK);
    assert_int_equal(http_auth_check(a, right, sa, len, now), HTTP_AUTH_OK);

    http_auth_free(a);
    http_auth_free(NULL);
    free(right);
    free(wrong);
    free(unknown);
    free(others);
    free(users[0].hash);
    free(users[1].hash);
}

/* ---- --web-config --------------------------------------------------------------- */

static int parse(const char *text, struct web_config **ret, char *err)
{
    return web_config_parse(text, strlen(text), "/etc/xenstats", ret, err, 256);
}

static void test_web_config(void **state)
{
    struct web_config *c = NULL;
    char err[256], text[1024], prio[128];
    char *hash = bcrypt_hash("pw", 4);

    (void)state;
    assert_int_equal(parse("", &c, err), 0);
    assert_false(c->tls);
    assert_int_equal(c->nr_users, 0);
    web_config_free(c);
    assert_int_equal(parse("# nothing\n---\n", &c, err), 0);
    web_config_free(c);
    assert_int_equal(parse("tls_server_config:\nbasic_auth_users: ~\n", &c, err), 0);
    assert_false(c->tls);
    web_config_free(c);

    snprintf(text, sizeof(text),
             "tls_server_config:\n  cert_file: tls/cert.pem\n  key_file: /abs/key.pem\n"
             "  client_ca_file: \"ca.pem\"\n  client_auth_type: VerifyClientCertIfGiven\n"
             "  max_version: TLS12\n  min_version: TLS11\n"
             "basic_auth_users: {\"a b\": '%s', c: \"%s\"}\n",
             hash, hash);
    assert_int_equal(parse(text, &c, err), 0);
    assert_true(c->tls);
    assert_string_equal(c->cert_file, "/etc/xenstats/tls/cert.pem");
    assert_string_equal(c->key_file, "/abs/key.pem");
    assert_string_equal(c->client_ca_file, "/etc/xenstats/ca.pem");
    assert_int_equal(c->client_auth, WEB_CLIENT_VERIFY_IF_GIVEN);
    assert_int_equal(c->min_version, WEB_TLS11);
    assert_int_equal(c->max_version, WEB_TLS12);
    assert_int_equal(c->nr_users, 2);
    assert_string_equal(c->users[0].name, "a b");
    assert_string_equal(c->users[1].hash, hash);
    web_config_priorities(c, prio, sizeof(prio));
    assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.2");
    web_config_free(c);

    assert_int_equal(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n", &c, err), 0);
    assert_int_equal(c->min_version, WEB_TLS12);
    assert_int_equal(c->max_version, WEB_TLS13);
    web_config_free(c);

    c = NULL;
    assert_int_equal(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  foo: 1\n", &c, err), -EINVAL);
    assert_null(c);
    assert_string_equal(err, "line 4: unknown key 'foo' in tls_server_config");
    assert_int_equal(parse("x: 1\n", &c, err), -EINVAL);
    assert_string_equal(err, "line 1: unknown key 'x'");
    assert_int_equal(parse("http_server_config:\n  http2: false\n", &c, err), -EINVAL);
    assert_string_equal(err, "line 1: http_server_config is not supported by xenstats agent");
    assert_int_equal(parse("basic_auth_users:\n  u: $2y$10$short\n", &c, err), -EINVAL);
    /* bcrypt costs up to 14 (WEB_BCRYPT_COST_MAX) are taken; 15 and 31 are not */
    for (unsigned long cost = 4; cost <= 31; cost++) {
        char salt[CRYPT_GENSALT_OUTPUT_SIZE], yaml[256];

        assert_non_null(crypt_gensalt_rn("$2y$", cost, NULL, 0, salt, sizeof(salt)));
        /* a made-up checksum: parsing never runs bcrypt */
        snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  u: '%s%s'\n", salt, "0123456789012345678901234567890");
        c = NULL;
        if (cost <= 14) {
            assert_int_equal(parse(yaml, &c, err), 0);
            web_config_free(c);
        } else {
            assert_int_equal(parse(yaml, &c, err), -EINVAL);
            assert_non_null(strstr(err, "line 2: basic_auth_users: u: bcrypt cost "));
            assert_non_null(strstr(err, " is above 14 "));
        }
    }
    c = NULL;
    assert_int_equal(parse("basic_auth_users:\n  \"u:v\": x\n", &c, err), -EINVAL);
    assert_non_null(strstr(err, "cannot be a user name"));
    assert_int_equal(parse("basic_auth_users: [a, b]\n", &c, err), -EINVAL);
    assert_string_equal(err, "line 1: basic_auth_users: expected a mapping");
    assert_int_equal(parse("tls_server_config:\n  cert_file: [a]\n  key_file: b\n", &c, err), -EINVAL);
    assert_string_equal(err, "line 2: cert_file: expected a file name");
    assert_int_equal(parse("tls_server_config:\n  cert_file: \"a\\0b\"\n  key_file: b\n", &c, err), -EINVAL);
    assert_int_equal(parse("? [a]\n: b\n", &c, err), -EINVAL);
    assert_int_equal(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n", &c, err),
                     -EINVAL);
    assert_non_null(strstr(err, "client_ca_file without a client_auth_type"));
    assert_int_equal(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
                           "RequestClientCert\n",
                           &c, err),
                     -EINVAL);
    assert_int_equal(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
                           "  max_version: TLS12\n",
                           &c, err),
                     -EINVAL);
    assert_int_equal(parse("a: 1\n---\nb: 2\n", &c, err), -EINVAL);
    assert_int_equal(parse("tls_server_config: &x\n  cert_file: a\n  key_file: b\nbasic_auth_users: *x\n", &c, err),
                     -EINVAL); /* an alias is followed, and its keys are not users' */
    assert_int_equal(parse("\"tls\\x01\": 1\n", &c, err), -EINVAL);
    assert_string_equal(err, "line 1: unknown key 'tls?'");
    assert_int_equal(parse("{", &c, err), -EINVAL);
    assert_non_null(strstr(err, "not YAML"));
    web_config_free(NULL);
    free(hash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_gzip),
        cmocka_unit_test(test_gzip_round_trip),
        cmocka_unit_test(test_render_to_pieces),
        cmocka_unit_test(test_snapshot_encoded),
        cmocka_unit_test(test_basic_credentials),
        cmocka_unit_test(test_auth_remembers_and_budgets),
        cmocka_unit_test(test_web_config),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
