/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The emulator's protocol, run directory part (run_dir.h): where the run
 * directory is, whether an emulator is alive in it, and its domains' info
 * files, for the emulator and the emu backend alike.
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run_dir.h"
#include "util/util.h"

int emu_run_dir(char *buf, size_t len)
{
    const char *dir = getenv("XENSTATS_EMU_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;

    if (dir && *dir)
        n = snprintf(buf, len, "%s", dir);
    else if (xdg && *xdg)
        n = snprintf(buf, len, "%s/xenstats-emu", xdg);
    else
        n = snprintf(buf, len, "/tmp/xenstats-emu-%u", (unsigned int)getuid());
    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The canonical lower-case form, 8-4-4-4-12, as libxl prints it. */
static int uuid_parse(const char *s, uint8_t uuid[16])
{
    size_t i, o = 0;

    if (strlen(s) != 36)
        return -EINVAL;
    for (i = 0; i < 36;) {
        int hi, lo;

        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i++] != '-')
                return -EINVAL;
            continue;
        }
        hi = hex_digit(s[i]);
        lo = hex_digit(s[i + 1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        uuid[o++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return 0;
}

int emu_info_parse(const char *text, uint32_t domid, struct xenstats_domain_info *ret_info)
{
    struct xenstats_domain_info info = {.domid = domid};
    bool have_name = false, have_vcpus = false;
    const char *line = text;

    while (*line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[EMU_INFO_MAX];
        uint64_t v;

        if (n >= sizeof(buf))
            return -EBADMSG;
        memcpy(buf, line, n);
        buf[n] = '\0';
        if (!strncmp(buf, "name=", 5)) {
            if (n - 5 >= sizeof(info.name))
                return -EBADMSG;
            memcpy(info.name, buf + 5, n - 5 + 1);
            have_name = true;
        } else if (!strncmp(buf, "vcpus=", 6)) {
            if (parse_u64(buf + 6, 1u << 20, &v) < 0)
                return -EBADMSG;
            info.nr_vcpus = (uint32_t)v;
            have_vcpus = true;
        } else if (!strncmp(buf, "uuid=", 5)) {
            if (uuid_parse(buf + 5, info.uuid) < 0)
                return -EBADMSG;
        }
        line += n + (end ? 1 : 0);
    }
    if (!have_name || !have_vcpus)
        return -EBADMSG;
    *ret_info = info;
    return 0;
}

int emu_info_format(const struct xenstats_domain_info *info, char *buf, size_t len)
{
    const uint8_t *u = info->uuid;
    int n = snprintf(buf, len,
                     "name=%s\nvcpus=%u\nuuid=%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
                     info->name, info->nr_vcpus, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
                     u[11], u[12], u[13], u[14], u[15]);

    if (n < 0 || (size_t)n >= len)
        return -ENOBUFS;
    return n;
}

int emu_moved_write(const char *dir, uint32_t from, uint32_t to)
{
    char path[PATH_MAX], text[16];
    int n;

    if (to <= from || to > XENSTATS_DOMID_MAX)
        return -EINVAL;
    if (snprintf(path, sizeof(path), "%s/%s/%u", dir, EMU_MOVED_DIR, from) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    n = snprintf(text, sizeof(text), "%u\n", to);
    return write_file_atomic(path, text, (size_t)n, 0644);
}

uint32_t emu_domid_follow(const char *dir, uint32_t domid)
{
    char path[PATH_MAX], *text;
    uint64_t next;

    /* domids only grow along a chain, so it ends */
    for (;;) {
        text = NULL;
        if (snprintf(path, sizeof(path), "%s/%s/%u", dir, EMU_MOVED_DIR, domid) >= (int)sizeof(path) ||
            read_small_file(path, 16, &text, NULL) < 0)
            return domid;
        text[strcspn(text, "\n")] = '\0';
        if (parse_u64(text, XENSTATS_DOMID_MAX, &next) < 0 || next <= domid) {
            free(text);
            return domid;
        }
        free(text);
        domid = (uint32_t)next;
    }
}

int emu_is_running(const char *dir)
{
    char path[PATH_MAX], *text = NULL;
    uint64_t pid;
    int alive = 0;

    if (snprintf(path, sizeof(path), "%s/%s", dir, EMU_PID_FILE) >= (int)sizeof(path))
        return 0;
    if (read_small_file(path, 32, &text, NULL) < 0)
        return 0;
    text[strcspn(text, "\n")] = '\0';
    if (parse_u64(text, INT_MAX, &pid) == 0 && pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
        alive = 1;
    free(text);
    return alive;
}

