#!/bin/bash
# SPDX-License-Identifier: MIT
# mcast_rate_table.sh [--rc] [OUTDIR] - latency against message rate over
# multicast pub/sub on soft-RoCE (rxe0), in one boot of the test VM; with
# --rc and RATE_SIZES="64 800", issue 38's table of latency against rate
# for unicast and multicast at 64 and 800 B (the VMA vs Onload exhibit).
#
# Runs msga_feed --mcast GROUP (SendToReceive, RTT/2) from 10k msg/s up in
# steps of 10k until a failure event: over multicast a lost message (a gap
# in the echoes) is one, as is an echo later than --deadline or a producer
# that falls behind its schedule. Prints a markdown table
# "rate | median us | p99 us | result" and the highest rate sustained
# without loss. With --rc the same steps also run over RC (rdma://, no
# --mcast) in the same VM boot, for comparison; each size of RATE_SIZES
# gets its own runs, in the same boot.
#
# Writes OUTDIR (default ./bench-results) /rate_table.json, /rate_table.md,
# and per transport T (mcast, rc) and size S: feed-T-S.json (msga_feed
# --json), feed-T-S.txt (its stdout and stderr), feed-T-S.series and, when
# gnuplot is there, feed-T-S.png (bench/scripts/feed_chart.sh).
#
# rate_table.json fields: device, address, sizes (RATE_SIZES), duration_s,
# base, step, max_rate_tried, deadline_s, clock, date, and runs[] (one per
# transport and size): transport ("mcast" or "rc"), size_bytes, group
# (mcast only, else null),
# command, exit_status (msga_feed's), max_rate_ok (msga_feed's max_rate:
# the highest rate without a failure event; null when the run produced no
# JSON), failure ({rate, reason} of the step that failed, or null when no
# step failed up to max_rate_tried), steps[] ({rate, median_us, p99_us,
# mean_us, max_us, count, failure}, SendToReceive), producer and consumer
# ({cpu_pct, peak_rss_kb}).
#
# Environment: RATE_REPORT_ONLY=1 (redraw from OUTDIR, no VM); MSGA_BUILDDIR (build tree with bench/msga_feed, default the
# current directory); RATE_SIZES (RATE_SIZE: 64 B), RATE_BASE (10000), RATE_STEP
# (10000), RATE_MAX (200000), RATE_DURATION (2 s per step), RATE_DEADLINE
# (1 s), RATE_GROUP (239.255.79.10; the echoes go to the next address),
# RATE_DEVICE (rxe0:198.18.0.1), MSGA_FEED_CLOCK (tsc, as compare.sh: the
# TCG guest's clock_gettime is an emulated HPET). Under TCG the soft devices
# fail well below RATE_MAX (at 10k-30k msg/s), so the whole run, boot
# included, takes one to three minutes a run; each step is bounded anyway,
# by the deadline and the producer's schedule. QUICK=1 (the short setting
# of tests/bench_tables_quick.sh): RATE_MAX 30000, 1 s per step.
#
# Soft RDMA in a VM is slow and noisy: compare within one run only.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
builddir=$(cd "${MSGA_BUILDDIR:-$PWD}" && pwd)
if [ "${QUICK:-0}" = 1 ]; then
	RATE_MAX=${RATE_MAX:-30000}
	RATE_DURATION=${RATE_DURATION:-1}
fi
RATE_SIZE=${RATE_SIZE:-64}
RATE_SIZES=${RATE_SIZES:-$RATE_SIZE}
RATE_BASE=${RATE_BASE:-10000}
RATE_STEP=${RATE_STEP:-10000}
RATE_MAX=${RATE_MAX:-200000}
RATE_DURATION=${RATE_DURATION:-2}
RATE_DEADLINE=${RATE_DEADLINE:-1}
RATE_GROUP=${RATE_GROUP:-239.255.79.10}
RATE_DEVICE=${RATE_DEVICE:-rxe0:198.18.0.1}
CLOCK=${MSGA_FEED_CLOCK:-tsc}
IFS=: read -r dev addr <<<"$RATE_DEVICE"

