// SPDX-License-Identifier: GPL-2.0-only
/*
 * The example of docs/kernel-provider.md: a provider "Example" with one
 * set "Counters" of a request counter, a gauge, a double and a text, and
 * (count=N) N more counters for benchmarks.  Each sample counts itself.
 * With timer_us=N, a timer also sets a counter every N microseconds from
 * interrupt context, which the setters allow (the e2e test's stress).
 */
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/utsname.h>
#include <linux/version.h>

#include "../xenstats_provider.h"

static unsigned int count;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "Extra counters in the set (for benchmarks)");
static unsigned int timer_us;
module_param(timer_us, uint, 0444);
MODULE_PARM_DESC(timer_us, "Set a counter from a timer every N us (0: no timer)");

static struct xenstats_provider *provider;
static struct xenstats_set *set;
static int samples_idx, jiffies_idx, ratio_idx, release_idx, extra_idx;
static int ticks_idx = -1;
static u64 samples, ticks;
static struct hrtimer timer;

/* Hard interrupt context: the setters take no lock and may be called here. */
static enum hrtimer_restart tick(struct hrtimer *t)
{
	unsigned int i;

	ticks++;
	xenstats_set_u64(set, ticks_idx, ticks);
	/* every page of the set, the last entry of each */
	for (i = 0; i < count; i += 64)
		xenstats_set_u64(set, extra_idx + i, ticks);
	hrtimer_forward_now(t, ns_to_ktime((u64)timer_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static int refresh(struct xenstats_set *s, void *data)
{
	unsigned int i;

	/* Process context: this could sleep, lock, ask the hardware. */
	xenstats_set_u64(s, samples_idx, ++samples);
	xenstats_set_s64(s, jiffies_idx, (s64)get_jiffies_64());
	xenstats_set_double_bits(s, ratio_idx, 0x3fe0000000000000ULL); /* 0.5 */
	xenstats_set_ascii(s, release_idx, utsname()->release);
	for (i = 0; i < count; i++)
		xenstats_set_u64(s, extra_idx + i, samples + i);
	return 0;
}

static int __init example_init(void)
{
	char name[16];
	unsigned int i;
	int r;

	provider = xenstats_provider_register("Example");
	if (IS_ERR(provider))
		return PTR_ERR(provider);
	set = xenstats_set_add(provider, "Counters", refresh, NULL);
	if (IS_ERR(set)) {
		r = PTR_ERR(set);
		goto fail;
	}
	samples_idx = xenstats_set_declare(set, "samples", XENSTATS_U64);
	jiffies_idx = xenstats_set_declare(set, "jiffies", XENSTATS_S64);
	ratio_idx = xenstats_set_declare(set, "ratio", XENSTATS_DOUBLE);
	release_idx = xenstats_set_declare(set, "kernel release", XENSTATS_ASCII);
	r = min(min(samples_idx, jiffies_idx), min(ratio_idx, release_idx));
	extra_idx = release_idx + 1;
	for (i = 0; r >= 0 && i < count; i++) {
		snprintf(name, sizeof(name), "counter%u", i);
		r = xenstats_set_declare(set, name, XENSTATS_U64);
	}
	if (r >= 0 && timer_us) {
		ticks_idx = xenstats_set_declare(set, "timer ticks",
						 XENSTATS_U64);
		r = ticks_idx;
	}
	if (r < 0)
		goto fail;
	/* Now, or when the toolstack creates `stats`. */
	r = xenstats_set_publish(set);
	if (r)
		goto fail;
	if (timer_us) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
		/* hrtimer_init() is gone from 6.15 */
		hrtimer_setup(&timer, tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
#else
		hrtimer_init(&timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
		timer.function = tick;
#endif
		hrtimer_start(&timer, ns_to_ktime((u64)timer_us * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_HARD);
	}
	return 0;
fail:
	xenstats_provider_unregister(provider);	/* withdraws its sets */
	return r;
}

static void __exit example_exit(void)
{
	if (timer_us)
		hrtimer_cancel(&timer);	/* the set must outlive its setters */
	xenstats_provider_unregister(provider);
}

module_init(example_init);
module_exit(example_exit);
MODULE_DESCRIPTION("Example PV stats provider in the kernel");
MODULE_LICENSE("GPL");
