/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vCPU statistics layout: writer, header validation, reader and
 * compatibility, for version 2 regions, version 1 regions and regions as a
 * producer of the first proposal's text may write them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include <xenstats/abi/vcpu_stats_writer.h>
#include <xenstats/vcpu.h>

#include "util/ticks.h"
#include "vcpu/reader.h"

#define PAGE 4096

struct region {
    uint64_t words[PAGE * 4 / 8]; /* 8-byte aligned, 16 KiB */
    /* the producer's own state, outside the shared bytes */
    struct xen_vcpu_stats_writer w;
    struct xen_vcpu_stats_block dom;
    struct xen_vcpu_stats_block vcpu[8];
};

static const struct xen_vcpu_stats_time_base no_time = {XEN_VCPU_STATS_ARCH_X86, XEN_VCPU_STATS_TICK_NONE, 0, 0};

static struct region *new_region_time(uint32_t nr_vcpus, uint32_t line, const struct xen_vcpu_stats_time_base *time,
                                      size_t *ret_len)
{
    struct region *r = calloc(1, sizeof(*r));
    uint64_t need = xen_vcpu_stats_region_bytes(nr_vcpus, line);

    assert_non_null(r);
    assert_true(need > 0 && need <= sizeof(r->words) && nr_vcpus <= 8);
    assert_int_equal(xen_vcpu_stats_init(&r->w, r->words, need, nr_vcpus, line, time), 0);
    xen_vcpu_stats_domain_block(&r->w, &r->dom);
    for (uint32_t v = 0; v < nr_vcpus; v++)
        xen_vcpu_stats_vcpu_block(&r->w, v, &r->vcpu[v]);
    *ret_len = (size_t)need;
    return r;
}

static struct region *new_region(uint32_t nr_vcpus, uint32_t line, size_t *ret_len)
{
    return new_region_time(nr_vcpus, line, &no_time, ret_len);
}

static struct xen_vcpu_stats_header *hdr(struct region *r)
{
    return (void *)r->words;
}

static unsigned char *bytes(struct region *r)
{
    return (unsigned char *)r->words;
}

static struct xen_vcpu_stats *record(struct region *r, uint32_t v)
{
    return (void *)(bytes(r) + hdr(r)->offset + (size_t)v * hdr(r)->stride);
}

static void test_offsets(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct xen_vcpu_stats_header), XEN_VCPU_STATS_HEADER_SIZE);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, magic), 0);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, offset), 4);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, size), 8);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, stride), 12);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, header_size), 16);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, version), 20);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, tick_hz), 64);
    assert_int_equal(offsetof(struct xen_vcpu_stats, seq), 0);
    assert_int_equal(offsetof(struct xen_vcpu_stats, magic), 4);
    assert_int_equal(offsetof(struct xen_vcpu_stats_domain, seq), 0);
    assert_int_equal(offsetof(struct xen_vcpu_stats_domain, magic), 4);
    for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
        assert_int_equal(offsetof(struct xen_vcpu_stats, counter) + 8 * i, XEN_VCPU_STATS_COUNTER_OFFSET(i));
    /* Xen's RUNSTATE_* order */
    assert_int_equal(XEN_VCPU_STATS_RUNNING_TIME, XEN_VCPU_STATS_RUNSTATE_RUNNING);
    assert_int_equal(XEN_VCPU_STATS_RUNNABLE_TIME, XEN_VCPU_STATS_RUNSTATE_RUNNABLE);
    assert_int_equal(XEN_VCPU_STATS_BLOCKED_TIME, XEN_VCPU_STATS_RUNSTATE_BLOCKED);
    assert_int_equal(XEN_VCPU_STATS_OFFLINE_TIME, XEN_VCPU_STATS_RUNSTATE_OFFLINE);
    assert_int_equal(XEN_VCPU_STATS_MAGIC, 0xaabbccddU);
    /* the magics read as their words in a hex dump */
    assert_memory_equal(&(uint32_t){XEN_VCPU_STATS_VCPU_MAGIC}, "vCPU", 4);
    assert_memory_equal(&(uint32_t){XEN_VCPU_STATS_DOMAIN_MAGIC}, "xDOM", 4);
}

static void test_init_v2(void **state)
{
    const struct xen_vcpu_stats_time_base tb = {XEN_VCPU_STATS_ARCH_ARM, XEN_VCPU_STATS_TICK_ARM_CNTVCT, 0, 25000000};
    size_t len;
    struct region *r = new_region_time(3, 128, &tb, &len);
    const struct xen_vcpu_stats_header *h = hdr(r);
    unsigned char *b = bytes(r);
    size_t i;

    (void)state;
    assert_int_equal(h->magic, XEN_VCPU_STATS_MAGIC);
    assert_int_equal(h->header_size, 72);
    assert_int_equal(h->version, 2);
    assert_int_equal(h->nr_vcpus, 3);
    assert_int_equal(h->arch, XEN_VCPU_STATS_ARCH_ARM);
    assert_int_equal(h->domain_offset, 128);
    assert_int_equal(h->domain_size, 32);
    assert_int_equal(h->domain_arch_offset, 32);
    assert_int_equal(h->domain_arch_size, 0);
    assert_int_equal(h->offset, 256);
    assert_int_equal(h->size, 72);
    assert_int_equal(h->stride, 128);
    assert_int_equal(h->vcpu_arch_offset, 72);
    assert_int_equal(h->vcpu_arch_size, 0);
    assert_int_equal(h->tick_source, XEN_VCPU_STATS_TICK_ARM_CNTVCT);
    assert_int_equal(h->tick_hz, 25000000);
    assert_int_equal(len, 256 + 3 * 128);
    for (i = 72; i < 128; i++) /* reserved: zero */
        assert_int_equal(b[i], 0);
    assert_int_equal(*(uint32_t *)(b + 128), 0);
    assert_int_equal(*(uint32_t *)(b + 132), XEN_VCPU_STATS_DOMAIN_MAGIC);
    for (i = 136; i < 256; i++) /* domain counters and padding: inactive */
        assert_int_equal(b[i], 0xff);
    for (uint32_t v = 0; v < 3; v++) {
        struct xen_vcpu_stats *rec = record(r, v);
        unsigned char *rb = (unsigned char *)rec;

        assert_int_equal(rec->seq, 0);
        assert_int_equal(rec->magic, XEN_VCPU_STATS_VCPU_MAGIC);
        for (i = 8; i < 128; i++) /* counters and the record's tail */
            assert_int_equal(rb[i], 0xff);
    }
    free(r);
}

