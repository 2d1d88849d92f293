/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One declaration drives every output.  This program is built with
 * XENSTATS_TEST_FIGURE, which adds one FIGURE line to metrics.def and
 * nothing else; the figure must then appear, with its value, in the
 * Prometheus and OpenMetrics text, the JSON, what `xenstats top` decodes
 * from that JSON, top's header and row, and the metrics reference.
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

#ifndef XENSTATS_TEST_FIGURE
#error "build with -DXENSTATS_TEST_FIGURE"
#endif

static struct snapshot *one_domain(void)
{
    struct snapshot *s = snapshot_new();

    assert_non_null(s);
    s->backend = "emu";
    s->monotonic_ns = 1;
    s->domains = calloc(1, sizeof(*s->domains));
    assert_non_null(s->domains);
    s->nr_domains = 1;
    s->domains[0].domid = 3;
    snprintf(s->domains[0].name, sizeof(s->domains[0].name), "guest");
    figs_set(&s->domains[0].figs, FIG_TEST, 4242);
    return s;
}

static void test_prometheus(void **state)
{
    struct snapshot *s = one_domain();
    struct strbuf b = {0};

    (void)state;
    assert_int_equal(render_prometheus(s, false, &b), 0);
    assert_non_null(strstr(b.data, "# HELP xenstats_domain_test_figure A figure for tests only.\n"));
    assert_non_null(strstr(b.data, "# TYPE xenstats_domain_test_figure gauge\n"));
    assert_non_null(strstr(b.data, "\nxenstats_domain_test_figure{domid=\"3\",domain=\"guest\"} 4242\n"));
    strbuf_free(&b);
    assert_int_equal(render_prometheus(s, true, &b), 0);
    assert_non_null(strstr(b.data, "\nxenstats_domain_test_figure{domid=\"3\",domain=\"guest\"} 4242\n"));
    strbuf_free(&b);
    snapshot_unref(s);
}

static void test_json_and_top(void **state)
{
    struct snapshot *s = one_domain();
    struct top_snapshot *view = NULL;
    struct strbuf b = {0};
    char err[256] = "", line[1024];

    (void)state;
    assert_int_equal(render_json(s, &b), 0);
    assert_non_null(strstr(b.data, "\"test_figure\":4242"));
    if (top_snapshot_parse(b.data, b.len, &view, err, sizeof(err)))
        fail_msg("%s", err);
    assert_true(view->domains[0].fig_valid[FIG_TEST]);
    assert_true(view->domains[0].fig[FIG_TEST] == 4242.0);
    top_format_header(line, sizeof(line), 5, -1);
    assert_non_null(strstr(line, " TESTFIG "));
    top_format_row(line, sizeof(line), &view->domains[0], 5, true);
    assert_non_null(strstr(line, " 4242 "));
    top_snapshot_free(view);
    strbuf_free(&b);

    /* not known: absent from the text, null in the JSON, '-' in top */
    s->domains[0].figs.valid[FIG_TEST] = false;
    assert_int_equal(render_json(s, &b), 0);
    assert_non_null(strstr(b.data, "\"test_figure\":null"));
    assert_int_equal(top_snapshot_parse(b.data, b.len, &view, err, sizeof(err)), 0);
    assert_false(view->domains[0].fig_valid[FIG_TEST]);
    top_snapshot_free(view);
    strbuf_free(&b);
    assert_int_equal(render_prometheus(s, false, &b), 0);
    assert_null(strstr(b.data, "\nxenstats_domain_test_figure{"));
    strbuf_free(&b);
    snapshot_unref(s);
}

/* The ns flag of every figure is exactly "its unit is seconds". */
static void test_seconds_flag(void **state)
{
    (void)state;
    for (int id = 0; id < FIG_COUNT; id++) {
        const char *unit = metric_decls[figure_decls[id].metric].unit;

        if (figure_decls[id].ns != !strcmp(unit, "seconds"))
            fail_msg("%s: unit '%s' but ns %d", metric_decls[figure_decls[id].metric].name, unit,
                     figure_decls[id].ns);
    }
}

static void test_reference(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    assert_non_null(out);
    metrics_reference(out);
    fclose(out);
    assert_non_null(strstr(text, "| `xenstats_domain_test_figure` | gauge | - | domid,domain | A figure for tests only. |"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prometheus),
        cmocka_unit_test(test_json_and_top),
        cmocka_unit_test(test_seconds_flag),
        cmocka_unit_test(test_reference),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
