#!/usr/bin/env bash
# Exercisers: fsx (tests/fs/fsx.c: one file, random operations on it, every
# result checked against a model of its content and size) and fsstress
# (tests/fs/fsstress.c: processes racing in one tree of colliding names,
# every errno judged, then the tree's invariants checked), each run once
# on a native directory as the baseline and then through mounts, with the
# same seed. Six ways, as differential.sh: the daemon as root with
# --allow-other, opens judged and --lazy-open, each with root and the test
# user as the caller (in a directory the user owns); and the daemon as the
# test user, judged and lazy. fsx must pass natively and, with the same
# seed, through every mount, with the same operations found unsupported:
# what the host filesystem supports and the mount lacks is a divergence.
# fsstress must end without an unexpected errno or a broken invariant.
#
# Time-boxed: SANDY_EXERCISE_SECONDS per run (default 5; 14 runs: two
# baselines and two per way). SANDY_EXERCISE_SEED replays the runs of one
# seed (it is in every case line; fsx replays exactly, fsstress's
# processes race); SANDY_EXERCISE_PROCS sets fsstress's processes (default
# 4). `meson test` gives a test 900 s; a longer run goes through
# run-one.sh, e.g.
#   SANDY_EXERCISE_SECONDS=120 tests/run-one.sh build tests/fs/exercisers.sh
source "$SANDY_SRC/tests/lib.sh"

seconds=${SANDY_EXERCISE_SECONDS:-5}
seed=${SANDY_EXERCISE_SEED:-$((RANDOM << 15 | RANDOM))}
procs=${SANDY_EXERCISE_PROCS:-4}
# The time limit stops the runs, not a number of operations.
many=1000000000

for prog in fsx fsstress; do
	if [ ! -x "$SANDY_BUILD/tests/fs/$prog" ]; then
		not_ok "$prog is built ($SANDY_BUILD/tests/fs/$prog)"
		done_testing
	fi
	# a copy the test user can surely run, whatever the build directory's modes
	install -m 755 "$SANDY_BUILD/tests/fs/$prog" "$_scratch_base/$prog"
done
FSX=$_scratch_base/fsx FSSTRESS=$_scratch_base/fsstress
check "the test user $TEST_USER exists" ensure_test_user || done_testing
diag "seed $seed, $seconds s per run"
replay="SANDY_EXERCISE_SEED=$seed SANDY_EXERCISE_SECONDS=$seconds tests/run-one.sh BUILD tests/fs/exercisers.sh"

# as CALLER COMMAND...: COMMAND as root or as the test user.
as() {
	local caller=$1
	shift
	if [ "$caller" = user ]; then
		runuser -u "$TEST_USER" -- "$@"
	else
		"$@"
	fi
}

# serves MOUNTPOINT CALLER: the mount is there and its daemon answers (a
# daemon that died leaves a mount that answers ENOTCONN). Only the daemon's
# user reaches a mount without --allow-other.
serves() {
	is_mounted "$1" && as "$2" stat "$1/." >/dev/null
}

# exercise LABEL CALLER NAME COMMAND...: runs an exerciser with a time
# limit of its own in case an operation hangs, its output as comments; one
# case from its exit status, with the seed, the operations it did and the
# seconds it took. Leaves its output in OUT and its exit status in RC.
OUT='' RC=0
exercise() {
	local label=$1 caller=$2 name=$3 start ms ops
	shift 3
	start=${EPOCHREALTIME/./}
	OUT=$(as "$caller" timeout -k 10 $((seconds * 2 + 120)) "$@" 2>&1)
	RC=$?
	ms=$(((${EPOCHREALTIME/./} - start) / 1000))
	printf '%s\n' "$OUT" | sed -E '/^#/!s/^/# /'
	# "fsx: SEED N ops ok (FILE)", "fsstress: SEED P procs N ops, ..."
	ops=$(printf '%s\n' "$OUT" | awk -v p="$name:" '$1 == p && $2 ~ /^[0-9]+$/ {
		for (i = 3; i <= NF; i++) if ($(i + 1) ~ /^ops/) { print $i; exit } }')
	if [ "$RC" -eq 0 ]; then
		ok "$label: $name seed $seed: ${ops:-?} ops in $((ms / 1000)).$((ms % 1000 / 100)) s"
	else
		[ "$RC" -eq 124 ] && diag "$name did not end $((seconds + 120)) s past its time limit"
		not_ok "$label: $name seed $seed (exit status $RC, ${ops:-?} ops in $((ms / 1000)) s)"
		diag "replay: $replay"
	fi
}

