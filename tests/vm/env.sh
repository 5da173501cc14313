# SPDX-License-Identifier: MIT
# Shared settings for the VM test bed. Sourced, not run.

# Where the test bed keeps what it builds once (the virtme-ng venv, siw.ko).
MSGA_CACHE_DIR=${MSGA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/msgaccel}

# The newest Debian kernel installed on the host (linux-image-amd64).
msga_vm_kernel() {
	ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n 1
}

msga_vm_kver() {
	basename "$(msga_vm_kernel)" | sed 's/^vmlinuz-//'
}

# The module's directory names the kernel and the test patch it carries.
msga_siw_ko() {
	local here patch
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	patch=$(md5sum <"$here/siw-accept-delay.patch" | cut -c1-8)
	echo "$MSGA_CACHE_DIR/siw-$(msga_vm_kver)-$patch/siw.ko"
}

# Test devices inside the VM: "device:address:transport" for each. Both
# ends of a test run on one device (rxe loops back; two rxe devices on one
# veth pair in one namespace do not reach each other). Addresses are in
# 198.18.0.0/15, the benchmarking range, and never leave the VM.
MSGA_VM_DEVICES="rxe0:198.18.0.1:RoCE siw0:198.18.1.1:iWARP"

# For tests/dev_bind (device choice, ?bind=, ?source=): a second address on
# the first device's netdev (another datagram source on the same device,
# added after the device so the first address keeps the first GID), and a
# netdev with an address but no RDMA device.
MSGA_VM_ALIAS_ADDR=198.18.0.2
MSGA_VM_NORDMA_ADDR=198.18.4.1
# An address on the first device's subnet that no one answers.
MSGA_VM_SILENT_ADDR=198.18.0.99
