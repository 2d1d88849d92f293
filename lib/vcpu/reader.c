/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The region source of the vCPU map (reader.h): a reader of the vCPU
 * statistics layout in shared memory, a dump file or a caller's buffer.
 * The producer is the hypervisor (or the emulated host); it is trusted to
 * follow the protocol but its region is still validated against the
 * mapping before any record is read.  Snapshots and dumps copy records
 * through one implementation of the sequence protocol, read_batch().
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <xenstats/vcpu.h>

#include "platform/platform.h"
#include "util/ticks.h"
#include "util/util.h"
#include "vcpu/reader.h"

#define HEADER_SIZE_V1 XEN_VCPU_STATS_HEADER_SIZE_V1

/* A record's UPDATE_TIME and UPDATE_TICKS (inactive: none). */
struct stamp {
    int64_t time;
    uint64_t ticks;
};

struct region_map {
    struct xenstats_vcpu_map map; /* first: the public handle */
    const unsigned char *mem;
    size_t len;
    struct xenstats_host *host; /* live producer, NULL for files/memory */
    struct platform_resource resource;
    void *owned;         /* file contents */
    bool live;           /* a producer writes it now (not a dump file) */
    struct stamp latest; /* the latest record read */
};

static struct region_map *region_of(struct xenstats_vcpu_map *map)
{
    return (struct region_map *)map;
}

