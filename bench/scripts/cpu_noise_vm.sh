#!/bin/bash
# SPDX-License-Identifier: MIT
# cpu_noise_vm.sh [OUTDIR] - msga_cpu(1) against a vCPU made noisy on
# purpose (issue 38): in ONE boot of the test VM (2 vCPUs), ROUNDS (3)
# rounds, each with a thread pinned to vCPU NOISY_CPU that sleeps 50 us
# in a loop (timer interrupts and context switches, as a timer-heavy
# daemon makes), first NOISY_CPU 0 then 1, and per round one
# `msga_cpu -d SEC --json` one CPU after another and one with -a.
# Counts the runs that ranked the other vCPU first (and chose it to poll
# on), and prints each run's stolen share and interrupts per vCPU.
# Under TCG the host deschedules the vCPUs for milliseconds, so every
# vCPU loses 40-80 % of its run whatever runs in it, and the ranking
# rests on the interrupt counts (msga_cpu(1), Ranking); this shows how
# often that holds, it is not a pass/fail test. Writes OUTDIR/runs.jsonl
# and OUTDIR/cpu_noise.md. SEC (2): each run's -d. MSGA_BUILDDIR: the
# build tree, with bench/msga_cpu built.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm_bench.sh"
ROUNDS=${ROUNDS:-3}
SEC=${SEC:-2}
prog=$builddir/bench/msga_cpu

# ------------------------------------------------------------ in the guest
noise_on() { # CPU: a 50 us sleep loop pinned there, in the background
	taskset -c "$1" python3 -c '
import time
while True:
    time.sleep(0.00005)' &
	noise_pid=$!
	sleep 1
}

in_guest() {
	local out=$1 noisy round mode
	: >"$out/runs.jsonl"
	for noisy in 0 1; do
		noise_on "$noisy"
		for round in $(seq "$ROUNDS"); do
			for mode in "" -a; do
				"$prog" -d "$SEC" $mode --json |
					jq -c --argjson noisy "$noisy" \
						'. + {noisy_cpu: $noisy}' \
					>>"$out/runs.jsonl"
			done
		done
		kill "$noise_pid"
		wait "$noise_pid" 2>/dev/null
	done
}

# ------------------------------------------------------------ on the host
# (bench_start: in the guest, in_guest and exit)
bench_start cpu_noise "$prog" "$@"
bench_in_vm cpu_noise "$out" 1800 "$here/cpu_noise_vm.sh" \
	ROUNDS="$ROUNDS" SEC="$SEC"
{
	echo "| noisy vCPU | mode | ranked first | poll | stolen % (vCPU 0 / 1) | interrupts/s (vCPU 0 / 1) |"
	echo "|---|---|---|---|---|---|"
	jq -r '
	  def by($c): .cpus[] | select(.cpu == $c);
	  def rate($c): by($c) | ((.irqs + .softirqs) / (.run_ns / 1e9)
	    | round);
	  [(.noisy_cpu | tostring), .mode, (.cpus[0].cpu | tostring),
	   (.poll | map(tostring) | join(",")),
	   "\(by(0).stolen_share * 100 | round) / \(by(1).stolen_share * 100 | round)",
	   "\(rate(0)) / \(rate(1))"] | "| " + join(" | ") + " |"' \
		"$out/runs.jsonl"
	jq -s -r '"\n\(map(select(.cpus[0].cpu != .noisy_cpu)) | length) of \(length) runs ranked the quiet vCPU first."' \
		"$out/runs.jsonl"
} | tee "$out/cpu_noise.md"
