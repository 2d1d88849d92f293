/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "loop.h"
#include "util/util.h"

struct watcher {
    struct watcher *next; /* all watchers, or the graveyard */
    int fd;
    bool dead;
    emu_fd_cb cb;
    void *data;
};

struct emu_loop {
    int epfd;
    bool quit;
    int status;
    struct watcher *live;
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
    while (loop->live) {
        struct watcher *w = loop->live;

        loop->live = w->next;
        free(w);
    }
    bury(loop);
    close(loop->epfd);
    free(loop);
}

static struct watcher *find(struct emu_loop *loop, int fd, struct watcher ***ret_link)
{
    struct watcher **pp;

    for (pp = &loop->live; *pp; pp = &(*pp)->next) {
        if ((*pp)->fd == fd) {
            if (ret_link)
                *ret_link = pp;
            return *pp;
        }
    }
    return NULL;
}

int emu_loop_add(struct emu_loop *loop, int fd, uint32_t events, emu_fd_cb cb, void *data)
{
    struct epoll_event ev = {.events = events};
    struct watcher *w;

    if (find(loop, fd, NULL))
        return -EEXIST;
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
    w->next = loop->live;
    loop->live = w;
    return 0;
}

int emu_loop_modify(struct emu_loop *loop, int fd, uint32_t events)
{
    struct watcher *w = find(loop, fd, NULL);
    struct epoll_event ev = {.events = events};

    if (!w)
        return -ENOENT;
    ev.data.ptr = w;
    return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? negative_errno() : 0;
}

void emu_loop_remove(struct emu_loop *loop, int fd)
{
    struct watcher **link, *w = find(loop, fd, &link);

    if (!w)
        return;
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    *link = w->next;
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