static inline uint32_t load32(const void *p)
{
    return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * Version 2's header (vcpu_stats.h): everything between the header and the
 * records inside its bounds, the reserved bytes zero, every record inside
 * the mapping and every magic in place.  64-bit sums of 32-bit fields
 * cannot overflow.
 */
static int parse_v2(const unsigned char *mem, size_t len, struct xenstats_vcpu_layout *l)
{
    const struct xen_vcpu_stats_header *h = (const void *)mem;
    uint32_t i;

    /* the header, which needs all of version 2's fields, ends before offset */
    if (l->offset < XEN_VCPU_STATS_HEADER_SIZE)
        return -EINVAL;
    l->header_size = load32(&h->header_size);
    l->nr_vcpus = load32(&h->nr_vcpus);
    l->arch = load32(&h->arch);
    l->domain_offset = load32(&h->domain_offset);
    l->domain_size = load32(&h->domain_size);
    l->domain_arch_offset = load32(&h->domain_arch_offset);
    l->domain_arch_size = load32(&h->domain_arch_size);
    l->vcpu_arch_offset = load32(&h->vcpu_arch_offset);
    l->vcpu_arch_size = load32(&h->vcpu_arch_size);
    l->tick_source = load32(&h->tick_source);
    l->tick_domid = load32(&h->tick_domid);
    l->tick_hz = __atomic_load_n(&h->tick_hz, __ATOMIC_RELAXED);

    if (l->offset % XEN_VCPU_STATS_ALIGN || l->stride % XEN_VCPU_STATS_ALIGN ||
        l->header_size < XEN_VCPU_STATS_HEADER_SIZE || l->header_size % 8 || l->header_size > l->domain_offset ||
        l->domain_offset % 8 || l->domain_size < 8 || l->domain_size % 8 ||
        l->domain_arch_offset < l->domain_size || l->domain_arch_offset % 8 || l->domain_arch_size % 8 ||
        (uint64_t)l->domain_offset + l->domain_arch_offset + l->domain_arch_size > l->offset ||
        l->vcpu_arch_offset < l->size || l->vcpu_arch_offset % 8 || l->vcpu_arch_size % 8 ||
        (uint64_t)l->vcpu_arch_offset + l->vcpu_arch_size > l->stride || l->nr_vcpus == 0)
        return -EINVAL;
    for (i = l->header_size; i < l->domain_offset; i += 8)
        if (__atomic_load_n((const uint64_t *)(mem + i), __ATOMIC_RELAXED))
            return -EINVAL;
    if ((uint64_t)l->offset + (uint64_t)(l->nr_vcpus - 1) * l->stride + l->size > len)
        return -ERANGE;
    if (load32(mem + l->domain_offset + 4) != XEN_VCPU_STATS_DOMAIN_MAGIC)
        return -EBADMSG;
    for (i = 0; i < l->nr_vcpus; i++)
        if (load32(mem + l->offset + (size_t)i * l->stride + 4) != XEN_VCPU_STATS_VCPU_MAGIC)
            return -EBADMSG;
    /* An unknown counter, or none: no time base, as TICK_NONE. */
    if (l->tick_source != XEN_VCPU_STATS_TICK_X86_TSC && l->tick_source != XEN_VCPU_STATS_TICK_ARM_CNTVCT)
        l->tick_source = XEN_VCPU_STATS_TICK_NONE;
    if (l->tick_source == XEN_VCPU_STATS_TICK_NONE || !l->tick_hz) {
        l->tick_source = XEN_VCPU_STATS_TICK_NONE;
        l->tick_hz = 0;
    }
    return 0;
}

/*
 * Version 1 when there is no room for version 2's fields before the
 * records, or the version word is below 2 or the inactive marker (version
 * 1 fills the header's tail with it; a producer of the first proposal's
 * text may leave it zero).
 */
static bool is_v2(const unsigned char *mem, uint32_t offset)
{
    uint32_t version;

    if (offset < XEN_VCPU_STATS_HEADER_SIZE_V1 + 8)
        return false;
    version = load32(mem + offsetof(struct xen_vcpu_stats_header, version));
    return version >= 2 && version != XEN_VCPU_STATS_INACTIVE32;
}

int xenstats_vcpu_layout_parse(const void *mem, size_t len, struct xenstats_vcpu_layout *ret_layout)
{
    const struct xen_vcpu_stats_header *h = mem;
    struct xenstats_vcpu_layout l = {0};
    uint64_t room, nr;
    uint32_t magic;
    int r;

    if (!mem || len < HEADER_SIZE_V1 || ((uintptr_t)mem & 7))
        return set_errno(-ERANGE);
    magic = load32(&h->magic);
    l.offset = load32(&h->offset);
    l.size = load32(&h->size);
    l.stride = load32(&h->stride);

    if (magic != XEN_VCPU_STATS_MAGIC)
        return set_errno(-EBADMSG);
    /* 8: aligned counters; version 2 also promises whole lines (below) */
    if (l.offset < HEADER_SIZE_V1 || l.size < 8 || l.size % 8 || l.stride < l.size || l.offset % 8 || l.stride % 8)
        return set_errno(-EINVAL);
    /* 64-bit arithmetic on 32-bit fields cannot overflow. */
    if ((uint64_t)l.offset + l.size > len)
        return set_errno(-ERANGE);
    if (is_v2(mem, l.offset)) {
        l.version = load32(&h->version);
        r = parse_v2(mem, len, &l);
        if (r < 0)
            return set_errno(r);
    } else {
        room = (uint64_t)len - l.offset - l.size;
        nr = room / l.stride + 1;
        l.nr_vcpus = nr > UINT32_MAX ? UINT32_MAX : (uint32_t)nr;
        l.version = 1;
    }
    *ret_layout = l;
    return 0;
}

/* ---- the sequence protocol ----------------------------------------------- */

#if defined(__SANITIZE_THREAD__)
#define XENSTATS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XENSTATS_TSAN 1
#endif
#endif

/*
 * Tests build this file once more with XENSTATS_TEST_NO_SEQ_CHECK, to show
 * that the concurrency test catches the torn copies the check throws away
 * (tests/unit/meson.build).  No other build sets it.
 */
#ifdef XENSTATS_TEST_NO_SEQ_CHECK
#define SEQ_CHECK 0
#else
#define SEQ_CHECK 1
#endif

/*
 * The reader's two barriers.  On arm64, whose memory model lets loads pass
 * loads, the acquire load of a sequence number is LDAR (no later load of
 * the record is taken before it) and the acquire fence between the copy and
 * the second read of the numbers is DMB ISHLD (no load of the copy is taken
 * after that read).  They pair with the writer's barriers around its
 * stores (Xen's smp_wmb(), DMB ISHST; XEN_VCPU_STATS_WMB() here).  On x86
 * both are plain loads and a compiler barrier: x86 keeps loads in order.
 * tests/arm64/barrier.sh checks the arm64 instructions in a cross build and
 * builds this file once more with XENSTATS_TEST_NO_READ_BARRIER, which
 * keeps only the compiler barriers (no other build sets it).
 */
#ifdef XENSTATS_TEST_NO_READ_BARRIER
#define SEQ_ACQUIRE __ATOMIC_RELAXED
#define READ_FENCE() __asm__ __volatile__("" ::: "memory")
#else
#define SEQ_ACQUIRE __ATOMIC_ACQUIRE
#define READ_FENCE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

/*
 * Records taken in one pass of the protocol.  A record's copy is good only
 * if no update of it overlapped the whole pass, not just its own copy, so
 * a long pass retries more under a busy writer; 16 records (1 KiB at the
 * usual stride) keep that cost small and the loops' overhead spread.
 */
#define BATCH 16

/*
 * Copy `bytes` bytes of records being written concurrently.  Between the
 * two reads of the sequence numbers the copy may be torn; the check throws
 * such a copy away, so a plain memcpy is enough (as Linux's seqlock readers
 * do), and the acquire fence after it is also a compiler barrier.  Under
 * TSan, relaxed atomic loads tell the sanitizer the race is intended.
 */
static inline __attribute__((always_inline)) void copy_words(void *dst, const unsigned char *src, size_t bytes)
{
#ifdef XENSTATS_TSAN
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t word = __atomic_load_n((const uint64_t *)(src + i), __ATOMIC_RELAXED);

        memcpy((unsigned char *)dst + i, &word, 8);
    }
#else
    memcpy(dst, src, bytes);
#endif
}

