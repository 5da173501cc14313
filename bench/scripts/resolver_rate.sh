#!/bin/bash
# SPDX-License-Identifier: MIT
# resolver_rate.sh [OUTDIR] - topic resolution's figures (issue 37), in
# ONE boot of the test VM, on one device (RES_DEVICE, default
# rxe0:198.18.0.1; siw0:198.18.1.1 works too: the resolver is kernel
# UDP): for each topic count in COUNTS (default "10 1000 100000"),
# bench/msga_resolver_load advertises that many topics in one context
# and browses them from another, then prints a markdown table: the time
# until a browser holds every topic, the advertiser's bytes, datagrams and
# adverts a second over a WINDOW-second window (default 10) after the fast
# phase, each topic's resulting period, and how long a late browser of
# one topic waits for it (a query's answer), and how long a subscriber by
# name (topic://) waits from msga_sub_connect() for the publisher to be
# found, connected and its first message in: to an RC publisher, and on
# RoCE to a multicast one (mcast://RES_MCAST, default 239.255.31.1).
# Writes OUTDIR/resolver.jsonl (one object a count) and OUTDIR/resolver.md.
# MSGA_BUILDDIR: the build tree (plain, no sanitizers).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
COUNTS=${COUNTS:-10 1000 100000}
WINDOW=${WINDOW:-10}
RES_DEVICE=${RES_DEVICE:-rxe0:198.18.0.1}
RES_MCAST=${RES_MCAST-239.255.31.1}

in_guest() {
	local out=$1 dev addr n mcast=()
	IFS=: read -r dev addr <<<"$RES_DEVICE"
	# (multicast: not on iWARP)
	[[ $dev == siw* || -z $RES_MCAST ]] || mcast=(-m "$RES_MCAST")
	: >"$out/resolver.jsonl"
	for n in $COUNTS; do
		echo "resolver_rate: $n topics" >&2
		timeout 900 "$builddir/bench/msga_resolver_load" -d "$dev" \
			-a "$addr" -n "$n" -w "$WINDOW" "${mcast[@]}" \
			>>"$out/resolver.jsonl" ||
			echo "resolver_rate: $n topics failed" >&2
	done
}

bench_start resolver_rate "$builddir/bench/msga_resolver_load" "$@"
bench_in_vm resolver_rate "$out" 3600 "$here/resolver_rate.sh" \
	COUNTS="$COUNTS" WINDOW="$WINDOW" RES_DEVICE="$RES_DEVICE" \
	RES_MCAST="$RES_MCAST"
{
	echo "| topics | all heard (s) | bytes/s | datagrams/s | adverts/s | period (s) | late browser's query (ms) |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	jq -r '"| \(.topics) | \(.all_heard_s) (\(if .all_heard then "all" else "\(.heard) only" end)) | \(.tx_bytes_per_s) | \(.tx_dgrams_per_s) | \(.adverts_per_s) | \(.period_s) | \(.query_ms) |"' \
		"$out/resolver.jsonl"
	echo
	echo "Subscribing by name (topic://): ms from msga_sub_connect() to the publisher found, connected, and the first message (-1: not reached, or not measured)"
	echo
	echo "| topics | RC: found | connected | first message | multicast: found | joined | first message |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
	jq -r '"| \(.topics) | \(.byname_found_ms) | \(.byname_connected_ms) | \(.byname_first_msg_ms) | \(.byname_mcast_found_ms) | \(.byname_mcast_connected_ms) | \(.byname_mcast_first_msg_ms) |"' \
		"$out/resolver.jsonl"
} | tee "$out/resolver.md"
