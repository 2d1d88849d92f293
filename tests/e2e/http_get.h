/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The end-to-end programs' HTTP client (dom0 of the QEMU boots has no curl,
 * and busybox's static wget crashes there): GET a path from the agent on
 * 127.0.0.1.  Header-only, for tests/e2e/xen/xen_e2e.c and
 * tests/e2e/vcpustats-check.c.
 */
#ifndef XENSTATS_E2E_HTTP_GET_H
#define XENSTATS_E2E_HTTP_GET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/*
 * GET path from 127.0.0.1:port (HTTP/1.0, 10 s receive timeout).  Returns
 * the body of a 200 answer, NUL-terminated, in a buffer to free() (its
 * length in *ret_len when not NULL); NULL on any error or another status.
 */
static inline char *e2e_http_get(unsigned int port, const char *path, size_t *ret_len)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {.tv_sec = 10};
    char request[256], *buf = NULL, *body;
    size_t len = 0, cap = 0;
    ssize_t n;
    int fd;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return NULL;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        goto fail;
    n = snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (n < 0 || (size_t)n >= sizeof(request) || write(fd, request, (size_t)n) != n)
        goto fail;
    for (;;) {
        if (cap - len < 65536) {
            char *grown = realloc(buf, cap + 262144);

            if (!grown)
                goto fail;
            buf = grown;
            cap += 262144;
        }
        n = read(fd, buf + len, cap - len - 1);
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    body = strstr(buf, "\r\n\r\n");
    if (strncmp(buf, "HTTP/1.", 7) || strncmp(buf + 8, " 200", 4) || !body) {
        free(buf);
        return NULL;
    }
    body += 4;
    len -= (size_t)(body - buf);
    memmove(buf, body, len + 1);
    if (ret_len)
        *ret_len = len;
    return buf;
fail:
    close(fd);
    free(buf);
    return NULL;
}

#endif
