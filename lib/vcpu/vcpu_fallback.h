/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef XENSTATS_TOOL_VCPU_FALLBACK_H
#define XENSTATS_TOOL_VCPU_FALLBACK_H

#include <xenstats/vcpu.h>

/*
 * The vCPU statistics of `domid` for a tool: the region when the host has
 * it, else (stock Xen) the hypercall fallback, which is logged once per
 * process.  NULL with errno set to the region's error when neither works.
 */
struct xenstats_vcpu_map *tool_vcpu_map_open(struct xenstats_host *host, uint32_t domid);

/* What tool_vcpu_map_open()'s errno (as -errno) means, for every tool. */
const char *tool_vcpu_open_error(int err);

#endif
