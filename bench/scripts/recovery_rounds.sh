#!/bin/bash
# SPDX-License-Identifier: MIT
# recovery_rounds.sh [OUTDIR] - what loss recovery costs the live path
# (issue 25: recovery on / off, no loss, target <= 1.05 at the median and
# p99). In ONE boot of the test VM, on rxe0, ROUNDS rounds (default 20) of
# msgaccel's multicast ping-pong (msga_feed --mcast --pingpong, 64 B),
# once with plain publishers and once with MSGA_PUB_RELIABLE ones
# (--reliable: each message is also copied into the retransmission buffer,
# and the subscriber delivers through the in-order hold-back), the order
# alternating each round, so the VM's drifts cancel in the per-round
# ratios. Prints the medians over the rounds of each one's median and p99
# RTT/2, the ratio of those medians and the median of the per-round
# ratios; writes OUTDIR/recovery.tsv (round, mode, median us, p99 us) and
# OUTDIR/recovery.json. MSGA_BUILDDIR: the build tree (default: the
# current directory); ROUNDS; ITERS (2000 round trips a run).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
ROUNDS=${ROUNDS:-20}
ITERS=${ITERS:-2000}
ADDR=198.18.0.1 # rxe0 in the test VM (tests/vm/env.sh)

# ------------------------------------------------------------ in the guest
one() { # mode port group
	local j=$out/rr-$2.json v flag=
	[ "$1" = reliable ] && flag=--reliable
	v=$(timeout 120 "$builddir/bench/msga_feed" --mcast "$3" --pingpong \
		$flag -s 64 -n "$ITERS" -p "$2" --clock tsc --json "$j" \
		"$ADDR" >/dev/null 2>&1 &&
		jq -r '"\(.t_median_us) \(.p99_us)"' "$j" 2>/dev/null)
	rm -f "$j"
	echo "${v:-NA NA}"
}

in_guest() {
	local modes=(plain reliable) port=31000 r k m v g=10
	out=$1
	: >"$out/recovery.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((k = 0; k < 2; k++)); do
			m=${modes[$(((r + k) % 2))]}
			port=$((port + 3))
			g=$((g + 2)) # fresh groups each run: 239.255.30.g, g+1
			v=$(one "$m" $port "239.255.30.$g")
			echo "round $r $m $v" >&2
			printf '%d\t%s\t%s\n' $r "$m" "${v// /	}" >>"$out/recovery.tsv"
		done
	done
}

# ------------------------------------------------------------ on the host
# (bench_start: in the guest, in_guest and exit)
bench_start recovery_rounds "$builddir/bench/msga_feed" "$@"
bench_in_vm recovery_rounds "$out" 3000 "$here/recovery_rounds.sh" \
	ROUNDS="$ROUNDS" ITERS="$ITERS"

jq -R -s --argjson rounds "$ROUNDS" --argjson iters "$ITERS" "$bench_jq_defs"'
  [split("\n")[] | select(length > 0) | split("\t")
   | select(.[2] != "NA")
   | {round: (.[0] | tonumber), mode: .[1], med: (.[2] | tonumber),
      p99: (.[3] | tonumber)}]
  | [group_by(.round)[] | map({key: .mode, value: {med, p99}})
     | from_entries | select(.plain and .reliable)] as $ok
  | if ($ok | length) == 0 then error("no round where both modes ran")
    else . end
  | {rounds_run: $rounds, rounds: ($ok | length), iters: $iters,
     size_bytes: 64, device: "rxe0", date: (now | todate),
     median_us: {plain: ($ok | map(.plain.med) | median | r3),
                 reliable: ($ok | map(.reliable.med) | median | r3)},
     p99_us: {plain: ($ok | map(.plain.p99) | median | r3),
              reliable: ($ok | map(.reliable.p99) | median | r3)},
     ratio_of_medians: {
       median: (($ok | map(.reliable.med) | median) /
                ($ok | map(.plain.med) | median) | r3),
       p99: (($ok | map(.reliable.p99) | median) /
             ($ok | map(.plain.p99) | median) | r3)},
     median_of_ratios: {
       median: ($ok | map(.reliable.med / .plain.med) | median | r3),
       p99: ($ok | map(.reliable.p99 / .plain.p99) | median | r3)}}' \
	"$out/recovery.tsv" >"$out/recovery.json" ||
	{ echo "recovery_rounds: could not build recovery.json" >&2; exit 1; }
jq -r '"rxe0, \(.rounds) rounds of \(.iters) multicast round trips (64 B), RTT/2 us:\n  median: plain \(.median_us.plain), reliable \(.median_us.reliable); reliable / plain: ratio of medians \(.ratio_of_medians.median), median of ratios \(.median_of_ratios.median)\n  p99:    plain \(.p99_us.plain), reliable \(.p99_us.reliable); reliable / plain: ratio of medians \(.ratio_of_medians.p99), median of ratios \(.median_of_ratios.p99)"' "$out/recovery.json"
echo "(issue 25 target: reliable / plain <= 1.05, median and p99)"