/*
 * What becomes of the records read: the protocol below is written once,
 * and each reader (samples, dumps) gives what a copy is as small functions
 * that are inlined into it, like a template.
 */
struct record_sink {
    /* Copy record i, read under seq (not yet known to be good). */
    void (*take)(void *sink, unsigned int i, const unsigned char *record, uint32_t seq);
    /* The seq record i was last taken under. */
    uint32_t (*seq_of)(const void *sink, unsigned int i);
    /* Record i's good copy took `retries` passes beyond the first; may be NULL. */
    void (*retried)(void *sink, unsigned int i, uint32_t retries);
};

static inline uint32_t load_seq(const unsigned char *record, int order)
{
    return __atomic_load_n((const uint32_t *)record, order);
}

/*
 * One pass over records first..first+n-1 of a batch (n <= BATCH), `stride`
 * apart from `records`: each record's sequence number (acquire) and then
 * its copy, all of them, a read fence, then every number again.  A copy is
 * good when its number was even and did not change.  No branch and no
 * fence per record: the copies stream like one memcpy.  Returns the mask
 * of the records whose copy is torn.
 */
static inline __attribute__((always_inline)) uint64_t copy_pass(const unsigned char *records, size_t stride,
                                                               unsigned int first, unsigned int n,
                                                               const struct record_sink *ops, void *sink)
{
    uint32_t odd = 0, sum = 0;
    uint64_t torn = 0;
    unsigned int i;

    for (i = first; i < first + n; i++) {
        const unsigned char *record = records + (size_t)i * stride;
        uint32_t seq = load_seq(record, SEQ_ACQUIRE);

        odd |= seq;
        sum += seq;
        ops->take(sink, i, record, seq);
    }
    READ_FENCE();
    /*
     * A sequence number only moves forward, so when no number was odd and
     * their sum (mod 2^32) is unchanged, none moved, unless the writers made
     * a multiple of 2^32 updates during the pass: the limit of any seqlock
     * with a 32-bit count.  Only then is it worth finding which records are
     * torn; a third read of a number is as good as the second: it is also
     * after the copy.
     */
    for (i = first; i < first + n; i++)
        sum -= load_seq(records + (size_t)i * stride, __ATOMIC_RELAXED);
    if (!SEQ_CHECK || !((odd & 1) | sum))
        return 0;
    for (i = first; i < first + n; i++) {
        uint32_t before = ops->seq_of(sink, i);

        if ((before & 1) || before != load_seq(records + (size_t)i * stride, __ATOMIC_RELAXED))
            torn |= 1ULL << (i - first);
    }
    return torn;
}

