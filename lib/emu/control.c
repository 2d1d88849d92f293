/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulator's control server (control.h): one line per request, one or
 * more lines per reply, ending with "ok" or "error ERRNO text".
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu/control.h"
#include "emu/hyper/hyper.h"
#include "emu/proto/run_dir.h"
#include "emu/xenstore/xenstore.h"
#include "emu/xenstore/xs_wire.h"
#include "util/util.h"


static int reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int reply(int fd, const char *fmt, ...)
{
    char buf[CONTROL_LINE_MAX + 64];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return 0;
    if ((size_t)n >= sizeof(buf) - 1)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    /* Replies are small and clients read them; a client that does not is
     * dropped by MSG_DONTWAIT failing rather than blocking the emulator. */
    (void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    return 0;
}

static size_t count_domains(const struct emu_run *run)
{
    const struct emu_domain *d;
    size_t n = 0;

    for (d = run->host.domains; d; d = d->next)
        n++;
    return n;
}

/* A domain by domid or name; NULL with the error already replied. */
static struct emu_domain *find_domain(struct emu_run *run, int fd, const char *arg)
{
    struct emu_domain *d;
    uint64_t domid;

    if (parse_u64(arg, XENSTATS_DOMID_MAX, &domid) == 0) {
        d = emu_domain_find(&run->host, (uint32_t)domid);
        if (!d)
            reply(fd, "error ESRCH domain %s does not exist", arg);
        return d;
    }
    /* a dying domain's name may be taken again already: the live one first */
    for (int dying = 0; dying < 2; dying++)
        for (d = run->host.domains; d; d = d->next)
            if (d->dying == dying && !strcmp(d->spec.name, arg))
                return d;
    reply(fd, "error ESRCH no domain is named '%s'", arg);
    return NULL;
}

/* xl list's state letters */
static void domain_state(const struct emu_domain *d, char buf[7])
{
    static const char reasons[] = "-rscwS";
    uint32_t flags = emu_domain_flags(d);

    buf[0] = flags & XENSTATS_DOMAIN_RUNNING ? 'r' : '-';
    buf[1] = flags & XENSTATS_DOMAIN_BLOCKED ? 'b' : '-';
    buf[2] = flags & XENSTATS_DOMAIN_PAUSED ? 'p' : '-';
    buf[3] = flags & XENSTATS_DOMAIN_SHUTDOWN ? 's' : '-';
    buf[4] = d->shut_down && d->shutdown_reason < sizeof(reasons) - 1 ? reasons[d->shutdown_reason] : '-';
    buf[5] = flags & XENSTATS_DOMAIN_DYING ? 'd' : '-';
    buf[6] = '\0';
}

/* ---- devices --------------------------------------------------------- */

static const char *const device_verbs[] = {"network-attach", "network-detach", "block-attach",
                                           "block-detach",   "vif-set",        "vbd-set"};

static bool is_device_verb(const char *verb)
{
    for (size_t i = 0; i < ARRAY_SIZE(device_verbs); i++)
        if (!strcmp(verb, device_verbs[i]))
            return true;
    return false;
}

static const char *kind_name(enum emu_device_kind kind)
{
    return kind == EMU_DEVICE_VIF ? "vif" : "vbd";
}

/* A vbd by vdev or devid, a vif by devid; -EINVAL with the error replied. */
static int device_id(int fd, enum emu_device_kind kind, const char *arg, uint32_t *ret_devid)
{
    uint64_t v;

    if (kind == EMU_DEVICE_VBD && emu_vbd_vdev_parse(arg, ret_devid) == 0)
        return 0;
    if (parse_u64(arg, kind == EMU_DEVICE_VIF ? EMU_MAX_VIF_DEVID : UINT32_MAX, &v) == 0) {
        *ret_devid = (uint32_t)v;
        return 0;
    }
    reply(fd, "error EINVAL '%s' is not a %s", arg,
          kind == EMU_DEVICE_VIF ? "vif devid (0-65535)" : "vbd (a vdev such as xvda, or a devid)");
    return -EINVAL;
}

static struct emu_device *find_device(int fd, struct emu_domain *d, enum emu_device_kind kind, const char *arg)
{
    struct emu_device *dev;
    uint32_t devid;

    if (device_id(fd, kind, arg, &devid) < 0)
        return NULL;
    dev = emu_device_find(d, kind, devid);
    if (!dev)
        reply(fd, "error ENODEV domain %u has no %s %s", d->domid, kind_name(kind), arg);
    return dev;
}

/*
 * "COUNTER=N,COUNTER=+N,traffic=yes|no": every setting is checked before
 * any is applied, so a refused line changes nothing.
 */
static int set_device(struct emu_run *run, int fd, struct emu_domain *d, struct emu_device *dev, char *settings)
{
    uint64_t values[EMU_DEVICE_COUNTERS];
    bool set[EMU_DEVICE_COUNTERS] = {false}, traffic = dev->traffic;
    enum emu_statistics statistics = dev->statistics;
    char *save = NULL, *tok;
    unsigned int i;
    int r = 0;

    memcpy(values, dev->counter, sizeof(values));
    for (tok = strtok_r(settings, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *value = strchr(tok, '=');
        bool delta;
        uint64_t v;
        int c;

        if (!value)
            return reply(fd, "error EINVAL '%s' is not COUNTER=VALUE", tok);
        *value++ = '\0';
        if (!strcmp(tok, "traffic")) {
            if (strcmp(value, "yes") && strcmp(value, "no"))
                return reply(fd, "error EINVAL traffic=%s: expected yes or no", value);
            traffic = !strcmp(value, "yes");
            continue;
        }
        if (!strcmp(tok, "statistics") && dev->kind == EMU_DEVICE_VBD) {
            if (emu_statistics_parse(value, &statistics) < 0)
                return reply(fd, "error EINVAL statistics=%s: expected present, missing or unreadable", value);
            continue;
        }
        c = emu_device_counter_index(dev->kind, tok);
        if (c < 0) {
            unsigned int n;
            const char *const *names = emu_device_counter_names(dev->kind, &n);
            char known[512];
            size_t used = 0;

            /* a list cut short, never a write past its end */
            for (i = 0; i < n && used < sizeof(known); i++)
                used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "", names[i]);
            return reply(fd, "error EINVAL a %s has no counter '%s' (%s, traffic%s)", kind_name(dev->kind), tok,
                         known, dev->kind == EMU_DEVICE_VBD ? ", statistics" : "");
        }
        delta = value[0] == '+';
        if (parse_u64(value + delta, UINT64_MAX, &v) < 0)
            return reply(fd, "error EINVAL %s=%s: expected a number, or +N to add N", tok, value);
        if (delta && v > UINT64_MAX - values[c])
            return reply(fd, "error ERANGE %s=%s: the counter would pass 2^64-1", tok, value);
        values[c] = delta ? values[c] + v : v;
        set[c] = true;
    }
    dev->traffic = traffic;
    for (i = 0; r == 0 && i < EMU_DEVICE_COUNTERS; i++)
        if (set[i])
            r = emu_device_set(&run->host, d, dev, i, values[i]);
    if (r == 0 && statistics != dev->statistics)
        r = emu_device_set_statistics(&run->host, d, dev, statistics);
    return reply(fd, r < 0 ? "error EIO %s" : "ok", strerror(-r));
}

static int control_device(struct emu_run *run, int fd, const char *verb, struct emu_domain *d, char *extra)
{
    bool set = !strcmp(verb, "vif-set") || !strcmp(verb, "vbd-set");
    enum emu_device_kind kind =
        !strncmp(verb, "network-", 8) || !strcmp(verb, "vif-set") ? EMU_DEVICE_VIF : EMU_DEVICE_VBD;
    char *rest = extra ? strchr(extra, ' ') : NULL;
    struct emu_device *dev;
    uint32_t devid = UINT32_MAX;
    int r;

    if (rest)
        *rest++ = '\0';
    if (!strcmp(verb, "network-attach") || !strcmp(verb, "block-attach")) {
        if (rest || (kind == EMU_DEVICE_VBD && !extra))
            return reply(fd, "error EINVAL usage: %s DOMAIN %s", verb, kind == EMU_DEVICE_VIF ? "[DEVID]" : "VDEV");
        if (kind == EMU_DEVICE_VIF && extra && device_id(fd, kind, extra, &devid) < 0)
            return 0;
        if (kind == EMU_DEVICE_VBD && emu_vbd_vdev_parse(extra, &devid) < 0)
            return reply(fd, "error EINVAL '%s' is not a vdev (xvd and 1-3 letters: xvda, xvdb, ... xvdaa)", extra);
        r = emu_device_attach(&run->host, d->domid, kind, devid, extra, d->spec.traffic);
        if (r == -EEXIST)
            return reply(fd, "error EEXIST domain %u has %s %u already", d->domid, kind_name(kind), devid);
        if (r == -ENOSPC)
            return reply(fd, "error ENOSPC domain %u has %d %ss already", d->domid, EMU_MAX_DEVICES, kind_name(kind));
        if (r < 0)
            return reply(fd, "error EIO %s", strerror(-r));
        return reply(fd, "ok %d", r);
    }
    if (!extra || set != (rest != NULL))
        return reply(fd, "error EINVAL usage: %s DOMAIN %s%s", verb, kind == EMU_DEVICE_VIF ? "DEVID" : "VDEV|DEVID",
                     set ? " COUNTER=VALUE,..." : "");
    dev = find_device(fd, d, kind, extra);
    if (!dev)
        return 0;
    if (set)
        return set_device(run, fd, d, dev, rest);
    r = emu_device_detach(&run->host, d->domid, kind, dev->devid);
    return reply(fd, r < 0 ? "error EIO %s" : "ok", strerror(-r));
}

static void list_devices(struct emu_run *run, int fd)
{
    const struct emu_domain *d;

    for (d = run->host.domains; d; d = d->next) {
        for (uint32_t i = 0; i < d->nr_devices; i++) {
            const struct emu_device *dev = &d->devices[i];
            unsigned int n, c;
            const char *const *names = emu_device_counter_names(dev->kind, &n);
            char line[CONTROL_LINE_MAX], name[XENSTATS_DEVICE_NAME_MAX];
            size_t used;

            if (dev->kind == EMU_DEVICE_VIF)
                snprintf(name, sizeof(name), "vif%u.%u", d->domid, dev->devid);
            else
                snprintf(name, sizeof(name), "%s", dev->vdev);
            used = (size_t)snprintf(line, sizeof(line), "%u %s %u %s %s", d->domid, kind_name(dev->kind),
                                    dev->devid, name, dev->traffic ? "yes" : "no");
            for (c = 0; c < n && used < sizeof(line); c++)
                used += (size_t)snprintf(line + used, sizeof(line) - used, " %s=%llu", names[c],
                                         (unsigned long long)dev->counter[c]);
            if (dev->statistics != EMU_STATISTICS_PRESENT && used < sizeof(line))
                snprintf(line + used, sizeof(line) - used, " statistics=%s", emu_statistics_name(dev->statistics));
            reply(fd, "%s", line);
        }
    }
}

/* ---- save, restore, migrate, reboot, vcpu-set ------------------------- */

static const char *const lifecycle_verbs[] = {"migrate", "reboot", "save", "vcpu-set"};

static bool is_lifecycle_verb(const char *verb)
{
    for (size_t i = 0; i < ARRAY_SIZE(lifecycle_verbs); i++)
        if (!strcmp(verb, lifecycle_verbs[i]))
            return true;
    return false;
}

static struct emu_image *find_saved(struct emu_run *run, const char *name, struct emu_image ***ret_link)
{
    struct emu_image **pp;

    for (pp = &run->host.saved; *pp; pp = &(*pp)->next) {
        if (!strcmp((*pp)->spec.name, name)) {
            if (ret_link)
                *ret_link = pp;
            return *pp;
        }
    }
    return NULL;
}

static int reply_resumed(int fd, int r, const char *name)
{
    if (r == -EEXIST)
        return reply(fd, "error EEXIST a domain named '%s' is running", name);
    if (r == -ENOMEM)
        return reply(fd, "error ENOMEM the host has not the memory for domain '%s'", name);
    if (r < 0)
        return reply(fd, "error EIO %s", strerror(-r));
    return reply(fd, "ok domid %d", r);
}

static int control_lifecycle(struct emu_run *run, int fd, const char *verb, struct emu_domain *d, char *extra)
{
    char name[sizeof(d->spec.name)];
    struct emu_image *image;
    uint64_t n;
    int r;

    if (!strcmp(verb, "vcpu-set")) {
        if (!extra || parse_u64(extra, d->spec.nr_vcpus, &n) < 0 || n == 0)
            return reply(fd, "error EINVAL vcpu-set needs a domain and a number of vCPUs from 1 to %u",
                         d->spec.nr_vcpus);
        r = emu_domain_set_vcpus(&run->host, d->domid, (uint32_t)n);
        return reply(fd, r < 0 ? "error EIO %s" : "ok", strerror(-r));
    }
    if (extra)
        return reply(fd, "error EINVAL %s takes one domain", verb);
    if (d->domid == 0)
        return reply(fd, "error EPERM Domain-0 cannot be %s", !strcmp(verb, "save") ? "saved" : "moved");
    if (d->shut_down)
        return reply(fd, "error EINVAL domain %u is shut down", d->domid);
    if (!strcmp(verb, "save") && find_saved(run, d->spec.name, NULL))
        return reply(fd, "error EEXIST a domain named '%s' is saved already", d->spec.name);
    strcpy(name, d->spec.name);
    r = emu_domain_suspend(&run->host, d->domid, !strcmp(verb, "save"), &image);
    if (r < 0)
        return reply(fd, "error EIO %s", strerror(-r));
    if (!strcmp(verb, "save")) {
        image->next = run->host.saved;
        run->host.saved = image;
        return reply(fd, "ok");
    }
    return reply_resumed(fd, emu_domain_resume(&run->host, image), name);
}

static int control_restore(struct emu_run *run, int fd, const char *name)
{
    struct emu_image *image, **link;
    int r;

    if (!name || !*name || strchr(name, ' '))
        return reply(fd, "error EINVAL restore needs the name of a saved domain");
    image = find_saved(run, name, &link);
    if (!image)
        return reply(fd, "error ENOENT no domain named '%s' is saved", name);
    *link = image->next;
    r = emu_domain_resume(&run->host, image);
    if (r == -EEXIST) { /* kept: it may be restored once the name is free */
        *link = image;
        image->next = NULL;
        for (link = &run->host.saved; *link; link = &(*link)->next)
            ;
    }
    return reply_resumed(fd, r, name);
}

static int control_domain(struct emu_run *run, int fd, const char *verb, char *arg)
{
    char *extra = arg ? strchr(arg, ' ') : NULL;
    struct emu_domain *d;
    uint64_t kib;
    uint32_t reason = XENSTATS_SHUTDOWN_POWEROFF;
    int r;

    if (!arg || !*arg)
        return reply(fd, "error EINVAL %s needs a domain", verb);
    if (extra)
        *extra++ = '\0';
    d = find_domain(run, fd, arg);
    if (!d)
        return 0;
    if (d->dying)
        return reply(fd, "error EINVAL domain %u is dying", d->domid);
    if (is_device_verb(verb))
        return control_device(run, fd, verb, d, extra);
    if (is_lifecycle_verb(verb))
        return control_lifecycle(run, fd, verb, d, extra);
    if (!strcmp(verb, "pause") || !strcmp(verb, "unpause")) {
        if (extra)
            return reply(fd, "error EINVAL %s takes one domain", verb);
        if (d->domid == 0)
            return reply(fd, "error EINVAL Domain-0 cannot be paused (Xen refuses to pause the caller's domain)");
        if (!strcmp(verb, "unpause") && !d->pause_count)
            return reply(fd, "error EINVAL domain %u is not paused", d->domid);
        r = !strcmp(verb, "pause") ? emu_domain_pause(&run->host, d->domid) : emu_domain_unpause(&run->host, d->domid);
        if (r == -EOVERFLOW)
            return reply(fd, "error EOVERFLOW domain %u is paused 255 times already", d->domid);
    } else if (!strcmp(verb, "shutdown")) {
        if (extra && emu_shutdown_reason_parse(extra, &reason) < 0)
            return reply(fd,
                         "error EINVAL unknown shutdown reason '%s' (poweroff, reboot, suspend, crash, watchdog, "
                         "soft_reset)",
                         extra);
        if (d->domid == 0)
            return reply(fd, "error EPERM Domain-0 cannot be shut down here");
        r = emu_domain_shutdown(&run->host, d->domid, reason);
        if (r == -EALREADY)
            return reply(fd, "error EALREADY domain %u is already shut down (%s)", d->domid,
                         emu_shutdown_reason_name(d->shutdown_reason));
    } else {
        if (!extra)
            return reply(fd, "error EINVAL mem-set needs a domain and a size");
        if (emu_size_parse(extra, EMU_MAX_SIZE_KIB, &kib) < 0 || kib == 0)
            return reply(fd, "error EINVAL '%s' is not a memory size (e.g. 512M, 2G; whole 4 KiB pages)", extra);
        if (kib > d->static_max_kib)
            return reply(fd, "error EINVAL %lluK is above domain %u's static maximum %lluK (maxmem)",
                         (unsigned long long)kib, d->domid, (unsigned long long)d->static_max_kib);
        r = emu_domain_set_target(&run->host, d->domid, kib);
    }
    return reply(fd, r < 0 ? "error EIO %s" : "ok", strerror(-r));
}

static int handle_command(struct emu_run *run, int fd, char *line)
{
    char *arg = strchr(line, ' ');
    char err[256];
    uint64_t domid;
    int r;

    if (arg)
        *arg++ = '\0';
    if (!strcmp(line, "create") && arg) {
        struct emu_domain_spec spec;
        size_t count = 0;
        struct emu_domain *d;

        for (d = run->host.domains; d; d = d->next)
            count++;
        if (count >= DOMAINS_MAX)
            return reply(fd, "error ENOSPC too many domains (%d)", DOMAINS_MAX);
        if (emu_domain_spec_parse(arg, &spec, err, sizeof(err)) < 0)
            return reply(fd, "error EINVAL %s", err);
        r = emu_domain_create(&run->host, &spec);
        if (r == -EEXIST)
            return reply(fd, "error EEXIST a domain named '%s' exists", spec.name);
        if (r == -ENOMEM)
            return reply(fd, "error ENOMEM the host has %lluK free, the domain wants %lluK",
                         (unsigned long long)run->host.free_memory_kib, (unsigned long long)spec.memory_kib);
        if (r < 0)
            return reply(fd, "error EIO %s", strerror(-r));
        return reply(fd, "ok %d", r);
    }
    if (!strcmp(line, "destroy") && arg) {
        char *linger_arg = strchr(arg, ' ');
        uint64_t linger = 0;

        if (linger_arg)
            *linger_arg++ = '\0';
        if (parse_u64(arg, XENSTATS_DOMID_MAX, &domid) < 0)
            return reply(fd, "error EINVAL '%s' is not a domid", arg);
        if (linger_arg && (parse_duration_ns(linger_arg, &linger) < 0 || linger > EMU_MAX_LINGER_NS))
            return reply(fd, "error EINVAL --linger %s: expected a duration up to 3600s (e.g. 2s)", linger_arg);
        if (domid == 0)
            return reply(fd, "error EPERM Domain-0 cannot be destroyed");
        r = emu_domain_kill(&run->host, (uint32_t)domid, linger);
        if (r == -ESRCH)
            return reply(fd, "error ESRCH domain %s does not exist", arg);
        return reply(fd, r < 0 ? "error EIO %s" : "ok", strerror(-r));
    }
    if (!strcmp(line, "list") && !arg) {
        struct emu_domain *d;

        for (d = run->host.domains; d; d = d->next) {
            const uint8_t *u = d->uuid;
            char state[7], max[24];

            domain_state(d, state);
            if (d->max_kib == XENSTATS_KIB_UNLIMITED)
                snprintf(max, sizeof(max), "-");
            else
                snprintf(max, sizeof(max), "%llu", (unsigned long long)d->max_kib);
            reply(fd,
                  "domain %u %s %u %s %u %s %s %llu %llu %s %.3f "
                  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  d->domid, d->spec.name, d->spec.nr_vcpus, emu_workload_name(d->spec.workload), d->spec.nr_offline,
                  d->spec.vcpu_stats ? "yes" : "no", state, (unsigned long long)d->memory_kib,
                  (unsigned long long)d->target_kib, max, (double)emu_domain_cpu_time(d, run->host.last_tick) / 1e9, u[0], u[1], u[2], u[3],
                  u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        }
        return reply(fd, "ok");
    }
    if (!strcmp(line, "pause") || !strcmp(line, "unpause") || !strcmp(line, "shutdown") ||
        !strcmp(line, "mem-set") || is_device_verb(line) || is_lifecycle_verb(line))
        return control_domain(run, fd, line, arg);
    if (!strcmp(line, "restore"))
        return control_restore(run, fd, arg);
    if (!strcmp(line, "saved") && !arg) {
        struct emu_image *image;

        for (image = run->host.saved; image; image = image->next)
            reply(fd, "saved %s %u %zu", image->spec.name, image->from_domid, image->nr_pids);
        return reply(fd, "ok");
    }
    if (!strcmp(line, "devices") && !arg) {
        list_devices(run, fd);
        return reply(fd, "ok");
    }

    if (!strcmp(line, "stats") && !arg) {
        reply(fd, "domain-count %zu", count_domains(run));
        reply(fd, "xenstore-requests %llu", (unsigned long long)xs_wire_requests_handled());
        reply(fd, "pcpus %u", run->host.nr_pcpus);
        reply(fd, "memory-kib %llu", (unsigned long long)run->host.total_memory_kib);
        reply(fd, "free-memory-kib %llu", (unsigned long long)run->host.free_memory_kib);
        reply(fd, "grant-entries %llu", (unsigned long long)emu_hyper_grants_in_use(&run->host));
        reply(fd, "stale-evtchn-bugs %llu", (unsigned long long)emu_hyper_stale_bugs(&run->host, UINT32_MAX));
        for (struct emu_domain *d = run->host.domains; d; d = d->next) {
            uint64_t bugs = emu_hyper_stale_bugs(&run->host, d->domid);

            if (bugs)
                reply(fd, "stale-evtchn-bugs-of %u %llu", d->domid, (unsigned long long)bugs);
        }
        return reply(fd, "ok");
    }
    return reply(fd, "error EINVAL unknown command (create SPEC, destroy DOMID, list, stats, pause DOMAIN, "
                     "unpause DOMAIN, shutdown DOMAIN [REASON], mem-set DOMAIN SIZE, vcpu-set DOMAIN N, "
                     "migrate DOMAIN, reboot DOMAIN, save DOMAIN, restore NAME, saved, devices, "
                     "network-attach DOMAIN [DEVID], network-detach DOMAIN DEVID, block-attach DOMAIN VDEV, "
                     "block-detach DOMAIN VDEV, vif-set DOMAIN DEVID SETTINGS, vbd-set DOMAIN VDEV SETTINGS)");
}

void client_close(struct client *c)
{
    struct client **pp;

    for (pp = &c->run->clients; *pp != c; pp = &(*pp)->next)
        ;
    *pp = c->next;
    emu_loop_remove(c->run->loop, c->fd);
    close(c->fd);
    c->run->nr_clients--;
    free(c);
}

static void client_readable(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct client *c = data;
    ssize_t n = recv(c->fd, c->buf + c->used, sizeof(c->buf) - c->used, MSG_DONTWAIT);
    char *nl;

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        client_close(c);
        return;
    }
    c->used += (size_t)n;
    while ((nl = memchr(c->buf, '\n', c->used))) {
        size_t len = (size_t)(nl - c->buf);

        *nl = '\0';
        handle_command(c->run, c->fd, c->buf);
        memmove(c->buf, nl + 1, c->used - len - 1);
        c->used -= len + 1;
    }
    if (c->used == sizeof(c->buf)) {
        reply(c->fd, "error E2BIG line longer than %d bytes", CONTROL_LINE_MAX);
        client_close(c);
    }
}

static void accept_client(struct emu_loop *loop, int lfd, uint32_t events, void *data)
{
    struct emu_run *run = data;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    struct client *c;

    if (fd < 0)
        return;
    if (run->nr_clients >= CONTROL_CLIENTS_MAX) {
        reply(fd, "error EBUSY too many control clients");
        close(fd);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    c->run = run;
    c->fd = fd;
    if (emu_loop_add(loop, fd, EPOLLIN, client_readable, c) < 0) {
        close(fd);
        free(c);
        return;
    }
    c->next = run->clients;
    run->clients = c;
    run->nr_clients++;
}

int listen_control(struct emu_run *run)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, r;

    if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", run->host.dir, EMU_CONTROL_SOCKET) >=
        (int)sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    unlink(sa.sun_path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return negative_errno();
    /* Only the host's owner (dom0's user) controls the emulator. */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 || listen(fd, 16) < 0) {
        r = negative_errno();
        close(fd);
        return r;
    }
    r = emu_loop_add(run->loop, fd, EPOLLIN, accept_client, run);
    if (r < 0) {
        close(fd);
        return r;
    }
    run->lfd = fd;
    return 0;
}

