#!/bin/bash
# SPDX-License-Identifier: MIT
# two-host.sh [RESULTS_DIR] - the host-failure test (`make check-two-host`).
#
# A killed process is the easy way for a peer to vanish: its kernel closes
# its connections and the other side is told at once (dev_pubsub's
# killed_publisher test). A host that dies says nothing at all. So this
# boots two VMs joined by a QEMU socket link over 127.0.0.1 (addresses
# 198.18.2.1 and .2), runs tests/two_host_peer as a publisher in A and a
# subscriber in B on an rxe, then a siw, device on that link, and once B
# has messages kills A's QEMU outright. B must report the connection gone
# with -ETIMEDOUT within three peer timeouts, in order and without a hang
# (two_host_peer says what it saw).
#
# Two TCG VMs share the host's cores, so this is a correctness test: round
# trips here take milliseconds. Ends with "two-host: N passed, M failed".
# MSGA_BUILDDIR is the build tree (default: the current directory).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
builddir=$(cd "${MSGA_BUILDDIR:-$PWD}" && pwd)
out=$(mkdir -p "${1:-$builddir/tests/two-host}" && cd "${1:-$builddir/tests/two-host}" && pwd)
peer=$builddir/tests/two_host_peer
timeout_ms=2000
pass=0 fail=0
dir="" port="" # of the KIND under test (one, vm)

[ -x "$peer" ] || { echo "two-host: build first: no $peer" >&2; exit 1; }

wait_file() { # wait_file PATH SECONDS PID: 0 once PATH exists
	local end=$((SECONDS + $2))
	while [ ! -e "$1" ]; do
		kill -0 "$3" 2>/dev/null || return 1
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

# Boot one VM in the background (its results in $dir/NAME, its console in
# $dir/NAME.log): its end of the link (listen or connect, on $port) has
# MAC, and two_host_peer runs there as ROLE (pub or sub) on a KIND device
# at ADDR. The publisher is always at 198.18.2.1.
# vm KIND NAME LISTEN|CONNECT ADDR MAC ROLE
vm() {
	MSGA_VM_TIMEOUT=900 MSGA_VM_RODIRS="$builddir" \
	MSGA_VM_QEMU_OPTS="-netdev socket,id=th,$3=127.0.0.1:$port -device virtio-net-pci,netdev=th,mac=$5" \
		"$here/vm-run.sh" "$dir/$2" bash "$here/two-host-guest.sh" \
		"$1" "$4/24" "$5" "$peer" "$6" "${1}n" rdma://198.18.2.1:18700 \
		$timeout_ms "$dir/$2" >"$dir/$2.log" 2>&1 &
}

# one KIND: 0 if B reported A's death as it should
one() {
	local kind=$1 apid bpid rc
	dir=$out/$kind
	rm -rf "$dir"
	mkdir -p "$dir/a" "$dir/b"
	# a free port for the link, picked by the kernel
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "two-host: $kind: A publishes, B subscribes, then A's VM is killed"
	vm "$kind" a listen 198.18.2.1 52:54:00:4d:41:01 pub
	apid=$!
	# B's QEMU connects to A's at start: A must be up first.
	if ! wait_file "$dir/a/pub" 600 $apid; then
		echo "two-host: $kind: the publisher's VM never started publishing"
		tail -n 20 "$dir/a.log"
		kill $apid 2>/dev/null
		wait $apid 2>/dev/null
		return 1
	fi
	vm "$kind" b connect 198.18.2.2 52:54:00:4d:41:02 sub
	bpid=$!
	if wait_file "$dir/b/sub" 600 $bpid; then
		# the host dies: QEMU (and the virtme-ng that started it) at once
		pkill -KILL -f "listen=127.0.0.1:$port"
		wait $bpid
		rc=$?
	else
		echo "two-host: $kind: the subscriber never got its messages"
		kill $bpid 2>/dev/null
		wait $bpid 2>/dev/null
		rc=1
	fi
	pkill -KILL -f "127.0.0.1:$port" 2>/dev/null
	wait $apid 2>/dev/null
	grep -h "two_host_peer\|two-host-guest" "$dir/a.log" "$dir/b.log"
	[ $rc = 0 ] || tail -n 30 "$dir/b.log"
	return $rc
}

for kind in rxe siw; do
	if one $kind; then
		echo "two-host: $kind: PASS"
		pass=$((pass + 1))
	else
		echo "two-host: $kind: FAIL"
		fail=$((fail + 1))
	fi
done
echo "two-host: $pass passed, $fail failed"
[ $fail = 0 ]
