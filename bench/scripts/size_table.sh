#!/bin/bash
# SPDX-License-Identifier: MIT
# size_table.sh [OUTDIR] - issue 38's latency against message size, the
# Mellanox VMA vs Solarflare exhibit's 12 to 2048 bytes, in ONE boot of
# the test VM on soft-RoCE (rxe0): for each size, side by side,
#   pubsub_rc     msga_feed --pingpong -s SIZE (pub/sub over RC, the ring)
#   pubsub_mcast  msga_feed --pingpong --mcast GROUP -s SIZE (over UD
#                 multicast; the echoes go to the next group address)
#   rdma_lat      our raw-verbs RDMA WRITE ping-pong, -s SIZE
#   sockperf      kernel UDP, sockperf ping-pong -m SIZE
# each one run, its RTT/2 median and p99 (us). msga_feed's ping-pong
# measures from 12 bytes (below 32 its messages carry a 12-byte header,
# sequence number and flags, and the producer keeps the send time:
# msga_feed(1), MESSAGE LAYOUT); sockperf's smallest message is 14 bytes;
# a run that fails (a lost multicast echo stalls the ping-pong) is "n/a"
# with the tool's error line.
#
# Prints a markdown table, writes OUTDIR (default ./bench-results)
# /size_table.md, /msga_cpu.txt (`msga_cpu -d 1 -D DEV` at the start: the
# vCPUs' noise and the device's interrupts then), /size_table.json ({device, address, iterations, clock,
# date, sizes[], rows[]: {size, tool, median_us, p99_us, note}}, null
# where a run failed), /size_table.tsv (the raw rows) and, with gnuplot,
# /size_table.png (median and p99 against size, per tool).
#
# Environment: MSGA_BUILDDIR (the build tree, default the current
# directory; a plain build for figures); SIZES (12 32 64 128 256 512 1024
# 2048); ITERS (2000 round trips per run); QUICK=1: sizes 12 1024 (the
# compact header and the full one) and 300 round trips
# (tests/bench_tables_quick.sh); SIZE_GROUP (239.255.79.20);
# SIZE_DEVICE (rxe0:198.18.0.1); MSGA_FEED_CLOCK (tsc, as compare.sh).
# Soft RDMA in a VM is slow and noisy: compare within one run only.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
if [ "${QUICK:-0}" = 1 ]; then
	SIZES=${SIZES:-12 1024}
	ITERS=${ITERS:-300}
fi
SIZES=${SIZES:-12 32 64 128 256 512 1024 2048}
ITERS=${ITERS:-2000}
SIZE_GROUP=${SIZE_GROUP:-239.255.79.20}
SIZE_DEVICE=${SIZE_DEVICE:-rxe0:198.18.0.1}
CLOCK=${MSGA_FEED_CLOCK:-tsc}
IFS=: read -r dev addr <<<"$SIZE_DEVICE"
TOOLS="pubsub_rc pubsub_mcast rdma_lat sockperf"

# ------------------------------------------------------------ in the guest
# Each prints "median p99 note" (NA NA reason when the run failed).
one() { # size tool port
	local size=$1 tool=$2 port=$3 err=$out/err-$2-$1
	case $tool in
	pubsub_*)
		local extra=()
		[ "$tool" = pubsub_mcast ] && extra=(--mcast "$SIZE_GROUP")
		bench_feed_pingpong "$err" "$port" -d "$dev" -s "$size" \
			-n "$ITERS" --clock "$CLOCK" "${extra[@]}" "$addr" ;;
	rdma_lat) bench_rdma_lat "$err" "$port" "$addr" -s "$size" \
			-n "$ITERS" --clock "$CLOCK" ;;
	sockperf) bench_sockperf "$err" "$port" "$addr" ping-pong \
			-m "$size" -t 3 ;;
	esac
}

in_guest() {
	out=$1
	# The vCPUs' noise and the device's interrupts at the time of the run.
	"$builddir/bench/msga_cpu" -d 1 -D "$dev" >"$out/msga_cpu.txt" 2>&1
	bench_rows size_table "$out/size_table.tsv" 31000 0 "$SIZES" "$TOOLS"
}

# ------------------------------------------------------------ on the host
bench_start size_table "$builddir/bench/msga_feed" "$@"
[ -x "$builddir/bench/rdma_lat" ] ||
	{ echo "size_table: build first: no $builddir/bench/rdma_lat" >&2; exit 1; }
bench_in_vm size_table "$out" 1800 "$here/size_table.sh" SIZES="$SIZES" \
	ITERS="$ITERS" SIZE_GROUP="$SIZE_GROUP" SIZE_DEVICE="$SIZE_DEVICE" \
	MSGA_FEED_CLOCK="$CLOCK" QUICK="${QUICK:-0}"

jq -R -s --arg dev "$dev" --arg addr "$addr" --arg clock "$CLOCK" \
	--argjson iters "$ITERS" --arg sizes "$SIZES" "$bench_jq_defs"'
  def num: if . == "NA" or . == "" or . == null then null else tonumber end;
  [split("\n")[] | select(length > 0) | split("\t")
   | {size: (.[0] | tonumber), tool: .[1], median_us: (.[2] | num),
      p99_us: (.[3] | num), note: (.[4] // "" | if . == "" then null
      else . end)}] as $rows
  | {device: $dev, address: $addr, iterations: $iters, clock: $clock,
     date: (now | todate),
     sizes: ($sizes | split(" ") | map(select(length > 0) | tonumber)),
     rows: $rows}' "$out/size_table.tsv" >"$out/size_table.json" ||
	{ echo "size_table: could not build size_table.json" >&2; exit 1; }

{
	echo "### Latency against message size, $dev, RTT/2 median / p99 us ($CLOCK clock, $ITERS round trips; sockperf 3 s)"
	echo
	jq -r '
	  def cell: if .median_us == null then "n/a" else
	    "\(.median_us | . * 100 | round / 100) / \(.p99_us | . * 100 | round / 100)" end;
	  . as $t |
	  "| size (B) | pub/sub RC | pub/sub multicast | rdma_lat (WRITE) | sockperf UDP |",
	  "| ---: | ---: | ---: | ---: | ---: |",
	  ($t.sizes[] as $s |
	   [$t.rows[] | select(.size == $s)] as $r |
	   "| \($s) | " + ([("pubsub_rc", "pubsub_mcast", "rdma_lat", "sockperf") as $k |
	     ($r[] | select(.tool == $k) | cell) // "n/a"] | join(" | ")) + " |"),
	  "",
	  ([.rows[] | select(.median_us == null)] |
	   if length == 0 then "Every run gave a figure."
	   else "Cells without a figure, and why (a tool'"'"'s limit, or where the test bed stopped): " + (map("\(.tool) at \(.size) B (\(.note))") | join("; ")) + "." end)' \
		"$out/size_table.json"
} | tee "$out/size_table.md"

bench_plot_rows "$out/size_table.json" size "$out/size_table.png" \
	"RTT/2 against message size, $dev (soft devices in a TCG VM)" \
	"message size [B]" xy $TOOLS
echo "size_table: wrote $out/size_table.md, .json, .tsv and (gnuplot) .png" >&2
jq -e '[.rows[] | .median_us != null] | any' "$out/size_table.json" >/dev/null
