/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* procfs.c's helpers that its unit tests call directly; not an API. */
#ifndef XENSTATS_GUEST_PROCFS_PRIVATE_H
#define XENSTATS_GUEST_PROCFS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * meminfo's key (n bytes, not NUL-terminated) as a statistic name with
 * `suffix`, into out; false when the key has other characters or the
 * result does not fit.
 */
bool meminfo_name(const char *key, size_t n, const char *suffix, char *out, size_t outlen);

/* ticks / hz in seconds, as exact as a double allows. */
double ticks_to_seconds(uint64_t ticks, uint64_t hz);

#endif
