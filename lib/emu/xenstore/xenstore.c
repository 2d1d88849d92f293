/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The toolstack's part: on domain creation write what libxl's
 * libxl__domain_make() writes (the home owned by dom0 and readable by the
 * guest, guest-owned writable subtrees, /vm/<uuid>) in one transaction and
 * introduce the domain (@introduceDomain); on destruction remove them and
 * release it (@releaseDomain).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emu/emu.h"
#include "util/util.h"
#include "xenstore.h"
#include "xs_server.h"
#include "xs_store.h"

static struct {
    struct emu_host *host;
    struct xs_store *store;
    struct xs_server *server;
    struct xs_conn *toolstack; /* dom0's toolstack, writing domains' nodes */
    unsigned int ndomains;
} module;

/* Guest-writable subtrees libxl creates, owned by the guest. */
static const char *const rw_paths[] = {
    "control/shutdown", "control/feature-poweroff", "control/feature-reboot", "control/feature-suspend",
    "control/sysrq",    "device/suspend/event-channel", "data", "drivers", "feature", "attr", "error",
};
/* Read-only for the guest: dom0 owns them, the guest may read. */
static const char *const ro_paths[] = {"cpu", "memory", "device", "control"};

static int writef(uint32_t tx, const char *path, const char *fmt, ...) XS_PRINTF(3, 4);

static int writef(uint32_t tx, const char *path, const char *fmt, ...)
{
    char value[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(value))
        return -ENAMETOOLONG;
    return xst_write(module.toolstack, tx, path, value, (size_t)n);
}

static int mknod_perms(uint32_t tx, const char *path, const struct xs_perm *perms, size_t n)
{
    int r = xst_mkdir(module.toolstack, tx, path);

    return r < 0 ? r : xst_set_perms(module.toolstack, tx, path, perms, n);
}

