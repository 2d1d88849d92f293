// SPDX-License-Identifier: GPL-2.0-only
/*
 * Publisher of every xen-blkfront disk: the figures of
 * /sys/block/<disk>/stat, from the block layer's statistics of the whole
 * disk, one set "disk <disk>" per disk of the provider "blkfront", named
 * by the naming convention of docs/pv-stats.md as xenstats publish names
 * /proc/diskstats: counters end in _total, sectors are bytes, times are
 * doubles in seconds.  The block layer has
 * no notifier for disks coming and going, so a scan every second finds
 * them: the disks that are children of the xenbus frontend devices of
 * type "vbd".  A dummy frontend driver, which matches no device, gives the
 * xenbus frontend bus to scan, and a notifier on that bus tells when
 * xen-blkfront lets a disk go.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/part_stat.h>
#include <linux/percpu-refcount.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <xen/xenbus.h>

#include "xenstats_provider.h"
#include "xenstats_internal.h"

#define SCAN_INTERVAL (HZ)

/* /sys/block/<disk>/stat, in its order (Documentation/block/stat.rst) */
enum {
	BS_READ_IOS, BS_READ_MERGES, BS_READ_SECTORS, BS_READ_TICKS,
	BS_WRITE_IOS, BS_WRITE_MERGES, BS_WRITE_SECTORS, BS_WRITE_TICKS,
	BS_IN_FLIGHT, BS_IO_TICKS, BS_TIME_IN_QUEUE,
	BS_DISCARD_IOS, BS_DISCARD_MERGES, BS_DISCARD_SECTORS, BS_DISCARD_TICKS,
	BS_FLUSH_IOS, BS_FLUSH_TICKS, BS_SECTORS_TOTAL, BS_NR_FIGURES
};

static const char *const names[BS_NR_FIGURES] = {
	[BS_READ_IOS] = "reads_completed_total",
	[BS_READ_MERGES] = "reads_merged_total",
	[BS_READ_SECTORS] = "read_bytes_total",
	[BS_READ_TICKS] = "read_time_seconds_total",
	[BS_WRITE_IOS] = "writes_completed_total",
	[BS_WRITE_MERGES] = "writes_merged_total",
	[BS_WRITE_SECTORS] = "written_bytes_total",
	[BS_WRITE_TICKS] = "write_time_seconds_total",
	[BS_IN_FLIGHT] = "io_in_progress",
	[BS_IO_TICKS] = "io_time_seconds_total",
	[BS_TIME_IN_QUEUE] = "io_weighted_time_seconds_total",
	[BS_DISCARD_IOS] = "discards_completed_total",
	[BS_DISCARD_MERGES] = "discards_merged_total",
	[BS_DISCARD_SECTORS] = "discarded_bytes_total",
	[BS_DISCARD_TICKS] = "discard_time_seconds_total",
	[BS_FLUSH_IOS] = "flushes_completed_total",
	[BS_FLUSH_TICKS] = "flush_time_seconds_total",
	[BS_SECTORS_TOTAL] = "size_bytes",
};

/* The times: nanoseconds in v[], published as doubles in seconds. */
static bool is_time(unsigned int i)
{
	return i == BS_READ_TICKS || i == BS_WRITE_TICKS || i == BS_IO_TICKS ||
	       i == BS_TIME_IN_QUEUE || i == BS_DISCARD_TICKS ||
	       i == BS_FLUSH_TICKS;
}

struct blkfront_pub {
	struct list_head node;
	struct gendisk *disk;		/* a reference on its device */
	struct xenstats_set *set;
	bool seen;			/* by the current scan */
	bool dead;			/* its driver is unbinding: under dead_lock */
};

static struct xenstats_provider *provider;
static DEFINE_MUTEX(pub_lock);
/*
 * The refresh against xen-blkfront's removal, which frees the disk's tag
 * set (read for in_flight): the bus notifier marks the disk dead before
 * the driver's remove() runs, and the refresh reads nothing of a dead one.
 */
