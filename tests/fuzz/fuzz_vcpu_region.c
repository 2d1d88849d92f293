/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reader of the vCPU statistics region (lib/vcpu/reader.c), versions 1
 * and 2: an input is a region as a producer, or anyone who can write its
 * frames, may leave it.  It goes to xenstats_vcpu_layout_parse() in a heap
 * buffer of exactly its size (a read past the length is caught), and the
 * answer is checked against a reference written another way: every rule
 * of vcpu_stats.h spelled out on the bytes.  A region it accepts is then
 * read whole: every record, the domain section, a dump, the clock; each
 * sample must say only what the bytes say.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <xenstats/vcpu.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t u32(const uint8_t *b, size_t at)
{
    return (uint32_t)b[at] | (uint32_t)b[at + 1] << 8 | (uint32_t)b[at + 2] << 16 | (uint32_t)b[at + 3] << 24;
}

static uint64_t u64(const uint8_t *b, size_t at)
{
    return (uint64_t)u32(b, at) | (uint64_t)u32(b, at + 4) << 32;
}

/* The rules, one by one, in the order of their errnos' precedence. */
static int reference(const uint8_t *b, size_t n, struct xenstats_vcpu_layout *l)
{
    unsigned __int128 end;

    memset(l, 0, sizeof(*l));
    if (n < 16)
        return -ERANGE;
    if (u32(b, 0) != 0xaabbccddU)
        return -EBADMSG;
    l->offset = u32(b, 4);
    l->size = u32(b, 8);
    l->stride = u32(b, 12);
    if (l->offset < 16 || l->offset % 8 || l->size < 8 || l->size % 8 || l->stride < l->size || l->stride % 8)
        return -EINVAL;
    if ((unsigned __int128)l->offset + l->size > n)
        return -ERANGE;
    if (l->offset < 24 || u32(b, 20) < 2 || u32(b, 20) == 0xffffffffU) {
        l->version = 1;
        l->nr_vcpus = (uint32_t)((n - l->offset - l->size) / l->stride + 1);
        return 0;
    }
    l->version = u32(b, 20);
    if (l->offset < 72) /* no room for version 2's header */
        return -EINVAL;
    l->header_size = u32(b, 16);
    l->nr_vcpus = u32(b, 24);
    l->arch = u32(b, 28);
    l->domain_offset = u32(b, 32);
    l->domain_size = u32(b, 36);
    l->domain_arch_offset = u32(b, 40);
    l->domain_arch_size = u32(b, 44);
    l->vcpu_arch_offset = u32(b, 48);
    l->vcpu_arch_size = u32(b, 52);
    l->tick_source = u32(b, 56);
    l->tick_domid = u32(b, 60);
    l->tick_hz = u64(b, 64);
    if (l->offset % 64 || l->stride % 64)
        return -EINVAL;
    if (l->header_size < 72 || l->header_size % 8 || l->header_size > l->domain_offset)
        return -EINVAL;
    if (l->domain_offset % 8 || l->domain_size < 8 || l->domain_size % 8)
        return -EINVAL;
    if (l->domain_arch_offset < l->domain_size || l->domain_arch_offset % 8 || l->domain_arch_size % 8)
        return -EINVAL;
    end = (unsigned __int128)l->domain_offset + l->domain_arch_offset + l->domain_arch_size;
    if (end > l->offset)
        return -EINVAL;
    if (l->vcpu_arch_offset < l->size || l->vcpu_arch_offset % 8 || l->vcpu_arch_size % 8 ||
        (unsigned __int128)l->vcpu_arch_offset + l->vcpu_arch_size > l->stride)
        return -EINVAL;
    if (l->nr_vcpus == 0)
        return -EINVAL;
    for (size_t i = l->header_size; i < l->domain_offset; i++)
        if (b[i])
            return -EINVAL;
    end = (unsigned __int128)l->offset + (unsigned __int128)(l->nr_vcpus - 1) * l->stride + l->size;
    if (end > n)
        return -ERANGE;
    if (u32(b, (size_t)l->domain_offset + 4) != 0x4d4f4478U)
        return -EBADMSG;
    for (uint32_t v = 0; v < l->nr_vcpus; v++)
        if (u32(b, l->offset + (size_t)v * l->stride + 4) != 0x55504376U)
            return -EBADMSG;
    if ((l->tick_source != 1 && l->tick_source != 2) || l->tick_hz == 0) {
        l->tick_source = 0;
        l->tick_hz = 0;
    }
    return 0;
}

