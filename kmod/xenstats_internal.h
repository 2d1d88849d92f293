/* SPDX-License-Identifier: GPL-2.0-only */
/* What main.c calls in the provider core and the publishers. */
#ifndef XENSTATS_INTERNAL_H
#define XENSTATS_INTERNAL_H

int xenstats_core_init(void);
void xenstats_core_exit(void);

int xenstats_net_init(void);
void xenstats_net_exit(void);
int xenstats_blk_init(void);
void xenstats_blk_exit(void);
int xenstats_balloon_init(void);
void xenstats_balloon_exit(void);

#endif /* XENSTATS_INTERNAL_H */