static DEFINE_MUTEX(dead_lock);
static LIST_HEAD(pubs);
static void scan_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(scan_work, scan_fn);
static bool scanning;

static const struct xenbus_device_id no_ids[] = {
	{ "xenstats-none" },
	{ "" }
};

static int no_probe(struct xenbus_device *dev, const struct xenbus_device_id *id)
{
	return -ENODEV;
}

static void no_changed(struct xenbus_device *dev, enum xenbus_state state)
{
}

static struct xenbus_driver bus_finder = {
	.ids = no_ids,
	.probe = no_probe,
	.otherend_changed = no_changed,
};

struct inflight {
	struct request_queue *q;
	unsigned int n;
};

static bool count_inflight(struct request *rq, void *data)
{
	struct inflight *f = data;

	/* what blk_mq_in_flight() counts for the whole disk */
	if (rq->q == f->q && rq->part && blk_mq_rq_state(rq) == MQ_RQ_IN_FLIGHT)
		f->n++;
	return true;
}

/*
 * The requests in flight, as blk_mq_in_flight() counts them for
 * /sys/block/<disk>/stat.  The walk holds a reference on the queue, as
 * the block layer's own iterators do: blkfront_resume() (after a restore
 * or a migration) calls blk_mq_update_nr_hw_queues(), which frees tags of
 * the tag set, but only once the queue is frozen, and a frozen queue has
 * no reference left.  When none can be taken the queue is frozen or
 * going away, and nothing is in flight.
 */
static void count_queue_inflight(struct inflight *f)
{
	if (!queue_is_mq(f->q) || !percpu_ref_tryget(&f->q->q_usage_counter))
		return;
	if (f->q->tag_set)
		blk_mq_tagset_busy_iter(f->q->tag_set, count_inflight, f);
	percpu_ref_put(&f->q->q_usage_counter);
}

/*
 * The IEEE 754 binary64 bits of the double nearest to ns / 10^9 (ties to
 * even), by integer arithmetic: the kernel uses no floating point.
 * ns << shift, below 2^84, is held as hi:lo and divided by 10^9 in 32-bit
 * steps; the shift makes the quotient the 53-bit significand.
 */
static u64 seconds_bits(u64 ns)
{
	u64 hi, lo, q;
	u32 r = 0;
	int shift;

	if (!ns)
		return 0;
	/* ns << shift in [2^82, 2^83): a quotient in [2^52, 2^54) */
	for (shift = 83 - fls64(ns);; shift--) {
		if (shift >= 64) {
			hi = ns << (shift - 64);
			lo = 0;
		} else {
			hi = ns >> (64 - shift);
			lo = ns << shift;
		}
		/* hi < 2^19: two steps of 32 bits, each below 2^62 */
		q = div_u64_rem(hi << 32 | lo >> 32, NSEC_PER_SEC, &r) << 32;
		q |= div_u64_rem((u64)r << 32 | (lo & U32_MAX), NSEC_PER_SEC,
				 &r);
		if (q < BIT_ULL(53))
			break;
	}
	/* to nearest, ties to even */
	if (2ULL * r > NSEC_PER_SEC || (2ULL * r == NSEC_PER_SEC && (q & 1)))
		q++;
	if (q == BIT_ULL(53)) {
		q >>= 1;
		shift--;
	}
	/* q * 2^-shift with q in [2^52, 2^53): exponent 52 - shift */
	return (u64)(1075 - shift) << 52 | (q & (BIT_ULL(52) - 1));
}

