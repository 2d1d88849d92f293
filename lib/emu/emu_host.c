/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xenstats/abi/vcpu_stats_writer.h>

#include "emu_private.h"
#include "emu/proto/run_dir.h"
#include "util/ticks.h"
#include "util/util.h"

#define MS 1000000ULL
#define WAKE_BOOST (30 * MS)

static const char *const workload_names[] = {
    [EMU_WORKLOAD_IDLE] = "idle",
    [EMU_WORKLOAD_CPU] = "cpu",
    [EMU_WORKLOAD_IO] = "io",
    [EMU_WORKLOAD_MIXED] = "mixed",
};

int emu_workload_parse(const char *s, enum emu_workload *ret)
{
    size_t i;

    for (i = 0; i < ARRAY_SIZE(workload_names); i++) {
        if (!strcmp(s, workload_names[i])) {
            *ret = (enum emu_workload)i;
            return 0;
        }
    }
    /* Accept the long spellings the docs use too. */
    if (!strcmp(s, "cpu-bound")) {
        *ret = EMU_WORKLOAD_CPU;
        return 0;
    }
    if (!strcmp(s, "io-bound")) {
        *ret = EMU_WORKLOAD_IO;
        return 0;
    }
    return -EINVAL;
}

const char *emu_workload_name(enum emu_workload w)
{
    return (size_t)w < ARRAY_SIZE(workload_names) ? workload_names[w] : "?";
}

static bool name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        /* Xen takes any bytes; what our specs and info files cannot carry
         * is refused, and bytes >= 0x80 (UTF-8 or not) are let through so
         * the exporters meet them as on a real host */
        if (c <= ' ' || c == 0x7f || c == '/' || c == '=' || c == ',')
            return false;
    }
    return true;
}

int emu_size_parse(const char *s, uint64_t max_kib, uint64_t *ret_kib)
{
    char digits[24];
    size_t n = strspn(s, "0123456789");
    uint64_t v, unit = 1024;
    int r;

    if (n == 0 || n >= sizeof(digits))
        return n ? -ERANGE : -EINVAL;
    memcpy(digits, s, n);
    digits[n] = '\0';
    if (s[n]) {
        if (s[n + 1] && !((s[n + 1] == 'i' || s[n + 1] == 'I') && (s[n + 2] == 'B' || s[n + 2] == 'b') && !s[n + 3]) &&
            !((s[n + 1] == 'B' || s[n + 1] == 'b') && !s[n + 2]))
            return -EINVAL;
        switch (s[n]) {
        case 'k': case 'K': unit = 1; break;
        case 'm': case 'M': unit = 1024; break;
        case 'g': case 'G': unit = 1024 * 1024; break;
        case 't': case 'T': unit = 1024ULL * 1024 * 1024; break;
        default: return -EINVAL;
        }
    }
    r = parse_u64(digits, max_kib / unit, &v);
    if (r < 0)
        return r;
    v *= unit;
    if (v % 4)
        return -EINVAL;
    *ret_kib = v;
    return 0;
}

static int spec_size(const char *key, const char *value, uint64_t *ret_kib, char *err, size_t errlen)
{
    int r = emu_size_parse(value, EMU_MAX_SIZE_KIB, ret_kib);

    if (r < 0)
        snprintf(err, errlen, "%s=%s: expected a size such as 512M or 2G, whole 4 KiB pages, at most 1T", key,
                 value);
    return r;
}

static const char *const shutdown_names[] = {
    [XENSTATS_SHUTDOWN_POWEROFF] = "poweroff", [XENSTATS_SHUTDOWN_REBOOT] = "reboot",
    [XENSTATS_SHUTDOWN_SUSPEND] = "suspend",   [XENSTATS_SHUTDOWN_CRASH] = "crash",
    [XENSTATS_SHUTDOWN_WATCHDOG] = "watchdog", [XENSTATS_SHUTDOWN_SOFT_RESET] = "soft_reset",
};

