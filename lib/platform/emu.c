/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * emu backend: the emulated host of `xenstats emu`.  The calling process
 * belongs to the domain in $XENSTATS_EMU_DOMID (default 0, the privileged
 * control domain).  $XENSTATS_EMU_NO_RESOURCE says how the emulated
 * hypervisor refuses a resource it does not have, as each Xen version does
 * (platform_resource_absent()): EOPNOTSUPP (the default, Xen up to 4.17),
 * EINVAL (4.18 and later), ENOSYS (no XENMEM_acquire_resource) or ENOTTY
 * (a privcmd driver without the ioctl).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xenstore.h>

#include "backend_devices.h"
#include "emu_backend.h"
#include "util/util.h"

struct emu {
    char dir[PATH_MAX - 64];
    void *table; /* the emulator's table (emu/proto/run_dir.h), mapped read-only */
    int no_resource; /* the refusal of a resource the host lacks: -errno */
    /* Domains seen by the last list, sorted by domid.  A domain's name and
     * vCPU count never change and the emulator never reuses a domid, so a
     * list reads only the info files of new domains. */
    struct xenstats_domain_info *known;
    size_t nr_known;
    pthread_mutex_t lock; /* known, nr_known and xs */
    /* the backend devices' names: dom0's store, opened on first use */
    struct xs_handle *xs;
    struct backend_devices_cache devices;
};

static struct emu *emu_of(struct platform *p)
{
    return p->backend_data;
}

static int map_table(struct emu *emu)
{
    char path[PATH_MAX];
    struct stat st;
    void *mem;
    int fd, r = 0;

    if (snprintf(path, sizeof(path), "%s/%s", emu->dir, EMU_TABLE_FILE) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r = negative_errno();
        log_error("cannot open the emulated host's table %s: %s", path, strerror(-r));
        return r;
    }
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < EMU_TABLE_BYTES) {
        close(fd);
        log_error("%s is not an emulated host's table", path);
        return -EBADMSG;
    }
    mem = mmap(NULL, EMU_TABLE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        r = negative_errno();
    close(fd);
    if (r < 0)
        return r;
    if (__atomic_load_n(&emu_table_host(mem)->magic, __ATOMIC_ACQUIRE) != EMU_TABLE_MAGIC) {
        munmap(mem, EMU_TABLE_BYTES);
        log_error("%s is not an emulated host's table", path);
        return -EBADMSG;
    }
    emu->table = mem;
    return 0;
}

static int parse_no_resource(const char *text, int *ret)
{
    static const struct {
        const char *name;
        int err;
    } answers[] = {{"EOPNOTSUPP", -EOPNOTSUPP}, {"EINVAL", -EINVAL}, {"ENOSYS", -ENOSYS}, {"ENOTTY", -ENOTTY}};
    size_t i;

    *ret = -EOPNOTSUPP;
    if (!text || !*text)
        return 0;
    for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
        if (strcmp(text, answers[i].name) == 0) {
            *ret = answers[i].err;
            return 0;
        }
    }
    log_error("XENSTATS_EMU_NO_RESOURCE=%s is not one of EOPNOTSUPP, EINVAL, ENOSYS, ENOTTY", text);
    return -EINVAL;
}

static int emu_open(struct platform *p)
{
    const char *domid_env = getenv("XENSTATS_EMU_DOMID");
    struct emu *emu;
    uint64_t domid = 0;
    int r;

    if (domid_env && parse_u64(domid_env, XENSTATS_DOMID_MAX, &domid) < 0) {
        log_error("XENSTATS_EMU_DOMID=%s is not a domain id", domid_env);
        return -EINVAL;
    }
    emu = calloc(1, sizeof(*emu));
    if (!emu)
        return -ENOMEM;
    r = parse_no_resource(getenv("XENSTATS_EMU_NO_RESOURCE"), &emu->no_resource);
    if (r < 0)
        goto fail;
    r = emu_run_dir(emu->dir, sizeof(emu->dir));
    if (r < 0)
        goto fail;
    if (!emu_is_running(emu->dir)) {
        log_error("no emulated Xen host is running in %s (start one with `xenstats emu`)", emu->dir);
        r = -ENOENT;
        goto fail;
    }
    r = map_table(emu);
    if (r < 0)
        goto fail;
    pthread_mutex_init(&emu->lock, NULL);
    backend_devices_cache_init(&emu->devices);
    /* a process told to join a domain that has moved on (its parent's
     * environment) joins the domain it lives on now */
    p->self_domid = emu_domid_follow(emu->dir, (uint32_t)domid);
    p->backend_data = emu;
    return 0;
fail:
    free(emu);
    return r;
}

