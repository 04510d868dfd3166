#!/usr/bin/env bash
# Correctness: the POSIX conformance
# suite (tests/conformance/conformance.c). Every case runs on a native
# directory and on a sandyfs mount of a source directory next to it (the
# same host filesystem) and what the two runs observe must be equal. Run by
# tests/run.sh on each build flavour, so the fallback build (no O_PATH,
# openat2 or /proc) passes the same suite.
#
# Three modes, each case printed with the mode in front of its name:
#   root: the daemon runs as root with --allow-other; the suite runs as root
#         and does the unprivileged parts as the test user (--as-uid/--as-gid);
#   lazy: the same with --lazy-open (the kernel opens files without asking);
#   user: the daemon runs as the test user without --allow-other and so does
#         the suite; files owned by "someone else" (root) are prepared as root
#         beforehand (conformance --prepare).
#
# CONFORMANCE_FILTER=CASES runs only some cases: comma-separated substrings of
# their names, "-" in front of one to exclude (e.g. "rename,-many").
source "$SANDY_SRC/tests/lib.sh"

CONF=$SANDY_BUILD/tests/conformance/conformance
filter=${CONFORMANCE_FILTER:-}

if [ ! -x "$CONF" ]; then
	not_ok "conformance: the suite is built ($CONF)"
	done_testing
fi
if ! ensure_test_user; then
	not_ok "conformance: the test user $TEST_USER exists"
	done_testing
fi
uid=$(id -u "$TEST_USER") gid=$(id -g "$TEST_USER")

# run_suite MODE COMMAND...: runs the suite, which prints its own TAP lines;
# exit status 1 means some case failed, anything else but 0 that the suite
# itself did not run through (and is one more failure).
run_suite() {
	local mode=$1 rc
	shift
	"$@"
	rc=$?
	if [ $rc -eq 1 ]; then
		_failed=1
	elif [ $rc -ne 0 ]; then
		not_ok "$mode: the conformance suite ran to the end (exit status $rc)"
	fi
}

# --- root daemon with --allow-other, suite as root and as the test user -----
root_mode() { # MODE [MOUNT OPTION...]
	local mode=$1 base native src mnt
	shift
	base=$(scratch)
	native=$base/native src=$base/source mnt=$base/mnt
	mkdir -p "$native" "$src" "$mnt"
	if mount_sandyfs --allow-other "$@" "$src" "$mnt" && is_mounted "$mnt"; then
		run_suite "$mode" "$CONF" --prefix "$mode: " --as-uid "$uid" --as-gid "$gid" \
			"$native" "$mnt" "$src" ${filter:+"$filter"}
		check "$mode: the daemon is still serving after the suite" is_mounted "$mnt"
		"$SANDYFS" umount "$mnt" >/dev/null 2>&1
		check "$mode: sandyfs umount after the suite" eval '! is_mounted "$mnt"'
	else
		not_ok "$mode: sandyfs mount --allow-other $*"
	fi
}
root_mode root
root_mode lazy --lazy-open

# --- daemon and suite as the test user ---------------------------------------
base=$(scratch)
native=$base/native src=$base/source mnt=$base/mnt
mkdir -p "$native" "$src" "$mnt"
chown "$uid:$gid" "$native" "$src" "$mnt"
# a copy the test user can surely run, whatever the build directory's modes
install -m 755 "$CONF" "$base/conformance"
if ! "$base/conformance" --prepare --as-uid "$uid" --as-gid "$gid" "$native" "$src" \
	${filter:+"$filter"}; then
	not_ok "user: the fixtures owned by root are prepared"
elif mount_as "$TEST_USER" "$src" "$mnt" && is_mounted "$mnt"; then
	# The portable flavour has no O_PATH: see perm_own_caller.
	nsod=
	"$SANDYFS" --version | grep -q portable && nsod=1
	run_suite user runuser -u "$TEST_USER" -- env ${nsod:+CONFORMANCE_DAEMON_NEEDS_READ_ON_DIRS=1} \
		"$base/conformance" --prefix "user: " \
		"$native" "$mnt" "$src" ${filter:+"$filter"}
	check "user: the daemon is still serving after the suite" is_mounted "$mnt"
	runuser -u "$TEST_USER" -- "$SANDYFS" umount "$mnt" >/dev/null 2>&1
	check "user: sandyfs umount after the suite" eval '! is_mounted "$mnt"'
else
	not_ok "user: sandyfs mount as $TEST_USER"
fi

done_testing