feed_args() { # transport size
	local a=(-d "$dev" -s "$2" --base "$RATE_BASE"
		 --step "$RATE_STEP" --max-rate "$RATE_MAX"
		 --duration "$RATE_DURATION" --deadline "$RATE_DEADLINE"
		 --clock "$CLOCK")
	[ "$1" = mcast ] && a+=(--mcast "$RATE_GROUP")
	printf '%s\n' "${a[@]}"
}

# ------------------------------------------------------------ in the guest
# One msga_feed run per transport and size; its exit status goes to
# feed-T-S.rc. The time limit covers every step up to RATE_MAX plus
# start-up.
in_guest() { # outdir transports...
	local out=$1 t s r args limit
	shift
	limit=$(awk -v b="$RATE_BASE" -v s="$RATE_STEP" -v m="$RATE_MAX" \
		-v d="$RATE_DURATION" -v l="$RATE_DEADLINE" \
		'BEGIN { printf "%d", ((m - b) / s + 1) * (d + l + 1) + 60 }')
	for s in $RATE_SIZES; do
		for t in "$@"; do
			r=$t-$s
			mapfile -t args < <(feed_args "$t" "$s")
			echo "rate_table: $t on $dev: msga_feed ${args[*]} $addr" >&2
			timeout "$limit" "$builddir/bench/msga_feed" "${args[@]}" \
				--json "$out/feed-$r.json" \
				--series "$out/feed-$r.series" \
				"$addr" >"$out/feed-$r.txt" 2>&1
			echo $? >"$out/feed-$r.rc"
			tail -n 6 "$out/feed-$r.txt" >&2
		done
	done
}

if [ "${1:-}" = --in-guest ]; then
	shift
	in_guest "$@"
	exit 0
fi

# ------------------------------------------------------------ on the host
transports=(mcast)
if [ "${1:-}" = --rc ]; then
	transports+=(rc)
	shift
fi
out=$(mkdir -p "${1:-$PWD/bench-results}" && cd "${1:-$PWD/bench-results}" && pwd)
[ -x "$builddir/bench/msga_feed" ] ||
	{ echo "rate_table: build first: no $builddir/bench/msga_feed" >&2; exit 1; }
command -v jq >/dev/null || { echo "rate_table: jq is needed" >&2; exit 1; }
# RATE_REPORT_ONLY=1 redraws the tables and JSON from the feed-T files
# already in OUTDIR, without booting the VM.
if [ "${RATE_REPORT_ONLY:-0}" != 1 ]; then
	for s in $RATE_SIZES; do
		for t in "${transports[@]}"; do
			rm -f "$out/feed-$t-$s".{json,txt,rc,series,png}
		done
	done
	start=$(date +%s)
	MSGA_VM_RWDIRS="--rwdir $out" MSGA_VM_TIMEOUT=2400 \
		"$src/tests/vm/vm-run.sh" "$out/vm" env \
		MSGA_BUILDDIR="$builddir" RATE_SIZES="$RATE_SIZES" \
		RATE_BASE="$RATE_BASE" RATE_STEP="$RATE_STEP" \
		RATE_MAX="$RATE_MAX" RATE_DURATION="$RATE_DURATION" \
		RATE_DEADLINE="$RATE_DEADLINE" RATE_GROUP="$RATE_GROUP" \
		RATE_DEVICE="$RATE_DEVICE" MSGA_FEED_CLOCK="$CLOCK" \
		bash "$here/mcast_rate_table.sh" --in-guest "$out" \
		"${transports[@]}" ||
		{ echo "rate_table: the VM run failed" >&2; exit 1; }
	echo "rate_table: VM run took $(( $(date +%s) - start )) s" >&2
fi

