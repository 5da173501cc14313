#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside the VM as root: bring up soft-RoCE (rxe) and soft-iWARP (siw)
# devices on veth links with 198.18.0.0/15 addresses. Fails loudly: a device
# test bed without its devices must not look like a passing one.
set -euo pipefail
. "$(dirname "$0")/env.sh"

die() { echo "guest-setup: $*" >&2; exit 1; }

# Criterion binds a unix socket in /tmp (hard-coded). virtme-ng gives the
# guest an overlay /tmp (tmpfs upper layer) where that works; a 9p share of
# /tmp (e.g. --rwdir /tmp) refuses sockets. Check instead of guessing, and
# do not mount over /tmp: the build tree may live below it.
/usr/bin/python3 -c 'import os, socket
p = "/tmp/msga-probe-%d.sock" % os.getpid()
socket.socket(socket.AF_UNIX).bind(p)
os.unlink(p)' || die "cannot bind a unix socket in /tmp (is /tmp a 9p share?); Criterion needs one"

ip link set lo up
modprobe rdma_rxe || die "modprobe rdma_rxe failed"
modprobe libcrc32c || die "modprobe libcrc32c failed (siw needs it)"
modprobe crc32c_generic || die "modprobe crc32c_generic failed (siw needs it)"
ko=$(msga_siw_ko)
[ -f "$ko" ] || die "no $ko: run tests/vm/build-siw.sh on the host first"
insmod "$ko" || die "insmod $ko failed"

n=0
for spec in $MSGA_VM_DEVICES; do
	IFS=: read -r dev addr _ <<<"$spec"
	ip link add "mav$n" type veth peer name "mavp$n"
	ip addr add "$addr/24" dev "mav$n"
	ip link set "mav$n" up
	ip link set "mavp$n" up
	case "$dev" in
	rxe*) rdma link add "$dev" type rxe netdev "mav$n" ;;
	siw*) rdma link add "$dev" type siw netdev "mav$n" ;;
	*) die "unknown device kind $dev" ;;
	esac || die "rdma link add $dev failed"
	n=$((n + 1))
done
# Wait for every port to go ACTIVE (rxe follows the netdev's carrier).
for _ in $(seq 50); do
	[ "$(rdma link show | grep -c 'state ACTIVE')" -ge "$n" ] && break
	sleep 0.1
done
rdma link show
[ "$(rdma link show | grep -c 'state ACTIVE')" -ge "$n" ] || die "not every RDMA link is ACTIVE"

# tests/dev_bind's extra addresses (env.sh).
ip addr add "$MSGA_VM_ALIAS_ADDR/24" dev mav0 || die "cannot add $MSGA_VM_ALIAS_ADDR"
ip link add mavn type veth peer name mavnp
ip addr add "$MSGA_VM_NORDMA_ADDR/24" dev mavn
ip link set mavn up
ip link set mavnp up
