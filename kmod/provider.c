// SPDX-License-Identifier: GPL-2.0-only
/*
 * The in-kernel PV stats provider: the guest side of docs/pv-stats.md,
 * speaking the bytes of include/xenstats/abi/pv_stats.h.  Publishing
 * follows the design: pages granted read-only to the monitor, the ref
 * keys first and `event-channel` last; withdrawal deletes
 * `event-channel`, waits for the monitor to close its port, then removes
 * the keys.  One xenbus watch on the (relative) `stats` node drives the
 * rest: publishing once the toolstack creates it, and noticing a restore
 * or a migration (the domid changed, every key we wrote is gone).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <asm/xen/hypercall.h>
#include <xen/events.h>
#include <xen/grant_table.h>
#include <xen/interface/event_channel.h>
#include <xen/page.h>
#include <xen/xen.h>
#include <xen/xenbus.h>

#include <xenstats/abi/pv_stats.h>

#include "xenstats_provider.h"
#include "xenstats_internal.h"

#define SET_PATH_MAX 160
#define MAX_PAGES 16	/* 1024 statistics a set */
#define WITHDRAW_TIMEOUT_MS 2000

struct xenstats_provider {
	struct list_head node;		/* in providers */
	struct list_head sets;
	char name[XEN_PV_STATS_NAME_MAX + 1];
	char key[XEN_PV_STATS_NAME_MAX + 1];
	char path[SET_PATH_MAX];	/* stats/<key> */
	bool key_written;
};

/*
 * What the value setters reach, which may run in any context and so take no
 * lock: set under xenstats_lock when the pages are granted, cleared before
 * they are given back, and read under RCU.  descs is fixed by then
 * (declaring is refused once publishing is wanted) and freed only with
 * the set.
 */
struct set_values {
	unsigned int count;
	const struct xen_pv_stats_name_type *descs;
	u8 *pages[MAX_PAGES];
};

struct xenstats_set {
	struct list_head node;		/* in provider->sets */
	struct xenstats_provider *provider;
	char name[XEN_PV_STATS_NAME_MAX + 1];
	char path[SET_PATH_MAX];	/* stats/<provider key>/<set key> */
	char irq_name[24];
	xenstats_refresh_fn refresh;
	void *data;

	struct xen_pv_stats_name_type *descs;
	unsigned int count, cap;
	bool publish_wanted;

	/* Below: only while published, under xenstats_lock. */
	bool published;
	unsigned int nr_pages;
	struct page *name_pages[MAX_PAGES];
	struct page *value_pages[MAX_PAGES];
	grant_ref_t name_refs[MAX_PAGES];
	grant_ref_t value_refs[MAX_PAGES];
	struct set_values __rcu *values;
	domid_t monitor;
	evtchn_port_t port;
	int irq;
	struct xenbus_device xdev;	/* what xenbus_alloc_evtchn() needs */

	/* answer: the refresh, then the notification */
	struct work_struct answer;
	struct mutex answer_lock;	/* answering vs. tearing down */
	bool answering;			/* under answer_lock */
};

/* Every provider and set and every xenbus write of this module. */
static DEFINE_MUTEX(xenstats_lock);
static LIST_HEAD(providers);
static struct workqueue_struct *answer_wq;
static bool watching;
static domid_t self_domid = DOMID_INVALID;

static void rescan_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(rescan_work, rescan_fn);
/*
 * While a set waits for `stats`, the scan also runs again by itself (1 s,
 * doubling to 30 s; a watch event resets it): a watch event lost across a
 * restore must not leave a set unpublished for good.
 */
#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 30000
static unsigned int retry_ms;

/* The design's alphabet: isalnum || ispunct || ' ' in the C locale. */
static bool name_char_ok(char c)
{
	return c >= 0x20 && c <= 0x7e;
}

