#!/bin/bash
# SPDX-License-Identifier: MIT
# The whole test suite, from a fresh clone of msgaccel on Debian 12:
#   1. set the machine up (scripts/bootstrap.sh: packages, virtme-ng, siw.ko);
#   2. a -Werror build and its host unit tests;
#   3. `make distcheck`: the release tarball builds, passes its host tests,
#      installs, and a program links through pkg-config (and a libev one
#      through libmsgaccel-ev);
#   3a. the ABI check (`make check-abi`, scripts/abi-check.sh): the plain
#      build's library against the committed dump of the last release
#      (abi/); only symbols in a new version node and members appended to
#      size-first structs may differ (about 3 s);
#   3b. the Debian packages (scripts/package-check.sh): built from a clean
#      export of the tree with dpkg-buildpackage (nocheck: the host tests
#      ran above), lintian clean, unpacked into an empty root where
#      msga_stat --version runs and programs build against
#      libmsgaccel-dev through pkg-config (3 to 4 minutes: 170 to 190 s
#      the build, 30 to 40 s lintian);
#   4. a build under AddressSanitizer + UBSan and `make check`: host unit
#      tests, then every device test inside one VM on soft-RoCE (rxe0) and
#      soft-iWARP (siw0). Any sanitizer report in its output fails the run;
#   5. the host-failure test (tests/vm/two-host.sh): two VMs on one link,
#      the publisher's VM killed, the subscriber must report it;
#   6. reliable multicast between two hosts (tests/vm/two-host-mcast.sh):
#      netem loss on the link, random then in bursts of 50; three
#      subscribers must lose nothing; then the publisher's VM is killed
#      and each must report its streams gone;
#   7. fuzzing: a clang build with --enable-fuzzers, and `make fuzz` runs
#      each libFuzzer harness (tests/fuzz/) for FUZZ_TIME seconds (20 by
#      default here), one per core at once (FUZZ_JOBS). Any crash,
#      sanitizer report or invariant failure fails the run.
# The device tests run once, in the sanitized build, the two devices'
# loops at once in the VM (tests/vm/device-tests.sh): one after the other
# they had grown to about 45 minutes of a 68-minute run. The plain build
# differs only by the instrumentation; no device test asserts a speed
# (their deadlines only catch hangs).
# Build trees go to build-check/, build-sanitizers/, build-fuzz/ and
# build-deb/ (the packages and their root) in the checkout, the sanitizer stage's output to sanitizers.log. Every build's
# `make check` also replays the fuzz harnesses' seed corpora.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)

step() { printf '\n######## [%4d s] %s\n' "$SECONDS" "$*"; }

# Show each host test's own Criterion output (automake keeps it in .log).
show_host_logs() {
	for log in tests/test_*.log tests/fuzz/replay_*.log; do
		[ -f "$log" ] || continue
		echo "---- host: ${log%.log}"
		cat "$log"
	done
}

check_in() { # check_in DIR CONFIGURE-ARGS...
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	(
		cd "$dir"
		../configure -q "$@"
		make -s -j"$jobs"
		if make -s -j"$jobs" check; then
			show_host_logs
		else
			show_host_logs
			exit 1
		fi
	)
}

step "bootstrap"
scripts/bootstrap.sh

step "autogen"
./autogen.sh >/dev/null 2>&1 || ./autogen.sh

step "build with -Werror and run the host tests (device tests: in the sanitizer stage)"
check_in build-check --enable-werror --with-device-tests=no \
	MSGA_NO_DEVICE_TESTS_REASON=they-run-in-the-sanitizer-stage-of-this-run

step "make distcheck (tarball, host tests, install, pkg-config link)"
(cd build-check && make -s distcheck >distcheck.log 2>&1) ||
	{ tail -n 60 build-check/distcheck.log; echo "distcheck failed"; exit 1; }
grep -E '^(PASS|FAIL|ERROR)|check-install|linked libmsgaccel|archives ready' build-check/distcheck.log

step "ABI check against the last release's dump (abi/)"
(cd build-check && make -s check-abi)

step "Debian packages: build, lintian, install into an empty root, use"
scripts/package-check.sh "$top/build-deb"

step "sanitizer build (ASan + UBSan) and make check (host + VM: rxe0, siw0)"
# A Criterion test that leaks still passes (LeakSanitizer reports at exit,
# after the verdict), and a recoverable UBSan finding only prints, so the
# stage's output is kept and any report fails the run.
check_in build-sanitizers --enable-sanitizers --enable-werror 2>&1 |
	tee sanitizers.log
if grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' \
	sanitizers.log; then
	echo "sanitizer reports above: failing the run"
	exit 1
fi

step "test bed: the VM from a checkout under /var/tmp and under /tmp/<dir>"
# Two short boots (tests/vm/check-testbed.sh): the guest masks /var/tmp,
# and the test bed must work from any checkout path.
(cd build-check && make -s check-testbed)

step "host failure: two VMs, the publisher's killed outright (rxe, siw)"
# The plain build: two TCG VMs share the cores, and this checks what the
# subscriber reports, not how fast. Its guests' output is in
# build-check/tests/two-host/.
(cd build-check && make -s check-two-host)

step "reliable multicast between two VMs: netem loss, bursts, the publisher's VM killed (rxe)"
# The plain build, as above; 4 to 5 minutes under TCG, most of it two
# boots and 100 000 messages at a pace B's three subscribers keep up
# with. Its guests' output is in build-check/tests/two-host-mcast/.
(cd build-check && make -s check-two-host-mcast)

step "fuzzing: each harness for ${FUZZ_TIME:-20} s (clang, libFuzzer + ASan + UBSan)"
# Each harness's findings (the crashing input, its log) stay in
# build-fuzz/tests/fuzz/run/<name>/.
rm -rf build-fuzz
mkdir -p build-fuzz
(cd build-fuzz && ../configure -q CC=clang CXX=clang++ --enable-fuzzers \
		--enable-werror &&
	make -s fuzz FUZZ_TIME="${FUZZ_TIME:-20}")

step "all test stages passed"
