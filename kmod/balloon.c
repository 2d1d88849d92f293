// SPDX-License-Identifier: GPL-2.0-only
/*
 * Publisher of the balloon driver's figures, the values of
 * /sys/devices/system/xen_memory/xen_memory0/, read from balloon_stats,
 * as the set "balloon" (a group without a device: a domain has one
 * balloon) named by the convention of docs/pv-stats.md: bytes, seconds,
 * every figure a gauge.
 */
#include <linux/err.h>
#include <linux/mm.h>
#include <xen/balloon.h>

#include "xenstats_provider.h"
#include "xenstats_internal.h"

#define BYTES(pages) ((u64)(pages) << PAGE_SHIFT)

static struct xenstats_provider *provider;
static struct xenstats_set *set;

enum {
	BAL_TARGET, BAL_CURRENT, BAL_LOW, BAL_HIGH, BAL_SCHEDULE_DELAY,
	BAL_MAX_SCHEDULE_DELAY, BAL_RETRY_COUNT, BAL_MAX_RETRY_COUNT,
	BAL_NR_FIGURES
};

/*
 * The delays are whole seconds in the driver; the retry figures are no
 * counters (the count restarts at 0 when ballooning succeeds), and a name
 * ending in _count is refused by the convention.
 */
static const char *const names[BAL_NR_FIGURES] = {
	[BAL_TARGET] = "target_bytes",
	[BAL_CURRENT] = "current_bytes",
	[BAL_LOW] = "low_bytes",
	[BAL_HIGH] = "high_bytes",
	[BAL_SCHEDULE_DELAY] = "schedule_delay_seconds",
	[BAL_MAX_SCHEDULE_DELAY] = "max_schedule_delay_seconds",
	[BAL_RETRY_COUNT] = "retries",
	[BAL_MAX_RETRY_COUNT] = "max_retries",
};

static int refresh(struct xenstats_set *s, void *data)
{
	/* Unlocked word reads, as the driver's own sysfs files do. */
	xenstats_set_u64(s, BAL_TARGET,
			 BYTES(READ_ONCE(balloon_stats.target_pages)));
	xenstats_set_u64(s, BAL_CURRENT,
			 BYTES(READ_ONCE(balloon_stats.current_pages)));
	xenstats_set_u64(s, BAL_LOW,
			 BYTES(READ_ONCE(balloon_stats.balloon_low)));
	xenstats_set_u64(s, BAL_HIGH,
			 BYTES(READ_ONCE(balloon_stats.balloon_high)));
	xenstats_set_u64(s, BAL_SCHEDULE_DELAY,
			 READ_ONCE(balloon_stats.schedule_delay));
	xenstats_set_u64(s, BAL_MAX_SCHEDULE_DELAY,
			 READ_ONCE(balloon_stats.max_schedule_delay));
	xenstats_set_u64(s, BAL_RETRY_COUNT,
			 READ_ONCE(balloon_stats.retry_count));
	xenstats_set_u64(s, BAL_MAX_RETRY_COUNT,
			 READ_ONCE(balloon_stats.max_retry_count));
	return 0;
}

int xenstats_balloon_init(void)
{
	int i, r;

	provider = xenstats_provider_register("balloon");
	if (IS_ERR(provider))
		return PTR_ERR(provider);
	set = xenstats_set_add(provider, "balloon", refresh, NULL);
	if (IS_ERR(set)) {
		r = PTR_ERR(set);
		goto fail;
	}
	for (i = 0; i < BAL_NR_FIGURES; i++) {
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