static int name_check(const char *name)
{
	size_t i, len;

	if (!name)
		return -EINVAL;
	len = strnlen(name, XEN_PV_STATS_NAME_MAX + 1);
	if (!len || len > XEN_PV_STATS_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!name_char_ok(name[i]))
			return -EINVAL;
	return 0;
}

/* xenstored's node-name alphabet. */
static bool key_char(char c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '@';
}

/*
 * A name's xenstore key: every run of other characters becomes one '_'
 * ("Network #0" -> "Network_0"), as libxenstats derives it.
 */
static int name_key(const char *name, char *key, size_t size)
{
	size_t n = 0;
	bool gap = false;

	if (name_check(name))
		return -EINVAL;
	for (; *name; name++) {
		if (!key_char(*name)) {
			gap = true;
			continue;
		}
		if (gap && n) {
			if (n + 1 >= size)
				return -ENOBUFS;
			key[n++] = '_';
		}
		gap = false;
		if (n + 1 >= size)
			return -ENOBUFS;
		key[n++] = *name;
	}
	if (gap || !n) {
		if (n + 1 >= size)
			return -ENOBUFS;
		key[n++] = '_';
	}
	key[n] = '\0';
	return 0;
}

static irqreturn_t request_interrupt(int irq, void *dev_id)
{
	struct xenstats_set *set = dev_id;

	/* A flood of requests coalesces: the work is queued at most once. */
	queue_work(answer_wq, &set->answer);
	return IRQ_HANDLED;
}

static void answer_fn(struct work_struct *work)
{
	struct xenstats_set *set = container_of(work, struct xenstats_set,
						answer);

	mutex_lock(&set->answer_lock);
	if (set->answering &&
	    (!set->refresh || set->refresh(set, set->data) == 0)) {
		/* The design: the whole set is refreshed, then signalled. */
		virt_wmb();
		notify_remote_via_irq(set->irq);
	}
	mutex_unlock(&set->answer_lock);
}

/* The monitor's domid: the value of `stats`, dom0 when empty or bad. */
static int read_monitor(domid_t *ret)
{
	unsigned int len;
	char *v = xenbus_read(XBT_NIL, XEN_PV_STATS_TOP, "", &len);
	u16 domid;

	if (IS_ERR(v))
		return PTR_ERR(v);
	if (!len || kstrtou16(v, 10, &domid) || domid >= DOMID_FIRST_RESERVED)
		domid = 0;
	kfree(v);
	*ret = domid;
	return 0;
}

static int read_self_domid(domid_t *ret)
{
	unsigned int len;
	char *v = xenbus_read(XBT_NIL, "domid", "", &len);
	u16 domid;
	int r;

	if (IS_ERR(v))
		return PTR_ERR(v);
	r = kstrtou16(v, 10, &domid);
	kfree(v);
	if (!r)
		*ret = domid;
	return r;
}

/* The setters' view of the granted pages, once they are all there. */
static int share_values(struct xenstats_set *set)
{
	struct set_values *v = kzalloc(sizeof(*v), GFP_KERNEL);
	unsigned int i;

	if (!v)
		return -ENOMEM;
	v->count = set->count;
	v->descs = set->descs;
	for (i = 0; i < set->nr_pages; i++)
		v->pages[i] = page_address(set->value_pages[i]);
	rcu_assign_pointer(set->values, v);
	return 0;
}

/*
 * No setter writes a page any more once this returns: the setters read
 * set->values under RCU, so after a grace period none holds the old one.
 */
static void unshare_values(struct xenstats_set *set)
{
	struct set_values *v;

	v = rcu_replace_pointer(set->values, NULL,
				lockdep_is_held(&xenstats_lock));
	if (!v)
		return;
	synchronize_rcu();
	kfree(v);
}

