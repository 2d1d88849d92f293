/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lifecycle test's view of the agent (tests/e2e/lifecycle/, dom0): it
 * reads `xenstats agent`'s /metrics on 127.0.0.1:9740 and checks what one
 * step of a guest's lifecycle (save/restore, migrate, reboot, vcpu-set,
 * pause, mem-set) must leave there.  Each command prints one line of detail
 * and exits 0 when its check holds, 1 when it does not, 2 on bad usage.
 *
 *   lc_probe baseline DOMID SETS TIMEOUT_S
 *       waits until the domain has PV sets, every one active, the same
 *       list twice in a row; writes "provider<TAB>set" lines to SETS
 *   lc_probe settle NEW OLD UUID SETS TIMEOUT_S
 *       polls every 100 ms until every set of SETS is active under domid
 *       NEW, whose xenstats_domain_info has uuid UUID, and no series names
 *       a domid of OLD (comma-separated: every domid the guest had
 *       before); prints the time that took first, in ms
 *   lc_probe moving DOMID SETS
 *       two scrapes 2.5 to 10 s apart: every set answered samples in
 *       between and some guest value of the domain changed
 *   lc_probe vcpus DOMID NAME ONLINE TIMEOUT_S
 *       until they agree: the agent's vCPUs of DOMID against `xl vcpu-list
 *       NAME` (the same vCPUs, each online or offline alike, ONLINE of them
 *       online, running time within 2 s + 5 %)
 *   lc_probe paused DOMID SETS SECONDS
 *       waits for the agent to show the domain paused, then for SECONDS:
 *       no vCPU of it running, every set of SETS active (or sampling),
 *       never stale or timed out
 *   lc_probe target DOMID BYTES TIMEOUT_S
 *       waits until xenstats_domain_memory_target_bytes is BYTES
 *   lc_probe withdrawn DOMID SETS TIMEOUT_S
 *       waits until every set of SETS is withdrawn or gone
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../http_get.h"

#define AGENT_PORT 9740
#define POLL_MS 100
#define MOVING_MS 10000
#define MAX_SETS 64
#define MAX_VCPUS 64
#define NAME_LEN 128

struct sample {
    const char *name;
    const char *labels; /* the text between the braces, "" without */
    double value;
};

/* One answer of /metrics, parsed in place: the samples point into body. */
struct scrape {
    char *body;
    struct sample *samples;
    size_t count;
};

struct set_name {
    char provider[NAME_LEN];
    char set[NAME_LEN];
};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(unsigned int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* The closing brace of a label list, skipping quoted values. */
static char *labels_end(char *p)
{
    bool quoted = false;

    for (; *p; p++) {
        if (quoted && *p == '\\' && p[1])
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == '}')
            return p;
    }
    return NULL;
}

static void scrape_free(struct scrape *s)
{
    free(s->body);
    free(s->samples);
    *s = (struct scrape){0};
}

/* Returns 0, or -EIO when the agent did not answer, -ENOMEM. */
static int scrape_get(struct scrape *s)
{
    size_t cap = 0;
    char *line, *next;

    *s = (struct scrape){0};
    s->body = e2e_http_get(AGENT_PORT, "/metrics", NULL);
    if (!s->body)
        return -EIO;
    for (line = s->body; line && *line; line = next) {
        char *end, *brace;
        struct sample x = {.labels = ""};

        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (*line == '#' || *line == '\0')
            continue;
        x.name = line;
        brace = strpbrk(line, "{ ");
        if (!brace)
            continue;
        if (*brace == '{') {
            end = labels_end(brace + 1);
            if (!end)
                continue;
            *brace = '\0';
            *end = '\0';
            x.labels = brace + 1;
            brace = end;
        } else {
            *brace = '\0';
        }
        x.value = strtod(brace + 1, NULL);
        if (s->count == cap) {
            struct sample *grown = realloc(s->samples, (cap ? cap * 2 : 1024) * sizeof(*grown));

            if (!grown) {
                scrape_free(s);
                return -ENOMEM;
            }
            s->samples = grown;
            cap = cap ? cap * 2 : 1024;
        }
        s->samples[s->count++] = x;
    }
    return 0;
}

/* The value of label key into out (unescaped); false when absent. */
static bool label_get(const struct sample *x, const char *key, char *out, size_t size)
{
    const char *p = x->labels;
    size_t klen = strlen(key);

    while (*p) {
        const char *eq = strchr(p, '=');
        bool match;
        size_t n = 0;

        if (!eq || eq[1] != '"')
            return false;
        match = (size_t)(eq - p) == klen && !strncmp(p, key, klen);
        for (p = eq + 2; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1])
                p++;
            if (match && n + 1 < size)
                out[n++] = *p;
        }
        if (match) {
            out[n] = '\0';
            return true;
        }
        if (*p == '"')
            p++;
        if (*p == ',')
            p++;
    }
    return false;
}

static bool label_is(const struct sample *x, const char *key, const char *want)
{
    char v[NAME_LEN];

    return label_get(x, key, v, sizeof(v)) && !strcmp(v, want);
}

/* The sample of metric name for domid whose other label key is value
 * (key NULL: any), or NULL. */
static const struct sample *find(const struct scrape *s, const char *name, const char *domid, const char *key,
                                 const char *value)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct sample *x = &s->samples[i];

        if (!strcmp(x->name, name) && label_is(x, "domid", domid) && (!key || label_is(x, key, value)))
            return x;
    }
    return NULL;
}

static bool is_set(const struct sample *x, const struct set_name *n)
{
    return label_is(x, "provider", n->provider) && label_is(x, "set", n->set);
}

/* The state of a set (the one whose xenstats_pv_set_state sample is 1)
 * into out, "absent" when the agent does not show the set. */
static void set_state(const struct scrape *s, const char *domid, const struct set_name *n, char *out, size_t size)
{
    snprintf(out, size, "absent");
    for (size_t i = 0; i < s->count; i++) {
        const struct sample *x = &s->samples[i];

        if (x->value == 1 && !strcmp(x->name, "xenstats_pv_set_state") && label_is(x, "domid", domid) &&
            is_set(x, n)) {
            label_get(x, "state", out, size);
            return;
        }
    }
}

/* The value of a per-set metric, NAN when absent. */
static double set_value(const struct scrape *s, const char *name, const char *domid, const struct set_name *n)
{
    for (size_t i = 0; i < s->count; i++) {
        const struct sample *x = &s->samples[i];

        if (!strcmp(x->name, name) && label_is(x, "domid", domid) && is_set(x, n))
            return x->value;
    }
    return NAN;
}

/* Every set the agent shows for domid, into sets; returns how many. */
static size_t list_sets(const struct scrape *s, const char *domid, struct set_name *sets, size_t max)
{
    size_t n = 0;

    for (size_t i = 0; i < s->count && n < max; i++) {
        const struct sample *x = &s->samples[i];
        struct set_name name;
        bool seen = false;

        if (strcmp(x->name, "xenstats_pv_set_statistics") || !label_is(x, "domid", domid) ||
            !label_get(x, "provider", name.provider, sizeof(name.provider)) ||
            !label_get(x, "set", name.set, sizeof(name.set)))
            continue;
        for (size_t j = 0; j < n && !seen; j++)
            seen = !strcmp(sets[j].provider, name.provider) && !strcmp(sets[j].set, name.set);
        if (!seen)
            sets[n++] = name;
    }
    return n;
}

static bool sets_equal(const struct set_name *a, const struct set_name *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].provider, b[i].provider) || strcmp(a[i].set, b[i].set))
            return false;
    return true;
}

static size_t sets_read(const char *path, struct set_name *sets, size_t max)
{
    char line[2 * NAME_LEN + 2];
    size_t n = 0;
    FILE *f = fopen(path, "r");

    if (!f)
        return 0;
    while (n < max && fgets(line, sizeof(line), f)) {
        char *tab = strchr(line, '\t');

        line[strcspn(line, "\n")] = '\0';
        if (!tab)
            continue;
        *tab = '\0';
        snprintf(sets[n].provider, sizeof(sets[n].provider), "%.127s", line);
        snprintf(sets[n].set, sizeof(sets[n].set), "%.127s", tab + 1);
        n++;
    }
    fclose(f);
    return n;
}

/* Whether any series names domid; the first few metric names into out. */
static bool domid_label_anywhere(const struct scrape *s, const char *domid, char *out, size_t size)
{
    size_t used = 0, names = 0;
    const char *last = "";

    out[0] = '\0';
    for (size_t i = 0; i < s->count; i++) {
        if (!label_is(&s->samples[i], "domid", domid))
            continue;
        if (names < 4 && strcmp(last, s->samples[i].name)) {
            int w = snprintf(out + used, size - used, "%s%s", names ? " " : "", s->samples[i].name);

            if (w > 0 && (size_t)w < size - used)
                used += (size_t)w;
            last = s->samples[i].name;
            names++;
        }
    }
    return names > 0;
}

/* "provider/set=state ..." of sets into out. */
static void describe_states(const struct scrape *s, const char *domid, const struct set_name *sets, size_t n,
                            char *out, size_t size)
{
    size_t used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        char state[32];
        int w;

        set_state(s, domid, &sets[i], state, sizeof(state));
        w = snprintf(out + used, size - used, "%s'%s/%s'=%s", i ? " " : "", sets[i].provider, sets[i].set, state);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* Whether any series names one of the comma-separated domids of list. */
static bool any_domid_anywhere(const struct scrape *s, const char *list, char *out, size_t size)
{
    char domid[16];

    for (const char *p = list; *p; p += *p == ',') {
        size_t n = strcspn(p, ",");

        snprintf(domid, sizeof(domid), "%.*s", (int)(n < sizeof(domid) ? n : sizeof(domid) - 1), p);
        p += n;
        if (domid_label_anywhere(s, domid, out, size)) {
            size_t used = strlen(out);

            snprintf(out + used, size - used, " (domid %s)", domid);
            return true;
        }
    }
    out[0] = '\0';
    return false;
}

static int cmd_baseline(const char *domid, const char *path, int timeout_s)
{
    struct set_name sets[MAX_SETS], prev[MAX_SETS];
    size_t n = 0, prev_n = 0;
    double start = now_ms();
    char detail[2048] = "the agent did not answer";

    while (now_ms() - start < timeout_s * 1e3) {
        struct scrape s;
        bool all_active = true;

        if (scrape_get(&s) == 0) {
            n = list_sets(&s, domid, sets, MAX_SETS);
            for (size_t i = 0; i < n && all_active; i++) {
                char state[32];

                set_state(&s, domid, &sets[i], state, sizeof(state));
                all_active = !strcmp(state, "active");
            }
            describe_states(&s, domid, sets, n, detail, sizeof(detail));
            scrape_free(&s);
            if (n > 0 && all_active && n == prev_n && sets_equal(sets, prev, n)) {
                FILE *f = fopen(path, "w");

                if (!f)
                    return 1;
                for (size_t i = 0; i < n; i++)
                    fprintf(f, "%s\t%s\n", sets[i].provider, sets[i].set);
                fclose(f);
                printf("%zu sets of domid %s active: %s\n", n, domid, detail);
                return 0;
            }
            memcpy(prev, sets, n * sizeof(*sets));
            prev_n = all_active ? n : 0;
        }
        sleep_ms(1000);
    }
    printf("no stable list of active sets for domid %s in %d s: %s\n", domid, timeout_s, detail);
    return 1;
}

static int cmd_settle(const char *domid, const char *old, const char *uuid, const char *path, int timeout_s)
{
    struct set_name sets[MAX_SETS];
    size_t n = sets_read(path, sets, MAX_SETS);
    double start = now_ms(), active_at = -1;
    char detail[2048] = "the agent did not answer";

    if (n == 0) {
        printf("no sets in %s\n", path);
        return 1;
    }
    while (now_ms() - start < timeout_s * 1e3) {
        struct scrape s;
        const struct sample *info;
        bool active = true, old_seen;
        char name[NAME_LEN] = "?", old_names[512];

        if (scrape_get(&s) == 0) {
            info = find(&s, "xenstats_domain_info", domid, "uuid", uuid);
            if (info)
                label_get(info, "domain", name, sizeof(name));
            for (size_t i = 0; i < n && active; i++) {
                char state[32];

                set_state(&s, domid, &sets[i], state, sizeof(state));
                active = !strcmp(state, "active");
            }
            old_seen = any_domid_anywhere(&s, old, old_names, sizeof(old_names));
            if (info && active && active_at < 0)
                active_at = now_ms() - start;
            if (info && active && !old_seen) {
                printf("%.0f ms: every set (%zu) active under domid %s, uuid %s, domain %s; no series of domid %s\n",
                       now_ms() - start, n, domid, uuid, name, old);
                scrape_free(&s);
                return 0;
            }
            snprintf(detail, sizeof(detail),
                     "xenstats_domain_info{domid=%s,uuid=%s}: %s, domain %s; series of old domid %s: %s%s; ",
                     domid, uuid, info ? "present" : "absent", name, old, old_seen ? "present: " : "gone",
                     old_names);
            describe_states(&s, domid, sets, n, detail + strlen(detail), sizeof(detail) - strlen(detail));
            scrape_free(&s);
        }
        sleep_ms(POLL_MS);
    }
    /* when only the old series stayed, how long the sets took still counts */
    printf("-1 ms: not settled after %d s (every set active after %.0f ms): %s\n", timeout_s, active_at, detail);
    return 1;
}

/* Guest values of domid that differ between a and b, out of how many;
 * *ret_missing: those of b that a does not have (not sampled yet then). */
static size_t values_changed(const struct scrape *a, const struct scrape *b, const char *domid, size_t *ret_total,
                             size_t *ret_missing)
{
    size_t changed = 0, total = 0, missing = 0;

    for (size_t i = 0; i < b->count; i++) {
        const struct sample *x = &b->samples[i];

        if ((strncmp(x->name, "xenstats_guest_", 15) && strcmp(x->name, "xenstats_pv_value")) ||
            !label_is(x, "domid", domid))
            continue;
        total++;
        missing++;
        for (size_t j = 0; j < a->count; j++) {
            const struct sample *y = &a->samples[j];

            if (!strcmp(y->name, x->name) && !strcmp(y->labels, x->labels)) {
                changed += y->value != x->value;
                missing--;
                break;
            }
        }
    }
    *ret_total = total;
    *ret_missing = missing;
    return changed;
}

static int cmd_moving(const char *domid, const char *path)
{
    struct set_name sets[MAX_SETS];
    size_t n = sets_read(path, sets, MAX_SETS), changed = 0, total = 0, missing = 0;
    struct scrape a;
    double least = NAN, start = now_ms();
    bool all = false;

    if (n == 0 || scrape_get(&a) < 0) {
        printf("no sets in %s, or the agent did not answer\n", path);
        return 1;
    }
    /* a second scrape at least 2 intervals later, and later again while a
     * set has not answered (a loaded machine makes a sample time out) */
    sleep_ms(2000);
    while (!(all && changed > 0) && now_ms() - start < MOVING_MS) {
        struct scrape b;

        sleep_ms(500);
        if (scrape_get(&b) < 0)
            continue;
        all = true;
        least = INFINITY;
        for (size_t i = 0; i < n; i++) {
            double d = set_value(&b, "xenstats_pv_set_samples_total", domid, &sets[i]) -
                       set_value(&a, "xenstats_pv_set_samples_total", domid, &sets[i]);

            if (!(d > 0))
                all = false;
            if (d < least || isnan(d))
                least = d;
        }
        changed = values_changed(&a, &b, domid, &total, &missing);
        if (missing && !changed) {
            /* the first scrape came before the sets' first samples (the
             * agent attaches a set between rounds): compare from this one */
            scrape_free(&a);
            a = b;
            all = false;
            continue;
        }
        scrape_free(&b);
    }
    scrape_free(&a);
    printf("in %.1f s every set of domid %s answered %s samples (fewest: %.0f); %zu of %zu guest values changed\n",
           (now_ms() - start) / 1e3, domid, all ? "new" : "NO new", least, changed, total);
    return all && changed > 0 ? 0 : 1;
}

struct vcpu_view {
    int count, online;
    bool is_online[MAX_VCPUS];
    double running_s[MAX_VCPUS];
};

/* `xl vcpu-list NAME` of domid: "Name ID VCPU CPU State Time(s) ...",
 * State "r--", "-b-", "--p": the third letter says the vCPU is down. */
static int xl_vcpus(const char *domid, const char *name, struct vcpu_view *v, char *raw, size_t size)
{
    char cmd[256], line[512];
    size_t used = 0;
    FILE *p;

    *v = (struct vcpu_view){0};
    snprintf(cmd, sizeof(cmd), "xl vcpu-list %s 2>&1", name);
    p = popen(cmd, "r");
    if (!p)
        return -errno;
    raw[0] = '\0';
    while (fgets(line, sizeof(line), p)) {
        char n[NAME_LEN], id[16], cpu[16], state[8];
        int vcpu, w;
        double t;

        if (sscanf(line, "%127s %15s %d %15s %7s %lf", n, id, &vcpu, cpu, state, &t) != 6 || strcmp(id, domid) ||
            vcpu < 0 || vcpu >= MAX_VCPUS || strlen(state) != 3)
            continue;
        v->is_online[vcpu] = state[2] != 'p';
        v->running_s[vcpu] = t;
        v->online += v->is_online[vcpu];
        if (vcpu + 1 > v->count)
            v->count = vcpu + 1;
        w = snprintf(raw + used, size - used, "%s%d:%s:%.1fs", used ? " " : "", vcpu, state, t);
        if (w > 0 && (size_t)w < size - used)
            used += (size_t)w;
    }
    return pclose(p) == 0 ? 0 : -EIO;
}

static void agent_vcpus(const struct scrape *s, const char *domid, struct vcpu_view *v, char *raw, size_t size)
{
    size_t used = 0;

    *v = (struct vcpu_view){0};
    raw[0] = '\0';
    for (size_t i = 0; i < s->count; i++) {
        const struct sample *x = &s->samples[i];
        char vcpu_s[16], runstate[16];
        int vcpu;

        if (!label_is(x, "domid", domid) || !label_get(x, "vcpu", vcpu_s, sizeof(vcpu_s)) ||
            !label_get(x, "runstate", runstate, sizeof(runstate)) || strcmp(runstate, "offline"))
            continue;
        vcpu = atoi(vcpu_s);
        if (vcpu < 0 || vcpu >= MAX_VCPUS)
            continue;
        if (!strcmp(x->name, "xenstats_vcpu_state")) {
            v->is_online[vcpu] = x->value != 1;
            v->online += x->value != 1;
            if (vcpu + 1 > v->count)
                v->count = vcpu + 1;
        }
    }
    for (int vcpu = 0; vcpu < v->count; vcpu++) {
        char n[16];
        const struct sample *x;
        int w;

        snprintf(n, sizeof(n), "%d", vcpu);
        for (size_t i = 0; i < s->count; i++) {
            x = &s->samples[i];
            if (!strcmp(x->name, "xenstats_vcpu_runstate_seconds_total") && label_is(x, "domid", domid) &&
                label_is(x, "vcpu", n) && label_is(x, "runstate", "running"))
                v->running_s[vcpu] = x->value;
        }
        w = snprintf(raw + used, size - used, "%s%d:%s:%.1fs", used ? " " : "", vcpu,
                     v->is_online[vcpu] ? "online" : "offline", v->running_s[vcpu]);
        if (w > 0 && (size_t)w < size - used)
            used += (size_t)w;
    }
}

static int cmd_vcpus(const char *domid, const char *name, int online, int timeout_s)
{
    double start = now_ms();
    char xl_raw[1024] = "", agent_raw[1024] = "", why[128] = "the agent did not answer";

    while (now_ms() - start < timeout_s * 1e3) {
        struct vcpu_view xl, agent;
        struct scrape s;
        const struct sample *total;
        bool same;

        if (xl_vcpus(domid, name, &xl, xl_raw, sizeof(xl_raw)) == 0 && scrape_get(&s) == 0) {
            agent_vcpus(&s, domid, &agent, agent_raw, sizeof(agent_raw));
            total = find(&s, "xenstats_domain_vcpus_online", domid, NULL, NULL);
            same = xl.count == agent.count && xl.count > 0;
            snprintf(why, sizeof(why), "%s", same ? "" : "not the same vCPUs");
            for (int i = 0; i < xl.count && same; i++) {
                same = xl.is_online[i] == agent.is_online[i];
                if (!same)
                    snprintf(why, sizeof(why), "vCPU %d online differs", i);
                else if (fabs(xl.running_s[i] - agent.running_s[i]) > 2.0 + 0.05 * xl.running_s[i]) {
                    same = false;
                    snprintf(why, sizeof(why), "vCPU %d running time differs", i);
                }
            }
            if (same && (xl.online != online || !total || total->value != online)) {
                same = false;
                snprintf(why, sizeof(why), "%d online expected; xl %d, agent's xenstats_domain_vcpus_online %.0f",
                         online, xl.online, total ? total->value : -1);
            }
            scrape_free(&s);
            if (same) {
                printf("%d of %d vCPUs online; xl vcpu-list: %s; agent: %s\n", online, xl.count, xl_raw,
                       agent_raw);
                return 0;
            }
        }
        sleep_ms(500);
    }
    printf("no agreement in %d s (%s): xl vcpu-list: %s; agent: %s\n", timeout_s, why, xl_raw, agent_raw);
    return 1;
}

static int cmd_paused(const char *domid, const char *path, int seconds)
{
    struct set_name sets[MAX_SETS];
    size_t n = sets_read(path, sets, MAX_SETS);
    double start = now_ms(), seen_at = -1, timeouts_before = 0, timeouts_after = 0;
    char detail[2048] = "", bad[512] = "";
    int scrapes = 0;

    if (n == 0) {
        printf("no sets in %s\n", path);
        return 1;
    }
    /* first the agent must have sampled the domain paused */
    while (seen_at < 0 && now_ms() - start < 10e3) {
        struct scrape s;

        if (scrape_get(&s) == 0) {
            const struct sample *p = find(&s, "xenstats_domain_state", domid, "state", "paused");

            if (p && p->value == 1) {
                seen_at = now_ms();
                for (size_t i = 0; i < n; i++)
                    timeouts_before += set_value(&s, "xenstats_pv_set_timeouts_total", domid, &sets[i]);
            }
            scrape_free(&s);
        }
        if (seen_at < 0)
            sleep_ms(POLL_MS);
    }
    if (seen_at < 0) {
        printf("the agent never showed domid %s paused (xenstats_domain_state{state=\"paused\"}) in 10 s\n", domid);
        return 1;
    }
    while (now_ms() - seen_at < seconds * 1e3 && !bad[0]) {
        struct scrape s;

        sleep_ms(500);
        if (scrape_get(&s) < 0)
            continue;
        scrapes++;
        if (!find(&s, "xenstats_vcpu_state", domid, "runstate", "running"))
            snprintf(bad, sizeof(bad), "no vCPU state of the domain while paused");
        for (size_t i = 0; i < s.count && !bad[0]; i++) {
            const struct sample *x = &s.samples[i];

            if (!strcmp(x->name, "xenstats_vcpu_state") && label_is(x, "domid", domid) &&
                label_is(x, "runstate", "running") && x->value == 1)
                snprintf(bad, sizeof(bad), "a vCPU reported running while paused");
        }
        for (size_t i = 0; i < n && !bad[0]; i++) {
            char state[32];

            set_state(&s, domid, &sets[i], state, sizeof(state));
            if (strcmp(state, "active") && strcmp(state, "sampling"))
                snprintf(bad, sizeof(bad), "set '%.100s/%.100s' %.31s while paused", sets[i].provider, sets[i].set,
                         state);
        }
        describe_states(&s, domid, sets, n, detail, sizeof(detail));
        timeouts_after = 0;
        for (size_t i = 0; i < n; i++)
            timeouts_after += set_value(&s, "xenstats_pv_set_timeouts_total", domid, &sets[i]);
        scrape_free(&s);
    }
    printf("%s; %d scrapes in %d s paused: %s; timeouts counted while paused: %.0f\n",
           bad[0] ? bad : "no vCPU running, no set stale or timed out", scrapes, seconds, detail,
           timeouts_after - timeouts_before);
    return bad[0] || scrapes == 0 ? 1 : 0;
}

static int cmd_target(const char *domid, double bytes, int timeout_s)
{
    double start = now_ms(), last = NAN;

    while (now_ms() - start < timeout_s * 1e3) {
        struct scrape s;

        if (scrape_get(&s) == 0) {
            const struct sample *x = find(&s, "xenstats_domain_memory_target_bytes", domid, NULL, NULL);

            last = x ? x->value : NAN;
            scrape_free(&s);
            if (last == bytes) {
                printf("%.0f ms: xenstats_domain_memory_target_bytes{domid=%s} %.0f\n", now_ms() - start, domid, last);
                return 0;
            }
        }
        sleep_ms(POLL_MS);
    }
    printf("xenstats_domain_memory_target_bytes{domid=%s} is %.0f after %d s, not %.0f\n", domid, last, timeout_s,
           bytes);
    return 1;
}

static int cmd_withdrawn(const char *domid, const char *path, int timeout_s)
{
    struct set_name sets[MAX_SETS];
    size_t n = sets_read(path, sets, MAX_SETS);
    double start = now_ms();
    char detail[2048] = "the agent did not answer";

    while (n > 0 && now_ms() - start < timeout_s * 1e3) {
        struct scrape s;
        bool gone = true;

        if (scrape_get(&s) == 0) {
            for (size_t i = 0; i < n && gone; i++) {
                char state[32];

                set_state(&s, domid, &sets[i], state, sizeof(state));
                gone = !strcmp(state, "absent") || !strcmp(state, "withdrawn");
            }
            describe_states(&s, domid, sets, n, detail, sizeof(detail));
            scrape_free(&s);
            if (gone) {
                printf("%.0f ms: every set of domid %s withdrawn or gone: %s\n", now_ms() - start, domid, detail);
                return 0;
            }
        }
        sleep_ms(POLL_MS);
    }
    printf("sets of domid %s not withdrawn after %d s: %s\n", domid, timeout_s, detail);
    return 1;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";

    if (!strcmp(cmd, "baseline") && argc == 5)
        return cmd_baseline(argv[2], argv[3], atoi(argv[4]));
    if (!strcmp(cmd, "settle") && argc == 7)
        return cmd_settle(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]));
    if (!strcmp(cmd, "moving") && argc == 4)
        return cmd_moving(argv[2], argv[3]);
    if (!strcmp(cmd, "vcpus") && argc == 6)
        return cmd_vcpus(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
    if (!strcmp(cmd, "paused") && argc == 5)
        return cmd_paused(argv[2], argv[3], atoi(argv[4]));
    if (!strcmp(cmd, "target") && argc == 5)
        return cmd_target(argv[2], strtod(argv[3], NULL), atoi(argv[4]));
    if (!strcmp(cmd, "withdrawn") && argc == 5)
        return cmd_withdrawn(argv[2], argv[3], atoi(argv[4]));
    fprintf(stderr, "usage: lc_probe baseline|settle|moving|vcpus|paused|target|withdrawn ... (see the source)\n");
    return 2;
}
