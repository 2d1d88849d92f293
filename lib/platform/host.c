/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Backend choice and the public host handle. */
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "platform.h"
#include "util/util.h"

/* A Xen host shows its devices: privcmd in dom0 (and in a guest that
 * loads it), xenbus and evtchn in every PV or PVH guest. */
static bool on_xen(void)
{
    static const char *const devices[] = {"/dev/xen/privcmd", "/proc/xen/privcmd", "/dev/xen/xenbus",
                                          "/dev/xen/evtchn"};

    for (size_t i = 0; i < ARRAY_SIZE(devices); i++)
        if (access(devices[i], F_OK) == 0)
            return true;
    return false;
}

static const struct platform_backend *pick_backend(enum xenstats_backend wanted)
{
    switch (wanted) {
    case XENSTATS_BACKEND_EMU:
        return &platform_backend_emu;
    case XENSTATS_BACKEND_XEN:
        return &platform_backend_xen;
    case XENSTATS_BACKEND_AUTO:
    default:
        /* The emulator's environment wins: it may well run on a Xen host. */
        if (getenv("XENSTATS_EMU_DIR"))
            return &platform_backend_emu;
        return on_xen() ? &platform_backend_xen : &platform_backend_emu;
    }
}

struct xenstats_host *xenstats_host_open(enum xenstats_backend backend)
{
    const struct platform_backend *b = pick_backend(backend);
    struct xenstats_host *host;
    int r;

    host = calloc(1, sizeof(*host));
    if (!host) {
        errno = ENOMEM;
        return NULL;
    }
    r = platform_open(&host->platform, b);
    if (r < 0) {
        free(host);
        set_errno(r);
        return NULL;
    }
    return host;
}

void xenstats_host_close(struct xenstats_host *host)
{
    if (!host)
        return;
    if (host->xs)
        xs_close(host->xs);
    platform_close(&host->platform);
    free(host);
}

enum xenstats_backend xenstats_host_backend(const struct xenstats_host *host)
{
    return platform_kind(&host->platform);
}

uint32_t xenstats_host_self_domid(const struct xenstats_host *host)
{
    return host->platform.self_domid;
}

int xenstats_host_list_domains(struct xenstats_host *host, struct xenstats_domain_info **ret_domains,
                               size_t *ret_count)
{
    return set_errno(platform_domain_list(&host->platform, ret_domains, ret_count));
}

int xenstats_host_domain_info(struct xenstats_host *host, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    return set_errno(platform_domain_info(&host->platform, domid, ret_info));
}

int xenstats_host_info(struct xenstats_host *host, struct xenstats_host_info *ret_info)
{
    return set_errno(platform_host_info(&host->platform, ret_info));
}

int xenstats_host_pcpu_idle(struct xenstats_host *host, uint64_t *idle_ns, size_t max, size_t *ret_count)
{
    return set_errno(platform_host_pcpu_idle(&host->platform, idle_ns, max, ret_count));
}

int xenstats_host_list_devices(struct xenstats_host *host, struct xenstats_vif **ret_vifs, size_t *ret_nr_vifs,
                               struct xenstats_vbd **ret_vbds, size_t *ret_nr_vbds)
{
    return set_errno(platform_host_devices(&host->platform, ret_vifs, ret_nr_vifs, ret_vbds, ret_nr_vbds));
}

int xenstats_host_read_domain_key(struct xenstats_host *host, uint32_t domid, const char *path, char *buf,
                                  size_t len)
{
    char full[256];
    unsigned int n = 0;
    char *value;

    if (!len || snprintf(full, sizeof(full), "/local/domain/%u/%s", domid, path) >= (int)sizeof(full))
        return set_errno(-EINVAL);
    if (!host->xs) {
        host->xs = platform_store_open(&host->platform, 0);
        if (!host->xs)
            return set_errno(negative_errno());
    }
    value = xs_read(host->xs, XBT_NULL, full, &n);
    if (!value)
        return set_errno(errno == ENOENT ? -ENOENT : negative_errno());
    if (n >= len) {
        free(value);
        return set_errno(-E2BIG);
    }
    memcpy(buf, value, n);
    buf[n] = '\0';
    free(value);
    return (int)n;
}
