/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running an emulated host: the settings of `xenstats emu run` (from the
 * command line and a --config file), and setting up, starting and closing
 * the host with its event loop (scheduler tick, signals, control socket).
 * It prints nothing: a failure is -errno with why in the caller's buffer.
 */
#ifndef XENSTATS_EMU_RUN_H
#define XENSTATS_EMU_RUN_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/control.h"

/* The settings of a run. */
struct emu_run_options {
    uint64_t pcpus, tick, dom0_vcpus, duration;
    uint64_t xs_quota_nodes; /* 0: xenstored's default */
    uint64_t memory, dom0_memory; /* KiB */
    char dir[PATH_MAX - 64];
    const char *config;
    char **specs; /* the command line's (not copied), then the config's (strdup()ed) */
    size_t nspecs, ncli;
};

/* Add a domain spec of the command line (kept, not copied); 0 or -ENOMEM. */
int emu_run_options_add_spec(struct emu_run_options *o, char *spec);
void emu_run_options_free(struct emu_run_options *o);

/*
 * Read o->config's settings and domains (after the command line's), and
 * check every domain's spec before the run directory is touched.  0, or
 * -errno with why in err.
 */
int emu_run_options_load(struct emu_run_options *o, char *err, size_t errlen);

/*
 * The host in o->dir with its event loop, grants, event channels and
 * xenstore.  0, or -errno with why in err; run->loop is NULL after a
 * failure that left nothing to close.
 */
int emu_run_open(struct emu_run *run, const struct emu_run_options *o, char *err, size_t errlen);

/* Domain-0, then each domain of the options, the config's first.  0 or
 * -errno with why in err. */
int emu_run_create_domains(struct emu_run *run, const struct emu_run_options *o, char *err, size_t errlen);

/*
 * The scheduler's timerfd, a signalfd of `mask` (blocked by the caller) and
 * the control socket, in the loop; the loop stops at the first signal, or
 * after o->duration.  0 or -errno with why in err.
 */
int emu_run_start(struct emu_run *run, const struct emu_run_options *o, const sigset_t *mask, char *err,
                  size_t errlen);

/* Everything emu_run_open() and emu_run_start() set up, the control
 * socket's file too. */
void emu_run_close(struct emu_run *run, const char *dir);

#endif
