/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers of dom0's backend device tree (lib/platform/backend_devices.c):
 * a counter file's bytes, a device directory's name and a blkback `dev`
 * node, all of which a guest can influence.  Every input goes through each
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
    /* a directory entry's name ends at its NUL, wherever the input has one */
    memcpy(name, data, size);
    name[size] = '\0';
    check_name(name, "vif");
    check_name(name, "vbd");
    free(exact);
    free(name);
    return 0;
}