static void end_grants(struct xenstats_set *set)
{
	unsigned int i;

	unshare_values(set);
	/* The pages go with the grants, when the monitor has unmapped them. */
	for (i = 0; i < set->nr_pages; i++) {
		if (set->name_pages[i])
			gnttab_end_foreign_access(set->name_refs[i],
						  set->name_pages[i]);
		if (set->value_pages[i])
			gnttab_end_foreign_access(set->value_refs[i],
						  set->value_pages[i]);
		set->name_pages[i] = NULL;
		set->value_pages[i] = NULL;
	}
	set->nr_pages = 0;
}

static int grant_pages(struct xenstats_set *set)
{
	unsigned int i, pages = DIV_ROUND_UP(set->count, XEN_PV_STATS_PER_PAGE);
	int ref;

	for (i = 0; i < pages; i++) {
		struct page *np = alloc_page(GFP_KERNEL | __GFP_ZERO);
		struct page *vp = alloc_page(GFP_KERNEL | __GFP_ZERO);
		unsigned int first = i * XEN_PV_STATS_PER_PAGE;
		unsigned int n = min(set->count - first, XEN_PV_STATS_PER_PAGE);

		if (!np || !vp) {
			if (np)
				__free_page(np);
			if (vp)
				__free_page(vp);
			return -ENOMEM;
		}
		memcpy(page_address(np), &set->descs[first],
		       n * sizeof(set->descs[0]));
		ref = gnttab_grant_foreign_access(set->monitor,
						  xen_page_to_gfn(np), 1);
		if (ref < 0) {
			__free_page(np);
			__free_page(vp);
			return ref;
		}
		set->name_pages[i] = np;
		set->name_refs[i] = ref;
		set->nr_pages = i + 1;
		ref = gnttab_grant_foreign_access(set->monitor,
						  xen_page_to_gfn(vp), 1);
		if (ref < 0) {
			__free_page(vp);
			return ref;
		}
		set->value_pages[i] = vp;
		set->value_refs[i] = ref;
	}
	return 0;
}

static int write_keys(struct xenstats_set *set)
{
	struct xenstats_provider *p = set->provider;
	char key[32];
	unsigned int i;
	int r;

	if (!p->key_written) {
		/* A node's value carries the name its key could not spell. */
		r = xenbus_write(XBT_NIL, p->path, "", p->name);
		if (r)
			return r;
		p->key_written = true;
	}
	/* Whatever an earlier instance left goes first. */
	xenbus_rm(XBT_NIL, set->path, "");
	r = xenbus_write(XBT_NIL, set->path, "", set->name);
	for (i = 0; !r && i < set->nr_pages; i++) {
		snprintf(key, sizeof(key), XEN_PV_STATS_KEY_NAME_TYPE_REF "%u", i);
		r = xenbus_printf(XBT_NIL, set->path, key, "%u",
				  set->name_refs[i]);
		if (r)
			break;
		snprintf(key, sizeof(key), XEN_PV_STATS_KEY_VALUE_REF "%u", i);
		r = xenbus_printf(XBT_NIL, set->path, key, "%u",
				  set->value_refs[i]);
	}
	return r;
}

