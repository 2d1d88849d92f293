/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers of dom0's backend device tree (lib/platform/backend_devices.c):
 * a counter file's bytes, a device directory's name, a blkback `dev`
 * node, the interface table (/proc/net/dev's format) and the emulator's
 * netback statistics, all of which a guest can influence.  Every input goes through each
 * of them, in a buffer of exactly its size (a read past the length is
 * caught), and each answer is checked against a reference written another
 * way: the rules spelled out one by one, the value from strtoull().
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "platform/backend_devices.h"

#define UINT64_MAX_TEXT "18446744073709551615"
#define MAX_DOMID 32751u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* A plain decimal of n bytes: 0 and its value, or the error the contract names. */
static int reference_decimal(const char *s, size_t n, uint64_t *ret)
{
    char copy[32];

    if (n == 0 || !all_digits(s, n) || (s[0] == '0' && n > 1) || n > strlen(UINT64_MAX_TEXT))
        return -EINVAL;
    memcpy(copy, s, n);
    copy[n] = '\0';
    /* same length: string order is number order */
    if (n == strlen(UINT64_MAX_TEXT) && strcmp(copy, UINT64_MAX_TEXT) > 0)
        return -ERANGE;
    *ret = strtoull(copy, NULL, 10);
    return 0;
}

static void check_counter(const char *text, size_t len)
{
    uint64_t got = 0x5a5a5a5a5a5a5a5aULL, want = 0;
    size_t n = len && text[len - 1] == '\n' ? len - 1 : len;
    int expected = reference_decimal(text, n, &want);
    int r = backend_counter_parse(text, len, &got);

    if (r != expected)
        abort();
    if (r == 0 && got != want)
        abort();
    if (r < 0 && got != 0x5a5a5a5a5a5a5a5aULL) /* untouched on failure */
        abort();
}

/* "<kind>-<domid>-<devid>": exactly two dashes after the kind, two plain decimals. */
static int reference_name(const char *name, const char *kind, uint32_t *ret_domid, uint32_t *ret_devid)
{
    size_t k = strlen(kind), n = strlen(name), i, dash = 0;
    uint64_t domid, devid;

    if (n <= k || memcmp(name, kind, k) != 0 || name[k] != '-')
        return -EINVAL;
    for (i = k + 1; i < n; i++) {
        if (name[i] == '-') {
            if (dash)
                return -EINVAL;
            dash = i;
        }
    }
    if (!dash || reference_decimal(name + k + 1, dash - k - 1, &domid) < 0 ||
        reference_decimal(name + dash + 1, n - dash - 1, &devid) < 0 || domid > MAX_DOMID || devid > UINT32_MAX)
        return -EINVAL;
    *ret_domid = (uint32_t)domid;
    *ret_devid = (uint32_t)devid;
    return 0;
}

static void check_name(const char *name, const char *kind)
{
    uint32_t domid = 7, devid = 7, want_domid = 0, want_devid = 0;
    int expected = reference_name(name, kind, &want_domid, &want_devid);
    int r = backend_device_name_parse(name, kind, &domid, &devid);

    if (r != expected)
        abort();
    if (r == 0 && (domid != want_domid || devid != want_devid))
        abort();
    if (r < 0 && (domid != 7 || devid != 7))
        abort();
}

static void check_vbd_name(const char *value, size_t len)
{
    int want = len >= 1 && len <= 31;

    for (size_t i = 0; want && i < len; i++)
        want = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", value[i]) && value[i];
    if (backend_vbd_name_ok(value, len) != want)
        abort();
}

/* "vif<domid>.<devid>" of n bytes, the rules one by one. */
static bool reference_vif_name(const char *s, size_t n, uint32_t *ret_domid, uint32_t *ret_devid)
{
    const char *dot;
    uint64_t domid, devid;

    if (n < 3 || memcmp(s, "vif", 3) != 0 || !(dot = memchr(s, '.', n)))
        return false;
    if (reference_decimal(s + 3, (size_t)(dot - s) - 3, &domid) < 0 ||
        reference_decimal(dot + 1, n - (size_t)(dot - s) - 1, &devid) < 0 || domid > MAX_DOMID || devid > UINT32_MAX)
        return false;
    *ret_domid = (uint32_t)domid;
    *ret_devid = (uint32_t)devid;
    return true;
}

#define FUZZ_VIFS 4
static const uint32_t fuzz_vif_ids[FUZZ_VIFS][2] = {{1, 0}, {2, 0}, {2, 1}, {30000, 7}};

/* The table line by line, words split on blanks: what each vif must get. */
static void check_net_dev(const char *text, size_t len)
{
    struct xenstats_vif vifs[FUZZ_VIFS], want[FUZZ_VIFS];
    bool filled[FUZZ_VIFS], want_filled[FUZZ_VIFS] = {false};
    size_t start = 0, count = 0;

    memset(vifs, 0, sizeof(vifs));
    for (int i = 0; i < FUZZ_VIFS; i++) {
        vifs[i].domid = fuzz_vif_ids[i][0];
        vifs[i].devid = fuzz_vif_ids[i][1];
    }
    memcpy(want, vifs, sizeof(vifs));
    while (start < len) {
        const char *line = text + start, *colon;
        size_t n = 0, name_at = 0, words = 0, at;
        uint64_t v[NET_DEV_FIELDS + 1];
        uint32_t domid, devid;
        bool ok = true;

        while (start + n < len && line[n] != '\n')
            n++;
        start += n + 1;
        while (name_at < n && line[name_at] == ' ')
            name_at++;
        colon = memchr(line + name_at, ':', n - name_at);
        if (!colon || !reference_vif_name(line + name_at, (size_t)(colon - line) - name_at, &domid, &devid))
            continue;
        for (at = (size_t)(colon - line) + 1; at < n && ok;) {
            size_t w = 0;

            if (line[at] == ' ') {
                at++;
                continue;
            }
            while (at + w < n && line[at + w] != ' ')
                w++;
            ok = words < NET_DEV_FIELDS + 1 && reference_decimal(line + at, w, &v[words]) == 0;
            words++;
            at += w;
        }
        if (!ok || words != NET_DEV_FIELDS)
            continue;
        for (int i = 0; i < FUZZ_VIFS; i++) {
            if (want_filled[i] || want[i].domid != domid || want[i].devid != devid)
                continue;
            want[i].rx_bytes = v[0];
            want[i].rx_packets = v[1];
            want[i].rx_errors = v[2];
            want[i].rx_dropped = v[3];
            want[i].tx_bytes = v[8];
            want[i].tx_packets = v[9];
            want[i].tx_errors = v[10];
            want[i].tx_dropped = v[11];
            want_filled[i] = true;
            count++;
        }
    }
    if (backend_net_dev_parse(text, len, vifs, FUZZ_VIFS, filled) != count)
        abort();
    if (memcmp(filled, want_filled, sizeof(filled)) != 0 || memcmp(vifs, want, sizeof(vifs)) != 0)
        abort();
}

/* "<name>: <value>" lines: the first line of each of netback's names with a counter's value. */
static void check_netback_text(const char *text, size_t len)
{
    static const char *const names[XENSTATS_NETBACK_STATS] = {
        [XENSTATS_NETBACK_RX_GSO_CHECKSUM_FIXUP] = "rx_gso_checksum_fixup",
        [XENSTATS_NETBACK_TX_ZEROCOPY_SENT] = "tx_zerocopy_sent",
        [XENSTATS_NETBACK_TX_ZEROCOPY_SUCCESS] = "tx_zerocopy_success",
        [XENSTATS_NETBACK_TX_ZEROCOPY_FAIL] = "tx_zerocopy_fail",
        [XENSTATS_NETBACK_TX_FRAG_OVERFLOW] = "tx_frag_overflow",
    };
    struct xenstats_vif vif, want;
    size_t start = 0;

    memset(&vif, 0, sizeof(vif));
    memset(&want, 0, sizeof(want));
    while (start < len) {
        const char *line = text + start, *colon;
        size_t n = 0, k;
        uint64_t value;

        while (start + n < len && line[n] != '\n')
            n++;
        start += n + 1;
        colon = memchr(line, ':', n);
        if (!colon || (size_t)(colon - line) + 2 > n || colon[1] != ' ')
            continue;
        k = (size_t)(colon - line);
        for (int i = 0; i < XENSTATS_NETBACK_STATS; i++)
            if (strlen(names[i]) == k && !memcmp(names[i], line, k) && !(want.netback_present & (1u << i)) &&
                reference_decimal(colon + 2, n - k - 2, &value) == 0) {
                want.netback[i] = value;
                want.netback_present |= 1u << i;
            }
    }
    backend_netback_text_parse(text, len, &vif);
    if (memcmp(&vif, &want, sizeof(vif)) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *exact, *name;

    if (size > 4096)
        return 0;
    exact = malloc(size ? size : 1);
    name = malloc(size + 1);
    if (!exact || !name)
        abort();
    memcpy(exact, data, size);
    check_counter(exact, size);
    check_vbd_name(exact, size);
    check_net_dev(exact, size);
    check_netback_text(exact, size);
    /* a directory entry's name ends at its NUL, wherever the input has one */
    memcpy(name, data, size);
    name[size] = '\0';
    check_name(name, "vif");
    check_name(name, "vbd");
    free(exact);
    free(name);
    return 0;
}
