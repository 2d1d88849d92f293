/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Basic auth's budgets and hygiene, with bcrypt and explicit_bzero watched
 * (linked with --wrap): one client's flood spends its
 * own budget, strangers never starve a verified client nor a scraper's
 * first check after a restart, an unknown user costs the dearest hash, and
 * decoded credentials are wiped on every path.  Time is simulated.
 */
#include <crypt.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "agent/web/http_auth.h"

#include "auth_helpers.h"

/* Linked with --wrap: http_auth.c's calls come here first. */
char *__real_crypt_rn(const char *phrase, const char *setting, void *data, int size);
char *__wrap_crypt_rn(const char *phrase, const char *setting, void *data, int size);
void __real_explicit_bzero(void *s, size_t n);
void __wrap_explicit_bzero(void *s, size_t n);
/* what explicit_bzero() becomes with _FORTIFY_SOURCE (Debian's builds) */
void __real___explicit_bzero_chk(void *s, size_t n, size_t size);
void __wrap___explicit_bzero_chk(void *s, size_t n, size_t size);

#define MS 1000000ULL

static char last_setting[64];
static unsigned int wiped[8]; /* explicit_bzero calls: [0] 32 bytes, [1] 256, [2] 512, [3] a crypt_data, [4] other */

char *__wrap_crypt_rn(const char *phrase, const char *setting, void *data, int size)
{
    snprintf(last_setting, sizeof(last_setting), "%s", setting);
    return __real_crypt_rn(phrase, setting, data, size);
}

static void count_wipe(size_t n)
{
    wiped[n == 32 ? 0 : n == 256 ? 1 : n == 512 ? 2 : n == sizeof(struct crypt_data) ? 3 : 4]++;
}

void __wrap_explicit_bzero(void *s, size_t n)
{
    count_wipe(n);
    __real_explicit_bzero(s, n);
}

void __wrap___explicit_bzero_chk(void *s, size_t n, size_t size)
{
    count_wipe(n);
    __real___explicit_bzero_chk(s, n, size);
}

#ifdef OLD_API /* to show these tests failing on the code before per-client budgets */
#define check(a, auth, addr, now) http_auth_check((a), (auth), (now))
#else
#define check(a, auth, addr, now) http_auth_check((a), (auth), (const struct sockaddr *)(addr), sizeof(*(addr)), (now))
#endif

static struct sockaddr_in v4(const char *text)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};

    assert_int_equal(inet_pton(AF_INET, text, &sin.sin_addr), 1);
    return sin;
}

struct fixture {
    struct web_user users[2];
    struct web_config config;
    struct http_auth *auth;
    char *right, *wrong, *theirs;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    f->users[0] = (struct web_user){.name = (char *)"prometheus", .hash = bcrypt_hash("right", 4)};
    f->users[1] = (struct web_user){.name = (char *)"other", .hash = bcrypt_hash("theirs", 5)};
    f->config = (struct web_config){.users = f->users, .nr_users = 2};
    f->auth = http_auth_new(&f->config);
    assert_non_null(f->auth);
    f->right = basic("prometheus:right");
    f->wrong = basic("prometheus:wrong");
    f->theirs = basic("other:theirs");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    http_auth_free(f->auth);
    free(f->users[0].hash);
    free(f->users[1].hash);
    free(f->right);
    free(f->wrong);
    free(f->theirs);
    free(f);
    return 0;
}

/* A flood of wrong passwords from one address, then a scraper's first check from another. */
static void test_flood_spends_its_own_budget(void **state)
{
    struct fixture *f = *state;
    struct sockaddr_in flood = v4("192.0.2.66"), scraper = v4("198.51.100.9");
    struct http_auth_stats st;
    uint64_t now = 1000 * MS;
    unsigned int denied = 0;

    for (int i = 0; i < 300; i++, now += 10 * MS) /* 100 a second for 3 s */
        denied += check(f->auth, f->wrong, &flood, now) == HTTP_AUTH_DENIED;
    /* its own budget: 2 at once, then 1 a second */
    assert_in_range(denied, 4, 5);
    assert_int_equal(check(f->auth, f->right, &scraper, now), HTTP_AUTH_OK);
    http_auth_get_stats(f->auth, &st);
    assert_int_equal(st.verified, denied + 1);
#ifndef OLD_API
    assert_true(st.busy_client >= 290);
#endif
}

