/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstats emu: run an emulated Xen host, or control a running one.
 *
 * The running emulator is one event loop (epoll): a timerfd drives the
 * emulated scheduler, a signalfd catches SIGINT/SIGTERM, and a UNIX socket
 * in the run directory takes line commands from `xenstats emu create|
 * destroy|list` (protocol in docs/emulator.md).
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <xenstats/vcpu.h>

#include "emu/emu.h"
#include "emu/hyper/hyper.h"
#include "emu/loop.h"
#include "emu/proto/run_dir.h"
#include "emu/xenstore/xenstore.h"
#include "emu/xenstore/xs_wire.h"
#include "tool.h"
#include "util/util.h"
#include "vcpu_fallback.h"

#define CMD "emu"
#define CONTROL_LINE_MAX 1024
#define CONTROL_CLIENTS_MAX 64
#define DOMAINS_MAX 8192

struct client {
    struct client *next;
    struct emu_run *run;
    int fd;
    size_t used;
    char buf[CONTROL_LINE_MAX];
};

struct emu_run {
    struct emu_host host;
    struct emu_loop *loop;
    int tfd, sfd, lfd;
    unsigned int nr_clients;
    struct client *clients;
    uint64_t stop_at;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: %s emu [run] [OPTIONS]          run an emulated Xen host in the foreground\n"
            "       %s emu create SPEC              create a domain in the running emulator\n"
            "       %s emu destroy DOMID [--linger DURATION]  destroy a domain (lingering as dying)\n"
            "       %s emu list                     list the domains\n"
            "       %s emu pause|unpause DOMAIN     pause or unpause a domain (DOMID or name)\n"
            "       %s emu shutdown DOMAIN [--reason R]  shut a domain down (R: poweroff (default),\n"
            "                                       reboot, suspend, crash, watchdog, soft_reset)\n"
            "       %s emu mem-set DOMAIN SIZE      set the balloon target (as xl mem-set)\n"
            "       %s emu vcpu-set DOMAIN N        vCPUs 0..N-1 online, the rest offline (xl vcpu-set)\n"
            "       %s emu migrate|reboot DOMAIN    the domain carries on as a new domid (prints \"domid N\")\n"
            "       %s emu save DOMAIN              save it (xl save): destroyed, its processes stopped\n"
            "       %s emu restore NAME             restore the saved domain NAME (prints \"domid N\")\n"
            "       %s emu saved                    list the saved domains\n"
            "       %s emu dump DOMID FILE          write a domain's vCPU statistics region to FILE\n"
            "       %s emu network-attach DOMAIN [DEVID]   attach a vif (as xl network-attach)\n"
            "       %s emu network-detach DOMAIN DEVID     detach it\n"
            "       %s emu block-attach DOMAIN VDEV        attach a vbd (VDEV: xvda, xvdb, ...)\n"
            "       %s emu block-detach DOMAIN VDEV|DEVID  detach it\n"
            "       %s emu vif-set DOMAIN DEVID SETTINGS   set a vif's counters\n"
            "       %s emu vbd-set DOMAIN VDEV SETTINGS    set a vbd's counters\n"
            "       %s emu devices                  list the vifs and vbds with their counters\n\n"
            "Options of run:\n"
            "  -d, --dir DIR          run directory (default $XENSTATS_EMU_DIR, else\n"
            "                         $XDG_RUNTIME_DIR/xenstats-emu, else /tmp/xenstats-emu-UID)\n"
            "  -p, --pcpus N          emulated physical CPUs (default 2)\n"
            "  -t, --tick DURATION    scheduler tick (default 10ms)\n"
            "  -D, --domain SPEC      create a domain at start (repeatable)\n"
            "  -c, --config FILE      read settings and domains from FILE\n"
            "      --dom0-vcpus N     vCPUs of Domain-0 (default 2)\n"
            "  -m, --memory SIZE      the host's memory (default 256G)\n"
            "      --dom0-memory SIZE Domain-0's memory (default 1G)\n"
            "      --duration DURATION  exit after this long (default: run until SIGINT/SIGTERM)\n"
            "  -h, --help             show this help\n\n"
            "SPEC is key=value pairs separated by commas: name=NAME (required), vcpus=N (default 1),\n"
            "workload=cpu|io|idle|mixed (default idle), offline=N (last N vCPUs offline),\n"
            "vcpu-stats=yes|no (no: the host lacks the resource, like stock Xen), memory=SIZE\n"
            "(default 128M), maxmem=SIZE (default: memory), shared=SIZE, outstanding=SIZE (default 0),\n"
            "vifs=N (default 0), vbds=N or vbds=VDEV:VDEV... (default none), traffic=yes|no (the\n"
            "devices' counters move with the workload; default yes).\n"
            "SIZE is a number with K, M, G or T (none: M), whole 4 KiB pages.\n"
            "SETTINGS are COUNTER=N or COUNTER=+N (add) and traffic=yes|no, separated by commas;\n"
            "a vif's counters are rx_bytes rx_packets rx_errors rx_dropped tx_bytes tx_packets\n"
            "tx_errors tx_dropped, a vbd's oo_req rd_req wr_req f_req ds_req rd_sect wr_sect.\n"
            "Example: %s emu -p 4 -D name=web,vcpus=4,workload=cpu -D name=db,vcpus=2,workload=io\n",
            PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG, PROG,
            PROG, PROG, PROG);
}