static void test_init_rejects(void **state)
{
    struct region *r = calloc(1, sizeof(*r));

    (void)state;
    assert_int_equal(xen_vcpu_stats_region_bytes(1, 0), 0);
    assert_int_equal(xen_vcpu_stats_region_bytes(1, 32), 0);
    assert_int_equal(xen_vcpu_stats_region_bytes(1, 96), 0);
    assert_int_equal(xen_vcpu_stats_region_bytes(0, 64), 0);
    assert_int_equal(xen_vcpu_stats_region_bytes(0x7fffffff, 64), 0); /* > 4 GiB */
    assert_int_equal(xen_vcpu_stats_region_bytes(2, 64), 192 + 2 * 128);
    assert_int_equal(xen_vcpu_stats_init(&r->w, r->words, 64, 2, 64, &no_time), -1);  /* too small */
    assert_int_equal(xen_vcpu_stats_init(&r->w, r->words, 452, 2, 64, &no_time), -1); /* not whole words */
    assert_int_equal(hdr(r)->magic, 0);                                                /* nothing written */
    free(r);
}

static void test_saturation(void **state)
{
    size_t len;
    struct region *r = new_region(1, 64, &len);
    struct xen_vcpu_stats_block *b = &r->vcpu[0];
    struct xen_vcpu_stats *rec = record(r, 0);
    struct xenstats_vcpu_sample s;

    (void)state;
    xen_vcpu_stats_begin(b);
    xen_vcpu_stats_set(b, 0, 0x7fffffffffffffffULL); /* largest active value */
    xen_vcpu_stats_set(b, 1, 0x8000000000000000ULL); /* overflows: saturates */
    xen_vcpu_stats_set(b, 3, 5);
    xen_vcpu_stats_set(b, XEN_VCPU_STATS_NR_COUNTERS, 9); /* not a counter: ignored */
    xen_vcpu_stats_end(b);
    assert_true(rec->counter[1] == XEN_VCPU_STATS_INACTIVE);
    assert_int_equal(rec->seq, 2);
    assert_int_equal(rec->magic, XEN_VCPU_STATS_VCPU_MAGIC);
    assert_true(*(uint64_t *)((unsigned char *)rec + XEN_VCPU_STATS_RECORD_SIZE) == XEN_VCPU_STATS_INACTIVE);

    assert_int_equal(vcpu_record_read((unsigned char *)rec, 72, XENSTATS_VCPU_NR_COUNTERS, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 0), XENSTATS_COUNTER_VALID);
    assert_true(xenstats_vcpu_sample_value(&s, 0) == 0x7fffffffffffffffULL);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 1), XENSTATS_COUNTER_INACTIVE);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 2), XENSTATS_COUNTER_INACTIVE); /* never set */
    assert_int_equal(xenstats_vcpu_sample_value(&s, 3), 5);
    assert_int_equal(s.seq, 2);

    xen_vcpu_stats_begin(b);
    xen_vcpu_stats_set_inactive(b, 3);
    xen_vcpu_stats_end(b);
    assert_int_equal(vcpu_record_read((unsigned char *)rec, 72, XENSTATS_VCPU_NR_COUNTERS, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 3), XENSTATS_COUNTER_INACTIVE);
    assert_int_equal(xenstats_vcpu_sample_value(&s, 3), 0);
    assert_int_equal(s.seq, 4);
    free(r);
}

/*
 * The writer never reads the region: with every shared byte rewritten by
 * someone else, its stores land where its own layout says and its seq
 * follows its own count, and nothing outside the region changes.
 */
static void test_writer_trusts_nothing_shared(void **state)
{
    size_t len;
    struct region *r = new_region(2, 64, &len);
    struct region *before;
    uint32_t off = hdr(r)->offset, stride = hdr(r)->stride;

    (void)state;
    memset(r->words, 0x5a, len);
    before = malloc(sizeof(*r));
    assert_non_null(before);
    memcpy(before, r, sizeof(*r));
    xen_vcpu_stats_begin(&r->vcpu[1]);
    xen_vcpu_stats_set(&r->vcpu[1], XEN_VCPU_STATS_STATE, 2);
    xen_vcpu_stats_end(&r->vcpu[1]);
    xen_vcpu_stats_begin(&r->dom);
    xen_vcpu_stats_set(&r->dom, XEN_VCPU_STATS_DOMAIN_TOT_PAGES, 7);
    xen_vcpu_stats_end(&r->dom);
    assert_int_equal(*(uint32_t *)(bytes(r) + off + stride), 2); /* its seq, not 0x5a5a5a5a + 2 */
    assert_true(*(uint64_t *)(bytes(r) + off + stride + XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_STATE)) == 2);
    assert_int_equal(*(uint32_t *)(bytes(r) + 192 - 64), 2);
    assert_true(*(uint64_t *)(bytes(r) + 128 + 8) == 7);
    /* nothing else moved: clear what was written, compare the rest */
    *(uint32_t *)(bytes(r) + off + stride) = 0x5a5a5a5a;
    *(uint64_t *)(bytes(r) + off + stride + XEN_VCPU_STATS_COUNTER_OFFSET(XEN_VCPU_STATS_STATE)) =
        0x5a5a5a5a5a5a5a5aULL;
    *(uint32_t *)(bytes(r) + 128) = 0x5a5a5a5a;
    *(uint64_t *)(bytes(r) + 136) = 0x5a5a5a5a5a5a5a5aULL;
    r->vcpu[1].seq = before->vcpu[1].seq;
    r->dom.seq = before->dom.seq;
    assert_memory_equal(r, before, sizeof(*r));
    free(before);
    free(r);
}

