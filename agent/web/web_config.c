/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The --web-config file: see web_config.h.  libyaml builds the document
 * (quoting, escapes, flow and block styles, comments are all YAML a user
 * may write: a bcrypt hash is often quoted, sometimes not); this file
 * walks the two levels the format has and checks every key and value.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <yaml.h>

#include "web_config.h"

#define CONFIG_MAX (1 << 20) /* the file; a PEM file too */
#define USERS_MAX 1024

struct parse {
    yaml_document_t *doc;
    const char *base_dir;
    struct web_config *config;
    char *err;
    size_t err_size;
};

static int failf(struct parse *p, const yaml_node_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int failf(struct parse *p, const yaml_node_t *at, const char *fmt, ...)
{
    size_t used = 0;
    va_list ap;

    if (!p->err_size)
        return -EINVAL;
    if (at)
        used = (size_t)snprintf(p->err, p->err_size, "line %zu: ", (size_t)at->start_mark.line + 1);
    if (used < p->err_size) {
        va_start(ap, fmt);
        vsnprintf(p->err + used, p->err_size - used, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar with a NUL inside (YAML's "\0") is not one a file name or hash can be. */
static bool has_nul(const yaml_node_t *n)
{
    return strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

static bool is_null(const yaml_node_t *n)
{
    const char *s = scalar(n);

    return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* For a key's error message: printable ASCII only, at most 64 bytes. */
static const char *printable(const char *s, char buf[72])
{
    size_t i;

    for (i = 0; s[i] && i < 64; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    buf[i] = '\0';
    if (s[i])
        strcpy(buf + i, "...");
    return buf;
}

/* The file name as given, or under base_dir when relative. */
static int set_path(struct parse *p, const yaml_node_t *value, const char *key, char **slot)
{
    const char *s = scalar(value);
    int n;

    if (!s || !*s || has_nul(value))
        return failf(p, value, "%s: expected a file name", key);
    free(*slot);
    if (s[0] == '/' || !p->base_dir)
        n = asprintf(slot, "%s", s);
    else
        n = asprintf(slot, "%s/%s", p->base_dir, s);
    if (n < 0) {
        *slot = NULL;
        return -ENOMEM;
    }
    return 0;
}

static int parse_version(struct parse *p, const yaml_node_t *value, const char *key, enum web_tls_version *slot)
{
    static const char *const names[] = {[WEB_TLS10] = "TLS10", [WEB_TLS11] = "TLS11", [WEB_TLS12] = "TLS12",
                                        [WEB_TLS13] = "TLS13"};
    const char *s = scalar(value);

    for (int v = WEB_TLS10; s && v <= WEB_TLS13; v++) {
        if (!strcmp(s, names[v])) {
            *slot = (enum web_tls_version)v;
            return 0;
        }
    }
    return failf(p, value, "%s: expected TLS10, TLS11, TLS12 or TLS13", key);
}

static int parse_client_auth(struct parse *p, const yaml_node_t *value)
{
    const char *s = scalar(value);

    if (s && (!strcmp(s, "NoClientCert") || !*s))
        p->config->client_auth = WEB_CLIENT_NONE;
    else if (s && !strcmp(s, "VerifyClientCertIfGiven"))
        p->config->client_auth = WEB_CLIENT_VERIFY_IF_GIVEN;
    else if (s && !strcmp(s, "RequireAndVerifyClientCert"))
        p->config->client_auth = WEB_CLIENT_REQUIRE_AND_VERIFY;
    else if (s && (!strcmp(s, "RequestClientCert") || !strcmp(s, "RequireAnyClientCert")))
        return failf(p, value, "client_auth_type: %s is not supported (a certificate that is not verified "
                               "proves nothing): use VerifyClientCertIfGiven or RequireAndVerifyClientCert", s);
    else
        return failf(p, value, "client_auth_type: expected NoClientCert, VerifyClientCertIfGiven or "
                               "RequireAndVerifyClientCert");
    return 0;
}

/* Keys of exporter-toolkit's format the agent does not implement. */
static bool known_unsupported(const char *key)
{
    static const char *const keys[] = {"cert", "key", "client_ca", "cipher_suites", "curve_preferences",
                                       "prefer_server_cipher_suites", "client_allowed_sans",
                                       "http_server_config", "rate_limit"};

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(key, keys[i]))
            return true;
    return false;
}

static int unknown_key(struct parse *p, const yaml_node_t *key, const char *where)
{
    char buf[72];
    const char *name = printable(scalar(key), buf);

    if (known_unsupported(scalar(key)))
        return failf(p, key, "%s%s%s is not supported by xenstats agent", where, *where ? "." : "", name);
    return failf(p, key, "unknown key '%s'%s%s", name, *where ? " in " : "", where);
}

/* The mapping's pairs, each key a scalar seen once. */
static int check_mapping(struct parse *p, const yaml_node_t *map, const char *what)
{
    const yaml_node_pair_t *a, *b;

    if (map->type != YAML_MAPPING_NODE)
        return failf(p, map, "%s: expected a mapping", what);
    for (a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
        const yaml_node_t *key = yaml_document_get_node(p->doc, a->key);

        if (!scalar(key))
            return failf(p, key, "%s: keys must be plain strings", what);
        for (b = map->data.mapping.pairs.start; b < a; b++) {
            const yaml_node_t *other = yaml_document_get_node(p->doc, b->key);

            if (!strcmp(scalar(other), scalar(key))) {
                char buf[72];

                return failf(p, key, "%s: '%s' is given twice", what, printable(scalar(key), buf));
            }
        }
    }
    return 0;
}

static int parse_tls(struct parse *p, const yaml_node_t *map)
{
    struct web_config *c = p->config;
    int r = check_mapping(p, map, "tls_server_config");

    for (const yaml_node_pair_t *pair = map->data.mapping.pairs.start; !r && pair < map->data.mapping.pairs.top;
         pair++) {
        const yaml_node_t *key = yaml_document_get_node(p->doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(p->doc, pair->value);
        const char *k = scalar(key);

        if (!strcmp(k, "cert_file"))
            r = set_path(p, value, k, &c->cert_file);
        else if (!strcmp(k, "key_file"))
            r = set_path(p, value, k, &c->key_file);
        else if (!strcmp(k, "client_ca_file"))
            r = set_path(p, value, k, &c->client_ca_file);
        else if (!strcmp(k, "client_auth_type"))
            r = parse_client_auth(p, value);
        else if (!strcmp(k, "min_version"))
            r = parse_version(p, value, k, &c->min_version);
        else if (!strcmp(k, "max_version"))
            r = parse_version(p, value, k, &c->max_version);
        else
            r = unknown_key(p, key, "tls_server_config");
    }
    if (r)
        return r;
    if (!c->cert_file || !c->key_file)
        return failf(p, map, "tls_server_config: cert_file and key_file are both needed");
    if (c->client_ca_file && c->client_auth == WEB_CLIENT_NONE)
        return failf(p, map, "tls_server_config: client_ca_file without a client_auth_type that verifies");
    if (!c->client_ca_file && c->client_auth != WEB_CLIENT_NONE)
        return failf(p, map, "tls_server_config: client_auth_type needs client_ca_file");
    if (c->min_version > c->max_version)
        return failf(p, map, "tls_server_config: min_version is above max_version");
    c->tls = true;
    return 0;
}

/*
 * A bcrypt hash: $2a$, $2b$ or $2y$, a two-digit cost, 53 characters of
 * its base64.  The cost is at most WEB_BCRYPT_COST_MAX: each check runs in
 * the agent's one HTTP thread, and a cost of 31 would hold it for hours.
 */
static bool is_bcrypt(const char *h, bool *ret_too_dear)
{
    static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    int cost;

    *ret_too_dear = false;
    if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || !h[2] || h[3] != '$' ||
        h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
        return false;
    cost = (h[4] - '0') * 10 + (h[5] - '0');
    if (cost < 4 || cost > 31)
        return false;
    if (strspn(h + 7, alphabet) != 53 || crypt_checksalt(h) != CRYPT_SALT_OK)
        return false;
    *ret_too_dear = cost > WEB_BCRYPT_COST_MAX;
    return !*ret_too_dear;
}

static int parse_users(struct parse *p, const yaml_node_t *map)
{
    struct web_config *c = p->config;
    int r = check_mapping(p, map, "basic_auth_users");
    size_t n;

    if (r)
        return r;
    n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n > USERS_MAX)
        return failf(p, map, "basic_auth_users: more than %d users", USERS_MAX);
    c->users = n ? calloc(n, sizeof(*c->users)) : NULL;
    if (n && !c->users)
        return -ENOMEM;
    for (const yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
        const yaml_node_t *key = yaml_document_get_node(p->doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(p->doc, pair->value);
        const char *user = scalar(key), *hash = scalar(value);
        char buf[72];
        bool too_dear = false;

        if (!*user || has_nul(key) || strchr(user, ':'))
            return failf(p, key, "basic_auth_users: '%s' cannot be a user name (empty, or with ':')",
                         printable(user, buf));
        if (hash && !has_nul(value) && !is_bcrypt(hash, &too_dear) && too_dear)
            return failf(p, value,
                         "basic_auth_users: %s: bcrypt cost %.2s is above %d (every check would hold "
                         "the endpoint for seconds or more): hash it again, e.g. `htpasswd -nBC 10 USER`",
                         printable(user, buf), hash + 4, WEB_BCRYPT_COST_MAX);
        if (!hash || has_nul(value) || !is_bcrypt(hash, &too_dear))
            return failf(p, value ? value : key,
                         "basic_auth_users: %s: expected a bcrypt hash ($2y$10$ and 53 more characters, "
                         "as `htpasswd -nBC 10 USER` prints)",
                         printable(user, buf));
        c->users[c->nr_users].name = strdup(user);
        c->users[c->nr_users].hash = strdup(hash);
        if (!c->users[c->nr_users].name || !c->users[c->nr_users].hash) {
            free(c->users[c->nr_users].name);
            free(c->users[c->nr_users].hash);
            return -ENOMEM;
        }
        c->nr_users++;
    }
    return 0;
}

static int parse_root(struct parse *p, const yaml_node_t *root)
{
    int r;

    if (!root || is_null(root))
        return 0; /* an empty file: no TLS, no users, as exporter-toolkit */
    r = check_mapping(p, root, "the configuration");
    for (const yaml_node_pair_t *pair = root->data.mapping.pairs.start; !r && pair < root->data.mapping.pairs.top;
         pair++) {
        const yaml_node_t *key = yaml_document_get_node(p->doc, pair->key);
        const yaml_node_t *value = yaml_document_get_node(p->doc, pair->value);
        const char *k = scalar(key);

        if (!strcmp(k, "tls_server_config"))
            r = is_null(value) ? 0 : parse_tls(p, value);
        else if (!strcmp(k, "basic_auth_users"))
            r = is_null(value) ? 0 : parse_users(p, value);
        else
            r = unknown_key(p, key, "");
    }
    return r;
}

void web_config_free(struct web_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nr_users; i++) {
        free(c->users[i].name);
        free(c->users[i].hash);
    }
    free(c->users);
    free(c->cert_file);
    free(c->key_file);
    free(c->client_ca_file);
    free(c->cert_pem);
    if (c->key_pem)
        explicit_bzero(c->key_pem, strlen(c->key_pem));
    free(c->key_pem);
    free(c->client_ca_pem);
    free(c);
}

int web_config_parse(const char *text, size_t len, const char *base_dir, struct web_config **ret_config, char *err,
                     size_t err_size)
{
    struct parse p = {.base_dir = base_dir, .err = err, .err_size = err_size};
    yaml_parser_t parser;
    yaml_document_t doc, next;
    int r;

    if (err_size)
        err[0] = '\0';
    if (len > CONFIG_MAX)
        return failf(&p, NULL, "larger than %d bytes", CONFIG_MAX);
    p.config = calloc(1, sizeof(*p.config));
    if (!p.config || !yaml_parser_initialize(&parser)) {
        free(p.config);
        return -ENOMEM;
    }
    p.config->min_version = WEB_TLS12;
    p.config->max_version = WEB_TLS13;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        r = parser.error == YAML_MEMORY_ERROR ? -ENOMEM
                                              : failf(&p, NULL, "line %zu: not YAML: %s%s%s",
                                                      (size_t)parser.problem_mark.line + 1,
                                                      parser.problem ? parser.problem : "error",
                                                      parser.context ? " " : "", parser.context ? parser.context : "");
        goto out_parser;
    }
    p.doc = &doc;
    r = parse_root(&p, yaml_document_get_root_node(&doc));
    if (r == 0 && yaml_document_get_root_node(&doc)) {
        /* a second document would be ignored: say so instead */
        if (!yaml_parser_load(&parser, &next)) {
            r = parser.error == YAML_MEMORY_ERROR ? -ENOMEM
                                                  : failf(&p, NULL, "line %zu: not YAML: %s",
                                                          (size_t)parser.problem_mark.line + 1,
                                                          parser.problem ? parser.problem : "error");
        } else {
            if (yaml_document_get_root_node(&next))
                r = failf(&p, yaml_document_get_root_node(&next), "a second YAML document: give one");
            yaml_document_delete(&next);
        }
    }
    yaml_document_delete(&doc);
out_parser:
    yaml_parser_delete(&parser);
    if (r < 0) {
        if (r == -ENOMEM && err_size)
            snprintf(err, err_size, "out of memory");
        web_config_free(p.config);
        return r;
    }
    *ret_config = p.config;
    return 0;
}

/* The whole file (at most CONFIG_MAX bytes), NUL-terminated. */
static int read_file(const char *path, char **ret_text, size_t *ret_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    size_t len = 0, cap = 4096;
    char *text = NULL, *grown;
    ssize_t n;
    int r = 0;

    if (fd < 0)
        return -errno;
    for (;;) {
        if (len + 1 >= cap || !text) {
            if (len + 1 >= cap)
                cap *= 2;
            if (cap > (size_t)CONFIG_MAX * 2) {
                r = -EFBIG;
                break;
            }
            grown = realloc(text, cap);
            if (!grown) {
                r = -ENOMEM;
                break;
            }
            text = grown;
        }
        n = read(fd, text + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            break;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > CONFIG_MAX) {
            r = -EFBIG;
            break;
        }
    }
    close(fd);
    if (r < 0) {
        free(text);
        return r;
    }
    text[len] = '\0';
    *ret_text = text;
    *ret_len = len;
    return 0;
}

static int read_pem(const char *path, const char *key, char **ret_pem, char *err, size_t err_size)
{
    size_t len;
    int r = read_file(path, ret_pem, &len);

    if (r < 0) {
        snprintf(err, err_size, "tls_server_config: %s %s: %s", key, path, strerror(-r));
        return r;
    }
    if (!strstr(*ret_pem, "-----BEGIN ")) {
        snprintf(err, err_size, "tls_server_config: %s %s: not a PEM file", key, path);
        free(*ret_pem);
        *ret_pem = NULL;
        return -EINVAL;
    }
    return 0;
}

/*
 * What libmicrohttpd will do with the PEM files, done once here so that a
 * key that is not the certificate's, or a file GnuTLS cannot read, is
 * refused with GnuTLS' reason before anything starts.
 */
/*
 * Each file parsed on its own first: GnuTLS 3.7's credentials leak what
 * they parsed of a certificate file that turns out broken.
 */
static int parse_pems(const struct web_config *c, const gnutls_datum_t *cert, const gnutls_datum_t *key, char *err,
                      size_t err_size)
{
    gnutls_x509_crt_t *certs = NULL;
    gnutls_x509_privkey_t pk = NULL;
    unsigned int n = 0;
    int r = gnutls_x509_crt_list_import2(&certs, &n, cert, GNUTLS_X509_FMT_PEM, 0);

    if (r < 0) {
        snprintf(err, err_size, "tls_server_config: cert_file %s: %s", c->cert_file, gnutls_strerror(r));
        return -EINVAL;
    }
    for (unsigned int i = 0; i < n; i++)
        gnutls_x509_crt_deinit(certs[i]);
    gnutls_free(certs);
    r = gnutls_x509_privkey_init(&pk);
    if (r < 0)
        return -ENOMEM;
    r = gnutls_x509_privkey_import(pk, key, GNUTLS_X509_FMT_PEM);
    gnutls_x509_privkey_deinit(pk);
    if (r < 0) {
        snprintf(err, err_size, "tls_server_config: key_file %s: %s", c->key_file, gnutls_strerror(r));
        return -EINVAL;
    }
    return 0;
}

static int check_tls(const struct web_config *c, char *err, size_t err_size)
{
    gnutls_certificate_credentials_t cred;
    gnutls_datum_t cert = {(unsigned char *)c->cert_pem, (unsigned int)strlen(c->cert_pem)};
    gnutls_datum_t key = {(unsigned char *)c->key_pem, (unsigned int)strlen(c->key_pem)};
    int r = parse_pems(c, &cert, &key, err, err_size);

    if (r < 0)
        return r;
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return -ENOMEM;
    r = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
    if (r < 0) {
        snprintf(err, err_size, "tls_server_config: cert_file %s, key_file %s: %s", c->cert_file, c->key_file,
                 gnutls_strerror(r));
    } else if (c->client_ca_pem) {
        gnutls_datum_t ca = {(unsigned char *)c->client_ca_pem, (unsigned int)strlen(c->client_ca_pem)};

        r = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
        if (r <= 0) {
            snprintf(err, err_size, "tls_server_config: client_ca_file %s: %s", c->client_ca_file,
                     r < 0 ? gnutls_strerror(r) : "no certificate in it");
            r = -1;
        }
    }
    gnutls_certificate_free_credentials(cred);
    return r < 0 ? -EINVAL : 0;
}

int web_config_load(const char *path, struct web_config **ret_config, char *err, size_t err_size)
{
    struct web_config *c = NULL;
    char *text = NULL, *dir = NULL, *slash;
    size_t len;
    int r;

    r = read_file(path, &text, &len);
    if (r < 0) {
        snprintf(err, err_size, "%s", strerror(-r));
        return r;
    }
    slash = strrchr(path, '/');
    if (slash) {
        dir = strndup(path, (size_t)(slash - path) + (slash == path));
        if (!dir) {
            free(text);
            return -ENOMEM;
        }
    }
    r = web_config_parse(text, len, dir, &c, err, err_size);
    free(text);
    free(dir);
    if (r < 0)
        return r;
    if (c->tls) {
        r = read_pem(c->cert_file, "cert_file", &c->cert_pem, err, err_size);
        if (!r)
            r = read_pem(c->key_file, "key_file", &c->key_pem, err, err_size);
        if (!r && c->client_ca_file)
            r = read_pem(c->client_ca_file, "client_ca_file", &c->client_ca_pem, err, err_size);
        if (!r)
            r = check_tls(c, err, err_size);
        if (r) {
            web_config_free(c);
            return r;
        }
    }
    *ret_config = c;
    return 0;
}

void web_config_priorities(const struct web_config *c, char *buf, size_t size)
{
    static const char *const names[] = {[WEB_TLS10] = "TLS1.0", [WEB_TLS11] = "TLS1.1", [WEB_TLS12] = "TLS1.2",
                                        [WEB_TLS13] = "TLS1.3"};
    size_t used = (size_t)snprintf(buf, size, "NORMAL:-VERS-ALL");

    for (int v = c->min_version; v <= (int)c->max_version && used < size; v++)
        used += (size_t)snprintf(buf + used, size - used, ":+VERS-%s", names[v]);
}