/* Publishes @set if the toolstack's node exists.  Under xenstats_lock. */
static int publish_locked(struct xenstats_set *set)
{
	int r;

	if (set->published || !set->publish_wanted || !watching)
		return 0;
	r = read_monitor(&set->monitor);
	if (r == -ENOENT)
		return 0;	/* no monitor yet: the watch will tell */
	if (r)
		return r;
	r = grant_pages(set);
	if (!r)
		r = share_values(set);	/* the setters write the granted pages */
	if (r)
		goto fail_grants;
	set->published = true;
	mutex_lock(&set->answer_lock);
	if (set->refresh && set->refresh(set, set->data))
		pr_debug("%s: first refresh failed\n", set->path);
	mutex_unlock(&set->answer_lock);
	r = write_keys(set);
	if (r)
		goto fail_keys;

	memset(&set->xdev, 0, sizeof(set->xdev));
	set->xdev.otherend_id = set->monitor;
	set->xdev.nodename = set->path;
	/* so that xenbus_dev_fatal() does not switch a state we do not have */
	set->xdev.state = XenbusStateClosing;
	r = xenbus_alloc_evtchn(&set->xdev, &set->port);
	if (r)
		goto fail_keys;
	r = bind_evtchn_to_irqhandler(set->port, request_interrupt, 0,
				      set->irq_name, set);
	if (r < 0) {
		xenbus_free_evtchn(&set->xdev, set->port);
		goto fail_keys;
	}
	set->irq = r;
	mutex_lock(&set->answer_lock);
	set->answering = true;
	mutex_unlock(&set->answer_lock);
	/* Last: its appearance tells the monitor everything else is there. */
	r = xenbus_printf(XBT_NIL, set->path, XEN_PV_STATS_KEY_EVENT_CHANNEL,
			  "%u", set->port);
	if (r)
		goto fail_irq;
	pr_debug("%s published, port %u, monitor %u\n", set->path, set->port,
		 set->monitor);
	return 0;

fail_irq:
	mutex_lock(&set->answer_lock);
	set->answering = false;
	mutex_unlock(&set->answer_lock);
	unbind_from_irqhandler(set->irq, set);	/* closes the port too */
	cancel_work_sync(&set->answer);
fail_keys:
	xenbus_rm(XBT_NIL, set->path, "");
	set->published = false;
fail_grants:
	end_grants(set);
	pr_warn("cannot publish %s: %d\n", set->path, r);
	return r;
}

static bool port_bound(evtchn_port_t port)
{
	struct evtchn_status status = { .dom = DOMID_SELF, .port = port };

	if (HYPERVISOR_event_channel_op(EVTCHNOP_status, &status))
		return false;
	return status.status == EVTCHNSTAT_interdomain;
}

static void remove_provider_key(struct xenstats_provider *p)
{
	struct xenstats_set *s;
	unsigned int n = 0;
	char **dir;

	list_for_each_entry(s, &p->sets, node)
		if (s->published)
			return;
	if (!p->key_written)
		return;
	dir = xenbus_directory(XBT_NIL, p->path, "", &n);
	/* Another provider (a process) may publish under the same name. */
	if (IS_ERR(dir) || !n)
		xenbus_rm(XBT_NIL, p->path, "");
	if (!IS_ERR(dir))
		kfree(dir);
	p->key_written = false;
}

/*
 * Undoes publish_locked().  @lost: the domain was restored or migrated,
 * so the channel and the keys are gone with the old domain; nothing to
 * wait for, and the port is not ours to close (Linux dropped its mapping
 * on resume; unbinding the irq then closes nothing).  Under xenstats_lock.
 */
static void unpublish_locked(struct xenstats_set *set, bool lost)
{
	unsigned long deadline;

	if (!set->published)
		return;
	if (!lost) {
		xenbus_rm(XBT_NIL, set->path, XEN_PV_STATS_KEY_EVENT_CHANNEL);
		/* The monitor closes its end; our port falls back to unbound.
		 * Requests are answered meanwhile (the work still runs).
		 */
		deadline = jiffies + msecs_to_jiffies(WITHDRAW_TIMEOUT_MS);
		while (port_bound(set->port)) {
			if (time_after(jiffies, deadline)) {
				pr_info("%s: the monitor did not close its port within %u ms\n",
					set->path, WITHDRAW_TIMEOUT_MS);
				break;
			}
			usleep_range(5000, 10000);
		}
	}
	xenbus_rm(XBT_NIL, set->path, "");
	mutex_lock(&set->answer_lock);
	set->answering = false;
	mutex_unlock(&set->answer_lock);
	unbind_from_irqhandler(set->irq, set);
	cancel_work_sync(&set->answer);
	end_grants(set);
	set->published = false;
	if (lost)
		set->provider->key_written = false;
	else
		remove_provider_key(set->provider);
}

