#!/bin/bash
# SPDX-License-Identifier: MIT
# Set up a fresh Debian 12 machine for msgaccel: packages, virtme-ng (in a
# venv), and siw.ko for the test VM's kernel. Safe to run again: each step
# is skipped when already done. Needs root (or sudo) for apt-get.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/vm/env.sh"

packages=(
	# build
	build-essential autoconf automake autoconf-archive libtool pkg-config
	# libraries
	libibverbs-dev librdmacm-dev ibverbs-providers libev-dev libcriterion-dev libsodium-dev
	# RDMA tools and the anchors we measure against
	rdma-core ibverbs-utils rdmacm-utils perftest sockperf
	# test VM: QEMU, Debian's kernel, sources and headers to build siw.ko,
	# and a static busybox: Debian's kernel loads 9p as a module, so
	# virtme-ng builds an initramfs, which needs one
	qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1
	busybox-static
	iproute2 kmod xz-utils patch bc flex bison libelf-dev libssl-dev python3-venv
	# docs, checks, charts
	groff-base valgrind clang gnuplot-nox jq
	# Debian packages (scripts/package-check.sh) and the ABI check
	# (scripts/abi-check.sh: libabigail's abidw and abidiff)
	debhelper dpkg-dev lintian abigail-tools
	# fuzzing (tests/fuzz/): Debian 12 ships clang's libFuzzer and
	# sanitizer runtimes apart from clang; llvm for fuzz-coverage
	libclang-rt-14-dev llvm-14
)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "bootstrap: installing ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

# linux-headers-amd64 follows the newest kernel ABI, and so does
# linux-image-amd64; insist that the VM kernel has its headers.
kver=$(msga_vm_kver)
[ -d "/lib/modules/$kver/build" ] || {
	echo "bootstrap: installing linux-headers-$kver"
	as_root apt-get install -y -qq "linux-headers-$kver" >/dev/null
}

if [ ! -x "$MSGA_CACHE_DIR/venv/bin/vng" ]; then
	echo "bootstrap: installing virtme-ng into $MSGA_CACHE_DIR/venv"
	mkdir -p "$MSGA_CACHE_DIR"
	python3 -m venv "$MSGA_CACHE_DIR/venv"
	"$MSGA_CACHE_DIR/venv/bin/pip" install -q virtme-ng
fi

"$top/tests/vm/build-siw.sh"
echo "bootstrap: ready (kernel $kver, vng $("$MSGA_CACHE_DIR/venv/bin/vng" --version 2>/dev/null | head -n 1))"