/* ---- header validation --------------------------------------------------- */

static int parse_with(uint32_t magic, uint32_t offset, uint32_t size, uint32_t stride, size_t len)
{
    static uint64_t buf[PAGE / 8];
    struct xenstats_vcpu_layout l;
    struct xen_vcpu_stats_header *h = (void *)buf;

    memset(buf, 0xff, sizeof(buf));
    h->magic = magic;
    h->offset = offset;
    h->size = size;
    h->stride = stride;
    errno = 0;
    int r = xenstats_vcpu_layout_parse(buf, len, &l);
    if (r < 0)
        assert_int_equal(errno, -r); /* errno is set too */
    return r;
}

static void test_header_validation(void **state)
{
    const uint32_t M = XEN_VCPU_STATS_MAGIC;
    struct xenstats_vcpu_layout l;
    static uint64_t buf[PAGE / 8];

    (void)state;
    assert_int_equal(parse_with(M, 64, 64, 64, PAGE), 0);
    assert_int_equal(parse_with(0xaabbccde, 64, 64, 64, PAGE), -EBADMSG);  /* wrong magic */
    assert_int_equal(parse_with(0xddccbbaa, 64, 64, 64, PAGE), -EBADMSG);  /* other endianness */
    assert_int_equal(parse_with(M, 0, 64, 64, PAGE), -EINVAL);             /* offset inside header */
    assert_int_equal(parse_with(M, 8, 64, 64, PAGE), -EINVAL);
    assert_int_equal(parse_with(M, 100, 64, 64, PAGE), -EINVAL);           /* offset not whole words */
    assert_int_equal(parse_with(M, 96, 64, 64, PAGE), 0);                  /* version 1: 32-byte lines are fine */
    assert_int_equal(parse_with(M, 64, 0, 64, PAGE), -EINVAL);             /* size < 8 */
    assert_int_equal(parse_with(M, 64, 4, 64, PAGE), -EINVAL);
    assert_int_equal(parse_with(M, 64, 12, 64, PAGE), -EINVAL);            /* size not whole counters */
    assert_int_equal(parse_with(M, 64, 72, 64, PAGE), -EINVAL);            /* stride < size */
    assert_int_equal(parse_with(M, 64, 64, 100, PAGE), -EINVAL);           /* stride not whole words */
    assert_int_equal(parse_with(M, 64, 64, 0, PAGE), -EINVAL);
    assert_int_equal(parse_with(M, PAGE, 64, 64, PAGE), -ERANGE);          /* offset past the mapping */
    assert_int_equal(parse_with(M, 64, 4096, 4096, PAGE), -ERANGE);        /* first record past the end */
    assert_int_equal(parse_with(M, 0xffffffc0, 0xffffffc0, 0xffffffc0, PAGE), -ERANGE); /* would overflow */
    assert_int_equal(parse_with(M, 0xffffffc0, 8, 64, PAGE), -ERANGE);
    assert_int_equal(parse_with(M, 64, 64, 0xffffffc0, PAGE), 0);          /* one record fits */
    assert_int_equal(parse_with(M, 64, 64, 64, 15), -ERANGE);              /* mapping smaller than a header */
    assert_int_equal(parse_with(M, 64, 64, 64, 127), -ERANGE);             /* record cut short */

    /* records counted: only whole records inside the mapping */
    memset(buf, 0, sizeof(buf));
    ((struct xen_vcpu_stats_header *)buf)->magic = M;
    ((struct xen_vcpu_stats_header *)buf)->offset = 64;
    ((struct xen_vcpu_stats_header *)buf)->size = 64;
    ((struct xen_vcpu_stats_header *)buf)->stride = 128;
    assert_int_equal(xenstats_vcpu_layout_parse(buf, 64 + 128 * 3 + 64, &l), 0);
    assert_int_equal(l.nr_vcpus, 4); /* the last needs only `size` bytes */
    assert_int_equal(xenstats_vcpu_layout_parse(buf, 64 + 128 * 3 + 63, &l), 0);
    assert_int_equal(l.nr_vcpus, 3);
    /* misaligned memory is refused rather than read with torn loads */
    assert_int_equal(xenstats_vcpu_layout_parse((char *)buf + 4, PAGE - 8, &l), -ERANGE);
}


/*
 * A valid version 2 region, then one field at a time made hostile: each is
 * refused with its errno, and errno is set to it.
 */
static int parse_v2_with(size_t at, uint64_t value, unsigned int width, size_t len)
{
    size_t rlen;
    struct region *r = new_region(3, 64, &rlen);
    struct xenstats_vcpu_layout l;
    int ret;

    if (width == 4)
        *(uint32_t *)(bytes(r) + at) = (uint32_t)value;
    else if (width == 8)
        *(uint64_t *)(bytes(r) + at) = value;
    errno = 0;
    ret = xenstats_vcpu_layout_parse(r->words, len ? len : rlen, &l);
    if (ret < 0)
        assert_int_equal(errno, -ret);
    free(r);
    return ret;
}

