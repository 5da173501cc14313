#!/bin/bash
# SPDX-License-Identifier: MIT
# stat_cost.sh [OUTDIR] - what the live counters (msgaccel(7), LIVE
# COUNTERS; msga_stat -p) cost a running process, in ONE boot of the test
# VM, on rxe0 (RC ring path, 64 B ping-pong, msga_feed):
#
# 1. Latency, counters on / off: ROUNDS rounds (default 10), each a
#    msga_feed --pingpong of ITERS round trips (default 2000) with
#    contexts that keep a counters file and one with --no-stats
#    (MSGA_CTX_NO_STATS), the order swapped every round: the ratio of the
#    medians and the median of the per-round ratios (drift cancels within
#    a round). Target <= 1.02.
# 2. Library instructions, counters on / off, exact: callgrind_pingpong.sh
#    with CG_NO_STATS=1 (trees "current" and "nostats"): per round trip
#    from the difference of an N1 and an N2 run, and, per call, the
#    export itself (msga__sub_export, msga__pub_export: what one refresh
#    of an object's slots costs). Counting on the message path is the
#    same on and off (the counters are the stats calls' own, kept either
#    way): only the file's refresh, time-driven at 5 Hz an object, differs.
#    Under callgrind time runs about fifty times slower, so time-driven
#    work per round trip is inflated fifty-fold there: the export's cost
#    per second (Ir per call x 5 x objects) is the figure that holds.
#
# MSGA_BUILDDIR: the build tree (plain ./configure, no sanitizers).
# Writes OUTDIR/stat_lat.tsv (round, mode, median, p99), OUTDIR/stat_lat.json,
# and callgrind_pingpong.sh's callgrind.tsv and calls.tsv.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
ROUNDS=${ROUNDS:-10}
ITERS=${ITERS:-2000}
N1=${N1:-2000}
N2=${N2:-6000}
CG_FUNCS=${CG_FUNCS:-msga__sub_export msga__pub_export msga_ctx_poll}

# ------------------------------------------------------------ in the guest
lat_one() { # mode port: "median p99" of one ping-pong run, or "NA NA"
	local j=$out/lat-$2.json v extra=
	[ "$1" = off ] && extra=--no-stats
	v=$(timeout 120 "$builddir/bench/msga_feed" --pingpong -s 64 \
		-n "$ITERS" -p "$2" --clock tsc $extra --json "$j" "$addr" \
		>/dev/null 2>&1 && jq -r '"\(.t_median_us) \(.p99_us)"' "$j")
	rm -f "$j"
	echo "${v:-NA NA}"
}

in_guest() {
	local port=32000 r m v
	out=$1
	IFS=: read -r dev addr _ <<<"${MSGA_VM_DEVICES%% *}"
	: >"$out/stat_lat.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for m in $( ((r % 2)) && echo on off || echo off on); do
			port=$((port + 3))
			v=$(lat_one "$m" $port)
			echo "round $r $m $v" >&2
			printf '%d\t%s\t%s\t%s\n' "$r" "$m" $v >>"$out/stat_lat.tsv"
		done
	done
	CG_NO_STATS=1 bash "$here/callgrind_pingpong.sh" --in-guest "$out"
}

if [ "${1:-}" = --in-guest ]; then
	in_guest "$2"
	sleep 1 # (a guest command that exits right after writing can lose it)
	exit 0
fi

# ------------------------------------------------------------ on the host
out=$(bench_outdir "${1:-}") || exit 1
[ -x "$builddir/bench/.libs/msga_feed" ] ||
	{ echo "stat_cost: build first: no $builddir/bench/.libs/msga_feed" >&2; exit 1; }
command -v jq >/dev/null || { echo "stat_cost: jq is needed" >&2; exit 1; }
bench_in_vm stat_cost "$out" 3600 "$here/stat_cost.sh" \
	MSGA_VM_DEVICES="rxe0:198.18.0.1:RoCE" ROUNDS="$ROUNDS" \
	ITERS="$ITERS" N1="$N1" N2="$N2" CG_FUNCS="$CG_FUNCS"

# latency: off is A, on is B (the ratio is on / off)
bench_pair_json off on "$out/stat_lat.tsv" "$ROUNDS" "$ITERS" \
	>"$out/stat_lat.json" || exit 1
echo "latency (RTT/2, us; $ROUNDS rounds of $ITERS round trips, rxe0):"
jq -r '"  median: off \(.median_us.off), on \(.median_us.on); on/off: ratio of medians \(.ratio_of_medians.median), median of per-round ratios \(.median_of_ratios.median)",
       "  p99:    off \(.p99_us.off), on \(.p99_us.on); on/off \(.ratio_of_medians.p99)"' \
	"$out/stat_lat.json"
echo
echo "library instructions per round trip (callgrind, (Ir(N2) - Ir(N1)) / (N2 - N1)):"
bench_cg_per_trip "$out/callgrind.tsv" "$N1" "$N2"
echo
echo "one refresh of an object's slots (inclusive Ir per call, N2 run):"
awk -F'\t' -v n2="$N2" '$4 == n2 && $6 > 0 && $5 ~ /_export$/ {
	printf "  %s\t%s\t%s\tcalls %s\tIr/call %s\t(x 5/s: %.0f Ir/s)\n",
	       $1, $3, $5, $6, $7, $7 * 5
}' "$out/calls.tsv" | sort
