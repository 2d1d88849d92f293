/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PV monitor's check of a domain's name pages (monitor_sample.c):
 * one mapping for all the sets due, each set alone when that mapping
 * fails, so that a set which revoked its name grants hides no rewrite of
 * another.  A grant-table double counts the maps.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "pv/monitor_sample.h"

#define PAGE XEN_PV_STATS_PAGE_SIZE
#define NR_REFS 8
#define REVOKED 7 /* a ref the domain no longer grants */

static uint8_t guest_pages[NR_REFS][PAGE];
static unsigned int maps, unmaps, failed_maps, pages_mapped;

static void *fake_map(struct platform *p, uint32_t domid, uint32_t count, const uint32_t *refs, int prot)
{
    uint8_t *addr;

    (void)p;
    (void)domid;
    assert_int_equal(prot, PROT_READ);
    maps++;
    for (uint32_t i = 0; i < count; i++) {
        if (refs[i] >= NR_REFS || refs[i] == REVOKED) {
            /* as gntdev: one bad ref and nothing is mapped */
            failed_maps++;
            errno = EINVAL;
            return NULL;
        }
    }
    addr = malloc((size_t)count * PAGE);
    assert_non_null(addr);
    for (uint32_t i = 0; i < count; i++)
        memcpy(addr + (size_t)i * PAGE, guest_pages[refs[i]], PAGE);
    pages_mapped += count;
    return addr;
}

static int fake_unmap(struct platform *p, void *addr, uint32_t count)
{
    (void)p;
    (void)count;
    unmaps++;
    free(addr);
    return 0;
}

static const struct platform_grant_ops grants = {.map = fake_map, .unmap = fake_unmap};
static const struct platform_backend backend = {.name = "test", .grant = &grants};
static struct platform platform = {.backend = &backend};

struct fixture {
    struct xenstats_monitor m;
    struct mon_domain d;
    struct xenstats_pv_set sets[3];
};

static const uint8_t value_page[PAGE];

/* Three live sets of one page each (refs 1, 2, 3), published and hashed. */
static void setup_domain(struct fixture *f, uint64_t samples, const uint64_t checked_at[3])
{
    memset(f, 0, sizeof(*f));
    f->m.platform = &platform;
    f->m.opts.max_log_per_s = 100;
    f->d.monitor = &f->m;
    f->d.domid = 5;
    for (int i = 0; i < 3; i++) {
        struct xenstats_pv_set *s = &f->sets[i];

        s->domain = &f->d;
        s->next = i < 2 ? &f->sets[i + 1] : NULL;
        s->state = XENSTATS_PV_SET_ACTIVE;
        s->value_map = value_page;
        s->keys.nr_pages = 1;
        s->keys.name_type_ref[0] = (uint32_t)i + 1;
        memset(guest_pages[i + 1], 'a' + i, PAGE);
        s->names_hash = mon_page_hash(guest_pages[i + 1], PAGE);
        s->samples = samples;
        s->names_checked_at = checked_at[i];
        snprintf(s->path, sizeof(s->path), "/local/domain/5/stats/p/set%d", i);
    }
    f->d.sets = &f->sets[0];
    maps = unmaps = failed_maps = pages_mapped = 0;
}

/* Every set answered with its check due, as complete() marks them. */
static void all_answered(struct fixture *f)
{
    for (int i = 0; i < 3; i++)
        f->sets[i].names_due = true;
}

static void test_one_map_for_the_domain(void **state)
{
    static const uint64_t at[3] = {32, 32, 32};
    struct fixture f;

    (void)state;
    setup_domain(&f, 64, at);
    all_answered(&f);
    memset(guest_pages[2], 'z', 10); /* the second set rewrote its names */
    mon_names_check_domain(&f.m, &f.d);
    assert_int_equal(maps, 1);
    assert_int_equal(pages_mapped, 3);
    assert_int_equal(unmaps, 1);
    assert_int_equal(f.sets[0].errors, 0);
    assert_int_equal(f.sets[1].errors, 1);
    assert_true(f.sets[1].names_rewritten_logged);
    assert_int_equal(f.sets[2].errors, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f.sets[i].names_checked_at, 64);
        assert_false(f.sets[i].names_due);
    }
    /* nothing due any more: no map */
    mon_names_check_domain(&f.m, &f.d);
    assert_int_equal(maps, 1);
}

static void test_revoked_set_hides_no_rewrite(void **state)
{
    static const uint64_t at[3] = {32, 32, 32};
    struct fixture f;

    (void)state;
    setup_domain(&f, 64, at);
    all_answered(&f);
    f.sets[0].keys.name_type_ref[0] = REVOKED;
    memset(guest_pages[3], 'z', 10); /* the third set rewrote its names */
    mon_names_check_domain(&f.m, &f.d);
    /* the batch fails; then each alone: the revoked one fails again */
    assert_int_equal(maps, 4);
    assert_int_equal(failed_maps, 2);
    assert_int_equal(unmaps, 2);
    assert_int_equal(f.sets[2].errors, 1);
    assert_int_equal(f.sets[1].errors, 0);
    /* tried: the revoked set is not mapped again before its period */
    assert_int_equal(f.sets[0].names_checked_at, 64);
    f.sets[0].samples = f.sets[1].samples = f.sets[2].samples = 65;
    f.sets[0].names_due = true;
    mon_names_check_domain(&f.m, &f.d);
    assert_int_equal(maps, 4);
}

static void test_siblings_join_half_way(void **state)
{
    /* past the start-up checks: the first is due (64 since its last), the
     * second 30 since its own (not yet half-way), the third 40 (joins) */
    static const uint64_t at[3] = {136, 170, 160};
    struct fixture f;

    (void)state;
    setup_domain(&f, 200, at);
    f.sets[0].names_due = true;
    mon_names_check_domain(&f.m, &f.d);
    assert_int_equal(maps, 1);
    assert_int_equal(pages_mapped, 2);
    assert_int_equal(f.sets[0].names_checked_at, 200);
    assert_int_equal(f.sets[1].names_checked_at, 170);
    assert_int_equal(f.sets[2].names_checked_at, 200);
}

static void test_not_due_not_mapped(void **state)
{
    /* in start-up a set is checked at samples 4, 8, 16, 32, 64 only, and
     * never as a sibling; a set not live, or already logged, never */
    static const uint64_t at[3] = {0, 0, 0};
    struct fixture f;

    (void)state;
    setup_domain(&f, 12, at);
    all_answered(&f);
    mon_names_check_domain(&f.m, &f.d);
    assert_int_equal(maps, 0);
    setup_domain(&f, 16, at);
    f.sets[0].state = XENSTATS_PV_SET_WITHDRAWN;
    f.sets[1].names_rewritten_logged = true;
    all_answered(&f);
    mon_names_check_domain(&f.m, &f.d);
    assert_int_equal(maps, 1);
    assert_int_equal(pages_mapped, 1);
    assert_int_equal(f.sets[2].names_checked_at, 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_map_for_the_domain),
        cmocka_unit_test(test_revoked_set_hides_no_rewrite),
        cmocka_unit_test(test_siblings_join_half_way),
        cmocka_unit_test(test_not_due_not_mapped),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
