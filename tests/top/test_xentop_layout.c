/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats xentop's layout against output of Xen's own xentop: for each
 * line of xentop/cases, the rounds xenstats lays out for xentop/scenario.h's
 * figures must be, byte for byte, what xentop printed for them
 * (xentop/fixtures/, captured by xentop/capture/capture.sh: see SOURCE
 * there).  Then the model made from lib/export's snapshot: states,
 * vCPUs online, unreadable disks, raw names.
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

#include "test_files.h"

#include "top/xentop.h"
#include "xentop/scenario.h"

#define NR_DOMAINS (sizeof(scenario_domains) / sizeof(scenario_domains[0]))
#define NR_PCPUS (sizeof(scenario_pcpu_idle) / sizeof(scenario_pcpu_idle[0]))

static char *read_file(const char *name, size_t *ret_len)
{
    return top_test_file("xentop", name, ret_len);
}

/* The model xentop_model.c would make of the scenario's round r, read at `ns`. */
static struct xentop_node *scenario_node(unsigned int r, uint64_t ns)
{
    struct xentop_node *node = calloc(1, sizeof(*node));

    assert_non_null(node);
    node->monotonic_ns = ns;
    node->tot_mem = scenario_tot_mem;
    node->domains = calloc(NR_DOMAINS, sizeof(*node->domains));
    node->pcpu_idle_ns = calloc(NR_PCPUS, sizeof(uint64_t));
    assert_true(node->domains && node->pcpu_idle_ns);
    node->pcpus_valid = true;
    node->num_pcpus = NR_PCPUS;
    for (size_t i = 0; i < NR_PCPUS; i++)
        node->pcpu_idle_ns[i] = scenario_value(scenario_pcpu_idle[i], r);
    for (size_t i = 0; i < NR_DOMAINS; i++) {
        const struct scenario_domain *s = &scenario_domains[i];
        struct xentop_domain *d = &node->domains[node->num_domains];

        if (r < s->first_round)
            continue;
        node->num_domains++;
        d->domid = s->domid;
        d->name = s->name;
        d->state = (s->state & SCENARIO_DYING ? XENTOP_DYING : 0) | (s->state & SCENARIO_SHUTDOWN ? XENTOP_SHUTDOWN : 0) |
                   (s->state & SCENARIO_BLOCKED ? XENTOP_BLOCKED : 0) | (s->state & SCENARIO_CRASHED ? XENTOP_CRASHED : 0) |
                   (s->state & SCENARIO_PAUSED ? XENTOP_PAUSED : 0) | (s->state & SCENARIO_RUNNING ? XENTOP_RUNNING : 0);
        d->cpu_ns = scenario_value(s->cpu_ns, r);
        d->cur_mem = s->cur_mem;
        d->max_mem = s->max_mem == SCENARIO_NO_LIMIT ? XENTOP_NO_LIMIT : s->max_mem;
        d->num_vcpus = s->nr_vcpus;
        d->vcpus = calloc(s->nr_vcpus + 1, sizeof(*d->vcpus));
        d->num_networks = s->nr_nets;
        d->networks = calloc(s->nr_nets + 1, sizeof(*d->networks));
        d->num_vbds = s->nr_vbds;
        d->vbds = calloc(s->nr_vbds + 1, sizeof(*d->vbds));
        assert_true(d->vcpus && d->networks && d->vbds);
        for (unsigned int k = 0; k < s->nr_vcpus; k++)
            d->vcpus[k] = (struct xentop_vcpu){s->vcpus[k].online != 0, scenario_value(s->vcpus[k].ns, r)};
        for (unsigned int k = 0; k < s->nr_nets; k++) {
            const struct scenario_net *n = &s->nets[k];

            d->networks[k] = (struct xentop_net){
                scenario_value(n->rbytes, r), scenario_value(n->rpackets, r), scenario_value(n->rerrs, r),
                scenario_value(n->rdrop, r),  scenario_value(n->tbytes, r),   scenario_value(n->tpackets, r),
                scenario_value(n->terrs, r),  scenario_value(n->tdrop, r),
            };
        }
        for (unsigned int k = 0; k < s->nr_vbds; k++) {
            const struct scenario_vbd *v = &s->vbds[k];

            d->vbds[k] = (struct xentop_vbd){
                v->dev, XENTOP_VBD_BLKBACK, v->error != 0,
                scenario_value(v->oo, r), scenario_value(v->rd, r), scenario_value(v->wr, r),
                scenario_value(v->rsect, r), scenario_value(v->wsect, r),
            };
        }
    }
    return node;
}

