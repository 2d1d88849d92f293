/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend: grants through libxengntshr (gntalloc: share) and
 * libxengnttab (gntdev: map).  Both handles are opened on first use.
 * gntshr's unshare is a plain munmap() on Linux, which would just as well
 * unmap memory that was never shared, so shares are remembered and
 * unshare() checks its range, as the platform contract wants (-EINVAL).
 */
#include <string.h>
#include <sys/mman.h>

#include "util/util.h"
#include "xen_backend.h"

#define XEN_PAGE 4096u

/* One share_pages(); live[i] while page i is still shared. */
struct xen_share {
    struct xen_share *next;
    uint8_t *addr;
    uint32_t count;
    uint32_t nr_live;
    bool live[];
};

static xengntshr_handle *gntshr_of(struct platform *p)
{
    struct xen *x = xen_of(p);

    if (!x->gntshr)
        x->gntshr = xengntshr_open(xen_logger(p), 0);
    return x->gntshr;
}

static xengnttab_handle *gnttab_of(struct platform *p)
{
    struct xen *x = xen_of(p);
    xengnttab_handle *h;

    pthread_mutex_lock(&x->lock);
    if (!x->gnttab)
        x->gnttab = xengnttab_open(xen_logger(p), 0);
    h = x->gnttab;
    pthread_mutex_unlock(&x->lock);
    return h;
}

static void *xen_share_pages(struct platform *p, uint32_t domid, uint32_t count, uint32_t *refs, int writable)
{
    struct xen *x = xen_of(p);
    struct xen_share *s;
    xengntshr_handle *h;
    void *addr;
    uint32_t i;

    if (count == 0 || count > UINT32_MAX / XEN_PAGE)
        return set_errno(-EINVAL), NULL;
    s = calloc(1, sizeof(*s) + count * sizeof(bool));
    if (!s)
        return set_errno(-ENOMEM), NULL;
    pthread_mutex_lock(&x->lock);
    h = gntshr_of(p);
    addr = h ? xengntshr_share_pages(h, domid, count, refs, writable) : NULL;
    if (!addr) {
        int err = errno ? errno : EIO;

        pthread_mutex_unlock(&x->lock);
        free(s);
        errno = err;
        return NULL;
    }
    s->addr = addr;
    s->count = count;
    s->nr_live = count;
    for (i = 0; i < count; i++)
        s->live[i] = true;
    s->next = x->shares;
    x->shares = s;
    pthread_mutex_unlock(&x->lock);
    return addr;
}

static int xen_unshare(struct platform *p, void *addr, uint32_t count)
{
    struct xen *x = xen_of(p);
    struct xen_share **pp, *s;
    uint8_t *a = addr;
    uint32_t first = 0, i;
    int r = 0;

    pthread_mutex_lock(&x->lock);
    for (pp = &x->shares; (s = *pp); pp = &s->next)
        if (a >= s->addr && a < s->addr + (size_t)s->count * XEN_PAGE && (size_t)(a - s->addr) % XEN_PAGE == 0)
            break;
    if (s)
        first = (uint32_t)((size_t)(a - s->addr) / XEN_PAGE);
    if (!s || count == 0 || count > s->count - first) {
        r = -EINVAL;
        goto out;
    }
    for (i = first; i < first + count; i++)
        if (!s->live[i]) {
            r = -EINVAL;
            goto out;
        }
    /* gntalloc ends the grants when the last mapping of a page goes; a
     * page the grantee still maps stays granted until it unmaps. */
    if (xengntshr_unshare(x->gntshr, addr, count) < 0) {
        r = negative_errno();
        goto out;
    }
    for (i = first; i < first + count; i++)
        s->live[i] = false;
    s->nr_live -= count;
    if (s->nr_live == 0) {
        *pp = s->next;
        free(s);
    }
out:
    pthread_mutex_unlock(&x->lock);
    return set_errno(r);
}

static void *xen_map(struct platform *p, uint32_t domid, uint32_t count, const uint32_t *refs, int prot)
{
    xengnttab_handle *h = gnttab_of(p);
    uint32_t *copy;
    void *addr;
    int err;

    if (!h)
        return NULL;
    if (count == 0 || (prot & ~(PROT_READ | PROT_WRITE)))
        return set_errno(-EINVAL), NULL;
    /* The library's prototype is not const-correct: hand it a copy. */
    copy = malloc(count * sizeof(*copy));
    if (!copy)
        return set_errno(-ENOMEM), NULL;
    memcpy(copy, refs, count * sizeof(*copy));
    addr = xengnttab_map_domain_grant_refs(h, count, domid, copy, prot);
    err = errno;
    free(copy);
    if (!addr)
        errno = err ? err : EINVAL;
    return addr;
}

static int xen_unmap(struct platform *p, void *addr, uint32_t count)
{
    xengnttab_handle *h = gnttab_of(p);

    if (!h)
        return negative_errno();
    /* gntdev looks the range up and refuses one it did not map. */
    if (xengnttab_unmap(h, addr, count) < 0)
        return set_errno(errno ? -errno : -EINVAL);
    return 0;
}

void xen_grant_release(struct xen *x)
{
    while (x->shares) {
        struct xen_share *s = x->shares;

        x->shares = s->next;
        free(s);
    }
    /* Closing the devices revokes our grants and drops our mappings. */
    if (x->gntshr)
        xengntshr_close(x->gntshr);
    if (x->gnttab)
        xengnttab_close(x->gnttab);
    x->gntshr = NULL;
    x->gnttab = NULL;
}

const struct platform_grant_ops xen_grant_ops = {
    .share_pages = xen_share_pages,
    .unshare = xen_unshare,
    .map = xen_map,
    .unmap = xen_unmap,
};