#define H(f) offsetof(struct xen_vcpu_stats_header, f)

static void test_header_validation_v2(void **state)
{
    size_t len;
    struct region *r = new_region(3, 64, &len);
    struct xenstats_vcpu_layout l;

    (void)state;
    /* the writer's region: offsets 128 (domain), 192 (records), stride 128 */
    assert_int_equal(xenstats_vcpu_layout_parse(r->words, len, &l), 0);
    assert_int_equal(l.version, 2);
    assert_int_equal(l.nr_vcpus, 3);
    assert_int_equal(l.header_size, 72);
    assert_int_equal(l.domain_offset, 128);
    assert_int_equal(l.domain_size, 32);
    assert_int_equal(l.offset, 192);
    assert_int_equal(l.size, 72);
    assert_int_equal(l.stride, 128);
    assert_int_equal(l.tick_source, XEN_VCPU_STATS_TICK_NONE);
    /* the mapping may hold more than the records: the count is the header's */
    assert_int_equal(xenstats_vcpu_layout_parse(r->words, sizeof(r->words), &l), 0);
    assert_int_equal(l.nr_vcpus, 3);
    free(r);

    assert_int_equal(parse_v2_with(0, 0, 0, 0), 0);
    assert_int_equal(parse_v2_with(H(version), 3, 4, 0), 0); /* a later version, appended only */
    assert_int_equal(parse_v2_with(H(header_size), 64, 4, 0), -EINVAL); /* misses version 2's fields */
    assert_int_equal(parse_v2_with(H(header_size), 76, 4, 0), -EINVAL); /* not whole words */
    assert_int_equal(parse_v2_with(H(header_size), 136, 4, 0), -EINVAL); /* past the domain section */
    assert_int_equal(parse_v2_with(H(header_size), 0xffffffc0, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(offset), 160, 4, 0), -EINVAL);     /* not a line multiple */
    assert_int_equal(parse_v2_with(H(stride), 136, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(domain_offset), 132, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(domain_offset), 64, 4, 0), -EINVAL); /* inside the header */
    assert_int_equal(parse_v2_with(H(domain_offset), 176, 4, 0), -EINVAL); /* its counters past offset */
    assert_int_equal(parse_v2_with(H(domain_offset), 0xfffffff8, 4, 0), -EINVAL); /* no overflow */
    assert_int_equal(parse_v2_with(H(domain_size), 4, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(domain_size), 36, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(domain_size), 72, 4, 0), -EINVAL); /* beyond its arch block's start */
    assert_int_equal(parse_v2_with(H(domain_arch_offset), 24, 4, 0), -EINVAL); /* inside the common counters */
    assert_int_equal(parse_v2_with(H(domain_arch_size), 64, 4, 0), -EINVAL); /* into the records */
    assert_int_equal(parse_v2_with(H(domain_arch_size), 0xfffffff8, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(domain_arch_size), 32, 4, 0), 0); /* room enough before the records */
    assert_int_equal(parse_v2_with(H(vcpu_arch_offset), 64, 4, 0), -EINVAL); /* inside the counters */
    assert_int_equal(parse_v2_with(H(vcpu_arch_offset), 124, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(vcpu_arch_size), 64, 4, 0), -EINVAL); /* past stride */
    assert_int_equal(parse_v2_with(H(vcpu_arch_size), 56, 4, 0), 0);
    assert_int_equal(parse_v2_with(H(nr_vcpus), 0, 4, 0), -EINVAL);
    assert_int_equal(parse_v2_with(H(nr_vcpus), 4, 4, 0), -ERANGE); /* more records than mapped */
    assert_int_equal(parse_v2_with(H(nr_vcpus), 0xffffffff, 4, 0), -ERANGE);
    assert_int_equal(parse_v2_with(0, 0, 0, 192 + 2 * 128 + 71), -ERANGE); /* last record cut short */
    assert_int_equal(parse_v2_with(0, 0, 0, 192 + 2 * 128 + 72), 0);
    assert_int_equal(parse_v2_with(100, 1, 4, 0), -EINVAL);                /* reserved byte not zero */
    assert_int_equal(parse_v2_with(128 + 4, 0x4d4f4479, 4, 0), -EBADMSG);  /* the domain section's magic */
    assert_int_equal(parse_v2_with(192 + 2 * 128 + 4, 0xffffffff, 4, 0), -EBADMSG); /* the last record's */
    assert_int_equal(parse_v2_with(192 + 4, 0, 4, 0), -EBADMSG);
    /* the header's tail tells versions apart: these are version 1 */
    assert_int_equal(parse_v2_with(H(version), 1, 4, 0), 0);
    assert_int_equal(parse_v2_with(H(version), 0, 4, 0), 0);
    assert_int_equal(parse_v2_with(H(version), 0xffffffff, 4, 0), 0);
}

