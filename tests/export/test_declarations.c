/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One declaration drives every output.  This program is built with
 * XENSTATS_TEST_FIGURE, which adds FIGURE lines to metrics.def and
 * nothing else: a domain's, a PV set's and a PV budget's.  Each must then
 * appear, with its value, in the Prometheus and OpenMetrics text, the
 * JSON, what lib/export's reader and `xenstats top` decode from that JSON,
 * top's header and row (a domain's figure), and the metrics reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/export.h"
#include "top/format.h"
#include "top/snapshot.h"
#include "top/sort.h"

#ifndef XENSTATS_TEST_FIGURE
#error "build with -DXENSTATS_TEST_FIGURE"
#endif

static struct export_snapshot *one_domain(void)
{
    struct export_snapshot *s = export_snapshot_new();

    assert_non_null(s);
    s->backend = "emu";
    s->monotonic_ns = 1;
    s->domains = calloc(1, sizeof(*s->domains));
    assert_non_null(s->domains);
    s->nr_domains = 1;
    s->domains[0].domid = 3;
    snprintf(s->domains[0].name, sizeof(s->domains[0].name), "guest");
    export_figs_set(&s->domains[0].figs, EXPORT_FIG_TEST, 4242);
    return s;
}

static void test_prometheus(void **state)
{
    struct export_snapshot *s = one_domain();
    struct export_strbuf b = {0};

    (void)state;
    assert_int_equal(export_render_prometheus(s, false, &b), 0);
    assert_non_null(strstr(b.data, "# HELP xenstats_domain_test_figure A figure for tests only.\n"));
    assert_non_null(strstr(b.data, "# TYPE xenstats_domain_test_figure gauge\n"));
    assert_non_null(strstr(b.data, "\nxenstats_domain_test_figure{domid=\"3\",domain=\"guest\"} 4242\n"));
    export_strbuf_free(&b);
    assert_int_equal(export_render_prometheus(s, true, &b), 0);
    assert_non_null(strstr(b.data, "\nxenstats_domain_test_figure{domid=\"3\",domain=\"guest\"} 4242\n"));
    export_strbuf_free(&b);
    export_snapshot_unref(s);
}

static void test_json_and_top(void **state)
{
    struct export_snapshot *s = one_domain();
    struct top_snapshot *view = NULL;
    struct export_strbuf b = {0};
    char err[256] = "", line[1024];

    (void)state;
    assert_int_equal(export_render_json(s, &b), 0);
    assert_non_null(strstr(b.data, "\"test_figure\":4242"));
    if (top_snapshot_parse(b.data, b.len, &view, err, sizeof(err)))
        fail_msg("%s", err);
    assert_true(view->domains[0].fig_valid[EXPORT_FIG_TEST]);
    assert_true(view->domains[0].fig[EXPORT_FIG_TEST] == 4242.0);
    top_format_header(line, sizeof(line), 5, -1);
    assert_non_null(strstr(line, " TESTFIG "));
    /* a sort key too, by its JSON key, marked in the header */
    {
        enum top_sort_key key;

        assert_int_equal(top_sort_parse("test_figure", &key), 0);
        assert_int_equal(key, TOP_SORT_FIGURE + EXPORT_FIG_TEST);
        top_format_header(line, sizeof(line), 5, key);
        assert_non_null(strstr(line, " TESTFIG* "));
    }
    top_format_row(line, sizeof(line), &view->domains[0], 5, true);
    assert_non_null(strstr(line, " 4242 "));
    top_snapshot_free(view);
    export_strbuf_free(&b);

    /* not known: absent from the text, null in the JSON, '-' in top */
    export_figs_forget(&s->domains[0].figs, EXPORT_FIG_TEST);
    assert_int_equal(export_render_json(s, &b), 0);
    assert_non_null(strstr(b.data, "\"test_figure\":null"));
    assert_int_equal(top_snapshot_parse(b.data, b.len, &view, err, sizeof(err)), 0);
    assert_false(view->domains[0].fig_valid[EXPORT_FIG_TEST]);
    top_snapshot_free(view);
    export_strbuf_free(&b);
    assert_int_equal(export_render_prometheus(s, false, &b), 0);
    assert_null(strstr(b.data, "\nxenstats_domain_test_figure{"));
    export_strbuf_free(&b);
    export_snapshot_unref(s);
}

