#!/usr/bin/env bash
# The -run pattern of the tests that make race does not run in full:
#
#   scripts/race-gated-tests.sh DIR...
#
# prints ^(TestA|TestB|...)$ for every Test function, in the _test.go files
# under the DIRs, whose body reads underRace (or UnderRace): those skip
# under the race detector, or run smaller there, so make unit runs them
# without it. Every other test of their packages runs under make race only,
# not twice. Nothing is printed when no test reads it.
#
# A test function is from its "func TestX(" line to the next line that
# starts with a closing brace (gofmt's end of a top-level function), the
# next top-level func, or its own line's end if it is a one-line function;
# a mention outside every test function (a constant, a helper) gates no
# test.
set -euo pipefail
if [ $# -eq 0 ]; then
	echo "usage: scripts/race-gated-tests.sh DIR..." >&2
	exit 2
fi
for d in "$@"; do
	if [ ! -d "$d" ]; then
		echo "race-gated-tests: $d is not a directory" >&2
		exit 2
	fi
done
names=$(find "$@" -name '*_test.go' -print0 | xargs -0 -r awk '
	FNR == 1 { fn = "" }
	/^func / { fn = ""; if ($0 ~ /^func Test[A-Za-z0-9_]*\(/) { fn = $2; sub(/\(.*/, "", fn) } }
	fn != "" && /(^|[^A-Za-z0-9_])[uU]nderRace([^A-Za-z0-9_]|$)/ { print fn }
	/^}/ || /^func .*}$/ { fn = "" }
' | sort -u | paste -sd'|')
if [ -n "$names" ]; then
	echo "^($names)\$"
fi
