#!/bin/bash
# SPDX-License-Identifier: MIT
# feed_sched.sh [OUT]: where the CPU goes while msga_feed runs near its
# knee (issue 39 item 5). One VM boot; on rxe0, for each rate in RATES
# (default "10000 15000 20000 25000 30000") and each pinning in PINS
# ("none auto": both sides where the scheduler puts them, or with --pin
# auto), one msga_feed step of DURATION (5) seconds after its
# warm-up, while the guest samples, over the step: each side's run time
# and run-queue wait (/proc/PID/schedstat, all threads), its voluntary and
# involuntary context switches, the CPU time of the soft-interrupt threads
# (ksoftirqd/N) and their run-queue wait, per-CPU user/system/softirq/idle
# (/proc/stat) and the TASKLET and NET_RX soft interrupts (/proc/softirqs).
# Prints one table row per run; writes OUT/sched.tsv and each run's
# feed-*.json. Plain build: MSGA_BUILDDIR (default .).
set -euo pipefail
. "$(dirname "$0")/vm_bench.sh"

# sum of the fields (run_ns wait_ns) over a process's threads
proc_sched() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
		awk '{r += $1; w += $2} END {printf "%.0f %.0f", r, w}'
}
ctxsw() {
	awk '/^voluntary_ctxt/ {v = $2} /^nonvoluntary_ctxt/ {n = $2}
	     END {printf "%d %d", v, n}' /proc/"$1"/status 2>/dev/null || echo "0 0"
}
# ksoftirqd threads: run_ns wait_ns summed
ksoft_sched() {
	for p in $(pgrep ksoftirqd); do cat /proc/"$p"/schedstat; done |
		awk '{r += $1; w += $2} END {printf "%.0f %.0f", r, w}'
}
# jiffies summed over the CPUs: user+nice system softirq idle
cpu_stat() {
	awk '/^cpu / {printf "%d %d %d %d", $2 + $3, $4, $8, $5}' /proc/stat
}
softirqs() {
	awk '/TASKLET|NET_RX/ {s = 0; for (i = 2; i <= NF; i++) s += $i;
	     printf "%d ", s}' /proc/softirqs
}
snap() {
	echo "$(date +%s%N) $(proc_sched "$1") $(ctxsw "$1") $(proc_sched "$2") \
$(ctxsw "$2") $(ksoft_sched) $(cpu_stat) $(softirqs)"
}

in_guest() {
	local out=$1 feed=$MSGA_BUILDDIR/bench/msga_feed addr=198.18.0.1
	local tsv=$out/sched.tsv
	uname -r; nproc
	ps -eo pid,comm | grep -E 'ksoftirqd|rxe' || true
	printf 'pin\trate\tmedian_us\tp99_us\tprod_run%%\tprod_wait%%\tprod_nvcsw\tcons_run%%\tcons_wait%%\tcons_nvcsw\tksoftirqd_run%%\tksoftirqd_wait%%\tuser%%\tsys%%\tsoftirq%%\tidle%%\tnet_rx/s\ttasklet/s\n' >"$tsv"
	for pin in ${PINS:-none auto}; do
		for rate in ${RATES:-10000 15000 20000 25000 30000}; do
			local pa="" j=$out/feed-$pin-$rate.json
			[ "$pin" = auto ] && pa="--pin auto"
			"$feed" $pa --base "$rate" --max-rate "$rate" \
				--duration "${DURATION:-5}" --deadline 5 \
				--json "$j" "$addr" >"$out/feed-$pin-$rate.txt" 2>&1 &
			local fp=$! cp="" a b
			# the step starts after set-up and the 1 s warm-up:
			# wait for the consumer, then 3 s, and sample over
			# the next 2 s of the step's 5
			for _ in $(seq 100); do
				cp=$(pgrep -P "$fp" || true)
				[ -n "$cp" ] && break
				sleep 0.1
			done
			sleep 3
			a=$(snap "$fp" "$cp")
			sleep 2
			b=$(snap "$fp" "$cp")
			# a side gone before the second sample (the step
			# failed early) leaves nothing to compare: NA
			[ -d /proc/"$cp" ] || b=""
			wait "$fp" || echo "feed $pin $rate failed"
			echo "$a" >"$out/snap-$pin-$rate.a"
			echo "$b" >"$out/snap-$pin-$rate.b"
			med=$(jq -r '.steps[-1].supply_to_receive.median_us' "$j" 2>/dev/null || echo NA)
			p99=$(jq -r '.steps[-1].supply_to_receive.p99_us' "$j" 2>/dev/null || echo NA)
			[ -n "$b" ] || { printf '%s\t%s\tNA (the step ended before the second sample)\n' \
				"$pin" "$rate" >>"$tsv"; continue; }
			echo "$a" "$b" | awk -v pin="$pin" -v rate="$rate" \
				-v med="$med" -v p99="$p99" '{
				n = 17; dt = ($(n+1) - $1);
				pr = ($(n+2) - $2) / dt * 100; pw = ($(n+3) - $3) / dt * 100;
				pn = $(n+5) - $5;
				cr = ($(n+6) - $6) / dt * 100; cw = ($(n+7) - $7) / dt * 100;
				cn = $(n+9) - $9;
				kr = ($(n+10) - $10) / dt * 100; kw = ($(n+11) - $11) / dt * 100;
				u = $(n+12) - $12; s = $(n+13) - $13; si = $(n+14) - $14;
				id = $(n+15) - $15; tot = u + s + si + id;
				printf "%s\t%s\t%s\t%s\t%.0f\t%.1f\t%d\t%.0f\t%.1f\t%d\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\n",
				pin, rate, med, p99, pr, pw, pn, cr, cw, cn, kr, kw,
				100*u/tot, 100*s/tot, 100*si/tot, 100*id/tot,
				($(n+16) - $16) / dt * 1e9, ($(n+17) - $17) / dt * 1e9}' >>"$tsv"
		done
	done
	column -t -s "$(printf '\t')" "$tsv"
}

bench_start feed_sched "$builddir/bench/msga_feed" "$@"
bench_in_vm feed_sched "$out" 1500 "$bench_src/bench/scripts/feed_sched.sh" \
	PINS="${PINS:-none auto}" \
	RATES="${RATES:-10000 15000 20000 25000 30000}" DURATION="${DURATION:-5}"
column -t -s "$(printf '\t')" "$out/sched.tsv"
