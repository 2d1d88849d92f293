/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * netback's own statistics of a vif (lib/platform/backend_devices.c): the
 * emulator's ethtool file, the scan that asks for them, and the
 * SIOCETHTOOL reader's answers for interfaces that are not netback's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/backend_devices.h"

static char root[PATH_MAX];

static void put(const char *rel, const char *content)
{
    char path[PATH_MAX * 2], *slash;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    if (!content) {
        assert_int_equal(mkfifo(path, 0644), 0);
        return;
    }
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/netback-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[PATH_MAX + 16];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(backend_netback_stat_index("rx_gso_checksum_fixup", 21), XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP);
    assert_int_equal(backend_netback_stat_index("tx_zerocopy_sent", 16), XENSTATS_NETBACK_TX_ZEROCOPY_SENT);
    assert_int_equal(backend_netback_stat_index("tx_zerocopy_success", 19), XENSTATS_NETBACK_TX_ZEROCOPY_SUCCESS);
    assert_int_equal(backend_netback_stat_index("tx_zerocopy_fail", 16), XENSTATS_NETBACK_TX_ZEROCOPY_FAIL);
    assert_int_equal(backend_netback_stat_index("tx_frag_overflow", 16), XENSTATS_NETBACK_TX_FRAG_OVERFLOW);
    /* a prefix, a longer name, nothing */
    assert_int_equal(backend_netback_stat_index("tx_zerocopy_sent", 15), -1);
    assert_int_equal(backend_netback_stat_index("tx_zerocopy_sentx", 17), -1);
    assert_int_equal(backend_netback_stat_index("", 0), -1);
}

static void test_tree(void **state)
{
    struct xenstats_vif vif = {.domid = 3, .devid = 0, .name = "vif3.0"};
    int sock = -1;

    (void)state;
    put("class/net/vif3.0/ethtool", "rx_gso_checksum_fixup: 7\n"
                                    "tx_zerocopy_sent: 18446744073709551615\n"
                                    "tx_zerocopy_fail: 1x\n"         /* malformed: absent */
                                    "rx_gso_checksum_fixup: 9\n"     /* again: the first holds */
                                    "tx_frag_overflow:3\n"           /* no blank: absent */
                                    "tx_zerocopy_successes: 4\n"     /* not netback's */
                                    "\n: 5\nno colon\n");
    /* tx_zerocopy_success missing: absent */
    assert_int_equal(backend_netback_tree(root, &sock, &vif), 0);
    assert_int_equal(sock, -1); /* a file needs no socket */
    assert_int_equal(vif.netback_present,
                     (1u << XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP) | (1u << XENSTATS_NETBACK_TX_ZEROCOPY_SENT));
    assert_int_equal(vif.netback[XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP], 7);
    assert_true(vif.netback[XENSTATS_NETBACK_TX_ZEROCOPY_SENT] == UINT64_MAX);

    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "vif4.0");
    assert_int_equal(backend_netback_tree(root, &sock, &vif), -ENOENT);
    assert_int_equal(vif.netback_present, 0);

    /* a FIFO: absent, no hang */
    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "vif4.1");
    put("class/net/vif4.1/ethtool", NULL);
    assert_true(backend_netback_tree(root, &sock, &vif) < 0 || vif.netback_present == 0);
    assert_int_equal(vif.netback_present, 0);
}

static void vif_tree(uint32_t domid)
{
    char rel[PATH_MAX + 16], line[160], table[1024] = "Inter-| header\n face |header\n";
    FILE *f;

    snprintf(rel, sizeof(rel), "bus/xen-backend/devices/vif-%u-0/online", domid);
    put(rel, "1\n");
    snprintf(rel, sizeof(rel), "%s/net_dev", root);
    f = fopen(rel, "r");
    if (f) {
        size_t n = fread(table, 1, sizeof(table) - 1, f);

        table[n] = '\0';
        fclose(f);
    }
    snprintf(line, sizeof(line), "vif%u.0: 5 5 5 5 0 0 0 0 5 5 5 5 0 0 0 0\n", domid);
    strncat(table, line, sizeof(table) - strlen(table) - 1);
    put("net_dev", table);
}

static int failing_netback(const char *r, int *sock, struct xenstats_vif *vif)
{
    (void)r;
    (void)sock;
    vif->netback[0] = 99;
    vif->netback_present = 1;
    return -EIO;
}

static void test_scan(void **state)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    size_t nv = 0, nb = 0;
    char table[PATH_MAX + 16];
    struct backend_tree tree = {.root = root, .net_dev = table, .netback = backend_netback_tree};

    (void)state;
    snprintf(table, sizeof(table), "%s/net_dev", root);
    vif_tree(5);
    vif_tree(6);
    put("class/net/vif5.0/ethtool", "tx_zerocopy_sent: 10\n");
    assert_int_equal(backend_devices_scan(&tree, NULL, NULL, &vifs, &nv, &vbds, &nb), 0);
    assert_int_equal(nv, 2);
    assert_int_equal(nb, 0);
    assert_int_equal(vifs[0].domid, 5);
    assert_int_equal(vifs[0].rx_bytes, 5);
    assert_int_equal(vifs[0].netback_present, 1u << XENSTATS_NETBACK_TX_ZEROCOPY_SENT);
    assert_int_equal(vifs[0].netback[XENSTATS_NETBACK_TX_ZEROCOPY_SENT], 10);
    /* no ethtool file at all: the vif stays, without netback's figures */
    assert_int_equal(vifs[1].domid, 6);
    assert_int_equal(vifs[1].tx_packets, 5);
    assert_int_equal(vifs[1].netback_present, 0);
    free(vifs);
    free(vbds);

    /* a reader that fails costs its figures only, whatever it left behind */
    tree.netback = failing_netback;
    assert_int_equal(backend_devices_scan(&tree, NULL, NULL, &vifs, &nv, &vbds, &nb), 0);
    assert_int_equal(nv, 2);
    for (size_t i = 0; i < nv; i++) {
        assert_int_equal(vifs[i].netback_present, 0);
        assert_int_equal(vifs[i].netback[0], 0);
        assert_int_equal(vifs[i].rx_bytes, 5);
    }
    free(vifs);
    free(vbds);
}

static void test_ethtool_not_netback(void **state)
{
    struct xenstats_vif vif;
    int sock = -1, r;

    (void)state;
    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "xsnone0");
    r = backend_netback_ethtool("/sys", &sock, &vif);
    /* no such interface (-EPERM where sockets are not allowed at all) */
    assert_true(r == -ENODEV || r == -EPERM || r == -EAFNOSUPPORT);
    assert_int_equal(vif.netback_present, 0);

    /* the loopback has no driver statistics */
    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "lo");
    r = backend_netback_ethtool("/sys", &sock, &vif);
    assert_true(r == -EOPNOTSUPP || r == -EPERM || r == -EAFNOSUPPORT);
    assert_int_equal(vif.netback_present, 0);
    if (sock >= 0)
        close(sock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
        cmocka_unit_test(test_ethtool_not_netback),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
