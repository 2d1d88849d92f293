/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reader of the vCPU statistics layout.  The producer is the hypervisor (or
 * the emulated host); it is trusted to follow the protocol but its region is
 * still validated against the mapping before any record is read.  Every
 * load from the shared region is a single-copy atomic load: the region is
 * written concurrently.
 */
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <xenstats/vcpu.h>

#include "platform/platform.h"
#include "util/util.h"
#include "vcpu/reader.h"

#define HEADER_SIZE ((uint32_t)sizeof(struct xen_vcpu_stats_header))

struct xenstats_vcpu_map {
    const unsigned char *mem;
    size_t len;
    struct xenstats_vcpu_layout layout;
    uint32_t max_retries;
    struct xenstats_host *host; /* live producer, NULL for files/memory */
    struct platform_resource resource;
    void *owned; /* file contents */
    bool hypercall; /* no region: samples come from vcpu_hypercall_read() */
    uint32_t domid;
    uint64_t max_update; /* latest UPDATE_TIME read from the region */
};

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

int xenstats_vcpu_layout_parse(const void *mem, size_t len, struct xenstats_vcpu_layout *ret_layout)
{
    const struct xen_vcpu_stats_header *h = mem;
    uint32_t magic, offset, size, stride;
    uint64_t room, nr;

    if (!mem || len < HEADER_SIZE || ((uintptr_t)mem & 7))
        return set_errno(-ERANGE);
    magic = load32(&h->magic);
    offset = load32(&h->offset);
    size = load32(&h->size);
    stride = load32(&h->stride);

    if (magic != XEN_VCPU_STATS_MAGIC)
        return set_errno(-EBADMSG);
    if (offset < HEADER_SIZE || size < 8 || size % 8 || stride < size || offset % XEN_VCPU_STATS_ALIGN ||
        stride % XEN_VCPU_STATS_ALIGN)
        return set_errno(-EINVAL);
    /* 64-bit arithmetic on 32-bit fields cannot overflow. */
    if ((uint64_t)offset + size > len)
        return set_errno(-ERANGE);
    room = (uint64_t)len - offset - size;
    nr = room / stride + 1;
    if (nr > UINT32_MAX)
        nr = UINT32_MAX;

    ret_layout->offset = offset;
    ret_layout->size = size;
    ret_layout->stride = stride;
    ret_layout->nr_vcpus = (uint32_t)nr;
    return 0;
}

#if defined(__SANITIZE_THREAD__)
#define XENSTATS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define XENSTATS_TSAN 1
#endif
#endif

/*
 * Copy `bytes` bytes of counters from a record being written concurrently.
 * Between the two reads of seq the copy may be torn; the seq check throws
 * such a copy away, so a plain memcpy is enough (as Linux's seqlock readers
 * do), and the acquire fence after it is also a compiler barrier.  Under
 * TSan, relaxed atomic loads tell the sanitizer the race is intended.
 */