static void test_time_base_parse(void **state)
{
    struct xen_vcpu_stats_time_base tb = {XEN_VCPU_STATS_ARCH_X86, XEN_VCPU_STATS_TICK_X86_TSC, 0, 2400000000ULL};
    struct xenstats_vcpu_layout l;
    size_t len;
    struct region *r = new_region_time(1, 64, &tb, &len);

    (void)state;
    assert_int_equal(xenstats_vcpu_layout_parse(r->words, len, &l), 0);
    assert_int_equal(l.tick_source, XEN_VCPU_STATS_TICK_X86_TSC);
    assert_true(l.tick_hz == 2400000000ULL);
    assert_int_equal(l.arch, XEN_VCPU_STATS_ARCH_X86);
    hdr(r)->tick_source = 9; /* a counter this reader does not know: none */
    assert_int_equal(xenstats_vcpu_layout_parse(r->words, len, &l), 0);
    assert_int_equal(l.tick_source, XEN_VCPU_STATS_TICK_NONE);
    assert_true(l.tick_hz == 0);
    hdr(r)->tick_source = XEN_VCPU_STATS_TICK_X86_TSC;
    hdr(r)->tick_hz = 0; /* no rate: none */
    assert_int_equal(xenstats_vcpu_layout_parse(r->words, len, &l), 0);
    assert_int_equal(l.tick_source, XEN_VCPU_STATS_TICK_NONE);
    free(r);
}

/*
 * Regions as a producer written to the first proposal's text may lay them
 * out: a 16-byte header with the records right after it, and a header
 * tail left zero.  Both read as version 1.
 */
static void test_seed_literal_regions(void **state)
{
    static uint64_t buf[PAGE / 8];
    struct xen_vcpu_stats_header *h = (void *)buf;
    struct xenstats_vcpu_sample s;
    struct xenstats_vcpu_domain_sample d;
    struct xenstats_vcpu_map *map;

    (void)state;
    /* offset 16: vCPU 0's seq where version 2's header_size would be */
    memset(buf, 0xff, sizeof(buf));
    h->magic = XEN_VCPU_STATS_MAGIC;
    h->offset = 16;
    h->size = 24; /* seq, _pad, two counters */
    h->stride = 24;
    for (uint32_t v = 0; v < 3; v++) {
        uint64_t *rec = buf + 2 + 3 * v;

        rec[0] = 4; /* seq 4, _pad 0 */
        rec[1] = 1000 + v;
        rec[2] = 2000 + v;
    }
    map = xenstats_vcpu_map_open_memory(buf, 16 + 3 * 24);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_layout(map)->version, 1);
    assert_int_equal(xenstats_vcpu_map_nr_vcpus(map), 3);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 2, &s), 0);
    assert_int_equal(xenstats_vcpu_sample_value(&s, 0), 1002);
    assert_int_equal(xenstats_vcpu_sample_value(&s, 1), 2002);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 2), XENSTATS_COUNTER_UNKNOWN);
    assert_int_equal(s.seq, 4);
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &d), -ENODATA);
    assert_int_equal(errno, ENODATA);
    xenstats_vcpu_map_close(map);

    /* offset 64 with a zero tail (version 0) and a record's _pad zero */
    memset(buf, 0, sizeof(buf));
    h->magic = XEN_VCPU_STATS_MAGIC;
    h->offset = 64;
    h->size = 64;
    h->stride = 64;
    buf[8] = 2;
    buf[9] = 77;
    map = xenstats_vcpu_map_open_memory(buf, 128);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_layout(map)->version, 1);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_sample_value(&s, 0), 77);
    xenstats_vcpu_map_close(map);
}

/* ---- compatibility ------------------------------------------------------- */

/* An older producer that knows only the four runstate times: size 40. */
static void test_old_producer_new_reader(void **state)
{
    static uint64_t buf[PAGE / 8];
    struct xen_vcpu_stats_header *h = (void *)buf;
    struct xenstats_vcpu_sample s;
    struct xenstats_vcpu_map *map;
    uint64_t *rec;

    (void)state;
    memset(buf, 0xff, sizeof(buf));
    h->magic = XEN_VCPU_STATS_MAGIC;
    h->offset = 64;
    h->size = 40;
    h->stride = 64;
    rec = buf + 8;
    rec[0] = 2; /* seq */
    rec[1] = 100;
    rec[2] = 200;
    rec[3] = 300;
    rec[4] = 400;
    map = xenstats_vcpu_map_open_memory(buf, 64 + 64 * 2);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_nr_vcpus(map), 2);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(xenstats_vcpu_sample_status(&s, i), XENSTATS_COUNTER_VALID);
        assert_int_equal(xenstats_vcpu_sample_value(&s, i), 100 * (i + 1));
    }
    for (int i = 4; i < XENSTATS_VCPU_NR_COUNTERS; i++)
        assert_int_equal(xenstats_vcpu_sample_status(&s, i), XENSTATS_COUNTER_UNKNOWN);
    /* without STATE/UPDATE_TIME the staleness rule cannot apply */
    uint64_t t[XENSTATS_VCPU_NR_RUNSTATES];
    assert_int_equal(xenstats_vcpu_sample_project(&s, 1000, t), -ENODATA);
    assert_int_equal(t[2], 300);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 2, &s), -ENOENT);
    xenstats_vcpu_map_close(map);
}

