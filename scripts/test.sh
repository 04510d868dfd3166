#!/usr/bin/env bash
# The test command: installs what is missing, builds the flavours (normal:
# the whole suite; asan: the tests whose C code runs, once; fallback: the
# unit, cli, fs and attack tests that reach the portability layer, and
# the portable launcher's; fuzz: the fuzzers; bundled: the filesystem's
# tests against libfuse 3.18.3, over io_uring) and runs the tests; README,
# "Tests", says what each leaves out. Ends with one line "N passed, N
# failed".
#
# Two lanes run side by side, each its parts one after the other: the
# engine lane (every test that starts a container engine, and the real
# tools) and the filesystem lane (every other test: unit, cli, fs and
# attack, of every flavour). Only the engine lane talks to docker and
# podman, so no two tests ever share an engine, its images or its
# networks, and the filesystem lane runs in a mount namespace of its own,
# so that no engine ever holds a copy of its mounts. The engine lane
# streams as it runs; the filesystem lane's output follows it.
# SANDY_LANES=serial runs the two one after the other.
set -u
cd "$(dirname "$0")/.."
[ "${1:-}" = --fs-lane ] || scripts/deps.sh || exit 1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
# What the caller set for the exercisers applies to every flavour.
exercise_seconds=${SANDY_EXERCISE_SECONDS:-} diff_seconds=${SANDY_DIFF_SECONDS:-}
if [ "${1:-}" = --fs-lane ]; then
	work=$SANDY_TEST_WORK # the caller's, kept by it
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
# FUSE over io_uring is switched on for the bundled flavour (libfuse 3.18,
# the only one that asks for it; the other flavours' libfuse never does)
# and back to what it was after.
uring=/sys/module/fuse/parameters/enable_uring
uring_was=$(cat "$uring" 2>/dev/null)
flavours=" ${SANDY_FLAVOURS:-normal fallback asan fuzz bundled} "
wanted() { [[ $flavours == *" $1 "* ]]; }

# build FLAVOUR: builds it once (both lanes may ask); its directory goes
# to $work/dir.FLAVOUR, a failure counts once.
build() {
	local flavour=$1 dir
	[ -e "$work/dir.$flavour" ] && return 0
	echo "== $flavour build"
	if dir=$(scripts/build.sh "$flavour"); then
		echo "$dir" >"$work/dir.$flavour"
	else
		echo "not ok - $flavour build failed"
		echo "0 1" >>"$work/counts"
		: >"$work/dir.$flavour"
	fi
}

