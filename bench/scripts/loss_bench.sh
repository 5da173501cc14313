#!/bin/bash
# SPDX-License-Identifier: MIT
# loss_bench.sh [OUTDIR] - what loss recovery costs under loss (issue 25's
# benchmarks). In ONE boot of the test VM, on rxe0, a MSGA_PUB_RELIABLE
# publisher and SUBS (3) subscribers, each its own process
# (tests/perf_loss), on one multicast group, the publisher's test-only
# fault hook dropping LOSS_PPM (10000: 1 %) in a million of its data
# datagrams (never a resend):
#  1. at RATE (1000) msg/s for SECS (5) s, three runs: no loss, repair by
#     NAK (MSGA_SUB_REPAIR_BY_NAK), and loss with repair by RDMA READ (the
#     default since 0.7; a build before it reports "READ path not
#     available in this build"). Each gives the delivery latency (commit
#     -> subscriber callback, one clock: one VM), p50 and p99 over all
#     subscribers' messages and over the ones the hook dropped, which
#     arrived through repair (so that is the recovery latency from the
#     miss, at the commit, to the repaired delivery; it includes the wait
#     for the next datagram, which shows the gap); the library's own
#     recovery-latency histogram (first missed -> repaired, bucket bounds)
#     where the build fills it; and the publisher's CPU (getrusage, user +
#     system) per message. The publisher is paced and sleeps between
#     ticks (tests/perf_loss.c says why not callgrind).
#  2. the highest rate sustained with zero unrecovered loss, without loss
#     and at LOSS_PPM: from SEARCH_FROM (500) msg/s doubling until a run
#     fails, then bisecting, SEARCH_STEPS (7) runs of SEARCH_SECS (2) s at
#     most for each. A run passes when the publisher kept 95 % of the rate
#     and every subscriber got every measured number, in order, with no
#     gap and no MSGA_EVENT_LOSS.
# Prints a markdown table; writes OUTDIR/loss.md, OUTDIR/loss.json and,
# per run, OUTDIR/run-NAME/ (each process's JSON line and stderr).
# MSGA_BUILDDIR: the build tree, with tests/perf_loss built (`make
# tests/perf_loss`; make check builds it too).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
SUBS=${SUBS:-3}
RATE=${RATE:-1000}
SECS=${SECS:-5}
LOSS_PPM=${LOSS_PPM:-10000}
SEARCH_FROM=${SEARCH_FROM:-500}
SEARCH_STEPS=${SEARCH_STEPS:-7}
SEARCH_SECS=${SEARCH_SECS:-2}
ADDR=198.18.0.1 # rxe0 in the test VM (tests/vm/env.sh)
perf=$builddir/tests/perf_loss

