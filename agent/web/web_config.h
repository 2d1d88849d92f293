/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The agent's --web-config file (tools, the HTTP side): the Prometheus
 * exporter-toolkit's web configuration, the YAML node_exporter users
 * already write.  Of it, the agent takes
 *
 *   tls_server_config:
 *     cert_file, key_file        PEM; TLS on when present (both or neither)
 *     client_ca_file             PEM; with client_auth_type
 *     client_auth_type           NoClientCert, VerifyClientCertIfGiven,
 *                                RequireAndVerifyClientCert
 *     min_version, max_version   TLS10 .. TLS13 (default TLS12 .. TLS13)
 *   basic_auth_users:            user name: bcrypt hash ($2a$, $2b$, $2y$),
 *                                cost 4 .. WEB_BCRYPT_COST_MAX
 *
 * and refuses every other key, naming it and its line, rather than run
 * with less protection than the file asks for.  Relative file names are
 * taken from the configuration file's folder, as exporter-toolkit does.
 */
#ifndef XENSTATS_WEB_CONFIG_H
#define XENSTATS_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The dearest bcrypt cost taken.  exporter-toolkit documents cost 10 at
 * about 70 ms and cost 18 at seconds; each step doubles.  14 is about a
 * second on a server core, already most of a scrape's time in the one
 * HTTP thread that checks passwords; beyond it one check could outlast
 * Prometheus' default 10 s scrape timeout.
 */
#define WEB_BCRYPT_COST_MAX 14

enum web_client_auth { WEB_CLIENT_NONE, WEB_CLIENT_VERIFY_IF_GIVEN, WEB_CLIENT_REQUIRE_AND_VERIFY };

/* TLS versions as gnutls names them, ordered. */
enum web_tls_version { WEB_TLS10 = 1, WEB_TLS11, WEB_TLS12, WEB_TLS13 };

struct web_user {
    char *name, *hash;
};

struct web_config {
    bool tls;
    char *cert_file, *key_file, *client_ca_file; /* resolved; NULL when not given */
    enum web_client_auth client_auth;
    enum web_tls_version min_version, max_version;
    struct web_user *users;
    size_t nr_users;
    /* read by web_config_load(): NUL-terminated PEM, as libmicrohttpd takes it */
    char *cert_pem, *key_pem, *client_ca_pem;
};

/*
 * Parse a configuration (untrusted bytes: the fuzz target's entry point);
 * base_dir resolves relative file names, NULL for none.  Returns 0 and
 * *ret_config (free with web_config_free()), or a negative errno with a
 * message naming the line in err: -EINVAL for what the file says, -ENOMEM.
 * Reads no file.
 */
int web_config_parse(const char *text, size_t len, const char *base_dir, struct web_config **ret_config,
                     char *err, size_t err_size);

/*
 * Read, parse and check the file at path, then read the PEM files it
 * names, and check them with GnuTLS (a key that is not the certificate's
 * is refused here).  As web_config_parse(), plus -errno of the files.
 */
int web_config_load(const char *path, struct web_config **ret_config, char *err, size_t err_size);

/* The gnutls priority string of the configured TLS versions, into buf. */
void web_config_priorities(const struct web_config *config, char *buf, size_t size);

void web_config_free(struct web_config *config); /* accepts NULL */

#endif