/* The ns flag of every figure is exactly "its unit is seconds". */
static void test_seconds_flag(void **state)
{
    (void)state;
    for (int id = 0; id < EXPORT_FIG_COUNT; id++) {
        const char *unit = export_metric_decls[export_figure_decls[id].metric].unit;

        if (export_figure_decls[id].ns != !strcmp(unit, "seconds"))
            fail_msg("%s: unit '%s' but ns %d", export_metric_decls[export_figure_decls[id].metric].name, unit,
                     export_figure_decls[id].ns);
    }
}

/* Figures of a PV set and of a domain's PV budget: a line each too. */
static void test_other_scopes(void **state)
{
    struct export_snapshot *s = one_domain(), *back = NULL;
    struct export_domain *d = &s->domains[0];
    struct export_strbuf b = {0};
    char err[256] = "";

    (void)state;
    d->nr_sets = 1;
    d->sets = calloc(1, sizeof(*d->sets));
    assert_non_null(d->sets);
    d->sets[0].provider = strdup("p");
    d->sets[0].set = strdup("s");
    d->sets[0].reason = strdup("");
    export_figs_set(&d->sets[0].figs, EXPORT_FIG_TEST_SET, 1500000000);
    d->pv_monitored = true;
    export_figs_set(&d->pv, EXPORT_FIG_TEST_PV, 1);

    assert_int_equal(export_render_prometheus(s, false, &b), 0);
    assert_non_null(strstr(b.data, "# TYPE xenstats_pv_set_test_seconds_total counter\n"));
    assert_non_null(strstr(b.data, "\nxenstats_pv_set_test_seconds_total{domid=\"3\",domain=\"guest\",provider=\"p\","
                                   "set=\"s\"} 1.500000000\n"));
    assert_non_null(strstr(b.data, "\nxenstats_pv_domain_test_flag{domid=\"3\",domain=\"guest\"} 1\n"));
    export_strbuf_free(&b);
    assert_int_equal(export_render_prometheus(s, true, &b), 0);
    assert_non_null(strstr(b.data, "# UNIT xenstats_pv_set_test_seconds seconds\n"));
    export_strbuf_free(&b);

    assert_int_equal(export_render_json(s, &b), 0);
    assert_non_null(strstr(b.data, "\"test_seconds\":1.500000000,"));
    assert_non_null(strstr(b.data, "\"test_flag\":true}"));
    /* and read back by the same declarations */
    if (export_snapshot_read_json(b.data, b.len, &back, err, sizeof(err)))
        fail_msg("%s", err);
    assert_true(export_figs_known(&back->domains[0].sets[0].figs, EXPORT_FIG_TEST_SET));
    assert_true(export_figs_get(&back->domains[0].sets[0].figs, EXPORT_FIG_TEST_SET) == 1500000000);
    assert_true(export_figs_known(&back->domains[0].pv, EXPORT_FIG_TEST_PV));
    assert_true(export_figs_get(&back->domains[0].pv, EXPORT_FIG_TEST_PV) == 1);
    export_snapshot_unref(back);
    export_strbuf_free(&b);
    export_snapshot_unref(s);
}

static void test_reference(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    assert_non_null(out);
    export_metrics_reference(out);
    fclose(out);
    assert_non_null(strstr(text, "| `xenstats_domain_test_figure` | gauge | - | domid,domain | A figure for tests only. |"));
    assert_non_null(strstr(text, "| `xenstats_pv_set_test_seconds_total` | counter | seconds | "
                                 "domid,domain,provider,set | A set's figure for tests only. |"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prometheus),
        cmocka_unit_test(test_json_and_top),
        cmocka_unit_test(test_other_scopes),
        cmocka_unit_test(test_seconds_flag),
        cmocka_unit_test(test_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
