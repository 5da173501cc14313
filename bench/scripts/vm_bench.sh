# SPDX-License-Identifier: MIT
# vm_bench.sh - sourced by the bench drivers that run themselves in ONE
# boot of the test VM (recovery_rounds.sh, loss_bench.sh): the build tree,
# the output directory and the boot, the same for each. Not run by itself.
# Sets builddir (MSGA_BUILDDIR, default the current directory).
bench_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
builddir=$(cd "${MSGA_BUILDDIR:-$PWD}" && pwd)

# bench_outdir DIR: DIR (default ./bench-results) made, as an absolute path.
bench_outdir() {
	local d=${1:-$PWD/bench-results}
	mkdir -p "$d" && (cd "$d" && pwd)
}

# bench_in_vm NAME OUT LIMIT SCRIPT [VAR=VALUE...]: boot the VM (for at
# most LIMIT seconds) and run `bash SCRIPT --in-guest OUT` in it with
# MSGA_BUILDDIR and the VAR=VALUEs in its environment; OUT is shared
# read-write. The build tree is shared read-only too, since the guest
# masks /var/tmp and the like (tests/vm/guest-shares.sh). Exits, naming
# NAME, if the run failed. BENCH_REPORT_ONLY=1: no boot, the script
# redraws its tables from what OUT already holds.
bench_in_vm() {
	local name=$1 out=$2 limit=$3 script=$4
	shift 4
	[ "${BENCH_REPORT_ONLY:-0}" = 1 ] && return 0
	MSGA_VM_RWDIRS="--rwdir $out" MSGA_VM_TIMEOUT=$limit \
		MSGA_VM_RODIRS="${MSGA_VM_RODIRS:-} $builddir" \
		"$bench_src/tests/vm/vm-run.sh" "$out/vm" env \
		MSGA_BUILDDIR="$builddir" "$@" \
		bash "$script" --in-guest "$out" ||
		{ echo "$name: the VM run failed" >&2; exit 1; }
}

# bench_start NAME PROGRAM ARGS...: the drivers' entry, with their own
# arguments. In the guest (--in-guest OUT) run the script's in_guest OUT,
# then exit; on the host check that PROGRAM is built and jq is there, and
# set out to the output directory (the first argument).
bench_start() {
	local name=$1 prog=$2
	shift 2
	if [ "${1:-}" = --in-guest ]; then
		in_guest "$2"
		sleep 1 # (a guest command that exits right after writing can lose it)
		exit 0
	fi
	out=$(bench_outdir "${1:-}") || exit 1
	[ -x "$prog" ] || { echo "$name: build first: no $prog" >&2; exit 1; }
	command -v jq >/dev/null || { echo "$name: jq is needed" >&2; exit 1; }
}

# jq definitions the drivers' summaries share: the median of an array
# (null when empty) and a number rounded to 3 decimals (null stays null).
# Use as jq "$bench_jq_defs"'...program...'.
bench_jq_defs='
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def r3: if . == null then null else (. * 1000 | round / 1000) end;'

# bench_pair_json A B TSV ROUNDS ITERS: the JSON summary of a TSV of
# "round<TAB>mode<TAB>median_us<TAB>p99_us" lines (NA: the run failed),
# modes A and B alternating in each round: the medians over the rounds of
# each one's median and p99 RTT/2, the ratio of those medians (B / A), and
# the median of the per-round ratios. Rounds missing either mode are left
# out; none left is an error.
bench_pair_json() {
	jq -R -s --arg a "$1" --arg b "$2" --argjson rounds "$4" \
		--argjson iters "$5" "$bench_jq_defs"'
  [split("\n")[] | select(length > 0) | split("\t")
   | select(.[2] != "NA")
   | {round: (.[0] | tonumber), mode: .[1], med: (.[2] | tonumber),
      p99: (.[3] | tonumber)}]
  | [group_by(.round)[] | map({key: .mode, value: {med, p99}})
     | from_entries | select(.[$a] and .[$b])] as $ok
  | if ($ok | length) == 0 then error("no round where both modes ran")
    else . end
  | {rounds_run: $rounds, rounds: ($ok | length), iters: $iters,
     size_bytes: 64, device: "rxe0", date: (now | todate),
     median_us: {($a): ($ok | map(.[$a].med) | median | r3),
                 ($b): ($ok | map(.[$b].med) | median | r3)},
     p99_us: {($a): ($ok | map(.[$a].p99) | median | r3),
              ($b): ($ok | map(.[$b].p99) | median | r3)},
     ratio_of_medians: {
       median: (($ok | map(.[$b].med) | median) /
                ($ok | map(.[$a].med) | median) | r3),
       p99: (($ok | map(.[$b].p99) | median) /
             ($ok | map(.[$a].p99) | median) | r3)},
     median_of_ratios: {
       median: ($ok | map(.[$b].med / .[$a].med) | median | r3),
       p99: ($ok | map(.[$b].p99 / .[$a].p99) | median | r3)}}' "$3"
}

