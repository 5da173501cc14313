#!/bin/bash
# SPDX-License-Identifier: MIT
# icount_budget.sh [OUTDIR] - the library's own instructions per message,
# per path and per side, exact (issue 39). In ONE VM boot, for each case
# of ICOUNT_CASES, bench/msga_icount runs under valgrind's callgrind (both
# of its processes traced). Each side dumps an "idle" phase (IDLE polls of
# its connected context, nothing to do) and a "traffic" phase (N messages
# one way, or N round trips) and prints how many of its traffic polls
# found nothing.
#
# Callgrind splits every function's cost by its callers
# (--separate-callers), so the engine's tick (tick_clock, poll_cm,
# run_timers in lib/core/engine.c: keepalives, liveness, heartbeats,
# rdma_cm) and all it calls are told apart from the rest, exactly.
# Callgrind slows time some fifty-fold, so under it every poll ticks; on a
# real host one in up to 64 does, about once a millisecond: the tick is
# time-driven work, reported apart. Then, per side and per shared object,
#
#     per message = (Ir(traffic) - empty polls x Ir(idle) / IDLE) / N
#
# with the tick left out of every term, so a busy poll's spin while the
# peer works is taken out too; the cost of a poll that finds nothing is
# Ir(idle) / IDLE, and the tick's per idle poll and per second of the
# idle phase. Objects: libmsgaccel (the library's own), the verbs
# provider (librxe/libsiw), libibverbs, librdmacm, libsodium, libc, the
# program. The case "write" is the bare-verbs yardstick: an RDMA WRITE
# ping-pong (what the ring rides on) in the same harness, no library in it.
#
# ICOUNT_CASES: "PATH:MODE[:mac] ..." (PATH ring sendrecv ud mcast rmcast
#   write; MODE stream or pingpong); default: every path both ways, the
#   UD paths with MACs too, and write:pingpong.
# N (1000), IDLE (3000), MSGA_ICOUNT_DEVICE ("dev:addr", default
#   rxe0:198.18.0.1); MSGA_BUILDDIR: a plain build (no sanitizers).
# Writes OUTDIR/icount.tsv (every case, side and object), icount.json and
# icount.md (the table), and each run's raw callgrind files under
# OUTDIR/ic-CASE/. Prints the table.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
N=${N:-1000}
IDLE=${IDLE:-3000}
ICOUNT_CASES=${ICOUNT_CASES:-ring:stream ring:pingpong sendrecv:stream
	sendrecv:pingpong ud:stream ud:pingpong mcast:stream mcast:pingpong
	rmcast:stream rmcast:pingpong ud:stream:mac mcast:stream:mac
	rmcast:stream:mac write:pingpong}

# ------------------------------------------------------------ in the guest
in_guest() {
	local out=$1 port=18700 grp=40 c p m mac d args
	IFS=: read -r dev addr <<<"${MSGA_ICOUNT_DEVICE:-rxe0:198.18.0.1}"
	for c in $ICOUNT_CASES; do
		IFS=: read -r p m mac <<<"$c"
		port=$((port + 2))
		grp=$((grp + 2))
		d=$out/ic-$p-$m${mac:+-mac}
		rm -rf "$d" && mkdir -p "$d"
		args=(--path "$p" -n "$N" --idle "$IDLE" -p "$port" -d "$dev"
		      -g "239.1.18.$grp")
		[ "$m" = pingpong ] && args+=(--pingpong)
		[ -n "$mac" ] && args+=(--mac)
		echo "icount: $c" >&2
		LD_LIBRARY_PATH="$builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
			timeout 900 valgrind --tool=callgrind \
			--trace-children=yes --separate-callers=16 \
			--callgrind-out-file="$d/cg.%p" \
			"$builddir/bench/.libs/msga_icount" "${args[@]}" "$addr" \
			>"$d/stdout" 2>"$d/stderr" ||
			echo "icount: $c failed (see $d)" >&2
	done
}

bench_start icount_budget "$builddir/bench/.libs/msga_icount" "$@"
grep -q '^#define HAVE_VALGRIND_CALLGRIND_H 1' "$builddir/config.h" ||
	{ echo "icount_budget: $builddir was configured without valgrind/callgrind.h (apt-get install valgrind)" >&2; exit 2; }
command -v valgrind >/dev/null ||
	{ echo "icount_budget: valgrind is needed" >&2; exit 2; }
bench_in_vm icount_budget "$out" 5400 "$here/icount_budget.sh" \
	N="$N" IDLE="$IDLE" ICOUNT_CASES="$ICOUNT_CASES" \
	MSGA_ICOUNT_DEVICE="${MSGA_ICOUNT_DEVICE:-}"
python3 "$here/icount_table.py" "$out" "${MSGA_ICOUNT_DEVICE:-rxe0:198.18.0.1}"