static inline __attribute__((always_inline)) void copy_counters(uint64_t *dst, const uint64_t *src, unsigned int bytes)
{
#ifdef XENSTATS_TSAN
    for (unsigned int i = 0; i < bytes / 8; i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
#else
    memcpy(dst, src, bytes);
#endif
}

static inline __attribute__((always_inline)) int read_record(const unsigned char *record, unsigned int bytes,
                                                             unsigned int nr_present, uint32_t max_retries,
                                                             struct xenstats_vcpu_sample *ret_sample)
{
    const uint32_t *seq = (const uint32_t *)record;
    uint32_t attempt, s1, s2;

    for (attempt = 0; attempt <= max_retries; attempt++) {
        s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
        if (s1 & 1) {
            cpu_relax();
            continue;
        }
        copy_counters(ret_sample->raw, (const uint64_t *)(record + 8), bytes);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        s2 = __atomic_load_n(seq, __ATOMIC_RELAXED);
        if (s1 == s2) {
            ret_sample->seq = s1;
            ret_sample->retries = attempt;
            ret_sample->nr_present = nr_present;
            return 0;
        }
    }
    return -EBUSY;
}

int vcpu_record_read(const unsigned char *record, uint32_t size, unsigned int nr_known, uint32_t max_retries,
                     struct xenstats_vcpu_sample *ret_sample)
{
    unsigned int have = (size - 8) / 8, n;
    struct xenstats_vcpu_sample s;
    unsigned int i;

    if (nr_known > XENSTATS_VCPU_NR_COUNTERS)
        nr_known = XENSTATS_VCPU_NR_COUNTERS;
    n = have < nr_known ? have : nr_known;
    if (read_record(record, n * 8, n, max_retries, &s) < 0)
        return -EBUSY;
    for (i = n; i < XENSTATS_VCPU_NR_COUNTERS; i++)
        s.raw[i] = XEN_VCPU_STATS_INACTIVE;
    *ret_sample = s;
    return 0;
}

static const unsigned char *record_at(const struct xenstats_vcpu_map *map, uint32_t vcpu)
{
    return map->mem + map->layout.offset + (uint64_t)vcpu * map->layout.stride;
}

static struct xenstats_vcpu_map *map_new(const void *mem, size_t len)
{
    struct xenstats_vcpu_map *map;
    int r;

    map = calloc(1, sizeof(*map));
    if (!map) {
        errno = ENOMEM;
        return NULL;
    }
    r = xenstats_vcpu_layout_parse(mem, len, &map->layout);
    if (r < 0) {
        free(map);
        set_errno(r);
        return NULL;
    }
    map->mem = mem;
    map->len = len;
    map->max_retries = XENSTATS_VCPU_DEFAULT_MAX_RETRIES;
    return map;
}

struct xenstats_vcpu_map *xenstats_vcpu_map_open_memory(const void *mem, size_t len)
{
    return map_new(mem, len);
}

struct xenstats_vcpu_map *xenstats_vcpu_map_open_file(const char *path)
{
    struct xenstats_vcpu_map *map;
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
    return map;
}

struct xenstats_vcpu_map *xenstats_vcpu_map_open(struct xenstats_host *host, uint32_t domid)
{
    struct platform *p = &host->platform;
    struct xenstats_domain_info info;
    struct platform_resource res;
    struct xenstats_vcpu_map *map;
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
    if (info.nr_vcpus > map->layout.nr_vcpus) {
        log_warning("domain %u: region holds %u records for %u vCPUs", domid, map->layout.nr_vcpus,
                    info.nr_vcpus);
        platform_resource_unmap(p, &res);
        free(map);
        set_errno(-ERANGE);
        return NULL;
    }
    map->layout.nr_vcpus = info.nr_vcpus;
    map->host = host;
    map->resource = res;
    return map;
}

/* A map with no region: its layout only carries the vCPU count. */
struct xenstats_vcpu_map *xenstats_vcpu_map_open_hypercall(struct xenstats_host *host, uint32_t domid)
{
    struct platform *p = &host->platform;
    struct xenstats_domain_info info;
    struct xenstats_vcpu_sample probe;
    struct xenstats_vcpu_map *map;
    int r;

    r = platform_domain_info(p, domid, &info);
    if (r < 0)
        return set_errno(r), NULL;
    /* Ask once now, so that a refusal shows at open, not at the first sample. */
    r = vcpu_hypercall_read(host, domid, 0, &probe);
    if (r < 0)
        return set_errno(r), NULL;
    map = calloc(1, sizeof(*map));
    if (!map)
        return set_errno(-ENOMEM), NULL;
    map->layout.size = XEN_VCPU_STATS_RECORD_SIZE;
    map->layout.nr_vcpus = info.nr_vcpus;
    map->max_retries = XENSTATS_VCPU_DEFAULT_MAX_RETRIES;
    map->host = host;
    map->hypercall = true;
    map->domid = domid;
    return map;
}

enum xenstats_vcpu_source xenstats_vcpu_map_source(const struct xenstats_vcpu_map *map)
{
    return map->hypercall ? XENSTATS_VCPU_SOURCE_HYPERCALL : XENSTATS_VCPU_SOURCE_RESOURCE;
}

void xenstats_vcpu_map_close(struct xenstats_vcpu_map *map)
{
    if (!map)
        return;
    if (map->host && !map->hypercall)
        platform_resource_unmap(&map->host->platform, &map->resource);
    free(map->owned);
    free(map);
}

const struct xenstats_vcpu_layout *xenstats_vcpu_map_layout(const struct xenstats_vcpu_map *map)
{
    return &map->layout;
}

uint32_t xenstats_vcpu_map_nr_vcpus(const struct xenstats_vcpu_map *map)
{
    return map->layout.nr_vcpus;
}

void xenstats_vcpu_map_set_max_retries(struct xenstats_vcpu_map *map, uint32_t max_retries)
{
    map->max_retries = max_retries;
}

/* Remember the latest producer time seen, for xenstats_vcpu_map_clock(). */
static void note_update_times(struct xenstats_vcpu_map *map, const struct xenstats_vcpu_sample *samples, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++)
        if (xenstats_vcpu_sample_status(&samples[i], XEN_VCPU_STATS_UPDATE_TIME) == XENSTATS_COUNTER_VALID &&
            samples[i].raw[XEN_VCPU_STATS_UPDATE_TIME] > map->max_update)
            map->max_update = samples[i].raw[XEN_VCPU_STATS_UPDATE_TIME];
}