# part FLAVOUR SKIP FILTER...: runs the flavour's tests whose names hold a
# FILTER, less those holding a word of SKIP, and adds up their counts.
part() {
	local flavour=$1 skip=$2 filter dir out p f
	shift 2
	wanted "$flavour" || return 0
	dir=$(cat "$work/dir.$flavour")
	[ -n "$dir" ] || return 0 # its build failed, counted once
	echo "== $flavour: $*"
	# The random exercisers a little shorter past the normal flavour
	# (unless the caller says): fsx and fsstress 3 s a run (5 s there),
	# the differential test 5 s a way (10 s there).
	local short
	short=$([ "$flavour" = normal ] || echo 1)
	for filter in "$@"; do
		# Streamed as it runs, and kept for the count (never through
		# /dev/stderr: reopening it on a log file would write over the
		# log).
		SANDY_TEST_SKIP=$skip \
			SANDY_EXERCISE_SECONDS=${exercise_seconds:-${short:+3}} \
			SANDY_DIFF_SECONDS=${diff_seconds:-${short:+5}} \
			tests/run.sh "$dir" "$filter" | tee "$work/run.$lane"
		out=$(tail -n 1 "$work/run.$lane")
		p=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
		f=$(echo "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
		echo "${p:-0} ${f:-1}" >>"$work/counts"
	done
}

# What every flavour but the normal one leaves to it: the attack suite
# through sandyfs in its container (the plumbing of container mode, not
# the filesystem), every protected name planted and explained once more
# (the policy's own work), the help texts and the completion.
once="attack/boxed.sh attack/planted.sh cli/ecosystems.sh cli/completion.sh cli/manpage.sh"

engine_lane() {
	lane=engine
	wanted normal && build normal
	part normal "" launcher/ network/ git/ install/ workflows/ \
		cli/ecosystems.sh cli/completion.sh cli/manpage.sh attack/boxed.sh attack/planted.sh
	# The portable flavour gives sandy the shape a Mac gets
	# (launcher/sys/platform.h), which serves only in the engine's world:
	# its guard, and whole sessions against an engine of its own.
	wanted fallback && build fallback
	part fallback "" launcher/portable.sh launcher/dind.sh
	# Under ASan and UBSan, the launcher's C code once through each of
	# its paths: bad input, a docker session, signals and cleanup, the
	# bubblewrap runtime, the agent's world, a session's git; and the
	# real tools of C, Go, Node, Python, Rust and the editors through
	# the daemon. What only drives the same code with more of the same
	# (the other agent CLIs, the engine of its own, rootless podman's
	# plumbing, the network's, the other ecosystems' tools) runs in the
	# normal flavour.
	wanted asan && build asan
	part asan "" launcher/badinput.sh launcher/docker.sh launcher/lifecycle.sh \
		launcher/none_bind.sh launcher/owned_private.sh launcher/world.sh git/session.sh
	part asan "workflows/clojure workflows/elixir workflows/erlang workflows/haskell
		workflows/latex workflows/lua workflows/ocaml workflows/perl workflows/php
		workflows/r.sh workflows/shlib" workflows/
}

fs_lane() {
	lane=fs
	wanted normal && build normal
	part normal "$once" unit/ cli/ fs/ attack/
	# The portable flavour changes how sandyfs reaches the host:
	# everything that mounts it directly; not the policy's own (pure)
	# unit test once more.
	wanted fallback && build fallback
	part fallback "$once unit/test_policy" unit/ cli/ fs/ attack/
	wanted asan && build asan
	part asan "$once" unit/ cli/ fs/ attack/
	# fuzz: the clang build with the libFuzzer targets, which only runs
	# them, ten seconds a target (longer runs: SANDY_FUZZ_SECONDS=N
	# tests/run-one.sh build-fuzz tests/cli/fuzz.sh).
	wanted fuzz && build fuzz
	export SANDY_FUZZ_SECONDS=${SANDY_FUZZ_SECONDS:-10}
	part fuzz "" cli/fuzz.sh
	# bundled: the tests of the filesystem itself, what a different
	# libfuse and transport can change; the 100,000-file bound tests
	# the inode table, the same code under either libfuse.
	if wanted bundled; then
		build bundled
		if [ -n "$uring_was" ] && echo Y >"$uring" 2>/dev/null; then
			echo "# FUSE over io_uring switched on ($uring)"
		else
			echo "# cannot switch FUSE over io_uring on ($uring): /dev/fuse only"
		fi
		part bundled "$once fs/bounded.sh" fs/ attack/
		[ -n "$uring_was" ] && echo "$uring_was" >"$uring" 2>/dev/null
	fi
}

if [ "${1:-}" = --fs-lane ]; then
	fs_lane
	exit 0
fi

: >"$work/counts"
# Made once before the lanes, which would otherwise race to make them:
# the test user, and the builds both lanes use.
id sandytest >/dev/null 2>&1 || useradd -m -s /bin/bash sandytest
for flavour in normal fallback asan; do
	wanted "$flavour" && build "$flavour"
done 2>&1
if [ "${SANDY_LANES:-}" = serial ]; then
	{
		engine_lane
		fs_lane
	} 2>&1
else
	# The filesystem lane mounts in a mount namespace of its own: an
	# engine's process that copies the mount table while a test's mount
	# is up (podman's conmon does) would otherwise keep that mount, and
	# its daemon, alive after the test unmounted it.
	SANDY_TEST_WORK=$work unshare --mount --propagation private -- "$PWD/scripts/test.sh" --fs-lane \
		>"$work/fs-lane.log" 2>&1 &
	fs_pid=$!
	engine_lane 2>&1
	wait "$fs_pid"
	echo "== the filesystem lane, which ran beside the engine lane"
	cat "$work/fs-lane.log"
fi
read -r total_pass total_fail < <(awk '{p += $1; f += $2} END {print p + 0, f + 0}' "$work/counts")
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
