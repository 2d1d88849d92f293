/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The xenstore engine and wire layer, in-process: exact errnos. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/xenstore/xs_store.h"
#include "emu/xenstore/xs_wire.h"

#define MAX_EVENTS 64

struct events {
    unsigned int n;
    char ev[MAX_EVENTS][256];
};

static void on_event(void *data, const char *path, const char *token)
{
    struct events *e = data;

    if (e->n < MAX_EVENTS)
        snprintf(e->ev[e->n++], sizeof(e->ev[0]), "%s|%s", path, token);
}

static bool has_event(const struct events *e, const char *want)
{
    unsigned int i;

    for (i = 0; i < e->n; i++)
        if (!strcmp(e->ev[i], want))
            return true;
    return false;
}

struct fixture {
    struct xs_store *s;
    struct xs_conn *dom0, *g1, *g2;
    struct events e0, e1, e2;
};

static int setup(void **state)
{
    static const struct xs_perm ro1[] = {{0, XS_STORE_PERM_NONE}, {1, XS_STORE_PERM_READ}};
    static const struct xs_perm ro2[] = {{0, XS_STORE_PERM_NONE}, {2, XS_STORE_PERM_READ}};
    static const struct xs_perm rw1[] = {{1, XS_STORE_PERM_NONE}};
    static const struct xs_perm rw2[] = {{2, XS_STORE_PERM_NONE}};
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->s = xs_store_new();
    assert_non_null(f->s);
    f->dom0 = xs_conn_new(f->s, 0, on_event, &f->e0);
    f->g1 = xs_conn_new(f->s, 1, on_event, &f->e1);
    f->g2 = xs_conn_new(f->s, 2, on_event, &f->e2);
    assert_non_null(f->g2);
    /* What the toolstack writes (xenstore.c), in short. */
    assert_int_equal(xst_mkdir(f->dom0, 0, "/local/domain/1"), 0);
    assert_int_equal(xst_set_perms(f->dom0, 0, "/local/domain/1", ro1, 2), 0);
    assert_int_equal(xst_mkdir(f->dom0, 0, "/local/domain/1/data"), 0);
    assert_int_equal(xst_set_perms(f->dom0, 0, "/local/domain/1/data", rw1, 1), 0);
    assert_int_equal(xst_mkdir(f->dom0, 0, "/local/domain/2"), 0);
    assert_int_equal(xst_set_perms(f->dom0, 0, "/local/domain/2", ro2, 2), 0);
    assert_int_equal(xst_mkdir(f->dom0, 0, "/local/domain/2/data"), 0);
    assert_int_equal(xst_set_perms(f->dom0, 0, "/local/domain/2/data", rw2, 1), 0);
    assert_int_equal(xst_write(f->dom0, 0, "/local/domain/1/name", "one", 3), 0);
    f->e0.n = f->e1.n = f->e2.n = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    xs_store_free(f->s); /* frees the connections too */
    free(f);
    return 0;
}

static int read_str(struct xs_conn *c, uint32_t tx, const char *path, char *buf, size_t cap)
{
    size_t len = 0;
    int r = xst_read(c, tx, path, buf, cap - 1, &len);

    buf[r == 0 ? len : 0] = '\0';
    return r;
}

