/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PV stats interface (docs/pv-stats.md): providers in guests publish sets
 * of typed statistics in granted pages advertised in xenstore; a monitor
 * in the toolstack domain samples them over event channels.
 *
 * Both sides: a provider needs only <xenstats/pv_provider.h>, a monitor
 * only <xenstats/pv_monitor.h>.  Conventions: xenstats.h.
 */
#ifndef XENSTATS_PV_H
#define XENSTATS_PV_H

#include <xenstats/pv_monitor.h>
#include <xenstats/pv_provider.h>

#endif /* XENSTATS_PV_H */
