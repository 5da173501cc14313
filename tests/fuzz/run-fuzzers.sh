#!/bin/sh
# SPDX-License-Identifier: MIT
# Run libFuzzer harnesses, each for FUZZ_TIME seconds (default 60) over a
# copy of its seed corpus, and say per harness what it did. Fails when any
# harness crashed, hit a sanitizer report or an invariant (tests/fuzz/
# fuzz.h), leaving the input that did it under tests/fuzz/run/<name>/.
#   run-fuzzers.sh CORPUS_ROOT BIN_DIR NAME...
# `make fuzz` calls it after building tests/fuzz/fuzz_<name>.
set -u
corpus_root=$1
bin_dir=$2
shift 2
time=${FUZZ_TIME:-60}
failed=""

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

for name in "$@"; do
	run="tests/fuzz/run/$name"
	rm -rf "$run"
	mkdir -p "$run/corpus"
	cp "$corpus_root/$name"/* "$run/corpus/"
	seeds=$(ls "$run/corpus" | wc -l)
	"$bin_dir/fuzz_$name" -max_total_time="$time" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$run/" "$run/corpus" >"$run/fuzz.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/fuzz.log")
	cov=$(grep -E '^#[0-9]+' "$run/fuzz.log" | tail -n 1 |
		sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1, features \2, corpus \3/p')
	if [ $rc -ne 0 ] || grep -qE \
		'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|invariant failed' \
		"$run/fuzz.log"; then
		echo "fuzz: $name: FAIL (rc $rc) after ${execs:-?} execs"
		grep -E 'invariant failed|ERROR:|runtime error:|SUMMARY|Test unit written' \
			"$run/fuzz.log" | head -n 20
		failed="$failed $name"
	else
		echo "fuzz: $name: ok, ${execs:-?} execs in ${time} s, ${cov:-no stats} (from $seeds seeds)"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed (logs and inputs in tests/fuzz/run/)"
	exit 1
fi
echo "fuzz: all $# harnesses ran ${time} s each without a finding"
