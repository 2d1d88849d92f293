/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The figures of the xentop layout fixtures, shared by the program that
 * captured xentop's output (capture/fake_xenstat.c serves them to Xen's
 * own xentop.c through libxenstat's API) and by the unit test that lays
 * out the same figures with xenstats (test_xentop_layout.c).  A figure in
 * round r (0 the first) is base + r * step; the clock moves by the delay
 * between rounds, exactly.
 */
#ifndef XENSTATS_TEST_XENTOP_SCENARIO_H
#define XENSTATS_TEST_XENTOP_SCENARIO_H

struct scenario_figure {
    unsigned long long base, step;
};

struct scenario_vcpu {
    int online;
    struct scenario_figure ns;
};

struct scenario_net {
    struct scenario_figure rbytes, rpackets, rerrs, rdrop, tbytes, tpackets, terrs, tdrop;
};

struct scenario_vbd {
    unsigned int dev;
    int error; /* its statistics cannot be read */
    struct scenario_figure oo, rd, wr, rsect, wsect;
};

enum {
    SCENARIO_DYING = 1 << 0, SCENARIO_SHUTDOWN = 1 << 1, SCENARIO_BLOCKED = 1 << 2,
    SCENARIO_CRASHED = 1 << 3, SCENARIO_PAUSED = 1 << 4, SCENARIO_RUNNING = 1 << 5,
};

#define SCENARIO_NO_LIMIT (~0ULL)

struct scenario_domain {
    unsigned int domid;
    const char *name;
    unsigned int first_round; /* listed from this round on */
    unsigned int state;
    struct scenario_figure cpu_ns;
    unsigned long long cur_mem, max_mem; /* bytes */
    unsigned int nr_vcpus;
    const struct scenario_vcpu *vcpus;
    unsigned int nr_nets;
    const struct scenario_net *nets;
    unsigned int nr_vbds;
    const struct scenario_vbd *vbds;
};

#define F(b, s) {b, s}
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct scenario_vcpu dom0_vcpus[] = {{1, F(4100000000000ULL, 600000000)}, {1, F(4023456789012ULL, 634567890)}};

static const struct scenario_vcpu backup_vcpus[] = {
    {1, F(50000000000ULL, 20000000)}, {1, F(51000000000ULL, 20000000)}, {1, F(52000000000ULL, 20000000)},
    {0, F(1000000000ULL, 0)},         {1, F(53000000000ULL, 20000000)}, {1, F(54000000000ULL, 20000000)},
    {1, F(85678901234ULL, 3456789)},
};
static const struct scenario_net backup_nets[] = {{
    F(123456789012ULL, 1048576), F(98765432, 1000), F(0, 0), F(3, 0),
    F(987654321098ULL, 2097152), F(87654321, 2000), F(0, 0), F(1, 0),
}};
static const struct scenario_vbd backup_vbds[] = {
    {51712, 0, F(12, 0), F(123456789012ULL, 100), F(23456789, 50), F(999999999999ULL, 5), F(5555555555ULL, 1000)},
    {51728, 0, F(0, 0), F(4242, 7), F(17, 1), F(33936, 56), F(136, 8)},
};

static const struct scenario_vcpu zed_vcpus[] = {{1, F(2500000000ULL, 0)}, {1, F(2500000000ULL, 0)}};
static const struct scenario_net zed_nets[] = {
    {F(1500, 0), F(10, 0), F(0, 0), F(0, 0), F(3000, 0), F(20, 0), F(0, 0), F(0, 0)},
    {F(2047, 0), F(3, 0), F(1, 0), F(2, 0), F(1023, 0), F(4, 0), F(5, 0), F(6, 0)},
};
static const struct scenario_vbd zed_vbds[] = {
    {268439552, 0, F(0, 0), F(10, 0), F(20, 0), F(80, 0), F(160, 0)},
};