static void scenario_node_free(struct xentop_node *node)
{
    if (!node)
        return;
    for (uint32_t i = 0; i < node->num_domains; i++) {
        free(node->domains[i].vcpus);
        free(node->domains[i].networks);
        free(node->domains[i].vbds);
    }
    free(node->domains);
    free(node->pcpu_idle_ns);
    free(node);
}

/* The rounds of one case as xenstats lays them out; the caller frees the text. */
static char *layout(const char *opts_text, size_t *ret_len)
{
    struct xentop_options opts = {0};
    struct xentop_state st;
    struct xentop_node *prev = NULL, *cur;
    unsigned int iterations = 1, delay = 3;
    char *copy = strdup(opts_text), *save = NULL, *tok, *text = NULL;
    FILE *out = open_memstream(&text, ret_len);

    assert_true(copy && out);
    for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (!strcmp(tok, "-i") || !strcmp(tok, "-d")) {
            char *value = strtok_r(NULL, " ", &save);

            assert_non_null(value);
            *(tok[1] == 'i' ? &iterations : &delay) = (unsigned int)atoi(value);
            continue;
        }
        assert_true(tok[0] == '-' && tok[1] && !tok[2]);
        switch (tok[1]) {
        case 'b':
            break;
        case 'n':
            opts.networks = true;
            break;
        case 'x':
            opts.vbds = true;
            break;
        case 'v':
            opts.vcpus = true;
            break;
        case 'r':
            opts.repeat_header = true;
            break;
        case 'f':
            opts.full_name = true;
            break;
        case 'z':
            opts.dom0_first = true;
            break;
        case 'p':
            opts.pcpus = true;
            break;
        default:
            fail_msg("cases: unknown option %s", tok);
        }
    }
    xentop_state_init(&st);
    for (unsigned int r = 0; r < iterations; r++) {
        /* any start: only the time between rounds counts */
        cur = scenario_node(r, 5000000000ULL + (uint64_t)r * delay * 1000000000ULL);
        assert_int_equal(xentop_print_round(out, cur, prev, &opts, &st), 0);
        scenario_node_free(prev);
        prev = cur;
    }
    scenario_node_free(prev);
    fclose(out);
    free(copy);
    return text;
}

/* Say where the two first differ, line by line. */
static void explain(const char *name, const char *want, const char *got)
{
    unsigned int line = 1;

    while (*want && *want == *got) {
        line += *want == '\n';
        want++;
        got++;
    }
    while (line > 1 && want[-1] != '\n') {
        want--;
        got--;
    }
    fprintf(stderr, "%s: line %u differs\n  xentop:   %.*s\n  xenstats: %.*s\n", name, line, (int)strcspn(want, "\n"),
            want, (int)strcspn(got, "\n"), got);
}