int emu_shutdown_reason_parse(const char *s, uint32_t *ret)
{
    size_t i;

    for (i = 0; i < ARRAY_SIZE(shutdown_names); i++) {
        if (!strcmp(s, shutdown_names[i])) {
            *ret = (uint32_t)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *emu_shutdown_reason_name(uint32_t reason)
{
    return reason < ARRAY_SIZE(shutdown_names) ? shutdown_names[reason] : "?";
}

/* vbds=N (xvda, xvdb, ...) or vbds=VDEV:VDEV... */
static int spec_vbds(const char *value, struct emu_domain_spec *spec, char *err, size_t errlen)
{
    const char *p = value;
    uint32_t devids[EMU_MAX_DEVICES], i, j;
    uint64_t n;

    spec->nr_vbds = 0;
    if (parse_u64(value, EMU_MAX_DEVICES, &n) == 0) {
        for (i = 0; i < n; i++)
            emu_vbd_vdev_name(i, spec->vbds[i]);
        spec->nr_vbds = (uint32_t)n;
        return 0;
    }
    while (*p) {
        size_t len = strcspn(p, ":");
        char vdev[sizeof(spec->vbds[0])];

        if (spec->nr_vbds == EMU_MAX_DEVICES) {
            snprintf(err, errlen, "vbds=%s: at most %d disks", value, EMU_MAX_DEVICES);
            return -EINVAL;
        }
        if (len >= sizeof(vdev) || (memcpy(vdev, p, len), vdev[len] = '\0',
                                    emu_vbd_vdev_parse(vdev, &devids[spec->nr_vbds]) < 0)) {
            snprintf(err, errlen, "vbds=%s: expected a number of disks or vdevs such as xvda:xvdb", value);
            return -EINVAL;
        }
        for (j = 0; j < spec->nr_vbds; j++) {
            if (devids[j] == devids[spec->nr_vbds]) {
                snprintf(err, errlen, "vbds=%s: %s twice", value, vdev);
                return -EINVAL;
            }
        }
        strcpy(spec->vbds[spec->nr_vbds++], vdev);
        p += len;
        if (*p == ':' && !*++p) {
            snprintf(err, errlen, "vbds=%s: ends with ':'", value);
            return -EINVAL;
        }
    }
    return 0;
}

int emu_domain_spec_parse(const char *text, struct emu_domain_spec *ret_spec, char *err, size_t errlen)
{
    struct emu_domain_spec spec = {
        .nr_vcpus = 1,
        .workload = EMU_WORKLOAD_IDLE,
        .vcpu_stats = true,
        .memory_kib = EMU_DEFAULT_MEMORY_KIB,
        .traffic = true,
    };
    char buf[1024], *save = NULL, *tok;
    bool have_name = false, have_maxmem = false;

    if (strlen(text) >= sizeof(buf)) {
        snprintf(err, errlen, "domain spec too long");
        return -EINVAL;
    }
    strcpy(buf, text);
    for (tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
        char *value = strchr(tok, '=');
        uint64_t v;

        if (!value) {
            snprintf(err, errlen, "'%s' is not key=value", tok);
            return -EINVAL;
        }
        *value++ = '\0';
        if (!strcmp(tok, "name")) {
            if (strlen(value) >= sizeof(spec.name) || !name_ok(value)) {
                snprintf(err, errlen, "bad domain name '%s' (1-63 bytes, no blanks, control characters, '/', '=' or ',')",
                         value);
                return -EINVAL;
            }
            strcpy(spec.name, value);
            have_name = true;
        } else if (!strcmp(tok, "vcpus")) {
            if (parse_u64(value, EMU_MAX_VCPUS, &v) < 0 || v == 0) {
                snprintf(err, errlen, "vcpus=%s: expected 1..%d", value, EMU_MAX_VCPUS);
                return -EINVAL;
            }
            spec.nr_vcpus = (uint32_t)v;
        } else if (!strcmp(tok, "offline")) {
            if (parse_u64(value, EMU_MAX_VCPUS, &v) < 0) {
                snprintf(err, errlen, "offline=%s: expected a number of vCPUs", value);
                return -EINVAL;
            }
            spec.nr_offline = (uint32_t)v;
        } else if (!strcmp(tok, "workload")) {
            if (emu_workload_parse(value, &spec.workload) < 0) {
                snprintf(err, errlen, "workload=%s: expected cpu, io, idle or mixed", value);
                return -EINVAL;
            }
        } else if (!strcmp(tok, "vcpu-stats")) {
            if (!strcmp(value, "yes"))
                spec.vcpu_stats = true;
            else if (!strcmp(value, "no"))
                spec.vcpu_stats = false;
            else {
                snprintf(err, errlen, "vcpu-stats=%s: expected yes or no", value);
                return -EINVAL;
            }
        } else if (!strcmp(tok, "memory")) {
            if (spec_size(tok, value, &spec.memory_kib, err, errlen) < 0)
                return -EINVAL;
        } else if (!strcmp(tok, "maxmem")) {
            if (spec_size(tok, value, &spec.maxmem_kib, err, errlen) < 0)
                return -EINVAL;
            have_maxmem = true;
        } else if (!strcmp(tok, "shared")) {
            if (spec_size(tok, value, &spec.shared_kib, err, errlen) < 0)
                return -EINVAL;
        } else if (!strcmp(tok, "outstanding")) {
            if (spec_size(tok, value, &spec.outstanding_kib, err, errlen) < 0)
                return -EINVAL;
        } else if (!strcmp(tok, "vifs")) {
            if (parse_u64(value, EMU_MAX_DEVICES, &v) < 0) {
                snprintf(err, errlen, "vifs=%s: expected 0..%d", value, EMU_MAX_DEVICES);
                return -EINVAL;
            }
            spec.nr_vifs = (uint32_t)v;
        } else if (!strcmp(tok, "vbds")) {
            if (spec_vbds(value, &spec, err, errlen) < 0)
                return -EINVAL;
        } else if (!strcmp(tok, "traffic")) {
            if (!strcmp(value, "yes"))
                spec.traffic = true;
            else if (!strcmp(value, "no"))
                spec.traffic = false;
            else {
                snprintf(err, errlen, "traffic=%s: expected yes or no", value);
                return -EINVAL;
            }
        } else {
            snprintf(err, errlen,
                     "unknown key '%s' (name, vcpus, workload, offline, vcpu-stats, memory, maxmem, shared, "
                     "outstanding, vifs, vbds, traffic)",
                     tok);
            return -EINVAL;
        }
    }
    if (!have_name) {
        snprintf(err, errlen, "a domain needs name=");
        return -EINVAL;
    }
    if (spec.nr_offline > spec.nr_vcpus) {
        snprintf(err, errlen, "offline=%u exceeds vcpus=%u", spec.nr_offline, spec.nr_vcpus);
        return -EINVAL;
    }
    if (spec.memory_kib == 0) {
        snprintf(err, errlen, "memory=0: a domain needs some memory");
        return -EINVAL;
    }
    if (!have_maxmem)
        spec.maxmem_kib = spec.memory_kib;
    if (spec.maxmem_kib < spec.memory_kib) {
        snprintf(err, errlen, "maxmem=%lluK is below memory=%lluK", (unsigned long long)spec.maxmem_kib,
                 (unsigned long long)spec.memory_kib);
        return -EINVAL;
    }
    *ret_spec = spec;
    return 0;
}

int emu_host_path(const struct emu_host *host, char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n, m;

    n = snprintf(buf, len, "%s/", host->dir);
    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    va_start(ap, fmt);
    m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)m >= len - (size_t)n)
        return -ENAMETOOLONG;
    return 0;
}

/* Remove a directory with plain files in it (our domain directories). */
static void remove_flat_dir(const char *path)
{
    char file[PATH_MAX];
    struct dirent *de;
    DIR *d = opendir(path);

    if (d) {
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            if (snprintf(file, sizeof(file), "%s/%s", path, de->d_name) < (int)sizeof(file))
                unlink(file);
        }
        closedir(d);
    }
    rmdir(path);
}

static void clear_domains_dir(const struct emu_host *host)
{
    char dir[PATH_MAX], sub[PATH_MAX];
    struct dirent *de;
    DIR *d;

    if (emu_host_path(host, dir, sizeof(dir), "%s", EMU_DOMAINS_DIR) < 0)
        return;
    d = opendir(dir);
    if (!d)
        return;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) < (int)sizeof(sub))
            remove_flat_dir(sub);
    }
    closedir(d);
}

static uint32_t cache_line_size(void)
{
    long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

    if (l <= 0 || l > 4096)
        l = XEN_VCPU_STATS_ALIGN;
    return (uint32_t)XEN_VCPU_STATS_ROUNDUP((uint32_t)l, XEN_VCPU_STATS_ALIGN);
}

/*
 * The rate of the time base's counter: the architecture's where it states
 * one (arm64), else measured against CLOCK_MONOTONIC over 20 ms (x86: Xen
 * publishes its calibrated TSC rate the same way).  A few parts in 10^5,
 * on intervals between a record's update and a read.
 */
static uint64_t tick_rate(void)
{
    uint64_t t0, k0, t1, k1;

    if (TICKS_SOURCE == XEN_VCPU_STATS_TICK_NONE)
        return 0;
    if (ticks_arch_hz())
        return ticks_arch_hz();
    t0 = monotonic_ns();
    k0 = ticks_read();
    nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    t1 = monotonic_ns();
    k1 = ticks_read();
    if (t1 <= t0 || k1 <= k0)
        return 0;
    return (uint64_t)((unsigned __int128)(k1 - k0) * 1000000000u / (t1 - t0));
}

/*
 * The counter at `now` (CLOCK_MONOTONIC), for stamping a record at the
 * same instant as its update_time: a fresh pair of readings, so only the
 * short way back from it to now is scaled.
 */
static uint64_t ticks_at(uint64_t hz, uint64_t now)
{
    uint64_t k = ticks_read(), t = monotonic_ns();

    if (t >= now)
        return k - (uint64_t)((unsigned __int128)(t - now) * hz / 1000000000u);
    return k + (uint64_t)((unsigned __int128)(now - t) * hz / 1000000000u);
}

