#!/bin/sh
# SPDX-License-Identifier: MIT
# Self-test of scripts/depgraph.py --check (make check-layers): two fixture
# trees (tests/layers/) with the folders of issue 24's layout. good/
# keeps its LAYERS rules and must pass; bad/ has an rc header included by
# core, an include loop and a call loop across core and rc, a call loop
# inside rc (ring.c and owner.c, where LAYERS says "acyclic: rc"), the engine
# calling a transport, and a tool including a private header: the check
# must fail with exactly those violations. The fixtures are compiled with
# $CC so that the call graph is read from real objects (automake's
# <target>-<file>.o names), and checked once more without objects
# (includes only).
# Environment: srcdir, CC, NM, PYTHON3 (make check sets them).
set -u
srcdir=${srcdir:-.}
here=$srcdir/tests/layers
depgraph=$srcdir/scripts/depgraph.py
py=${PYTHON3:-python3}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# compile FIXTURE: each lib file into the library "libfix_la", each bench
# file into its own program, as automake names the objects.
compile() {
	for c in "$here/$1"/lib/*/*.c "$here/$1"/bench/*.c; do
		rel=${c#"$here/$1/"}
		dir=$tmp/$1/$(dirname "$rel")
		name=$(basename "$rel" .c)
		case $rel in
		lib/*) obj=$dir/libfix_la-$name.o ;;
		*) obj=$dir/$name-$name.o ;;
		esac
		mkdir -p "$dir"
		${CC:-cc} -c -I"$here/$1/include" -I"$here/$1/lib/core" \
			-I"$here/$1/lib/proto" -I"$here/$1/lib/rc" \
			-o "$obj" "$c" || return 1
	done
}

# expect NAME STATUS OUTPUT-FILE ARGS...: run the check, compare.
expect() {
	name=$1 want=$2 file=$3
	shift 3
	"$py" "$depgraph" "$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" != "$want" ] || ! diff -u "$file" "$tmp/out"; then
		echo "FAIL: $name: exit $got (want $want)"
		cat "$tmp/out"
		fail=1
	else
		echo "ok: $name"
	fi
}

compile good && compile bad || { echo "FAIL: cannot compile the fixtures"; exit 1; }

echo "layers: 0 violation(s) of $here/good/LAYERS" >"$tmp/good.want"
expect "clean tree passes" 0 "$tmp/good.want" \
	--check "$here/good/LAYERS" "$here/good" "$tmp/good"
expect "clean tree passes, includes only" 0 "$tmp/good.want" \
	--check "$here/good/LAYERS" "$here/good"

cat >"$tmp/bad.want" <<WANT
layers: include edge lib/core/engine.h -> lib/rc/conn.h: core may not reach rc
layers: include loop spans folders core rc: lib/core/engine.h lib/rc/conn.h
layers: call edge lib/core/engine.c -> lib/rc/conn.c: core may not reach rc
layers: call edge lib/core/engine.c -> lib/rc/conn.c: lib/core/engine.c may not reach rc
layers: call loop spans folders core rc: lib/core/engine.c lib/rc/conn.c
layers: call loop inside rc, which must have none: lib/rc/owner.c lib/rc/ring.c
layers: include edge bench/tool.c -> lib/proto/codec.h: bench may not reach proto
layers: 7 violation(s) of $here/bad/LAYERS
WANT
expect "bad tree fails" 1 "$tmp/bad.want" \
	--check "$here/bad/LAYERS" "$here/bad" "$tmp/bad"
grep -v '^layers: call\|violation' "$tmp/bad.want" >"$tmp/bad-inc.want"
echo "layers: 3 violation(s) of $here/bad/LAYERS" >>"$tmp/bad-inc.want"
expect "bad tree fails, includes only" 1 "$tmp/bad-inc.want" \
	--check "$here/bad/LAYERS" "$here/bad"

# Folders without a rule are drawn, not checked: the flat lib/ of today.
printf 'bench: bench include\n' >"$tmp/bench-only"
echo "layers: 1 violation(s) of $tmp/bench-only" >"$tmp/flat.want"
sed -n '/bench\/tool.c/p' "$tmp/bad.want" | cat - "$tmp/flat.want" >"$tmp/flat2.want"
expect "unruled folders are not checked" 1 "$tmp/flat2.want" \
	--check "$tmp/bench-only" "$here/bad" "$tmp/bad"
exit $fail