static int control_path(char *buf, size_t len)
{
    char dir[PATH_MAX - 32];
    int r = emu_run_dir(dir, sizeof(dir));

    if (r < 0)
        return r;
    r = snprintf(buf, len, "%s/%s", dir, EMU_CONTROL_SOCKET);
    return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

/* ---- control server -------------------------------------------------- */

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
        c = emu_device_counter_index(dev->kind, tok);
        if (c < 0) {
            unsigned int n;
            const char *const *names = emu_device_counter_names(dev->kind, &n);
            char known[512];
            size_t used = 0;

            /* a list cut short, never a write past its end */
            for (i = 0; i < n && used < sizeof(known); i++)
                used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "", names[i]);
            return reply(fd, "error EINVAL a %s has no counter '%s' (%s, traffic)", kind_name(dev->kind), tok,
                         known);
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

static void client_close(struct client *c)
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

static int listen_control(struct emu_run *run)
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

/* ---- run ------------------------------------------------------------- */

static void on_tick(struct emu_loop *loop, int fd, uint32_t events, void *data)
{
    struct emu_run *run = data;
    uint64_t now = monotonic_ns(), ticks;

    if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN) {
        fail(CMD, "timerfd: %s", strerror(errno));
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

    if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        log_info("caught signal %u, shutting down", si.ssi_signo);
        emu_loop_quit(loop, 0);
    }
}

static int read_config(const char *path, uint64_t *pcpus, uint64_t *tick, uint64_t *memory, char ***specs,
                       size_t *nspecs)
{
    char *text = NULL, *line, *save = NULL;
    unsigned int lineno = 0;
    int r = 0;

    r = read_small_file(path, 1 << 20, &text, NULL);
    if (r < 0)
        return fail(CMD, "cannot read config %s: %s", path, strerror(-r));
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
        if (!strcmp(key, "pcpus")) {
            if (parse_u64(value, EMU_MAX_PCPUS, pcpus) < 0 || !*pcpus)
                r = fail(CMD, "%s:%u: pcpus: expected 1..%d", path, lineno, EMU_MAX_PCPUS);
        } else if (!strcmp(key, "tick")) {
            if (parse_duration_ns(value, tick) < 0 || *tick < 100000)
                r = fail(CMD, "%s:%u: tick: expected a duration of at least 100us", path, lineno);
        } else if (!strcmp(key, "memory")) {
            if (emu_size_parse(value, EMU_MAX_SIZE_KIB, memory) < 0 || !*memory)
                r = fail(CMD, "%s:%u: memory: expected a size such as 64G (at most 1T)", path, lineno);
        } else if (!strcmp(key, "domain")) {
            char **grown = realloc(*specs, (*nspecs + 1) * sizeof(char *));

            if (!grown || !(grown[*nspecs] = strdup(value))) {
                free(grown ? grown : *specs);
                *specs = NULL;
                r = fail(CMD, "out of memory");
            } else {
                *specs = grown;
                (*nspecs)++;
            }
        } else {
            r = fail(CMD, "%s:%u: unknown setting '%s' (pcpus, tick, memory, domain)", path, lineno, key);
        }
        if (r)
            break;
    }
    free(text);
    return r;
}

