// SPDX-License-Identifier: GPL-2.0-only
/*
 * xenstats: the PV stats provider in the kernel, and publishers of what
 * Linux's own Xen frontends count (netfront, blkfront, the balloon).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <xen/xen.h>

#include "xenstats_internal.h"

static bool publish_net = true;
module_param(publish_net, bool, 0444);
MODULE_PARM_DESC(publish_net, "Publish every xen-netfront interface");
static bool publish_blk = true;
module_param(publish_blk, bool, 0444);
MODULE_PARM_DESC(publish_blk, "Publish every xen-blkfront disk");
static bool publish_balloon = true;
module_param(publish_balloon, bool, 0444);
MODULE_PARM_DESC(publish_balloon, "Publish the balloon driver's figures");

static int __init xenstats_init(void)
{
	int r;

	if (!xen_domain())
		return -ENODEV;
	r = xenstats_core_init();
	if (r)
		return r;
	if (publish_balloon) {
		r = xenstats_balloon_init();
		if (r)
			goto fail_core;
	}
	if (publish_blk) {
		r = xenstats_blk_init();
		if (r)
			goto fail_balloon;
	}
	if (publish_net) {
		r = xenstats_net_init();
		if (r)
			goto fail_blk;
	}
	return 0;

fail_blk:
	if (publish_blk)
		xenstats_blk_exit();
fail_balloon:
	if (publish_balloon)
		xenstats_balloon_exit();
fail_core:
	xenstats_core_exit();
	return r;
}

static void __exit xenstats_exit(void)
{
	if (publish_net)
		xenstats_net_exit();
	if (publish_blk)
		xenstats_blk_exit();
	if (publish_balloon)
		xenstats_balloon_exit();
	xenstats_core_exit();
}

module_init(xenstats_init);
module_exit(xenstats_exit);
MODULE_DESCRIPTION("Xen PV stats provider and publishers for the Xen frontends");
MODULE_LICENSE("GPL");