/* What the emulated pCPUs claim to run at (xl info's cpu_mhz). */
#define EMU_CPU_KHZ 2400000u

_Static_assert(EMU_MAX_PCPUS <= EMU_TABLE_PCPUS, "every pCPU has its idle time in the table");
_Static_assert(XENSTATS_DOMID_MAX < EMU_TABLE_DOMAINS, "every domid has a slot");

static int create_table(struct emu_host *host)
{
    struct emu_table_host *h;
    char path[PATH_MAX];
    void *mem;
    int fd, r;

    r = emu_host_path(host, path, sizeof(path), "%s", EMU_TABLE_FILE);
    if (r < 0)
        return r;
    unlink(path); /* readers of an emulator that died keep their old one */
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0)
        return negative_errno();
    if (ftruncate(fd, (off_t)EMU_TABLE_BYTES) < 0) {
        r = negative_errno();
        close(fd);
        return r;
    }
    mem = mmap(NULL, EMU_TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    r = mem == MAP_FAILED ? negative_errno() : 0;
    close(fd);
    if (r < 0)
        return r;
    host->table = mem;
    h = emu_table_host(mem);
    emu_table_write_begin(&h->seq);
    EMU_TABLE_STORE(h->nr_pcpus, host->nr_pcpus);
    EMU_TABLE_STORE(h->cpu_khz, EMU_CPU_KHZ);
    EMU_TABLE_STORE(h->total_memory_kib, host->total_memory_kib);
    EMU_TABLE_STORE(h->free_memory_kib, host->free_memory_kib);
    emu_table_write_end(&h->seq);
    __atomic_store_n(&h->magic, EMU_TABLE_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

int emu_host_init(struct emu_host *host, const char *dir, uint32_t nr_pcpus, uint64_t tick_ns,
                  uint64_t total_memory_kib)
{
    char path[PATH_MAX];
    int r;

    memset(host, 0, sizeof(*host));
    if (strlen(dir) >= sizeof(host->dir))
        return -ENAMETOOLONG;
    strcpy(host->dir, dir);
    host->nr_pcpus = nr_pcpus;
    host->tick_ns = tick_ns;
    host->cache_line = cache_line_size();
    host->tick_hz = tick_rate();
    host->last_tick = monotonic_ns();
    host->total_memory_kib = total_memory_kib;
    host->free_memory_kib = total_memory_kib;

    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return negative_errno();
    if (emu_is_running(dir))
        return -EADDRINUSE;
    r = emu_host_path(host, path, sizeof(path), "%s", EMU_DOMAINS_DIR);
    if (r < 0)
        return r;
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return negative_errno();
    clear_domains_dir(host); /* left by an emulator that died */
    r = emu_host_path(host, path, sizeof(path), "%s", EMU_MOVED_DIR);
    if (r < 0)
        return r;
    remove_flat_dir(path); /* forwarding records name domids of the old host */
    if (mkdir(path, 0755) < 0)
        return negative_errno();
    r = emu_devices_init(host);
    return r < 0 ? r : create_table(host);
}

int emu_host_publish(struct emu_host *host)
{
    char path[PATH_MAX], pid[32];
    int n, r;

    r = emu_host_path(host, path, sizeof(path), "%s", EMU_PID_FILE);
    if (r < 0)
        return r;
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    return write_file_atomic(path, pid, (size_t)n, 0644);
}

static void domain_free(struct emu_domain *d)
{
    if (d->region)
        munmap(d->region, d->region_len);
    free(d->vcpus);
    free(d->devices);
    free(d);
}

void emu_host_fini(struct emu_host *host)
{
    char path[PATH_MAX];

    while (host->saved) {
        struct emu_image *image = host->saved;

        host->saved = image->next;
        emu_image_drop(host, image);
    }
    while (host->domains)
        emu_domain_destroy(host, host->domains->domid);
    emu_devices_fini(host);
    if (emu_host_path(host, path, sizeof(path), "%s", EMU_MOVED_DIR) == 0)
        remove_flat_dir(path);
    if (emu_host_path(host, path, sizeof(path), "%s", EMU_PID_FILE) == 0)
        unlink(path);
    if (emu_host_path(host, path, sizeof(path), "%s", EMU_DOMAINS_DIR) == 0)
        rmdir(path);
    if (host->table) {
        munmap(host->table, EMU_TABLE_BYTES);
        host->table = NULL;
        if (emu_host_path(host, path, sizeof(path), "%s", EMU_TABLE_FILE) == 0)
            unlink(path);
    }
    free(host->want);
    host->want = NULL;
}

/* ---- what the table shows (Xen's getdomaininfo) -------------------------- */

static bool domain_runs(const struct emu_domain *d)
{
    return d->pause_count == 0 && !d->shut_down && !d->dying;
}

uint32_t emu_domain_flags(const struct emu_domain *d)
{
    uint32_t flags = XENSTATS_DOMAIN_BLOCKED, i;

    /* As getdomaininfo: blocked unless an online vCPU is not blocked. */
    for (i = 0; i < d->spec.nr_vcpus; i++) {
        const struct emu_vcpu *v = &d->vcpus[i];

        if (v->offline)
            continue;
        if (v->state != XEN_VCPU_STATS_RUNSTATE_BLOCKED)
            flags &= ~XENSTATS_DOMAIN_BLOCKED;
        if (v->state == XEN_VCPU_STATS_RUNSTATE_RUNNING)
            flags |= XENSTATS_DOMAIN_RUNNING;
    }
    if (d->pause_count)
        flags |= XENSTATS_DOMAIN_PAUSED;
    if (d->shut_down) {
        flags |= XENSTATS_DOMAIN_SHUTDOWN;
        if (d->shutdown_reason == XENSTATS_SHUTDOWN_CRASH)
            flags |= XENSTATS_DOMAIN_CRASHED;
    }
    if (d->dying)
        flags |= XENSTATS_DOMAIN_DYING;
    return flags;
}

uint64_t emu_domain_cpu_time(const struct emu_domain *d, uint64_t now)
{
    uint64_t t = d->cpu_time_done;
    uint32_t i;

    for (i = 0; i < d->spec.nr_vcpus; i++)
        if (d->vcpus[i].state == XEN_VCPU_STATS_RUNSTATE_RUNNING && now > d->vcpus[i].update_time)
            t += now - d->vcpus[i].update_time;
    return t;
}

/* The region's domain section, when a figure in it changed (Xen: under
 * the domain's page_alloc_lock, where they change). */
static void write_domain_stats(struct emu_domain *d)
{
    uint64_t pages[XEN_VCPU_STATS_DOMAIN_NR_COUNTERS];
    unsigned int i;

    if (!d->region)
        return;
    pages[XEN_VCPU_STATS_DOMAIN_TOT_PAGES] = d->memory_kib / 4;
    /* Xen's "no limit" for dom0 is max_pages = ~0U */
    pages[XEN_VCPU_STATS_DOMAIN_MAX_PAGES] = d->max_kib == XENSTATS_KIB_UNLIMITED ? UINT32_MAX : d->max_kib / 4;
    pages[XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES] = d->spec.outstanding_kib / 4;
    if (!memcmp(pages, d->stats_pages, sizeof(pages)) && d->domain_stats.seq)
        return;
    xen_vcpu_stats_begin(&d->domain_stats);
    for (i = 0; i < XEN_VCPU_STATS_DOMAIN_NR_COUNTERS; i++)
        xen_vcpu_stats_set(&d->domain_stats, i, pages[i]);
    xen_vcpu_stats_end(&d->domain_stats);
    memcpy(d->stats_pages, pages, sizeof(pages));
}

static void publish_domain(struct emu_host *host, struct emu_domain *d, uint64_t now)
{
    struct emu_table_domain *slot;

    if (!host->table)
        return;
    slot = emu_table_slot(host->table, d->domid);
    emu_table_write_begin(&slot->seq);
    EMU_TABLE_STORE(slot->present, 1u);
    EMU_TABLE_STORE(slot->flags, emu_domain_flags(d));
    EMU_TABLE_STORE(slot->shutdown_reason, d->shut_down ? d->shutdown_reason : 0u);
    EMU_TABLE_STORE(slot->nr_online_vcpus, d->spec.nr_vcpus - d->spec.nr_offline);
    EMU_TABLE_STORE(slot->cpu_time_ns, emu_domain_cpu_time(d, now));
    EMU_TABLE_STORE(slot->memory_kib, d->memory_kib);
    EMU_TABLE_STORE(slot->max_memory_kib, d->max_kib);
    EMU_TABLE_STORE(slot->shared_kib, d->spec.shared_kib);
    EMU_TABLE_STORE(slot->outstanding_kib, d->spec.outstanding_kib);
    emu_table_write_end(&slot->seq);
    write_domain_stats(d);
}

static void unpublish_domain(struct emu_host *host, uint32_t domid)
{
    struct emu_table_domain *slot;

    if (!host->table)
        return;
    slot = emu_table_slot(host->table, domid);
    emu_table_write_begin(&slot->seq);
    EMU_TABLE_STORE(slot->present, 0u);
    emu_table_write_end(&slot->seq);
}

static void publish_host(struct emu_host *host)
{
    struct emu_table_host *h;

    if (!host->table)
        return;
    h = emu_table_host(host->table);
    emu_table_write_begin(&h->seq);
    EMU_TABLE_STORE(h->free_memory_kib, host->free_memory_kib);
    emu_table_write_end(&h->seq);
}

struct emu_domain *emu_domain_find(struct emu_host *host, uint32_t domid)
{
    struct emu_domain *d;

    for (d = host->domains; d; d = d->next)
        if (d->domid == domid)
            return d;
    return NULL;
}

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64*: quality is irrelevant, determinism per vCPU is handy. */
    uint64_t x = *s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t rng_between(uint64_t *s, uint64_t lo, uint64_t hi)
{
    return lo + rng_next(s) % (hi - lo + 1);
}

/* The workload decides how much CPU a burst wants and how long it sleeps. */
static enum emu_workload effective_workload(const struct emu_domain *d, uint64_t now)
{
    if (d->spec.workload != EMU_WORKLOAD_MIXED)
        return d->spec.workload;
    return ((now - d->created) / (3000 * MS)) % 2 ? EMU_WORKLOAD_IO : EMU_WORKLOAD_CPU;
}

static void new_burst(const struct emu_domain *d, struct emu_vcpu *v, uint64_t now)
{
    switch (effective_workload(d, now)) {
    case EMU_WORKLOAD_CPU:
        v->burst_left = INT64_MAX;
        break;
    case EMU_WORKLOAD_IO:
        v->burst_left = (int64_t)rng_between(&v->rng, 2 * MS, 20 * MS);
        break;
    case EMU_WORKLOAD_IDLE:
    default:
        v->burst_left = (int64_t)rng_between(&v->rng, 1 * MS, 3 * MS);
        break;
    }
}

static uint64_t sleep_length(const struct emu_domain *d, struct emu_vcpu *v, uint64_t now)
{
    switch (effective_workload(d, now)) {
    case EMU_WORKLOAD_IO:
        return rng_between(&v->rng, 10 * MS, 40 * MS);
    case EMU_WORKLOAD_CPU:
        return 0;
    case EMU_WORKLOAD_IDLE:
    default:
        return rng_between(&v->rng, 200 * MS, 1500 * MS);
    }
}

/* The one place records are written: a runstate change, as in Xen. */
static void write_record(const struct emu_domain *d, struct emu_vcpu *v)
{
    unsigned int i;

    xen_vcpu_stats_begin(&v->stats);
    for (i = 0; i < 4; i++)
        xen_vcpu_stats_set(&v->stats, XEN_VCPU_STATS_RUNNING_TIME + i, v->times[i]);
    xen_vcpu_stats_set(&v->stats, XEN_VCPU_STATS_STATE_CHANGES, v->changes);
    xen_vcpu_stats_set(&v->stats, XEN_VCPU_STATS_STATE, v->state);
    xen_vcpu_stats_set(&v->stats, XEN_VCPU_STATS_UPDATE_TIME, v->update_time);
    if (d->tick_hz)
        xen_vcpu_stats_set(&v->stats, XEN_VCPU_STATS_UPDATE_TICKS, ticks_at(d->tick_hz, v->update_time));
    xen_vcpu_stats_end(&v->stats);
}

static void vcpu_change_state(struct emu_domain *d, struct emu_vcpu *v, uint8_t state, uint64_t now)
{
    if (state == v->state)
        return;
    if (v->state == XEN_VCPU_STATS_RUNSTATE_RUNNING)
        d->cpu_time_done += now - v->update_time;
    /* both below 2^63 (292 years): no wrap; the writer saturates */
    v->times[v->state] += now - v->update_time;
    v->changes++;
    v->state = state;
    v->update_time = now;
    if (v->has_stats)
        write_record(d, v);
}

/* A random (version 4) UUID, as libxl makes one for each new domain. */
static void make_uuid(uint8_t uuid[16])
{
    static uint64_t fallback = 0x9E3779B97F4A7C15ULL;
    uint64_t a, b;

    if (getrandom(uuid, 16, 0) != 16) {
        fallback ^= monotonic_ns();
        a = rng_next(&fallback);
        b = rng_next(&fallback);
        memcpy(uuid, &a, 8);
        memcpy(uuid + 8, &b, 8);
    }
    uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
    uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
}

/* New backends for the same devices: same kinds, devids and vdevs, counters from zero. */
static int copy_devices(struct emu_domain *d, const struct emu_device *devices, uint32_t count)
{
    uint32_t i;

    if (!count)
        return 0;
    d->devices = calloc(count, sizeof(*d->devices));
    if (!d->devices)
        return -ENOMEM;
    for (i = 0; i < count; i++) {
        d->devices[i].kind = devices[i].kind;
        d->devices[i].devid = devices[i].devid;
        memcpy(d->devices[i].vdev, devices[i].vdev, sizeof(d->devices[i].vdev));
        d->devices[i].traffic = devices[i].traffic;
    }
    d->nr_devices = count;
    return 0;
}

static int create_region(struct emu_host *host, struct emu_domain *d, const char *dir)
{
    uint64_t need = xen_vcpu_stats_region_bytes(d->spec.nr_vcpus, host->cache_line);
    long page = sysconf(_SC_PAGESIZE);
    char path[PATH_MAX];
    size_t len;
    void *mem;
    int fd, r;
    uint32_t i;

    if (!need)
        return -E2BIG;
    len = (size_t)XEN_VCPU_STATS_ROUNDUP(need, (uint64_t)page); /* whole frames, as Xen */
    if (snprintf(path, sizeof(path), "%s/%s", dir, EMU_VCPU_STATS_FILE) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    /* dom0 (this host's user) reads it; guests have no business here. */
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0)
        return negative_errno();
    if (ftruncate(fd, (off_t)len) < 0) {
        r = negative_errno();
        close(fd);
        return r;
    }
    mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    r = mem == MAP_FAILED ? negative_errno() : 0;
    close(fd);
    if (r < 0)
        return r;
    /* the reader is dom0's user space: stamps in its counter */
    xen_vcpu_stats_init(&d->stats, mem, len, d->spec.nr_vcpus, host->cache_line,
                        &(struct xen_vcpu_stats_time_base){
                            .arch = TICKS_ARCH,
                            .tick_source = host->tick_hz ? TICKS_SOURCE : XEN_VCPU_STATS_TICK_NONE,
                            .tick_domid = 0,
                            .tick_hz = host->tick_hz,
                        });
    xen_vcpu_stats_domain_block(&d->stats, &d->domain_stats);
    d->tick_hz = host->tick_hz;
    /* Records start at the vCPU's creation, as Xen's at vcpu_create(). */
    for (i = 0; i < d->spec.nr_vcpus; i++) {
        xen_vcpu_stats_vcpu_block(&d->stats, i, &d->vcpus[i].stats);
        d->vcpus[i].has_stats = true;
        write_record(d, &d->vcpus[i]);
    }
    d->region = mem;
    d->region_len = len;
    return 0;
}

/* A new domain: a fresh UUID and the spec's devices, or those of image. */
static int domain_create(struct emu_host *host, const struct emu_domain_spec *spec, const struct emu_image *image)
{
    char tmpdir[PATH_MAX], finaldir[PATH_MAX], info_text[EMU_INFO_MAX], info_path[PATH_MAX];
    struct xenstats_domain_info info = {0};
    struct emu_domain *d, **pp;
    uint32_t i;
    int r, n;

    if (host->next_domid > XENSTATS_DOMID_MAX)
        return -ENOSPC;
    /* a dying domain's name is free: its xenstore nodes are gone */
    for (d = host->domains; d; d = d->next)
        if (!d->dying && !strcmp(d->spec.name, spec->name))
            return -EEXIST;
    if (spec->memory_kib > host->free_memory_kib)
        return -ENOMEM;
    d = calloc(1, sizeof(*d));
    if (!d)
        return -ENOMEM;
    d->vcpus = calloc(spec->nr_vcpus, sizeof(*d->vcpus));
    if (!d->vcpus) {
        free(d);
        return -ENOMEM;
    }
    d->domid = host->next_domid;
    d->spec = *spec;
    d->created = monotonic_ns();
    d->memory_kib = d->target_kib = spec->memory_kib;
    d->static_max_kib = spec->maxmem_kib;
    d->max_kib = d->domid == 0 ? XENSTATS_KIB_UNLIMITED : spec->maxmem_kib + EMU_MAXMEM_SLACK_KIB;
    if (image)
        memcpy(d->uuid, image->uuid, sizeof(d->uuid));
    else if (d->domid != 0)
        make_uuid(d->uuid);
    d->io_rng = 0xD1B54A32D192ED03ULL ^ d->domid;
    r = image ? copy_devices(d, image->devices, image->nr_devices) : emu_devices_from_spec(d);
    if (r < 0)
        goto fail;
    for (i = 0; i < spec->nr_vcpus; i++) {
        struct emu_vcpu *v = &d->vcpus[i];

        v->domain = d;
        v->id = i;
        v->offline = i >= spec->nr_vcpus - spec->nr_offline;
        v->state = v->offline ? XEN_VCPU_STATS_RUNSTATE_OFFLINE : XEN_VCPU_STATS_RUNSTATE_BLOCKED;
        v->update_time = d->created;
        v->rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)d->domid << 32 | i);
        v->wake_at = d->created; /* every online vCPU boots */
    }

    r = emu_host_path(host, tmpdir, sizeof(tmpdir), "%s/.new-%u", EMU_DOMAINS_DIR, d->domid);
    if (r == 0)
        r = emu_host_path(host, finaldir, sizeof(finaldir), "%s/%u", EMU_DOMAINS_DIR, d->domid);
    if (r < 0)
        goto fail;
    remove_flat_dir(tmpdir);
    if (mkdir(tmpdir, 0755) < 0) {
        r = negative_errno();
        goto fail;
    }
    if (spec->vcpu_stats) {
        r = create_region(host, d, tmpdir);
        if (r < 0)
            goto fail_dir;
    }
    info.domid = d->domid;
    info.nr_vcpus = spec->nr_vcpus;
    strcpy(info.name, spec->name);
    memcpy(info.uuid, d->uuid, sizeof(info.uuid));
    n = emu_info_format(&info, info_text, sizeof(info_text));
    if (n < 0 || snprintf(info_path, sizeof(info_path), "%s/%s", tmpdir, EMU_INFO_FILE) >= (int)sizeof(info_path)) {
        r = -ENAMETOOLONG;
        goto fail_dir;
    }
    r = write_file_atomic(info_path, info_text, (size_t)n, 0644);
    if (r < 0)
        goto fail_dir;
    /* The slot first: a reader that sees the directory finds it filled. */
    publish_domain(host, d, d->created);
    if (rename(tmpdir, finaldir) < 0) {
        r = negative_errno();
        unpublish_domain(host, d->domid);
        goto fail_dir;
    }
    host->free_memory_kib -= d->memory_kib;
    publish_host(host);

    for (pp = &host->domains; *pp && (*pp)->domid < d->domid; pp = &(*pp)->next)
        ;
    d->next = *pp;
    *pp = d;
    host->next_domid++;
    for (i = 0; i < host->nr_modules; i++) {
        const struct emu_module *m = &host->modules[i];

        r = m->created ? m->created(host, d, m->data) : 0;
        if (r < 0) {
            log_error("domain %u: %s module failed: %s", d->domid, m->name, strerror(-r));
            host->nr_modules_done = i;
            emu_domain_destroy(host, d->domid);
            host->nr_modules_done = host->nr_modules;
            return r;
        }
    }
    r = emu_devices_publish(host, d);
    if (r < 0) {
        log_error("domain %u: cannot show its devices: %s", d->domid, strerror(-r));
        emu_domain_destroy(host, d->domid);
        return r;
    }
    log_info("created domain %u '%s' (%u vCPUs, %s%s)", d->domid, spec->name, spec->nr_vcpus,
             emu_workload_name(spec->workload), spec->vcpu_stats ? "" : ", no vCPU stats resource");
    return (int)d->domid;

fail_dir:
    remove_flat_dir(tmpdir);
fail:
    domain_free(d);
    return r;
}

