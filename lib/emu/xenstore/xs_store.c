/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstore engine.  The store is flat like xenstored's TDB: a hash map from
 * full path to a node record that holds the value, the permissions and the
 * NUL-separated names of the children.
 *
 * Every operation runs inside a transaction: a client's own one, or a
 * temporary one committed right after the operation succeeds.  A
 * transaction is an overlay map of the records it touched: for each, the
 * main store's generation when first seen (0: absent) and, once modified,
 * its new content.  Commit checks that nothing touched changed in the main
 * store since (else -EAGAIN, as xenstored), then swaps the new contents in
 * and fires the watch events the transaction collected.  Operations build
 * every new record before installing any, so a failing operation changes
 * nothing, in a transaction or not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xs_store.h"

#define PERM_OWNER 0x08 /* internal: may change permissions */
#define RECORD_HEADER 24 /* xenstored's TDB record: u64 generation + 3 x u32 */
#define RECORD_PERM 8    /* sizeof(struct xs_permissions) */
#define HOME_PREFIX "/local/domain/"

/* One record's content, allocated as one block. */
struct content {
    uint64_t generation;
    uint32_t nperms, datalen, childlen;
    struct xs_perm *perms;
    char *data;
    char *children;
};

/* A map entry: a node of the main store, or a record of a transaction. */
struct node {
    struct node *next;
    struct node *order_next; /* transactions: entries in access order */
    uint32_t hash;
    bool modified;       /* transaction: content replaces the main one */
    uint64_t seen;       /* transaction: main generation at first access */
    struct content *c;   /* NULL: absent (main: never) */
    char path[];
};

struct map {
    struct node **buckets;
    size_t nbuckets, count;
};

struct event {
    struct event *next;
    bool exact;
    uint32_t nperms;
    struct xs_perm *perms;
    char path[];
};

struct delta {
    uint32_t domid;
    int64_t nodes;
};

struct tx {
    struct tx *next;
    uint32_t id;
    bool limited; /* a client's transaction: bounded for guests */
    struct map entries;
    struct node *order, **order_tail;
    struct event *events, **events_tail;
    struct delta *deltas;
    size_t ndeltas;
};

struct watch {
    struct watch *next;
    struct xs_conn *conn;
    bool relative;
    char *token;
    char path[];
};

struct domain {
    struct domain *next;
    uint32_t domid;
    bool introduced;
    uint64_t nodes;
    uint32_t watches, transactions;
};

struct special {
    const char *name;
    uint32_t nperms;
    struct xs_perm *perms;
};

struct xs_conn {
    struct xs_conn *next;
    struct xs_store *s;
    uint32_t domid;
    bool privileged;
    xs_event_fn fn;
    void *data;
    struct tx *txs;
};

struct xs_store {
    unsigned int quota_nodes; /* 0: XS_QUOTA_NODES */
    struct map nodes;
    uint64_t generation;
    uint32_t next_tx_id;
    struct domain *domains;
    struct xs_conn *conns;
    struct watch *watches, **watches_tail;
    struct special specials[2];
};

enum { SPECIAL_INTRODUCE, SPECIAL_RELEASE };

/* ---- maps --------------------------------------------------------------- */

static uint32_t hash_path(const char *p)
{
    uint32_t h = 2166136261u;

    while (*p)
        h = (h ^ (uint8_t)*p++) * 16777619u;
    return h;
}

static struct node *map_find(const struct map *m, const char *path, uint32_t hash)
{
    struct node *n;

    if (!m->nbuckets)
        return NULL;
    for (n = m->buckets[hash & (m->nbuckets - 1)]; n; n = n->next)
        if (n->hash == hash && !strcmp(n->path, path))
            return n;
    return NULL;
}