static void emu_close(struct platform *p)
{
    if (p->backend_data) {
        struct emu *emu = emu_of(p);

        free(emu->known);
        if (emu->table)
            munmap(emu->table, EMU_TABLE_BYTES);
        if (emu->xs)
            xs_close(emu->xs);
        backend_devices_cache_fini(&emu->devices);
        pthread_mutex_destroy(&emu->lock);
    }
    emu_grant_release(p);
    free(p->backend_data);
    p->backend_data = NULL;
}

static int domain_path(struct emu *emu, uint32_t domid, const char *file, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s/%u/%s", emu->dir, EMU_DOMAINS_DIR, domid, file);

    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The changing figures of a domain from its table slot; -ESRCH if gone. */
static int read_slot(struct emu *emu, struct xenstats_domain_info *info)
{
    struct emu_table_domain slot;
    int r;

    if (info->domid >= EMU_TABLE_DOMAINS)
        return -ESRCH;
    r = emu_table_read(emu_table_slot(emu->table, info->domid), sizeof(slot) / 8, &slot);
    if (r < 0)
        return r;
    if (!slot.present)
        return -ESRCH;
    info->flags = slot.flags;
    info->shutdown_reason = slot.shutdown_reason;
    info->nr_online_vcpus = slot.nr_online_vcpus;
    info->cpu_time_ns = slot.cpu_time_ns;
    info->memory_kib = slot.memory_kib;
    info->max_memory_kib = slot.max_memory_kib;
    info->shared_kib = slot.shared_kib;
    info->outstanding_kib = slot.outstanding_kib;
    return 0;
}

static int read_info_file(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    char path[PATH_MAX], *text = NULL;
    int r;

    r = domain_path(emu_of(p), domid, EMU_INFO_FILE, path, sizeof(path));
    if (r < 0)
        return r;
    r = read_small_file(path, EMU_INFO_MAX, &text, NULL);
    if (r == -ENOENT || r == -ENOTDIR)
        return -ESRCH;
    if (r < 0)
        return r;
    r = emu_info_parse(text, domid, ret_info);
    free(text);
    return r;
}

static int compare_domid(const void *a, const void *b)
{
    const struct xenstats_domain_info *x = a, *y = b;

    return x->domid < y->domid ? -1 : x->domid > y->domid;
}

/* The last list's entry of domid copied into *ret: whether there was one (emu->lock held). */
static bool known_domain(const struct emu *emu, uint32_t domid, struct xenstats_domain_info *ret)
{
    struct xenstats_domain_info key = {.domid = domid};
    const struct xenstats_domain_info *seen =
        emu->nr_known ? bsearch(&key, emu->known, emu->nr_known, sizeof(key), compare_domid) : NULL;

    if (seen)
        *ret = *seen;
    return seen != NULL;
}

/*
 * A domain's figures: what never changes from the last list (as a list
 * does), else from its info file; the rest from its table slot, which is
 * mapped.  So asking again for a listed domain costs no system call, as
 * one getdomaininfo hypercall costs one on Xen (the PV monitor asks for
 * each domain whose sets did not answer in time).
 */
static int emu_domain_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    struct xenstats_domain_info info;
    struct emu *emu = emu_of(p);
    bool seen;
    int r = 0;

    pthread_mutex_lock(&emu->lock);
    seen = known_domain(emu, domid, &info);
    pthread_mutex_unlock(&emu->lock);
    if (!seen)
        r = read_info_file(p, domid, &info);
    if (r == 0)
        r = read_slot(emu, &info);
    if (r == 0)
        *ret_info = info;
    return r;
}