static int run_emulator(int argc, char **argv)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},        {"pcpus", required_argument, NULL, 'p'},
        {"tick", required_argument, NULL, 't'},       {"domain", required_argument, NULL, 'D'},
        {"config", required_argument, NULL, 'c'},     {"dom0-vcpus", required_argument, NULL, 'z'},
        {"duration", required_argument, NULL, 'u'},   {"help", no_argument, NULL, 'h'},
        {"memory", required_argument, NULL, 'm'},     {"dom0-memory", required_argument, NULL, 'Z'},
        {NULL, 0, NULL, 0},
    };
    uint64_t pcpus = 2, tick = 10000000ULL, dom0_vcpus = 2, duration = 0;
    uint64_t memory = 256ULL << 20, dom0_memory = 1ULL << 20; /* KiB */
    char dir[PATH_MAX - 64], **specs = NULL, err[256];
    const char *config = NULL;
    struct emu_run run = {.tfd = -1, .sfd = -1, .lfd = -1};
    size_t nspecs = 0, i;
    struct emu_domain_spec spec;
    struct itimerspec its;
    sigset_t mask;
    int c, r, status = 1;

    if (emu_run_dir(dir, sizeof(dir)) < 0)
        return fail(CMD, "run directory path too long");
    while ((c = getopt_long(argc, argv, "d:p:t:D:c:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            if (strlen(optarg) >= sizeof(dir))
                return fail(CMD, "--dir: path too long");
            strcpy(dir, optarg);
            break;
        case 'p':
            if (parse_u64(optarg, EMU_MAX_PCPUS, &pcpus) < 0 || !pcpus)
                return fail(CMD, "--pcpus %s: expected 1..%d", optarg, EMU_MAX_PCPUS);
            break;
        case 't':
            if (parse_duration_ns(optarg, &tick) < 0 || tick < 100000)
                return fail(CMD, "--tick %s: expected a duration of at least 100us (e.g. 10ms)", optarg);
            break;
        case 'D': {
            char **grown = realloc(specs, (nspecs + 1) * sizeof(char *));

            if (!grown)
                return fail(CMD, "out of memory");
            specs = grown;
            specs[nspecs++] = optarg;
            break;
        }
        case 'c':
            config = optarg;
            break;
        case 'z':
            if (parse_u64(optarg, EMU_MAX_VCPUS, &dom0_vcpus) < 0 || !dom0_vcpus)
                return fail(CMD, "--dom0-vcpus %s: expected 1..%d", optarg, EMU_MAX_VCPUS);
            break;
        case 'm':
            if (emu_size_parse(optarg, EMU_MAX_SIZE_KIB, &memory) < 0 || !memory)
                return fail(CMD, "--memory %s: expected a size such as 64G (at most 1T)", optarg);
            break;
        case 'Z':
            if (emu_size_parse(optarg, EMU_MAX_SIZE_KIB, &dom0_memory) < 0 || !dom0_memory)
                return fail(CMD, "--dom0-memory %s: expected a size such as 1G", optarg);
            break;
        case 'u':
            if (parse_duration_ns(optarg, &duration) < 0)
                return fail(CMD, "--duration %s: expected a duration such as 30s", optarg);
            break;
        case 'h':
            usage(stdout);
            free(specs);
            return 0;
        default:
            usage(stderr);
            free(specs);
            return 2;
        }
    }
    if (optind < argc) {
        free(specs);
        return fail(CMD, "unexpected argument '%s' (see --help)", argv[optind]);
    }
    /* Command-line domains are not owned; config ones are strdup()ed. */
    {
        size_t ncli = nspecs;
        char **cfg = NULL;
        size_t ncfg = 0;

        if (config && read_config(config, &pcpus, &tick, &memory, &cfg, &ncfg)) {
            for (i = 0; i < ncfg; i++)
                free(cfg[i]);
            free(cfg);
            free(specs);
            return 1;
        }
        /* Validate every spec before touching the run directory. */
        for (i = 0; i < ncli + ncfg; i++) {
            const char *s = i < ncfg ? cfg[i] : specs[i - ncfg];

            if (emu_domain_spec_parse(s, &spec, err, sizeof(err)) < 0) {
                r = fail(CMD, "domain '%s': %s", s, err);
                goto out_specs_cfg;
            }
        }

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        if (dom0_memory > memory) {
            r = fail(CMD, "--dom0-memory exceeds the host's --memory");
            goto out_specs_cfg;
        }
        r = emu_host_init(&run.host, dir, (uint32_t)pcpus, tick, memory);
        if (r == -EADDRINUSE) {
            r = fail(CMD, "an emulator is already running in %s", dir);
            goto out_specs_cfg;
        }
        if (r < 0) {
            r = fail(CMD, "cannot set up %s: %s", dir, strerror(-r));
            goto out_specs_cfg;
        }
        run.loop = emu_loop_new();
        if (!run.loop) {
            r = fail(CMD, "cannot set up the event loop: %s", strerror(errno));
            emu_host_fini(&run.host);
            goto out_specs_cfg;
        }
        run.host.loop = run.loop;
        if ((r = emu_hyper_register(&run.host)) < 0) {
            r = fail(CMD, "cannot set up grants and event channels: %s", strerror(-r));
            goto out;
        }
        if ((r = emu_xenstore_register(&run.host)) < 0) {
            r = fail(CMD, "cannot set up xenstore: %s", strerror(-r));
            goto out;
        }
        memset(&spec, 0, sizeof(spec)); /* no devices: a backend domain has none of its own */
        snprintf(spec.name, sizeof(spec.name), "Domain-0");
        spec.nr_vcpus = (uint32_t)dom0_vcpus;
        spec.nr_offline = 0;
        spec.workload = EMU_WORKLOAD_IDLE;
        spec.vcpu_stats = true;
        spec.memory_kib = spec.maxmem_kib = dom0_memory;
        spec.shared_kib = spec.outstanding_kib = 0;
        r = emu_domain_create(&run.host, &spec);
        for (i = 0; r >= 0 && i < ncli + ncfg; i++) {
            const char *s = i < ncfg ? cfg[i] : specs[i - ncfg];

            emu_domain_spec_parse(s, &spec, err, sizeof(err));
            r = emu_domain_create(&run.host, &spec);
            if (r == -EEXIST)
                fail(CMD, "two domains are named '%s'", spec.name);
        }
        if (r < 0) {
            if (r == -ENOMEM)
                fail(CMD, "cannot create domain '%s': the host's --memory has %lluK free, it wants %lluK", spec.name,
                     (unsigned long long)run.host.free_memory_kib, (unsigned long long)spec.memory_kib);
            else if (r != -EEXIST)
                fail(CMD, "cannot create domain '%s': %s", spec.name, strerror(-r));
            r = 1;
            goto out;
        }

        r = 1;
        run.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        run.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (run.sfd < 0 || run.tfd < 0) {
            fail(CMD, "cannot set up the event loop: %s", strerror(errno));
            goto out;
        }
        its.it_interval.tv_sec = (time_t)(tick / 1000000000ULL);
        its.it_interval.tv_nsec = (long)(tick % 1000000000ULL);
        its.it_value = its.it_interval;
        if (timerfd_settime(run.tfd, 0, &its, NULL) < 0 || listen_control(&run) < 0 ||
            emu_loop_add(run.loop, run.tfd, EPOLLIN, on_tick, &run) < 0 ||
            emu_loop_add(run.loop, run.sfd, EPOLLIN, on_signal, &run) < 0) {
            fail(CMD, "cannot set up the event loop: %s", strerror(errno));
            goto out;
        }
        if (duration)
            run.stop_at = monotonic_ns() + duration;
        r = emu_host_publish(&run.host);
        if (r < 0) {
            r = fail(CMD, "cannot write the pid file: %s", strerror(-r));
            goto out;
        }
        fprintf(stderr, "%s %s: emulated Xen host running in %s (%u pCPUs, tick %.1f ms); Ctrl-C stops it\n",
                PROG, CMD, dir, (unsigned int)pcpus, (double)tick / 1e6);
        fflush(stderr);
        status = emu_loop_run(run.loop);
        if (status < 0)
            status = fail(CMD, "event loop: %s", strerror(-status));
out:
        while (run.clients)
            client_close(run.clients);
        if (run.lfd >= 0) {
            char path[PATH_MAX];

            close(run.lfd);
            if (snprintf(path, sizeof(path), "%s/%s", dir, EMU_CONTROL_SOCKET) < (int)sizeof(path))
                unlink(path);
        }
        if (run.tfd >= 0)
            close(run.tfd);
        if (run.sfd >= 0)
            close(run.sfd);
        emu_host_fini(&run.host);
        emu_loop_free(run.loop);
        r = status;
out_specs_cfg:
        for (i = 0; i < ncfg; i++)
            free(cfg[i]);
        free(cfg);
        free(specs);
        return r;
    }
}