static void test_paths(void **state)
{
    char buf[XS_PATH_MAX + 1], longp[XS_PATH_MAX + 64];
    struct xs_perm p;

    (void)state;
    assert_int_equal(xs_path_canonical(3, false, false, "data/x", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/local/domain/3/data/x");
    assert_int_equal(xs_path_canonical(3, false, false, "/", buf, sizeof(buf)), 0);
    assert_int_equal(xs_path_canonical(3, false, false, "", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(3, false, false, "/a/", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(3, false, false, "/a//b", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(3, false, false, "/a b", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(3, false, false, "/a\n", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(3, false, false, "@releaseDomain", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(3, false, true, "@releaseDomain", buf, sizeof(buf)), 0);
    assert_int_equal(xs_path_canonical(3, false, true, "@", buf, sizeof(buf)), -EINVAL);
    /* 2048 characters below the home are fine for a guest, 2049 not. */
    memset(longp, 'a', sizeof(longp));
    longp[2048] = '\0';
    assert_int_equal(xs_path_canonical(3, false, false, longp, buf, sizeof(buf)), 0);
    longp[2048] = 'a';
    longp[2049] = '\0';
    assert_int_equal(xs_path_canonical(3, false, false, longp, buf, sizeof(buf)), -EINVAL);
    assert_int_equal(xs_path_canonical(0, true, false, longp, buf, sizeof(buf)), 0);
    memset(longp, 'a', sizeof(longp));
    longp[0] = '/';
    longp[XS_PATH_MAX] = '\0';
    assert_int_equal(xs_path_canonical(0, true, false, longp, buf, sizeof(buf)), 0);
    longp[XS_PATH_MAX] = 'a';
    longp[XS_PATH_MAX + 1] = '\0';
    assert_int_equal(xs_path_canonical(0, true, false, longp, buf, sizeof(buf)), -EINVAL);

    assert_int_equal(xs_perm_parse("r5", &p), 0);
    assert_int_equal(p.domid, 5);
    assert_int_equal(p.perm, XS_STORE_PERM_READ);
    assert_int_equal(xs_perm_parse("b65535", &p), 0);
    assert_int_equal(p.perm, XS_STORE_PERM_BOTH);
    assert_int_equal(xs_perm_parse("b65536", &p), -EINVAL);
    assert_int_equal(xs_perm_parse("x1", &p), -EINVAL);
    assert_int_equal(xs_perm_parse("r", &p), -EINVAL);
    assert_int_equal(xs_perm_parse("r1x", &p), -EINVAL);
    assert_int_equal(xs_perm_parse("r-1", &p), -EINVAL);
}

static void test_read_write_dir(void **state)
{
    struct fixture *f = *state;
    char buf[4096];
    size_t len;

    assert_int_equal(xst_write(f->dom0, 0, "/a/b/c", "v", 1), 0);
    assert_int_equal(read_str(f->dom0, 0, "/a/b/c", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "v");
    /* Implicit parents exist, empty. */
    assert_int_equal(read_str(f->dom0, 0, "/a/b", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
    assert_int_equal(xst_directory(f->dom0, 0, "/a", buf, sizeof(buf), &len), 0);
    assert_int_equal(len, 2);
    assert_memory_equal(buf, "b", 2);
    assert_int_equal(xst_write(f->dom0, 0, "/a/x", "", 0), 0);
    assert_int_equal(xst_directory(f->dom0, 0, "/a", buf, sizeof(buf), &len), 0);
    assert_int_equal(len, 4);
    assert_memory_equal(buf, "b\0x", 4);
    /* Binary values keep their bytes. */
    assert_int_equal(xst_write(f->dom0, 0, "/bin", "a\0b", 3), 0);
    assert_int_equal(xst_read(f->dom0, 0, "/bin", buf, sizeof(buf), &len), 0);
    assert_int_equal(len, 3);
    assert_memory_equal(buf, "a\0b", 3);
    assert_int_equal(xst_read(f->dom0, 0, "/nope", buf, sizeof(buf), &len), -ENOENT);
    assert_int_equal(xst_mkdir(f->dom0, 0, "/a/b/c"), 0); /* exists: fine */
    /* RM is recursive; removing what is absent under an existing parent is
     * fine, under an absent parent ENOENT. */
    assert_int_equal(xst_rm(f->dom0, 0, "/a"), 0);
    assert_int_equal(xst_read(f->dom0, 0, "/a/b/c", buf, sizeof(buf), &len), -ENOENT);
    assert_int_equal(xst_read(f->dom0, 0, "/a", buf, sizeof(buf), &len), -ENOENT);
    assert_int_equal(xst_rm(f->dom0, 0, "/a"), 0);
    assert_int_equal(xst_rm(f->dom0, 0, "/a/b"), -ENOENT);
    assert_int_equal(xst_rm(f->dom0, 0, "/"), -EINVAL);
    /* Too small a buffer. */
    assert_int_equal(xst_write(f->dom0, 0, "/big", buf, 100), 0);
    assert_int_equal(xst_read(f->dom0, 0, "/big", buf, 10, &len), -E2BIG);
}

static void test_permissions(void **state)
{
    struct fixture *f = *state;
    struct xs_perm perms[8];
    char buf[256];
    size_t n;

    /* Guest reads its home (r1) but not dom0's nodes or another guest's. */
    assert_int_equal(read_str(f->g1, 0, "name", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "one");
    assert_int_equal(read_str(f->g1, 0, "/local/domain/1/name", buf, sizeof(buf)), 0);
    assert_int_equal(read_str(f->g2, 0, "/local/domain/1/name", buf, sizeof(buf)), -EACCES);
    assert_int_equal(read_str(f->g1, 0, "/tool/xenstored", buf, sizeof(buf)), -EACCES);
    /* Absent node: ENOENT only where the closest ancestor is readable. */
    assert_int_equal(read_str(f->g1, 0, "nothing", buf, sizeof(buf)), -ENOENT);
    assert_int_equal(read_str(f->g1, 0, "/local/domain/2/nothing", buf, sizeof(buf)), -EACCES);
    assert_int_equal(read_str(f->g1, 0, "/nothing/here", buf, sizeof(buf)), -EACCES);
    assert_int_equal(xst_directory(f->g1, 0, "/local/domain", buf, sizeof(buf), &n), -EACCES);
    /* Writes: not in the read-only home, yes in data/, never elsewhere. */
    assert_int_equal(xst_write(f->g1, 0, "name", "x", 1), -EACCES);
    assert_int_equal(xst_write(f->g1, 0, "newkey", "x", 1), -EACCES);
    assert_int_equal(xst_write(f->g1, 0, "/local/domain/2/data/x", "x", 1), -EACCES);
    assert_int_equal(xst_write(f->g1, 0, "/x", "x", 1), -EACCES);
    assert_int_equal(xst_rm(f->g1, 0, "/local/domain/2/data"), -EACCES);
    assert_int_equal(xst_write(f->g1, 0, "data/a/b", "x", 1), 0);
    /* What a guest creates, it owns, inheriting the rest. */
    assert_int_equal(xst_get_perms(f->g1, 0, "data/a/b", perms, 8, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(perms[0].domid, 1);
    /* ...and dom0's creations inherit the parent's owner. */
    assert_int_equal(xst_write(f->dom0, 0, "/local/domain/1/data/fromdom0", "x", 1), 0);
    assert_int_equal(xst_get_perms(f->dom0, 0, "/local/domain/1/data/fromdom0", perms, 8, &n), 0);
    assert_int_equal(perms[0].domid, 1);
    /* Granting another guest read. */
    perms[0].domid = 1;
    perms[0].perm = XS_STORE_PERM_NONE;
    perms[1].domid = 2;
    perms[1].perm = XS_STORE_PERM_READ;
    assert_int_equal(xst_set_perms(f->g1, 0, "data/a/b", perms, 2), 0);
    assert_int_equal(read_str(f->g2, 0, "/local/domain/1/data/a/b", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "x");
    assert_int_equal(xst_write(f->g2, 0, "/local/domain/1/data/a/b", "y", 1), -EACCES);
    /* Only the owner may change permissions; a guest cannot give away. */
    assert_int_equal(xst_set_perms(f->g2, 0, "/local/domain/1/data/a/b", perms, 2), -EACCES);
    perms[1].perm = XS_STORE_PERM_BOTH;
    assert_int_equal(xst_set_perms(f->g1, 0, "data/a/b", perms, 2), 0);
    assert_int_equal(xst_write(f->g2, 0, "/local/domain/1/data/a/b", "y", 1), 0);
    assert_int_equal(xst_set_perms(f->g2, 0, "/local/domain/1/data/a/b", perms, 2), -EACCES);
    perms[0].domid = 2;
    assert_int_equal(xst_set_perms(f->g1, 0, "data/a/b", perms, 2), -EPERM);
    assert_int_equal(xst_set_perms(f->dom0, 0, "/local/domain/1/data/a/b", perms, 2), 0);
    /* Guests may not set more than 5 entries. */
    memset(perms, 0, sizeof(perms));
    perms[0].domid = 1;
    assert_int_equal(xst_set_perms(f->g1, 0, "data/a", perms, 6), -ENOSPC);
    assert_int_equal(xst_set_perms(f->g1, 0, "data/a", perms, 5), 0);
    /* dom0 does everything. */
    assert_int_equal(xst_write(f->dom0, 0, "/local/domain/2/data/z", "d", 1), 0);
    assert_int_equal(read_str(f->dom0, 0, "/local/domain/1/data/a/b", buf, sizeof(buf)), 0);
    assert_int_equal(xst_rm(f->dom0, 0, "/local/domain/1/data/a"), 0);
}

static void test_quotas(void **state)
{
    struct fixture *f = *state;
    static char big[4096];
    char path[256];
    uint32_t tx[XS_QUOTA_TRANSACTIONS + 1];
    unsigned int i;
    int r = 0;

    /* Node size: xenstored's record (24 + 8/perm + data + children) must
     * stay below 2048 for a guest: ENOSPC. */
    assert_int_equal(xst_write(f->g1, 0, "data/big", big, 2048 - 24 - 8 - 1), 0);
    assert_int_equal(xst_write(f->g1, 0, "data/big", big, 2048 - 24 - 8), -ENOSPC);
    assert_int_equal(xst_write(f->dom0, 0, "/local/domain/1/data/big", big, 4000), 0);
    /*
     * Nodes: a guest owns at most 1000; data and data/big are its first
     * two.  Spread over directories: a directory's record holds its
     * children's names and is bound by the size quota too.
     */
    {
        unsigned int owned = 2;

        for (i = 0;; i++) {
            unsigned int need = i % 64 ? 1 : 2;

            snprintf(path, sizeof(path), "data/d%u/n%u", i / 64, i % 64);
            r = xst_write(f->g1, 0, path, "", 0);
            if (owned + need > XS_QUOTA_NODES)
                break;
            assert_int_equal(r, 0);
            owned += need;
        }
        assert_int_equal(r, -ENOSPC);
        assert_true(owned >= XS_QUOTA_NODES - 1);
    }
    /* The directory size quota itself. */
    assert_int_equal(xst_rm(f->g1, 0, "data/d0"), 0);
    for (i = 0, r = 0; r == 0; i++) {
        snprintf(path, sizeof(path), "data/d0/%0100u", i);
        r = xst_write(f->g1, 0, path, "", 0);
    }
    assert_int_equal(r, -ENOSPC);
    /* 24 + 8 + 19 names of 101 bytes fit below 2048, the 20th does not. */
    assert_int_equal(i, 20);
    assert_int_equal(xst_rm(f->g1, 0, "data/d0"), 0);
    assert_int_equal(xst_rm(f->g1, 0, "data/d1"), 0);
    /* A failed multi-level create leaves nothing behind: fill up to one
     * node short of the quota, then ask for two. */
    for (i = 0, r = 0; r == 0; i++) {
        snprintf(path, sizeof(path), "data/d1/%u", i);
        r = xst_write(f->g1, 0, path, "", 0);
    }
    assert_int_equal(r, -ENOSPC);
    snprintf(path, sizeof(path), "data/d1/%u", i - 2);
    assert_int_equal(xst_rm(f->g1, 0, path), 0);
    assert_int_equal(xst_write(f->g1, 0, "data/p/q", "", 0), -ENOSPC);
    assert_int_equal(xst_read(f->g1, 0, "data/p", path, sizeof(path), &(size_t){0}), -ENOENT);
    assert_int_equal(xst_write(f->g1, 0, "data/p", "", 0), 0);
    /* dom0 is not bound, even in the guest's tree. */
    assert_int_equal(xst_write(f->dom0, 0, "/local/domain/1/data/dom0made/x", "", 0), 0);
    /* Watches: 128 per guest domain, E2BIG beyond. */
    r = 0;
    for (i = 0; i < XS_QUOTA_WATCHES && r == 0; i++) {
        snprintf(path, sizeof(path), "t%u", i);
        r = xst_watch(f->g2, "data", path, false);
    }
    assert_int_equal(r, 0);
    assert_int_equal(xst_watch(f->g2, "data", "one-more", false), -E2BIG);
    assert_int_equal(xst_watch(f->g2, "data", "t0", false), -EEXIST);
    assert_int_equal(xst_unwatch(f->g2, "data", "t0"), 0);
    assert_int_equal(xst_unwatch(f->g2, "data", "t0"), -ENOENT);
    assert_int_equal(xst_watch(f->g2, "data", "one-more", false), 0);
    /* Transactions: 10 per guest domain, ENOSPC beyond. */
    for (i = 0; i < XS_QUOTA_TRANSACTIONS; i++)
        assert_int_equal(xst_transaction_start(f->g2, 0, &tx[i]), 0);
    assert_int_equal(xst_transaction_start(f->g2, 0, &tx[i]), -ENOSPC);
    assert_int_equal(xst_transaction_end(f->g2, tx[0], false), 0);
    assert_int_equal(xst_transaction_start(f->g2, 0, &tx[0]), 0);
    assert_int_equal(xst_transaction_start(f->dom0, 0, &tx[10]), 0);
}

static void test_watches(void **state)
{
    struct fixture *f = *state;

    /* The first event fires at once, with the path as registered. */
    assert_int_equal(xst_watch(f->g1, "data", "tok", true), 0);
    assert_int_equal(f->e1.n, 1);
    assert_string_equal(f->e1.ev[0], "data|tok");
    assert_int_equal(xst_watch(f->dom0, "/local/domain/1", "home", true), 0);
    assert_int_equal(xst_watch(f->dom0, "/local/domain/1/data/a/b", "deep", false), 0);
    f->e0.n = f->e1.n = 0;
    /* A change below fires the watches above it; relative stays relative. */
    assert_int_equal(xst_write(f->g1, 0, "data/a/b/c", "1", 1), 0);
    assert_true(has_event(&f->e1, "data/a/b/c|tok"));
    assert_true(has_event(&f->e0, "/local/domain/1/data/a/b/c|home"));
    assert_true(has_event(&f->e0, "/local/domain/1/data/a/b/c|deep"));
    /* Removing an ancestor fires watches on removed descendants. */
    f->e0.n = f->e1.n = 0;
    assert_int_equal(xst_rm(f->g1, 0, "data/a"), 0);
    assert_true(has_event(&f->e1, "data/a|tok"));
    assert_true(has_event(&f->e0, "/local/domain/1/data/a|home"));
    assert_true(has_event(&f->e0, "/local/domain/1/data/a/b|deep"));
    assert_int_equal(f->e0.n, 2);
    /* Guest 2 hears nothing of nodes it cannot read. */
    assert_int_equal(xst_watch(f->g2, "/local/domain/1", "spy", true), 0);
    f->e2.n = 0;
    assert_int_equal(xst_write(f->g1, 0, "data/secret", "1", 1), 0);
    assert_int_equal(f->e2.n, 0);
    /* Special watches: dom0 sees introduce/release, guests do not by
     * default (the special nodes are n0). */
    assert_int_equal(xst_watch(f->dom0, "@introduceDomain", "i", false), 0);
    assert_int_equal(xst_watch(f->dom0, "@releaseDomain", "r", false), 0);
    assert_int_equal(xst_watch(f->g2, "@releaseDomain", "r2", false), 0);
    f->e0.n = f->e2.n = 0;
    assert_int_equal(xs_store_introduce(f->s, 7), 0);
    assert_int_equal(xs_store_introduce(f->s, 7), -EEXIST);
    assert_true(xs_store_is_introduced(f->s, 7));
    assert_true(has_event(&f->e0, "@introduceDomain|i"));
    assert_int_equal(xs_store_release(f->s, 7), 0);
    assert_int_equal(xs_store_release(f->s, 7), -ENOENT);
    assert_true(has_event(&f->e0, "@releaseDomain|r"));
    assert_int_equal(f->e2.n, 0);
    /* Reset drops them all. */
    xst_reset_watches(f->g1);
    f->e1.n = 0;
    assert_int_equal(xst_write(f->g1, 0, "data/again", "1", 1), 0);
    assert_int_equal(f->e1.n, 0);
}

static void test_release_chown(void **state)
{
    struct fixture *f = *state;
    struct xs_perm perms[4] = {{1, XS_STORE_PERM_NONE}, {2, XS_STORE_PERM_READ}, {1, XS_STORE_PERM_READ}};
    size_t n;

    assert_int_equal(xs_store_introduce(f->s, 1), 0);
    assert_int_equal(xst_write(f->g1, 0, "data/mine", "1", 1), 0);
    assert_int_equal(xst_write(f->dom0, 0, "/shared", "1", 1), 0);
    perms[0].domid = 0;
    assert_int_equal(xst_set_perms(f->dom0, 0, "/shared", perms, 3), 0);
    assert_int_equal(xs_store_release(f->s, 1), 0);
    /* Its nodes now belong to dom0; entries naming it are gone. */
    assert_int_equal(xst_get_perms(f->dom0, 0, "/local/domain/1/data/mine", perms, 4, &n), 0);
    assert_int_equal(perms[0].domid, 0);
    assert_int_equal(xst_get_perms(f->dom0, 0, "/shared", perms, 4, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(perms[1].domid, 2);
}

static void test_transactions(void **state)
{
    struct fixture *f = *state;
    uint32_t t1, t2;
    char buf[64];
    size_t len;

    assert_int_equal(xst_watch(f->dom0, "/tx", "w", false), 0);
    assert_int_equal(xst_transaction_start(f->g1, 0, &t1), 0);
    assert_int_equal(xst_transaction_start(f->g1, t1, &t2), -EBUSY);
    assert_int_equal(xst_transaction_start(f->g1, 999, &t2), -ENOENT);
    /* An unknown transaction is ENOENT, never "create it" (fuzz find). */
    assert_int_equal(xst_mkdir(f->g1, 424242, "data/m"), -ENOENT);
    assert_int_equal(xst_write(f->g1, 424242, "data/m", "", 0), -ENOENT);
    assert_int_equal(xst_write(f->g1, t1, "data/t", "in", 2), 0);
    /* Isolated until commit, visible inside. */
    assert_int_equal(read_str(f->g1, 0, "data/t", buf, sizeof(buf)), -ENOENT);
    assert_int_equal(read_str(f->g1, t1, "data/t", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "in");
    assert_int_equal(xst_directory(f->g1, t1, "data", buf, sizeof(buf), &len), 0);
    assert_int_equal(xst_transaction_end(f->g1, t1, true), 0);
    assert_int_equal(read_str(f->g1, 0, "data/t", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "in");
    assert_int_equal(xst_transaction_end(f->g1, t1, true), -ENOENT);
    assert_int_equal(xst_transaction_end(f->g1, 0, true), -ENOENT);

    /* A node read in the transaction changes outside: EAGAIN. */
    assert_int_equal(xst_transaction_start(f->g1, 0, &t1), 0);
    assert_int_equal(read_str(f->g1, t1, "data/t", buf, sizeof(buf)), 0);
    assert_int_equal(xst_write(f->g1, t1, "data/u", "u", 1), 0);
    assert_int_equal(xst_write(f->dom0, 0, "/local/domain/1/data/t", "out", 3), 0);
    assert_int_equal(xst_transaction_end(f->g1, t1, true), -EAGAIN);
    assert_int_equal(read_str(f->g1, 0, "data/u", buf, sizeof(buf)), -ENOENT);

    /* Absent then created outside also conflicts. */
    assert_int_equal(xst_transaction_start(f->g1, 0, &t1), 0);
    assert_int_equal(read_str(f->g1, t1, "data/v", buf, sizeof(buf)), -ENOENT);
    assert_int_equal(xst_write(f->g1, 0, "data/v", "v", 1), 0);
    assert_int_equal(xst_transaction_end(f->g1, t1, true), -EAGAIN);

    /* Abort discards; unrelated outside changes do not conflict. */
    assert_int_equal(xst_transaction_start(f->g1, 0, &t1), 0);
    assert_int_equal(xst_write(f->g1, t1, "data/w", "w", 1), 0);
    assert_int_equal(xst_transaction_end(f->g1, t1, false), 0);
    assert_int_equal(read_str(f->g1, 0, "data/w", buf, sizeof(buf)), -ENOENT);
    assert_int_equal(xst_mkdir(f->dom0, 0, "/tx"), 0);
    assert_int_equal(xst_transaction_start(f->dom0, 0, &t1), 0);
    assert_int_equal(xst_write(f->dom0, t1, "/tx/a", "a", 1), 0);
    assert_int_equal(xst_rm(f->dom0, t1, "/tx/a"), 0);
    assert_int_equal(xst_write(f->dom0, t1, "/tx/b", "b", 1), 0);
    assert_int_equal(xst_write(f->dom0, 0, "/tool/xenstored", "x", 1), 0);
    f->e0.n = 0;
    assert_int_equal(xst_transaction_end(f->dom0, t1, true), 0);
    /* Events of a transaction fire at commit. */
    assert_true(has_event(&f->e0, "/tx/b|w"));
    assert_int_equal(read_str(f->dom0, 0, "/tx/a", buf, sizeof(buf)), -ENOENT);
    assert_int_equal(read_str(f->dom0, 0, "/tx/b", buf, sizeof(buf)), 0);
}

/* ---- wire layer -------------------------------------------------------- */

struct captured {
    unsigned int n;
    struct xsd_sockmsg hdr;
    char body[XENSTORE_PAYLOAD_MAX + 1];
};

static void capture(void *data, const struct xsd_sockmsg *hdr, const void *body)
{
    struct captured *c = data;

    c->n++;
    c->hdr = *hdr;
    memcpy(c->body, body, hdr->len);
    c->body[hdr->len] = '\0';
}

static void request(struct xs_conn *c, uint32_t type, uint32_t tx, const char *body, size_t len, struct captured *out)
{
    struct xsd_sockmsg hdr = {.type = type, .req_id = 42, .tx_id = tx, .len = (uint32_t)len};

    out->n = 0;
    xs_wire_handle(c, &hdr, body, capture, out);
    assert_int_equal(out->n, 1);
    assert_int_equal(out->hdr.req_id, 42);
}

static void assert_error(struct captured *out, const char *name)
{
    assert_int_equal(out->hdr.type, XS_ERROR);
    assert_string_equal(out->body, name);
}

static void test_wire(void **state)
{
    struct fixture *f = *state;
    struct captured out;

    request(f->dom0, XS_WRITE, 0, "/w\0hello", 8, &out);
    assert_int_equal(out.hdr.type, XS_WRITE);
    assert_string_equal(out.body, "OK");
    request(f->dom0, XS_READ, 0, "/w", 3, &out);
    assert_int_equal(out.hdr.type, XS_READ);
    assert_int_equal(out.hdr.len, 5);
    assert_string_equal(out.body, "hello");
    /* Unterminated, empty, two paths where one is wanted. */
    request(f->dom0, XS_READ, 0, "/w", 2, &out);
    assert_error(&out, "EINVAL");
    request(f->dom0, XS_READ, 0, "", 0, &out);
    assert_error(&out, "EINVAL");
    request(f->g1, XS_READ, 0, "", 1, &out); /* "" is the home plus "/" */
    assert_error(&out, "EINVAL");
    request(f->dom0, XS_READ, 0, "/w\0/x", 6, &out);
    assert_error(&out, "EINVAL");
    request(f->dom0, XS_WRITE, 0, "/nonul", 6, &out);
    assert_error(&out, "EINVAL");
    /* Unknown and reply-only types. */
    request(f->dom0, 9999, 0, "", 0, &out);
    assert_error(&out, "ENOSYS");
    request(f->dom0, XS_WATCH_EVENT, 0, "", 0, &out);
    assert_error(&out, "ENOSYS");
    request(f->dom0, XS_ERROR, 0, "", 0, &out);
    assert_error(&out, "ENOSYS");
    /* Privileged operations. */
    request(f->g1, XS_IS_DOMAIN_INTRODUCED, 0, "1", 2, &out);
    assert_error(&out, "EACCES");
    request(f->g1, XS_INTRODUCE, 0, "1\0002\0003", 6, &out);
    assert_error(&out, "EACCES");
    request(f->g1, XS_CONTROL, 0, "help", 5, &out);
    assert_error(&out, "EACCES");
    request(f->dom0, XS_IS_DOMAIN_INTRODUCED, 0, "1", 2, &out);
    assert_string_equal(out.body, "F");
    request(f->dom0, XS_IS_DOMAIN_INTRODUCED, 0, "x1", 3, &out);
    assert_error(&out, "EINVAL");
    request(f->g1, XS_GET_DOMAIN_PATH, 0, "5", 2, &out);
    assert_string_equal(out.body, "/local/domain/5");
    /* Permissions strings. */
    request(f->dom0, XS_SET_PERMS, 0, "/w\0n0\0r1", 9, &out);
    assert_string_equal(out.body, "OK");
    request(f->dom0, XS_GET_PERMS, 0, "/w", 3, &out);
    assert_int_equal(out.hdr.len, 6);
    assert_memory_equal(out.body, "n0\0r1", 6);
    request(f->dom0, XS_SET_PERMS, 0, "/w\0q0", 6, &out);
    assert_error(&out, "EINVAL");
    request(f->dom0, XS_SET_PERMS, 0, "/w", 3, &out);
    assert_error(&out, "EINVAL");
    /* Transactions over the wire: id in the reply, T/F to end. */
    request(f->dom0, XS_TRANSACTION_START, 0, "", 1, &out);
    assert_int_equal(out.hdr.type, XS_TRANSACTION_START);
    {
        uint32_t tx = (uint32_t)strtoul(out.body, NULL, 10);

        assert_true(tx != 0);
        request(f->dom0, XS_TRANSACTION_END, tx, "X", 2, &out);
        assert_error(&out, "EINVAL");
        request(f->dom0, XS_TRANSACTION_END, tx, "F", 2, &out);
        assert_string_equal(out.body, "OK");
        request(f->dom0, XS_READ, tx, "/w", 3, &out);
        assert_error(&out, "ENOENT");
    }
    /* Watch: reply first, then the event (through the connection). */
    request(f->g1, XS_WATCH, 0, "data\0tok", 9, &out);
    assert_string_equal(out.body, "OK");
    request(f->g1, XS_WATCH, 0, "data", 5, &out);
    assert_error(&out, "EINVAL");
    /* DIRECTORY_PART: generation, names, and the final empty string. */
    request(f->dom0, XS_DIRECTORY_PART, 0, "/tool\0000", 8, &out);
    assert_int_equal(out.hdr.type, XS_DIRECTORY_PART);
    {
        size_t gl = strlen(out.body) + 1;

        assert_int_equal(out.hdr.len, gl + strlen("xenstored") + 2);
        assert_string_equal(out.body + gl, "xenstored");
    }
}

static void test_framing(void **state)
{
    struct xs_wire_in in;
    struct xsd_sockmsg hdr = {.type = XS_READ, .len = 3};
    char bytes[sizeof(hdr) + 3];
    size_t used;

    (void)state;
    memcpy(bytes, &hdr, sizeof(hdr));
    memcpy(bytes + sizeof(hdr), "/a", 3);
    xs_wire_in_reset(&in);
    /* Byte by byte: complete only at the last one. */
    for (size_t i = 0; i < sizeof(bytes) - 1; i++)
        assert_int_equal(xs_wire_in_feed(&in, bytes + i, 1, &used), 0);
    assert_int_equal(xs_wire_in_feed(&in, bytes + sizeof(bytes) - 1, 1, &used), 1);
    assert_string_equal(in.u.raw + sizeof(hdr), "/a");
    xs_wire_in_reset(&in);
    hdr.len = XENSTORE_PAYLOAD_MAX + 1;
    assert_int_equal(xs_wire_in_feed(&in, &hdr, sizeof(hdr), &used), -EMSGSIZE);
    xs_wire_in_reset(&in);
    hdr.len = XENSTORE_PAYLOAD_MAX;
    assert_int_equal(xs_wire_in_feed(&in, &hdr, sizeof(hdr), &used), 0);
    assert_int_equal(xs_wire_in_want(&in), XENSTORE_PAYLOAD_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test_setup_teardown(test_read_write_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permissions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quotas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_chown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wire, setup, teardown),
        cmocka_unit_test(test_framing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
