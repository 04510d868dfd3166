#!/usr/bin/env bash
# Runs every test against one build directory and prints the TAP totals.
#
# A test is a unit-test binary (BUILD/tests/unit/test_*) or a script
# (tests/{cli,fs,attack,workflows,launcher,network,install,git}/*.sh), run
# through tests/run-one.sh (its environment, and complete TAP: "ok - ..." /
# "not ok - ..." lines and a plan). A test exits non-zero when any case
# failed. A test that exits non-zero without printing "not ok", or prints
# no case at all, counts as one failure, so a crash can never pass for a
# green run. `meson test` runs the same tests through the same script.
#
# usage: tests/run.sh BUILD_DIR [NAME_FILTER]
#
# SANDY_TEST_SKIP (space-separated substrings of test names) leaves tests
# out of this run, each said on its line and counted neither way: what
# scripts/test.sh does not repeat in every build flavour.
set -u
build=$(cd "${1:?usage: tests/run.sh BUILD_DIR [FILTER]}" && pwd)
filter=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
# One log directory per run, so that runs side by side keep their logs.
mkdir -p "$build/test-logs"
logdir=$(mktemp -d "$build/test-logs/run.XXXXXX")
ln -sfn "$(basename "$logdir")" "$build/test-logs/latest"

tests=()
for t in "$build"/tests/unit/test_*; do
	[ -x "$t" ] && [ -f "$t" ] && tests+=("$t")
done
for t in "$src"/tests/{cli,fs,attack,workflows,launcher,network,install,git}/*.sh; do
	[ -f "$t" ] && tests+=("$t")
done

pass=0 fail=0
for t in "${tests[@]}"; do
	name=${t#"$build/"}
	name=${name#"$src/"}
	[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
	skip=
	for s in ${SANDY_TEST_SKIP:-}; do
		[[ $name == *"$s"* ]] && skip=$s
	done
	if [ -n "$skip" ]; then
		printf '%-40s skipped: not in this flavour (SANDY_TEST_SKIP)\n' "$name"
		continue
	fi
	log="$logdir/$(echo "$name" | tr / _).log"
	start=$SECONDS
	timeout --kill-after=10 900 "$src/tests/run-one.sh" "$build" "$t" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log" 2>/dev/null)
	f=$(grep -c '^not ok ' "$log" 2>/dev/null)
	p=${p:-0} f=${f:-0}
	# A test that has nothing to run in this build (the fuzzers outside
	# the fuzz build) says so with the plan "1..0 # SKIP reason" and
	# counts neither way.
	if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && grep -q '^1\.\.0 # SKIP' "$log"; then
		printf '%-40s skipped: %s\n' "$name" "$(sed -n 's/^1\.\.0 # SKIP *//p' "$log" | head -n 1)"
		continue
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc" >>"$log"
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name ran no case" >>"$log"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f))
	printf '%-40s %5d passed %3d failed  %3ds\n' "$name" "$p" "$f" $((SECONDS - start))
	if [ "$f" -ne 0 ]; then
		grep -n -B3 -A12 '^not ok ' "$log" | head -80 | sed 's/^/    /'
	fi
done
echo "# logs: $logdir"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
