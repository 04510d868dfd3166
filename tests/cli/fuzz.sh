#!/usr/bin/env bash
# The libFuzzer targets for the rule parser,
# the glob compiler and the name canonicaliser each run for a bounded time
# (SANDY_FUZZ_SECONDS, default 20) without a crash, a leak or a sanitizer
# report. They exist only in the clang build with -Dfuzz=true
# (scripts/build.sh fuzz -> build-fuzz/); in any other build directory it
# is skipped (skip_all) and runs no case, so it cannot pass without fuzzing.
source "$SANDY_SRC/tests/lib.sh"

secs=${SANDY_FUZZ_SECONDS:-20}
dir=$SANDY_BUILD/tests/fuzz
if [ ! -x "$dir/fuzz_canon" ]; then
	skip_all "no fuzz targets in '$SANDY_BUILD' (they are built by: scripts/build.sh fuzz)"
fi

for t in canon glob rules; do
	corpus=$(scratch)
	seeds=("$SANDY_SRC/tests/fuzz/seeds/$t")
	# Real rule files are the best seeds for the rule parser; they are only read.
	[ "$t" = rules ] && seeds+=("$SANDY_SRC/rules")
	log=$corpus/log
	timeout -k 10 $((secs + 120)) "$dir/fuzz_$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$corpus/" \
		"$corpus" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	if [ "$rc" = 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|==ERROR' "$log"; then
		ok "fuzz_$t: ${runs:-?} inputs in ${secs}s, no crash and no sanitizer report"
	else
		not_ok "fuzz_$t: ${runs:-?} inputs in ${secs}s, no crash and no sanitizer report"
		diag "exit status $rc; the end of the log:"
		tail -n 40 "$log" | sed 's/^/#   /'
		for a in "$corpus"/crash-* "$corpus"/leak-* "$corpus"/timeout-* "$corpus"/oom-*; do
			[ -f "$a" ] || continue
			diag "input $(basename "$a") (hex): $(od -An -tx1 -v "$a" | tr -d ' \n' | head -c 400)"
		done
	fi
done

done_testing
