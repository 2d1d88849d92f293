/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Running an emulated host (run.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "emu/emu.h"
#include "emu/hyper/hyper.h"
#include "emu/loop.h"
#include "emu/proto/run_dir.h"
#include "emu/run.h"
#include "emu/xenstore/xenstore.h"
#include "util/util.h"

/* ---- the settings ------------------------------------------------------ */

int emu_run_options_add_spec(struct emu_run_options *o, char *spec)
{
    char **grown = realloc(o->specs, (o->nspecs + 1) * sizeof(char *));

    if (!grown)
        return -ENOMEM;
    o->specs = grown;
    o->specs[o->nspecs++] = spec;
    o->ncli = o->nspecs;
    return 0;
}

void emu_run_options_free(struct emu_run_options *o)
{
    size_t i;

    for (i = o->ncli; i < o->nspecs; i++)
        free(o->specs[i]);
    free(o->specs);
    o->specs = NULL;
}

static int config_error(char *err, size_t errlen, const char *fmt, ...) XS_PRINTF(3, 4);

/* -EINVAL, with why in err. */
static int config_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* One "key value" line of a config file; 0 or -errno with why in err. */
static int config_setting(struct emu_run_options *o, const char *path, unsigned int lineno, const char *key,
                          const char *value, char ***specs, size_t *nspecs, char *err, size_t errlen)
{
    if (!strcmp(key, "pcpus")) {
        if (parse_u64(value, EMU_MAX_PCPUS, &o->pcpus) < 0 || !o->pcpus)
            return config_error(err, errlen, "%s:%u: pcpus: expected 1..%d", path, lineno, EMU_MAX_PCPUS);
    } else if (!strcmp(key, "tick")) {
        if (parse_duration_ns(value, &o->tick) < 0 || o->tick < 100000)
            return config_error(err, errlen, "%s:%u: tick: expected a duration of at least 100us", path, lineno);
    } else if (!strcmp(key, "memory")) {
        if (emu_size_parse(value, EMU_MAX_SIZE_KIB, &o->memory) < 0 || !o->memory)
            return config_error(err, errlen, "%s:%u: memory: expected a size such as 64G (at most 1T)", path,
                                lineno);
    } else if (!strcmp(key, "domain")) {
        char **grown = realloc(*specs, (*nspecs + 1) * sizeof(char *));

        if (!grown || !(grown[*nspecs] = strdup(value))) {
            free(grown ? grown : *specs);
            *specs = NULL;
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        *specs = grown;
        (*nspecs)++;
    } else {
        return config_error(err, errlen, "%s:%u: unknown setting '%s' (pcpus, tick, memory, domain)", path, lineno,
                            key);
    }
    return 0;
}

/* The config file's settings into o, its domains into *specs. */
static int read_config(struct emu_run_options *o, char ***specs, size_t *nspecs, char *err, size_t errlen)
{
    char *text = NULL, *line, *save = NULL;
    unsigned int lineno = 0;
    int r;

    r = read_small_file(o->config, 1 << 20, &text, NULL);
    if (r < 0) {
        snprintf(err, errlen, "cannot read config %s: %s", o->config, strerror(-r));
        return r;
    }
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *key, *value;

        lineno++;
        line += strspn(line, " \t");
        if (!*line || *line == '#')
            continue;
        key = line;
        value = key + strcspn(key, " \t");
        if (*value)
            *value++ = '\0';
        value += strspn(value, " \t");
        r = config_setting(o, o->config, lineno, key, value, specs, nspecs, err, errlen);
        if (r < 0)
            break;
    }
    free(text);
    return r;
}

int emu_run_options_load(struct emu_run_options *o, char *err, size_t errlen)
{
    struct emu_domain_spec spec;
    char **cfg = NULL, **all, spec_err[256];
    size_t ncfg = 0, i;
    int r;

    if (o->config && (r = read_config(o, &cfg, &ncfg, err, errlen)) < 0) {
        for (i = 0; i < ncfg; i++)
            free(cfg[i]);
        free(cfg);
        return r;
    }
    /* the config's domains first, as they always came */
    all = ncfg ? malloc((ncfg + o->nspecs) * sizeof(char *)) : NULL;
    if (ncfg && !all) {
        for (i = 0; i < ncfg; i++)
            free(cfg[i]);
        free(cfg);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (ncfg) {
        if (o->nspecs) /* no -D: specs is NULL, which memcpy may not take */
            memcpy(all, o->specs, o->nspecs * sizeof(char *));
        memcpy(all + o->nspecs, cfg, ncfg * sizeof(char *));
        free(cfg);
        free(o->specs);
        o->specs = all;
        o->nspecs += ncfg;
    }
    for (i = 0; i < o->nspecs; i++) {
        const char *s = o->specs[i < ncfg ? o->ncli + i : i - ncfg];

        if (emu_domain_spec_parse(s, &spec, spec_err, sizeof(spec_err)) < 0) {
            snprintf(err, errlen, "domain '%s': %s", s, spec_err);
            return -EINVAL;
        }
    }
    if (o->dom0_memory > o->memory) {
        snprintf(err, errlen, "--dom0-memory exceeds the host's --memory");
        return -EINVAL;
    }
    return 0;
}

/* ---- the host and its loop ---------------------------------------------- */

static void on_tick(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct emu_run *run = data;
    uint64_t now = monotonic_ns(), ticks;

    (void)events;
    if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
        run->tick_error = errno;
        emu_loop_quit(loop, 1);
        return;
    }
    emu_host_tick(&run->host, now);
    if (run->stop_at && now >= run->stop_at)
        emu_loop_quit(loop, 0);
}

static void on_signal(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct signalfd_siginfo si;

    (void)events;
    (void)data;
    if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        log_info("caught signal %u, shutting down", si.ssi_signo);
        emu_loop_quit(loop, 0);
    }
}

