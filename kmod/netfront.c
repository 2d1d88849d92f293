// SPDX-License-Identifier: GPL-2.0-only
/*
 * Publisher of every xen-netfront interface: its rtnl_link_stats64 (the
 * values of /sys/class/net/<dev>/statistics/) and its ethtool statistics,
 * one set "net <dev>" per interface of the provider "netfront", every
 * counter named with _total (docs/pv-stats.md).  Interfaces are found
 * with a netdevice notifier, so they come and go with the driver.
 * xen-netfront keeps its counters per CPU, not per queue, so there is
 * nothing per queue to publish beyond the number of queues.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/ethtool.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "xenstats_provider.h"
#include "xenstats_internal.h"

#define MAX_ETHTOOL 64

struct netfront_pub {
	struct list_head node;
	struct net_device *dev;		/* NULL once unregistered */
	netdevice_tracker tracker;
	struct xenstats_set *set;	/* NULL while its name is busy */
	unsigned int first_ethtool, nr_ethtool;
	u64 *ethtool;
};

/* counters, named as the naming convention of docs/pv-stats.md wants */
#define LINK_STAT(f) { #f "_total", offsetof(struct rtnl_link_stats64, f) }
static const struct {
	const char *name;
	size_t offset;
} link_stats[] = {
	LINK_STAT(rx_packets), LINK_STAT(tx_packets), LINK_STAT(rx_bytes),
	LINK_STAT(tx_bytes), LINK_STAT(rx_errors), LINK_STAT(tx_errors),
	LINK_STAT(rx_dropped), LINK_STAT(tx_dropped), LINK_STAT(multicast),
	LINK_STAT(collisions), LINK_STAT(rx_length_errors),
	LINK_STAT(rx_over_errors), LINK_STAT(rx_crc_errors),
	LINK_STAT(rx_frame_errors), LINK_STAT(rx_fifo_errors),
	LINK_STAT(rx_missed_errors), LINK_STAT(tx_aborted_errors),
	LINK_STAT(tx_carrier_errors), LINK_STAT(tx_fifo_errors),
	LINK_STAT(tx_heartbeat_errors), LINK_STAT(tx_window_errors),
	LINK_STAT(rx_compressed), LINK_STAT(tx_compressed),
	LINK_STAT(rx_nohandler),
};

#define QUEUES_INDEX ARRAY_SIZE(link_stats)

static struct xenstats_provider *provider;
static DEFINE_MUTEX(pub_lock);	/* pubs, and each pub->dev */
static LIST_HEAD(pubs);
static LIST_HEAD(dying);
static void reap_fn(struct work_struct *work);
static DECLARE_WORK(reap_work, reap_fn);

/* A xenbus frontend device of type "vif" is xen-netfront's. */
static bool is_netfront(struct net_device *dev)
{
	struct device *parent = dev->dev.parent;

	return parent && parent->bus && !strcmp(parent->bus->name, "xen") &&
	       !strncmp(dev_name(parent), "vif-", 4);
}

static int refresh(struct xenstats_set *set, void *data)
{
	struct netfront_pub *pub = data;
	struct rtnl_link_stats64 stats;
	unsigned int i;
	int r = 0;

	mutex_lock(&pub_lock);
	if (!pub->dev) {
		r = -ENODEV;
		goto out;
	}
	dev_get_stats(pub->dev, &stats);
	for (i = 0; i < ARRAY_SIZE(link_stats); i++)
		xenstats_set_u64(set, i,
				 *(u64 *)((u8 *)&stats + link_stats[i].offset));
	xenstats_set_u64(set, QUEUES_INDEX, pub->dev->real_num_tx_queues);
	if (pub->nr_ethtool) {
		struct ethtool_stats es = { .n_stats = pub->nr_ethtool };

		/* the same call as ethtool -S, whose counts we fixed at add */
		pub->dev->ethtool_ops->get_ethtool_stats(pub->dev, &es,
							 pub->ethtool);
		for (i = 0; i < pub->nr_ethtool; i++)
			xenstats_set_u64(set, pub->first_ethtool + i,
					 pub->ethtool[i]);
	}
out:
	mutex_unlock(&pub_lock);
	return r;
}

static void declare_ethtool(struct netfront_pub *pub, struct xenstats_set *set,
			    struct net_device *dev)
{
	const struct ethtool_ops *ops = dev->ethtool_ops;
	u8 *strings;
	int n, i;

	if (!ops || !ops->get_sset_count || !ops->get_strings ||
	    !ops->get_ethtool_stats)
		return;
	n = ops->get_sset_count(dev, ETH_SS_STATS);
	if (n <= 0 || n > MAX_ETHTOOL)
		return;
	strings = kcalloc(n, ETH_GSTRING_LEN, GFP_KERNEL);
	if (!pub->ethtool)	/* a second try keeps the first's */
		pub->ethtool = kcalloc(MAX_ETHTOOL, sizeof(u64), GFP_KERNEL);
	if (!strings || !pub->ethtool)
		goto out;
	ops->get_strings(dev, ETH_SS_STATS, strings);
	pub->nr_ethtool = 0;
	pub->first_ethtool = xenstats_set_count(set);
	for (i = 0; i < n; i++) {
		char name[ETH_GSTRING_LEN + sizeof("_total")];

		/* ethtool's statistics are counters: xen-netfront's one is */
		snprintf(name, sizeof(name), "%.*s_total", ETH_GSTRING_LEN,
			 (char *)strings + i * ETH_GSTRING_LEN);
		/* Only a complete list keeps the indices of the driver's. */
		if (xenstats_set_declare(set, name, XENSTATS_U64) < 0) {
			pr_warn("%s: ethtool statistic %d not published\n",
				dev->name, i);
			goto out;
		}
		pub->nr_ethtool = i + 1;
	}
out:
	kfree(strings);
}