/* A newer producer with more counters than this reader knows: size 128. */
static void test_new_producer_old_reader(void **state)
{
    static uint64_t buf[PAGE / 8];
    struct xen_vcpu_stats_header *h = (void *)buf;
    struct xenstats_vcpu_sample s;
    uint64_t *rec;

    (void)state;
    memset(buf, 0xff, sizeof(buf));
    h->magic = XEN_VCPU_STATS_MAGIC;
    h->offset = 64;
    h->size = 128;
    h->stride = 128;
    rec = buf + 8;
    rec[0] = 6;
    for (int i = 1; i < 16; i++)
        rec[i] = (uint64_t)i * 11;
    struct xenstats_vcpu_map *map = xenstats_vcpu_map_open_memory(buf, 64 + 128);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    for (int i = 0; i < XENSTATS_VCPU_NR_COUNTERS; i++) {
        assert_int_equal(xenstats_vcpu_sample_status(&s, i), XENSTATS_COUNTER_VALID);
        assert_int_equal(xenstats_vcpu_sample_value(&s, i), (i + 1) * 11);
    }
    xenstats_vcpu_map_close(map);

    /* and a reader built with only four counters on this producer */
    assert_int_equal(vcpu_record_read((unsigned char *)rec, 128, 4, 0, &s), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(xenstats_vcpu_sample_status(&s, i), XENSTATS_COUNTER_VALID);
    for (int i = 4; i < XENSTATS_VCPU_NR_COUNTERS; i++)
        assert_int_equal(xenstats_vcpu_sample_status(&s, i), XENSTATS_COUNTER_UNKNOWN);
}


/*
 * A consumer written to the first proposal's text, knowing nothing of
 * version 2, reads a version 2 region's records: magic, offset, size and
 * stride at byte 0, seq at each record's start, counters from byte 8.
 */
static int seed_consumer_read(const void *mem, uint32_t vcpu, uint64_t ret_counter[4])
{
    const uint32_t *h = mem;
    const unsigned char *rec;
    uint32_t seq;

    if (h[0] != 0xaabbccddU || h[2] < 8 + 4 * 8)
        return -1;
    rec = (const unsigned char *)mem + h[1] + (size_t)vcpu * h[3];
    seq = *(const uint32_t *)rec;
    if (seq & 1)
        return -1;
    memcpy(ret_counter, rec + 8, 4 * 8);
    return *(const uint32_t *)rec == seq ? 0 : -1;
}

static void test_seed_consumer_reads_v2(void **state)
{
    size_t len;
    struct region *r = new_region(2, 64, &len);
    uint64_t c[4];

    (void)state;
    xen_vcpu_stats_begin(&r->vcpu[1]);
    for (unsigned int i = 0; i < 4; i++)
        xen_vcpu_stats_set(&r->vcpu[1], i, 10 + i);
    xen_vcpu_stats_end(&r->vcpu[1]);
    assert_int_equal(seed_consumer_read(r->words, 1, c), 0);
    for (unsigned int i = 0; i < 4; i++)
        assert_int_equal(c[i], 10 + i);
    /* and what it ignores is inactive where it reads it */
    assert_int_equal(seed_consumer_read(r->words, 0, c), 0);
    assert_true(c[0] == XEN_VCPU_STATS_INACTIVE);
    free(r);
}

static void test_domain_section(void **state)
{
    size_t len;
    struct region *r = new_region(1, 64, &len);
    struct xenstats_vcpu_domain_sample d;
    struct xenstats_vcpu_map *map;

    (void)state;
    map = xenstats_vcpu_map_open_memory(r->words, len);
    assert_non_null(map);
    /* before the producer's first write: all inactive */
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &d), 0);
    assert_int_equal(d.nr_present, XEN_VCPU_STATS_DOMAIN_NR_COUNTERS);
    assert_int_equal(xenstats_vcpu_domain_status(&d, XEN_VCPU_STATS_DOMAIN_TOT_PAGES), XENSTATS_COUNTER_INACTIVE);
    xen_vcpu_stats_begin(&r->dom);
    xen_vcpu_stats_set(&r->dom, XEN_VCPU_STATS_DOMAIN_TOT_PAGES, 32768);
    xen_vcpu_stats_set(&r->dom, XEN_VCPU_STATS_DOMAIN_MAX_PAGES, 33024);
    xen_vcpu_stats_set(&r->dom, XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES, 0);
    xen_vcpu_stats_end(&r->dom);
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &d), 0);
    assert_int_equal(xenstats_vcpu_domain_value(&d, XEN_VCPU_STATS_DOMAIN_TOT_PAGES), 32768);
    assert_int_equal(xenstats_vcpu_domain_value(&d, XEN_VCPU_STATS_DOMAIN_MAX_PAGES), 33024);
    assert_int_equal(xenstats_vcpu_domain_status(&d, XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES),
                     XENSTATS_COUNTER_VALID);
    assert_int_equal(xenstats_vcpu_domain_status(&d, XEN_VCPU_STATS_DOMAIN_NR_COUNTERS), XENSTATS_COUNTER_UNKNOWN);
    xenstats_vcpu_map_close(map);

    /* an older producer's section, two counters: the third is unknown */
    hdr(r)->domain_size = 24;
    map = xenstats_vcpu_map_open_memory(r->words, len);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &d), 0);
    assert_int_equal(d.nr_present, 2);
    assert_int_equal(xenstats_vcpu_domain_value(&d, XEN_VCPU_STATS_DOMAIN_MAX_PAGES), 33024);
    assert_int_equal(xenstats_vcpu_domain_status(&d, XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES),
                     XENSTATS_COUNTER_UNKNOWN);
    xenstats_vcpu_map_close(map);
    free(r);
}

/*
 * The time base: a record stamped half a second of ticks ago brings the
 * map's clock to its UPDATE_TIME plus half a second, with no clock of the
 * producer's read; stamped for another domain, or in a counter this
 * process does not read, the time base is not used.
 */
