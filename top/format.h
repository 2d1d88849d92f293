/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* top's columns as text (top_format.c): the live view's rows and the batch modes. */
#ifndef XENSTATS_TOP_FORMAT_H
#define XENSTATS_TOP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "top/snapshot.h"

/*
 * Width of the NAME column: the longest name, at least 5, at most `cap`
 * (names cut to fit end in '~').
 */
int top_name_width(const struct top_snapshot *snap, int cap);

/*
 * The domain list's header and rows as text, columns separated by spaces.
 * The header marks the sort column (`sort` >= 0) with '*'; with `batch`,
 * spaces inside names are written \x20 so every column is one word.
 */
void top_format_header(char *buf, size_t len, int name_width, int sort);
void top_format_row(char *buf, size_t len, const struct top_domain *d, int name_width, bool batch);

/* Batch mode: the header line and one line per domain, in `order`. */
void top_print_batch(FILE *out, const struct top_snapshot *snap, const size_t *order);

#endif