# The operations fsx found unsupported, by name: "# fsx: disabled: NAME (why)".
disabled() {
	local d
	d=$(printf '%s\n' "$OUT" | sed -n 's/^# fsx: disabled: \([^ ]*\).*/\1/p' | sort | tr '\n' ' ')
	echo "${d:-none}"
}

run_fsx() { # LABEL CALLER FILE
	exercise "$1" "$2" fsx "$FSX" -N $many -S "$seed" -t "$seconds" "$3"
}

run_fsstress() { # LABEL CALLER DIR
	exercise "$1" "$2" fsstress "$FSSTRESS" -p "$procs" -n $many -S "$seed" -t "$seconds" "$3"
}

# replay_native: after fsx failed through a mount, the same operations (its
# "fsx: replay: fsx -N N ..." line) once more on a native directory, to say
# whether the mount diverges from the host filesystem.
replay_native() {
	local n dir
	n=$(printf '%s\n' "$OUT" | sed -n 's/^fsx: replay: fsx -N \([0-9]*\) .*/\1/p')
	[ -n "$n" ] || return
	dir=$(scratch)
	if "$FSX" -N "$n" -S "$seed" "$dir/file" >/dev/null 2>&1; then
		diag "the same $n operations pass natively: the mount diverges"
	else
		diag "the same $n operations fail natively too"
	fi
}

# --- the baseline: a native directory on the filesystem the mounts serve ----
base=$(scratch)
mkdir -p "$base/fsx" "$base/stress"
run_fsx native root "$base/fsx/file"
native_disabled=$(disabled)
native_fsx=$RC
run_fsstress native root "$base/stress"

# way LABEL DAEMON(root|user) CALLER(root|user) [MOUNT OPTION...]
way() {
	local label=$1 daemon=$2 caller=$3
	shift 3
	local src mnt
	base=$(scratch)
	src=$base/source mnt=$base/mnt
	mkdir -p "$src/fsx" "$src/stress" "$mnt"
	[ "$caller" = user ] && chown -R "$TEST_USER:" "$src" "$mnt"
	if [ "$daemon" = root ]; then
		mount_sandyfs --allow-other "$@" "$src" "$mnt"
	else
		mount_as "$TEST_USER" "$@" "$src" "$mnt"
	fi || {
		not_ok "$label: the mount"
		return
	}
	run_fsx "$label" "$caller" "$mnt/fsx/file"
	# Only a run that went through has met every operation it could.
	if [ "$RC" -eq 0 ] && [ "$native_fsx" -eq 0 ]; then
		check_eq "$label: fsx seed $seed: the same operations unsupported as natively" \
			"$native_disabled" "$(disabled)"
	elif [ "$RC" -ne 0 ]; then
		replay_native
	fi
	check "$label: fsx: the daemon still serves" serves "$mnt" "$caller"
	run_fsstress "$label" "$caller" "$mnt/stress"
	check "$label: fsstress: the daemon still serves" serves "$mnt" "$caller"
}

way "root daemon, judged, root caller" root root
way "root daemon, judged, user caller" root user
way "root daemon, lazy, root caller" root root --lazy-open
way "root daemon, lazy, user caller" root user --lazy-open
way "user daemon, judged" user user
way "user daemon, lazy" user user --lazy-open
done_testing
