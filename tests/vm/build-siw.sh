#!/bin/bash
# SPDX-License-Identifier: MIT
# Build siw.ko (soft-iWARP) out of tree for the VM's kernel: Debian's kernel
# does not ship it. Needs linux-source-6.1 and the matching linux-headers.
# Cached: does nothing if the module is already built for this kernel and
# this patch. siw-accept-delay.patch adds a test-only parameter (default
# off) that the device tests use to make a siw race certain.
set -euo pipefail
. "$(dirname "$0")/env.sh"

kver=$(msga_vm_kver)
[ -n "$kver" ] || { echo "build-siw: no /boot/vmlinuz-*-amd64; apt-get install linux-image-amd64" >&2; exit 1; }
ko=$(msga_siw_ko)
[ -f "$ko" ] && { echo "build-siw: cached $ko"; exit 0; }

kbuild=/lib/modules/$kver/build
[ -d "$kbuild" ] || { echo "build-siw: no $kbuild; apt-get install linux-headers-$kver" >&2; exit 1; }
src=$(ls -1 /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
[ -n "$src" ] || { echo "build-siw: no /usr/src/linux-source-*.tar.xz; apt-get install linux-source-6.1" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
top=$(basename "$src" .tar.xz)
tar -xJf "$src" -C "$work" "$top/drivers/infiniband/sw/siw"
patch -s -d "$work/$top" -p1 <"$(dirname "$0")/siw-accept-delay.patch" ||
	{ echo "build-siw: siw-accept-delay.patch does not apply" >&2; exit 1; }
make -s -C "$kbuild" M="$work/$top/drivers/infiniband/sw/siw" \
	CONFIG_RDMA_SIW=m modules >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; echo "build-siw: module build failed" >&2; exit 1; }
mkdir -p "$(dirname "$ko")"
cp "$work/$top/drivers/infiniband/sw/siw/siw.ko" "$ko.tmp"
mv "$ko.tmp" "$ko"
echo "build-siw: built $ko"
