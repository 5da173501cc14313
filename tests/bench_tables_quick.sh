#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_tables_quick.sh [OUTDIR] - issue 38's three table scripts end to
# end on their short setting (QUICK=1), each in its own boot of the test
# VM: bench/scripts/size_table.sh, mcast_rate_table.sh --rc with
# RATE_SIZES="64 800", fixed_rate_table.sh. Fails when a script fails or
# leaves out its markdown table, its JSON (with at least one figure) or,
# with gnuplot there, its chart. Not in `make check` (three VM boots, 10+
# minutes under TCG): run it by hand after changing a script, from a
# plain build tree (MSGA_BUILDDIR, default the current directory), through
# /work/vmslot where the machine is shared. OUTDIR: default a new
# temporary directory, kept.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export MSGA_BUILDDIR=${MSGA_BUILDDIR:-$PWD} QUICK=1
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/bench_tables.XXXXXX")}
fail=0

# check NAME DIR FILE-STEM JQ-TEST PNG...: the script's outputs are there.
check() {
	local name=$1 dir=$2 stem=$3 test=$4 png
	shift 4
	[ -s "$dir/$stem.md" ] || { echo "FAIL $name: no $stem.md"; fail=1; return; }
	jq -e "$test" "$dir/$stem.json" >/dev/null ||
		{ echo "FAIL $name: $stem.json has no figure"; fail=1; return; }
	if command -v gnuplot >/dev/null; then
		for png in "$@"; do
			[ -s "$dir/$png" ] || { echo "FAIL $name: no $png"; fail=1; return; }
		done
	fi
	echo "PASS $name"
}

run() { # name script args...
	local name=$1 script=$2
	shift 2
	mkdir -p "$out/$name"
	bash "$src/bench/scripts/$script" "$@" "$out/$name" \
		>"$out/$name.log" 2>&1 ||
		{ echo "FAIL $name: $script exited $? (see $out/$name.log)"; fail=1; return 1; }
}

run size size_table.sh &&
	check size "$out/size" size_table \
		'[.rows[] | select(.median_us != null)] | length > 0' size_table.png
RATE_SIZES="64 800" run rate mcast_rate_table.sh --rc &&
	check rate "$out/rate" rate_table \
		'(.runs | length) == 4 and ([.runs[] | .max_rate_ok != null] | all)' \
		feed-rc-64.png feed-mcast-800.png
run fixed fixed_rate_table.sh &&
	check fixed "$out/fixed" fixed_rate_table \
		'[.rows[] | select(.median_us != null)] | length > 0' \
		fixed_rate_table.png
echo "bench_tables_quick: outputs in $out"
exit $fail