# bench_cg_per_trip TSV N1 N2: from callgrind_pingpong.sh's callgrind.tsv
# (tree, device, role, iters, Ir), per tree, device and role the
# instructions per round trip, (Ir(N2) - Ir(N1)) / (N2 - N1): set-up and
# teardown cancel.
bench_cg_per_trip() {
	awk -F'\t' -v n1="$2" -v n2="$3" '
		{ ir[$1 "\t" $2 "\t" $3, $4] = $5; key[$1 "\t" $2 "\t" $3] = 1 }
		END {
			for (k in key)
				if ((k, n1) in ir && (k, n2) in ir)
					printf "%s\t%.1f\n", k,
					       (ir[k, n2] - ir[k, n1]) / (n2 - n1)
		}' "$1" | sort
}

# The one-run latency probes the table scripts share (size_table.sh,
# fixed_rate_table.sh), in the guest. Each prints one line, "MEDIAN P99
# NOTE": RTT/2 in us, or "NA NA" and the tool's error (from ERRFILE,
# removed after: its last line that says invalid, error or fail, else its
# last line; a refusal is followed by a usage text) when the run failed
# or gave no figure.
bench_na() { # errfile what
	local why
	why=$({ grep -iE 'invalid|error|fail' "$1" ||
		grep -v '^\s*$' "$1"; } 2>/dev/null | tail -n 1 |
		tr -s '\t ' ' ' | cut -c1-120)
	echo "NA NA ${why:-$2 gave no figure}"
}

# msga_feed --pingpong (a publisher and its forked reflecting subscriber;
# it takes PORT and PORT + 1), ARGS ending in the address.
bench_feed_pingpong() { # errfile port args...
	local err=$1 port=$2 j v
	shift 2
	j=$err.json
	v=$(timeout 300 "$builddir/bench/msga_feed" --pingpong -p "$port" \
		--json "$j" "$@" >/dev/null 2>"$err" &&
		jq -r '"\(.t_median_us) \(.p99_us)"' "$j" 2>/dev/null)
	[ -n "$v" ] && echo "$v" || bench_na "$err" msga_feed
	rm -f "$j" "$err"
}

# rdma_lat, our RDMA WRITE ping-pong: a server bound to ADDR for one run,
# the client with --json; ARGS go to both.
bench_rdma_lat() { # errfile port addr args...
	local err=$1 port=$2 a=$3 v
	shift 3
	timeout 300 "$builddir/bench/rdma_lat" -B "$a" -p "$port" --once \
		"$@" >/dev/null 2>"$err" &
	sleep 1
	v=$(timeout 300 "$builddir/bench/rdma_lat" -p "$port" --json "$@" \
		"$a" 2>>"$err" |
		jq -r '.results[0] | "\(.t_median_us) \(.p99_us)"' 2>/dev/null)
	wait
	[ -n "$v" ] && [ "${v%% *}" != null ] && echo "$v" ||
		bench_na "$err" rdma_lat
	rm -f "$err"
}

# sockperf MODE (ping-pong, or under-load with --mps RATE) over kernel UDP
# against a sockperf server on ADDR; its percentiles are already RTT/2.
# NOTE: "sent=R dropped=D", the rate it sent at over the whole run (msg/s)
# and the replies it counted as dropped.
bench_sockperf() { # errfile port addr mode args...
	local err=$1 sport=$((10000 + $2 % 50000)) a=$3 mode=$4 spid v
	shift 4
	timeout 300 sockperf server -i "$a" -p "$sport" >/dev/null 2>&1 &
	spid=$!
	sleep 1
	v=$(timeout 300 sockperf "$mode" -i "$a" -p "$sport" "$@" 2>&1 |
		tee "$err" | awk '/percentile 50.000 =/ { m = $NF }
			/percentile 99.000 =/ { p = $NF }
			/\[Total Run\]/ { for (i = 1; i <= NF; i++) {
				if ($i ~ /^RunTime=/) t = substr($i, 9) + 0
				if ($i ~ /^SentMessages=/) n = substr($i, 14) + 0 } }
			/# dropped messages =/ { for (i = 1; i <= NF; i++)
				if ($i == "=") { d = $(i + 1) + 0; break } }
			END { if (m != "" && p != "")
				printf "%s %s sent=%d dropped=%d\n", m, p,
				       (t > 0 ? n / t : 0), d }')
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ -n "$v" ] && echo "$v" || bench_na "$err" sockperf
	rm -f "$err"
}