# ------------------------------------------------------------ in the guest
# run NAME RATE SECS LOSS_PPM REPAIR: one publisher and SUBS subscribers;
# writes run-NAME/summary.json and prints pass, fail or unavailable.
run() {
	local name=$1 rate=$2 secs=$3 ppm=$4 repair=$5 i t
	local d=$out/run-$name limit=$(($3 + 60))
	local group=$(($(cat "$out/groups" 2>/dev/null || echo 0) + 1))
	rm -rf "$d" && mkdir -p "$d"
	# a fresh group each run, 239.255.40.N (runs are in subshells: a file
	# keeps the count)
	echo $group >"$out/groups"
	for ((i = 1; i <= SUBS; i++)); do
		timeout $limit "$perf" sub --uri "mcast://239.255.40.$group" \
			--addr $ADDR --repair "$repair" --ready "$d/ready-$i" \
			--samples "$d/s$i" --timeout $((secs + 45)) \
			>"$d/sub-$i.json" 2>"$d/sub-$i.err" &
	done
	# each subscriber joined (or gave up) before the publisher starts
	for ((t = 0; t < 300; t++)); do
		[ "$(ls "$d"/ready-* 2>/dev/null | wc -l)" -ge "$SUBS" ] && break
		[ "$(jobs -r | wc -l)" -lt "$SUBS" ] && break # one exited
		sleep 0.1
	done
	if grep -qs read-unavailable "$d"/sub-*.json; then
		wait
		echo unavailable
		return
	fi
	timeout $limit "$perf" pub --uri "mcast://239.255.40.$group" \
		--addr $ADDR --rate "$rate" --duration "$secs" \
		--loss-ppm "$ppm" >"$d/pub.json" 2>"$d/pub.err"
	wait
	jq -n --arg name "$name" --argjson rate "$rate" --argjson n "$SUBS" \
		--slurpfile pub "$d/pub.json" \
		--slurpfile subs <(cat "$d"/sub-*.json) \
		--argjson all "$("$perf" pct "$d"/s*.all 2>/dev/null || echo null)" \
		--argjson rec "$("$perf" pct "$d"/s*.rec 2>/dev/null || echo null)" '
	  ($pub[0] // {}) as $p
	  | {name: $name, rate: $rate, subs: ($subs | length), pub: $p,
	     latency: $all.latency, recovered_latency: $rec.latency,
	     unrecovered: ($subs | map(.missing + .lost) | add),
	     lib_recovery_p50_us_le: ($subs | map(.lib.recovery_p50_us_le) | max),
	     lib_recovery_p99_us_le: ($subs | map(.lib.recovery_p99_us_le) | max),
	     reads: ($subs | map(.lib.reads) | add),
	     pass: (($p.achieved_rate // 0) >= 0.95 * $rate
	            and $p.sent == $p.planned and ($subs | length) == $n
	            and ($subs | all(.status == "ok" and .missing == 0
	                 and .lost == 0 and .gaps == 0 and .order_errors == 0
	                 and .bad == 0)))}' >"$d/summary.json" 2>"$d/jq.err" ||
		echo '{"pass":false}' >"$d/summary.json"
	rm -f "$d"/s*.all "$d"/s*.rec
	jq -r 'if .pass then "pass" else "fail" end' "$d/summary.json"
}

# search PPM: the highest passing rate (0: not even SEARCH_FROM) and the
# lowest failing one (0: none found), "LO HI".
search() {
	local ppm=$1 lo=0 hi=0 r=$SEARCH_FROM n v
	for ((n = 0; n < SEARCH_STEPS; n++)); do
		if [ $hi -gt 0 ]; then
			[ $lo -eq 0 ] && break # even the first rate failed
			# bisection stops at 5 %: closer than the runs' noise
			[ $((hi - lo)) -le $((hi / 20)) ] && break
			r=$(((lo + hi) / 2))
		fi
		v=$(run "search-$ppm-$r" $r "$SEARCH_SECS" "$ppm" nak)
		printf '%s\t%s\t%s\n' "$ppm" $r "$v" >>"$out/search.tsv"
		echo "search: loss $ppm ppm, $r msg/s: $v" >&2
		if [ "$v" = pass ]; then
			lo=$r
			[ $hi -eq 0 ] && r=$((r * 2))
		else
			hi=$r
		fi
	done
	echo "$lo $hi"
}

in_guest() {
	local v s0 s1
	out=$1
	: >"$out/search.tsv"
	rm -f "$out/groups"
	for m in "lossless 0 nak" "nak $LOSS_PPM nak" "read $LOSS_PPM read"; do
		set -- $m
		v=$(run "$1" "$RATE" "$SECS" "$2" "$3")
		echo "measure: $1 at $RATE msg/s: $v" >&2
		echo "$v" >"$out/run-$1/verdict"
	done
	s0=$(search 0)
	s1=$(search "$LOSS_PPM")
	jq -n --argjson rate "$RATE" --argjson secs "$SECS" \
		--argjson ppm "$LOSS_PPM" --argjson subs "$SUBS" \
		--arg s0 "$s0" --arg s1 "$s1" \
		--slurpfile lossless "$out/run-lossless/summary.json" \
		--slurpfile nak "$out/run-nak/summary.json" \
		--arg read "$(cat "$out/run-read/verdict")" \
		--slurpfile readrun <(cat "$out/run-read/summary.json" 2>/dev/null) '
	  def pair(a; b): [a, b] | map(tostring) | join(" ");
	  {date: (now | todate), device: "rxe0", rate: $rate, secs: $secs,
	   loss_ppm: $ppm, subs: $subs,
	   runs: {lossless: $lossless[0], nak: $nak[0],
	          read: (if $read == "unavailable" then "READ path not available in this build"
	                 else $readrun[0] end)},
	   max_rate: {lossless: ($s0 | split(" ") | map(tonumber)),
	              loss: ($s1 | split(" ") | map(tonumber))}}' \
		>"$out/loss.json"
}

# ------------------------------------------------------------ on the host
# (bench_start: in the guest, in_guest and exit)
bench_start loss_bench "$perf" "$@"
rm -f "$out/loss.json"
bench_in_vm loss_bench "$out" 1800 "$here/loss_bench.sh" SUBS="$SUBS" \
	RATE="$RATE" SECS="$SECS" LOSS_PPM="$LOSS_PPM" \
	SEARCH_FROM="$SEARCH_FROM" SEARCH_STEPS="$SEARCH_STEPS" \
	SEARCH_SECS="$SEARCH_SECS"
[ -s "$out/loss.json" ] || { echo "loss_bench: no $out/loss.json" >&2; exit 1; }
jq -r '
  def us: if . == null then "-" else tostring end;
  def row($what; $r):
    if ($r | type) == "string" then "| \($what) | \($r) | | | | | |"
    else "| \($what) | \($r.latency.p50_us | us) / \($r.latency.p99_us | us)"
      + " | \($r.recovered_latency.n // 0): \($r.recovered_latency.p50_us | us) / \($r.recovered_latency.p99_us | us)"
      + " | \(if $r.lib_recovery_p50_us_le == null then "not in this build" else "≤ \($r.lib_recovery_p50_us_le) / ≤ \($r.lib_recovery_p99_us_le)" end)"
      + " | \($r.pub.cpu_us_per_msg | us) (\($r.pub.naks_taken // 0) NAKs, \($r.pub.retx_msgs // 0) resent, \($r.pub.dropped // 0) dropped)"
      + " | \($r.pub.achieved_rate // "-")"
      + " | \($r.unrecovered // "-")\(if $r.pass then "" else " (run failed)" end) |" end;
  def rate($p): if $p[0] == 0 then "below the first step"
    else "\($p[0]) msg/s" + (if $p[1] > 0 then " (\($p[1]) failed)" else " (no failure found)" end) end;
  "rxe0, \(.subs) subscribers, \(.rate) msg/s of 64 B for \(.secs) s, \(.loss_ppm / 10000) % injected loss (\(.date)):\n",
  "| run | delivery p50 / p99 µs | recovered (all subscribers): n, p50 / p99 µs | library recovery p50 / p99 µs | publisher CPU µs/msg | rate kept, msg/s | unrecovered |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  row("no loss"; .runs.lossless), row("\(.loss_ppm / 10000) %, NAK"; .runs.nak),
  row("\(.loss_ppm / 10000) %, READ"; .runs.read),
  "\nhighest rate with zero unrecovered loss: no loss \(rate(.max_rate.lossless)); at \(.loss_ppm / 10000) % loss \(rate(.max_rate.loss))"
' "$out/loss.json" | tee "$out/loss.md"