/*
 * The sequence protocol over a batch of n <= BATCH records: one pass over
 * all, then each torn record alone until its copy is good, at most
 * max_retries times.  Returns the number of records retried, or -EBUSY: a
 * writer that never finishes yields an error, not a hang.
 */
static inline __attribute__((always_inline)) int read_batch(const unsigned char *records, size_t stride,
                                                           unsigned int n, uint32_t max_retries,
                                                           const struct record_sink *ops, void *sink)
{
    uint64_t torn = copy_pass(records, stride, 0, n, ops, sink);
    int retried = 0;

    for (; torn; torn &= torn - 1, retried++) {
        unsigned int i = (unsigned int)__builtin_ctzll(torn);
        uint32_t attempt = 0;

        do {
            if (attempt++ == max_retries)
                return -EBUSY;
            /* odd: the writer is inside an update; let it finish */
            if (ops->seq_of(sink, i) & 1)
                cpu_relax();
        } while (copy_pass(records, stride, i, 1, ops, sink));
        if (ops->retried)
            ops->retried(sink, i, attempt);
    }
    return retried;
}

/* ---- samples ------------------------------------------------------------- */

_Static_assert(offsetof(struct xenstats_vcpu_sample, retries) == offsetof(struct xenstats_vcpu_sample, seq) + 4,
               "take_sample() stores seq and retries at once");

struct sample_sink {
    struct xenstats_vcpu_sample *samples; /* the batch's */
    unsigned int nr;                      /* counters taken from each record */
    struct stamp latest;                  /* of the latest UPDATE_TIME taken */
};

/*
 * A time with the top bit set is inactive: as a signed value it is below
 * every real one, so the signed maximum skips it.
 */
static inline void note_latest(struct sample_sink *k, const struct xenstats_vcpu_sample *s)
{
    if (k->nr > XEN_VCPU_STATS_UPDATE_TIME && (int64_t)s->raw[XEN_VCPU_STATS_UPDATE_TIME] > k->latest.time) {
        k->latest.time = (int64_t)s->raw[XEN_VCPU_STATS_UPDATE_TIME];
        k->latest.ticks = s->raw[XEN_VCPU_STATS_UPDATE_TICKS]; /* inactive past nr */
    }
}

static inline __attribute__((always_inline)) void take_sample(void *sink, unsigned int i,
                                                              const unsigned char *record, uint32_t seq)
{
    struct sample_sink *k = sink;
    struct xenstats_vcpu_sample *s = &k->samples[i];

    copy_words(s->raw, record + 8, (size_t)k->nr * 8);
    for (unsigned int c = k->nr; c < XENSTATS_VCPU_NR_COUNTERS; c++)
        s->raw[c] = XEN_VCPU_STATS_INACTIVE;
    /* seq and retries side by side: one store */
    memcpy((unsigned char *)s + offsetof(struct xenstats_vcpu_sample, seq),
           &(struct { uint32_t seq, retries; }){seq, 0}, 8);
    s->nr_present = k->nr;
    note_latest(k, s);
}

static inline uint32_t sample_seq(const void *sink, unsigned int i)
{
    return ((const struct sample_sink *)sink)->samples[i].seq;
}

static inline void sample_retried(void *sink, unsigned int i, uint32_t retries)
{
    ((struct sample_sink *)sink)->samples[i].retries = retries;
}

static const struct record_sink sample_ops = {
    .take = take_sample,
    .seq_of = sample_seq,
    .retried = sample_retried,
};

/*
 * Samples of `count` records from `record` on, `stride` apart, as a reader
 * that takes the first `nr` counters of each (the rest are UNKNOWN).
 * Moves *latest to the record with the latest UPDATE_TIME read.
 */
static inline __attribute__((always_inline)) int read_samples(const unsigned char *record, uint32_t stride,
                                                             uint32_t count, unsigned int nr, uint32_t max_retries,
                                                             struct xenstats_vcpu_sample *ret_samples,
                                                             struct stamp *ret_latest)
{
    struct stamp latest = *ret_latest;
    uint32_t done;
    unsigned int n;
    int r;