static void test_fixtures(void **state)
{
    char *cases = read_file("cases", NULL), *save = NULL, *line;
    unsigned int checked = 0, wrong = 0;

    (void)state;
    for (line = strtok_r(cases, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[64], fixture[128], *want, *got;
        size_t want_len, got_len;
        int skip = 0;

        if (line[0] == '#' || sscanf(line, "%63s %n", name, &skip) != 1)
            continue;
        snprintf(fixture, sizeof(fixture), "fixtures/%s.out", name);
        want = read_file(fixture, &want_len);
        got = layout(line + skip, &got_len);
        if (got_len != want_len || memcmp(want, got, want_len)) {
            explain(name, want, got);
            wrong++;
        }
        checked++;
        free(want);
        free(got);
    }
    free(cases);
    assert_true(checked >= 6);
    assert_int_equal(wrong, 0);
}

/* ---- the model of a snapshot ---- */

static void test_model(void **state)
{
    struct export_snapshot *s = export_snapshot_new();
    struct export_domain *d;
    struct xentop_node *node = NULL;

    (void)state;
    assert_non_null(s);
    s->monotonic_ns = 42;
    export_figs_set(&s->host, EXPORT_FIG_HOST_MEMORY_TOTAL, 1ULL << 34);
    s->nr_domains = 2;
    s->domains = calloc(2, sizeof(*s->domains));
    assert_non_null(s->domains);
    d = &s->domains[0];
    d->domid = 7;
    strcpy(d->name, "back\\slash caf\xc3\xa9");
    d->flags = XENSTATS_DOMAIN_SHUTDOWN | XENSTATS_DOMAIN_PAUSED;
    d->shutdown_reason = XENSTATS_SHUTDOWN_CRASH;
    export_figs_set(&d->figs, EXPORT_FIG_DOMAIN_CPU, 5000000000ULL);
    export_figs_set(&d->figs, EXPORT_FIG_DOMAIN_MEMORY, 1ULL << 30);
    /* paused: every vCPU's runstate is offline, yet two of three are up */
    export_figs_set(&d->figs, EXPORT_FIG_DOMAIN_VCPUS_ONLINE, 2);
    d->nr_vcpus = 3;
    d->vcpus = calloc(3, sizeof(*d->vcpus));
    assert_non_null(d->vcpus);
    for (int k = 0; k < 3; k++) {
        d->vcpus[k].state = XEN_VCPU_STATS_RUNSTATE_OFFLINE;
        d->vcpus[k].time_valid[XEN_VCPU_STATS_RUNSTATE_RUNNING] = true;
        d->vcpus[k].time_ns[XEN_VCPU_STATS_RUNSTATE_RUNNING] = (uint64_t)(k + 1) * 1000000000ULL;
    }
    d->nr_vbds = 2;
    d->vbds = calloc(2, sizeof(*d->vbds));
    assert_non_null(d->vbds);
    d->vbds[0].devid = 51712; /* its statistics could not be read: no figures */
    d->vbds[1].devid = 51728;
    export_figs_set(&d->vbds[1].figs, EXPORT_FIG_VBD_OO, 1);
    export_figs_set(&d->vbds[1].figs, EXPORT_FIG_VBD_READS, 2);
    export_figs_set(&d->vbds[1].figs, EXPORT_FIG_VBD_WRITES, 3);
    export_figs_set(&d->vbds[1].figs, EXPORT_FIG_VBD_READ_SECTORS, 4);
    export_figs_set(&d->vbds[1].figs, EXPORT_FIG_VBD_WRITE_SECTORS, 5);
    d = &s->domains[1];
    d->domid = 8;
    strcpy(d->name, "running");
    d->flags = XENSTATS_DOMAIN_RUNNING | XENSTATS_DOMAIN_DYING;
    export_figs_set(&d->figs, EXPORT_FIG_DOMAIN_MEMORY_MAX, 1ULL << 31);

    assert_int_equal(xentop_node_from_snapshot(s, &node), 0);
    export_snapshot_unref(s);
    assert_int_equal(node->num_domains, 2);
    assert_int_equal(node->tot_mem, 1ULL << 34);
    assert_string_equal(node->domains[0].name, "back\\slash caf\xc3\xa9");
    assert_int_equal(node->domains[0].state, XENTOP_CRASHED | XENTOP_PAUSED);
    assert_int_equal(node->domains[0].max_mem, XENTOP_NO_LIMIT);
    assert_int_equal(node->domains[0].num_vcpus, 3);
    assert_true(node->domains[0].vcpus[0].online && node->domains[0].vcpus[1].online);
    assert_false(node->domains[0].vcpus[2].online);
    assert_int_equal(node->domains[0].vcpus[1].ns, 2000000000ULL);
    assert_int_equal(node->domains[0].num_vbds, 2);
    assert_true(node->domains[0].vbds[0].error);
    assert_false(node->domains[0].vbds[1].error);
    assert_int_equal(node->domains[0].vbds[1].wr_sects, 5);
    assert_int_equal(node->domains[1].state, XENTOP_DYING | XENTOP_RUNNING);
    assert_int_equal(node->domains[1].max_mem, 1ULL << 31);
    assert_false(node->pcpus_valid);
    xentop_node_free(node);
}

/* -p where the host does not tell idle times: xentop fails, and so does the round. */
static void test_no_pcpus(void **state)
{
    struct xentop_options opts = {.pcpus = true};
    struct xentop_state st;
    struct xentop_node *node = scenario_node(0, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    node->pcpus_valid = false;
    xentop_state_init(&st);
    assert_int_equal(xentop_print_round(out, node, NULL, &opts, &st), -ENODATA);
    fclose(out);
    free(text);
    scenario_node_free(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_no_pcpus),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
