#!/bin/sh
# SPDX-License-Identifier: MIT
# check-man-examples.sh [VAR=VALUE...] PAGE...
#
# Compiles and links every example program in the given man pages, so that
# the programs the manual shows cannot rot. An example is marked in the
# troff source by a comment line right before its .EX:
#
#	.\" example: NAME
#	.EX
#	...C source, troff-escaped...
#	.EE
#
# Each block is un-escaped (\e \- \& \. \(aq \(dq \(ga \(ti \(ha \(rs and
# their \[xx] forms), written to NAME.c in a temporary directory under
# $TMPDIR, and built with
#	$CC $CPPFLAGS -I$top_srcdir/include $CFLAGS $EXAMPLE_CFLAGS
#	    NAME.c -L$builddir/lib/.libs -lmsgaccel $LDFLAGS $LIBS
# Any other escape, or a troff request other than a comment inside a block,
# is an error: the rendered page would not show the code that is compiled.
# msgaccel.7 must hold at least one example; other pages may hold none.
#
# CC, CPPFLAGS, CFLAGS, LDFLAGS, LIBS, EXAMPLE_CFLAGS, top_srcdir, builddir
# and outdir come from the environment or from VAR=VALUE arguments. The
# defaults: cc, the directory above this script, the current directory,
# and EXAMPLE_CFLAGS="-Wall -Wextra -Werror" (examples are written to be
# copied, so they must be warning-free). With outdir set, the sources and
# programs go there and are kept (to run them on a device); otherwise they
# go to a temporary directory that is removed when every example builds.
set -u

me=check-man-examples
die() { echo "$me: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	CC=* | CPPFLAGS=* | CFLAGS=* | LDFLAGS=* | LIBS=* | EXAMPLE_CFLAGS=* | \
	top_srcdir=* | builddir=* | outdir=*)
		var=${1%%=*}
		eval "$var=\${1#*=}"
		shift
		;;
	--)
		shift
		break
		;;
	-*)
		die "unknown option $1 (usage: $me [VAR=VALUE...] PAGE...)"
		;;
	*)
		break
		;;
	esac