/* ---- client commands ------------------------------------------------- */

static int control_request(const char *request)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char buf[CONTROL_LINE_MAX * 4];
    size_t used = 0;
    int fd, status = 1;

    if (control_path(sa.sun_path, sizeof(sa.sun_path)) < 0)
        return fail(CMD, "run directory path too long");
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(CMD, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;

        close(fd);
        if (e == ENOENT || e == ECONNREFUSED)
            return fail(CMD, "no emulated host is running (start one with `xenstats emu`)");
        return fail(CMD, "cannot reach the emulator at %s: %s", sa.sun_path, strerror(e));
    }
    if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
        close(fd);
        return fail(CMD, "cannot send to the emulator: %s", strerror(errno));
    }
    for (;;) {
        char *nl;
        ssize_t n;

        while ((nl = memchr(buf, '\n', used))) {
            *nl = '\0';
            if (!strncmp(buf, "ok", 2)) {
                if (buf[2] == ' ')
                    printf("%s\n", buf + 3);
                status = 0;
                goto done;
            }
            if (!strncmp(buf, "error ", 6)) {
                char *msg = strchr(buf + 6, ' ');

                fail(CMD, "%s", msg ? msg + 1 : buf + 6);
                goto done;
            }
            if (!strncmp(buf, "domain ", 7))
                printf("%s\n", buf + 7);
            else if (!strncmp(buf, "saved ", 6))
                printf("%s\n", buf + 6);
            else if (strncmp(buf, "ok", 2))
                printf("%s\n", buf);
            memmove(buf, nl + 1, used - (size_t)(nl + 1 - buf));
            used -= (size_t)(nl + 1 - buf);
        }
        if (used == sizeof(buf)) {
            fail(CMD, "reply line too long");
            goto done;
        }
        n = recv(fd, buf + used, sizeof(buf) - used, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fail(CMD, "the emulator closed the connection");
            goto done;
        }
        used += (size_t)n;
    }