/*
 * Under RTNL, @pub on pubs with no set: its set, declared and published.
 * -EEXIST when the set of an interface of the same name that just went
 * (a vif detached and attached again, a rename and back) is still being
 * withdrawn, which may take 2 s: reap_fn() tries again once it is gone.
 */
static int publish_dev(struct netfront_pub *pub)
{
	struct net_device *dev = pub->dev;
	char name[sizeof("net ") + IFNAMSIZ];
	struct xenstats_set *set;
	unsigned int i;
	int r;

	snprintf(name, sizeof(name), "net %s", dev->name);
	set = xenstats_set_add(provider, name, refresh, pub);
	if (IS_ERR(set))
		return PTR_ERR(set);
	for (i = 0; i < ARRAY_SIZE(link_stats); i++) {
		r = xenstats_set_declare(set, link_stats[i].name,
					 XENSTATS_U64);
		if (r < 0)
			goto fail;
	}
	r = xenstats_set_declare(set, "queues", XENSTATS_U64);
	if (r < 0)
		goto fail;
	declare_ethtool(pub, set, dev);
	r = xenstats_set_publish(set);
	if (r)
		goto fail;
	mutex_lock(&pub_lock);
	pub->set = set;
	mutex_unlock(&pub_lock);
	return 0;

fail:
	xenstats_set_withdraw(set);	/* after it, no refresh runs */
	pub->nr_ethtool = 0;
	return r;
}

/* Under RTNL, from the notifier. */
static void add_dev(struct net_device *dev)
{
	struct netfront_pub *pub = kzalloc(sizeof(*pub), GFP_KERNEL);
	int r;

	if (!pub) {
		pr_warn("%s: cannot publish: %d\n", dev->name, -ENOMEM);
		return;
	}
	netdev_hold(dev, &pub->tracker, GFP_KERNEL);
	mutex_lock(&pub_lock);
	pub->dev = dev;
	list_add_tail(&pub->node, &pubs);
	mutex_unlock(&pub_lock);
	r = publish_dev(pub);
	if (r == -EEXIST)
		pr_info("%s: its name is busy with a withdrawal: published after it\n",
			dev->name);
	else if (r)
		pr_warn("%s: cannot publish: %d\n", dev->name, r);
}

/*
 * Under RTNL: let the device go at once (unregister_netdevice waits for
 * its references), and withdraw the set from a work item, which may wait
 * up to 2 s for the monitor.
 */
static void remove_dev(struct net_device *dev)
{
	struct netfront_pub *pub, *found = NULL;

	mutex_lock(&pub_lock);
	list_for_each_entry(pub, &pubs, node) {
		if (pub->dev == dev) {
			found = pub;
			break;
		}
	}
	if (found) {
		found->dev = NULL;
		list_move_tail(&found->node, &dying);
	}
	mutex_unlock(&pub_lock);
	if (!found)
		return;
	netdev_put(dev, &found->tracker);
	schedule_work(&reap_work);
}

static void reap_fn(struct work_struct *work)
{
	struct netfront_pub *pub;
	int r;

	for (;;) {
		mutex_lock(&pub_lock);
		pub = list_first_entry_or_null(&dying, struct netfront_pub,
					       node);
		if (pub)
			list_del(&pub->node);
		mutex_unlock(&pub_lock);
		if (!pub)
			break;
		xenstats_set_withdraw(pub->set);	/* accepts NULL */
		kfree(pub->ethtool);
		kfree(pub);
	}
	/*
	 * Their names are free: the interfaces that waited for them.  RTNL
	 * keeps pubs as it is (only the notifier changes it) and each of
	 * its devices registered.
	 */
	rtnl_lock();
	list_for_each_entry(pub, &pubs, node) {
		if (pub->set)
			continue;
		r = publish_dev(pub);
		if (r && r != -EEXIST)	/* -EEXIST: another reap comes */
			pr_warn("%s: cannot publish: %d\n", pub->dev->name, r);
	}
	rtnl_unlock();
}

static bool published(struct net_device *dev)
{
	struct netfront_pub *pub;
	bool found = false;

	mutex_lock(&pub_lock);
	list_for_each_entry(pub, &pubs, node)
		found |= pub->dev == dev;
	mutex_unlock(&pub_lock);
	return found;
}

static int netdev_event(struct notifier_block *nb, unsigned long event,
			void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_REGISTER:
		if (is_netfront(dev))
			add_dev(dev);
		break;
	case NETDEV_UNREGISTER:	/* found by pointer: never keep a device */
		remove_dev(dev);
		break;
	case NETDEV_CHANGENAME:	/* the set is "net <interface>" */
		if (published(dev)) {
			remove_dev(dev);
			add_dev(dev);
		}
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block netdev_nb = {
	.notifier_call = netdev_event,
};

int xenstats_net_init(void)
{
	int r;

	provider = xenstats_provider_register("netfront");
	if (IS_ERR(provider))
		return PTR_ERR(provider);
	/* Replays NETDEV_REGISTER for the interfaces already there. */
	r = register_netdevice_notifier(&netdev_nb);
	if (r)
		xenstats_provider_unregister(provider);
	return r;
}

void xenstats_net_exit(void)
{
	/* Replays NETDEV_UNREGISTER for every interface. */
	unregister_netdevice_notifier(&netdev_nb);
	flush_work(&reap_work);
	reap_fn(NULL);
	xenstats_provider_unregister(provider);
}