int xenstats_vcpu_map_snapshot(struct xenstats_vcpu_map *map, uint32_t vcpu, struct xenstats_vcpu_sample *ret_sample)
{
    int r;

    if (vcpu >= map->layout.nr_vcpus)
        return set_errno(-ENOENT);
    if (map->hypercall)
        return set_errno(vcpu_hypercall_read(map->host, map->domid, vcpu, ret_sample));
    r = vcpu_record_read(record_at(map, vcpu), map->layout.size, XENSTATS_VCPU_NR_COUNTERS, map->max_retries,
                         ret_sample);
    if (r == 0)
        note_update_times(map, ret_sample, 1);
    return set_errno(r);
}

int xenstats_vcpu_map_snapshot_all(struct xenstats_vcpu_map *map, struct xenstats_vcpu_sample *ret_samples,
                                   uint32_t count)
{
    const unsigned char *record;
    uint32_t stride = map->layout.stride, i;

    if (count > map->layout.nr_vcpus)
        return set_errno(-ENOENT);
    if (map->hypercall) {
        for (i = 0; i < count; i++) {
            int r = vcpu_hypercall_read(map->host, map->domid, i, &ret_samples[i]);

            if (r < 0)
                return set_errno(r);
        }
        return 0;
    }
    record = map->mem + map->layout.offset;
    if (map->layout.size >= XEN_VCPU_STATS_RECORD_SIZE) {
        /* The producer has every counter we know: constant-size copies. */
        for (i = 0; i < count; i++, record += stride)
            if (read_record(record, XENSTATS_VCPU_NR_COUNTERS * 8, XENSTATS_VCPU_NR_COUNTERS, map->max_retries,
                            &ret_samples[i]) < 0)
                return set_errno(-EBUSY);
    } else {
        for (i = 0; i < count; i++, record += stride)
            if (vcpu_record_read(record, map->layout.size, XENSTATS_VCPU_NR_COUNTERS, map->max_retries,
                                 &ret_samples[i]) < 0)
                return set_errno(-EBUSY);
    }
    note_update_times(map, ret_samples, count);
    return 0;
}

size_t xenstats_vcpu_map_dump_size(const struct xenstats_vcpu_map *map)
{
    return (size_t)map->layout.offset + (size_t)map->layout.nr_vcpus * map->layout.stride;
}

