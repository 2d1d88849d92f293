/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulated host's xenstore engine: a tree of nodes with values and
 * per-node permissions, watches and transactions, with C xenstored's
 * semantics and error numbers.  No transport here: xs_wire.c turns wire
 * messages into these calls and xs_server.c moves bytes.
 *
 * A client is a struct xs_conn bound to one domain; the domain decides its
 * rights (domain 0 is privileged) and where relative paths resolve
 * (/local/domain/<id>).  Every operation returns 0 or a negative errno
 * taken from xs_wire.h's xsd_errors (EINVAL, EACCES, ENOENT, ENOSPC,
 * E2BIG, EAGAIN, ...).  Single-threaded: callers serialise.
 */
#ifndef XENSTATS_EMU_XS_STORE_H
#define XENSTATS_EMU_XS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Permission bits, as xenstore_lib.h's XS_PERM_*. */
#define XS_STORE_PERM_NONE 0x00
#define XS_STORE_PERM_READ 0x01
#define XS_STORE_PERM_WRITE 0x02
#define XS_STORE_PERM_BOTH (XS_STORE_PERM_READ | XS_STORE_PERM_WRITE)

/* C xenstored's default quotas; they bind unprivileged domains only. */
#define XS_QUOTA_NODES 1000       /* nodes owned by a domain (ENOSPC) */
#define XS_QUOTA_WATCHES 128      /* watches of a domain (E2BIG) */
#define XS_QUOTA_TRANSACTIONS 10  /* open transactions of a domain (ENOSPC) */
#define XS_QUOTA_ENTRY_SIZE 2048  /* record size of one node (ENOSPC) */
#define XS_QUOTA_PERMS 5          /* entries in a SET_PERMS (ENOSPC) */
#define XS_QUOTA_TX_NODES 1024    /* nodes one transaction touches (ENOSPC) */
#define XS_QUOTA_PATH_LEN 2048    /* path length below a domain's home (EINVAL) */

#define XS_PATH_MAX 3072 /* XENSTORE_ABS_PATH_MAX */
#define XS_DOMID_MAX 0xffff
#define XS_PERMS_MAX 1024 /* bounded by the payload anyway */

struct xs_perm {
    uint32_t domid;
    uint8_t perm; /* XS_STORE_PERM_* */
};

struct xs_store;
struct xs_conn;

/*
 * Watch events are handed to the connection's owner: path as the watcher
 * registered it (relative if it was relative), and the token.
 */
typedef void (*xs_event_fn)(void *data, const char *path, const char *token);

/* NULL and errno.  Starts with "/", "/tool", "/tool/xenstored" like xenstored. */
struct xs_store *xs_store_new(void);
/* The nodes an unprivileged domain may own (xenstored's --entry-nb); 0: XS_QUOTA_NODES. */
void xs_store_set_quota_nodes(struct xs_store *s, unsigned int nodes);
/* Frees every connection still attached too.  Accepts NULL. */
void xs_store_free(struct xs_store *s);

/*
 * Tell the store a domain exists (fires @introduceDomain) or is gone:
 * release fires @releaseDomain, hands the domain's remaining nodes to dom0
 * and drops its entries from other nodes' permissions (as xenstored does
 * since XSA-322).  -EEXIST / -ENOENT.
 */
int xs_store_introduce(struct xs_store *s, uint32_t domid);
int xs_store_release(struct xs_store *s, uint32_t domid);
bool xs_store_is_introduced(struct xs_store *s, uint32_t domid);

/* Number of nodes (for tests and the leak check). */
size_t xs_store_node_count(const struct xs_store *s);

/* A client bound to `domid`; NULL and errno.  Free with xs_conn_free(). */
struct xs_conn *xs_conn_new(struct xs_store *s, uint32_t domid, xs_event_fn fn, void *data);
/* Drops the client's watches and transactions.  Accepts NULL. */
void xs_conn_free(struct xs_conn *c);
uint32_t xs_conn_domid(const struct xs_conn *c);
struct xs_store *xs_conn_store(const struct xs_conn *c);