# bench_rate_reached RATE: bench_sockperf's under-load line on stdin, its
# NOTE made "ok" when sockperf sent at 95 % of RATE or more and lost no
# reply, else "failure: ..." (sockperf has no failure event of its own:
# under TCG it falls short of the rate asked for and says nothing).
bench_rate_reached() {
	local med p99 rest sent dropped
	read -r med p99 rest
	if [ -z "$med" ] || [ "$med" = NA ]; then
		echo "NA NA ${rest:-no figure}"
		return
	fi
	read -r sent dropped <<<"$rest"
	sent=${sent#sent=} dropped=${dropped#dropped=}
	if [ "$((sent * 100))" -lt "$(($1 * 95))" ]; then
		echo "$med $p99 failure: sent $sent msg/s of $1"
	elif [ "$dropped" != 0 ]; then
		echo "$med $p99 failure: $dropped replies dropped"
	else
		echo "$med $p99 ok"
	fi
}

# msga_feed at one fixed rate (a single step: --base = --max-rate = RATE)
# for SEC seconds: "MEDIAN P99 NOTE" of SendToReceive, NOTE "ok" or
# "failure: REASON" (a lost or late message, or a producer behind its
# schedule; "NA NA failure: in the warm-up ..." when that happened in
# msga_feed's warm-up, at the same rate, so that no step ran), or
# "NA NA ..." when the run gave no step.
bench_feed_rate() { # errfile port rate sec args... (ending in the address)
	local err=$1 port=$2 rate=$3 sec=$4 j v
	shift 4
	j=$err.json
	timeout $((sec * 3 + 120)) "$builddir/bench/msga_feed" -p "$port" \
		--base "$rate" --step "$rate" --max-rate "$rate" \
		--duration "$sec" --json "$j" "$@" >/dev/null 2>"$err"
	# (a warm-up that failed ran no step: the rate failed before it)
	v=$(jq -r 'if (.steps | length) == 0 and .warmup.failure then
		"NA NA failure: in the warm-up at \(.warmup.rate) msg/s: \(.warmup.failure)"
	    else .steps[0] | "\(.send_to_receive.median_us) \(.send_to_receive.p99_us) \(if .failure then "failure: \(.failure)" else "ok" end)" end' \
		"$j" 2>/dev/null)
	[ -n "$v" ] && [ "${v%% *}" != null ] && echo "$v" ||
		bench_na "$err" msga_feed
	rm -f "$j" "$err"
}

# bench_rows NAME TSV PORT STOP OUTERS INNERS: in the guest, for each A of
# OUTERS and B of INNERS, the script's `one A B PORT` (a probe above, PORT
# 3 more each time), appended to TSV as "A<TAB>B<TAB>MEDIAN<TAB>P99<TAB>
# NOTE". STOP=1: the inner loop stops at the first NOTE that is not "ok"
# (where the test bed stopped for that A).
bench_rows() {
	local name=$1 tsv=$2 port=$3 stop=$4 outers=$5 inners=$6 a b v med p99 note
	: >"$tsv"
	for a in $outers; do
		for b in $inners; do
			port=$((port + 3))
			v=$(one "$a" "$b" $port)
			echo "$name: $a $b: $v" >&2
			read -r med p99 note <<<"$v"
			printf '%s\t%s\t%s\t%s\t%s\n' "$a" "$b" "$med" "$p99" \
				"$note" >>"$tsv"
			[ "$stop" = 1 ] && [ "$note" != ok ] && break
		done
	done
}

# bench_plot_rows JSON X PNG TITLE XLABEL LOGSCALE TOOLS...: with gnuplot
# there, chart the .rows[] of a table script's JSON ({X, tool, median_us,
# p99_us}): per tool its median (line) and p99 (points) against X; tools
# without a figure are left out. LOGSCALE: the gnuplot axes, "xy" or "y".
bench_plot_rows() {
	local json=$1 x=$2 png=$3 title=$4 xlabel=$5 log=$6 t plotted= dir
	shift 6
	command -v gnuplot >/dev/null || return 0
	dir=$(mktemp -d)
	for t in "$@"; do
		jq -r --arg t "$t" --arg x "$x" '.rows[]
		  | select(.tool == $t and .median_us != null)
		  | [.[$x], .median_us, .p99_us] | @tsv' "$json" >"$dir/$t.tsv"
		[ -s "$dir/$t.tsv" ] && plotted="$plotted $t"
	done
	[ -z "$plotted" ] || gnuplot <<GP
set terminal pngcairo size 1150,600 noenhanced
set output "$png"
set title "$title"
set grid
set logscale $log
set xlabel "$xlabel"
set ylabel "RTT/2 [us]"
set key outside right top
p = "$plotted"
plot for [i = 1:words(p)] "$dir/".word(p, i).".tsv" using 1:2 with linespoints lc i pt 7 title word(p, i)." median", \
     for [i = 1:words(p)] "$dir/".word(p, i).".tsv" using 1:3 with points lc i pt 6 title word(p, i)." p99"
GP
	rm -rf "$dir"
}