int emu_run_open(struct emu_run *run, const struct emu_run_options *o, char *err, size_t errlen)
{
    int r = emu_host_init(&run->host, o->dir, (uint32_t)o->pcpus, o->tick, o->memory);

    if (r == -EADDRINUSE) {
        snprintf(err, errlen, "an emulator is already running in %s", o->dir);
        return r;
    }
    if (r < 0) {
        snprintf(err, errlen, "cannot set up %s: %s", o->dir, strerror(-r));
        return r;
    }
    run->loop = emu_loop_new();
    if (!run->loop) {
        r = -errno;
        snprintf(err, errlen, "cannot set up the event loop: %s", strerror(-r));
        emu_host_fini(&run->host);
        return r;
    }
    run->host.loop = run->loop;
    run->host.xs_quota_nodes = (uint32_t)o->xs_quota_nodes;
    if ((r = emu_hyper_register(&run->host)) < 0) {
        snprintf(err, errlen, "cannot set up grants and event channels: %s", strerror(-r));
        return r;
    }
    if ((r = emu_xenstore_register(&run->host)) < 0) {
        snprintf(err, errlen, "cannot set up xenstore: %s", strerror(-r));
        return r;
    }
    return 0;
}

int emu_run_create_domains(struct emu_run *run, const struct emu_run_options *o, char *err, size_t errlen)
{
    struct emu_domain_spec spec;
    size_t ncfg = o->nspecs - o->ncli, i;
    char spec_err[256];
    int r;

    memset(&spec, 0, sizeof(spec)); /* no devices: a backend domain has none of its own */
    snprintf(spec.name, sizeof(spec.name), "Domain-0");
    spec.nr_vcpus = (uint32_t)o->dom0_vcpus;
    spec.nr_offline = 0;
    spec.workload = EMU_WORKLOAD_IDLE;
    spec.vcpu_stats = true;
    spec.memory_kib = spec.maxmem_kib = o->dom0_memory;
    spec.shared_kib = spec.outstanding_kib = 0;
    r = emu_domain_create(&run->host, &spec);
    for (i = 0; r >= 0 && i < o->nspecs; i++) {
        const char *s = o->specs[i < ncfg ? o->ncli + i : i - ncfg];

        emu_domain_spec_parse(s, &spec, spec_err, sizeof(spec_err));
        r = emu_domain_create(&run->host, &spec);
    }
    if (r >= 0)
        return 0;
    if (r == -EEXIST)
        snprintf(err, errlen, "two domains are named '%s'", spec.name);
    else if (r == -ENOMEM)
        snprintf(err, errlen, "cannot create domain '%s': the host's --memory has %lluK free, it wants %lluK",
                 spec.name, (unsigned long long)run->host.free_memory_kib, (unsigned long long)spec.memory_kib);
    else
        snprintf(err, errlen, "cannot create domain '%s': %s", spec.name, strerror(-r));
    return r;
}

int emu_run_start(struct emu_run *run, const struct emu_run_options *o, const sigset_t *mask, char *err,
                  size_t errlen)
{
    struct itimerspec its;
    int r;

    run->sfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
    run->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (run->sfd < 0 || run->tfd < 0)
        goto fail;
    its.it_interval.tv_sec = (time_t)(o->tick / 1000000000ULL);
    its.it_interval.tv_nsec = (long)(o->tick % 1000000000ULL);
    its.it_value = its.it_interval;
    if (timerfd_settime(run->tfd, 0, &its, NULL) < 0 || listen_control(run) < 0 ||
        emu_loop_add(run->loop, run->tfd, EPOLLIN, on_tick, run) < 0 ||
        emu_loop_add(run->loop, run->sfd, EPOLLIN, on_signal, run) < 0)
        goto fail;
    if (o->duration)
        run->stop_at = monotonic_ns() + o->duration;
    return 0;
fail:
    r = -errno;
    snprintf(err, errlen, "cannot set up the event loop: %s", strerror(-r));
    return r;
}

void emu_run_close(struct emu_run *run, const char *dir)
{
    while (run->clients)
        client_close(run->clients);
    if (run->lfd >= 0) {
        char path[PATH_MAX];

        close(run->lfd);
        if (snprintf(path, sizeof(path), "%s/%s", dir, EMU_CONTROL_SOCKET) < (int)sizeof(path))
            unlink(path);
    }
    if (run->tfd >= 0)
        close(run->tfd);
    if (run->sfd >= 0)
        close(run->sfd);
    emu_host_fini(&run->host);
    emu_loop_free(run->loop);
}
