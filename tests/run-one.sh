#!/usr/bin/env bash
# Runs one test the way every runner does (tests/run.sh, `meson test`):
# with the environment the tests expect, and its output made complete TAP.
#
# usage: tests/run-one.sh BUILD_DIR TEST [ARG...]
#
# TEST is a unit-test binary (BUILD/tests/unit/test_*) or a shell test
# (tests/DIR/NAME.sh, run with bash), given ARGs if any. It gets SANDY_SRC, SANDY_BUILD,
# SANDYFS (BUILD/fusefs/sandyfs) and a fresh SANDY_CACHE_DIR: the projects'
# stores (private directories, ownership records) of every mount it makes,
# kept out of the user's cache and removed at the end. Daemons run as other
# users too: each makes its projects' stores there.
#
# Output: the test's stdout and stderr as one stream, as the test writes
# it, every line that is not TAP (a case "ok ..." / "not ok ...", a
# comment "# ...", a plan "1..N") made a comment, as a TAP reader wants
# it; then, unless the test printed a plan of its own ("1..N", as the unit
# tests do at their end), the plan: "1..N" for the N cases it printed (its
# own or those of a driver it ran).
# A test that exits non-zero without printing "not ok", or prints no case
# at all, gets one "not ok" line more, so a crash can never pass for a
# green run. A test that has nothing to run in this build says so itself
# with the plan "1..0 # SKIP reason" (lib.sh: skip_all).
#
# The test writes into a file that this script streams to its own
# stdout: a daemon the test leaves behind that still holds the test's
# output cannot keep a reader of this script's output waiting.
#
# Exit status: the test's, or 1 when a "not ok" line was added for a test
# that exited with status 0.
set -u
build=$(cd "${1:?usage: tests/run-one.sh BUILD_DIR TEST [ARG...]}" && pwd)
test=${2:?usage: tests/run-one.sh BUILD_DIR TEST [ARG...]}
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
name=${test#"$build/"}
name=${name#"$src/"}

export SANDY_SRC="$src" SANDY_BUILD="$build" SANDYFS="$build/fusefs/sandyfs"
# Under the sanitizers: leaks of the system's libraries, named there.
export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
SANDY_CACHE_DIR=$(mktemp -d /var/tmp/sandy-cache.XXXXXX) || exit 1
export SANDY_CACHE_DIR
log=$(mktemp /var/tmp/sandy-tap.XXXXXX) || exit 1
sentinel='' tailpid=''
cleanup() {
	[ -n "$sentinel" ] && kill "$sentinel" 2>/dev/null
	[ -n "$tailpid" ] && kill "$tailpid" 2>/dev/null
	rm -rf --one-file-system "$SANDY_CACHE_DIR"
	rm -f "$log"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir -m 1777 "$SANDY_CACHE_DIR/projects" && chmod 755 "$SANDY_CACHE_DIR" || exit 1

# tail follows the log until the sentinel is gone, then prints what is
# left and ends. The test runs in the foreground: a background job would
# start with SIGINT ignored, which its children could not undo.
sleep infinity >/dev/null 2>&1 &
sentinel=$!
tail -n +1 -s 0.1 --pid="$sentinel" -f "$log" |
	sed -u -E '/^((not )?ok( |$)|#|1\.\.[0-9])/!s/^/# /' &
tailpid=$!
if [[ $test == *.sh ]]; then
	bash "$test" "$@" >>"$log" 2>&1
else
	"$test" "$@" >>"$log" 2>&1
fi
rc=$?
kill "$sentinel"
wait "$sentinel" 2>/dev/null
sentinel=''
wait "$tailpid"
tailpid=''

n=$(grep -cE '^(not )?ok( |$)' "$log")
failed=$(grep -cE '^not ok( |$)' "$log")
if grep -qE '^1\.\.[0-9]+' "$log"; then
	[ "$rc" -ne 0 ] && echo "# $name exited with status $rc"
	exit "$rc"
fi
if [ "$n" -eq 0 ] && [ "$rc" -eq 0 ]; then
	echo "not ok - $name ran no case"
	n=1 rc=1
elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "not ok - $name exited with status $rc"
	n=$((n + 1))
fi
echo "1..$n"
exit "$rc"
