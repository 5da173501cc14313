#!/bin/bash
# SPDX-License-Identifier: MIT
# auth_bench.sh [OUTDIR] - what authentication costs (issue 26: RC
# ping-pong with keys / without, target <= 1.01, since it costs only at
# connect; and connect time with and without). In ONE boot of the test VM,
# on rxe0: ROUNDS rounds (default 20) of msgaccel's RC ping-pong
# (msga_feed --pingpong, 64 B, ring path), once in plain contexts and once
# in contexts with a key file (--key-file), the order alternating each
# round, so the VM's drifts cancel in the per-round ratios; then
# msga_conntime, which times CONNECTS connects of each kind, alternating,
# in one process. Prints the medians over the rounds of each one's median
# and p99 RTT/2, the ratio of those medians, the median of the per-round
# ratios, and the connect medians and ratio; writes OUTDIR/auth.tsv and
# OUTDIR/auth.json. MSGA_BUILDDIR: the build tree (default: the current
# directory); ROUNDS; ITERS (2000 round trips a run); CONNECTS (200).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
ROUNDS=${ROUNDS:-20}
ITERS=${ITERS:-2000}
CONNECTS=${CONNECTS:-200}
ADDR=198.18.0.1 # rxe0 in the test VM (tests/vm/env.sh)

# ------------------------------------------------------------ in the guest
one() { # mode port
	local j=$out/ab-$2.json v flag=
	[ "$1" = keyed ] && flag="--key-file /tmp/msga-bench.key"
	v=$(timeout 120 "$builddir/bench/msga_feed" --pingpong $flag -s 64 \
		-n "$ITERS" -p "$2" --clock tsc --json "$j" "$ADDR" \
		>/dev/null 2>&1 &&
		jq -r '"\(.t_median_us) \(.p99_us)"' "$j" 2>/dev/null)
	rm -f "$j"
	echo "${v:-NA NA}"
}

in_guest() {
	local modes=(plain keyed) port=32000 r k m v
	out=$1
	# a fresh key, readable by us alone (msga_ctx_open(3) wants 600)
	(umask 077 && printf 'bench %s\n' \
		"$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
		>/tmp/msga-bench.key)
	: >"$out/auth.tsv"
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((k = 0; k < 2; k++)); do
			m=${modes[$(((r + k) % 2))]}
			port=$((port + 4))
			v=$(one "$m" $port)
			echo "round $r $m $v" >&2
			printf '%d\t%s\t%s\n' $r "$m" "${v// /	}" >>"$out/auth.tsv"
		done
	done
	timeout 600 "$builddir/bench/msga_conntime" -n "$CONNECTS" \
		--key-file "/tmp/msga-bench.key" --json "$out/conntime.json" "$ADDR" >&2 ||
		echo '{}' >"$out/conntime.json"
	rm -f "/tmp/msga-bench.key"
}

# ------------------------------------------------------------ on the host
# (bench_start: in the guest, in_guest and exit)
bench_start auth_bench "$builddir/bench/msga_feed" "$@"
[ -x "$builddir/bench/msga_conntime" ] ||
	{ echo "auth_bench: build first: no bench/msga_conntime" >&2; exit 1; }
bench_in_vm auth_bench "$out" 3000 "$here/auth_bench.sh" \
	ROUNDS="$ROUNDS" ITERS="$ITERS" CONNECTS="$CONNECTS"

{ bench_pair_json plain keyed "$out/auth.tsv" "$ROUNDS" "$ITERS" |
	jq --slurpfile conn "$out/conntime.json" '. + {connect: ($conn[0] // {})}'; } \
	>"$out/auth.json" &&
	jq -e .rounds "$out/auth.json" >/dev/null ||
	{ echo "auth_bench: could not build auth.json" >&2; exit 1; }
jq -r '"rxe0, \(.rounds) rounds of \(.iters) RC round trips (64 B), RTT/2 us:\n  median: plain \(.median_us.plain), keyed \(.median_us.keyed); keyed / plain: ratio of medians \(.ratio_of_medians.median), median of ratios \(.median_of_ratios.median)\n  p99:    plain \(.p99_us.plain), keyed \(.p99_us.keyed); keyed / plain: ratio of medians \(.ratio_of_medians.p99), median of ratios \(.median_of_ratios.p99)\n  connect (median of \(.connect.count) each): plain \(.connect.plain_median_us) us, keyed \(.connect.keyed_median_us) us, keyed / plain \(.connect.ratio)"' "$out/auth.json"
echo "(issue 26 target: keyed / plain ping-pong <= 1.01)"