/* Is the set's event-channel key still ours? */
static bool keys_intact(struct xenstats_set *set)
{
	unsigned int len;
	char *v = xenbus_read(XBT_NIL, set->path,
			      XEN_PV_STATS_KEY_EVENT_CHANNEL, &len);
	unsigned int port;
	bool ok;

	if (IS_ERR(v))
		return PTR_ERR(v) != -ENOENT;	/* only a clear no counts */
	ok = !kstrtouint(v, 10, &port) && port == set->port;
	kfree(v);
	return ok;
}

static void rescan_fn(struct work_struct *work)
{
	struct xenstats_provider *p;
	struct xenstats_set *s;
	bool moved, waiting = false;
	domid_t domid;

	mutex_lock(&xenstats_lock);
	if (!watching)
		goto out;
	/* A watch fires once after resume: a new domid means a restore or
	 * a migration, and everything we published died with the old one.
	 */
	moved = !read_self_domid(&domid) && domid != self_domid;
	if (moved && self_domid != DOMID_INVALID)
		pr_info("domid %u -> %u: publishing again\n", self_domid, domid);
	if (moved)
		self_domid = domid;
	list_for_each_entry(p, &providers, node) {
		list_for_each_entry(s, &p->sets, node) {
			if (s->published && moved)
				unpublish_locked(s, true);
			else if (s->published && !keys_intact(s))
				/* stats removed, or keys deleted under us */
				unpublish_locked(s, false);
			publish_locked(s);
			waiting |= s->publish_wanted && !s->published;
		}
	}
	if (waiting) {
		unsigned int ms = READ_ONCE(retry_ms);

		ms = ms ? min(ms * 2, RETRY_MAX_MS) : RETRY_FIRST_MS;
		WRITE_ONCE(retry_ms, ms);
		queue_delayed_work(system_unbound_wq, &rescan_work,
				   msecs_to_jiffies(ms));
	}
out:
	mutex_unlock(&xenstats_lock);
}

static void stats_changed(struct xenbus_watch *watch, const char *path,
			  const char *token)
{
	/* Our own writes fire it too; the work coalesces them. */
	/* never block the xenwatch thread: a racy reset is harmless */
	WRITE_ONCE(retry_ms, 0);
	mod_delayed_work(system_unbound_wq, &rescan_work, 0);
}

static struct xenbus_watch stats_watch = {
	.node = XEN_PV_STATS_TOP,
	.callback = stats_changed,
};

struct xenstats_provider *xenstats_provider_register(const char *name)
{
	struct xenstats_provider *p;
	char key[XEN_PV_STATS_NAME_MAX + 1];

	if (!xen_domain())
		return ERR_PTR(-ENODEV);
	if (name_key(name, key, sizeof(key)))
		return ERR_PTR(-EINVAL);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&p->sets);
	strscpy(p->name, name, sizeof(p->name));
	strscpy(p->key, key, sizeof(p->key));
	snprintf(p->path, sizeof(p->path), "%s/%s", XEN_PV_STATS_TOP, key);
	mutex_lock(&xenstats_lock);
	list_add_tail(&p->node, &providers);
	mutex_unlock(&xenstats_lock);
	return p;
}
EXPORT_SYMBOL_GPL(xenstats_provider_register);

void xenstats_provider_unregister(struct xenstats_provider *provider)
{
	struct xenstats_set *s;

	if (IS_ERR_OR_NULL(provider))
		return;
	for (;;) {
		mutex_lock(&xenstats_lock);
		s = list_first_entry_or_null(&provider->sets,
					     struct xenstats_set, node);
		mutex_unlock(&xenstats_lock);
		if (!s)
			break;
		xenstats_set_withdraw(s);
	}
	mutex_lock(&xenstats_lock);
	list_del(&provider->node);
	mutex_unlock(&xenstats_lock);
	kfree(provider);
}
EXPORT_SYMBOL_GPL(xenstats_provider_unregister);

