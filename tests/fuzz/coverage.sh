#!/bin/sh
# SPDX-License-Identifier: MIT
# Line coverage of the library by the fuzz harnesses' corpora: builds each
# harness with clang's source-based coverage, replays its corpus, and
# prints per harness and per function the lines covered in the library
# files it feeds, then the library files over all harnesses. Issue 23's bar
# is full line coverage of each decoder.
#   coverage.sh SRCDIR OUTDIR NAME=[-DFLAG:]...SOURCE[:SOURCE]...
# (`make fuzz-coverage` passes them). CLANG, LLVM_PROFDATA and LLVM_COV
# name the tools (default clang, llvm-profdata-14, llvm-cov-14).
set -eu
srcdir=$1
out=$2
shift 2
cc=${CLANG:-clang}
profdata=${LLVM_PROFDATA:-llvm-profdata-14}
cov=${LLVM_COV:-llvm-cov-14}
command -v "$profdata" >/dev/null || profdata=llvm-profdata
command -v "$cov" >/dev/null || cov=llvm-cov

mkdir -p "$out"
objects=""
libs=""
for spec in "$@"; do
	name=${spec%%=*}
	# Absolute paths: llvm-cov names files as the compiler saw them.
	srcs=$(echo "${spec#*=}" | tr ':' '\n' | grep -v '^-' | xargs realpath |
		tr '\n' ' ')
	defs=$(echo "${spec#*=}" | tr ':' '\n' | grep '^-' | tr '\n' ' ' || :)
	bin="$out/cov_$name"
	# shellcheck disable=SC2086
	"$cc" -O0 -g -fprofile-instr-generate -fcoverage-mapping $defs \
		-D_GNU_SOURCE -I"$srcdir/include" -I"$srcdir/lib" \
		-I"$srcdir/tests/fuzz" -o "$bin" $srcs \
		"$srcdir/tests/fuzz/replay.c"
	LLVM_PROFILE_FILE="$out/$name.profraw" "$bin" \
		"$srcdir/tests/fuzz/corpus/$name" >/dev/null
	"$profdata" merge -o "$out/$name.profdata" "$out/$name.profraw"
	# The harness's subject: the first library file it is built with.
	mine=$(echo "$srcs" | tr ' ' '\n' | grep -m 1 '/lib/.*\.c$')
	echo "==== $name ($(ls "$srcdir/tests/fuzz/corpus/$name" | wc -l) seeds)"
	# shellcheck disable=SC2086
	"$cov" report -show-functions "$bin" \
		-instr-profile="$out/$name.profdata" $mine | grep -v '^File'
	objects="${objects:+$objects -object }$bin"
	libs="$libs $mine"
done
"$profdata" merge -o "$out/all.profdata" "$out"/*.profraw
libs=$(echo "$libs" | tr ' ' '\n' | sort -u | grep . | tr '\n' ' ')
echo "==== library files, all harnesses"
# shellcheck disable=SC2086
"$cov" report $objects -instr-profile="$out/all.profdata" $libs
