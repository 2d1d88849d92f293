/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PV monitor's timeouts (monitor_sample.c): when sets of a domain do
 * not answer in time, whether the domain is paused is asked once for the
 * domain in a pass, not once for each late set (each ask is a
 * getdomaininfo).  A platform double counts the asks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pv/monitor_sample.h"

static unsigned int infos, statuses;
static uint32_t paused_flags;

static int fake_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret)
{
    (void)p;
    infos++;
    memset(ret, 0, sizeof(*ret));
    ret->domid = domid;
    ret->flags = paused_flags;
    return 0;
}

static int fake_status(struct platform_evtchn *h, uint32_t port, enum platform_evtchn_state *ret)
{
    (void)h;
    (void)port;
    statuses++;
    *ret = PLATFORM_EVTCHN_INTERDOMAIN; /* the provider is there, only late */
    return 0;
}

static const struct platform_domain_ops domains = {.info = fake_info};
static const struct platform_evtchn_ops evtchns = {.status = fake_status};
static const struct platform_backend backend = {.name = "test", .domain = &domains, .evtchn = &evtchns};
static struct platform platform = {.backend = &backend};

struct fixture {
    struct xenstats_monitor m;
    struct mon_domain d[2];
    struct xenstats_pv_set sets[2][3];
};

/* Two domains of three sets each, every set asked and past its deadline. */
static void setup(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    f->m.platform = &platform;
    f->m.opts.max_log_per_s = 100;
    f->m.opts.stale_limit = 3;
    f->m.opts.sample_timeout_ms = 500;
    f->m.tfd = -1;
    f->m.domains = &f->d[0];
    for (int k = 0; k < 2; k++) {
        struct mon_domain *d = &f->d[k];

        d->monitor = &f->m;
        d->domid = 5 + (uint32_t)k;
        d->next = k ? NULL : &f->d[1];
        d->sets = &f->sets[k][0];
        for (int i = 0; i < 3; i++) {
            struct xenstats_pv_set *s = &f->sets[k][i];

            s->domain = d;
            s->next = i < 2 ? &f->sets[k][i + 1] : NULL;
            s->port = 10 * k + i + 1;
            s->state = XENSTATS_PV_SET_SAMPLING;
            s->before_request = XENSTATS_PV_SET_ACTIVE;
            s->deadline = 1; /* long past */
            f->m.outstanding++;
            snprintf(s->path, sizeof(s->path), "/local/domain/%u/stats/p/set%d", d->domid, i);
        }
    }
    infos = statuses = 0;
}

static void test_one_ask_per_domain(void **state)
{
    struct fixture f;

    (void)state;
    paused_flags = XENSTATS_DOMAIN_RUNNING;
    setup(&f);
    mon_handle_timeouts(&f.m);
    assert_int_equal(infos, 2); /* one per domain, not six */
    assert_int_equal(statuses, 6); /* each set's own port */
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++) {
            assert_int_equal(f.sets[k][i].state, XENSTATS_PV_SET_STALE);
            assert_int_equal(f.sets[k][i].timeouts, 1);
        }
    assert_int_equal(f.m.outstanding, 0);
}

static void test_paused_domain_spares_every_set(void **state)
{
    struct fixture f;

    (void)state;
    paused_flags = XENSTATS_DOMAIN_PAUSED;
    setup(&f);
    mon_handle_timeouts(&f.m);
    assert_int_equal(infos, 2);
    assert_int_equal(statuses, 0);
    for (int k = 0; k < 2; k++) {
        assert_true(f.d[k].paused);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(f.sets[k][i].state, XENSTATS_PV_SET_ACTIVE); /* as it was */
            assert_int_equal(f.sets[k][i].timeouts, 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_ask_per_domain),
        cmocka_unit_test(test_paused_domain_spares_every_set),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
