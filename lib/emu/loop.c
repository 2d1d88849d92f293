/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "loop.h"
#include "util/util.h"

/* A watcher is found by its fd (an index): at thousands of domains the
 * emulator holds thousands of connections, and a look-up by list walk on
 * every change of a connection's events made each request cost O(fds). */
struct watcher {
    struct watcher *next; /* the graveyard */
    int fd;
    bool dead;
    emu_fd_cb cb;
    void *data;
};

struct emu_loop {
    int epfd;
    bool quit;
    int status;
    struct watcher **by_fd; /* live watchers, by fd */
    size_t nr_by_fd;
    struct watcher *graveyard; /* removed during a dispatch round */
};

struct emu_loop *emu_loop_new(void)
{
    struct emu_loop *loop = calloc(1, sizeof(*loop));

    if (!loop) {
        errno = ENOMEM;
        return NULL;
    }
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        int saved = errno;

        free(loop);
        errno = saved;
        return NULL;
    }
    return loop;
}

static void bury(struct emu_loop *loop)
{
    while (loop->graveyard) {
        struct watcher *w = loop->graveyard;

        loop->graveyard = w->next;
        free(w);
    }
}

void emu_loop_free(struct emu_loop *loop)
{
    if (!loop)
        return;
    for (size_t i = 0; i < loop->nr_by_fd; i++)
        free(loop->by_fd[i]);
    free(loop->by_fd);
    bury(loop);
    close(loop->epfd);
    free(loop);
}

static struct watcher *find(struct emu_loop *loop, int fd)
{
    return fd >= 0 && (size_t)fd < loop->nr_by_fd ? loop->by_fd[fd] : NULL;
}

int emu_loop_add(struct emu_loop *loop, int fd, uint32_t events, emu_fd_cb cb, void *data)
{
    struct epoll_event ev = {.events = events};
    struct watcher *w;

    if (fd < 0)
        return -EBADF;
    if (find(loop, fd))
        return -EEXIST;
    if ((size_t)fd >= loop->nr_by_fd) {
        size_t n = loop->nr_by_fd ? loop->nr_by_fd : 64;
        struct watcher **grown;

        while (n <= (size_t)fd)
            n *= 2;
        grown = realloc(loop->by_fd, n * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        for (size_t i = loop->nr_by_fd; i < n; i++)
            grown[i] = NULL;
        loop->by_fd = grown;
        loop->nr_by_fd = n;
    }
    w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->fd = fd;
    w->cb = cb;
    w->data = data;
    ev.data.ptr = w;
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int r = negative_errno();

        free(w);
        return r;
    }
    loop->by_fd[fd] = w;
    return 0;
}

int emu_loop_modify(struct emu_loop *loop, int fd, uint32_t events)
{
    struct watcher *w = find(loop, fd);
    struct epoll_event ev = {.events = events};

    if (!w)
        return -ENOENT;
    ev.data.ptr = w;
    return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? negative_errno() : 0;
}

void emu_loop_remove(struct emu_loop *loop, int fd)
{
    struct watcher *w = find(loop, fd);

    if (!w)
        return;
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    loop->by_fd[fd] = NULL;
    /* Events for it may still be in this round's batch. */
    w->dead = true;
    w->next = loop->graveyard;
    loop->graveyard = w;
}

int emu_loop_run(struct emu_loop *loop)
{
    loop->quit = false;
    while (!loop->quit) {
        struct epoll_event evs[64];
        int n, i;

        n = epoll_wait(loop->epfd, evs, 64, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return negative_errno();
        for (i = 0; i < n && !loop->quit; i++) {
            struct watcher *w = evs[i].data.ptr;

            if (!w->dead)
                w->cb(loop, w->fd, evs[i].events, w->data);
        }
        bury(loop);
    }
    return loop->status;
}

void emu_loop_quit(struct emu_loop *loop, int status)
{
    loop->quit = true;
    loop->status = status;
}