    for (done = 0; done < count; done += n) {
        struct sample_sink sink = {.samples = ret_samples + done, .nr = nr, .latest = latest};

        n = count - done < BATCH ? count - done : BATCH;
        r = read_batch(record + (size_t)done * stride, stride, n, max_retries, &sample_ops, &sink);
        if (r < 0)
            return r;
        /* A torn copy's time may be one the producer never wrote: count
         * only the good copies. */
        if (r > 0) {
            sink.latest = latest;
            for (unsigned int i = 0; i < n; i++)
                note_latest(&sink, &sink.samples[i]);
        }
        latest = sink.latest;
    }
    *ret_latest = latest;
    return 0;
}

int vcpu_record_read(const unsigned char *record, uint32_t size, unsigned int nr_known, uint32_t max_retries,
                     struct xenstats_vcpu_sample *ret_sample)
{
    unsigned int have = (size - 8) / 8;
    struct xenstats_vcpu_sample s;
    struct stamp ignored = {0, 0};

    if (nr_known > XENSTATS_VCPU_NR_COUNTERS)
        nr_known = XENSTATS_VCPU_NR_COUNTERS;
    if (read_samples(record, size, 1, have < nr_known ? have : nr_known, max_retries, &s, &ignored) < 0)
        return -EBUSY;
    *ret_sample = s;
    return 0;
}

/* ---- dumps --------------------------------------------------------------- */

struct dump_sink {
    unsigned char *out; /* the batch's first record */
    size_t stride;
    uint32_t seq[BATCH];
};

static inline void take_record(void *sink, unsigned int i, const unsigned char *record, uint32_t seq)
{
    struct dump_sink *k = sink;

    copy_words(k->out + (size_t)i * k->stride, record, k->stride);
    k->seq[i] = seq;
}

static inline uint32_t record_seq(const void *sink, unsigned int i)
{
    return ((const struct dump_sink *)sink)->seq[i];
}

static const struct record_sink dump_ops = {
    .take = take_record,
    .seq_of = record_seq,
};

/* ---- the region source --------------------------------------------------- */

/* Any number of records, as many counters as the producer has. */
static __attribute__((noinline)) int snapshot_records(struct region_map *m, const unsigned char *record,
                                                      uint32_t count, struct xenstats_vcpu_sample *ret_samples)
{
    const struct xenstats_vcpu_layout *l = &m->map.layout;
    unsigned int have = (l->size - 8) / 8;

    /* The producer has every counter we know: constant-size copies. */
    if (have >= XENSTATS_VCPU_NR_COUNTERS)
        return read_samples(record, l->stride, count, XENSTATS_VCPU_NR_COUNTERS, m->map.max_retries, ret_samples,
                            &m->latest);
    return read_samples(record, l->stride, count, have, m->map.max_retries, ret_samples, &m->latest);
}

static int region_snapshot(struct xenstats_vcpu_map *map, uint32_t first, uint32_t count,
                           struct xenstats_vcpu_sample *ret_samples)
{
    struct region_map *m = region_of(map);
    const unsigned char *record = m->mem + map->layout.offset + (uint64_t)first * map->layout.stride;

    /* One whole record (xenstats_vcpu_map_snapshot()): no loop at all, and
     * none of the frame the general case needs. */
    if (count == 1 && map->layout.size >= XEN_VCPU_STATS_RECORD_SIZE)
        return read_samples(record, map->layout.stride, 1, XENSTATS_VCPU_NR_COUNTERS, map->max_retries,
                            ret_samples, &m->latest);
    return snapshot_records(m, record, count, ret_samples);
}

