/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The vCPU statistics layout: writer, header validation, reader, compatibility. */
#include <errno.h>
#include <setjmp.h>
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

#include "vcpu/reader.h"

#define PAGE 4096

struct region {
    uint64_t words[PAGE * 4 / 8]; /* 8-byte aligned, 16 KiB */
};

static struct region *new_region(uint32_t nr_vcpus, uint32_t line, size_t *ret_len)
{
    struct region *r = calloc(1, sizeof(*r));
    uint64_t need = xen_vcpu_stats_region_bytes(nr_vcpus, line);

    assert_non_null(r);
    assert_true(need > 0 && need <= sizeof(*r));
    assert_int_equal(xen_vcpu_stats_init(r, need, nr_vcpus, line), 0);
    *ret_len = (size_t)need;
    return r;
}

static struct xen_vcpu_stats_header *hdr(void *r)
{
    return r;
}

static void test_offsets(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct xen_vcpu_stats_header), 16);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, magic), 0);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, offset), 4);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, size), 8);
    assert_int_equal(offsetof(struct xen_vcpu_stats_header, stride), 12);
    assert_int_equal(offsetof(struct xen_vcpu_stats, seq), 0);
    assert_int_equal(offsetof(struct xen_vcpu_stats, _pad), 4);
    for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
        assert_int_equal(offsetof(struct xen_vcpu_stats, counter[i]), XEN_VCPU_STATS_COUNTER_OFFSET(i));
    /* Xen's RUNSTATE_* order */
    assert_int_equal(XEN_VCPU_STATS_RUNNING_TIME, XEN_VCPU_STATS_RUNSTATE_RUNNING);
    assert_int_equal(XEN_VCPU_STATS_RUNNABLE_TIME, XEN_VCPU_STATS_RUNSTATE_RUNNABLE);
    assert_int_equal(XEN_VCPU_STATS_BLOCKED_TIME, XEN_VCPU_STATS_RUNSTATE_BLOCKED);
    assert_int_equal(XEN_VCPU_STATS_OFFLINE_TIME, XEN_VCPU_STATS_RUNSTATE_OFFLINE);
    assert_int_equal(XEN_VCPU_STATS_MAGIC, 0xaabbccddU);
}