done:
    close(fd);
    return status;
}

static int dump_region(const char *domarg, const char *path)
{
    struct xenstats_domain_info info;
    struct xenstats_host *host;
    struct xenstats_vcpu_map *map = NULL;
    void *buf = NULL;
    size_t len;
    int r = 1;

    host = tool_host_open(CMD);
    if (!host)
        return 1;
    if (tool_resolve_domain(CMD, host, domarg, &info))
        goto out;
    map = xenstats_vcpu_map_open(host, info.domid);
    if (!map) {
        fail(CMD, "domain %u (%s): %s", info.domid, info.name, tool_vcpu_open_error(-errno));
        goto out;
    }
    len = xenstats_vcpu_map_dump_size(map);
    buf = malloc(len);
    if (!buf) {
        fail(CMD, "out of memory");
        goto out;
    }
    if (xenstats_vcpu_map_dump(map, buf, len) < 0) {
        fail(CMD, "domain %u: %s", info.domid, xenstats_strerror(-errno));
        goto out;
    }
    r = write_file_atomic(path, buf, len, 0644);
    if (r < 0) {
        r = fail(CMD, "cannot write %s: %s", path, strerror(-r));
        goto out;
    }
    r = 0;
out:
    free(buf);
    xenstats_vcpu_map_close(map);
    xenstats_host_close(host);
    return r;
}

/* "VERB ARG...", refusing arguments the line protocol cannot carry. */
static int control_argv(const char *verb, int argc, char *const *argv)
{
    char request[CONTROL_LINE_MAX];
    size_t used;
    int i, n;

    n = snprintf(request, sizeof(request), "%s", verb);
    used = (size_t)n;
    for (i = 0; i < argc; i++) {
        if (!*argv[i] || strpbrk(argv[i], " \t\n"))
            return fail(CMD, "%s: empty argument, or one with blanks or a newline", verb);
        n = snprintf(request + used, sizeof(request) - used, " %s", argv[i]);
        if (n < 0 || (size_t)n >= sizeof(request) - used)
            return fail(CMD, "%s: argument too long", verb);
        used += (size_t)n;
    }
    return control_request(request);
}

static int control_args(const char *verb, const char *a, const char *b)
{
    char *argv[2] = {(char *)a, (char *)b};

    return control_argv(verb, b ? 2 : 1, argv);
}