struct xenstats_set *xenstats_set_add(struct xenstats_provider *provider,
				      const char *name,
				      xenstats_refresh_fn refresh, void *data)
{
	struct xenstats_set *set, *s;
	char key[XEN_PV_STATS_NAME_MAX + 1];

	if (name_key(name, key, sizeof(key)))
		return ERR_PTR(-EINVAL);
	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return ERR_PTR(-ENOMEM);
	set->provider = provider;
	strscpy(set->name, name, sizeof(set->name));
	snprintf(set->path, sizeof(set->path), "%s/%s", provider->path, key);
	snprintf(set->irq_name, sizeof(set->irq_name), "xenstats:%.14s", key);
	set->refresh = refresh;
	set->data = data;
	INIT_WORK(&set->answer, answer_fn);
	mutex_init(&set->answer_lock);
	mutex_lock(&xenstats_lock);
	/* Two names with one key would share keys in xenstore. */
	list_for_each_entry(s, &provider->sets, node) {
		if (!strcmp(s->path, set->path)) {
			mutex_unlock(&xenstats_lock);
			kfree(set);
			return ERR_PTR(-EEXIST);
		}
	}
	list_add_tail(&set->node, &provider->sets);
	mutex_unlock(&xenstats_lock);
	return set;
}
EXPORT_SYMBOL_GPL(xenstats_set_add);

int xenstats_set_declare(struct xenstats_set *set, const char *name,
			 enum xenstats_type type)
{
	unsigned int i;
	int r;

	if (name_check(name) || type < XENSTATS_S64 || type > XENSTATS_ASCII)
		return -EINVAL;
	mutex_lock(&xenstats_lock);
	r = -EBUSY;	/* names never change after publishing */
	if (set->publish_wanted)
		goto out;
	r = -EEXIST;
	for (i = 0; i < set->count; i++)
		if (!strcmp(set->descs[i].name, name))
			goto out;
	r = -ENOSPC;
	if (set->count == MAX_PAGES * XEN_PV_STATS_PER_PAGE)
		goto out;
	if (set->count == set->cap) {
		unsigned int cap = set->cap ? set->cap * 2 : 16;
		void *d = krealloc_array(set->descs, cap, sizeof(*set->descs),
					 GFP_KERNEL);

		r = -ENOMEM;
		if (!d)
			goto out;
		set->descs = d;
		set->cap = cap;
	}
	memset(&set->descs[set->count], 0, sizeof(set->descs[0]));
	set->descs[set->count].type = type;
	strscpy(set->descs[set->count].name, name,
		sizeof(set->descs[0].name));
	r = set->count++;
out:
	mutex_unlock(&xenstats_lock);
	return r;
}
EXPORT_SYMBOL_GPL(xenstats_set_declare);

unsigned int xenstats_set_count(const struct xenstats_set *set)
{
	return set->count;
}
EXPORT_SYMBOL_GPL(xenstats_set_count);

int xenstats_set_publish(struct xenstats_set *set)
{
	int r = 0;

	mutex_lock(&xenstats_lock);
	if (!set->count)
		r = -ENODATA;
	else if (set->publish_wanted)
		r = -EALREADY;
	else
		set->publish_wanted = true;
	if (!r)
		publish_locked(set);	/* a failure is retried on the watch */
	mutex_unlock(&xenstats_lock);
	return r;
}
EXPORT_SYMBOL_GPL(xenstats_set_publish);

void xenstats_set_withdraw(struct xenstats_set *set)
{
	if (IS_ERR_OR_NULL(set))
		return;
	mutex_lock(&xenstats_lock);
	unpublish_locked(set, false);
	list_del(&set->node);
	remove_provider_key(set->provider);
	mutex_unlock(&xenstats_lock);
	cancel_work_sync(&set->answer);
	kfree(set->descs);
	kfree(set);
}
EXPORT_SYMBOL_GPL(xenstats_set_withdraw);