# One JSON object per transport and size from msga_feed's own JSON (null
# fields when the run wrote none: it could not start, or it was killed).
run_json() { # transport size
	local t=$1 j="$out/feed-$1-$2.json" rc group=null cmd
	rc=$(cat "$out/feed-$1-$2.rc" 2>/dev/null || echo null)
	[ "$t" = mcast ] && group="\"$RATE_GROUP\""
	cmd="msga_feed $(feed_args "$t" "$2" | tr '\n' ' ')$addr"
	jq -n --arg t "$t" --argjson g "$group" --arg cmd "$cmd" \
		--argjson rc "$rc" --argjson size "$2" \
		--slurpfile f <(jq -e . "$j" 2>/dev/null || true) '
	  ($f[0] // {}) as $f |
	  {transport: $t, size_bytes: $size, group: $g, command: $cmd,
	   exit_status: $rc,
	   max_rate_ok: $f.max_rate,
	   warmup: $f.warmup,
	   # (a warm-up that failed, at the base rate, ran no step)
	   failure: (if $f.warmup.failure then
	               {rate: $f.warmup.rate,
	                reason: ("in the warm-up (1 s at that rate, not counted): " + $f.warmup.failure)}
	             else ([$f.steps[]? | select(.failure) |
	                    {rate, reason: .failure}] | first) end),
	   steps: [$f.steps[]? | {rate, median_us: .send_to_receive.median_us,
	            p99_us: .send_to_receive.p99_us,
	            mean_us: .send_to_receive.mean_us,
	            max_us: .send_to_receive.max_us,
	            count: .send_to_receive.count, failure}],
	   producer: $f.producer, consumer: $f.consumer}'
}

for s in $RATE_SIZES; do
	for t in "${transports[@]}"; do
		run_json "$t" "$s" ||
			{ echo "rate_table: bad msga_feed output for $t-$s" >&2; exit 1; }
	done
done | jq -s --arg dev "$dev" --arg addr "$addr" --arg clock "$CLOCK" \
	--arg sizes "$RATE_SIZES" --argjson dur "$RATE_DURATION" \
	--argjson base "$RATE_BASE" --argjson step "$RATE_STEP" \
	--argjson max "$RATE_MAX" --argjson dl "$RATE_DEADLINE" '
	{device: $dev, address: $addr,
	 sizes: ($sizes | split(" ") | map(select(length > 0) | tonumber)),
	 duration_s: $dur,
	 base: $base, step: $step, max_rate_tried: $max, deadline_s: $dl,
	 clock: $clock, date: (now | todate), runs: .}' >"$out/rate_table.json" ||
	{ echo "rate_table: could not build rate_table.json" >&2; exit 1; }

# The markdown tables, one per transport.
jq -r 'def f2: (. * 100 | round) as $n |
    "\($n / 100 | floor).\($n % 100 | tostring | if length < 2 then "0" + . else . end)";
  . as $top | .runs[] |
  "### \(if .transport == "mcast" then "multicast pub/sub (msga_feed --mcast \(.group))"
        else "RC pub/sub (msga_feed, rdma://)" end), \($top.device), \(.size_bytes) B, \($top.duration_s) s per step",
  "",
  "SendToReceive latency (RTT/2), \($top.clock) clock.",
  "",
  (if (.steps | length) > 0 then
     "| rate (msg/s) | median us | p99 us | result |",
     "| ---: | ---: | ---: | --- |",
     (.steps[] | "| \(.rate) | \(.median_us | f2) | \(.p99_us | f2) | \(if .failure then "failure: \(.failure)" else "ok" end) |"),
     ""
   else empty end),
  (if .max_rate_ok == null then
     "No result: msga_feed exited with status \(.exit_status) (see feed-\(.transport)-\(.size_bytes).txt)."
   elif .failure then
     "Max rate sustained without loss or another failure event: \(.max_rate_ok) msg/s (failed at \(.failure.rate): \(.failure.reason))."
   else
     "No failure up to \($top.max_rate_tried) msg/s (the highest rate tried): \(.max_rate_ok) msg/s is a lower bound."
   end),
  (if .exit_status != 0 and .max_rate_ok != null then
     "msga_feed exited with status \(.exit_status) (see feed-\(.transport)-\(.size_bytes).txt)."
   else empty end),
  ""' "$out/rate_table.json" | tee "$out/rate_table.md"

if command -v gnuplot >/dev/null; then
	for s in $RATE_SIZES; do
		for t in "${transports[@]}"; do
			r=$out/feed-$t-$s
			[ -s "$r.json" ] && [ -s "$r.series" ] &&
				bash "$here/feed_chart.sh" "$r.json" "$r.series" \
					"$r.png" >&2
		done
	done
fi
echo "rate_table: wrote $out/rate_table.json, $out/rate_table.md" >&2
# A run with no steps is a failed benchmark, not a result.
jq -e '[.runs[] | .max_rate_ok != null] | all' "$out/rate_table.json" >/dev/null
