#!/bin/bash
# SPDX-License-Identifier: MIT
# batch_table.sh [OUTDIR] - batching under the caller's control (issue 36,
# item 6): throughput and latency of one publisher by how it rings the
# doorbell, in ONE boot of the test VM, on rxe0 (BATCH_DEVICE for
# another). ROUNDS rounds (default 3) of msga_feed --publish MODE (ITERS
# messages of SIZE bytes, as fast as MODE lets them go, to a consumer
# process that busy-polls and times each message one way: from the
# sender's stamp to its callback, one host and one clock) for each MODE:
#   every           a poll after each send (MSGA_PUB_NO_COALESCE)
#   eagain          a poll on -EAGAIN only (MSGA_PUB_NO_COALESCE)
#   more:4/16/64    MSGA_COMMIT_MORE, a plain send (the doorbell) and a
#                   poll every N (MSGA_PUB_NO_COALESCE)
#   adaptive-every  the default publisher (coalescing while its send
#                   queue is busy), a poll after each send
#   adaptive        the default publisher, a poll on -EAGAIN only
# the order rotating each round so the VM's drifts spread. Prints a
# markdown table of the medians over the rounds: msg/s (from the first
# message's send to the last one's callback), and the median and p99 of
# the one-way latency (us), with each mode's msg/s over "every"'s.
# Writes OUTDIR/batch.tsv (round, mode, msg/s, median, p99),
# OUTDIR/batch.md and each run's output OUTDIR/MODE-ROUND.log.
# MSGA_BUILDDIR: the build tree (default: the current directory; build
# without sanitizers for figures); ROUNDS; ITERS (20000); SIZE (64);
# BATCH_DEVICE (rxe0:198.18.0.1, or siw0:198.18.1.1).
# Soft RDMA under TCG is slow and noisy: compare within one run only.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20000}
SIZE=${SIZE:-64}
BATCH_DEVICE=${BATCH_DEVICE:-rxe0:198.18.0.1}
MODES=(every eagain more:4 more:16 more:64 adaptive-every adaptive)

# ------------------------------------------------------------ in the guest
one() { # mode port round -> "msg/s median p99"
	local j=$out/b-$2.json v dev addr
	IFS=: read -r dev addr <<<"$BATCH_DEVICE"
	v=$(timeout 300 "$builddir/bench/msga_feed" -d "$dev" --publish "$1" \
		-s "$SIZE" -n "$ITERS" -p "$2" --clock tsc --json "$j" \
		"$addr" >"$out/${1/:/-}-$3.log" 2>&1 &&
		jq -r '"\(.msg_per_s) \(.latency.median_us) \(.latency.p99_us)"' \
			"$j" 2>/dev/null)
	rm -f "$j"
	echo "${v:-NA NA NA}"
}

in_guest() {
	local n=${#MODES[@]} port=33000 r k m v
	out=$1
	: >"$out/batch.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((k = 0; k < n; k++)); do
			m=${MODES[$(((r + k) % n))]}
			port=$((port + 3))
			v=$(one "$m" $port $r)
			echo "round $r $m $v" >&2
			printf '%d\t%s\t%s\n' $r "$m" "${v// /	}" >>"$out/batch.tsv"
		done
	done
}

# ------------------------------------------------------------ on the host
# (bench_start: in the guest, in_guest and exit)
bench_start batch_table "$builddir/bench/msga_feed" "$@"
bench_in_vm batch_table "$out" 3000 "$here/batch_table.sh" \
	ROUNDS="$ROUNDS" ITERS="$ITERS" SIZE="$SIZE" BATCH_DEVICE="$BATCH_DEVICE"

jq -R -s -r --arg modes "${MODES[*]}" "$bench_jq_defs"'
  [split("\n")[] | select(length > 0) | split("\t") | select(.[2] != "NA")
   | {mode: .[1], rate: (.[2] | tonumber), med: (.[3] | tonumber),
      p99: (.[4] | tonumber)}] as $rows
  | ($rows | map(select(.mode == "every")) | map(.rate) | median) as $base
  | "| mode | msg/s | x every | median us | p99 us | rounds |",
    "|---|---:|---:|---:|---:|---:|",
    ($modes | split(" ")[] as $m
     | ($rows | map(select(.mode == $m))) as $r
     | if ($r | length) == 0 then "| \($m) | failed | | | | 0 |"
       else "| \($m) | \($r | map(.rate) | median | round) | " +
            "\(if $base then ($r | map(.rate) | median) / $base | r3
               else null end) | \($r | map(.med) | median | r3) | " +
            "\($r | map(.p99) | median | r3) | \($r | length) |" end)
' "$out/batch.tsv" | tee "$out/batch.md"
