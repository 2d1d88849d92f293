/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the hypercall-socket request parser and the grant /
 * event channel engine behind it, driven by a sequence of requests from
 * several connections in three domains, with the descriptors a hostile
 * process could attach.  After every request the engine's bookkeeping
 * must still add up.
 *
 * Input: records of [connection byte][descriptor byte][length byte]
 * followed by that many request bytes.  Connection byte: low bits pick
 * one of the connections, 0x80 closes it first (a process exit).
 * Descriptor byte: 0 none, 1 sealed memfd, 2 unsealed memfd, 3 pipe,
 * 4 two sealed memfds.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/hyper/hyper_private.h"

#define CONNS 6

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sealed_memfd(void)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        abort();
    if (ftruncate(fd, 4 * EMU_HC_PAGE_SIZE) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
        abort();
    return fd;
}

static unsigned int make_fds(uint8_t kind, int *fds)
{
    int p[2];

    switch (kind % 5) {
    case 1:
        fds[0] = sealed_memfd();
        return 1;
    case 2:
        fds[0] = memfd_create("fuzz", MFD_CLOEXEC);
        if (fds[0] < 0 || ftruncate(fds[0], 4 * EMU_HC_PAGE_SIZE) < 0)
            abort();
        return 1;
    case 3:
        if (pipe2(p, O_CLOEXEC) < 0)
            abort();
        close(p[1]);
        fds[0] = p[0];
        return 1;
    case 4:
        fds[0] = sealed_memfd();
        fds[1] = sealed_memfd();
        return 2;
    default:
        return 0;
    }
}

static int compare_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

    return x < y ? -1 : x > y;
}

/* The engine's counts must match what its lists say. */
static void check_invariants(struct hyper *hy)
{
    static void *files[HY_GRANT_ENTRIES];
    struct hy_domain *d;

    for (d = hy->domains; d; d = d->next) {
        uint32_t used = 0, i, distinct = 0;
        struct hy_conn *c;

        for (i = 0; i < HY_GRANT_ENTRIES; i++) {
            struct hy_grant *g = &d->grants[i];
            struct hy_mapping *m;
            uint32_t maps = 0;

            if (!g->mem) {
                if (g->mappers || g->owner || g->mapcount)
                    abort();
                continue;
            }
            if (i < HY_GRANT_RESERVED || (!g->owner && !g->mapcount))
                abort();
            files[used++] = g->mem;
            for (m = g->mappers; m; m = m->grant_next) {
                if (m->granter != d || m->ref != i || m->count == 0)
                    abort();
                maps += m->count;
            }
            if (maps != g->mapcount)
                abort();
        }
        if (used != d->grants_used)
            abort();
        qsort(files, used, sizeof(files[0]), compare_ptr);
        for (i = 0; i < used; i++)
            distinct += i == 0 || files[i] != files[i - 1];
        if (distinct != d->nr_memfds || distinct > HY_MEMFDS_PER_DOMAIN)
            abort();
        for (c = d->conns; c; c = c->next) {
            struct hy_mapping *m;
            uint32_t mapped = 0;

            for (m = c->mappings; m; m = m->conn_next)
                mapped += m->count;
            if (mapped != c->nr_mapped || mapped > (d->domid == 0 ? HY_MAPS_PER_CONN_DOM0 : HY_MAPS_PER_CONN))
                abort();
        }
        for (i = 0; i < d->nr_ports; i++) {
            struct hy_port *p = d->ports[i];

            if (!p)
                continue;
            if (i == 0 || p->port != i || p->conn->dom != d)
                abort();
            if (p->state == EMU_HC_EVTCHN_INTERDOMAIN) {
                struct hy_domain *rd = hyper_domain_find(hy, p->remote_domid);
                struct hy_port *peer = rd && p->remote_port < rd->nr_ports ? rd->ports[p->remote_port] : NULL;

                if (!peer || peer->state != EMU_HC_EVTCHN_INTERDOMAIN || peer->remote_domid != d->domid ||
                    peer->remote_port != i)
                    abort();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t domids[CONNS] = {0, 1, 2, 1, 2, 0};
    struct hy_conn *conns[CONNS];
    int evfds[CONNS];
    struct hyper *hy = hyper_new(NULL);
    unsigned int i, requests = 0;

    if (!hy)
        return 0;
    for (i = 0; i < 3; i++)
        hyper_domain_add(hy, i);
    for (i = 0; i < CONNS; i++) {
        conns[i] = hyper_conn_new(hy, domids[i], -1);
        evfds[i] = -1;
    }
    while (size >= 3) {
        uint8_t sel = data[0], kind = data[1];
        size_t len = data[2];
        struct emu_hc_reply reply;
        int fds[2], out[EMU_HC_BATCH];
        unsigned int nfds, nout = 0, k = sel % CONNS;

        data += 3;
        size -= 3;
        if (len > size)
            len = size;
        if (sel & 0x80) {
            hyper_conn_close(conns[k]);
            conns[k] = hyper_conn_new(hy, domids[k], -1);
            if (evfds[k] >= 0)
                close(evfds[k]);
            evfds[k] = -1;
        }
        if (conns[k]) {
            bool had_events = conns[k]->evfd >= 0;

            nfds = make_fds(kind, fds);
            hyper_handle(conns[k], data, len, fds, nfds, &reply, out, &nout);
            if (nout > EMU_HC_BATCH)
                abort();
            for (unsigned int j = 0; j < nout; j++) {
                /* Keep an event socket to read from; close the rest. */
                if (!had_events && conns[k]->evfd >= 0 && evfds[k] < 0)
                    evfds[k] = out[j];
                else
                    close(out[j]);
            }
            if (evfds[k] >= 0) {
                uint32_t port;

                while (recv(evfds[k], &port, sizeof(port), MSG_DONTWAIT) > 0)
                    ;
            }
            /* A full check scans every table: often, not always. */
            if (++requests % 16 == 0)
                check_invariants(hy);
        }
        data += len;
        size -= len;
    }
    check_invariants(hy);
    /* Losing domains one by one exercises the cross-domain teardown. */
    hyper_domain_remove(hy, 1);
    check_invariants(hy);
    hyper_free(hy);
    for (i = 0; i < CONNS; i++)
        if (evfds[i] >= 0)
            close(evfds[i]);
    return 0;
}