int emu_domain_create(struct emu_host *host, const struct emu_domain_spec *spec)
{
    return domain_create(host, spec, NULL);
}

static void freeze_paused(struct emu_host *host, struct emu_domain *d);
static void thaw_paused(struct emu_domain *d, bool run);

/* What goes when a domain is destroyed, dying or not: devices, then the modules' parts. */
static void release(struct emu_host *host, struct emu_domain *d)
{
    unsigned int i;

    if (d->released)
        return;
    d->released = true;
    /* the backends go before the toolstack's nodes, as libxl tears them down */
    emu_devices_unpublish(host, d);
    for (i = host->nr_modules_done; i-- > 0;) {
        const struct emu_module *m = &host->modules[i];

        if (m->destroyed)
            m->destroyed(host, d, m->data);
    }
}

int emu_domain_destroy(struct emu_host *host, uint32_t domid)
{
    char live[PATH_MAX], dead[PATH_MAX];
    struct emu_domain **pp, *d;

    for (pp = &host->domains; *pp && (*pp)->domid != domid; pp = &(*pp)->next)
        ;
    d = *pp;
    if (!d)
        return -ESRCH;
    *pp = d->next;
    thaw_paused(d, true);
    release(host, d);
    if (emu_host_path(host, live, sizeof(live), "%s/%u", EMU_DOMAINS_DIR, domid) == 0 &&
        emu_host_path(host, dead, sizeof(dead), "%s/.dead-%u", EMU_DOMAINS_DIR, domid) == 0) {
        /* Readers' mappings outlive the files, as foreign mappings keep
         * their page references on Xen. */
        if (rename(live, dead) == 0)
            remove_flat_dir(dead);
        else
            remove_flat_dir(live);
    }
    unpublish_domain(host, domid);
    host->free_memory_kib += d->memory_kib;
    publish_host(host);
    log_info("destroyed domain %u '%s'", domid, d->spec.name);
    domain_free(d);
    return 0;
}

