#!/bin/bash
# SPDX-License-Identifier: MIT
# two-host-guest.sh KIND ADDR MAC COMMAND [ARGS...] - inside one of
# two-host.sh's VMs, after guest-setup.sh: put a KIND (rxe or siw) device
# named KINDn on the NIC with MAC (the link to the other VM), give it ADDR
# (address/prefix, in 198.18.0.0/15), wait until the port is ACTIVE, then
# run COMMAND, with the NIC's name in TWO_HOST_NIC (two-host-mcast.sh's
# netem commands name it).
set -euo pipefail
kind=$1 addr=$2 mac=$3
shift 3
die() { echo "two-host-guest: $*" >&2; exit 1; }

modprobe virtio_net 2>/dev/null || true
nic=""
for _ in $(seq 50); do
	nic=$(ip -o link | awk -v mac="$mac" 'index(tolower($0), mac) { sub(/:$/, "", $2); print $2; exit }')
	[ -n "$nic" ] && break
	sleep 0.1
done
[ -n "$nic" ] || die "no NIC with MAC $mac"
ip addr add "$addr" dev "$nic"
ip link set "$nic" up
rdma link add "${kind}n" type "$kind" netdev "$nic" || die "rdma link add ${kind}n failed"
for _ in $(seq 100); do
	rdma link show "${kind}n/1" | grep -q 'state ACTIVE' && break
	sleep 0.1
done
rdma link show "${kind}n/1"
rdma link show "${kind}n/1" | grep -q 'state ACTIVE' || die "${kind}n is not ACTIVE"
TWO_HOST_NIC=$nic "$@"