static int refresh(struct xenstats_set *set, void *data)
{
	struct blkfront_pub *pub = data;
	struct block_device *part = pub->disk->part0;
	struct inflight f = { .q = pub->disk->queue };
	u64 v[BS_NR_FIGURES];
	unsigned int i;

	mutex_lock(&dead_lock);
	if (pub->dead) {
		mutex_unlock(&dead_lock);
		return -ENODEV;
	}
	count_queue_inflight(&f);
	v[BS_READ_IOS] = part_stat_read(part, ios[STAT_READ]);
	v[BS_READ_MERGES] = part_stat_read(part, merges[STAT_READ]);
	v[BS_READ_SECTORS] = part_stat_read(part, sectors[STAT_READ]);
	v[BS_READ_TICKS] = part_stat_read(part, nsecs[STAT_READ]);
	v[BS_WRITE_IOS] = part_stat_read(part, ios[STAT_WRITE]);
	v[BS_WRITE_MERGES] = part_stat_read(part, merges[STAT_WRITE]);
	v[BS_WRITE_SECTORS] = part_stat_read(part, sectors[STAT_WRITE]);
	v[BS_WRITE_TICKS] = part_stat_read(part, nsecs[STAT_WRITE]);
	v[BS_IN_FLIGHT] = f.n;
	v[BS_IO_TICKS] = jiffies64_to_nsecs(part_stat_read(part, io_ticks));
	v[BS_TIME_IN_QUEUE] = part_stat_read(part, nsecs[STAT_READ]) +
			      part_stat_read(part, nsecs[STAT_WRITE]) +
			      part_stat_read(part, nsecs[STAT_DISCARD]) +
			      part_stat_read(part, nsecs[STAT_FLUSH]);
	v[BS_DISCARD_IOS] = part_stat_read(part, ios[STAT_DISCARD]);
	v[BS_DISCARD_MERGES] = part_stat_read(part, merges[STAT_DISCARD]);
	v[BS_DISCARD_SECTORS] = part_stat_read(part, sectors[STAT_DISCARD]);
	v[BS_DISCARD_TICKS] = part_stat_read(part, nsecs[STAT_DISCARD]);
	v[BS_FLUSH_IOS] = part_stat_read(part, ios[STAT_FLUSH]);
	v[BS_FLUSH_TICKS] = part_stat_read(part, nsecs[STAT_FLUSH]);
	v[BS_SECTORS_TOTAL] = get_capacity(pub->disk);
	mutex_unlock(&dead_lock);
	/* sectors are 512 bytes, whatever the disk's block size */
	v[BS_READ_SECTORS] <<= SECTOR_SHIFT;
	v[BS_WRITE_SECTORS] <<= SECTOR_SHIFT;
	v[BS_DISCARD_SECTORS] <<= SECTOR_SHIFT;
	v[BS_SECTORS_TOTAL] <<= SECTOR_SHIFT;
	for (i = 0; i < BS_NR_FIGURES; i++) {
		if (is_time(i))
			xenstats_set_double_bits(set, i, seconds_bits(v[i]));
		else
			xenstats_set_u64(set, i, v[i]);
	}
	return 0;
}

static struct blkfront_pub *find_pub(struct gendisk *disk)
{
	struct blkfront_pub *pub;

	list_for_each_entry(pub, &pubs, node)
		if (pub->disk == disk)
			return pub;
	return NULL;
}

static void add_disk_pub(struct gendisk *disk)
{
	struct blkfront_pub *pub = kzalloc(sizeof(*pub), GFP_KERNEL);
	char name[sizeof("disk ") + DISK_NAME_LEN];
	int i, r = -ENOMEM;

	if (!pub)
		goto fail;
	snprintf(name, sizeof(name), "disk %s", disk->disk_name);
	pub->set = xenstats_set_add(provider, name, refresh, pub);
	if (IS_ERR(pub->set)) {
		r = PTR_ERR(pub->set);
		goto fail;
	}
	for (i = 0; i < BS_NR_FIGURES; i++) {
		r = xenstats_set_declare(pub->set, names[i],
					 is_time(i) ? XENSTATS_DOUBLE :
					 XENSTATS_U64);
		if (r < 0)
			goto fail_set;
	}
	/* Keeps the disk and its statistics in memory after del_gendisk(),
	 * until the set is withdrawn.
	 */
	get_device(disk_to_dev(disk));
	pub->disk = disk;
	pub->seen = true;
	list_add_tail(&pub->node, &pubs);
	r = xenstats_set_publish(pub->set);
	if (r)
		pr_warn("%s: not published: %d\n", disk->disk_name, r);
	return;

fail_set:
	xenstats_set_withdraw(pub->set);
fail:
	kfree(pub);
	pr_warn("%s: cannot publish: %d\n", disk->disk_name, r);
}