int emu_host_add_module(struct emu_host *host, const struct emu_module *module)
{
    if (host->nr_modules == EMU_MAX_MODULES)
        return -ENOSPC;
    host->modules[host->nr_modules++] = *module;
    host->nr_modules_done = host->nr_modules;
    return 0;
}

static int compare_vruntime(const void *a, const void *b)
{
    const struct emu_vcpu *x = *(struct emu_vcpu *const *)a, *y = *(struct emu_vcpu *const *)b;

    if (x->vruntime != y->vruntime)
        return x->vruntime < y->vruntime ? -1 : 1;
    return x < y ? -1 : x > y;
}

/*
 * Put the k vCPUs of least vruntime (compare_vruntime's order) first in
 * want[0..n), in that order; the rest follow in no order.  Only k of them
 * run: at 4000 domains of 4 vCPUs, sorting all 16,000 every tick was a
 * quarter of the emulator's time.  Quickselect, then a sort of the k.
 */
static void select_least(struct emu_vcpu **want, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the k-th smallest lies in want[lo..hi) */

    if (k >= n) {
        qsort(want, n, sizeof(*want), compare_vruntime);
        return;
    }
    while (hi - lo > 1) {
        struct emu_vcpu *pivot = want[lo + (hi - lo) / 2], *t;
        size_t i = lo, p = lo, gt = hi;

        /* three-way: [lo, i) before the pivot, [i, gt) it, [gt, hi) after */
        while (p < gt) {
            int c = compare_vruntime(&want[p], &pivot);

            if (c < 0) {
                t = want[i], want[i] = want[p], want[p] = t;
                i++, p++;
            } else if (c > 0) {
                gt--;
                t = want[gt], want[gt] = want[p], want[p] = t;
            } else {
                p++;
            }
        }
        if (k < i)
            hi = i;
        else if (k >= gt)
            lo = gt;
        else
            break; /* want[k] is in place: [0, k) holds the least */
    }
    qsort(want, k, sizeof(*want), compare_vruntime);
}