static const struct scenario_vcpu alpha_vcpus[] = {{1, F(7000000000ULL, 0)}};

static const struct scenario_vcpu cafe_vcpus[] = {{1, F(900000000ULL, 0)}};
static const struct scenario_vbd cafe_vbds[] = {{51712, 1, F(0, 0), F(0, 0), F(0, 0), F(0, 0), F(0, 0)}};

static const struct scenario_vcpu backslash_vcpus[] = {{1, F(3000000000ULL, 10000000)}, {1, F(3100000000ULL, 10000000)}};
static const struct scenario_vbd backslash_vbds[] = {
    {51712, 1, F(0, 0), F(0, 0), F(0, 0), F(0, 0), F(0, 0)},
    {51744, 0, F(1, 0), F(300, 30), F(400, 40), F(2400, 240), F(3200, 320)},
};

static const struct scenario_vcpu upper_vcpus[] = {{1, F(61000000000ULL, 987654321)}};

static const struct scenario_vcpu new_vcpus[] = {{1, F(100000000ULL, 100000000)}};

static const struct scenario_domain scenario_domains[] = {
    {0, "Domain-0", 0, SCENARIO_RUNNING, F(8123456789012ULL, 1234567890), 4294967296ULL, SCENARIO_NO_LIMIT,
     N(dom0_vcpus), dom0_vcpus, 0, 0, 0, 0},
    {1, "backup-server-01", 0, SCENARIO_BLOCKED, F(345678901234ULL, 123456789), 2147483648ULL, 2148532224ULL,
     N(backup_vcpus), backup_vcpus, N(backup_nets), backup_nets, N(backup_vbds), backup_vbds},
    {2, "Zed", 0, SCENARIO_PAUSED, F(5000000000ULL, 0), 1073741824ULL, 1074790400ULL, N(zed_vcpus), zed_vcpus,
     N(zed_nets), zed_nets, N(zed_vbds), zed_vbds},
    {3, "alpha", 0, SCENARIO_CRASHED, F(7000000000ULL, 0), 536870912ULL, 537919488ULL, N(alpha_vcpus), alpha_vcpus,
     0, 0, 0, 0},
    {4, "caf\xc3\xa9", 0, SCENARIO_SHUTDOWN, F(900000000ULL, 0), 268435456ULL, 269484032ULL, N(cafe_vcpus),
     cafe_vcpus, 0, 0, N(cafe_vbds), cafe_vbds},
    {5, "back\\slash", 0, SCENARIO_DYING | SCENARIO_BLOCKED, F(6100000000ULL, 20000000), 134217728ULL,
     135266304ULL, N(backslash_vcpus), backslash_vcpus, 0, 0, N(backslash_vbds), backslash_vbds},
    {6, "ZZ-TOP-UPPER-CASE-GUEST-NAME-01", 0, SCENARIO_RUNNING, F(61000000000ULL, 987654321), 8589934592ULL,
     8590983168ULL, N(upper_vcpus), upper_vcpus, 0, 0, 0, 0},
    {9, "new-guest", 1, SCENARIO_RUNNING, F(100000000ULL, 100000000), 134217728ULL, 135266304ULL, N(new_vcpus),
     new_vcpus, 0, 0, 0, 0},
};

static const unsigned long long scenario_tot_mem = 17179869184ULL;
static const unsigned long long scenario_free_mem = 1073741824ULL;

/* Idle time of each physical CPU, in ns. */
static const struct scenario_figure scenario_pcpu_idle[] = {
    F(900000000000ULL, 750000000), F(800000000000ULL, 1000000000), F(700000000000ULL, 0), F(600000000000ULL, 333333333),
};

/* The first round's clock (Unix time, whole seconds: gettimeofday's usec 0). */
#define SCENARIO_START_S 1764979200ULL

static inline unsigned long long scenario_value(struct scenario_figure f, unsigned int round)
{
    return f.base + round * f.step;
}

#undef N
#undef F

#endif
