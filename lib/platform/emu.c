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
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_hyper_ops.h"
#include "emu_layout.h"
#include "platform.h"
#include "util/util.h"

struct emu {
    char dir[PATH_MAX - 64];
    int no_resource; /* the refusal of a resource the host lacks: -errno */
    /* Domains seen by the last list, sorted by domid.  A domain's name and
     * vCPU count never change and the emulator never reuses a domid, so a
     * list reads only the info files of new domains. */
    struct xenstats_domain_info *known;
    size_t nr_known;
};

static struct emu *emu_of(struct platform *p)
{
    return p->backend_data;
}

int emu_info_parse(const char *text, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    struct xenstats_domain_info info = {.domid = domid};
    bool have_name = false, have_vcpus = false;
    const char *line = text;

    while (*line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[EMU_INFO_MAX];
        uint64_t v;

        if (n >= sizeof(buf))
            return -EBADMSG;
        memcpy(buf, line, n);
        buf[n] = '\0';
        if (!strncmp(buf, "name=", 5)) {
            if (n - 5 >= sizeof(info.name))
                return -EBADMSG;
            memcpy(info.name, buf + 5, n - 5 + 1);
            have_name = true;
        } else if (!strncmp(buf, "vcpus=", 6)) {
            if (parse_u64(buf + 6, 1u << 20, &v) < 0)
                return -EBADMSG;
            info.nr_vcpus = (uint32_t)v;
            have_vcpus = true;
        }
        line += n + (end ? 1 : 0);
    }
    if (!have_name || !have_vcpus)
        return -EBADMSG;
    *ret_info = info;
    return 0;
}

int emu_info_format(const struct xenstats_domain_info *info, char *buf, size_t len)
{
    int n = snprintf(buf, len, "name=%s\nvcpus=%u\n", info->name, info->nr_vcpus);

    if (n < 0 || (size_t)n >= len)
        return -ENOBUFS;
    return n;
}

int emu_is_running(const char *dir)
{
    char path[PATH_MAX], *text = NULL;
    uint64_t pid;
    int alive = 0;

    if (snprintf(path, sizeof(path), "%s/%s", dir, EMU_PID_FILE) >= (int)sizeof(path))
        return 0;
    if (read_small_file(path, 32, &text, NULL) < 0)
        return 0;
    text[strcspn(text, "\n")] = '\0';
    if (parse_u64(text, INT_MAX, &pid) == 0 && pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
        alive = 1;
    free(text);
    return alive;
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

    if (domid_env && parse_u64(domid_env, 0x7fef, &domid) < 0) {
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
    p->self_domid = (uint32_t)domid;
    p->backend_data = emu;
    return 0;
fail:
    free(emu);
    return r;
}

static void emu_close(struct platform *p)
{
    if (p->backend_data)
        free(emu_of(p)->known);
    emu_grant_release(p);
    free(p->backend_data);
    p->backend_data = NULL;
}

static int domain_path(struct emu *emu, uint32_t domid, const char *file, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/%s/%u/%s", emu->dir, EMU_DOMAINS_DIR, domid, file);

    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int emu_domain_info(struct platform *p, uint32_t domid, struct xenstats_domain_info *ret_info)
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

static const struct xenstats_domain_info *known_domain(const struct emu *emu, uint32_t domid)
{
    struct xenstats_domain_info key = {.domid = domid};

    return emu->nr_known ? bsearch(&key, emu->known, emu->nr_known, sizeof(key), compare_domid) : NULL;
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
        const struct xenstats_domain_info *seen;
        uint64_t domid;

        if (parse_u64(de->d_name, 0x7fef, &domid) < 0)
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
        seen = known_domain(emu, (uint32_t)domid);
        if (seen) {
            list[count++] = *seen;
            continue;
        }
        r = emu_domain_info(p, (uint32_t)domid, &list[count]);
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
    free(emu->known);
    emu->known = copy;
    emu->nr_known = count;
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

static const struct platform_domain_ops emu_domain_ops = {
    .list = emu_domain_list,
    .info = emu_domain_info,
};

static const struct platform_resource_ops emu_resource_ops = {
    .map = emu_resource_map,
    .unmap = emu_resource_unmap,
    .clock_ns = emu_clock_ns,
};

extern const struct platform_store_ops emu_store_ops; /* emu_store.c */

const struct platform_backend platform_backend_emu = {
    .name = "emu",
    .kind = XENSTATS_BACKEND_EMU,
    .open = emu_open,
    .close = emu_close,
    .domain = &emu_domain_ops,
    .resource = &emu_resource_ops,
    .store = &emu_store_ops,
    .grant = &emu_grant_ops,
    .evtchn = &emu_evtchn_ops,
};
