/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats top: a minimal HTTP/1.1 client, enough to GET the agent's
 * snapshot.  One request per connection (Connection: close), a deadline
 * over the whole exchange, bounded header and body sizes, and both
 * Content-Length and chunked bodies, so a wedged or hostile server costs
 * at most a timeout.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <xenstats/xenstats.h>

#include "top/http.h"
#include "top/snapshot.h"

#define MAX_HEADER (64u << 10)

/* When the exchange must end: a time, or earlier when *cancel turns non-zero. */
struct deadline {
    struct timespec at;
    const volatile int *cancel;
};

int top_url_parse(const char *url, const char *suffix, struct top_url *ret_url, char *err, size_t errlen)
{
    struct top_url u;
    const char *p, *host, *host_end, *port = NULL, *path;
    size_t host_len, port_len, path_len, i;
    char *end;
    long n = 0;

    memset(&u, 0, sizeof(u));
    for (i = 0; url[i]; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] > 0x7e)
            return top_reason(err, errlen, -EINVAL, "the URL holds a space or a control character");
    /* "HOST:PORT" alone means plain HTTP, as the agent's --listen spells it. */
    if (!strstr(url, "://")) {
        char *full = NULL;
        int r;

        if (asprintf(&full, "http://%s", url) < 0)
            return top_reason(err, errlen, -ENOMEM, "out of memory");
        r = top_url_parse(full, suffix, ret_url, err, errlen);
        free(full);
        return r;
    }
    if (!strncasecmp(url, "https://", 8))
        return top_reason(err, errlen, -EINVAL, "https is not supported: the agent serves plain HTTP on loopback");
    if (strncasecmp(url, "http://", 7))
        return top_reason(err, errlen, -EINVAL, "expected http://HOST[:PORT][/PATH]");
    host = url + 7;
    if (*host == '[') {
        host++;
        host_end = strchr(host, ']');
        if (!host_end)
            return top_reason(err, errlen, -EINVAL, "unterminated [ in the host");
        p = host_end + 1;
    } else {
        host_end = host + strcspn(host, ":/?#");
        p = host_end;
    }
    host_len = (size_t)(host_end - host);
    if (!host_len || host_len >= sizeof(u.host))
        return top_reason(err, errlen, -EINVAL, "no host, or a host name too long");
    if (*p == ':') {
        port = ++p;
        p += strcspn(p, "/?#");
        port_len = (size_t)(p - port);
        errno = 0;
        n = port_len ? strtol(port, &end, 10) : 0;
        if (!port_len || end != p || n < 1 || n > 65535 || !isdigit((unsigned char)*port))
            return top_reason(err, errlen, -EINVAL, "the port must be a number from 1 to 65535");
    }
    if (*p && *p != '/')
        return top_reason(err, errlen, -EINVAL, "queries and fragments are not supported");
    path = p;
    path_len = strcspn(path, "?#");
    if (path[path_len])
        return top_reason(err, errlen, -EINVAL, "queries and fragments are not supported");
    while (path_len && path[path_len - 1] == '/')
        path_len--;
    memcpy(u.host, host, host_len);
    snprintf(u.port, sizeof(u.port), "%ld", port ? n : 80L);
    if (!suffix || (path_len >= strlen(suffix) && !memcmp(path + path_len - strlen(suffix), suffix, strlen(suffix))))
        suffix = "";
    if (path_len + strlen(suffix) + 2 > sizeof(u.path))
        return top_reason(err, errlen, -EINVAL, "the path is too long");
    snprintf(u.path, sizeof(u.path), "%.*s%s", (int)path_len, path, suffix);
    if (!u.path[0])
        strcpy(u.path, "/");
    *ret_url = u;
    return 0;
}

static int remaining_ms(const struct timespec *deadline)
{
    struct timespec now;
    long long ms;

    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
}

/* Wait for `events` on fd until the deadline: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, const struct deadline *deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    int r;

    for (;;) {
        r = poll(&pfd, 1, remaining_ms(&deadline->at));
        if (r > 0)
            return 0;
        if (r == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
        /* Other signals (a terminal resize) do not end the exchange. */
        if (deadline->cancel && *deadline->cancel)
            return -EINTR;
    }
}

static int connect_one(const struct addrinfo *ai, const struct deadline *deadline)
{
    socklen_t len = sizeof(int);
    int fd, r, soerr = 0;

    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            r = -errno;
            goto fail;
        }
        r = wait_fd(fd, POLLOUT, deadline);
        if (r < 0)
            goto fail;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0) {
            r = -errno;
            goto fail;
        }
        if (soerr) {
            r = -soerr;
            goto fail;
        }
    }
    return fd;
fail:
    close(fd);
    return r;
}

