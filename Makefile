# SPDX-License-Identifier: LGPL-2.1-or-later
# Convenience targets; meson is the build system.
BUILD ?= build

.PHONY: all test e2e-xen clean-e2e xen-hypervisor xen-hypervisor-e2e e2e-lifecycle kmod kmod-check kmod-checkpatch e2e-kmod e2e-units \
	xen-tree xen-tree-e2e xen-cross-arm64 xen-hypervisor-e2e-arm64 xen-rewrite-test xen-tools xen-tools-e2e \
	barrier-arm64 e2e-kmod-arm64

all:
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD)
	ninja -C $(BUILD)

test:
	scripts/test.sh

# XEN_VERSION=4.17 (default: Debian 12's) or 4.20 (Debian 13's).
# Boots Debian's Xen hypervisor, a dom0 and a PV domU under QEMU and checks
# xenstats end to end (tests/e2e/xen/run.sh; logs in build-e2e[-4.20]/logs).
# XEN_ARCH=arm64: Debian 12's arm64 Xen 4.17 under qemu-system-aarch64,
# xenstats cross-built (scripts/cross/arm64.sh; logs in build-e2e-arm64/logs).
e2e-xen:
	tests/e2e/xen/run.sh

# The vCPU statistics reader's barriers on arm64: LDAR and DMB ISHLD in a
# cross build, and the concurrency test built for arm64 under qemu-aarch64
# (tests/arm64/barrier.sh; what emulation on x86 can and cannot show).
barrier-arm64:
	tests/arm64/barrier.sh

clean-e2e:
	rm -rf build-e2e/img build-e2e/root-dom0 build-e2e/root-domu build-e2e/logs

# The Xen hypervisor (upstream 4.17.7 or 4.20.4, checksummed, with Debian's
# shipped config) with the series in xen/patches/$(XEN_VERSION) applied;
# builds only the hypervisor (ccache if present).  Output:
# build-xen-hv/out[-4.20]/xen, xen.gz, xen-syms (docs/hypervisor.md).
xen-hypervisor:
	xen/build-hypervisor.sh

# Boots that hypervisor under QEMU with PV domUs and checks their vCPU
# statistics regions from dom0 (tests/e2e/xen-hv/run.sh).
xen-hypervisor-e2e: xen-hypervisor
	tests/e2e/xen-hv/run.sh

# XEN_VERSION=4.22 (default here) or master: the whole upstream tree with
# xen/patches/$(XEN_VERSION) applied, hypervisor and dom0 tools, in a
# Debian 13 chroot kept in XEN_CACHE (xen/build-xen-tree.sh; XEN_DEBUG=y
# for the debug hypervisor).  `make xen-hypervisor XEN_VERSION=master` is
# the same.  Output: build-xen-hv/out-<version>/ (xen, dist/ the tools).
xen-tree:
	XEN_VERSION=$${XEN_VERSION:-4.22} xen/build-xen-tree.sh

# Boots that tree's hypervisor with its own tools and Debian 13's kernel.
xen-tree-e2e: xen-tree
	XEN_VERSION=$${XEN_VERSION:-4.22} tests/e2e/xen-hv/run.sh

# The tools series (xen/patches/tools: libxenstat reads the statistics
# tables, xentop -v shows runstate shares) on that tree, in a tree of its
# own, through the same chroot and ccache (xen/build-xen-tools.sh).
# Output: build-xen-hv/out-<version>/dist-tools, beside the stock dist/.
xen-tools: xen-tree
	XEN_VERSION=$${XEN_VERSION:-4.22} xen/build-xen-tools.sh

# Boots the tree's hypervisor with the tools series in dom0 and the stock
# xentop beside it (tests/e2e/xen-hv/tools-checks.sh); with
# XEN=<a hypervisor without the series> DOM0_EXTRA=xt_stock, the fallback.
xen-tools-e2e: xen-tools
	TOOLS_SERIES=1 XEN_VERSION=$${XEN_VERSION:-4.22} tests/e2e/xen-hv/run.sh