/* The domain section: a record of the same shape, read the same way. */
static int region_snapshot_domain(struct xenstats_vcpu_map *map, struct xenstats_vcpu_domain_sample *ret_sample)
{
    const struct xenstats_vcpu_layout *l = &map->layout;
    struct region_map *m = region_of(map);
    struct stamp ignored = {0, 0};
    struct xenstats_vcpu_sample s;
    unsigned int have = (l->domain_size - 8) / 8;
    int r;

    if (l->version < 2)
        return -ENODATA;
    if (have > XENSTATS_VCPU_DOMAIN_NR_COUNTERS)
        have = XENSTATS_VCPU_DOMAIN_NR_COUNTERS;
    r = read_samples(m->mem + l->domain_offset, l->domain_size, 1, have, map->max_retries, &s, &ignored);
    if (r < 0)
        return r;
    memcpy(ret_sample->raw, s.raw, sizeof(ret_sample->raw));
    ret_sample->seq = s.seq;
    ret_sample->retries = s.retries;
    ret_sample->nr_present = s.nr_present;
    return 0;
}

/* The header as it is, then every record whole under its sequence number. */
static int region_dump(struct xenstats_vcpu_map *map, void *buf, size_t len)
{
    struct region_map *m = region_of(map);
    const struct xenstats_vcpu_layout *l = &map->layout;
    const unsigned char *records = m->mem + l->offset;
    uint32_t done;
    unsigned int n;

    (void)len;
    copy_words(buf, m->mem, l->offset);
    /* the domain section and its arch block: written under their seq too */
    if (l->version >= 2) {
        struct dump_sink sink = {.out = (unsigned char *)buf + l->domain_offset,
                                 .stride = l->domain_arch_offset + l->domain_arch_size};

        if (read_batch(m->mem + l->domain_offset, sink.stride, 1, map->max_retries, &dump_ops, &sink) < 0)
            return -EBUSY;
    }
    for (done = 0; done < l->nr_vcpus; done += n) {
        struct dump_sink sink = {.out = (unsigned char *)buf + l->offset + (size_t)done * l->stride,
                                 .stride = l->stride};

        n = l->nr_vcpus - done < BATCH ? l->nr_vcpus - done : BATCH;
        if (read_batch(records + (size_t)done * l->stride, l->stride, n, map->max_retries, &dump_ops, &sink) < 0)
            return -EBUSY;
    }
    return 0;
}

/*
 * The producer's clock by the time base (vcpu_stats.h): the latest record
 * read, brought forward by the ticks since it was stamped.  Only an
 * interval is scaled.  False when this process cannot use the time base:
 * another counter, stamped for another domain, or no stamp read yet.
 */
static bool tick_clock(const struct region_map *m, uint64_t *ret_now)
{
    const struct xenstats_vcpu_layout *l = &m->map.layout;
    uint32_t self = m->host ? xenstats_host_self_domid(m->host) : 0;
    uint64_t ticks, elapsed = 0;

    if (l->tick_source == XEN_VCPU_STATS_TICK_NONE || l->tick_source != TICKS_SOURCE || l->tick_domid != self ||
        m->latest.time <= 0 || (m->latest.ticks & XEN_VCPU_STATS_INACTIVE_BIT))
        return false;
    ticks = ticks_read();
    if (ticks > m->latest.ticks) {
        unsigned __int128 ns = (unsigned __int128)(ticks - m->latest.ticks) * 1000000000u / l->tick_hz;

        /* a rate no counter has: no later than the clock can say */
        elapsed = ns > (uint64_t)INT64_MAX - (uint64_t)m->latest.time ? (uint64_t)INT64_MAX - (uint64_t)m->latest.time
                                                                       : (uint64_t)ns;
    }
    *ret_now = (uint64_t)m->latest.time + elapsed;
    return true;
}

/*
 * The backend's clock, in the producer's time.  Without a time base: a  A region is stamped by its
 * producer's clock (on Xen, NOW(): not readable from user space), which may
 * be ahead of the backend's by a constant.  Every UPDATE_TIME already read
 * was stamped before this clock reading, so the latest one bounds the
 * offset from below; the host keeps the largest bound any region gave.
 * With busy vCPUs anywhere on the host it comes within milliseconds of
 * the true offset, and "now" is never behind a time already seen.
 */