static int send_all(int fd, const char *buf, size_t len, const struct deadline *deadline)
{
    ssize_t n;
    int r;

    while (len) {
        n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return -errno;
            r = wait_fd(fd, POLLOUT, deadline);
            if (r < 0)
                return r;
            continue;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read until EOF, at most max bytes. */
static int recv_all(int fd, size_t max, const struct deadline *deadline, char **ret_buf, size_t *ret_len)
{
    size_t len = 0, cap = 0;
    char *buf = NULL, *nbuf;
    ssize_t n;
    int r;

    for (;;) {
        if (cap - len < 4096) {
            if (cap >= max + 1) {
                r = -EFBIG;
                goto fail;
            }
            cap = cap ? cap * 2 : 65536;
            if (cap > max + 1)
                cap = max + 1;
            nbuf = realloc(buf, cap + 1);
            if (!nbuf) {
                r = -ENOMEM;
                goto fail;
            }
            buf = nbuf;
        }
        n = recv(fd, buf + len, cap - len, 0);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) {
                r = -errno;
                goto fail;
            }
            r = wait_fd(fd, POLLIN, deadline);
            if (r < 0)
                goto fail;
            continue;
        }
        len += (size_t)n;
        if (len > max) {
            r = -EFBIG;
            goto fail;
        }
    }
    buf[len] = '\0';
    *ret_buf = buf;
    *ret_len = len;
    return 0;
fail:
    free(buf);
    return r;
}

/* Header `name` of the header block [p, end): value start and length. */
static bool find_header(const char *p, const char *end, const char *name, const char **ret_value, size_t *ret_len)
{
    size_t nlen = strlen(name);

    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;
        const char *v;

        if (line_end > p && line_end[-1] == '\r')
            line_end--;
        if ((size_t)(line_end - p) > nlen && p[nlen] == ':' && !strncasecmp(p, name, nlen)) {
            v = p + nlen + 1;
            while (v < line_end && (*v == ' ' || *v == '\t'))
                v++;
            while (line_end > v && (line_end[-1] == ' ' || line_end[-1] == '\t'))
                line_end--;
            *ret_value = v;
            *ret_len = (size_t)(line_end - v);
            return true;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return false;
}

static int parse_size(const char *s, size_t len, int base, size_t *ret)
{
    size_t v = 0, i;
    int d;

    if (!len)
        return -EINVAL;
    for (i = 0; i < len; i++) {
        if (isdigit((unsigned char)s[i]))
            d = s[i] - '0';
        else if (base == 16 && isxdigit((unsigned char)s[i]))
            d = tolower((unsigned char)s[i]) - 'a' + 10;
        else
            return -EINVAL;
        if (v > (TOP_HTTP_MAX_BODY - (size_t)d) / (size_t)base)
            return -ERANGE;
        v = v * (size_t)base + (size_t)d;
    }
    *ret = v;
    return 0;
}

/* Undo chunked encoding of [body, body+len) in place. */
static int dechunk(char *body, size_t len, size_t *ret_len, char *err, size_t errlen)
{
    size_t in = 0, out = 0, size, digits;
    char *eol;

    for (;;) {
        eol = memchr(body + in, '\n', len - in);
        if (!eol)
            return top_reason(err, errlen, -EPROTO, "truncated chunked body");
        digits = strspn(body + in, "0123456789abcdefABCDEF");
        if (!digits || body + in + digits > eol || parse_size(body + in, digits, 16, &size) < 0)
            return top_reason(err, errlen, -EPROTO, "bad chunk size");
        in = (size_t)(eol - body) + 1;
        if (!size)
            break; /* trailers, if any, are ignored */
        if (size > len - in)
            return top_reason(err, errlen, -EPROTO, "truncated chunk");
        memmove(body + out, body + in, size);
        out += size;
        in += size;
        if (in < len && body[in] == '\r')
            in++;
        if (in >= len || body[in] != '\n')
            return top_reason(err, errlen, -EPROTO, "chunk not followed by CRLF");
        in++;
    }
    body[out] = '\0';
    *ret_len = out;
    return 0;
}

int top_http_parse_response(char *buf, size_t len, char **ret_body, size_t *ret_len, char *err, size_t errlen)
{
    char *head_end, *body, *eol, reason[64];
    const char *v;
    size_t vlen, body_len, content_length, i;
    int status;

    head_end = memmem(buf, len < MAX_HEADER ? len : MAX_HEADER, "\r\n\r\n", 4);
    if (head_end) {
        body = head_end + 4;
    } else {
        head_end = memmem(buf, len < MAX_HEADER ? len : MAX_HEADER, "\n\n", 2);
        if (!head_end)
            return top_reason(err, errlen, -EPROTO,
                              len ? "not an HTTP response (no end of headers)"
                                  : "the server closed the connection without answering");
        body = head_end + 2;
    }
    if (len < 12 || strncmp(buf, "HTTP/1.", 7) || !isdigit((unsigned char)buf[9]) ||
        !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]) || buf[8] != ' ')
        return top_reason(err, errlen, -EPROTO, "not an HTTP response");
    status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    if (status != 200) {
        eol = memchr(buf, '\n', (size_t)(body - buf));
        vlen = eol ? (size_t)(eol - buf) : 12;
        for (i = 0; i + 13 < vlen && i < sizeof(reason) - 1; i++) {
            unsigned char c = (unsigned char)buf[13 + i];

            reason[i] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
        }
        while (i && reason[i - 1] == '?')
            i--;
        reason[i] = '\0';
        return top_reason(err, errlen, -EPROTO, "HTTP status %d%s%s", status, *reason ? " " : "", reason);
    }
    body_len = len - (size_t)(body - buf);
    if (find_header(buf, head_end, "Transfer-Encoding", &v, &vlen)) {
        if (vlen != 7 || strncasecmp(v, "chunked", 7))
            return top_reason(err, errlen, -EPROTO, "unsupported transfer encoding");
        if (dechunk(body, body_len, &body_len, err, errlen) < 0)
            return -EPROTO;
    } else if (find_header(buf, head_end, "Content-Length", &v, &vlen)) {
        if (parse_size(v, vlen, 10, &content_length) < 0)
            return top_reason(err, errlen, -EPROTO, "bad Content-Length");
        if (content_length > body_len)
            return top_reason(err, errlen, -EPROTO, "truncated body: %zu of %zu bytes", body_len, content_length);
        body_len = content_length;
        body[body_len] = '\0';
    }
    *ret_body = body;
    *ret_len = body_len;
    return 0;
}

