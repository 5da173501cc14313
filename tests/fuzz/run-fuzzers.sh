#!/bin/sh
# SPDX-License-Identifier: MIT
# Run libFuzzer harnesses, each for FUZZ_TIME seconds (default 60) over a
# copy of its seed corpus, and say per harness what it did. Fails when any
# harness crashed, hit a sanitizer report or an invariant (tests/fuzz/
# fuzz.h), leaving the input that did it under tests/fuzz/run/<name>/.
#   run-fuzzers.sh CORPUS_ROOT BIN_DIR NAME...
# `make fuzz` calls it after building tests/fuzz/fuzz_<name>.
# FUZZ_JOBS harnesses run at once (default: the CPUs online): each is one
# process on one core for its FUZZ_TIME, so N at once give each the same
# fuzzing as one after another, in 1/N of the time.
set -u
corpus_root=$1
bin_dir=$2
shift 2
time=${FUZZ_TIME:-60}
jobs=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
failed=""

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

# One harness: its verdict in tests/fuzz/run/<name>/verdict, its first
# line "ok" or "FAIL".
fuzz_one() {
	name=$1
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
		{
			echo "FAIL"
			echo "fuzz: $name: FAIL (rc $rc) after ${execs:-?} execs"
			grep -E 'invariant failed|ERROR:|runtime error:|SUMMARY|Test unit written' \
				"$run/fuzz.log" | head -n 20
		} >"$run/verdict"
	else
		{
			echo "ok"
			echo "fuzz: $name: ok, ${execs:-?} execs in ${time} s, ${cov:-no stats} (from $seeds seeds)"
		} >"$run/verdict"
	fi
}

# Batches of $jobs (the harnesses all run FUZZ_TIME, so batches keep the
# cores busy), then the verdicts in the order given.
batch=0
for name in "$@"; do
	fuzz_one "$name" &
	batch=$((batch + 1))
	if [ $batch -ge "$jobs" ]; then
		wait
		batch=0
	fi
done
wait
for name in "$@"; do
	v="tests/fuzz/run/$name/verdict"
	if [ ! -f "$v" ]; then
		echo "fuzz: $name: FAIL (no verdict: the run did not finish)"
		failed="$failed $name"
		continue
	fi
	sed -n '2,$p' "$v"
	[ "$(head -n 1 "$v")" = ok ] || failed="$failed $name"
done
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed (logs and inputs in tests/fuzz/run/)"
	exit 1
fi
echo "fuzz: all $# harnesses ran ${time} s each without a finding ($jobs at a time)"
