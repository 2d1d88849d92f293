/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The --web-config parser (agent/web/web_config.c) on any bytes: no crash, no
 * leak, and what it accepts holds what the agent relies on: TLS with both
 * files, users with a name that can log in and a bcrypt hash, versions in
 * order, and an error message otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/web/web_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct web_config *c = NULL;
    char err[256];
    int r = web_config_parse((const char *)data, size, size % 2 ? "/etc/xenstats" : NULL, &c, err, sizeof(err));

    if (r < 0) {
        if (c || !err[0] || strlen(err) >= sizeof(err))
            abort();
        return 0;
    }
    if (!c || c->min_version < WEB_TLS10 || c->max_version > WEB_TLS13 || c->min_version > c->max_version)
        abort();
    if (c->tls && (!c->cert_file || !c->key_file || !*c->cert_file || !*c->key_file))
        abort();
    if (!c->tls && (c->cert_file || c->key_file) && (!c->cert_file || !c->key_file))
        abort(); /* half a pair would be refused */
    if (c->client_ca_file && c->client_auth == WEB_CLIENT_NONE)
        abort();
    for (size_t i = 0; i < c->nr_users; i++) {
        if (!c->users[i].name[0] || strchr(c->users[i].name, ':') || strlen(c->users[i].hash) != 60 ||
            strncmp(c->users[i].hash, "$2", 2))
            abort();
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->users[i].name, c->users[j].name))
                abort();
    }
    web_config_free(c);
    return 0;
}
