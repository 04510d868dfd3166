# Shared helpers for the shell tests: TAP output, scratch directories that
# clean themselves up, and sandyfs mounts that are always unmounted.
# Source it; it expects SANDYFS (the binary) in the environment, as
# tests/run-one.sh sets it. Cases are TAP lines; the plan ("1..N") comes
# from tests/run-one.sh, which also counts the cases of the drivers a test
# runs (tests/attack/attack, tests/conformance/conformance).
set -u

: "${SANDYFS:?SANDYFS must name the sandyfs binary (run through tests/run.sh or tests/run-one.sh)}"
TEST_USER=${TEST_USER:-sandytest}
_failed=0
_mounts=()
_cleanups=()

ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	_failed=1
}
diag() { echo "# $*"; }

# check DESCRIPTION COMMAND...: one case, passing when COMMAND succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# check_fails DESCRIPTION COMMAND...: passes when COMMAND fails.
check_fails() {
	local desc=$1
	shift
	if "$@"; then not_ok "$desc"; else ok "$desc"; fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" == "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		diag "expected: $2"
		diag "actual:   $3"
	fi
}

# scratch: a fresh directory under the test base, removed at exit. Called
# as d=$(scratch), i.e. in a subshell, so the cleanup is registered here
# once for a per-script directory that holds them all.
_scratch_base=$(mktemp -d "${TEST_BASE:-/var/tmp}/sandy-test.XXXXXX") || exit 1
chmod 755 "$_scratch_base"
_cleanups+=("rm -rf '$_scratch_base'")
scratch() {
	local d
	d=$(mktemp -d "$_scratch_base/s.XXXXXX") || exit 1
	chmod 755 "$d"
	echo "$d"
}

# is_mounted PATH: a FUSE mount (live or dead) sits at PATH. Field 5 of
# /proc/self/mountinfo is the mountpoint, the field after " - " the type.
is_mounted() {
	awk -v mp="$(realpath -m "$1")" '
		{ for (i = 7; i <= NF && $i != "-"; i++) ; }
		$5 == mp && $(i + 1) ~ /^fuse/ { found = 1 }
		END { exit !found }' /proc/self/mountinfo
}

# The policy the filesystem tests run under: every path writable, so that
# the mount can be compared with a native directory. base.json still
# applies (.git internals immutable, secrets hidden); the attack tests use
# the shipped rules instead.
ALLOW_ALL=(--no-detect --rules "$SANDY_SRC/tests/rules/allow-all.json")

# mount_sandyfs [SANDYFS-OPTIONS] SOURCE MOUNTPOINT: mounts in the
# background under ALLOW_ALL, remembers the mountpoint for cleanup.
mount_sandyfs() {
	local mp=${*: -1}
	"$SANDYFS" mount "${ALLOW_ALL[@]}" "$@" || return 1
	_mounts+=("$mp")
}

# mount_policy [SANDYFS-OPTIONS] SOURCE MOUNTPOINT: the same with only the
# rules the options name (and the shipped ones the mount always reads).
mount_policy() {
	local mp=${*: -1}
	"$SANDYFS" mount "$@" || return 1
	_mounts+=("$mp")
}

# mount_as USER [SANDYFS-OPTIONS] SOURCE MOUNTPOINT: like mount_sandyfs,
# with the daemon run by USER (an unprivileged mount through fusermount3).
mount_as() {
	local user=$1
	shift
	local mp=${*: -1}
	runuser -u "$user" -- "$SANDYFS" mount "${ALLOW_ALL[@]}" "$@" || return 1
	_mounts+=("$mp")
}

# track_mount MOUNTPOINT: unmount it at exit (for mounts made without
# mount_sandyfs, e.g. a `sandyfs mount -f` in the background).
track_mount() { _mounts+=("$1"); }

# mount_foreground MOUNTPOINT ERRFILE COMMAND...: COMMAND, a `sandyfs mount
# -f` of MOUNTPOINT (or a function that execs one), in the background with
# its stderr in ERRFILE and its pid in FG_PID; MOUNTPOINT unmounted and the
# daemon killed at exit. True once the mount answers, within 10 s.
mount_foreground() {
	local mp=$1 err=$2
	shift 2
	"$@" 2>"$err" &
	FG_PID=$!
	track_mount "$mp"
	at_exit "kill -9 $FG_PID 2>/dev/null"
	wait_until 10 is_mounted "$mp"
}

unmount_all() {
	local mp
	for mp in "${_mounts[@]}"; do
		if is_mounted "$mp"; then
			fusermount3 -u "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null
		fi
	done
	_mounts=()
}

# wait_until SECONDS COMMAND...: polls COMMAND every 20 ms, or every
# WAIT_INTERVAL seconds when set (WAIT_INTERVAL=1 wait_until ... for a
# slow COMMAND).
wait_until() {
	local limit=$1
	shift
	local end=$((SECONDS + limit + 1))
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep "${WAIT_INTERVAL:-0.02}"
	done
}

# poll_ms LIMIT_MS COMMAND...: like wait_until with millisecond precision;
# sets POLL_MS to the time COMMAND took to first succeed (or to the time
# waited when it never did, then returns 1).
POLL_MS=0
poll_ms() {
	local limit=$1 start now
	shift
	start=${EPOCHREALTIME/./}
	while :; do
		if "$@"; then
			now=${EPOCHREALTIME/./}
			POLL_MS=$(((now - start) / 1000))
			return 0
		fi
		now=${EPOCHREALTIME/./}
		POLL_MS=$(((now - start) / 1000))
		[ $POLL_MS -ge "$limit" ] && return 1
		sleep 0.01
	done
}

# pid_alive PID: the process exists and is not a zombie (PID 1 of a
# container may never reap an exited daemon).
pid_alive() {
	local state
	state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# at_exit COMMAND: run COMMAND (a string, eval'd) at exit, after the
# sandyfs mounts are gone and before the scratch directories are removed;
# the last registered runs first. E.g. at_exit "kill -9 $pid 2>/dev/null".
at_exit() { _cleanups=("$1" "${_cleanups[@]}"); }

# kill_at_exit PID: SIGKILL PID (or -PGID) at exit, before the mounts are taken down
# (for helper loops that may still be using a mount).
_early_kills=()
kill_at_exit() { _early_kills+=("$1"); }

# ensure_test_user: the unprivileged account the tests run callers and
# daemons as, and a /dev/fuse it may open.
ensure_test_user() {
	id "$TEST_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$TEST_USER" || return 1
	chmod 0666 /dev/fuse
}

_finish() {
	local c
	for c in "${_early_kills[@]}"; do kill -9 -- "$c" 2>/dev/null; done
	unmount_all
	for c in "${_cleanups[@]}"; do eval "$c"; done
}
trap _finish EXIT

# done_testing: exit status from the cases run so far.
done_testing() { exit $_failed; }

# skip_all REASON: this test has nothing to run in this build; the TAP
# plan of no case says why (a runner reports it skipped, neither passed
# nor failed). Call it before the first case.
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}