/* A paused or shut-down domain: its vCPUs leave the pCPUs at once. */
static void stop_vcpus(struct emu_domain *d, uint64_t now)
{
    uint32_t i;

    for (i = 0; i < d->spec.nr_vcpus; i++) {
        struct emu_vcpu *v = &d->vcpus[i];

        if (v->offline)
            continue;
        /* As Xen's schedule(): not runnable and not blocked is offline.  A
         * guest shuts down from a running vCPU with the others taken
         * down, so none of a shut-down domain's stays blocked either. */
        if (v->state == XEN_VCPU_STATS_RUNSTATE_RUNNING || v->state == XEN_VCPU_STATS_RUNSTATE_RUNNABLE ||
            (v->state == XEN_VCPU_STATS_RUNSTATE_BLOCKED && (now >= v->wake_at || d->shut_down || d->dying)))
            vcpu_change_state(d, v, XEN_VCPU_STATS_RUNSTATE_OFFLINE, now);
    }
}

/* The guest's balloon driver, while it runs. */
static void balloon(struct emu_host *host, struct emu_domain *d, uint64_t elapsed)
{
    uint64_t step = elapsed / 1000 * EMU_BALLOON_KIB_PER_S / 1000000 / 4 * 4;

    if (d->memory_kib == d->target_kib || !domain_runs(d))
        return;
    if (step < 4)
        step = 4;
    if (d->memory_kib > d->target_kib) {
        step = step < d->memory_kib - d->target_kib ? step : d->memory_kib - d->target_kib;
        d->memory_kib -= step;
        host->free_memory_kib += step;
    } else {
        step = step < d->target_kib - d->memory_kib ? step : d->target_kib - d->memory_kib;
        if (d->max_kib != XENSTATS_KIB_UNLIMITED && d->memory_kib + step > d->max_kib)
            step = d->max_kib > d->memory_kib ? d->max_kib - d->memory_kib : 0;
        /* Xen gives what it has; the balloon keeps asking. */
        step = step < host->free_memory_kib ? step : host->free_memory_kib / 4 * 4;
        d->memory_kib += step;
        host->free_memory_kib -= step;
    }
}

