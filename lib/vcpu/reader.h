/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef XENSTATS_VCPU_READER_H
#define XENSTATS_VCPU_READER_H

#include <xenstats/vcpu.h>

/*
 * Copy one record of `size` bytes (the header's size) under its sequence
 * number, as a reader that knows `nr_known` counters.  Counters past
 * nr_known or past size are UNKNOWN.  Returns 0 or -EBUSY after
 * max_retries + 1 attempts.  Exposed for tests of old/new reader
 * compatibility.
 */
int vcpu_record_read(const unsigned char *record, uint32_t size, unsigned int nr_known, uint32_t max_retries,
                     struct xenstats_vcpu_sample *ret_sample);

/*
 * The hypercall fallback (hypercall.c).  vcpu_sample_from_info() turns
 * what the call gives into a sample stamped `stamp`; vcpu_hypercall_read()
 * makes the call for one vCPU.
 */
struct platform_vcpu_info;
void vcpu_sample_from_info(const struct platform_vcpu_info *info, uint64_t stamp,
                           struct xenstats_vcpu_sample *ret_sample);
int vcpu_hypercall_read(struct xenstats_host *host, uint32_t domid, uint32_t vcpu,
                        struct xenstats_vcpu_sample *ret_sample);

#endif