int xenstats_vcpu_map_dump(struct xenstats_vcpu_map *map, void *buf, size_t len)
{
    unsigned char *out = buf;
    uint32_t v, attempt;
    size_t i;

    if (map->hypercall)
        return set_errno(-EOPNOTSUPP);
    if (len < xenstats_vcpu_map_dump_size(map))
        return set_errno(-ENOBUFS);
    for (i = 0; i < map->layout.offset; i += 4)
        *(uint32_t *)(out + i) = load32(map->mem + i);
    for (v = 0; v < map->layout.nr_vcpus; v++) {
        const unsigned char *rec = record_at(map, v);
        unsigned char *dst = out + map->layout.offset + (size_t)v * map->layout.stride;

        for (attempt = 0; attempt <= map->max_retries; attempt++) {
            uint32_t s1 = __atomic_load_n((const uint32_t *)rec, __ATOMIC_ACQUIRE), s2;

            if (s1 & 1) {
                cpu_relax();
                continue;
            }
            for (i = 0; i < map->layout.stride; i += 4)
                *(uint32_t *)(dst + i) = load32(rec + i);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            s2 = __atomic_load_n((const uint32_t *)rec, __ATOMIC_RELAXED);
            if (s1 == s2)
                break;
        }
        if (attempt > map->max_retries)
            return set_errno(-EBUSY);
    }
    return 0;
}

int xenstats_vcpu_sample_project(const struct xenstats_vcpu_sample *sample, uint64_t now, uint64_t ret_times[4])
{
    unsigned int i;
    uint64_t state, updated;

    for (i = 0; i < 4; i++)
        ret_times[i] = xenstats_vcpu_sample_value(sample, i);
    if (xenstats_vcpu_sample_status(sample, XEN_VCPU_STATS_STATE) != XENSTATS_COUNTER_VALID ||
        xenstats_vcpu_sample_status(sample, XEN_VCPU_STATS_UPDATE_TIME) != XENSTATS_COUNTER_VALID)
        return set_errno(-ENODATA);
    state = sample->raw[XEN_VCPU_STATS_STATE];
    updated = sample->raw[XEN_VCPU_STATS_UPDATE_TIME];
    if (state > 3 || xenstats_vcpu_sample_status(sample, (unsigned int)state) != XENSTATS_COUNTER_VALID)
        return set_errno(-ENODATA);
    if (now > updated)
        ret_times[state] += now - updated;
    return 0;
}

/*
 * The backend's clock, in the producer's time.  A region is stamped by its
 * producer's clock (on Xen, NOW(): not readable from user space), which may
 * be ahead of the backend's by a constant.  Every UPDATE_TIME already read
 * was stamped before this clock reading, so the latest one bounds the
 * offset from below; the host keeps the largest bound any region gave.
 * With busy vCPUs anywhere on the host it comes within milliseconds of
 * the true offset, and "now" is never behind a time already seen.
 */
int xenstats_vcpu_map_clock(struct xenstats_vcpu_map *map, uint64_t *ret_now)
{
    uint64_t now;
    int r;

    if (!map->host)
        return set_errno(-EOPNOTSUPP);
    r = platform_resource_clock_ns(&map->host->platform, &now);
    if (r < 0)
        return set_errno(r);
    if (!map->hypercall && map->max_update > now &&
        (int64_t)(map->max_update - now) > map->host->region_clock_offset)
        map->host->region_clock_offset = (int64_t)(map->max_update - now);
    if (!map->hypercall)
        now += (uint64_t)map->host->region_clock_offset;
    *ret_now = now;
    return 0;
}

static const char *const counter_names[XENSTATS_VCPU_NR_COUNTERS] = {
    [XEN_VCPU_STATS_RUNNING_TIME] = "running_time",   [XEN_VCPU_STATS_RUNNABLE_TIME] = "runnable_time",
    [XEN_VCPU_STATS_BLOCKED_TIME] = "blocked_time",   [XEN_VCPU_STATS_OFFLINE_TIME] = "offline_time",
    [XEN_VCPU_STATS_STATE_CHANGES] = "state_changes", [XEN_VCPU_STATS_STATE] = "state",
    [XEN_VCPU_STATS_UPDATE_TIME] = "update_time",
};

const char *xenstats_vcpu_counter_name(unsigned int idx)
{
    return idx < XENSTATS_VCPU_NR_COUNTERS ? counter_names[idx] : NULL;
}

const char *xenstats_vcpu_runstate_name(uint64_t state)
{
    static const char *const names[] = {"running", "runnable", "blocked", "offline"};

    return state < ARRAY_SIZE(names) ? names[state] : NULL;
}
