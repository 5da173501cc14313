#!/bin/bash
# SPDX-License-Identifier: MIT
# callgrind_pingpong.sh [OUTDIR] - the library's own instructions per round
# trip on the RC ring path, exact where time is not: in ONE VM boot, on
# each device, msga_feed --pingpong (64 B) runs under valgrind's callgrind
# with N1 and then N2 round trips (defaults 2000 and 6000), both processes
# traced (the pinging producer and the reflecting consumer it forks).
# What libmsgaccel.so executed in each process, summed over its functions,
# differs between the two runs only by the N2 - N1 extra round trips:
#
#     per round trip = (Ir(N2) - Ir(N1)) / (N2 - N1)
#
# so set-up, handshakes and teardown cancel. Busy-poll spins and the
# time-driven work run from the poll loop (keepalives, ticks) are
# included, and callgrind slows time about fifty-fold, so the figure is a
# ceiling for a real NIC: the per-message work is the floor of it.
#
# MSGA_BUILDDIR: the build tree (default: the current directory).
# MSGA_ROUNDS_BASELINE: another build tree (say, of the commit before a
# refactoring), measured the same way in the same boot: the before/after
# figure of a change. Build both without sanitizers (plain ./configure).
# CG_NO_STATS=1: the current tree once more with msga_feed --no-stats
# (contexts without live counters, MSGA_CTX_NO_STATS), as the tree
# "nostats": what the counters' file costs (bench/scripts/stat_cost.sh).
# N1, N2, MSGA_CG_DEVICES ("dev:addr:transport ...", default: rxe0 only,
# the ring path; siw takes the same library path).
# Per process, the inclusive cost per call of the entry points CG_FUNCS
# (callgrind_calls.py) is exact where the per-round-trip figure is not: the
# spin of a busy poll while the peer answers is time, and time is noisy.
# Writes OUTDIR/callgrind.tsv (tree, device, role, iters, Ir) and
# OUTDIR/calls.tsv (tree, device, role, iters, function, calls, Ir per
# call), and prints both figures. OUTDIR defaults to ./bench-results.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
baseline=${MSGA_ROUNDS_BASELINE:-}
N1=${N1:-2000}
N2=${N2:-6000}
# Entry points whose inclusive cost per call is exact (no spin in it): the
# send path and one delivery (which in the consumer includes its echo;
# msga__sub_deliver_whole became rc_sub_rx.c's deliver_whole in 0.8.1,
# msga__ring_poll the subscriber's msga__sub_ring_poll).
CG_FUNCS=${CG_FUNCS:-msga_pub_send msga_pub_claim msga_pub_commit msga__sub_deliver_whole deliver_whole msga__ring_poll msga__sub_ring_poll msga_ctx_poll}

# ------------------------------------------------------------ in the guest
# Ir of libmsgaccel in one callgrind output file (self cost of every
# function whose object is the library).
lib_ir() { # file
	callgrind_annotate --inclusive=no --threshold=100 "$1" 2>/dev/null |
		awk '/libmsgaccel\.so/ { gsub(",", "", $1); s += $1 }
		     END { printf "%d\n", s }'
}

one_run() { # tree label dev addr iters port
	local tree=$1 label=$2 dev=$3 addr=$4 n=$5 port=$6 d f role extra=
	[ "$label" = nostats ] && extra=--no-stats
	d=$out/cg-$label-$dev-$n
	rm -rf "$d" && mkdir -p "$d"
	LD_LIBRARY_PATH="$tree/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		timeout 900 valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$d/cg.%p" \
		"$tree/bench/.libs/msga_feed" --pingpong -s 64 -n "$n" \
		-p "$port" --clock monotonic $extra "$addr" >"$d/stdout" \
		2>"$d/stderr" ||
		{ echo "callgrind_pingpong: $label $dev $n failed (see $d)" >&2; return 1; }
	# The lower pid is the producer (it forks the consumer).
	for f in $(ls "$d"/cg.* | sort -t. -k2 -n); do
		role=${role:+consumer}
		role=${role:-producer}
		printf '%s\t%s\t%s\t%d\t%s\n' "$label" "$dev" "$role" "$n" \
			"$(lib_ir "$f")" >>"$out/callgrind.tsv"
		python3 "$here/callgrind_calls.py" "$f" $CG_FUNCS |
			while read -r fn calls per; do
				printf '%s\t%s\t%s\t%d\t%s\t%s\t%s\n' "$label" "$dev" \
					"$role" "$n" "$fn" "$calls" "$per"
			done >>"$out/calls.tsv"
	done
}

in_guest() {
	local port=31000 spec dev addr tr tree label n
	out=$1
	: >"$out/callgrind.tsv"
	: >"$out/calls.tsv"
	for spec in $MSGA_VM_DEVICES; do
		IFS=: read -r dev addr tr <<<"$spec"
		for label in current ${baseline:+baseline} \
			${CG_NO_STATS:+nostats}; do
			tree=$builddir
			[ "$label" = baseline ] && tree=$baseline
			for n in "$N1" "$N2"; do
				port=$((port + 3))
				one_run "$tree" "$label" "$dev" "$addr" "$n" $port
			done
		done
	done
}

if [ "${1:-}" = --in-guest ]; then
	in_guest "$2"
	sleep 1 # (a guest command that exits right after writing can lose it)
	exit 0
fi

out=$(bench_outdir "${1:-}") || exit 1
for t in "$builddir" $baseline; do
	[ -x "$t/bench/.libs/msga_feed" ] && [ -e "$t/lib/.libs/libmsgaccel.so" ] ||
		{ echo "callgrind_pingpong: no built tree (bench/.libs/msga_feed, lib/.libs/libmsgaccel.so) at $t" >&2; exit 2; }
done
[ -z "$baseline" ] || baseline=$(cd "$baseline" && pwd)
command -v valgrind >/dev/null || { echo "callgrind_pingpong: valgrind is needed" >&2; exit 1; }
MSGA_VM_RODIRS="${MSGA_VM_RODIRS:-} $baseline" bench_in_vm callgrind_pingpong \
	"$out" 3000 "$here/callgrind_pingpong.sh" \
	MSGA_VM_DEVICES="${MSGA_CG_DEVICES:-rxe0:198.18.0.1:RoCE}" \
	N1="$N1" N2="$N2" CG_FUNCS="$CG_FUNCS" MSGA_ROUNDS_BASELINE="$baseline" \
	CG_NO_STATS="${CG_NO_STATS:-}"

# per tree, device and role: (Ir(N2) - Ir(N1)) / (N2 - N1)
echo "tree	device	role	lib instructions per round trip (spin and ticks in it)"
bench_cg_per_trip "$out/callgrind.tsv" "$N1" "$N2"
echo
echo "per call, the N2 run (inclusive Ir: library, provider and, for a"
echo "delivery, the program's callback; exact, no spin in it):"
awk -F'\t' -v n2="$N2" '$4 == n2 && $6 > 0 {
	printf "%s\t%s\t%s\t%s\tcalls %s\tIr/call %s\n", $1, $2, $3, $5, $6, $7
}' "$out/calls.tsv" | sort
