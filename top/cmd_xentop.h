/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* xenstats xentop's batch loop (cmd_xentop.c), which `xenstats top --batch --xentop` runs too. */
#ifndef XENSTATS_TOP_CMD_XENTOP_H
#define XENSTATS_TOP_CMD_XENTOP_H

#include <stdint.h>

#include "top/source.h"
#include "top/xentop.h"

/*
 * Print `xentop -b`'s rounds from src: the first at once, then one every
 * delay_ns, `iterations` of them (0: until SIGINT/SIGTERM).  Returns the
 * exit status, having said why on stderr as "xenstats CMD: ...".
 */
int xentop_run_batch(const char *cmd, struct top_source *src, const struct xentop_options *show, uint64_t delay_ns,
                     uint64_t iterations);

#endif