static void remove_pub(struct blkfront_pub *pub)
{
	list_del(&pub->node);
	xenstats_set_withdraw(pub->set);	/* the refresh runs no more */
	put_device(disk_to_dev(pub->disk));
	kfree(pub);
}

static int disk_child(struct device *dev, void *data)
{
	struct gendisk *disk;
	struct blkfront_pub *pub;

	if (!dev->type || !dev->type->name || strcmp(dev->type->name, "disk"))
		return 0;
	disk = dev_to_disk(dev);
	if (!disk_live(disk))
		return 0;
	pub = find_pub(disk);
	if (pub)
		pub->seen = true;
	else
		add_disk_pub(disk);
	return 0;
}

static int vbd_device(struct device *dev, void *data)
{
	if (strncmp(dev_name(dev), "vbd-", 4))
		return 0;
	return device_for_each_child(dev, NULL, disk_child);
}

static int bus_event(struct notifier_block *nb, unsigned long action,
		     void *data)
{
	struct device *dev = data;
	struct blkfront_pub *pub;

	if (action != BUS_NOTIFY_UNBIND_DRIVER ||
	    strncmp(dev_name(dev), "vbd-", 4))
		return NOTIFY_DONE;
	mutex_lock(&pub_lock);
	mutex_lock(&dead_lock);
	list_for_each_entry(pub, &pubs, node)
		if (disk_to_dev(pub->disk)->parent == dev)
			pub->dead = true;
	mutex_unlock(&dead_lock);
	mutex_unlock(&pub_lock);
	return NOTIFY_DONE;
}

static struct notifier_block bus_nb = {
	.notifier_call = bus_event,
};

static void scan_fn(struct work_struct *work)
{
	struct blkfront_pub *pub, *tmp;

	mutex_lock(&pub_lock);
	if (!scanning)
		goto out;
	list_for_each_entry(pub, &pubs, node)
		pub->seen = false;
	bus_for_each_dev(bus_finder.driver.bus, NULL, NULL, vbd_device);
	list_for_each_entry_safe(pub, tmp, &pubs, node)
		/* A dead one stays, answering nothing, until del_gendisk():
		 * gone from the list, a scan would publish it again.
		 */
		if (!pub->seen || !disk_live(pub->disk))
			remove_pub(pub);
	schedule_delayed_work(&scan_work, SCAN_INTERVAL);
out:
	mutex_unlock(&pub_lock);
}

int xenstats_blk_init(void)
{
	int r;

	provider = xenstats_provider_register("blkfront");
	if (IS_ERR(provider))
		return PTR_ERR(provider);
	r = xenbus_register_frontend(&bus_finder);
	if (r) {
		xenstats_provider_unregister(provider);
		return r;
	}
	r = bus_register_notifier(bus_finder.driver.bus, &bus_nb);
	if (r) {
		xenbus_unregister_driver(&bus_finder);
		xenstats_provider_unregister(provider);
		return r;
	}
	scanning = true;
	schedule_delayed_work(&scan_work, 0);
	return 0;
}

void xenstats_blk_exit(void)
{
	struct blkfront_pub *pub, *tmp;

	mutex_lock(&pub_lock);
	scanning = false;
	mutex_unlock(&pub_lock);
	cancel_delayed_work_sync(&scan_work);
	mutex_lock(&pub_lock);
	list_for_each_entry_safe(pub, tmp, &pubs, node)
		remove_pub(pub);
	mutex_unlock(&pub_lock);
	bus_unregister_notifier(bus_finder.driver.bus, &bus_nb);
	xenbus_unregister_driver(&bus_finder);
	xenstats_provider_unregister(provider);
}
