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
# NAME, if the run failed.
bench_in_vm() {
	local name=$1 out=$2 limit=$3 script=$4
	shift 4
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
