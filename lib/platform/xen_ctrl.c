/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xen backend: libxenctrl, loaded on first use.  It is the one libxen*
 * library without a stable ABI (its soname is the Xen release), and only
 * the control domain's figures need it: the domain list, host figures,
 * pCPU idle time and the vCPU hypercall fallback.  Loading it at run time,
 * by the exact soname the build was made against, keeps it out of the
 * library's and the guest agent's dependencies, so a guest installs them
 * without a dom0 library tied to one Xen release (docs/packaging.md).
 */
#include <dlfcn.h>
#include <pthread.h>

#include "util/util.h"
#include "xen_backend.h"

#ifndef XENSTATS_XENCTRL_SONAME
#error "the build defines XENSTATS_XENCTRL_SONAME, the libxenctrl the headers belong to"
#endif

static struct xen_ctrl calls;
static int load_error; /* 0 loaded, else a positive errno */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int resolve(void *lib, const char *name, void **ret_fn)
{
    *ret_fn = dlsym(lib, name);
    if (*ret_fn)
        return 0;
    log_debug("xen: %s has no %s", XENSTATS_XENCTRL_SONAME, name);
    return -ELIBBAD;
}

static void load(void)
{
    struct {
        const char *name;
        void **fn;
    } const table[] = {
        {"xc_interface_open", (void **)&calls.interface_open},
        {"xc_interface_close", (void **)&calls.interface_close},
        {"xc_domain_getinfolist", (void **)&calls.domain_getinfolist},
        {"xc_vcpu_getinfo", (void **)&calls.vcpu_getinfo},
        {"xc_version", (void **)&calls.version},
        {"xc_sched_id", (void **)&calls.sched_id},
        {"xc_physinfo", (void **)&calls.physinfo},
        {"xc_getcpuinfo", (void **)&calls.getcpuinfo},
    };
    void *lib = dlopen(XENSTATS_XENCTRL_SONAME, RTLD_NOW | RTLD_LOCAL);
    size_t i;

    if (!lib) {
        log_debug("xen: cannot load %s: %s", XENSTATS_XENCTRL_SONAME, dlerror());
        load_error = ELIBACC;
        return;
    }
    for (i = 0; i < ARRAY_SIZE(table); i++) {
        if (resolve(lib, table[i].name, table[i].fn) < 0) {
            load_error = ELIBBAD;
            /* Never used half-resolved; the library stays loaded, as
             * libxenctrl may hold process-wide state once loaded. */
            return;
        }
    }
}

const struct xen_ctrl *xen_ctrl_load(void)
{
    pthread_once(&once, load);
    if (load_error) {
        errno = load_error;
        return NULL;
    }
    return &calls;
}
