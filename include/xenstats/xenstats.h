/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libxenstats: statistics plumbing for Xen hosts.
 *
 * Conventions for every function of this library:
 *   - a function returning int returns 0 (or a documented non-negative
 *     value) on success and a negative errno on failure, and also leaves
 *     errno set to the positive value;
 *   - a constructor returns NULL and sets errno on failure;
 *   - output parameters are named ret_* and are left untouched on failure;
 *   - destructors accept NULL;
 *   - the library never prints and never exits; it reports through the log
 *     callback installed with xenstats_set_log().
 */
#ifndef XENSTATS_XENSTATS_H
#define XENSTATS_XENSTATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XENSTATS_VERSION "0.1.0"

enum xenstats_log_level {
    XENSTATS_LOG_ERROR = 0,
    XENSTATS_LOG_WARNING = 1,
    XENSTATS_LOG_INFO = 2,
    XENSTATS_LOG_DEBUG = 3,
};

typedef void (*xenstats_log_fn)(enum xenstats_log_level level, const char *message, void *userdata);

/*
 * Install the process-wide log callback (NULL: discard).  Messages below
 * `max_level` in importance are not formatted at all.
 */
void xenstats_set_log(xenstats_log_fn fn, enum xenstats_log_level max_level, void *userdata);

/* Which implementation of the Xen primitives a host handle uses. */
enum xenstats_backend {
    XENSTATS_BACKEND_AUTO = 0, /* XENSTATS_EMU_DIR set: emu; else xen */
    XENSTATS_BACKEND_EMU = 1,  /* the emulated host of `xenstats emu` */
    XENSTATS_BACKEND_XEN = 2,  /* a real Xen host (libxen*) */
};

struct xenstats_host;

/*
 * Open the host the calling process runs on.  For the emulated host the run
 * directory comes from $XENSTATS_EMU_DIR (default: see xenstats-emu(1)) and
 * the caller's domain from $XENSTATS_EMU_DOMID (default 0).
 * Returns NULL and sets errno: ENOENT (no such host running), ENOTSUP
 * (backend not built in), EACCES.  Caller frees with xenstats_host_close().
 */
struct xenstats_host *xenstats_host_open(enum xenstats_backend backend);
void xenstats_host_close(struct xenstats_host *host);

enum xenstats_backend xenstats_host_backend(const struct xenstats_host *host);
/* Domain id of the calling process. */
uint32_t xenstats_host_self_domid(const struct xenstats_host *host);

#define XENSTATS_DOMAIN_NAME_MAX 64

struct xenstats_domain_info {
    uint32_t domid;
    uint32_t nr_vcpus; /* max_vcpus of the domain */
    char name[XENSTATS_DOMAIN_NAME_MAX];
};

/*
 * List the domains, sorted by domid.  On success *ret_domains points to an
 * array of *ret_count entries that the caller frees with free().
 */
int xenstats_host_list_domains(struct xenstats_host *host, struct xenstats_domain_info **ret_domains,
                               size_t *ret_count);
/* One domain.  -ESRCH when it does not exist. */
int xenstats_host_domain_info(struct xenstats_host *host, uint32_t domid, struct xenstats_domain_info *ret_info);

/* Human readable text of a negative errno returned by this library. */
const char *xenstats_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* XENSTATS_XENSTATS_H */
