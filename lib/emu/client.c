/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control socket's client (client.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "emu/proto/run_dir.h"

int emu_control_format(char *buf, size_t len, const char *verb, int argc, char *const *argv)
{
    size_t used;
    int i, n;

    n = snprintf(buf, len, "%s", verb);
    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    used = (size_t)n;
    for (i = 0; i < argc; i++) {
        if (!*argv[i] || strpbrk(argv[i], " \t\n"))
            return -EINVAL;
        n = snprintf(buf + used, len - used, " %s", argv[i]);
        if (n < 0 || (size_t)n >= len - used)
            return -ENAMETOOLONG;
        used += (size_t)n;
    }
    return 0;
}

static int control_path(char *buf, size_t len)
{
    char dir[PATH_MAX - 32];
    int r = emu_run_dir(dir, sizeof(dir));

    if (r < 0)
        return r;
    r = snprintf(buf, len, "%s/%s", dir, EMU_CONTROL_SOCKET);
    return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

/* A connected socket to the emulator, or -errno with why in err. */
static int control_connect(char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, e;

    if (control_path(sa.sun_path, sizeof(sa.sun_path)) < 0) {
        snprintf(err, errlen, "run directory path too long");
        return -ENAMETOOLONG;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        e = errno;
        snprintf(err, errlen, "socket: %s", strerror(e));
        return -e;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        e = errno;
        close(fd);
        if (e == ENOENT || e == ECONNREFUSED)
            snprintf(err, errlen, "no emulated host is running (start one with `xenstats emu`)");
        else
            snprintf(err, errlen, "cannot reach the emulator at %s: %s", sa.sun_path, strerror(e));
        return -e;
    }
    return fd;
}

/*
 * One line of the answer: 0 when it was the final "ok", 1 to read on, or
 * -EREMOTEIO with the emulator's "error" text in err.
 */
static int answer_line(const char *line, emu_control_line_fn *on_line, void *data, char *err, size_t errlen)
{
    if (!strncmp(line, "ok", 2)) {
        if (line[2] == ' ')
            on_line(line + 3, data);
        return 0;
    }
    if (!strncmp(line, "error ", 6)) {
        const char *msg = strchr(line + 6, ' ');

        snprintf(err, errlen, "%s", msg ? msg + 1 : line + 6);
        return -EREMOTEIO;
    }
    if (!strncmp(line, "domain ", 7))
        on_line(line + 7, data);
    else if (!strncmp(line, "saved ", 6))
        on_line(line + 6, data);
    else
        on_line(line, data);
    return 1;
}

int emu_control_call(const char *request, emu_control_line_fn *on_line, void *data, char *err, size_t errlen)
{
    char buf[EMU_CONTROL_LINE_MAX * 4];
    size_t used = 0;
    int fd, r;

    fd = control_connect(err, errlen);
    if (fd < 0)
        return fd;
    if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
        r = -errno;
        snprintf(err, errlen, "cannot send to the emulator: %s", strerror(-r));
        goto done;
    }
    for (;;) {
        char *nl;
        ssize_t n;

        while ((nl = memchr(buf, '\n', used))) {
            *nl = '\0';
            r = answer_line(buf, on_line, data, err, errlen);
            if (r <= 0)
                goto done;
            memmove(buf, nl + 1, used - (size_t)(nl + 1 - buf));
            used -= (size_t)(nl + 1 - buf);
        }
        if (used == sizeof(buf)) {
            snprintf(err, errlen, "reply line too long");
            r = -EMSGSIZE;
            goto done;
        }
        n = recv(fd, buf + used, sizeof(buf) - used, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, "the emulator closed the connection");
            r = n < 0 ? -errno : -ECONNRESET;
            goto done;
        }
        used += (size_t)n;
    }
done:
    close(fd);
    return r;
}