int cmd_emu(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "run";
    char request[CONTROL_LINE_MAX];

    if (!strcmp(sub, "destroy") && (argc == 5 || argc == 4)) {
        const char *linger = argc == 5 && !strcmp(argv[3], "--linger")      ? argv[4]
                             : argc == 4 && !strncmp(argv[3], "--linger=", 9) ? argv[3] + 9
                                                                             : NULL;

        if (!linger)
            return fail(CMD, "usage: %s emu destroy DOMID [--linger DURATION]", PROG);
        return control_args(sub, argv[2], linger);
    }
    if (!strcmp(sub, "create") || !strcmp(sub, "destroy")) {
        if (argc != 3)
            return fail(CMD, "usage: %s emu %s %s", PROG, sub,
                        !strcmp(sub, "create") ? "SPEC" : "DOMID [--linger DURATION]");
        if (snprintf(request, sizeof(request), "%s %s", sub, argv[2]) >= (int)sizeof(request) ||
            strchr(argv[2], '\n'))
            return fail(CMD, "argument too long or has a newline");
        return control_request(request);
    }
    if (!strcmp(sub, "pause") || !strcmp(sub, "unpause")) {
        if (argc != 3)
            return fail(CMD, "usage: %s emu %s DOMAIN", PROG, sub);
        return control_args(sub, argv[2], NULL);
    }
    if (!strcmp(sub, "mem-set") || !strcmp(sub, "vcpu-set")) {
        if (argc != 4)
            return fail(CMD, "usage: %s emu %s DOMAIN %s", PROG, sub, !strcmp(sub, "mem-set") ? "SIZE" : "N");
        return control_args(sub, argv[2], argv[3]);
    }
    if (!strcmp(sub, "migrate") || !strcmp(sub, "reboot") || !strcmp(sub, "save") || !strcmp(sub, "restore")) {
        if (argc != 3)
            return fail(CMD, "usage: %s emu %s %s", PROG, sub, !strcmp(sub, "restore") ? "NAME" : "DOMAIN");
        return control_args(sub, argv[2], NULL);
    }
    if (!strcmp(sub, "saved")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu saved", PROG);
        printf("NAME FROM-DOMID PROCESSES\n");
        return control_request("saved");
    }
    if (!strcmp(sub, "shutdown")) {
        const char *reason = NULL;

        if (argc == 5 && !strcmp(argv[3], "--reason"))
            reason = argv[4];
        else if (argc == 4 && !strncmp(argv[3], "--reason=", 9))
            reason = argv[3] + 9;
        else if (argc != 3)
            return fail(CMD, "usage: %s emu shutdown DOMAIN [--reason poweroff|reboot|suspend|crash|watchdog|soft_reset]",
                        PROG);
        return control_args(sub, argv[2], reason);
    }
    if (!strcmp(sub, "network-attach") || !strcmp(sub, "network-detach") || !strcmp(sub, "block-attach") ||
        !strcmp(sub, "block-detach") || !strcmp(sub, "vif-set") || !strcmp(sub, "vbd-set")) {
        static const struct {
            const char *verb, *usage;
            int min, max;
        } forms[] = {
            {"network-attach", "DOMAIN [DEVID]", 1, 2},
            {"network-detach", "DOMAIN DEVID", 2, 2},
            {"block-attach", "DOMAIN VDEV", 2, 2},
            {"block-detach", "DOMAIN VDEV|DEVID", 2, 2},
            {"vif-set", "DOMAIN DEVID COUNTER=VALUE[,...]", 3, 3},
            {"vbd-set", "DOMAIN VDEV|DEVID COUNTER=VALUE[,...]", 3, 3},
        };

        for (size_t i = 0; i < ARRAY_SIZE(forms); i++)
            if (!strcmp(sub, forms[i].verb) && (argc - 2 < forms[i].min || argc - 2 > forms[i].max))
                return fail(CMD, "usage: %s emu %s %s", PROG, sub, forms[i].usage);
        return control_argv(sub, argc - 2, argv + 2);
    }
    if (!strcmp(sub, "devices")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu devices", PROG);
        printf("DOMID KIND DEVID NAME TRAFFIC COUNTERS\n");
        return control_request("devices");
    }
    if (!strcmp(sub, "stats")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu stats", PROG);
        return control_request("stats");
    }
    if (!strcmp(sub, "list")) {
        if (argc != 2)
            return fail(CMD, "usage: %s emu list", PROG);
        printf("DOMID NAME VCPUS WORKLOAD OFFLINE VCPU-STATS STATE MEM-KIB TARGET-KIB MAXMEM-KIB CPU-S UUID\n");
        return control_request("list");
    }
    if (!strcmp(sub, "dump")) {
        if (argc != 4)
            return fail(CMD, "usage: %s emu dump DOMID FILE", PROG);
        return dump_region(argv[2], argv[3]);
    }
    if (!strcmp(sub, "run"))
        return run_emulator(argc - 1, argv + 1);
    return run_emulator(argc, argv);
}