static int emu_domain_list(struct platform *p, struct xenstats_domain_info **ret_domains, size_t *ret_count)
{
    struct xenstats_domain_info *list = NULL, *grown, *copy;
    struct emu *emu = emu_of(p);
    size_t count = 0, cap = 0;
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int r = 0;

    if (snprintf(path, sizeof(path), "%s/%s", emu->dir, EMU_DOMAINS_DIR) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    d = opendir(path);
    if (!d)
        return negative_errno();
    while ((de = readdir(d))) {
        uint64_t domid;
        bool seen;

        if (parse_u64(de->d_name, XENSTATS_DOMID_MAX, &domid) < 0)
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 16;
            grown = realloc(list, cap * sizeof(*list));
            if (!grown) {
                r = -ENOMEM;
                goto out;
            }
            list = grown;
        }
        pthread_mutex_lock(&emu->lock);
        seen = known_domain(emu, (uint32_t)domid, &list[count]);
        pthread_mutex_unlock(&emu->lock);
        if (!seen)
            r = read_info_file(p, (uint32_t)domid, &list[count]);
        if (r == 0)
            r = read_slot(emu, &list[count]);
        if (r == -ESRCH) { /* destroyed while listing */
            r = 0;
            continue;
        }
        if (r < 0)
            goto out;
        count++;
    }
    qsort(list, count, sizeof(*list), compare_domid);
    /* remember this list (the caller gets its own copy) */
    copy = count ? malloc(count * sizeof(*copy)) : NULL;
    if (count && !copy) {
        r = -ENOMEM;
        goto out;
    }
    if (count)
        memcpy(copy, list, count * sizeof(*copy));
    pthread_mutex_lock(&emu->lock);
    free(emu->known);
    emu->known = copy;
    emu->nr_known = count;
    pthread_mutex_unlock(&emu->lock);
    *ret_domains = list;
    *ret_count = count;
    list = NULL;
out:
    closedir(d);
    free(list);
    return r;
}

static int emu_resource_map(struct platform *p, uint32_t domid, unsigned int type, unsigned int id,
                            struct platform_resource *ret_resource)
{
    struct xenstats_domain_info info;
    char path[PATH_MAX];
    struct stat st;
    void *addr;
    int fd, r;

    /* As Xen: only a privileged domain, and never on itself. */
    if (p->self_domid != 0 || domid == p->self_domid)
        return -EPERM;
    r = emu_domain_info(p, domid, &info);
    if (r < 0)
        return r;
    if (type != 3 || id != 0)
        return emu_of(p)->no_resource;
    r = domain_path(emu_of(p), domid, EMU_VCPU_STATS_FILE, path, sizeof(path));
    if (r < 0)
        return r;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? emu_of(p)->no_resource : negative_errno();
    if (fstat(fd, &st) < 0) {
        r = negative_errno();
        goto out;
    }
    if (st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX) {
        r = emu_of(p)->no_resource;
        goto out;
    }
    addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
        r = negative_errno();
        goto out;
    }
    ret_resource->addr = addr;
    ret_resource->len = (size_t)st.st_size;
    ret_resource->backend_data = NULL;
    r = 0;
out:
    close(fd);
    return r;
}

static void emu_resource_unmap(struct platform *p, struct platform_resource *resource)
{
    (void)p;
    if (resource->addr)
        munmap((void *)resource->addr, resource->len);
    resource->addr = NULL;
}

static int emu_clock_ns(struct platform *p, uint64_t *ret_now)
{
    (void)p;
    *ret_now = monotonic_ns();
    return 0;
}