void emu_host_tick(struct emu_host *host, uint64_t now)
{
    uint64_t elapsed = now > host->last_tick ? now - host->last_tick : 0;
    struct emu_domain *d, *next;
    size_t nwant = 0, total = 0, i;

    /* The pCPUs nobody ran on since the last tick were idle. */
    if (host->table && elapsed) {
        struct emu_table_host *h = emu_table_host(host->table);
        uint32_t p;

        emu_table_write_begin(&h->seq);
        for (p = host->nr_running; p < host->nr_pcpus; p++)
            EMU_TABLE_STORE(h->pcpu_idle_ns[p], h->pcpu_idle_ns[p] + elapsed);
        emu_table_write_end(&h->seq);
    }

    for (d = host->domains; d; d = d->next)
        total += d->spec.nr_vcpus;
    if (total > host->want_cap) {
        struct emu_vcpu **grown = realloc(host->want, total * sizeof(*grown));

        if (!grown)
            return; /* try again next tick */
        host->want = grown;
        host->want_cap = total;
    }

    for (d = host->domains; d; d = d->next) {
        balloon(host, d, elapsed);
        if (!domain_runs(d)) {
            stop_vcpus(d, now);
            continue;
        }
        for (i = 0; i < d->spec.nr_vcpus; i++) {
            struct emu_vcpu *v = &d->vcpus[i];

            if (v->offline)
                continue;
            if (v->state == XEN_VCPU_STATS_RUNSTATE_RUNNING) {
                uint64_t ran = now - v->update_time < elapsed ? now - v->update_time : elapsed;

                v->vruntime += ran;
                if (v->burst_left != INT64_MAX)
                    v->burst_left -= (int64_t)ran;
                if (v->burst_left <= 0) {
                    v->wake_at = now + sleep_length(d, v, now);
                    if (v->wake_at > now) {
                        /* the burst ends waiting for I/O: its traffic */
                        emu_devices_io(d, effective_workload(d, now) == EMU_WORKLOAD_IDLE);
                        vcpu_change_state(d, v, XEN_VCPU_STATS_RUNSTATE_BLOCKED, now);
                        continue;
                    }
                    new_burst(d, v, now);
                }
                /* A mixed domain entering its cpu phase keeps running. */
                if (effective_workload(d, now) == EMU_WORKLOAD_CPU)
                    v->burst_left = INT64_MAX;
            } else if (v->state == XEN_VCPU_STATS_RUNSTATE_BLOCKED) {
                if (now < v->wake_at)
                    continue;
                new_burst(d, v, now);
                /* A waker gets a small boost, not the credit of its sleep. */
                if (v->vruntime + WAKE_BOOST < host->min_vruntime)
                    v->vruntime = host->min_vruntime - WAKE_BOOST;
            } else if (v->state == XEN_VCPU_STATS_RUNSTATE_OFFLINE) {
                /* unpaused: it carries on where it stopped */
                if (v->burst_left <= 0)
                    new_burst(d, v, now);
                if (v->vruntime < host->min_vruntime)
                    v->vruntime = host->min_vruntime;
            }
            host->want[nwant++] = v;
        }
    }

    if (nwant > host->nr_pcpus)
        select_least(host->want, nwant, host->nr_pcpus ? host->nr_pcpus : 1);
    if (nwant)
        host->min_vruntime = host->want[0]->vruntime;
    for (i = 0; i < nwant; i++)
        vcpu_change_state(host->want[i]->domain, host->want[i],
                          i < host->nr_pcpus ? XEN_VCPU_STATS_RUNSTATE_RUNNING : XEN_VCPU_STATS_RUNSTATE_RUNNABLE,
                          now);
    host->nr_running = (uint32_t)(nwant < host->nr_pcpus ? nwant : host->nr_pcpus);
    host->last_tick = now;
    for (d = host->domains; d; d = d->next) {
        publish_domain(host, d, now);
        emu_devices_show(host, d, now, false);
    }
    emu_devices_flush(host);
    publish_host(host);
    /* the dying whose time is up go */
    for (d = host->domains; d; d = next) {
        next = d->next;
        if (d->dying && now >= d->dying_until)
            emu_domain_destroy(host, d->domid);
    }
}

/* ---- the toolstack's controls -------------------------------------------- */

/* Controls act now, on the scheduler's clock (never before its last tick). */
static void tick_now(struct emu_host *host)
{
    uint64_t now = monotonic_ns();

    emu_host_tick(host, now > host->last_tick ? now : host->last_tick);
}

void emu_host_tell_modules(struct emu_host *host, struct emu_domain *d, enum emu_change what)
{
    unsigned int i;

    for (i = 0; i < host->nr_modules; i++)
        if (host->modules[i].changed)
            host->modules[i].changed(host, d, what, host->modules[i].data);
}

int emu_domain_pause(struct emu_host *host, uint32_t domid)
{
    struct emu_domain *d = emu_domain_find(host, domid);

    if (!d)
        return -ESRCH;
    if (domid == 0 || d->dying)
        return -EINVAL;
    if (d->pause_count == 255) /* Xen's controller_pause_count limit */
        return -EOVERFLOW;
    if (d->pause_count++ == 0)
        freeze_paused(host, d);
    /* Xen's pause returns once the vCPUs are descheduled; their I/O is done */
    tick_now(host);
    emu_devices_show(host, d, host->last_tick, true);
    return 0;
}

int emu_domain_unpause(struct emu_host *host, uint32_t domid)
{
    struct emu_domain *d = emu_domain_find(host, domid);

    if (!d)
        return -ESRCH;
    if (domid == 0 || d->pause_count == 0 || d->dying)
        return -EINVAL;
    if (--d->pause_count == 0)
        thaw_paused(d, true);
    tick_now(host);
    return 0;
}

int emu_domain_shutdown(struct emu_host *host, uint32_t domid, uint32_t reason)
{
    struct emu_domain *d = emu_domain_find(host, domid);

    if (!d)
        return -ESRCH;
    if (domid == 0)
        return -EPERM;
    if (reason >= ARRAY_SIZE(shutdown_names) || d->dying)
        return -EINVAL;
    if (d->shut_down)
        return -EALREADY;
    d->shut_down = true;
    d->shutdown_reason = reason;
    tick_now(host);
    emu_devices_show(host, d, host->last_tick, true);
    return 0;
}

int emu_domain_set_target(struct emu_host *host, uint32_t domid, uint64_t target_kib)
{
    struct emu_domain *d = emu_domain_find(host, domid);

    if (!d)
        return -ESRCH;
    if (target_kib == 0 || target_kib % 4 || target_kib > d->static_max_kib || d->dying)
        return -EINVAL;
    d->target_kib = target_kib;
    d->max_kib = target_kib + EMU_MAXMEM_SLACK_KIB;
    /* Xen refuses nothing it already holds: a lower limit only stops growth. */
    publish_domain(host, d, host->last_tick);
    emu_host_tell_modules(host, d, EMU_CHANGE_TARGET);
    return 0;
}