/*
 * Move a guest's connection to another domain (its domain was migrated,
 * restored or rebooted): it acts as domid from now on, its open
 * transactions are dropped, and its relative watches follow (they name the
 * same path under the new home; absolute ones keep their path).  -EPERM
 * for dom0's connections or to dom0, -ENOMEM, -ENAMETOOLONG (that watch
 * stays where it was).
 */
int xs_conn_move(struct xs_conn *c, uint32_t domid);
/* Fire every watch of the connection once, with its registered path and
 * token, as xenstored does when the resumed kernel registers them again. */
void xst_fire_all_watches(struct xs_conn *c);

/*
 * Path handling, exported for the wire layer and the fuzzers.
 * Canonicalise `path` for domid: relative paths go under
 * /local/domain/<domid>; "@..." stays as it is when allow_special (the
 * watch and permission calls), else is -EINVAL.  Checks xenstored's rules
 * (leading "/", no trailing "/" or "//", characters [A-Za-z0-9-/_@],
 * length).  Writes into buf (XS_PATH_MAX + 1 bytes); -EINVAL otherwise.
 */
int xs_path_canonical(uint32_t domid, bool privileged, bool allow_special, const char *path, char *buf, size_t len);
/*
 * Parse one permission string ("r5", "w0", "b12", "n3").  -EINVAL if
 * malformed.
 */
int xs_perm_parse(const char *text, struct xs_perm *ret_perm);
/* Format into buf; returns the length without NUL or -ENOBUFS. */
int xs_perm_format(const struct xs_perm *perm, char *buf, size_t len);

/* Operations; tx is 0 or a transaction id from xst_transaction_start(). */
int xst_read(struct xs_conn *c, uint32_t tx, const char *path, void *buf, size_t cap, size_t *ret_len);
int xst_write(struct xs_conn *c, uint32_t tx, const char *path, const void *data, size_t len);
int xst_mkdir(struct xs_conn *c, uint32_t tx, const char *path);
int xst_rm(struct xs_conn *c, uint32_t tx, const char *path);
/* Children names, each NUL-terminated, into buf; -E2BIG if they do not fit. */
int xst_directory(struct xs_conn *c, uint32_t tx, const char *path, void *buf, size_t cap, size_t *ret_len);
/*
 * XS_DIRECTORY_PART: "<generation>\0" then the children from byte offset
 * `offset` that fit in cap, and an extra "\0" once the list is complete.
 */
int xst_directory_part(struct xs_conn *c, uint32_t tx, const char *path, size_t offset, void *buf, size_t cap,
                      size_t *ret_len);
int xst_get_perms(struct xs_conn *c, uint32_t tx, const char *path, struct xs_perm *perms, size_t cap,
                 size_t *ret_count);
int xst_set_perms(struct xs_conn *c, uint32_t tx, const char *path, const struct xs_perm *perms, size_t count);

/*
 * xenstored fires every new watch once up front; with fire_initial that
 * happens inside xst_watch(), else the caller calls xst_watch_fire_initial()
 * once it has sent the reply (the wire order is reply, then event).
 */
int xst_watch(struct xs_conn *c, const char *path, const char *token, bool fire_initial);
int xst_watch_fire_initial(struct xs_conn *c, const char *path, const char *token);
int xst_unwatch(struct xs_conn *c, const char *path, const char *token);
/* XS_RESET_WATCHES: drop the client's watches and transactions. */
void xst_reset_watches(struct xs_conn *c);

int xst_transaction_start(struct xs_conn *c, uint32_t tx, uint32_t *ret_id);
/* commit false aborts; commit true gives -EAGAIN on a conflict.  The
 * transaction is gone afterwards either way. */
int xst_transaction_end(struct xs_conn *c, uint32_t tx, bool commit);

#endif
