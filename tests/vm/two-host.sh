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
# with -ETIMEDOUT within three peer timeouts, in order and without a hang;
# and B's second subscription, by name (topic://), must have found A
# through the topic resolver's group across the link and report it gone
# (MSGA_EVENT_PUBLISHER_GONE) once its adverts stop (two_host_peer says
# what it saw).
#
# Two TCG VMs share the host's cores, so this is a correctness test: round
# trips here take milliseconds. Ends with "two-host: N passed, M failed".
# MSGA_BUILDDIR is the build tree (default: the current directory);
# TWO_HOST_KINDS="siw" runs one kind only (default "rxe siw").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/two-host-lib.sh"
out=$(th_results_dir "${1:-$builddir/tests/two-host}") || exit 1
peer=$builddir/tests/two_host_peer
timeout_ms=2000
pass=0 fail=0
dir="" port="" # of the KIND under test (one, vm)

[ -x "$peer" ] || { echo "two-host: build first: no $peer" >&2; exit 1; }

# Boot one VM in the background (its results in $dir/NAME, its console in
# $dir/NAME.log): its end of the link (listen or connect, on $port) has
# MAC, and two_host_peer runs there as ROLE (pub or sub) on a KIND device
# at ADDR. The publisher is always at 198.18.2.1.
# vm KIND NAME LISTEN|CONNECT ADDR MAC ROLE
vm() {
	th_vm "$dir/$2" "$3" "$port" "$5" "$dir/$2.log" \
		bash "$here/two-host-guest.sh" "$1" "$4/24" "$5" \
		"$peer" "$6" "${1}n" rdma://198.18.2.1:18700 $timeout_ms "$dir/$2"
}

# one KIND: 0 if B reported A's death as it should
one() {
	local kind=$1 apid bpid rc
	dir=$out/$kind
	rm -rf "$dir"
	mkdir -p "$dir/a" "$dir/b"
	port=$(th_free_port)
	echo "two-host: $kind: A publishes, B subscribes, then A's VM is killed"
	vm "$kind" a listen 198.18.2.1 52:54:00:4d:41:01 pub
	apid=$th_pid
	# B's QEMU connects to A's at start: A must be up first.
	if ! th_wait_file "$dir/a/pub" 600 $apid; then
		echo "two-host: $kind: the publisher's VM never started publishing"
		tail -n 20 "$dir/a.log"
		th_stop $apid
		return 1
	fi
	vm "$kind" b connect 198.18.2.2 52:54:00:4d:41:02 sub
	bpid=$th_pid
	if th_wait_file "$dir/b/sub" 600 $bpid; then
		th_kill_host $apid # the host dies
		wait $bpid
		rc=$?
	else
		echo "two-host: $kind: the subscriber never got its messages"
		th_stop $bpid
		rc=1
	fi
	th_stop $apid
	grep -h "two_host_peer\|two-host-guest" "$dir/a.log" "$dir/b.log"
	[ $rc = 0 ] || tail -n 30 "$dir/b.log"
	return $rc
}

for kind in ${TWO_HOST_KINDS:-rxe siw}; do
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