/*
 * The setters take no lock and may run in any context (a timer, an
 * interrupt handler, while the set is withdrawn or published again):
 * they reach the pages only through set->values, under RCU, and
 * end_grants() waits for a grace period before it gives the pages back.
 * Only the set itself must still exist.  Under rcu_read_lock(): the
 * entry, or NULL with *err set.
 */
static u8 *entry_locked(struct xenstats_set *set, unsigned int index, u8 type,
			int *err)
{
	const struct set_values *v = rcu_dereference(set->values);

	if (!v) {
		*err = -ENODEV;	/* not published: nothing to write into */
		return NULL;
	}
	if (index >= v->count || v->descs[index].type != type) {
		*err = -EINVAL;
		return NULL;
	}
	return v->pages[index / XEN_PV_STATS_PER_PAGE] +
	       (index % XEN_PV_STATS_PER_PAGE) * XEN_PV_STATS_ENTRY_SIZE;
}

static int put_le64(struct xenstats_set *set, unsigned int index, u8 type,
		    u64 value)
{
	int r = 0;
	u8 *e;

	rcu_read_lock();
	e = entry_locked(set, index, type, &r);
	if (e)
		/* little endian on the wire whatever this CPU's order */
		WRITE_ONCE(*(__le64 *)e, cpu_to_le64(value));
	rcu_read_unlock();
	return r;
}

int xenstats_set_u64(struct xenstats_set *set, unsigned int index, u64 value)
{
	return put_le64(set, index, XEN_PV_STATS_TYPE_U64, value);
}
EXPORT_SYMBOL_GPL(xenstats_set_u64);

int xenstats_set_s64(struct xenstats_set *set, unsigned int index, s64 value)
{
	return put_le64(set, index, XEN_PV_STATS_TYPE_S64, (u64)value);
}
EXPORT_SYMBOL_GPL(xenstats_set_s64);

int xenstats_set_double_bits(struct xenstats_set *set, unsigned int index,
			     u64 bits)
{
	return put_le64(set, index, XEN_PV_STATS_TYPE_DOUBLE, bits);
}
EXPORT_SYMBOL_GPL(xenstats_set_double_bits);

int xenstats_set_ascii(struct xenstats_set *set, unsigned int index,
		       const char *value)
{
	size_t len, i;
	int r = 0;
	u8 *e;

	if (!value)
		return -EINVAL;
	len = strnlen(value, XEN_PV_STATS_ENTRY_SIZE);
	if (len >= XEN_PV_STATS_ENTRY_SIZE)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!name_char_ok(value[i]))
			return -EINVAL;
	rcu_read_lock();
	e = entry_locked(set, index, XEN_PV_STATS_TYPE_ASCII, &r);
	for (i = 0; e && i < XEN_PV_STATS_ENTRY_SIZE; i++)
		WRITE_ONCE(e[i], i < len ? (u8)value[i] : 0);
	rcu_read_unlock();
	return r;
}
EXPORT_SYMBOL_GPL(xenstats_set_ascii);

int xenstats_core_init(void)
{
	int r;

	if (!xen_domain())
		return -ENODEV;
	answer_wq = alloc_workqueue("xenstats", WQ_HIGHPRI, 0);
	if (!answer_wq)
		return -ENOMEM;
	mutex_lock(&xenstats_lock);
	watching = true;
	mutex_unlock(&xenstats_lock);
	/* Registering fires it once: the first scan. */
	r = register_xenbus_watch(&stats_watch);
	if (r) {
		watching = false;
		destroy_workqueue(answer_wq);
		return r;
	}
	return 0;
}

void xenstats_core_exit(void)
{
	unregister_xenbus_watch(&stats_watch);
	mutex_lock(&xenstats_lock);
	watching = false;
	mutex_unlock(&xenstats_lock);
	cancel_delayed_work_sync(&rescan_work);
	if (!list_empty(&providers))
		pr_err("providers left registered at exit\n");
	destroy_workqueue(answer_wq);
}