static int read_host(struct emu *emu, struct emu_table_host *ret_host)
{
    return emu_table_read(emu_table_host(emu->table), sizeof(*ret_host) / 8, ret_host);
}

static int emu_host_info(struct platform *p, struct xenstats_host_info *ret_info)
{
    struct emu_table_host h;
    struct xenstats_host_info info = {0};
    int r = read_host(emu_of(p), &h);

    if (r < 0)
        return r;
    snprintf(info.xen_version, sizeof(info.xen_version), "emu");
    snprintf(info.scheduler, sizeof(info.scheduler), "emu");
    info.nr_pcpus = h.nr_pcpus;
    info.cpu_khz = h.cpu_khz;
    info.total_memory_kib = h.total_memory_kib;
    info.free_memory_kib = h.free_memory_kib;
    info.scrub_memory_kib = h.scrub_memory_kib;
    *ret_info = info;
    return 0;
}

static int emu_pcpu_idle(struct platform *p, uint64_t *idle_ns, size_t max, size_t *ret_count)
{
    struct emu_table_host h;
    size_t i, n;
    int r = read_host(emu_of(p), &h);

    if (r < 0)
        return r;
    n = h.nr_pcpus < EMU_TABLE_PCPUS ? h.nr_pcpus : EMU_TABLE_PCPUS;
    n = n < max ? n : max;
    for (i = 0; i < n; i++)
        idle_ns[i] = h.pcpu_idle_ns[i];
    *ret_count = n;
    return 0;
}

/*
 * The emulator keeps the tree dom0's sysfs has on Xen under its run
 * directory, and the backend nodes in dom0's store: the same reader as on
 * Xen.  Backends live in dom0, so a guest sees none, as a guest's own /sys
 * lists no other guest's devices.
 */
static int emu_devices(struct platform *p, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs,
                       struct xenstats_vbd **ret_vbds, size_t *ret_nr_vbds)
{
    struct emu *emu = emu_of(p);
    char root[PATH_MAX], net_dev[PATH_MAX];
    struct backend_tree tree = {.root = root, .net_dev = net_dev, .netback_files = true};
    struct xs_handle *xs;

    /* a guest has no backends: nothing there */
    if (snprintf(root, sizeof(root), "%s/%s", emu->dir, p->self_domid == 0 ? EMU_SYSFS_DIR : ".no-backends") >=
            (int)sizeof(root) ||
        snprintf(net_dev, sizeof(net_dev), "%s/%s", emu->dir, p->self_domid == 0 ? EMU_NET_DEV_FILE : ".no-backends") >=
            (int)sizeof(net_dev))
        return -ENAMETOOLONG;
    pthread_mutex_lock(&emu->lock);
    if (!emu->xs && p->self_domid == 0)
        emu->xs = emu_store_ops.open(p, 0);
    xs = emu->xs;
    pthread_mutex_unlock(&emu->lock);
    /* without the store the names fall back to devids: not remembered then */
    return backend_devices_scan(&tree, xs, xs ? &emu->devices : NULL, ret_vifs, ret_nr_vifs, ret_vbds, ret_nr_vbds);
}

static const struct platform_host_ops emu_host_ops = {
    .info = emu_host_info,
    .pcpu_idle = emu_pcpu_idle,
    .devices = emu_devices,
};

static const struct platform_domain_ops emu_domain_ops = {
    .list = emu_domain_list,
    .info = emu_domain_info,
};

static const struct platform_resource_ops emu_resource_ops = {
    .map = emu_resource_map,
    .unmap = emu_resource_unmap,
    .clock_ns = emu_clock_ns,
};

const struct platform_backend platform_backend_emu = {
    .name = "emu",
    .kind = XENSTATS_BACKEND_EMU,
    .open = emu_open,
    .close = emu_close,
    .domain = &emu_domain_ops,
    .host = &emu_host_ops,
    .resource = &emu_resource_ops,
    .store = &emu_store_ops,
    .grant = &emu_grant_ops,
    .evtchn = &emu_evtchn_ops,
};
