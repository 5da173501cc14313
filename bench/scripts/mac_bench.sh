#!/bin/bash
# SPDX-License-Identifier: MIT
# mac_bench.sh [OUTDIR] - what the datagram MAC costs (issue 26: MSGA_PUB_MAC
# on / off, target <= 1.10). In ONE boot of the test VM, on rxe0, ROUNDS
# rounds (default 10) of each of:
#  - latency: msgaccel's multicast ping-pong (msga_feed --mcast --pingpong,
#    64 B, ITERS round trips), RTT/2 median and p99;
#  - message rate: msga_feed --mcast's feed (64 B, from RATE_BASE msg/s
#    up in steps of RATE_STEP, RATE_DURATION s each, to the first failure
#    event: a loss, an echo later than 1 s, a producer behind its
#    schedule), the highest rate sustained. Under TCG, with other VMs on
#    the machine, that is a few thousand at most: hence the small steps.
#    (Asking for far more than the guest can do and counting what comes
#    back measures the time to the first loss instead: UD drops.)
# once plain and once with --mac (contexts with a key, every datagram
# MAC'd by the publisher and checked by a MSGA_SUB_REQUIRE_MAC
# subscriber), the order alternating each round so the VM's drifts cancel.
# Prints the medians over the rounds and the ratios mac / plain (latency)
# and plain / mac (rate): above 1 is what the MAC costs. Writes
# OUTDIR/mac.tsv (round, kind, mode, value, value), OUTDIR/mac.json and
# each run's output, OUTDIR/{lat,rate}-MODE-PORT.log. Build without
# sanitizers for it (they cost more than what is measured).
# MSGA_BUILDDIR: the build tree (default: the current directory); ROUNDS;
# ITERS (2000); RATE_BASE (250), RATE_STEP (250), RATE_DURATION (1).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
ROUNDS=${ROUNDS:-10}
ITERS=${ITERS:-2000}
RATE_BASE=${RATE_BASE:-250}
RATE_STEP=${RATE_STEP:-250}
RATE_DURATION=${RATE_DURATION:-1}
ADDR=198.18.0.1 # rxe0 in the test VM (tests/vm/env.sh)

# ------------------------------------------------------------ in the guest
flag_of() { [ "$1" = mac ] && echo --mac; }

lat() { # mode port group -> "median p99"
	local j=$out/ml-$2.json v
	v=$(timeout 120 "$builddir/bench/msga_feed" --mcast "$3" --pingpong \
		$(flag_of "$1") -s 64 -n "$ITERS" -p "$2" --clock tsc \
		--json "$j" "$ADDR" >"$out/lat-$1-$2.log" 2>&1 &&
		jq -r '"\(.t_median_us) \(.p99_us)"' "$j" 2>/dev/null)
	rm -f "$j"
	echo "${v:-NA NA}"
}

rate() { # mode port group -> "max_rate max_rate"
	local j=$out/mr-$2.json v
	v=$(timeout 300 "$builddir/bench/msga_feed" --mcast "$3" \
		$(flag_of "$1") -s 64 -p "$2" --clock tsc --base "$RATE_BASE" \
		--step "$RATE_STEP" --max-rate 20000 \
		--duration "$RATE_DURATION" --json "$j" "$ADDR" \
		>"$out/rate-$1-$2.log" 2>&1
		jq -r '"\(.max_rate) \(.max_rate)"' "$j" 2>/dev/null)
	rm -f "$j"
	echo "${v:-NA NA}"
}

in_guest() {
	local modes=(plain mac) port=32000 r k m v g=10 kind
	out=$1
	: >"$out/mac.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for kind in lat rate; do
			for ((k = 0; k < 2; k++)); do
				m=${modes[$(((r + k) % 2))]}
				port=$((port + 3))
				g=$((g + 2)) # fresh groups: 239.255.31.g, g+1
				((g > 250)) && g=10
				v=$($kind "$m" $port "239.255.31.$g")
				echo "round $r $kind $m $v" >&2
				printf '%d\t%s\t%s\t%s\n' $r $kind "$m" \
					"${v// /	}" >>"$out/mac.tsv"
			done
		done
	done
}

# ------------------------------------------------------------ on the host
# (bench_start: in the guest, in_guest and exit)
bench_start mac_bench "$builddir/bench/msga_feed" "$@"
bench_in_vm mac_bench "$out" 3000 "$here/mac_bench.sh" ROUNDS="$ROUNDS" \
	ITERS="$ITERS" RATE_BASE="$RATE_BASE" RATE_STEP="$RATE_STEP" \
	RATE_DURATION="$RATE_DURATION"

jq -R -s --argjson rounds "$ROUNDS" --argjson iters "$ITERS" "$bench_jq_defs"'
  [split("\n")[] | select(length > 0) | split("\t")
   | select(.[3] != "NA")
   | {round: (.[0] | tonumber), kind: .[1], mode: .[2],
      a: (.[3] | tonumber), b: (.[4] | tonumber)}] as $rows
  | def both($k): [$rows | map(select(.kind == $k)) | group_by(.round)[]
      | map({key: .mode, value: {a, b}}) | from_entries
      | select(.plain and .mac)];
  both("lat") as $lat | both("rate") as $rate
  | if ($lat | length) == 0 or ($rate | length) == 0
    then error("no round where both modes ran") else . end
  | {rounds_run: $rounds, iters: $iters, size_bytes: 64, device: "rxe0",
     date: (now | todate),
     latency: {rounds: ($lat | length),
       median_us: {plain: ($lat | map(.plain.a) | median | r3),
                   mac: ($lat | map(.mac.a) | median | r3)},
       p99_us: {plain: ($lat | map(.plain.b) | median | r3),
                mac: ($lat | map(.mac.b) | median | r3)},
       ratio_median: (($lat | map(.mac.a) | median) /
                      ($lat | map(.plain.a) | median) | r3),
       ratio_p99: (($lat | map(.mac.b) | median) /
                   ($lat | map(.plain.b) | median) | r3),
       per_round_ratio_median: ($lat | map(.mac.a / .plain.a) | median
                                | r3)},
     rate: {rounds: ($rate | length),
       max_rate: {plain: ($rate | map(.plain.a) | median),
                  mac: ($rate | map(.mac.a) | median)},
       ratio_plain_over_mac: (($rate | map(.plain.a) | median) /
                              ($rate | map(.mac.a) | median) | r3)}}
' "$out/mac.tsv" >"$out/mac.json" || { echo "mac_bench: no result" >&2; exit 1; }
jq -r '"latency (RTT/2, 64 B, \(.latency.rounds) rounds): median \(.latency.median_us.plain) us plain, \(.latency.median_us.mac) us MAC: ratio \(.latency.ratio_median) (per-round median \(.latency.per_round_ratio_median)); p99 \(.latency.p99_us.plain) / \(.latency.p99_us.mac) us: ratio \(.latency.ratio_p99)",
       "message rate (64 B, highest sustained, \(.rate.rounds) rounds): \(.rate.max_rate.plain) msg/s plain, \(.rate.max_rate.mac) msg/s MAC: ratio plain/MAC \(.rate.ratio_plain_over_mac)"' \
	"$out/mac.json"