static void test_init_all_inactive(void **state)
{
    size_t len;
    struct region *r = new_region(3, 128, &len);
    unsigned char *b = (unsigned char *)r;
    size_t i;

    (void)state;
    assert_int_equal(hdr(r)->magic, XEN_VCPU_STATS_MAGIC);
    assert_int_equal(hdr(r)->offset, 128);
    assert_int_equal(hdr(r)->size, 64);
    assert_int_equal(hdr(r)->stride, 128);
    assert_int_equal(len, 128 + 3 * 128);
    /* header tail up to offset: padding, inactive */
    for (i = 16; i < 128; i++)
        assert_int_equal(b[i], 0xff);
    for (uint32_t v = 0; v < 3; v++) {
        struct xen_vcpu_stats *rec = xen_vcpu_stats_record(r, v);
        unsigned char *rb = (unsigned char *)rec;

        assert_int_equal(rec->seq, 0);
        assert_int_equal(rec->_pad, 0xffffffffU);
        for (i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
            assert_true(rec->counter[i] == XEN_VCPU_STATS_INACTIVE);
        for (i = 64; i < 128; i++) /* record tail up to stride */
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
    assert_int_equal(xen_vcpu_stats_region_bytes(0x7fffffff, 64), 0); /* > 4 GiB */
    assert_int_equal(xen_vcpu_stats_region_bytes(2, 64), 64 + 2 * 64);
    assert_int_equal(xen_vcpu_stats_init(r, 64, 2, 64), -1); /* too small */
    assert_int_equal(xen_vcpu_stats_init(r, 196, 2, 64), -1); /* not a multiple of 8 */
    assert_int_equal(hdr(r)->magic, 0);                         /* nothing written */
    free(r);
}

static void test_saturation(void **state)
{
    size_t len;
    struct region *r = new_region(1, 64, &len);
    struct xen_vcpu_stats *rec = xen_vcpu_stats_record(r, 0);
    struct xenstats_vcpu_sample s;

    (void)state;
    xen_vcpu_stats_begin(rec);
    xen_vcpu_stats_set(rec, 0, 0x7fffffffffffffffULL); /* largest active value */
    xen_vcpu_stats_set(rec, 1, 0x8000000000000000ULL); /* overflows: saturates */
    xen_vcpu_stats_set(rec, 2, 0x7ffffffffffffff0ULL);
    xen_vcpu_stats_set(rec, 3, 5);
    xen_vcpu_stats_end(rec);
    assert_true(rec->counter[1] == XEN_VCPU_STATS_INACTIVE);

    xen_vcpu_stats_begin(rec);
    xen_vcpu_stats_add(rec, 2, 0x10);     /* reaches the top bit: saturates */
    xen_vcpu_stats_add(rec, 3, 7);        /* ordinary */
    xen_vcpu_stats_add(rec, 1, 1);        /* inactive stays inactive */
    xen_vcpu_stats_add(rec, 4, 1ULL << 63); /* inactive delta, counter 4 was inactive */
    xen_vcpu_stats_end(rec);
    assert_true(rec->counter[2] == XEN_VCPU_STATS_INACTIVE);
    assert_true(rec->counter[3] == 12);
    assert_int_equal(rec->seq, 4);

    assert_int_equal(vcpu_record_read((unsigned char *)rec, 64, XENSTATS_VCPU_NR_COUNTERS, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 0), XENSTATS_COUNTER_VALID);
    assert_true(xenstats_vcpu_sample_value(&s, 0) == 0x7fffffffffffffffULL);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 1), XENSTATS_COUNTER_INACTIVE);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 2), XENSTATS_COUNTER_INACTIVE);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 3), XENSTATS_COUNTER_VALID);
    assert_int_equal(xenstats_vcpu_sample_value(&s, 3), 12);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 4), XENSTATS_COUNTER_INACTIVE);
    assert_int_equal(s.seq, 4);

    xen_vcpu_stats_begin(rec);
    xen_vcpu_stats_set_inactive(rec, 3);
    xen_vcpu_stats_end(rec);
    assert_int_equal(vcpu_record_read((unsigned char *)rec, 64, XENSTATS_VCPU_NR_COUNTERS, 0, &s), 0);
    assert_int_equal(xenstats_vcpu_sample_status(&s, 3), XENSTATS_COUNTER_INACTIVE);
    assert_int_equal(xenstats_vcpu_sample_value(&s, 3), 0);
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
    assert_int_equal(parse_with(M, 96, 64, 64, PAGE), -EINVAL);            /* offset not a line multiple */
    assert_int_equal(parse_with(M, 64, 0, 64, PAGE), -EINVAL);             /* size < 8 */
    assert_int_equal(parse_with(M, 64, 4, 64, PAGE), -EINVAL);
    assert_int_equal(parse_with(M, 64, 12, 64, PAGE), -EINVAL);            /* size not whole counters */
    assert_int_equal(parse_with(M, 64, 72, 64, PAGE), -EINVAL);            /* stride < size */
    assert_int_equal(parse_with(M, 64, 64, 96, PAGE), -EINVAL);            /* stride not a line multiple */
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

/* ---- reader behaviour ---------------------------------------------------- */

static void test_busy_writer_bounded(void **state)
{
    size_t len;
    struct region *r = new_region(2, 64, &len);
    struct xenstats_vcpu_map *map = xenstats_vcpu_map_open_memory(r, len);
    struct xenstats_vcpu_sample s[2];

    (void)state;
    assert_non_null(map);
    xen_vcpu_stats_begin(xen_vcpu_stats_record(r, 1)); /* never ends */
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 0, &s[0]), 0);
    assert_int_equal(s[0].retries, 0);
    assert_int_equal(xenstats_vcpu_map_snapshot(map, 1, &s[1]), -EBUSY);
    assert_int_equal(errno, EBUSY);
    xenstats_vcpu_map_set_max_retries(map, 0);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 2), -EBUSY);
    xen_vcpu_stats_end(xen_vcpu_stats_record(r, 1));
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 2), 0);
    assert_int_equal(s[1].seq, 2);
    assert_int_equal(xenstats_vcpu_map_snapshot_all(map, s, 3), -ENOENT);
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
        struct xen_vcpu_stats *rec = xen_vcpu_stats_record(r, v);

        xen_vcpu_stats_begin(rec);
        for (unsigned int i = 0; i < XEN_VCPU_STATS_NR_COUNTERS; i++)
            xen_vcpu_stats_set(rec, i, v * 1000 + i);
        xen_vcpu_stats_end(rec);
    }
    map = xenstats_vcpu_map_open_memory(r, len);
    assert_non_null(map);
    assert_int_equal(xenstats_vcpu_map_dump_size(map), 64 + 3 * 64);
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
    assert_null(xenstats_vcpu_counter_name(XEN_VCPU_STATS_NR_COUNTERS));
    assert_string_equal(xenstats_vcpu_runstate_name(2), "blocked");
    assert_null(xenstats_vcpu_runstate_name(4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_init_all_inactive),
        cmocka_unit_test(test_init_rejects),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_header_validation),
        cmocka_unit_test(test_old_producer_new_reader),
        cmocka_unit_test(test_new_producer_old_reader),
        cmocka_unit_test(test_busy_writer_bounded),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
