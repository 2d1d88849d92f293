/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * xenstore round trips per second through libxenstore against the
 * emulated host: xs_read and xs_write of a small value, one request in
 * flight (what the agent and the PV stats code do).  No goal: baselines.
 *
 *   xenstats emu &                       # in one shell
 *   ./bench/bench_xenstore [SECONDS] [DOMID]
 *
 * The socket is $XENSTORED_PATH if set, else <run dir>/xenstore/<DOMID>
 * (DOMID 0 by default; a guest sees its own data/ subtree).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "emu/proto/run_dir.h"
#include "util/util.h"

static double run(struct xs_handle *h, const char *path, bool write, double seconds, unsigned long *ret_n)
{
    uint64_t start = monotonic_ns(), deadline = start + (uint64_t)(seconds * 1e9), now;
    unsigned long n = 0;

    do {
        unsigned int i;

        for (i = 0; i < 256; i++, n++) {
            if (write) {
                if (!xs_write(h, XBT_NULL, path, "12345678", 8)) {
                    fprintf(stderr, "bench_xenstore: xs_write %s: %s\n", path, strerror(errno));
                    exit(1);
                }
            } else {
                unsigned int len;
                char *v = xs_read(h, XBT_NULL, path, &len);

                if (!v) {
                    fprintf(stderr, "bench_xenstore: xs_read %s: %s\n", path, strerror(errno));
                    exit(1);
                }
                free(v);
            }
        }
        now = monotonic_ns();
    } while (now < deadline);
    *ret_n = n;
    return (double)n / ((double)(now - start) / 1e9);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0, rate;
    unsigned long domid = argc > 2 ? strtoul(argv[2], NULL, 10) : 0, n;
    char dir[PATH_MAX - 32], sock[PATH_MAX], path[64];
    struct xs_handle *h;

    if (seconds <= 0) {
        fprintf(stderr, "usage: %s [SECONDS] [DOMID]\n", argv[0]);
        return 2;
    }
    if (!getenv("XENSTORED_PATH")) {
        if (emu_run_dir(dir, sizeof(dir)) < 0)
            return 1;
        snprintf(sock, sizeof(sock), "%s/xenstore/%lu", dir, domid);
        setenv("XENSTORED_PATH", sock, 1);
    }
    h = xs_open(XS_OPEN_SOCKETONLY);
    if (!h) {
        fprintf(stderr, "bench_xenstore: cannot reach %s: %s (is `xenstats emu` running?)\n",
                getenv("XENSTORED_PATH"), strerror(errno));
        return 1;
    }
    snprintf(path, sizeof(path), "/local/domain/%lu/data/bench", domid);
    rate = run(h, path, true, seconds, &n);
    printf("xenstore write round trips: %10.0f /s (%lu in %.1f s, %.1f us each)\n", rate, n, seconds, 1e6 / rate);
    rate = run(h, path, false, seconds, &n);
    printf("xenstore read round trips:  %10.0f /s (%lu in %.1f s, %.1f us each)\n", rate, n, seconds, 1e6 / rate);
    xs_rm(h, XBT_NULL, path);
    xs_close(h);
    return 0;
}