int emu_domain_kill(struct emu_host *host, uint32_t domid, uint64_t linger_ns)
{
    struct emu_domain *d = emu_domain_find(host, domid);

    if (!d)
        return -ESRCH;
    if (domid == 0)
        return -EPERM;
    if (!linger_ns || d->dying)
        return emu_domain_destroy(host, domid);
    if (linger_ns > EMU_MAX_LINGER_NS)
        return -EINVAL;
    d->dying = true;
    d->dying_until = UINT64_MAX; /* not reaped by this tick */
    tick_now(host);              /* its vCPUs stop, the table says dying */
    d->dying_until = host->last_tick + linger_ns;
    thaw_paused(d, true);
    release(host, d);
    free(d->devices);
    d->devices = NULL;
    d->nr_devices = 0;
    log_info("domain %u '%s' is dying for %.3f s", domid, d->spec.name, (double)linger_ns / 1e9);
    return 0;
}

int emu_domain_set_vcpus(struct emu_host *host, uint32_t domid, uint32_t online)
{
    struct emu_domain *d = emu_domain_find(host, domid);
    uint32_t i;

    if (!d)
        return -ESRCH;
    if (d->dying || online == 0 || online > d->spec.nr_vcpus)
        return -EINVAL;
    tick_now(host);
    for (i = 0; i < d->spec.nr_vcpus; i++) {
        struct emu_vcpu *v = &d->vcpus[i];
        bool offline = i >= online;

        if (v->offline == offline)
            continue;
        v->offline = offline;
        /* Going up the vCPU waits for the next tick to be scheduled, as an
         * unpaused one does (on Linux the guest must online it first). */
        if (offline)
            vcpu_change_state(d, v, XEN_VCPU_STATS_RUNSTATE_OFFLINE, host->last_tick);
        else
            v->burst_left = 0;
    }
    d->spec.nr_offline = d->spec.nr_vcpus - online;
    publish_domain(host, d, host->last_tick);
    emu_host_tell_modules(host, d, EMU_CHANGE_VCPUS);
    return 0;
}

/* ---- save, restore, migrate, reboot -------------------------------------- */

void emu_image_add_peer(int fd, void *data)
{
    struct emu_image *image = data;
    struct ucred cred;
    socklen_t len = sizeof(cred);
    pid_t *grown;
    size_t i;

    /* never the emulator itself (a module's own connection), nor init */
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 1 || cred.pid == getpid())
        return;
    for (i = 0; i < image->nr_pids; i++)
        if (image->pids[i] == cred.pid)
            return;
    grown = realloc(image->pids, (image->nr_pids + 1) * sizeof(*grown));
    if (!grown) {
        log_warning("domain %u: out of memory: process %ld will not be stopped", image->from_domid,
                    (long)cred.pid);
        return;
    }
    image->pids = grown;
    image->pids[image->nr_pids++] = cred.pid;
}

static void signal_peers(const struct emu_image *image, int sig)
{
    size_t i;

    for (i = 0; i < image->nr_pids; i++)
        kill(image->pids[i], sig);
}

static void image_free(struct emu_image *image)
{
    if (image) {
        free(image->devices);
        free(image->pids);
        free(image);
    }
}

/*
 * A paused domain runs nothing: its processes (those connected as it) are
 * stopped until it is unpaused, as its vCPUs would be on Xen.
 */
static void freeze_paused(struct emu_host *host, struct emu_domain *d)
{
    unsigned int i;

    d->paused = calloc(1, sizeof(*d->paused));
    if (!d->paused) {
        log_warning("domain %u: out of memory: its processes are not stopped while paused", d->domid);
        return;
    }
    for (i = 0; i < host->nr_modules; i++)
        if (host->modules[i].peers)
            host->modules[i].peers(host, d, d->paused, host->modules[i].data);
    signal_peers(d->paused, SIGSTOP);
}

/* Let them run again (run), or forget them for the caller to stop or go on. */
static void thaw_paused(struct emu_domain *d, bool run)
{
    if (!d->paused)
        return;
    if (run)
        signal_peers(d->paused, SIGCONT);
    image_free(d->paused);
    d->paused = NULL;
}

void emu_image_drop(struct emu_host *host, struct emu_image *image)
{
    unsigned int i;

    if (!image)
        return;
    for (i = 0; i < host->nr_modules; i++)
        if (host->modules[i].resume)
            host->modules[i].resume(host, image, NULL, host->modules[i].data);
    if (image->frozen)
        signal_peers(image, SIGCONT);
    image_free(image);
}

int emu_domain_suspend(struct emu_host *host, uint32_t domid, bool freeze, struct emu_image **ret_image)
{
    struct emu_domain *d = emu_domain_find(host, domid);
    struct emu_image *image;
    unsigned int i;
    int r;

    if (!d)
        return -ESRCH;
    if (domid == 0)
        return -EPERM;
    if (d->dying || d->shut_down)
        return -EINVAL;
    image = calloc(1, sizeof(*image));
    if (!image)
        return -ENOMEM;
    if (d->nr_devices) {
        image->devices = calloc(d->nr_devices, sizeof(*image->devices));
        if (!image->devices) {
            free(image);
            return -ENOMEM;
        }
        memcpy(image->devices, d->devices, d->nr_devices * sizeof(*image->devices));
        image->nr_devices = d->nr_devices;
    }
    if (++host->next_image == 0)
        host->next_image = 1;
    image->id = host->next_image;
    image->from_domid = domid;
    image->spec = d->spec;
    /* the guest comes back with the memory its balloon was asked for */
    image->spec.memory_kib = d->target_kib;
    memcpy(image->uuid, d->uuid, sizeof(image->uuid));
    for (i = 0; i < host->nr_modules; i++)
        if (host->modules[i].suspend)
            host->modules[i].suspend(host, d, image, host->modules[i].data);
    if (freeze) {
        signal_peers(image, SIGSTOP);
        image->frozen = true;
    }
    /* paused before: stopped now as saved, or carried on (migrate, reboot) */
    thaw_paused(d, !freeze);
    r = emu_domain_destroy(host, domid);
    if (r < 0) {
        emu_image_drop(host, image);
        return r;
    }
    *ret_image = image;
    return 0;
}

int emu_domain_resume(struct emu_host *host, struct emu_image *image)
{
    struct emu_domain *d;
    unsigned int i;
    int r;

    for (d = host->domains; d; d = d->next)
        if (!d->dying && !strcmp(d->spec.name, image->spec.name))
            return -EEXIST;
    r = domain_create(host, &image->spec, image);
    if (r < 0) {
        log_error("domain %u '%s' could not come back: %s", image->from_domid, image->spec.name, strerror(-r));
        emu_image_drop(host, image);
        return r;
    }
    d = emu_domain_find(host, (uint32_t)r);
    for (i = 0; i < host->nr_modules; i++)
        if (host->modules[i].resume)
            host->modules[i].resume(host, image, d, host->modules[i].data);
    /* a process still told to join the old domain (a child's environment)
     * finds the new one */
    if (emu_moved_write(host->dir, image->from_domid, d->domid) < 0)
        log_warning("domain %u: cannot record its move to domain %u", image->from_domid, d->domid);
    if (image->frozen)
        signal_peers(image, SIGCONT);
    log_info("domain %u '%s' is now domain %u", image->from_domid, d->spec.name, d->domid);
    image_free(image);
    return r;
}
