#!/bin/bash
# SPDX-License-Identifier: MIT
# abi-check.sh BASELINE.abi LIB.so HEADERS_DIR
#     compare LIB.so's ABI, as the public headers in HEADERS_DIR show it,
#     with the committed dump BASELINE.abi (libabigail's abidw/abidiff);
# abi-check.sh --update BASELINE.abi LIB.so HEADERS_DIR
#     write that dump (at a release: README, "Releasing / ABI").
# Allowed, and passing:
#   - symbols added in a version node (stanza of lib/libmsgaccel.map) that
#     the baseline does not have;
#   - data members appended at the end of a size-first struct (a struct of
#     HEADERS_DIR whose first member is `size`), which grows it;
#   - an enumerator added (a new flag or event type: abidiff counts it
#     harmless, and callers that do not know it never pass it).
# Anything else fails with abidiff's report: a soname other than the
# baseline's (a soname bump starts a new baseline, README "Releasing /
# ABI"); a symbol removed, or added to a released version node; a function's parameters or return changed;
# a struct member retyped, moved or removed, a member inserted before the
# end or into a struct that is not size-first; an enumerator changed.
# libabigail 2.2's "has_data_member_inserted_at = end" suppression also
# hides a retyped member, so a second abidiff pass without it must show
# no data member change or deletion at all.
# Env: ABIDW, ABIDIFF (default: from PATH). Exit 0 pass, 1 fail, 2 usage.
set -euo pipefail
ABIDW=${ABIDW:-abidw}
ABIDIFF=${ABIDIFF:-abidiff}
update=no
if [ "${1:-}" = --update ]; then
	update=yes
	shift
fi
[ $# = 3 ] || { sed -n '3,7p' "$0" >&2; exit 2; }
baseline=$1 lib=$2 hdrs=$3
[ -f "$lib" ] || { echo "abi-check: no library $lib" >&2; exit 2; }
[ -d "$hdrs" ] || { echo "abi-check: no header folder $hdrs" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The dump leaves out paths and source locations, so that the same ABI
# gives the same file from any build tree or header edit.
dump() { # dump LIB OUT
	"$ABIDW" --headers-dir "$hdrs" --drop-private-types --no-corpus-path \
		--no-comp-dir-path --no-show-locs --type-id-style hash \
		--out-file "$2" "$1"
}

if [ $update = yes ]; then
	dump "$lib" "$baseline"
	echo "abi-check: wrote $baseline from $lib"
	exit 0
fi
[ -f "$baseline" ] || { echo "abi-check: no baseline $baseline" >&2; exit 2; }
dump "$lib" "$tmp/new.abi"

soname_of() { grep -o -m1 "soname='[^']*'" "$1" | sed "s/soname='\(.*\)'/\1/"; }
old_soname=$(soname_of "$baseline")
new_soname=$(soname_of "$tmp/new.abi")
if [ "$old_soname" != "$new_soname" ]; then
	echo "abi-check: FAIL: $lib is $new_soname, the baseline $baseline is $old_soname (a soname bump needs its own baseline: make abi-dump)"
	exit 1
fi

# struct NAME { on one line, `TYPE size;` on the next.
size_first_structs() {
	awk '/^struct [A-Za-z_0-9]+ \{/ { name = $2; getline;
		if ($0 ~ /^[ \t]+[A-Za-z_0-9 ]+[ \t]size;/) print name }' \
		"$hdrs"/*.h | sort -u
}

suppr=$tmp/size-first.suppr
for s in $(size_first_structs); do
	printf '[suppress_type]\n  name = %s\n  type_kind = struct\n  has_data_member_inserted_at = end\n\n' "$s"
done >"$suppr"

symbols() { # NAME@VERSION per exported symbol of an abixml dump
	grep -o "<elf-symbol name='[^']*' version='[^']*'" "$1" |
		sed "s/<elf-symbol name='\([^']*\)' version='\([^']*\)'/\1@\2/" |
		sort -u
}

fail=0
symbols "$baseline" >"$tmp/old.syms"
symbols "$tmp/new.abi" >"$tmp/new.syms"
sed 's/.*@//' "$tmp/old.syms" | sort -u >"$tmp/old.versions"
while read -r sym; do
	ver=${sym#*@}
	if [ -z "$ver" ] || grep -qxF "$ver" "$tmp/old.versions"; then
		echo "abi-check: FAIL: $sym is new in a released version node (a new symbol needs a new stanza)"
		fail=1
	else
		echo "abi-check: added $sym (new version node: allowed)"
	fi
done < <(comm -13 "$tmp/old.syms" "$tmp/new.syms")

set +e
"$ABIDIFF" --no-added-syms --suppressions "$suppr" "$baseline" \
	"$tmp/new.abi" >"$tmp/report" 2>&1
rc=$?
"$ABIDIFF" --no-added-syms "$baseline" "$tmp/new.abi" >"$tmp/full" 2>&1
set -e
if [ $rc != 0 ]; then
	echo "abi-check: FAIL: abidiff (exit $rc) reports changes that are not allowed:"
	cat "$tmp/report"
	fail=1
elif grep -qE 'data member (change|deletion)' "$tmp/full"; then
	echo "abi-check: FAIL: a size-first struct's members changed (not only appended):"
	cat "$tmp/full"
	fail=1
elif [ -s "$tmp/full" ] && grep -q '^  \[C\]' "$tmp/full"; then
	echo "abi-check: allowed changes (members appended to size-first structs):"
	grep -E "type size changed|data member insertion|^ +'.*', at offset" \
		"$tmp/full" | sed 's/^ */    /' | sort -u
fi
[ $fail = 0 ] || exit 1
echo "abi-check: PASS: $lib against $baseline ($(wc -l <"$tmp/new.syms") symbols; size-first: $(size_first_structs | tr '\n' ' '))"