static void test_tick_clock(void **state)
{
    const uint64_t hz = TICKS_SOURCE == XEN_VCPU_STATS_TICK_NONE ? 0 : 1000000000ULL;
    struct xen_vcpu_stats_time_base tb = {TICKS_ARCH, TICKS_SOURCE, 0, hz};
    const uint64_t at = 5000000000ULL, ago = 500000000ULL;
    struct xenstats_vcpu_sample s;
    struct xenstats_vcpu_map *map;
    uint64_t now, ticks, t[XENSTATS_VCPU_NR_RUNSTATES];
    size_t len;
    struct region *r;

    (void)state;
    if (TICKS_SOURCE == XEN_VCPU_STATS_TICK_NONE)
        skip();
    r = new_region_time(1, 64, &tb, &len);
    map = xenstats_vcpu_map_open_memory(r->words, len);
    assert_non_null(map);
    /* nothing read yet: no stamp to count from, and no host clock */
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), -EOPNOTSUPP);
    ticks = ticks_read();
    xen_vcpu_stats_begin(&r->vcpu[0]);
    for (unsigned int i = 0; i < 4; i++)
        xen_vcpu_stats_set(&r->vcpu[0], i, 100);
    xen_vcpu_stats_set(&r->vcpu[0], XEN_VCPU_STATS_STATE, XEN_VCPU_STATS_RUNSTATE_RUNNING);
    xen_vcpu_stats_set(&r->vcpu[0], XEN_VCPU_STATS_UPDATE_TIME, at);
    xen_vcpu_stats_set(&r->vcpu[0], XEN_VCPU_STATS_UPDATE_TICKS, ticks - ago); /* a rate of 1 GHz */
    xen_vcpu_stats_end(&r->vcpu[0]);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    assert_true(now >= at + ago);
    assert_true(now < at + ago + 100000000ULL); /* the test's own run, generously */
    assert_int_equal(xenstats_vcpu_sample_project(&s, now, t), 0);
    assert_true(t[XEN_VCPU_STATS_RUNSTATE_RUNNING] >= 100 + ago);
    assert_int_equal(t[XEN_VCPU_STATS_RUNSTATE_BLOCKED], 100);
    /* ticks ahead of the reader's (another CPU's counter): no time added */
    xen_vcpu_stats_begin(&r->vcpu[0]);
    xen_vcpu_stats_set(&r->vcpu[0], XEN_VCPU_STATS_UPDATE_TIME, at + 1000);
    xen_vcpu_stats_set(&r->vcpu[0], XEN_VCPU_STATS_UPDATE_TICKS, ticks_read() + (1ULL << 40));
    xen_vcpu_stats_end(&r->vcpu[0]);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), 0);
    assert_true(now == at + 1000);
    xenstats_vcpu_map_close(map);

    /* stamped in domain 7's counter: this reader is not domain 7 */
    hdr(r)->tick_domid = 7;
    map = xenstats_vcpu_map_open_memory(r->words, len);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), -EOPNOTSUPP);
    xenstats_vcpu_map_close(map);
    /* the other architecture's counter */
    hdr(r)->tick_domid = 0;
    hdr(r)->tick_source = TICKS_SOURCE == XEN_VCPU_STATS_TICK_X86_TSC ? XEN_VCPU_STATS_TICK_ARM_CNTVCT
                                                                       : XEN_VCPU_STATS_TICK_X86_TSC;
    map = xenstats_vcpu_map_open_memory(r->words, len);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_map_clock(map, &now), -EOPNOTSUPP);
    xenstats_vcpu_map_close(map);
    free(r);
}

/* ---- reader behaviour ---------------------------------------------------- */

static void test_busy_writer_bounded(void **state)
{
    size_t len;
    struct region *r = new_region(2, 64, &len);
    struct xenstats_vcpu_map *map = xenstats_vcpu_map_open_memory(r->words, len);
    struct xenstats_vcpu_sample s[2];
    struct xenstats_vcpu_domain_sample d;

    (void)state;
    assert_non_null(map);
    xen_vcpu_stats_begin(&r->vcpu[1]); /* never ends */
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s[0]), 0);
    assert_int_equal(s[0].retries, 0);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 1, &s[1]), -EBUSY);
    assert_int_equal(errno, EBUSY);
    xenstats_vcpu_map_set_max_retries(map, 0);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 2), -EBUSY);
    xen_vcpu_stats_end(&r->vcpu[1]);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 2), 0);
    assert_int_equal(s[1].seq, 2);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 3), -ENOENT);
    /* the domain section, the same way */
    xen_vcpu_stats_begin(&r->dom);
    xenstats_vcpu_map_set_max_retries(map, 3);
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &d), -EBUSY);
    xen_vcpu_stats_end(&r->dom);
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &d), 0);
    assert_int_equal(d.seq, 2);
    xenstats_vcpu_map_close(map);
    free(r);
}

static void test_projection(void **state)
{
    struct xenstats_vcpu_sample s = {0};
    uint64_t t[XENSTATS_VCPU_NR_RUNSTATES];

    (void)state;
    s.nr_present = XENSTATS_VCPU_NR_COUNTERS;
    s.raw[0] = 10;
    s.raw[1] = 20;
    s.raw[2] = 30;
    s.raw[3] = 40;
    s.raw[XEN_VCPU_STATS_STATE] = XEN_VCPU_STATS_RUNSTATE_RUNNING;
    s.raw[XEN_VCPU_STATS_UPDATE_TIME] = 1000;
    assert_int_equal(xenstats_vcpu_sample_project(&s, 1500, t), 0);
    assert_int_equal(t[0], 510);
    assert_int_equal(t[1], 20);
    s.raw[XEN_VCPU_STATS_STATE] = XEN_VCPU_STATS_RUNSTATE_BLOCKED;
    assert_int_equal(xenstats_vcpu_sample_project(&s, 1500, t), 0);
    assert_int_equal(t[0], 10);
    assert_int_equal(t[2], 530);
    /* a clock behind the record never subtracts */
    assert_int_equal(xenstats_vcpu_sample_project(&s, 900, t), 0);
    assert_int_equal(t[2], 30);
    /* a state out of range, or whose counter is inactive, is not projected */
    s.raw[XEN_VCPU_STATS_STATE] = 7;
    assert_int_equal(xenstats_vcpu_sample_project(&s, 1500, t), -ENODATA);
    s.raw[XEN_VCPU_STATS_STATE] = 3;
    s.raw[3] = XEN_VCPU_STATS_INACTIVE;
    assert_int_equal(xenstats_vcpu_sample_project(&s, 1500, t), -ENODATA);
    assert_int_equal(t[3], 0);
}