/* Strangers from many addresses spend the strangers' budget; a verified client still gets its checks. */
static void test_verified_never_starved(void **state)
{
    struct fixture *f = *state;
    struct sockaddr_in scraper = v4("198.51.100.9");
    uint64_t now = 1000 * MS;

    assert_int_equal(check(f->auth, f->right, &scraper, now), HTTP_AUTH_OK);
    for (int i = 0; i < 200; i++, now += 10 * MS) {
        char addr[32];
        struct sockaddr_in stranger;

        snprintf(addr, sizeof(addr), "203.0.113.%d", i % 100);
        stranger = v4(addr);
        check(f->auth, f->wrong, &stranger, now);
        /* the verified scraper's other user (not remembered yet), every 0.5 s */
        if (i % 50 == 25)
            assert_int_equal(check(f->auth, f->theirs, &scraper, now), HTTP_AUTH_OK);
    }
}

/*
 * After a restart nothing is verified: three flooding addresses, each
 * within its own budget, together ask for more than the strangers' budget
 * earns; a scraper's first check still runs at once.
 */
static void test_first_check_after_restart(void **state)
{
    struct fixture *f = *state;
    struct sockaddr_in a = v4("192.0.2.1"), b = v4("192.0.2.2"), c = v4("192.0.2.3"), scraper = v4("198.51.100.9");
    uint64_t now = 1000 * MS;

    for (int i = 0; i < 500; i++, now += 10 * MS) {
        check(f->auth, f->wrong, &a, now);
        check(f->auth, f->wrong, &b, now + 3 * MS);
        check(f->auth, f->wrong, &c, now + 6 * MS);
    }
    /* between two of the flood's checks, not at the moment a check is earned */
    assert_int_equal(check(f->auth, f->right, &scraper, now - 3 * MS), HTTP_AUTH_OK);
}

/* An unknown user is checked against the dearest hash, whichever user comes first. */
static void test_unknown_user_costs_the_dearest(void **state)
{
    struct fixture *f = *state;
    struct sockaddr_in client = v4("192.0.2.7");
    char *unknown = basic("nobody:right");

    assert_int_equal(check(f->auth, unknown, &client, 1000 * MS), HTTP_AUTH_DENIED);
    assert_int_equal(strncmp(last_setting, f->users[1].hash, 29), 0); /* "$2b$05$" and the salt */
    assert_int_equal(check(f->auth, f->right, &client, 1000 * MS), HTTP_AUTH_OK);
    assert_int_equal(strncmp(last_setting, f->users[0].hash, 29), 0);
    free(unknown);
}

/* What was decoded is wiped on the paths that fail as on the others. */
static void test_credentials_wiped(void **state)
{
    static const char *const refused[] = {
        "Basic dXNlcg==",     /* "user": no colon */
        "Basic YQA6Yg==",     /* "a\0:b" */
        "Basic dXNlcjpwYXN=", /* bits left over */
    };
    struct fixture *f = *state;
    struct sockaddr_in client = v4("192.0.2.7");
    char user[HTTP_AUTH_USER_MAX], password[HTTP_AUTH_PASSWORD_MAX], big[1024];

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        memset(wiped, 0, sizeof(wiped));
        memset(user, 'u', sizeof(user));
        memset(password, 'p', sizeof(password));
        assert_int_equal(http_basic_credentials(refused[i], user, password), -EINVAL);
        assert_true(wiped[2] >= 1); /* the decoded bytes */
        for (size_t j = 0; j < sizeof(password); j++)
            assert_int_equal(password[j], 0);
        for (size_t j = 0; j < sizeof(user); j++)
            assert_int_equal(user[j], 0);
    }
    /* a password too long for its buffer */
    memset(big, 'Q', 902);
    memcpy(big, "Basic ", 6);
    memcpy(big + 6, "dTpw", 4); /* "u:p" then 'Q's */
    big[902] = '\0';
    memset(wiped, 0, sizeof(wiped));
    assert_int_equal(http_basic_credentials(big, user, password), -E2BIG);
    assert_true(wiped[2] >= 1);

    /* a check: the user, the password, their HMACs and bcrypt's work area */
    memset(wiped, 0, sizeof(wiped));
    assert_int_equal(check(f->auth, f->wrong, &client, 1000 * MS), HTTP_AUTH_DENIED);
    assert_true(wiped[0] >= 2);
    assert_true(wiped[1] >= 2);
    assert_true(wiped[3] >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_flood_spends_its_own_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verified_never_starved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_check_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_user_costs_the_dearest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_credentials_wiped, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