static int region_clock(struct xenstats_vcpu_map *map, uint64_t *ret_now)
{
    struct region_map *m = region_of(map);
    uint64_t now;
    int r;

    if (!m->live)
        return -EOPNOTSUPP;
    if (tick_clock(m, ret_now))
        return 0;
    if (!m->host)
        return -EOPNOTSUPP;
    r = platform_resource_clock_ns(&m->host->platform, &now);
    if (r < 0)
        return r;
    if ((uint64_t)m->latest.time > now && (int64_t)((uint64_t)m->latest.time - now) > m->host->region_clock_offset)
        m->host->region_clock_offset = (int64_t)((uint64_t)m->latest.time - now);
    *ret_now = now + (uint64_t)m->host->region_clock_offset;
    return 0;
}

static void region_close(struct xenstats_vcpu_map *map)
{
    struct region_map *m = region_of(map);

    if (m->host)
        platform_resource_unmap(&m->host->platform, &m->resource);
    free(m->owned);
    free(m);
}

static const struct vcpu_source_ops region_ops = {
    .source = XENSTATS_VCPU_SOURCE_RESOURCE,
    .snapshot = region_snapshot,
    .snapshot_domain = region_snapshot_domain,
    .dump = region_dump,
    .clock = region_clock,
    .close = region_close,
};

static struct region_map *map_new(const void *mem, size_t len)
{
    struct region_map *m;
    int r;

    m = calloc(1, sizeof(*m));
    if (!m) {
        errno = ENOMEM;
        return NULL;
    }
    r = xenstats_vcpu_layout_parse(mem, len, &m->map.layout);
    if (r < 0) {
        free(m);
        set_errno(r);
        return NULL;
    }
    m->map.ops = &region_ops;
    m->map.max_retries = XENSTATS_VCPU_DEFAULT_MAX_RETRIES;
    m->mem = mem;
    m->len = len;
    m->latest.ticks = XEN_VCPU_STATS_INACTIVE;
    return m;
}

struct xenstats_vcpu_map *xenstats_vcpu_map_open_memory(const void *mem, size_t len)
{
    struct region_map *m = map_new(mem, len);

    if (!m)
        return NULL;
    m->live = true; /* a reader in domain 0 */
    return &m->map;
}

struct xenstats_vcpu_map *xenstats_vcpu_map_open_file(const char *path)
{
    struct region_map *map;
    char *text = NULL;
    size_t len = 0;
    void *buf;
    int r;

    /* A region for 2^20 vCPUs of a generous record is well below this. */
    r = read_small_file(path, 256u << 20, &text, &len);
    if (r < 0) {
        set_errno(r);
        return NULL;
    }
    /* read_small_file's buffer is malloc()ed: 16-byte aligned. */
    buf = text;
    map = map_new(buf, len);
    if (!map) {
        int saved = errno;

        free(buf);
        errno = saved;
        return NULL;
    }
    map->owned = buf;
    return &map->map;
}

struct xenstats_vcpu_map *xenstats_vcpu_map_open(struct xenstats_host *host, uint32_t domid)
{
    struct platform *p = &host->platform;
    struct xenstats_domain_info info;
    struct platform_resource res;
    struct region_map *map;
    int r;

    r = platform_domain_info(p, domid, &info);
    if (r < 0) {
        set_errno(r);
        return NULL;
    }
    r = platform_resource_map(p, domid, XEN_VCPU_STATS_RESOURCE_TYPE, XEN_VCPU_STATS_RESOURCE_ID, &res);
    if (r < 0) {
        /* every version's way of saying "no such resource" is one answer */
        set_errno(platform_resource_absent(r) ? -EOPNOTSUPP : r);
        return NULL;
    }
    map = map_new(res.addr, res.len);
    if (!map) {
        int saved = errno;

        platform_resource_unmap(p, &res);
        errno = saved;
        return NULL;
    }
    /* The mapping is whole frames; the domain's vCPU count bounds it. */
    if (info.nr_vcpus > map->map.layout.nr_vcpus) {
        log_warning("domain %u: region holds %u records for %u vCPUs", domid, map->map.layout.nr_vcpus,
                    info.nr_vcpus);
        platform_resource_unmap(p, &res);
        free(map);
        set_errno(-ERANGE);
        return NULL;
    }
    map->map.layout.nr_vcpus = info.nr_vcpus;
    map->host = host;
    map->live = true;
    map->resource = res;
    return &map->map;
}
