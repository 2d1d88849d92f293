// SPDX-License-Identifier: GPL-2.0-only
/*
 * Publisher of the balloon driver's figures, the values of
 * /sys/devices/system/xen_memory/xen_memory0/, read from balloon_stats.
 */
#include <linux/err.h>
#include <linux/mm.h>
#include <xen/balloon.h>

#include "xenstats_provider.h"
#include "xenstats_internal.h"

#define KB(pages) ((u64)(pages) << (PAGE_SHIFT - 10))

static struct xenstats_provider *provider;
static struct xenstats_set *set;

enum {
	TARGET_KB, CURRENT_KB, LOW_KB, HIGH_KB, SCHEDULE_DELAY,
	MAX_SCHEDULE_DELAY, RETRY_COUNT, MAX_RETRY_COUNT, NR_FIGURES
};

static const char *const names[NR_FIGURES] = {
	[TARGET_KB] = "target_kb",
	[CURRENT_KB] = "current_kb",
	[LOW_KB] = "low_kb",
	[HIGH_KB] = "high_kb",
	[SCHEDULE_DELAY] = "schedule_delay",
	[MAX_SCHEDULE_DELAY] = "max_schedule_delay",
	[RETRY_COUNT] = "retry_count",
	[MAX_RETRY_COUNT] = "max_retry_count",
};

static int refresh(struct xenstats_set *s, void *data)
{
	/* Unlocked word reads, as the driver's own sysfs files do. */
	xenstats_set_u64(s, TARGET_KB, KB(READ_ONCE(balloon_stats.target_pages)));
	xenstats_set_u64(s, CURRENT_KB, KB(READ_ONCE(balloon_stats.current_pages)));
	xenstats_set_u64(s, LOW_KB, KB(READ_ONCE(balloon_stats.balloon_low)));
	xenstats_set_u64(s, HIGH_KB, KB(READ_ONCE(balloon_stats.balloon_high)));
	xenstats_set_u64(s, SCHEDULE_DELAY, READ_ONCE(balloon_stats.schedule_delay));
	xenstats_set_u64(s, MAX_SCHEDULE_DELAY,
			 READ_ONCE(balloon_stats.max_schedule_delay));
	xenstats_set_u64(s, RETRY_COUNT, READ_ONCE(balloon_stats.retry_count));
	xenstats_set_u64(s, MAX_RETRY_COUNT,
			 READ_ONCE(balloon_stats.max_retry_count));
	return 0;
}

int xenstats_balloon_init(void)
{
	int i, r;

	provider = xenstats_provider_register("balloon");
	if (IS_ERR(provider))
		return PTR_ERR(provider);
	set = xenstats_set_add(provider, "xen_memory0", refresh, NULL);
	if (IS_ERR(set)) {
		r = PTR_ERR(set);
		goto fail;
	}
	for (i = 0; i < NR_FIGURES; i++) {
		r = xenstats_set_declare(set, names[i], XENSTATS_U64);
		if (r < 0)
			goto fail;
	}
	r = xenstats_set_publish(set);
	if (r)
		goto fail;
	return 0;
fail:
	xenstats_provider_unregister(provider);	/* withdraws the set */
	return r;
}

void xenstats_balloon_exit(void)
{
	xenstats_provider_unregister(provider);
}