static void test_dump_round_trip(void **state)
{
    size_t len;
    struct region *r = new_region(3, 64, &len);
    struct xenstats_vcpu_map *map, *copy;
    struct xenstats_vcpu_sample a, b;
    char path[] = "/tmp/xenstats-dump-XXXXXX";
    void *buf;
    int fd;

    (void)state;
    /* compared whole below: the padding must not be indeterminate */
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    for (uint32_t v = 0; v < 3; v++) {
        xen_vcpu_stats_begin(&r->vcpu[v]);
        for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
            xen_vcpu_stats_set(&r->vcpu[v], i, v * 1000 + i);
        xen_vcpu_stats_end(&r->vcpu[v]);
    }
    xen_vcpu_stats_begin(&r->dom);
    xen_vcpu_stats_set(&r->dom, XEN_VCPU_STATS_DOMAIN_TOT_PAGES, 4096);
    xen_vcpu_stats_set(&r->dom, XEN_VCPU_STATS_DOMAIN_MAX_PAGES, 8192);
    xen_vcpu_stats_end(&r->dom);
    map = xenstats_vcpu_map_open_memory(r->words, len);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_dump_size(map), 192 + 3 * 128);
    buf = malloc(xenstats_vcpu_map_dump_size(map));
    assert_int_equal(xenstats_vcpu_map_dump(map, buf, 10), -ENOBUFS);
    assert_int_equal(xenstats_vcpu_map_dump(map, buf, xenstats_vcpu_map_dump_size(map)), 0);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, xenstats_vcpu_map_dump_size(map)), (ssize_t)xenstats_vcpu_map_dump_size(map));
    close(fd);
    copy = xenstats_vcpu_map_open_file(path);
    assert_non_null(copy);
    assert_int_equal(xenstats_vcpu_map_nr_vcpus(copy), 3);
    for (uint32_t v = 0; v < 3; v++) {
        assert_int_equal(xenstats_vcpu_map_snapshot(map, v, &a), 0);
        assert_int_equal(xenstats_vcpu_map_snapshot(copy, v, &b), 0);
        assert_memory_equal(&a, &b, sizeof(a));
    }
    struct xenstats_vcpu_domain_sample da, db;
    memset(&da, 0, sizeof(da));
    memset(&db, 0, sizeof(db));
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(map, &da), 0);
    assert_int_equal(xenstats_vcpu_map_snapshot_domain(copy, &db), 0);
    assert_memory_equal(&da, &db, sizeof(da));
    assert_int_equal(xenstats_vcpu_domain_value(&db, XEN_VCPU_STATS_DOMAIN_MAX_PAGES), 8192);
    uint64_t now;
    assert_int_equal(xenstats_vcpu_map_clock(copy, &now), -EOPNOTSUPP);
    xenstats_vcpu_map_close(copy);

    /* a file whose magic is wrong is refused */
    ((unsigned char *)buf)[0] ^= 1;
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, buf, 64), 64);
    close(fd);
    assert_null(xenstats_vcpu_map_open_file(path));
    assert_int_equal(errno, EBADMSG);
    unlink(path);
    assert_null(xenstats_vcpu_map_open_file(path));
    assert_int_equal(errno, ENOENT);
    xenstats_vcpu_map_close(map);
    xenstats_vcpu_map_close(NULL);
    free(buf);
    free(r);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(xenstats_vcpu_counter_name(XEN_VCPU_STATS_RUNNING_TIME), "running_time");
    assert_string_equal(xenstats_vcpu_counter_name(XEN_VCPU_STATS_UPDATE_TIME), "update_time");
    assert_string_equal(xenstats_vcpu_counter_name(XEN_VCPU_STATS_UPDATE_TICKS), "update_ticks");
    assert_string_equal(xenstats_vcpu_domain_counter_name(XEN_VCPU_STATS_DOMAIN_TOT_PAGES), "tot_pages");
    assert_string_equal(xenstats_vcpu_domain_counter_name(XEN_VCPU_STATS_DOMAIN_OUTSTANDING_PAGES),
                        "outstanding_pages");
    assert_null(xenstats_vcpu_domain_counter_name(XEN_VCPU_STATS_DOMAIN_NR_COUNTERS));
    assert_null(xenstats_vcpu_counter_name(XEN_VCPU_STATS_NR_COUNTERS));
    assert_string_equal(xenstats_vcpu_runstate_name(2), "blocked");
    assert_null(xenstats_vcpu_runstate_name(4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_init_v2),
        cmocka_unit_test(test_init_rejects),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_writer_trusts_nothing_shared),
        cmocka_unit_test(test_header_validation),
        cmocka_unit_test(test_header_validation_v2),
        cmocka_unit_test(test_time_base_parse),
        cmocka_unit_test(test_seed_literal_regions),
        cmocka_unit_test(test_seed_consumer_reads_v2),
        cmocka_unit_test(test_domain_section),
        cmocka_unit_test(test_tick_clock),
        cmocka_unit_test(test_old_producer_new_reader),
        cmocka_unit_test(test_new_producer_old_reader),
        cmocka_unit_test(test_busy_writer_bounded),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