/* What a sample of the record at `rec` must hold: the bytes, or unknown. */
static void check_counters(const uint8_t *rec, uint32_t size, const uint64_t *raw, unsigned int nr_known,
                           uint32_t nr_present, uint32_t seq)
{
    unsigned int have = (size - 8) / 8;

    if (nr_present != (have < nr_known ? have : nr_known) || seq != u32(rec, 0) || (seq & 1))
        abort();
    for (unsigned int i = 0; i < nr_known; i++)
        if (raw[i] != (i < nr_present ? u64(rec, 8 + 8 * (size_t)i) : XEN_VCPU_STATS_INACTIVE))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xenstats_vcpu_layout got, want;
    struct xenstats_vcpu_domain_sample d;
    struct xenstats_vcpu_sample *s;
    struct xenstats_vcpu_map *map;
    uint8_t *mem;
    uint64_t now;
    int r, w;

    if (size > 1 << 20)
        return 0;
    /* malloc: 16-byte aligned, as a mapping; exactly `size` for ASan */
    mem = malloc(size ? size : 1);
    if (!mem)
        return 0;
    memcpy(mem, data, size);
    memset(&got, 0xa5, sizeof(got));
    errno = 0;
    r = xenstats_vcpu_layout_parse(mem, size, &got);
    w = reference(mem, size, &want);
    if (r != w || (r < 0 && errno != -r) || (r == 0 && memcmp(&got, &want, sizeof(got))))
        abort();
    if (r < 0 || got.nr_vcpus > 4096)
        goto out;

    map = xenstats_vcpu_map_open_memory(mem, size);
    if (!map)
        abort();
    xenstats_vcpu_map_set_max_retries(map, 0); /* an odd seq never becomes even here */
    s = calloc(got.nr_vcpus, sizeof(*s));
    if (!s)
        abort();
    for (uint32_t v = 0; v < got.nr_vcpus; v++) {
        const uint8_t *rec = mem + got.offset + (size_t)v * got.stride;

        r = xenstats_vcpu_map_snapshot(map, v, &s[v]);
        if (r == 0)
            check_counters(rec, got.size, s[v].raw, XENSTATS_VCPU_NR_COUNTERS, s[v].nr_present, s[v].seq);
        else if (r != -EBUSY || !(u32(rec, 0) & 1))
            abort();
    }
    r = xenstats_vcpu_map_snapshot_all(map, s, got.nr_vcpus);
    if (r != 0 && r != -EBUSY)
        abort();
    r = xenstats_vcpu_map_snapshot_domain(map, &d);
    if (got.version < 2) {
        if (r != -ENODATA)
            abort();
    } else if (r == 0) {
        check_counters(mem + got.domain_offset, got.domain_size, d.raw, XENSTATS_VCPU_DOMAIN_NR_COUNTERS,
                       d.nr_present, d.seq);
    } else if (r != -EBUSY || !(u32(mem, got.domain_offset) & 1)) {
        abort();
    }
    r = xenstats_vcpu_map_clock(map, &now);
    if (r != 0 && r != -EOPNOTSUPP)
        abort();
    if (xenstats_vcpu_map_dump_size(map) <= size) {
        size_t n = xenstats_vcpu_map_dump_size(map);
        uint8_t *buf = malloc(n ? n : 1);

        if (!buf)
            abort();
        r = xenstats_vcpu_map_dump(map, buf, n);
        /* a good dump is the region's bytes, and reads back the same way */
        if (r == 0 && memcmp(buf, mem, n))
            abort();
        if (r == 0 && got.version == 1) {
            struct xenstats_vcpu_map *copy = xenstats_vcpu_map_open_memory(buf, n);

            if (!copy)
                abort();
            xenstats_vcpu_map_close(copy);
        }
        free(buf);
    }
    free(s);
    xenstats_vcpu_map_close(map);
out:
    free(mem);
    return 0;
}
