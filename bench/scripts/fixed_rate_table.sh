#!/bin/bash
# SPDX-License-Identifier: MIT
# fixed_rate_table.sh [OUTDIR] - issue 38's RTT/2 at fixed packet rates,
# as the Intel/Mcorelab report measured (RFC 2544 style: each rate on its
# own), in ONE boot of the test VM on soft-RoCE (rxe0). For each rate, one
# run of SEC seconds at that rate alone of
#   pubsub_rc     msga_feed --base RATE --max-rate RATE (pub/sub over RC)
#   pubsub_mcast  the same with --mcast GROUP (UD multicast)
#   sockperf      kernel UDP, sockperf under-load --mps RATE
# 64-byte messages, SendToReceive (sockperf: its own) RTT/2 median and
# p99. A tool stops at its first rate that failed (msga_feed: a lost or
# late message or a producer behind its schedule, its failure event;
# sockperf: it sent at less than 95 % of the rate, or a reply was
# dropped; either: no figure): where the test bed stopped for it, and why.
#
# Prints a markdown table, writes OUTDIR (default ./bench-results)
# /fixed_rate_table.md, .json ({device, address, size_bytes, seconds,
# clock, date, rates[], rows[]: {rate, tool, median_us, p99_us, result},
# stopped[]: {tool, rate, reason}}), .tsv (raw rows) and, with gnuplot,
# .png (median and p99 against rate, per tool); the TSV's columns: tool,
# rate, median, p99, result.
#
# Environment: MSGA_BUILDDIR (build tree, default the current directory;
# a plain build for figures); RATES (50000 100000 200000 300000 400000
# 500000); SEC (3 s per run); SIZE (64); QUICK=1: rates 50000 100000, 1 s
# (tests/bench_tables_quick.sh); FIXED_GROUP (239.255.79.30); FIXED_DEVICE
# (rxe0:198.18.0.1); MSGA_FEED_CLOCK (tsc).
# Under TCG the soft devices fail at 10k-30k msg/s (mcast_rate_table.sh),
# so expect pub/sub to stop at the first rate here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
if [ "${QUICK:-0}" = 1 ]; then
	RATES=${RATES:-50000 100000}
	SEC=${SEC:-1}
fi
RATES=${RATES:-50000 100000 200000 300000 400000 500000}
SEC=${SEC:-3}
SIZE=${SIZE:-64}
FIXED_GROUP=${FIXED_GROUP:-239.255.79.30}
FIXED_DEVICE=${FIXED_DEVICE:-rxe0:198.18.0.1}
CLOCK=${MSGA_FEED_CLOCK:-tsc}
IFS=: read -r dev addr <<<"$FIXED_DEVICE"
TOOLS="pubsub_rc pubsub_mcast sockperf"

# ------------------------------------------------------------ in the guest
one() { # tool rate port
	local err=$out/err-$1-$2 extra=()
	case $1 in
	pubsub_*)
		[ "$1" = pubsub_mcast ] && extra=(--mcast "$FIXED_GROUP")
		bench_feed_rate "$err" "$3" "$2" "$SEC" -d "$dev" -s "$SIZE" \
			--deadline 1 --clock "$CLOCK" "${extra[@]}" "$addr" ;;
	sockperf)
		bench_sockperf "$err" "$3" "$addr" under-load -m "$SIZE" \
			--mps "$2" -t "$SEC" | bench_rate_reached "$2" ;;
	esac
}

in_guest() {
	out=$1
	bench_rows fixed_rate_table "$out/fixed_rate_table.tsv" 32000 1 \
		"$TOOLS" "$RATES"
}

# ------------------------------------------------------------ on the host
bench_start fixed_rate_table "$builddir/bench/msga_feed" "$@"
bench_in_vm fixed_rate_table "$out" 1800 "$here/fixed_rate_table.sh" \
	RATES="$RATES" SEC="$SEC" SIZE="$SIZE" FIXED_GROUP="$FIXED_GROUP" \
	FIXED_DEVICE="$FIXED_DEVICE" MSGA_FEED_CLOCK="$CLOCK" \
	QUICK="${QUICK:-0}"

jq -R -s --arg dev "$dev" --arg addr "$addr" --arg clock "$CLOCK" \
	--argjson size "$SIZE" --argjson sec "$SEC" --arg rates "$RATES" '
  def num: if . == "NA" or . == "" or . == null then null else tonumber end;
  [split("\n")[] | select(length > 0) | split("\t")
   | {rate: (.[1] | tonumber), tool: .[0], median_us: (.[2] | num),
      p99_us: (.[3] | num), result: .[4]}] as $rows
  | {device: $dev, address: $addr, size_bytes: $size, seconds: $sec,
     clock: $clock, date: (now | todate),
     rates: ($rates | split(" ") | map(select(length > 0) | tonumber)),
     rows: $rows,
     stopped: [$rows[] | select(.result != "ok")
               | {tool, rate, reason: .result}]}' \
	"$out/fixed_rate_table.tsv" >"$out/fixed_rate_table.json" ||
	{ echo "fixed_rate_table: could not build fixed_rate_table.json" >&2; exit 1; }

{
	echo "### RTT/2 at fixed rates, $dev, $SIZE B, $SEC s per rate, median / p99 us ($CLOCK clock)"
	echo
	jq -r '
	  def cell: if . == null then "not run (stopped at a lower rate)"
	    elif .median_us == null then "n/a"
	    else "\(.median_us | . * 100 | round / 100) / \(.p99_us | . * 100 | round / 100)\(if .result != "ok" then " (failed)" else "" end)" end;
	  . as $t |
	  "| rate (msg/s) | pub/sub RC | pub/sub multicast | sockperf UDP |",
	  "| ---: | ---: | ---: | ---: |",
	  ($t.rates[] as $r |
	   "| \($r) | " + ([("pubsub_rc", "pubsub_mcast", "sockperf") as $k |
	     ([$t.rows[] | select(.rate == $r and .tool == $k)] | first | cell)]
	     | join(" | ")) + " |"),
	  "",
	  (if (.stopped | length) == 0 then
	     "Every tool ran every rate up to \(.rates | max) msg/s."
	   else "Where the test bed stopped: " + (.stopped | map("\(.tool) at \(.rate) msg/s (\(.reason))") | join("; ")) + "." end)' \
		"$out/fixed_rate_table.json"
} | tee "$out/fixed_rate_table.md"

bench_plot_rows "$out/fixed_rate_table.json" rate "$out/fixed_rate_table.png" \
	"RTT/2 at fixed rates, $dev, $SIZE B (soft devices in a TCG VM)" \
	"rate [msg/s]" y $TOOLS
echo "fixed_rate_table: wrote $out/fixed_rate_table.md, .json, .tsv and (gnuplot) .png" >&2
jq -e '[.rows[] | .median_us != null] | any' "$out/fixed_rate_table.json" >/dev/null
