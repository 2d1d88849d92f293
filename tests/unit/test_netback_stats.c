/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * netback's own statistics of a vif (lib/platform/backend_devices.c): the
 * emulator's ethtool/ tree, the scan that asks for them, and the
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

    (void)state;
    put("class/net/vif3.0/ethtool/rx_gso_checksum_fixup", "7\n");
    put("class/net/vif3.0/ethtool/tx_zerocopy_sent", "18446744073709551615");
    put("class/net/vif3.0/ethtool/tx_zerocopy_fail", "1x\n");  /* malformed: absent */
    put("class/net/vif3.0/ethtool/tx_frag_overflow", NULL);    /* a FIFO: absent, no hang */
    /* tx_zerocopy_success missing: absent */
    assert_int_equal(backend_netback_tree(root, &vif), 0);
    assert_int_equal(vif.netback_present,
                     (1u << XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP) | (1u << XENSTATS_NETBACK_TX_ZEROCOPY_SENT));
    assert_int_equal(vif.netback[XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP], 7);
    assert_true(vif.netback[XENSTATS_NETBACK_TX_ZEROCOPY_SENT] == UINT64_MAX);

    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "vif4.0");
    assert_int_equal(backend_netback_tree(root, &vif), -ENOENT);
    assert_int_equal(vif.netback_present, 0);
}

static void vif_tree(uint32_t domid)
{
    static const char *const keys[] = {"rx_bytes", "rx_packets", "rx_errors", "rx_dropped",
                                       "tx_bytes", "tx_packets", "tx_errors", "tx_dropped"};
    char rel[128];

    snprintf(rel, sizeof(rel), "bus/xen-backend/devices/vif-%u-0/online", domid);
    put(rel, "1\n");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        snprintf(rel, sizeof(rel), "class/net/vif%u.0/statistics/%s", domid, keys[i]);
        put(rel, "5\n");
    }
}

static int failing_netback(const char *r, struct xenstats_vif *vif)
{
    (void)r;
    vif->netback[0] = 99;
    vif->netback_present = 1;
    return -EIO;
}

static void test_scan(void **state)
{
    struct xenstats_vif *vifs = NULL;
    struct xenstats_vbd *vbds = NULL;
    size_t nv = 0, nb = 0;

    (void)state;
    vif_tree(5);
    vif_tree(6);
    put("class/net/vif5.0/ethtool/tx_zerocopy_sent", "10\n");
    assert_int_equal(backend_devices_scan(root, NULL, NULL, backend_netback_tree, &vifs, &nv, &vbds, &nb), 0);
    assert_int_equal(nv, 2);
    assert_int_equal(nb, 0);
    assert_int_equal(vifs[0].domid, 5);
    assert_int_equal(vifs[0].rx_bytes, 5);
    assert_int_equal(vifs[0].netback_present, 1u << XENSTATS_NETBACK_TX_ZEROCOPY_SENT);
    assert_int_equal(vifs[0].netback[XENSTATS_NETBACK_TX_ZEROCOPY_SENT], 10);
    /* no ethtool/ at all: the vif stays, without netback's figures */
    assert_int_equal(vifs[1].domid, 6);
    assert_int_equal(vifs[1].tx_packets, 5);
    assert_int_equal(vifs[1].netback_present, 0);
    free(vifs);
    free(vbds);

    /* a reader that fails costs its figures only, whatever it left behind */
    assert_int_equal(backend_devices_scan(root, NULL, NULL, failing_netback, &vifs, &nv, &vbds, &nb), 0);
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
    int r;

    (void)state;
    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "xsnone0");
    r = backend_netback_ethtool("/sys", &vif);
    /* no such interface (-EPERM where sockets are not allowed at all) */
    assert_true(r == -ENODEV || r == -EPERM || r == -EAFNOSUPPORT);
    assert_int_equal(vif.netback_present, 0);

    /* the loopback has no driver statistics */
    memset(&vif, 0, sizeof(vif));
    snprintf(vif.name, sizeof(vif.name), "lo");
    r = backend_netback_ethtool("/sys", &vif);
    assert_true(r == -EOPNOTSUPP || r == -EPERM || r == -EAFNOSUPPORT);
    assert_int_equal(vif.netback_present, 0);
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