static int map_grow(struct map *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 64, i;
    struct node **b = calloc(nb, sizeof(*b));

    if (!b)
        return -ENOMEM;
    for (i = 0; i < m->nbuckets; i++) {
        while (m->buckets[i]) {
            struct node *n = m->buckets[i];

            m->buckets[i] = n->next;
            n->next = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
    return 0;
}

/* Reserve room so that the next map_insert() cannot fail. */
static int map_reserve(struct map *m, size_t more)
{
    while (m->count + more > m->nbuckets) {
        int r = map_grow(m);

        if (r < 0)
            return r;
    }
    return 0;
}

static void map_insert(struct map *m, struct node *n)
{
    struct node **b = &m->buckets[n->hash & (m->nbuckets - 1)];

    n->next = *b;
    *b = n;
    m->count++;
}

static void map_unlink(struct map *m, struct node *n)
{
    struct node **pp = &m->buckets[n->hash & (m->nbuckets - 1)];

    while (*pp != n)
        pp = &(*pp)->next;
    *pp = n->next;
    m->count--;
}

static void node_free(struct node *n)
{
    if (n) {
        free(n->c);
        free(n);
    }
}

static void map_clear(struct map *m)
{
    size_t i;

    for (i = 0; i < m->nbuckets; i++) {
        while (m->buckets[i]) {
            struct node *n = m->buckets[i];

            m->buckets[i] = n->next;
            node_free(n);
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->count = 0;
}

static struct node *node_new(const char *path, uint32_t hash)
{
    size_t len = strlen(path);
    struct node *n = calloc(1, sizeof(*n) + len + 1);

    if (n) {
        memcpy(n->path, path, len + 1);
        n->hash = hash;
    }
    return n;
}

/* ---- contents ----------------------------------------------------------- */

static struct content *content_new(uint32_t nperms, const struct xs_perm *perms, uint32_t datalen, const void *data,
                                   uint32_t childlen, const char *children)
{
    struct content *c = malloc(sizeof(*c) + nperms * sizeof(*perms) + datalen + childlen);

    if (!c)
        return NULL;
    c->generation = 0;
    c->nperms = nperms;
    c->datalen = datalen;
    c->childlen = childlen;
    c->perms = (struct xs_perm *)(c + 1);
    c->data = (char *)(c->perms + nperms);
    c->children = c->data + datalen;
    if (nperms)
        memcpy(c->perms, perms, nperms * sizeof(*perms));
    /* NULL: the caller fills the room in. */
    if (datalen && data)
        memcpy(c->data, data, datalen);
    if (childlen && children)
        memcpy(c->children, children, childlen);
    return c;
}

static size_t record_size(const struct content *c)
{
    return RECORD_HEADER + (size_t)c->nperms * RECORD_PERM + c->datalen + c->childlen;
}

/* Offset of child `name` in c->children, or -1. */
static long child_offset(const struct content *c, const char *name)
{
    uint32_t off = 0;

    while (off < c->childlen) {
        const char *n = c->children + off;
        size_t l = strnlen(n, c->childlen - off);

        if (!strcmp(n, name))
            return off;
        off += (uint32_t)l + 1;
    }
    return -1;
}

static struct content *content_add_child(const struct content *c, const char *name)
{
    size_t l = strlen(name) + 1;
    struct content *n = content_new(c->nperms, c->perms, c->datalen, c->data, c->childlen + (uint32_t)l, NULL);

    if (n) {
        memcpy(n->children, c->children, c->childlen);
        memcpy(n->children + c->childlen, name, l);
    }
    return n;
}

static struct content *content_remove_child(const struct content *c, const char *name)
{
    long off = child_offset(c, name);
    size_t l = strlen(name) + 1;
    struct content *n;

    if (off < 0)
        return content_new(c->nperms, c->perms, c->datalen, c->data, c->childlen, c->children);
    n = content_new(c->nperms, c->perms, c->datalen, c->data, c->childlen - (uint32_t)l, NULL);
    if (n) {
        memcpy(n->children, c->children, (size_t)off);
        memcpy(n->children + off, c->children + off + l, c->childlen - (size_t)off - l);
    }
    return n;
}

/* ---- domains ------------------------------------------------------------ */

static struct domain *domain_get(struct xs_store *s, uint32_t domid, bool create)
{
    struct domain *d;

    for (d = s->domains; d; d = d->next)
        if (d->domid == domid)
            return d;
    if (!create)
        return NULL;
    d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->domid = domid;
    d->next = s->domains;
    s->domains = d;
    return d;
}

static void account(struct xs_store *s, uint32_t owner, int64_t delta)
{
    struct domain *d = domain_get(s, owner, true);

    /* Accounting is best effort under ENOMEM: quotas bind guests only. */
    if (d)
        d->nodes = (uint64_t)((int64_t)d->nodes + delta);
}

/* ---- paths and permissions --------------------------------------------- */

static bool valid_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
           ch == '/' || ch == '_' || ch == '@';
}

int xs_path_canonical(uint32_t domid, bool privileged, bool allow_special, const char *path, char *buf, size_t len)
{
    size_t n, i, home = 0;
    int w;

    if (!path || len < XS_PATH_MAX + 1)
        return -EINVAL;
    n = strnlen(path, XS_PATH_MAX + 1);
    if (n > XS_PATH_MAX)
        return -EINVAL;
    if (path[0] == '@') {
        if (!allow_special || n < 2)
            return -EINVAL;
        for (i = 1; i < n; i++)
            if (!valid_char(path[i]) || path[i] == '/')
                return -EINVAL;
        memcpy(buf, path, n + 1);
        return 0;
    }
    if (path[0] == '/')
        w = snprintf(buf, len, "%s", path);
    else
        w = snprintf(buf, len, HOME_PREFIX "%u/%s", domid, path);
    if (w < 0 || (size_t)w > XS_PATH_MAX)
        return -EINVAL;
    n = (size_t)w;
    if (n > 1 && buf[n - 1] == '/')
        return -EINVAL;
    if (strstr(buf, "//"))
        return -EINVAL;
    for (i = 0; i < n; i++)
        if (!valid_char(buf[i]))
            return -EINVAL;
    /* The length quota counts below a domain's home, as xenstored. */
    if (!strncmp(buf, HOME_PREFIX, strlen(HOME_PREFIX))) {
        const char *p = buf + strlen(HOME_PREFIX);
        size_t digits = strspn(p, "0123456789");

        if (digits >= 1 && digits <= 5 && p[digits] == '/')
            home = strlen(HOME_PREFIX) + digits + 1;
    }
    if (!privileged && n - home > XS_QUOTA_PATH_LEN)
        return -EINVAL;
    return 0;
}

int xs_perm_parse(const char *text, struct xs_perm *ret_perm)
{
    struct xs_perm p;
    size_t digits, i;
    uint32_t id = 0;

    switch (text[0]) {
    case 'n': p.perm = XS_STORE_PERM_NONE; break;
    case 'r': p.perm = XS_STORE_PERM_READ; break;
    case 'w': p.perm = XS_STORE_PERM_WRITE; break;
    case 'b': p.perm = XS_STORE_PERM_BOTH; break;
    default: return -EINVAL;
    }
    digits = strspn(text + 1, "0123456789");
    if (digits < 1 || digits > 5 || text[1 + digits] != '\0')
        return -EINVAL;
    for (i = 0; i < digits; i++)
        id = id * 10 + (uint32_t)(text[1 + i] - '0');
    if (id > XS_DOMID_MAX)
        return -EINVAL;
    p.domid = id;
    *ret_perm = p;
    return 0;
}

int xs_perm_format(const struct xs_perm *perm, char *buf, size_t len)
{
    static const char letters[] = "nrwb";
    int n = snprintf(buf, len, "%c%u", letters[perm->perm & 3], perm->domid);

    return n < 0 || (size_t)n >= len ? -ENOBUFS : n;
}

/* xenstored's perm_for_conn(): owner and dom0 get all, else the entry
 * naming the domain, else the owner entry's default. */
static unsigned int perm_for(const struct xs_conn *c, uint32_t nperms, const struct xs_perm *perms)
{
    uint32_t i;

    if (c->privileged || (nperms && perms[0].domid == c->domid))
        return XS_STORE_PERM_BOTH | PERM_OWNER;
    for (i = 1; i < nperms; i++)
        if (perms[i].domid == c->domid)
            return perms[i].perm;
    return nperms ? perms[0].perm : XS_STORE_PERM_NONE;
}

static void parent_of(const char *path, char *buf)
{
    const char *slash = strrchr(path, '/');
    size_t l = (size_t)(slash - path);

    if (l == 0)
        l = 1; /* "/x" -> "/" */
    memcpy(buf, path, l);
    buf[l] = '\0';
}

static const char *base_of(const char *path)
{
    return strrchr(path, '/') + 1;
}

/* ---- transactions ------------------------------------------------------- */

static void tx_free(struct tx *t)
{
    if (!t)
        return;
    map_clear(&t->entries);
    while (t->events) {
        struct event *e = t->events;

        t->events = e->next;
        free(e);
    }
    free(t->deltas);
    free(t);
}

static struct tx *tx_new(bool limited)
{
    struct tx *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->limited = limited;
    t->order_tail = &t->order;
    t->events_tail = &t->events;
    return t;
}

/*
 * The transaction's entry for path, created on first access (recording
 * the main store's generation then).  A guest's transaction touches at
 * most XS_QUOTA_TX_NODES records (xenstored's quota_trans_nodes).
 */
static int tx_entry(struct xs_store *s, struct xs_conn *c, struct tx *t, const char *path, struct node **ret)
{
    uint32_t h = hash_path(path);
    struct node *e = map_find(&t->entries, path, h), *m;

    if (e) {
        *ret = e;
        return 0;
    }
    if (t->limited && !c->privileged && t->entries.count >= XS_QUOTA_TX_NODES)
        return -ENOSPC;
    if (map_reserve(&t->entries, 1) < 0)
        return -ENOMEM;
    e = node_new(path, h);
    if (!e)
        return -ENOMEM;
    m = map_find(&s->nodes, path, h);
    e->seen = m ? m->c->generation : 0;
    map_insert(&t->entries, e);
    *t->order_tail = e;
    t->order_tail = &e->order_next;
    *ret = e;
    return 0;
}

/* What the transaction sees at entry e. */
static const struct content *visible(struct xs_store *s, const struct node *e)
{
    const struct node *m;

    if (e->modified)
        return e->c;
    m = map_find(&s->nodes, e->path, e->hash);
    return m ? m->c : NULL;
}

static int tx_get(struct xs_store *s, struct xs_conn *c, struct tx *t, const char *path, struct node **ret_entry,
                  const struct content **ret)
{
    struct node *e;
    int r = tx_entry(s, c, t, path, &e);

    if (r < 0)
        return r;
    if (ret_entry)
        *ret_entry = e;
    *ret = visible(s, e);
    return 0;
}

static int64_t tx_delta(const struct tx *t, uint32_t domid)
{
    size_t i;

    for (i = 0; i < t->ndeltas; i++)
        if (t->deltas[i].domid == domid)
            return t->deltas[i].nodes;
    return 0;
}

/* Nodes `domid` owns as the transaction sees them. */
static int64_t tx_nodes(struct xs_store *s, const struct tx *t, uint32_t domid)
{
    struct domain *d = domain_get(s, domid, false);

    return (d ? (int64_t)d->nodes : 0) + tx_delta(t, domid);
}

static int tx_reserve_delta(struct tx *t, uint32_t domid)
{
    struct delta *grown;
    size_t i;

    for (i = 0; i < t->ndeltas; i++)
        if (t->deltas[i].domid == domid)
            return 0;
    grown = realloc(t->deltas, (t->ndeltas + 1) * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    t->deltas = grown;
    t->deltas[t->ndeltas].domid = domid;
    t->deltas[t->ndeltas].nodes = 0;
    t->ndeltas++;
    return 0;
}

static void tx_add_delta(struct tx *t, uint32_t domid, int64_t d)
{
    size_t i;

    for (i = 0; i < t->ndeltas; i++) {
        if (t->deltas[i].domid == domid) {
            t->deltas[i].nodes += d;
            return;
        }
    }
}

/* Replace what entry e holds; c may be NULL (delete).  Cannot fail once
 * tx_reserve_delta() was called for both owners. */
static void tx_install(struct xs_store *s, struct tx *t, struct node *e, struct content *c)
{
    const struct content *old = visible(s, e);

    if (old && old->nperms)
        tx_add_delta(t, old->perms[0].domid, -1);
    if (c && c->nperms)
        tx_add_delta(t, c->perms[0].domid, +1);
    if (e->modified)
        free(e->c);
    e->c = c;
    e->modified = true;
}

/* An event keeps the node's permissions of the moment, to decide later who
 * may hear of it (a removed node has none left to look up). */
static struct event *event_alloc(const char *path, bool exact, const struct content *c)
{
    size_t l = strlen(path) + 1, np = c ? c->nperms : 0;
    struct event *ev = malloc(sizeof(*ev) + l + 4 + np * sizeof(struct xs_perm));

    if (!ev)
        return NULL;
    ev->next = NULL;
    ev->exact = exact;
    memcpy(ev->path, path, l);
    ev->nperms = (uint32_t)np;
    ev->perms = (struct xs_perm *)(((uintptr_t)(ev->path + l) + 3) & ~(uintptr_t)3);
    if (np)
        memcpy(ev->perms, c->perms, np * sizeof(struct xs_perm));
    return ev;
}

static void tx_queue_event(struct tx *t, struct event *ev)
{
    *t->events_tail = ev;
    t->events_tail = &ev->next;
}

/* ---- watches ------------------------------------------------------------ */

/* Is path equal to or below watched? */
static bool is_child(const char *path, const char *watched)
{
    size_t l = strlen(watched);

    if (!strcmp(watched, "/"))
        return path[0] == '/';
    return !strncmp(path, watched, l) && (path[l] == '\0' || path[l] == '/');
}

static void deliver(struct watch *w, const char *path)
{
    const char *p = path;

    if (w->relative) {
        char home[32];
        size_t l;

        snprintf(home, sizeof(home), HOME_PREFIX "%u/", w->conn->domid);
        l = strlen(home);
        if (!strncmp(p, home, l))
            p += l;
    }
    if (w->conn->fn)
        w->conn->fn(w->conn->data, p, w->token);
}

static void fire(struct xs_store *s, const struct event *ev)
{
    struct watch *w;

    for (w = s->watches; w; w = w->next) {
        if (w->path[0] == '@')
            continue;
        if (ev->exact ? strcmp(ev->path, w->path) : !is_child(ev->path, w->path))
            continue;
        /* A watcher learns only of nodes it may read, as xenstored. */
        if (!(perm_for(w->conn, ev->nperms, ev->perms) & XS_STORE_PERM_READ))
            continue;
        deliver(w, ev->path);
    }
}

static void fire_special(struct xs_store *s, int which)
{
    const struct special *sp = &s->specials[which];
    struct watch *w;

    for (w = s->watches; w; w = w->next)
        if (!strcmp(w->path, sp->name) && (perm_for(w->conn, sp->nperms, sp->perms) & XS_STORE_PERM_READ))
            deliver(w, sp->name);
}

/* ---- commit ------------------------------------------------------------- */

static int tx_commit(struct xs_store *s, struct tx *t)
{
    struct node *e, *fresh = NULL, **fresh_tail = &fresh;
    struct event *ev;
    int r;

    for (e = t->order; e; e = e->order_next) {
        const struct node *m = map_find(&s->nodes, e->path, e->hash);

        if ((m ? m->c->generation : 0) != e->seen)
            return -EAGAIN;
    }
    /* Allocate first so that applying cannot fail half way. */
    for (e = t->order; e; e = e->order_next) {
        if (e->modified && e->c && !map_find(&s->nodes, e->path, e->hash)) {
            struct node *n = node_new(e->path, e->hash);

            if (!n) {
                r = -ENOMEM;
                goto fail;
            }
            /* Same order as the entries that will take them below. */
            *fresh_tail = n;
            fresh_tail = &n->order_next;
        }
    }
    {
        size_t nfresh = 0;

        for (e = fresh; e; e = e->order_next)
            nfresh++;
        r = map_reserve(&s->nodes, nfresh);
        if (r < 0)
            goto fail;
    }
    for (e = t->order; e; e = e->order_next) {
        struct node *m;

        if (!e->modified)
            continue;
        m = map_find(&s->nodes, e->path, e->hash);
        if (m) {
            account(s, m->c->perms[0].domid, -1);
            if (!e->c) {
                map_unlink(&s->nodes, m);
                node_free(m);
                continue;
            }
            free(m->c);
        } else {
            if (!e->c)
                continue;
            m = fresh;
            fresh = fresh->order_next;
            m->order_next = NULL;
            map_insert(&s->nodes, m);
        }
        m->c = e->c;
        e->c = NULL;
        e->modified = false;
        m->c->generation = ++s->generation;
        account(s, m->c->perms[0].domid, +1);
    }
    for (ev = t->events; ev; ev = ev->next)
        fire(s, ev);
    return 0;
fail:
    while (fresh) {
        e = fresh;
        fresh = fresh->order_next;
        node_free(e);
    }
    return r;
}

/* ---- the store ---------------------------------------------------------- */

static int store_put_raw(struct xs_store *s, const char *path, const char *child)
{
    static const struct xs_perm dom0_only = {.domid = 0, .perm = XS_STORE_PERM_NONE};
    uint32_t h = hash_path(path);
    struct node *n = node_new(path, h);

    if (!n || map_reserve(&s->nodes, 1) < 0)
        goto nomem;
    n->c = content_new(1, &dom0_only, 0, NULL, child ? (uint32_t)strlen(child) + 1 : 0, child);
    if (!n->c)
        goto nomem;
    n->c->generation = ++s->generation;
    map_insert(&s->nodes, n);
    account(s, 0, +1);
    return 0;
nomem:
    node_free(n);
    return -ENOMEM;
}

void xs_store_set_quota_nodes(struct xs_store *s, unsigned int nodes)
{
    s->quota_nodes = nodes;
}

struct xs_store *xs_store_new(void)
{
    static const struct xs_perm dom0_only = {.domid = 0, .perm = XS_STORE_PERM_NONE};
    struct xs_store *s = calloc(1, sizeof(*s));
    int i;

    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    s->next_tx_id = 1;
    s->watches_tail = &s->watches;
    s->specials[SPECIAL_INTRODUCE].name = "@introduceDomain";
    s->specials[SPECIAL_RELEASE].name = "@releaseDomain";
    for (i = 0; i < 2; i++) {
        s->specials[i].perms = malloc(sizeof(dom0_only));
        if (!s->specials[i].perms)
            goto nomem;
        s->specials[i].perms[0] = dom0_only;
        s->specials[i].nperms = 1;
    }
    if (store_put_raw(s, "/", "tool") < 0 || store_put_raw(s, "/tool", "xenstored") < 0 ||
        store_put_raw(s, "/tool/xenstored", NULL) < 0)
        goto nomem;
    return s;
nomem:
    xs_store_free(s);
    errno = ENOMEM;
    return NULL;
}

void xs_store_free(struct xs_store *s)
{
    int i;

    if (!s)
        return;
    while (s->conns)
        xs_conn_free(s->conns);
    map_clear(&s->nodes);
    while (s->domains) {
        struct domain *d = s->domains;

        s->domains = d->next;
        free(d);
    }
    for (i = 0; i < 2; i++)
        free(s->specials[i].perms);
    free(s);
}

size_t xs_store_node_count(const struct xs_store *s)
{
    return s->nodes.count;
}

int xs_store_introduce(struct xs_store *s, uint32_t domid)
{
    struct domain *d = domain_get(s, domid, true);

    if (!d)
        return -ENOMEM;
    if (d->introduced)
        return -EEXIST;
    d->introduced = true;
    fire_special(s, SPECIAL_INTRODUCE);
    return 0;
}

bool xs_store_is_introduced(struct xs_store *s, uint32_t domid)
{
    struct domain *d = domain_get(s, domid, false);

    return d && d->introduced;
}

int xs_store_release(struct xs_store *s, uint32_t domid)
{
    struct domain *d = domain_get(s, domid, false);
    size_t i;

    if (!d || !d->introduced)
        return -ENOENT;
    d->introduced = false;
    /*
     * A dead domain's id will be reused: what it still owns goes to dom0
     * and entries naming it go away, so a newcomer inherits nothing.
     */
    for (i = 0; i < s->nodes.nbuckets; i++) {
        struct node *n;

        for (n = s->nodes.buckets[i]; n; n = n->next) {
            struct content *c = n->c;
            uint32_t j, k;

            if (c->perms[0].domid == domid) {
                c->perms[0].domid = 0;
                account(s, domid, -1);
                account(s, 0, +1);
            }
            for (j = k = 1; j < c->nperms; j++)
                if (c->perms[j].domid != domid)
                    c->perms[k++] = c->perms[j];
            c->nperms = k;
        }
    }
    fire_special(s, SPECIAL_RELEASE);
    return 0;
}

/* ---- connections -------------------------------------------------------- */

struct xs_conn *xs_conn_new(struct xs_store *s, uint32_t domid, xs_event_fn fn, void *data)
{
    struct xs_conn *c = calloc(1, sizeof(*c));

    if (!c || !domain_get(s, domid, true)) {
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    c->s = s;
    c->domid = domid;
    c->privileged = domid == 0;
    c->fn = fn;
    c->data = data;
    c->next = s->conns;
    s->conns = c;
    return c;
}

uint32_t xs_conn_domid(const struct xs_conn *c)
{
    return c->domid;
}

struct xs_store *xs_conn_store(const struct xs_conn *c)
{
    return c->s;
}

static void drop_watches(struct xs_conn *c)
{
    struct xs_store *s = c->s;
    struct watch **pp = &s->watches;
    struct domain *d = domain_get(s, c->domid, false);

    while (*pp) {
        struct watch *w = *pp;

        if (w->conn != c) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (d && d->watches)
            d->watches--;
        free(w->token);
        free(w);
    }
    s->watches_tail = &s->watches;
    while (*s->watches_tail)
        s->watches_tail = &(*s->watches_tail)->next;
}

static void drop_transactions(struct xs_conn *c)
{
    struct domain *d = domain_get(c->s, c->domid, false);

    while (c->txs) {
        struct tx *t = c->txs;

        c->txs = t->next;
        if (d && d->transactions)
            d->transactions--;
        tx_free(t);
    }
}

void xs_conn_free(struct xs_conn *c)
{
    struct xs_conn **pp;

    if (!c)
        return;
    drop_watches(c);
    drop_transactions(c);
    for (pp = &c->s->conns; *pp && *pp != c; pp = &(*pp)->next)
        ;
    if (*pp)
        *pp = c->next;
    free(c);
}

/*
 * A relative watch names a path under the connection's home: moved with
 * the connection, it names the same path under the new home, as the
 * guest kernel registers it again after a resume.
 */
static int rehome_watch(struct xs_store *s, struct watch **pp, uint32_t old_domid, uint32_t new_domid)
{
    char old_home[32], path[XS_PATH_MAX + 1];
    struct watch *w = *pp, *moved;
    size_t ol, l;
    int n;

    snprintf(old_home, sizeof(old_home), HOME_PREFIX "%u/", old_domid);
    ol = strlen(old_home);
    if (strncmp(w->path, old_home, ol))
        return 0;
    n = snprintf(path, sizeof(path), HOME_PREFIX "%u/%s", new_domid, w->path + ol);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    l = (size_t)n + 1;
    moved = malloc(sizeof(*moved) + l);
    if (!moved)
        return -ENOMEM;
    *moved = *w;
    memcpy(moved->path, path, l);
    *pp = moved;
    if (s->watches_tail == &w->next)
        s->watches_tail = &moved->next;
    free(w);
    return 0;
}

int xs_conn_move(struct xs_conn *c, uint32_t domid)
{
    struct domain *from = domain_get(c->s, c->domid, false), *to = domain_get(c->s, domid, true);
    struct watch **pp;
    int r = 0;

    if (!to)
        return -ENOMEM;
    if (c->privileged || domid == 0)
        return -EPERM;
    /* The guest's kernel finishes or fails its transactions before it
     * suspends; none is open in the new domain. */
    drop_transactions(c);
    for (pp = &c->s->watches; *pp; pp = &(*pp)->next) {
        if ((*pp)->conn != c)
            continue;
        if (from && from->watches)
            from->watches--;
        to->watches++;
        if ((*pp)->relative && r == 0)
            r = rehome_watch(c->s, pp, c->domid, domid);
    }
    c->domid = domid;
    return r;
}

void xst_fire_all_watches(struct xs_conn *c)
{
    struct watch *w;

    for (w = c->s->watches; w; w = w->next)
        if (w->conn == c)
            deliver(w, w->path);
}

void xst_reset_watches(struct xs_conn *c)
{
    drop_watches(c);
    drop_transactions(c);
}

/* ---- operations --------------------------------------------------------- */

struct op {
    struct xs_conn *c;
    struct xs_store *s;
    struct tx *t;
    bool temporary;
    char path[XS_PATH_MAX + 1];
};

static int op_begin(struct op *op, struct xs_conn *c, uint32_t txid, const char *path, bool allow_special)
{
    int r;

    op->c = c;
    op->s = c->s;
    op->temporary = false;
    op->t = NULL;
    if (path) {
        r = xs_path_canonical(c->domid, c->privileged, allow_special, path, op->path, sizeof(op->path));
        if (r < 0)
            return r;
    }
    if (txid) {
        struct tx *t;

        for (t = c->txs; t && t->id != txid; t = t->next)
            ;
        if (!t)
            return -ENOENT;
        op->t = t;
        return 0;
    }
    op->t = tx_new(false);
    if (!op->t)
        return -ENOMEM;
    op->temporary = true;
    return 0;
}

/* Commit a temporary transaction if the operation worked. */
static int op_end(struct op *op, int r)
{
    if (op->temporary) {
        if (r == 0)
            r = tx_commit(op->s, op->t);
        tx_free(op->t);
        op->t = NULL;
    }
    return r;
}

/*
 * xenstored's get_node(): the node if the client has `need` on it.  On
 * failure, the error says ENOENT only if the client may see that
 * (the closest existing ancestor grants it `need`), else EACCES.
 */
static int get_node(struct op *op, const char *path, unsigned int need, struct node **ret_entry,
                    const struct content **ret)
{
    char anc[XS_PATH_MAX + 1];
    const struct content *c, *a = NULL;
    int r, err;

    r = tx_get(op->s, op->c, op->t, path, ret_entry, &c);
    if (r < 0)
        return r;
    if (c) {
        if ((perm_for(op->c, c->nperms, c->perms) & need) == need) {
            *ret = c;
            return 0;
        }
        err = -EACCES;
    } else {
        err = -ENOENT;
    }
    strcpy(anc, path);
    while (strcmp(anc, "/")) {
        parent_of(anc, anc);
        r = tx_get(op->s, op->c, op->t, anc, NULL, &a);
        if (r < 0)
            return r;
        if (a)
            break;
    }
    if (a && (perm_for(op->c, a->nperms, a->perms) & need))
        return err;
    return -EACCES;
}

static bool too_big(const struct op *op, const struct content *c)
{
    return !op->c->privileged && record_size(c) >= XS_QUOTA_ENTRY_SIZE;
}

int xst_read(struct xs_conn *c, uint32_t tx, const char *path, void *buf, size_t cap, size_t *ret_len)
{
    const struct content *n;
    struct op op;
    int r = op_begin(&op, c, tx, path, false);

    if (r == 0)
        r = get_node(&op, op.path, XS_STORE_PERM_READ, NULL, &n);
    if (r == 0 && n->datalen > cap)
        r = -E2BIG;
    if (r == 0) {
        memcpy(buf, n->data, n->datalen);
        *ret_len = n->datalen;
    }
    return op_end(&op, r);
}

int xst_directory(struct xs_conn *c, uint32_t tx, const char *path, void *buf, size_t cap, size_t *ret_len)
{
    const struct content *n;
    struct op op;
    int r = op_begin(&op, c, tx, path, false);

    if (r == 0)
        r = get_node(&op, op.path, XS_STORE_PERM_READ, NULL, &n);
    if (r == 0 && n->childlen > cap)
        r = -E2BIG;
    if (r == 0) {
        memcpy(buf, n->children, n->childlen);
        *ret_len = n->childlen;
    }
    return op_end(&op, r);
}

int xst_directory_part(struct xs_conn *c, uint32_t tx, const char *path, size_t offset, void *buf, size_t cap,
                      size_t *ret_len)
{
    const struct content *n;
    char gen[24];
    struct op op;
    size_t genlen, len = 0, room;
    char *out = buf;
    int r = op_begin(&op, c, tx, path, false);

    if (r == 0)
        r = get_node(&op, op.path, XS_STORE_PERM_READ, NULL, &n);
    if (r < 0)
        return op_end(&op, r);
    genlen = (size_t)snprintf(gen, sizeof(gen), "%llu", (unsigned long long)n->generation) + 1;
    if (cap < genlen + 1)
        return op_end(&op, -E2BIG);
    memcpy(out, gen, genlen);
    room = cap - genlen - 1;
    if (offset < n->childlen) {
        /* Whole names only, as many as fit. */
        while (offset + len < n->childlen) {
            size_t l = strnlen(n->children + offset + len, n->childlen - offset - len) + 1;

            if (len + l > room)
                break;
            len += l;
        }
        if (len == 0)
            return op_end(&op, -E2BIG);
        memcpy(out + genlen, n->children + offset, len);
    }
    if (offset + len >= n->childlen)
        out[genlen + len++] = '\0'; /* the list is complete */
    *ret_len = genlen + len;
    return op_end(&op, 0);
}

int xst_get_perms(struct xs_conn *c, uint32_t tx, const char *path, struct xs_perm *perms, size_t cap,
                 size_t *ret_count)
{
    const struct content *n;
    struct op op;
    int r = op_begin(&op, c, tx, path, true);

    if (r < 0)
        return op_end(&op, r);
    if (op.path[0] == '@') {
        int i;

        for (i = 0; i < 2; i++) {
            const struct special *sp = &c->s->specials[i];

            if (strcmp(sp->name, op.path))
                continue;
            if (sp->nperms > cap)
                return op_end(&op, -E2BIG);
            memcpy(perms, sp->perms, sp->nperms * sizeof(*perms));
            *ret_count = sp->nperms;
            return op_end(&op, 0);
        }
        return op_end(&op, -ENOENT);
    }
    r = get_node(&op, op.path, XS_STORE_PERM_READ, NULL, &n);
    if (r == 0 && n->nperms > cap)
        r = -E2BIG;
    if (r == 0) {
        memcpy(perms, n->perms, n->nperms * sizeof(*perms));
        *ret_count = n->nperms;
    }
    return op_end(&op, r);
}

/*
 * Create op->path and its missing ancestors with `data`.  Each new node
 * takes its parent's permissions; a guest owns what it creates.
 */
static int create_node(struct op *op, const void *data, size_t datalen)
{
    char missing_top[XS_PATH_MAX + 1], cur[XS_PATH_MAX + 1];
    struct node *anc_e = NULL, **entries = NULL;
    struct content *anc_new = NULL, **news = NULL;
    const struct content *anc = NULL;
    struct event *ev = NULL;
    size_t nmissing = 0, i;
    int r;

    /* Find the closest existing ancestor, counting what is missing. */
    strcpy(cur, op->path);
    strcpy(missing_top, op->path);
    for (;;) {
        nmissing++;
        strcpy(missing_top, cur);
        parent_of(cur, cur);
        r = tx_get(op->s, op->c, op->t, cur, &anc_e, &anc);
        if (r < 0)
            return r;
        if (anc)
            break;
        if (!strcmp(cur, "/"))
            return -EIO; /* the root never goes away */
    }
    entries = calloc(nmissing, sizeof(*entries));
    news = calloc(nmissing, sizeof(*news));
    if (!entries || !news) {
        r = -ENOMEM;
        goto out;
    }
    /* Entries from the top missing node down to op->path. */
    i = nmissing;
    strcpy(cur, op->path);
    while (i-- > 0) {
        r = tx_entry(op->s, op->c, op->t, cur, &entries[i]);
        if (r < 0)
            goto out;
        parent_of(cur, cur);
    }
    anc_new = content_add_child(anc, base_of(missing_top));
    if (!anc_new) {
        r = -ENOMEM;
        goto out;
    }
    if (too_big(op, anc_new)) {
        r = -ENOSPC;
        goto out;
    }
    for (i = 0; i < nmissing; i++) {
        const struct content *parent = i ? news[i - 1] : anc;
        bool last = i == nmissing - 1;
        const char *child = last ? NULL : base_of(entries[i + 1]->path);

        /* xenstored checks the count before each new node. */
        if (!op->c->privileged && tx_nodes(op->s, op->t, op->c->domid) + (int64_t)i >=
                                         (op->s->quota_nodes ? op->s->quota_nodes : XS_QUOTA_NODES)) {
            r = -ENOSPC;
            goto out;
        }
        news[i] = content_new(parent->nperms, parent->perms, last ? (uint32_t)datalen : 0, last ? data : NULL,
                              child ? (uint32_t)strlen(child) + 1 : 0, child);
        if (!news[i]) {
            r = -ENOMEM;
            goto out;
        }
        if (!op->c->privileged)
            news[i]->perms[0].domid = op->c->domid;
        if (too_big(op, news[i])) {
            r = -ENOSPC;
            goto out;
        }
    }
    ev = event_alloc(op->path, false, news[nmissing - 1]);
    if (!ev || tx_reserve_delta(op->t, anc->perms[0].domid) < 0 || tx_reserve_delta(op->t, news[0]->perms[0].domid) < 0 ||
        tx_reserve_delta(op->t, op->c->domid) < 0) {
        r = -ENOMEM;
        goto out;
    }
    tx_install(op->s, op->t, anc_e, anc_new);
    anc_new = NULL;
    for (i = 0; i < nmissing; i++) {
        tx_install(op->s, op->t, entries[i], news[i]);
        news[i] = NULL;
    }
    tx_queue_event(op->t, ev);
    ev = NULL;
    r = 0;
out:
    if (news)
        for (i = 0; i < nmissing; i++)
            free(news[i]);
    free(news);
    free(entries);
    free(anc_new);
    free(ev);
    return r;
}

int xst_write(struct xs_conn *c, uint32_t tx, const char *path, const void *data, size_t len)
{
    const struct content *n;
    struct content *fresh = NULL;
    struct event *ev = NULL;
    struct node *e;
    struct op op;
    int r = op_begin(&op, c, tx, path, false);

    if (r < 0)
        return op_end(&op, r);
    if (len > UINT32_MAX / 2)
        return op_end(&op, -E2BIG);
    r = get_node(&op, op.path, XS_STORE_PERM_WRITE, &e, &n);
    if (r == -ENOENT)
        return op_end(&op, create_node(&op, data, len));
    if (r < 0)
        return op_end(&op, r);
    fresh = content_new(n->nperms, n->perms, (uint32_t)len, data, n->childlen, n->children);
    ev = fresh ? event_alloc(op.path, false, fresh) : NULL;
    if (!fresh || !ev)
        r = -ENOMEM;
    else if (too_big(&op, fresh))
        r = -ENOSPC;
    if (r == 0) {
        tx_install(op.s, op.t, e, fresh);
        tx_queue_event(op.t, ev);
        fresh = NULL;
        ev = NULL;
    }
    free(fresh);
    free(ev);
    return op_end(&op, r);
}

int xst_mkdir(struct xs_conn *c, uint32_t tx, const char *path)
{
    const struct content *n;
    struct op op;
    int r = op_begin(&op, c, tx, path, false);

    if (r < 0)
        return op_end(&op, r); /* ENOENT here is an unknown transaction */
    r = get_node(&op, op.path, XS_STORE_PERM_WRITE, NULL, &n);
    if (r == -ENOENT)
        r = create_node(&op, NULL, 0);
    return op_end(&op, r);
}

int xst_rm(struct xs_conn *c, uint32_t tx, const char *path)
{
    char parent[XS_PATH_MAX + 1], child[XS_PATH_MAX + 1];
    struct node *e, *pe, **stack = NULL, **all = NULL;
    const struct content *n, *p;
    struct content *pnew = NULL;
    struct event **evs = NULL;
    size_t nall = 0, cap = 0, nstack = 0, i;
    struct op op;
    int r = op_begin(&op, c, tx, path, false);

    if (r < 0)
        return op_end(&op, r);
    r = get_node(&op, op.path, XS_STORE_PERM_WRITE, &e, &n);
    if (r == -ENOENT) {
        /* Removing what is not there is fine if the parent is. */
        parent_of(op.path, parent);
        r = tx_get(op.s, c, op.t, parent, NULL, &p);
        if (r == 0 && !p)
            r = -ENOENT;
        return op_end(&op, r);
    }
    if (r < 0)
        return op_end(&op, r);
    if (!strcmp(op.path, "/"))
        return op_end(&op, -EINVAL);
    parent_of(op.path, parent);
    r = tx_get(op.s, c, op.t, parent, &pe, &p);
    if (r == 0 && !p)
        r = -EIO;
    if (r < 0)
        return op_end(&op, r);

    /* The subtree, iteratively: paths can be 1500 levels deep. */
    stack = malloc(sizeof(*stack));
    if (!stack) {
        r = -ENOMEM;
        goto out;
    }
    stack[nstack++] = e;
    while (nstack) {
        struct node *cur = stack[--nstack];
        const struct content *cc = visible(op.s, cur);
        uint32_t off = 0;

        if (nall == cap) {
            struct node **g = realloc(all, (cap = cap ? cap * 2 : 16) * sizeof(*g));

            if (!g) {
                r = -ENOMEM;
                goto out;
            }
            all = g;
        }
        all[nall++] = cur;
        while (cc && off < cc->childlen) {
            const char *name = cc->children + off;
            size_t l = strnlen(name, cc->childlen - off);
            struct node *ce;
            struct node **g;
            int w;

            off += (uint32_t)l + 1;
            w = snprintf(child, sizeof(child), "%s/%s", strcmp(cur->path, "/") ? cur->path : "", name);
            if (w < 0 || (size_t)w >= sizeof(child))
                continue;
            r = tx_entry(op.s, c, op.t, child, &ce);
            if (r < 0)
                goto out;
            if (!visible(op.s, ce))
                continue;
            g = realloc(stack, (nstack + 1) * sizeof(*g));
            if (!g) {
                r = -ENOMEM;
                goto out;
            }
            stack = g;
            stack[nstack++] = ce;
        }
    }
    pnew = content_remove_child(p, base_of(op.path));
    evs = calloc(nall, sizeof(*evs));
    if (!pnew || !evs) {
        r = -ENOMEM;
        goto out;
    }
    /* One event for watches on the node and above, then one for each
     * watch exactly on a node below it. */
    for (i = 0; i < nall; i++) {
        evs[i] = event_alloc(all[i]->path, i != 0, visible(op.s, all[i]));
        if (!evs[i]) {
            r = -ENOMEM;
            goto out;
        }
    }
    for (i = 0; i < nall; i++) {
        const struct content *cc = visible(op.s, all[i]);

        if (cc && tx_reserve_delta(op.t, cc->perms[0].domid) < 0) {
            r = -ENOMEM;
            goto out;
        }
    }
    if (tx_reserve_delta(op.t, p->perms[0].domid) < 0) {
        r = -ENOMEM;
        goto out;
    }
    tx_install(op.s, op.t, pe, pnew);
    pnew = NULL;
    for (i = 0; i < nall; i++) {
        tx_install(op.s, op.t, all[i], NULL);
        tx_queue_event(op.t, evs[i]);
        evs[i] = NULL;
    }
    r = 0;
out:
    if (evs)
        for (i = 0; i < nall; i++)
            free(evs[i]);
    free(evs);
    free(pnew);
    free(stack);
    free(all);
    return op_end(&op, r);
}

int xst_set_perms(struct xs_conn *c, uint32_t tx, const char *path, const struct xs_perm *perms, size_t count)
{
    const struct content *n;
    struct content *fresh = NULL;
    struct event *ev = NULL;
    struct node *e;
    struct op op;
    int r = op_begin(&op, c, tx, path, true);

    if (r < 0)
        return op_end(&op, r);
    if (count < 1 || count > XS_PERMS_MAX)
        return op_end(&op, -EINVAL);
    if (!c->privileged && count > XS_QUOTA_PERMS)
        return op_end(&op, -ENOSPC);
    if (op.path[0] == '@') {
        struct special *sp = NULL;
        struct xs_perm *copy;
        int i;

        for (i = 0; i < 2; i++)
            if (!strcmp(c->s->specials[i].name, op.path))
                sp = &c->s->specials[i];
        if (!sp)
            return op_end(&op, -ENOENT);
        if (!c->privileged)
            return op_end(&op, -EACCES);
        copy = malloc(count * sizeof(*copy));
        if (!copy)
            return op_end(&op, -ENOMEM);
        memcpy(copy, perms, count * sizeof(*copy));
        free(sp->perms);
        sp->perms = copy;
        sp->nperms = (uint32_t)count;
        return op_end(&op, 0);
    }
    r = get_node(&op, op.path, XS_STORE_PERM_WRITE | PERM_OWNER, &e, &n);
    if (r < 0)
        return op_end(&op, r);
    /* Guests may not give their nodes away. */
    if (!c->privileged && perms[0].domid != n->perms[0].domid)
        return op_end(&op, -EPERM);
    fresh = content_new((uint32_t)count, perms, n->datalen, n->data, n->childlen, n->children);
    ev = fresh ? event_alloc(op.path, false, fresh) : NULL;
    if (!fresh || !ev || tx_reserve_delta(op.t, n->perms[0].domid) < 0 || tx_reserve_delta(op.t, perms[0].domid) < 0)
        r = -ENOMEM;
    else if (too_big(&op, fresh))
        r = -ENOSPC;
    if (r == 0) {
        tx_install(op.s, op.t, e, fresh);
        tx_queue_event(op.t, ev);
        fresh = NULL;
        ev = NULL;
    }
    free(fresh);
    free(ev);
    return op_end(&op, r);
}

static struct watch *find_watch(struct xs_conn *c, const char *canon, const char *token)
{
    struct watch *w;

    for (w = c->s->watches; w; w = w->next)
        if (w->conn == c && !strcmp(w->path, canon) && !strcmp(w->token, token))
            return w;
    return NULL;
}

int xst_watch_fire_initial(struct xs_conn *c, const char *path, const char *token)
{
    char canon[XS_PATH_MAX + 1];
    struct watch *w;
    int r = xs_path_canonical(c->domid, c->privileged, true, path, canon, sizeof(canon));

    if (r < 0)
        return r;
    w = find_watch(c, canon, token);
    if (!w)
        return -ENOENT;
    deliver(w, w->path);
    return 0;
}

int xst_watch(struct xs_conn *c, const char *path, const char *token, bool fire_initial)
{
    char canon[XS_PATH_MAX + 1];
    struct domain *d;
    struct watch *w;
    size_t l;
    int r = xs_path_canonical(c->domid, c->privileged, true, path, canon, sizeof(canon));

    if (r < 0)
        return r;
    if (find_watch(c, canon, token))
        return -EEXIST;
    d = domain_get(c->s, c->domid, true);
    if (!d)
        return -ENOMEM;
    if (!c->privileged && d->watches >= XS_QUOTA_WATCHES)
        return -E2BIG;
    l = strlen(canon) + 1;
    w = calloc(1, sizeof(*w) + l);
    if (!w || !(w->token = strdup(token))) {
        free(w);
        return -ENOMEM;
    }
    memcpy(w->path, canon, l);
    w->conn = c;
    w->relative = path[0] != '/' && path[0] != '@';
    *c->s->watches_tail = w;
    c->s->watches_tail = &w->next;
    d->watches++;
    /* xenstored fires once up front; clients rely on it. */
    if (fire_initial)
        deliver(w, w->path);
    return 0;
}

int xst_unwatch(struct xs_conn *c, const char *path, const char *token)
{
    char canon[XS_PATH_MAX + 1];
    struct watch **pp;
    int r = xs_path_canonical(c->domid, c->privileged, true, path, canon, sizeof(canon));

    if (r < 0)
        return r;
    for (pp = &c->s->watches; *pp; pp = &(*pp)->next) {
        struct watch *w = *pp;
        struct domain *d;

        if (w->conn != c || strcmp(w->path, canon) || strcmp(w->token, token))
            continue;
        *pp = w->next;
        if (c->s->watches_tail == &w->next)
            c->s->watches_tail = pp;
        d = domain_get(c->s, c->domid, false);
        if (d && d->watches)
            d->watches--;
        free(w->token);
        free(w);
        return 0;
    }
    return -ENOENT;
}

int xst_transaction_start(struct xs_conn *c, uint32_t tx, uint32_t *ret_id)
{
    struct domain *d;
    struct tx *t;
    uint32_t id;

    if (tx) {
        for (t = c->txs; t && t->id != tx; t = t->next)
            ;
        return t ? -EBUSY : -ENOENT; /* no nesting */
    }
    d = domain_get(c->s, c->domid, true);
    if (!d)
        return -ENOMEM;
    if (!c->privileged && d->transactions >= XS_QUOTA_TRANSACTIONS)
        return -ENOSPC;
    t = tx_new(true);
    if (!t)
        return -ENOMEM;
    for (;;) {
        struct tx *u;

        id = c->s->next_tx_id++;
        if (!id)
            continue;
        for (u = c->txs; u && u->id != id; u = u->next)
            ;
        if (!u)
            break;
    }
    t->id = id;
    t->next = c->txs;
    c->txs = t;
    d->transactions++;
    *ret_id = id;
    return 0;
}

int xst_transaction_end(struct xs_conn *c, uint32_t tx, bool commit)
{
    struct tx **pp, *t;
    struct domain *d;
    int r = 0;

    for (pp = &c->txs; *pp && (*pp)->id != tx; pp = &(*pp)->next)
        ;
    t = *pp;
    if (!t || !tx)
        return -ENOENT;
    *pp = t->next;
    d = domain_get(c->s, c->domid, false);
    if (d && d->transactions)
        d->transactions--;
    if (commit)
        r = tx_commit(c->s, t);
    tx_free(t);
    return r;
}