done
[ $# -gt 0 ] || die "usage: $me [VAR=VALUE...] PAGE..."

CC=${CC:-cc}
CPPFLAGS=${CPPFLAGS:-}
CFLAGS=${CFLAGS:-}
LDFLAGS=${LDFLAGS:-}
LIBS=${LIBS:-}
EXAMPLE_CFLAGS=${EXAMPLE_CFLAGS--Wall -Wextra -Werror}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${builddir:-.}
outdir=${outdir:-}

for page in "$@"; do
	[ -r "$page" ] || die "cannot read man page $page"
done
[ -r "$top_srcdir/include/msgaccel.h" ] ||
	die "no $top_srcdir/include/msgaccel.h (set top_srcdir)"
ls "$builddir"/lib/.libs/libmsgaccel.so >/dev/null 2>&1 ||
	die "no $builddir/lib/.libs/libmsgaccel.so: build the library first (set builddir)"

if [ -n "$outdir" ]; then
	mkdir -p "$outdir" || die "cannot make $outdir"
	work=$outdir
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/man-examples.XXXXXX") ||
		die "cannot make a temporary directory in ${TMPDIR:-/tmp}"
fi
cleanup() { [ -n "$outdir" ] || rm -rf "$work"; }

# Extract. Writes WORK/NAME.c for each block and prints "NAME PAGE LINE"
# for each to stdout; errors go to stderr and make awk exit 1. A #line
# directive, and blank lines in place of dropped comments, make compiler
# messages point at the man page's own lines.
manifest=$(awk -v work="$work" '
function err(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg | "cat 1>&2"
	bad = 1
}
function special(nm) {
	if (nm == "aq") return "\047"
	if (nm == "dq") return "\""
	if (nm == "ga") return "`"
	if (nm == "ti") return "~"
	if (nm == "ha") return "^"
	if (nm == "rs") return "\\"
	return ""
}
function unescape(s,    out, i, c, nm, close_at, r) {
	out = ""
	while ((i = index(s, "\\")) > 0) {
		out = out substr(s, 1, i - 1)
		c = substr(s, i + 1, 1)
		s = substr(s, i + 2)
		if (c == "e") {
			out = out "\\"
		} else if (c == "-" || c == ".") {
			out = out c
		} else if (c == "&") {
			# zero-width: nothing to copy
		} else if (c == "(" || c == "[") {
			if (c == "(") {
				nm = substr(s, 1, 2)
				s = substr(s, 3)
			} else {
				close_at = index(s, "]")
				nm = close_at ? substr(s, 1, close_at - 1) : s
				s = close_at ? substr(s, close_at + 1) : ""
			}
			r = special(nm)
			if (r == "")
				err("unsupported troff special character \\" c nm \
				    " in example " name)
			out = out r
		} else {
			err("unsupported troff escape \\" c " in example " name \
			    " (write a backslash as \\e)")
		}
	}
	return out s
}
FNR == 1 && state != 0 {
	err("example " name " is not closed by .EE before the end of the page")
	state = 0
}
state == 0 && /^\.\\" *example:/ {
	name = $0
	sub(/^\.\\" *example: */, "", name)
	sub(/ *$/, "", name)
	if (name !~ /^[A-Za-z_][A-Za-z0-9_]*$/) {
		err("example name \"" name "\" is not a C identifier")
		name = "bad_name"
	} else if (name in seen) {
		err("example " name " also defined at " seen[name])
	}
	seen[name] = FILENAME ":" FNR
	state = 1
	next
}
state == 1 {
	if ($0 != ".EX") {
		err("\".\\\" example: " name "\" must be followed by .EX")
		state = 0
		next
	}
	file = work "/" name ".c"
	printf "#line %d \"%s\"\n", FNR + 1, FILENAME > file
	print name, FILENAME, FNR + 1
	state = 2
	next
}
state == 2 && $0 == ".EE" {
	close(file)
	state = 0
	next
}
state == 2 && (substr($0, 1, 3) == ".\\\"" || substr($0, 1, 3) == "\047\\\"") {
	print "" > file
	next
}
state == 2 && (substr($0, 1, 1) == "." || substr($0, 1, 1) == "\047") {
	err("troff request in example " name " (start the line with \\& if it is code)")
	next
}
state == 2 {
	print unescape($0) > file
}
END {
	if (state != 0)
		err("example " name " is not closed by .EE before the end of the page")
	exit bad
}
' "$@")
status=$?
if [ $status -ne 0 ]; then
	cleanup
	die "could not extract the examples (see above)"
fi

# msgaccel.7 is the manual's entry point: its complete program must exist.
for page in "$@"; do
	case $page in
	*/msgaccel.7 | msgaccel.7)
		if ! printf '%s\n' "$manifest" | awk -v p="$page" '$2 == p { n++ } END { exit !n }'; then
			cleanup
			die "$page has no example program (mark one with .\\\" example: NAME before .EX)"
		fi
		;;
	esac
done

fail=0
count=0
while read -r name page line; do
	[ -n "$name" ] || continue
	count=$((count + 1))
	# shellcheck disable=SC2086 # flag lists are meant to split
	if $CC $CPPFLAGS -I"$top_srcdir/include" $CFLAGS $EXAMPLE_CFLAGS \
		-o "$work/$name" "$work/$name.c" \
		-L"$builddir/lib/.libs" -lmsgaccel $LDFLAGS $LIBS; then
		echo "PASS: man example $name ($page:$line)"
	else
		echo "FAIL: man example $name ($page:$line) does not compile and link;" \
			"source kept in $work/$name.c" >&2
		fail=1
	fi
done <<EOF
$manifest
EOF

if [ $fail -ne 0 ]; then
	echo "$me: some man page examples fail to build (sources in $work)" >&2
	exit 1
fi
cleanup
echo "$me: $count example(s) compiled and linked"