/* /vm/<uuid> names the domain's handle, as libxl's. */
static void make_uuid(const struct emu_domain *d, char *buf, size_t len)
{
    const uint8_t *u = d->uuid;

    snprintf(buf, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* libxl__build_post() (and xl mem-set for the target): KiB. */
static int write_memory(uint32_t tx, const struct emu_domain *d, bool static_max)
{
    char path[96];
    int r;

    snprintf(path, sizeof(path), "/local/domain/%u/memory/target", d->domid);
    r = writef(tx, path, "%llu", (unsigned long long)d->target_kib);
    if (r == 0 && static_max) {
        snprintf(path, sizeof(path), "/local/domain/%u/memory/static-max", d->domid);
        r = writef(tx, path, "%llu", (unsigned long long)d->static_max_kib);
    }
    return r;
}

/*
 * The backend nodes libxl writes in dom0's home for each device, as the
 * backends' drivers find them (blkback's `dev` names the vbd), and the
 * frontend's pointer to them: rewritten whole when the list changes.
 */
static int write_devices(uint32_t tx, const struct emu_domain *d)
{
    static const char *const kinds[] = {[EMU_DEVICE_VIF] = "vif", [EMU_DEVICE_VBD] = "vbd"};
    char path[160], be[96];
    uint32_t i;
    size_t k;
    int r = 0;

    for (k = 0; k < ARRAY_SIZE(kinds); k++) {
        snprintf(path, sizeof(path), "/local/domain/0/backend/%s/%u", kinds[k], d->domid);
        xst_rm(module.toolstack, tx, path);
        if (d->domid != 0) {
            snprintf(path, sizeof(path), "/local/domain/%u/device/%s", d->domid, kinds[k]);
            xst_rm(module.toolstack, tx, path);
        }
    }
    for (i = 0; r == 0 && i < d->nr_devices; i++) {
        const struct emu_device *dev = &d->devices[i];
        const char *kind = kinds[dev->kind];

        snprintf(be, sizeof(be), "/local/domain/0/backend/%s/%u/%u", kind, d->domid, dev->devid);
        snprintf(path, sizeof(path), "%s/frontend-id", be);
        r = writef(tx, path, "%u", d->domid);
        snprintf(path, sizeof(path), "%s/state", be);
        if (r == 0)
            r = writef(tx, path, "4"); /* XenbusStateConnected */
        snprintf(path, sizeof(path), "%s/%s", be, dev->kind == EMU_DEVICE_VIF ? "handle" : "dev");
        if (r == 0 && dev->kind == EMU_DEVICE_VIF)
            r = writef(tx, path, "%u", dev->devid);
        else if (r == 0)
            r = writef(tx, path, "%s", dev->vdev);
        if (r < 0 || d->domid == 0)
            continue;
        snprintf(path, sizeof(path), "/local/domain/%u/device/%s/%u/backend", d->domid, kind, dev->devid);
        r = writef(tx, path, "%s", be);
        snprintf(path, sizeof(path), "/local/domain/%u/device/%s/%u/backend-id", d->domid, kind, dev->devid);
        if (r == 0)
            r = writef(tx, path, "0");
    }
    return r;
}

/* libxl__set_vcpuonline_xenstore(): what xl vcpu-set tells the guest. */
static int write_vcpus(uint32_t tx, const struct emu_domain *d)
{
    char path[96];
    uint32_t i;
    int r = 0;

    for (i = 0; r == 0 && i < d->spec.nr_vcpus; i++) {
        snprintf(path, sizeof(path), "/local/domain/%u/cpu/%u/availability", d->domid, i);
        r = writef(tx, path, "%s", d->vcpus[i].offline ? "offline" : "online");
    }
    return r;
}

static int write_domain(uint32_t tx, const struct emu_domain *d)
{
    const struct xs_perm roperm[] = {{0, XS_STORE_PERM_NONE}, {d->domid, XS_STORE_PERM_READ}};
    const struct xs_perm rwperm[] = {{d->domid, XS_STORE_PERM_NONE}};
    char home[64], vm[96], path[192], uuid[40];
    size_t i;
    int r;

    snprintf(home, sizeof(home), "/local/domain/%u", d->domid);
    make_uuid(d, uuid, sizeof(uuid));
    snprintf(vm, sizeof(vm), "/vm/%s", uuid);

    /* dom0's nodes come from xen-init-dom0: plain dom0-owned nodes. */
    if (d->domid == 0) {
        r = xst_mkdir(module.toolstack, tx, home);
        if (r == 0)
            r = xst_mkdir(module.toolstack, tx, vm);
    } else {
        xst_rm(module.toolstack, tx, home);
        r = mknod_perms(tx, home, roperm, 2);
        if (r == 0)
            r = mknod_perms(tx, vm, roperm, 2);
    }
    snprintf(path, sizeof(path), "%s/vm", home);
    if (r == 0)
        r = xst_write(module.toolstack, tx, path, vm, strlen(vm));
    snprintf(path, sizeof(path), "%s/name", home);
    if (r == 0)
        r = xst_write(module.toolstack, tx, path, d->spec.name, strlen(d->spec.name));
    snprintf(path, sizeof(path), "%s/domid", home);
    if (r == 0)
        r = writef(tx, path, "%u", d->domid);
    snprintf(path, sizeof(path), "%s/uuid", vm);
    if (r == 0)
        r = xst_write(module.toolstack, tx, path, uuid, strlen(uuid));
    snprintf(path, sizeof(path), "%s/name", vm);
    if (r == 0)
        r = xst_write(module.toolstack, tx, path, d->spec.name, strlen(d->spec.name));
    if (r < 0)
        return r;
    if (d->domid == 0) {
        r = write_memory(tx, d, true);
        return r < 0 ? r : write_devices(tx, d);
    }

    for (i = 0; r == 0 && i < ARRAY_SIZE(ro_paths); i++) {
        snprintf(path, sizeof(path), "%s/%s", home, ro_paths[i]);
        r = mknod_perms(tx, path, roperm, 2);
    }
    for (i = 0; r == 0 && i < ARRAY_SIZE(rw_paths); i++) {
        snprintf(path, sizeof(path), "%s/%s", home, rw_paths[i]);
        r = mknod_perms(tx, path, rwperm, 1);
    }
    snprintf(path, sizeof(path), "%s/control/platform-feature-multiprocessor-suspend", home);
    if (r == 0)
        r = writef(tx, path, "1");
    snprintf(path, sizeof(path), "%s/control/platform-feature-xs_reset_watches", home);
    if (r == 0)
        r = writef(tx, path, "1");
    /* libxl__build_post(): one availability node per vCPU. */
    if (r == 0)
        r = write_vcpus(tx, d);
    if (r == 0)
        r = write_memory(tx, d, true);
    return r < 0 ? r : write_devices(tx, d);
}

static void module_fini(void)
{
    xs_server_free(module.server);
    xs_conn_free(module.toolstack);
    xs_store_free(module.store);
    module.server = NULL;
    module.toolstack = NULL;
    module.store = NULL;
}

static int module_init(struct emu_host *host)
{
    char dir[PATH_MAX];

    if (snprintf(dir, sizeof(dir), "%s/xenstore", host->dir) >= (int)sizeof(dir))
        return -ENAMETOOLONG;
    module.store = xs_store_new();
    if (module.store)
        xs_store_set_quota_nodes(module.store, host->xs_quota_nodes);
    if (module.store)
        module.toolstack = xs_conn_new(module.store, 0, NULL, NULL);
    if (module.toolstack)
        module.server = xs_server_new(module.store, host->loop, dir);
    if (!module.server) {
        int r = negative_errno();

        module_fini();
        return r;
    }
    return 0;
}

/* Write the nodes in one transaction, as libxl does, retrying on a
 * conflict with a guest writing at the same moment. */
static int write_domain_nodes(const struct emu_domain *d, int (*write)(uint32_t tx, const struct emu_domain *d))
{
    int attempt, r = -EAGAIN;

    for (attempt = 0; attempt < 8 && r == -EAGAIN; attempt++) {
        uint32_t tx;

        r = xst_transaction_start(module.toolstack, 0, &tx);
        if (r < 0)
            return r;
        r = write(tx, d);
        if (r < 0) {
            xst_transaction_end(module.toolstack, tx, false);
            return r;
        }
        r = xst_transaction_end(module.toolstack, tx, true);
    }
    return r;
}

static void remove_domain_nodes(uint32_t domid)
{
    char home[64], path[96], vm[XS_PATH_MAX + 1];
    size_t len = 0;

    snprintf(path, sizeof(path), "/local/domain/0/backend/vif/%u", domid);
    xst_rm(module.toolstack, 0, path);
    snprintf(path, sizeof(path), "/local/domain/0/backend/vbd/%u", domid);
    xst_rm(module.toolstack, 0, path);

    snprintf(home, sizeof(home), "/local/domain/%u", domid);
    snprintf(path, sizeof(path), "%s/vm", home);
    if (xst_read(module.toolstack, 0, path, vm, sizeof(vm) - 1, &len) == 0) {
        vm[len] = '\0';
        if (!strncmp(vm, "/vm/", 4))
            xst_rm(module.toolstack, 0, vm);
    }
    xst_rm(module.toolstack, 0, home);
}

static int domain_created(struct emu_host *host, struct emu_domain *d, void *data)
{
    int r;

    if (!module.store) {
        r = module_init(host);
        if (r < 0)
            return r;
    }
    module.ndomains++;
    r = write_domain_nodes(d, write_domain);
    if (r == 0)
        r = xs_server_add_domain(module.server, d->domid);
    if (r == 0)
        r = xs_store_introduce(module.store, d->domid);
    if (r < 0) {
        log_error("xenstore: domain %u: %s", d->domid, strerror(-r));
        xs_server_remove_domain(module.server, d->domid);
        remove_domain_nodes(d->domid);
        if (--module.ndomains == 0)
            module_fini();
    }
    return r;
}

static void domain_destroyed(struct emu_host *host, struct emu_domain *d, void *data)
{
    if (!module.store)
        return;
    xs_server_remove_domain(module.server, d->domid);
    remove_domain_nodes(d->domid);
    xs_store_release(module.store, d->domid);
    if (--module.ndomains == 0)
        module_fini();
}

static void domain_peers(struct emu_host *host, struct emu_domain *d, struct emu_image *image, void *data)
{
    if (module.server)
        xs_server_peers(module.server, d->domid, emu_image_add_peer, image);
}

static void domain_suspend(struct emu_host *host, struct emu_domain *d, struct emu_image *image, void *data)
{
    if (module.server)
        xs_server_park(module.server, d->domid, image->id, emu_image_add_peer, image);
}

static void domain_resume(struct emu_host *host, struct emu_image *image, struct emu_domain *d, void *data)
{
    if (module.server)
        xs_server_unpark(module.server, image->id, d ? d->domid : UINT32_MAX);
}

static void domain_changed(struct emu_host *host, struct emu_domain *d, enum emu_change what, void *data)
{
    int r = 0;

    (void)host;
    (void)data;
    if (!module.store)
        return;
    if (what == EMU_CHANGE_TARGET)
        r = write_memory(0, d, false);
    else if (what == EMU_CHANGE_DEVICES)
        r = write_domain_nodes(d, write_devices);
    else if (what == EMU_CHANGE_VCPUS && d->domid != 0)
        r = write_domain_nodes(d, write_vcpus);
    if (r < 0)
        log_error("xenstore: domain %u: %s", d->domid, strerror(-r));
}

int emu_xenstore_register(struct emu_host *host)
{
    const struct emu_module m = {
        .name = "xenstore",
        .created = domain_created,
        .destroyed = domain_destroyed,
        .changed = domain_changed,
        .suspend = domain_suspend,
        .peers = domain_peers,
        .resume = domain_resume,
    };
    int r;

    if (module.host)
        return -EBUSY;
    r = emu_host_add_module(host, &m);
    if (r == 0)
        module.host = host;
    return r;
}
