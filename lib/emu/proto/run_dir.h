/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulated host's run directory: its files, the table's layout, and the
 * helpers both sides use.  Part of the emulator's protocol (lib/emu/proto/),
 * shared by `xenstats emu` (the writer, lib/emu) and the emu backend (the
 * readers, lib/platform/emu*.c), which include nothing of each other.
 *
 *   emu.pid                    pid of the running emulator
 *   control                    UNIX stream socket, line commands (emulator.md)
 *   hypercall/<domid>          a domain's hypercall socket (hypercall.h)
 *   xenstore/<domid>           a domain's xenstore socket
 *   table                      the hypervisor's changing figures: host and
 *                              one slot per domid (struct emu_table below)
 *   domains/<domid>/info       "name=...\nvcpus=N\nuuid=...\n" (replaced
 *                              atomically; never changes for a domain)
 *   domains/<domid>/vcpu-stats the vCPU statistics region (absent when the
 *                              domain was created without it)
 *   sys/                       the guests' backend devices as dom0's sysfs
 *                              shows them (backend_devices.h): vifs under
 *                              class/net, both in bus/xen-backend/devices
 *   proc/net/dev               dom0's interface table, as Linux prints it
 *   moved/<domid>              "N\n": the domain was migrated, restored or
 *                              rebooted as domain N (replaced atomically)
 *
 * A domain directory appears by rename() of a complete directory and goes
 * away by rename() to a hidden name before its files are removed, so a
 * reader never sees half a domain.
 */
#ifndef XENSTATS_EMU_PROTO_RUN_DIR_H
#define XENSTATS_EMU_PROTO_RUN_DIR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <xenstats/xenstats.h>

#define EMU_PID_FILE "emu.pid"
#define EMU_CONTROL_SOCKET "control"
#define EMU_DOMAINS_DIR "domains"
#define EMU_INFO_FILE "info"
#define EMU_VCPU_STATS_FILE "vcpu-stats"
#define EMU_INFO_MAX 512
#define EMU_TABLE_FILE "table"
#define EMU_SYSFS_DIR "sys"
/* the interface table, in /proc/net/dev's format */
#define EMU_NET_DEV_FILE "proc/net/dev"
#define EMU_MOVED_DIR "moved"

/* Parse an info file; -EBADMSG when malformed. */
int emu_info_parse(const char *text, uint32_t domid, struct xenstats_domain_info *ret_info);
/* Format an info file into buf; returns its length or -ENOBUFS. */
int emu_info_format(const struct xenstats_domain_info *info, char *buf, size_t len);

/*
 * The table file: what Xen's getdomaininfo, physinfo and getcpuinfo
 * would tell, rewritten by the emulator every scheduler tick and mapped
 * read-only by the backend.  A slot is a seqlock: the writer makes seq odd,
 * changes the fields, makes it even again (release); a reader copies the
 * fields between two equal even reads of seq (acquire), spinning a few
 * times, then sleeping: the writer is a process that the kernel may
 * preempt between its two stores, for a whole time slice on a loaded
 * host, so a reader gives up only after about a second.  The file is sparse: slots of domids never used take no memory.
 */
#define EMU_TABLE_MAGIC 0x31544d4555534b58ULL /* "XKSUEMT1" */
#define EMU_TABLE_PCPUS 1024u
#define EMU_TABLE_DOMAINS (XENSTATS_DOMID_MAX + 1u) /* Xen's DOMID_FIRST_RESERVED */
#define EMU_TABLE_HOST_BYTES 16384u
#define EMU_TABLE_SPINS 64
#define EMU_TABLE_SLEEPS 10000 /* of 100 us */

struct emu_table_host {
    uint64_t magic;
    uint64_t seq;
    uint32_t nr_pcpus, cpu_khz;
    uint64_t total_memory_kib, free_memory_kib, scrub_memory_kib;
    uint64_t pcpu_idle_ns[EMU_TABLE_PCPUS];
};

struct emu_table_domain {
    uint64_t seq;
    uint32_t present; /* 1 from creation to destruction */
    uint32_t flags;   /* XENSTATS_DOMAIN_* */
    uint32_t shutdown_reason;
    uint32_t nr_online_vcpus;
    uint64_t cpu_time_ns;
    uint64_t memory_kib, max_memory_kib, shared_kib, outstanding_kib;
    uint64_t reserved[8];
};

_Static_assert(sizeof(struct emu_table_host) <= EMU_TABLE_HOST_BYTES, "host part of the table");
_Static_assert(sizeof(struct emu_table_domain) == 128, "table slot");

#define EMU_TABLE_BYTES ((uint64_t)EMU_TABLE_HOST_BYTES + (uint64_t)EMU_TABLE_DOMAINS * 128u)

static inline struct emu_table_host *emu_table_host(void *table)
{
    return (struct emu_table_host *)table;
}

static inline struct emu_table_domain *emu_table_slot(void *table, uint32_t domid)
{
    return (struct emu_table_domain *)((char *)table + EMU_TABLE_HOST_BYTES) + domid;
}

/* Writer side (the emulator, one thread). */
static inline void emu_table_write_begin(uint64_t *seq)
{
    __atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void emu_table_write_end(uint64_t *seq)
{
    __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

#define EMU_TABLE_STORE(field, value) __atomic_store_n(&(field), (value), __ATOMIC_RELAXED)
#define EMU_TABLE_LOAD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/*
 * Reader side: copy `words` 64-bit words of a record whose first word is
 * its seq into out; 0, or -EAGAIN when the writer kept changing it.
 */
static inline int emu_table_read(const void *record, size_t words, void *out)
{
    const struct timespec nap = {.tv_nsec = 100000};
    const uint64_t *src = (const uint64_t *)record;
    unsigned char *dst = (unsigned char *)out;
    int tries;

    for (tries = 0; tries < EMU_TABLE_SPINS + EMU_TABLE_SLEEPS; tries++) {
        uint64_t seq;
        size_t i;

        if (tries >= EMU_TABLE_SPINS)
            nanosleep(&nap, NULL);
        seq = __atomic_load_n(&src[0], __ATOMIC_ACQUIRE);
        if (seq & 1)
            continue;
        for (i = 1; i < words; i++) {
            uint64_t w = __atomic_load_n(&src[i], __ATOMIC_RELAXED);

            memcpy(dst + i * sizeof(w), &w, sizeof(w));
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&src[0], __ATOMIC_RELAXED) == seq) {
            memcpy(dst, &seq, sizeof(seq));
            return 0;
        }
    }
    return -EAGAIN;
}

/* The run directory: $XENSTATS_EMU_DIR or the default; 0 or -ENAMETOOLONG. */
int emu_run_dir(char *buf, size_t len);

/*
 * Forwarding records: domain `from` lives on as domain `to` (which is
 * always a larger domid: the emulator never reuses one).  Written with
 * rename(), so a reader sees a whole record or none.  0 or -errno.
 */
int emu_moved_write(const char *dir, uint32_t from, uint32_t to);
/* Where domain `domid` lives now: the end of its chain of records
 * (domid itself when it never moved).  A malformed record ends the chain. */
uint32_t emu_domid_follow(const char *dir, uint32_t domid);

/* 1 if the emulator whose run directory is `dir` is alive, else 0. */
int emu_is_running(const char *dir);

#endif