# The arm64 hypervisor of a port (XEN_VERSION=4.17, 4.20, 4.22 or master;
# default master), cross-compiled with the series' Kconfig options on;
# XEN_DEBUG=y for the debug build.  Output: build-xen-hv/out-<v>-arm64[-debug]/.
xen-cross-arm64:
	XEN_ARCH=arm64 XEN_VERSION=$${XEN_VERSION:-master} xen/build-xen-tree.sh

# The patched hypervisor on Arm: the arm64 cross build of 4.17.7 with
# xen/patches/4.17 (debug; XEN_DEBUG=n: release) booted under
# qemu-system-aarch64 with Debian 12's arm64 dom0 and domUs: the vCPU
# statistics checks, the benchmark, destruction while mapped, then the
# rewrite test with the writable mapping every dom0 on Arm gets
# (tests/e2e/xen-hv/run.sh XEN_ARCH=arm64; logs in
# build-xen-hv/e2e-4.17-arm64[-debug]/logs).
xen-hypervisor-e2e-arm64:
	XEN_ARCH=arm64 XEN_VERSION=4.17 XEN_DEBUG=$${XEN_DEBUG:-y} xen/build-xen-tree.sh >/dev/null
	XEN_ARCH=arm64 XEN_VERSION=4.17 tests/e2e/xen-hv/run.sh

# The rewrite test (docs/hypervisor.md): the debug hypervisor of the tree
# with the DO-NOT-APPLY patch xen/patches/$(XEN_VERSION)-rewrite, which
# shares the table writable; dom0 rewrites every byte of a domain's table
# while its vCPUs change state.  Passes iff Xen stays up, quiet, and the
# canaries hold.  XEN_VERSION=master (default) or 4.22.
xen-rewrite-test:
	scripts/rewrite-test.sh

# A PV guest's lifecycle on that hypervisor (it has shadow paging, which
# live migration needs): save/restore, migrate, reboot, vcpu-set, pause,
# mem-set, with the agent's /metrics checked after each step
# (tests/e2e/lifecycle/run.sh; LC_CYCLES=10 for the figures; logs in
# build-e2e/logs/lifecycle-*), with the kernel provider loaded in the
# guest and disk I/O running (LC_KMOD=0 leaves them out, as CI does).
e2e-lifecycle: xen-hypervisor
	tests/e2e/lifecycle/run.sh

# The in-kernel PV stats provider (kmod/, docs/kernel-provider.md) and its
# example, against Debian's headers for the e2e domU's kernel (installed
# through apt when missing).  kmod-check: W=1 and sparse, no warning.
# KMOD_ARCH=arm64: against Debian's arm64 headers, cross-compiled.
kmod:
	scripts/kmod-build.sh all

kmod-check:
	scripts/kmod-build.sh check

# The kernel's checkpatch.pl --strict on kmod/ (from Debian's linux-source).
kmod-checkpatch:
	scripts/kmod-build.sh checkpatch

# The kernel provider on real Xen 4.17 under QEMU: a domU with a vif and a
# vbd loads the module (tests/e2e/kmod/run.sh; logs in build-e2e/logs).
e2e-kmod:
	tests/e2e/kmod/run.sh

# The same on Xen on Arm: Debian 12's arm64 Xen 4.17 and kernel under
# qemu-system-aarch64, the module cross-built against Debian's arm64
# headers; the basic checks and devices coming and going (KMOD_ONLY=all:
# every check but save/restore, which Xen on Arm lacks; logs in
# build-e2e-arm64/logs).
e2e-kmod-arm64:
	XEN_ARCH=arm64 tests/e2e/kmod/run.sh

# The agent's unit on a real Debian 12 dom0 booted by systemd under QEMU:
# a debootstrap'd root (cached in build-e2e/units/base) with Debian's Xen,
# kernel and initramfs, this tree's agent and unit; two boots
# (tests/e2e/units/run.sh; logs in build-e2e/logs/units-*).
e2e-units:
	tests/e2e/units/run.sh