int top_http_get(const struct top_url *url, int timeout_ms, const volatile int *cancel, char **ret_body,
                 size_t *ret_len, char *err, size_t errlen)
{
    /* No AI_ADDRCONFIG: on a dom0 with only loopback up it refuses 127.0.0.1 itself. */
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ais = NULL, *ai;
    struct deadline deadline = {.cancel = cancel};
    char *request = NULL, *buf = NULL, *body, *copy;
    size_t len = 0, body_len = 0;
    int fd = -1, r, gai;
    bool v6 = strchr(url->host, ':') != NULL;

    clock_gettime(CLOCK_MONOTONIC, &deadline.at);
    deadline.at.tv_sec += timeout_ms / 1000;
    deadline.at.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.at.tv_nsec >= 1000000000L) {
        deadline.at.tv_sec++;
        deadline.at.tv_nsec -= 1000000000L;
    }
    gai = getaddrinfo(url->host, url->port, &hints, &ais);
    if (gai)
        return top_reason(err, errlen, -EHOSTUNREACH, "cannot resolve %s: %s", url->host,
                          gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
    r = -EHOSTUNREACH;
    for (ai = ais; ai && fd < 0; ai = ai->ai_next) {
        fd = connect_one(ai, &deadline);
        if (fd < 0)
            r = fd;
    }
    if (fd < 0) {
        top_reason(err, errlen, r, "cannot connect to %s%s%s:%s: %s", v6 ? "[" : "", url->host, v6 ? "]" : "",
                   url->port, strerror(-r));
        goto out;
    }
    if (asprintf(&request,
                 "GET %s HTTP/1.1\r\nHost: %s%s%s:%s\r\nAccept: application/json\r\n"
                 "User-Agent: xenstats-top/" XENSTATS_VERSION "\r\nConnection: close\r\n\r\n",
                 url->path, v6 ? "[" : "", url->host, v6 ? "]" : "", url->port) < 0) {
        request = NULL;
        r = top_reason(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    r = send_all(fd, request, strlen(request), &deadline);
    if (r < 0) {
        top_reason(err, errlen, r, "sending the request: %s", strerror(-r));
        goto out;
    }
    r = recv_all(fd, MAX_HEADER + TOP_HTTP_MAX_BODY, &deadline, &buf, &len);
    if (r < 0) {
        if (r == -EFBIG)
            top_reason(err, errlen, -EPROTO, "the answer is larger than %u MiB", TOP_HTTP_MAX_BODY >> 20);
        else if (r == -ETIMEDOUT)
            top_reason(err, errlen, r, "no complete answer within %d ms", timeout_ms);
        else
            top_reason(err, errlen, r, "reading the answer: %s", strerror(-r));
        r = r == -EFBIG ? -EPROTO : r;
        goto out;
    }
    r = top_http_parse_response(buf, len, &body, &body_len, err, errlen);
    if (r < 0)
        goto out;
    /* Hand back the body alone; the headers are done with. */
    memmove(buf, body, body_len);
    buf[body_len] = '\0';
    copy = realloc(buf, body_len + 1);
    *ret_body = copy ? copy : buf;
    *ret_len = body_len;
    buf = NULL;
out:
    free(buf);
    free(request);
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ais);
    return r;
}
