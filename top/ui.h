/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* top's live view (top_ui.c, ncursesw). */
#ifndef XENSTATS_TOP_UI_H
#define XENSTATS_TOP_UI_H

#include <stdbool.h>
#include <stdint.h>

#include "top/sort.h"
#include "top/source.h"

struct top_ui_options {
    uint64_t delay_ns;
    uint64_t iterations; /* 0: until quit */
    enum top_sort_key sort;
    bool reverse;
};

/* The live view until q, a signal or the iterations are done; exit status. */
int top_ui_run(struct top_source *src, struct top_snapshot *first, const struct top_ui_options *opts);

#endif
