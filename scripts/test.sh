#!/usr/bin/env bash
# The test command: installs what is missing, builds the flavours (normal:
# the whole suite; asan: the tests whose C code runs, once; fallback: the
# unit, cli, fs and attack tests that reach the portability layer, and
# the portable launcher's; fuzz: the fuzzers; bundled: the filesystem's
# tests against libfuse 3.18.3, over io_uring) and runs the tests; README,
# "Tests", says what each leaves out. Ends with one line "N passed, N
# failed".
set -u
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
total_pass=0 total_fail=0
# What the caller set for the exercisers applies to every flavour.
exercise_seconds=${SANDY_EXERCISE_SECONDS:-} diff_seconds=${SANDY_DIFF_SECONDS:-}
runlog=$(mktemp)
trap 'rm -f "$runlog"' EXIT
# FUSE over io_uring is switched on for the bundled flavour (libfuse 3.18,
# the only one that asks for it) and back to what it was after.
uring=/sys/module/fuse/parameters/enable_uring
uring_was=$(cat "$uring" 2>/dev/null)
# fuzz: the clang build with the libFuzzer targets, which only runs them.
for flavour in ${SANDY_FLAVOURS:-normal fallback asan fuzz bundled}; do
	echo "== $flavour build"
	if ! dir=$(scripts/build.sh "$flavour"); then
		echo "not ok - $flavour build failed"
		total_fail=$((total_fail + 1))
		continue
	fi
	filters=("")
	# Ten seconds per target in CI, for its time budget; longer runs:
	# SANDY_FUZZ_SECONDS=N tests/run-one.sh build-fuzz tests/cli/fuzz.sh.
	[ "$flavour" = fuzz ] && filters=(cli/fuzz.sh) && export SANDY_FUZZ_SECONDS=${SANDY_FUZZ_SECONDS:-10}
	# The random exercisers a little shorter past the normal flavour
	# (unless the caller says): fsx and fsstress 3 s a run (5 s there),
	# the differential test 5 s a way (10 s there).
	short=$([ "$flavour" = normal ] || echo 1)
	export SANDY_EXERCISE_SECONDS=${exercise_seconds:-${short:+3}}
	export SANDY_DIFF_SECONDS=${diff_seconds:-${short:+5}}
	[ -n "$SANDY_EXERCISE_SECONDS" ] || unset SANDY_EXERCISE_SECONDS
	[ -n "$SANDY_DIFF_SECONDS" ] || unset SANDY_DIFF_SECONDS
	# The portable flavour changes how sandyfs reaches the host, and
	# gives sandy the shape a Mac gets (launcher/platform.h): everything
	# that mounts sandyfs directly, and the launcher's tests of that
	# shape, which serves only in the engine's world (portable.sh, and
	# whole sessions against an engine of its own: dind.sh).
	# (The real tools of workflows/ meet the same portability layer as
	# fs/ and attack/ do; they run in the normal and ASan flavours.)
	[ "$flavour" = fallback ] &&
		filters=(unit/ cli/ fs/ attack/ launcher/portable.sh launcher/dind.sh)
	# Under ASan and UBSan, everything whose C code runs, once: not the
	# image build, the pull-request script, the help texts, the
	# completion or the Debian package, which the normal flavour covers;
	# of the scripts that drive the same daemon code with more of the
	# same (every protected name planted and explained once more, the
	# real tools of every ecosystem, a second agent CLI, rootless podman's
	# plumbing), the normal flavour runs all and this one a few: the
	# attack matrix, the workflows of C, Go, Node, Python, Rust and the
	# editors, Claude Code, docker, podman and the engine of its own.
	skip=
	[ "$flavour" = asan ] &&
		skip="launcher/image.sh git/pr.sh install/ cli/completion.sh cli/manpage.sh
			attack/planted.sh cli/ecosystems.sh launcher/codex-gemini.sh
			launcher/rootless.sh workflows/clojure workflows/elixir workflows/erlang
			workflows/haskell workflows/latex workflows/lua workflows/ocaml
			workflows/perl workflows/php workflows/r.sh workflows/shlib"
	# The portable flavour: the portability layer under the tests that
	# reach it, not the policy's own (pure) tests once more.
	[ "$flavour" = fallback ] &&
		skip="unit/test_policy attack/planted.sh cli/ecosystems.sh cli/completion.sh cli/manpage.sh"
	# The 100,000-file bound tests the inode table and the portability
	# layer (normal, ASan, portable), the same code under either libfuse;
	# every name planted once more is the policy's, not libfuse's.
	[ "$flavour" = bundled ] && skip="fs/bounded.sh attack/planted.sh"
	# The attack suite through sandyfs in its container tests the
	# plumbing of container mode, not the filesystem: once, on the
	# normal build.
	[ "$flavour" != normal ] && skip="$skip attack/boxed.sh"
	if [ "$flavour" = bundled ]; then
		# The tests of the filesystem itself: what a different libfuse
		# and transport can change.
		filters=(fs/ attack/)
		if [ -n "$uring_was" ] && echo Y >"$uring" 2>/dev/null; then
			echo "# FUSE over io_uring switched on ($uring)"
		else
			echo "# cannot switch FUSE over io_uring on ($uring): /dev/fuse only"
		fi
	fi
	for filter in "${filters[@]}"; do
		# Streamed to stdout as it runs, and kept for the count (never
		# through /dev/stderr: reopening it on a log file would write
		# over the log).
		SANDY_TEST_SKIP=$skip tests/run.sh "$dir" "$filter" | tee "$runlog"
		out=$(tail -n 1 "$runlog")
		p=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
		f=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
		total_pass=$((total_pass + ${p:-0}))
		total_fail=$((total_fail + ${f:-1}))
	done
	[ "$flavour" = bundled ] && [ -n "$uring_was" ] && echo "$uring_was" >"$uring" 2>/dev/null
done 2>&1
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
