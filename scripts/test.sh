#!/usr/bin/env bash
# The test command: installs what is missing, builds the flavours (normal,
# fallback, asan: the whole suite on each; fuzz: the fuzzers) and runs the
# tests. Ends with one line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
total_pass=0 total_fail=0
runlog=$(mktemp)
trap 'rm -f "$runlog"' EXIT
# fuzz: the clang build with the libFuzzer targets, which only runs them.
for flavour in ${SANDY_FLAVOURS:-normal fallback asan fuzz}; do
	echo "== $flavour build"
	if ! dir=$(scripts/build.sh "$flavour"); then
		echo "not ok - $flavour build failed"
		total_fail=$((total_fail + 1))
		continue
	fi
	filter=
	[ "$flavour" = fuzz ] && filter=cli/fuzz.sh
	# Streamed to stdout as it runs, and kept for the count (never through
	# /dev/stderr: reopening it on a log file would write over the log).
	tests/run.sh "$dir" "$filter" | tee "$runlog"
	out=$(tail -n 1 "$runlog")
	p=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
	f=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
	total_pass=$((total_pass + ${p:-0}))
	total_fail=$((total_fail + ${f:-1}))
done 2>&1
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
