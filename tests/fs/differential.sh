#!/usr/bin/env bash
# Differential: random sequences of file operations (differential.py)
# replayed step by step on a native directory and through a mount, every
# result and the trees compared. Six ways: the daemon as root with
# --allow-other, opens judged and --lazy-open, each with root and an
# unprivileged user as the caller; and the daemon as that user, judged
# and lazy. The daemon as the user gets no mode 000, which it cannot open
# at all (docs/DESIGN.md, Credentials; differential.py, OWNER_MODES).
# SANDY_DIFF_HISTORY=N prints N steps before a divergence (default 24).
#
# Time-boxed: SANDY_DIFF_SECONDS per way (default 10); SANDY_DIFF_SEED
# replays one sequence (the seed is in every line printed).
source "$SANDY_SRC/tests/lib.sh"

seconds=${SANDY_DIFF_SECONDS:-10}
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
check "the test user $TEST_USER exists" ensure_test_user || done_testing
install -m 755 "$SANDY_SRC/tests/fs/differential.py" "$_scratch_base/differential.py"

# way LABEL DAEMON(root|user) CALLER(root|user) [MOUNT OPTION...]
way() {
	local label=$1 daemon=$2 caller=$3
	shift 3
	local base native src mnt
	base=$(scratch)
	native=$base/native src=$base/source mnt=$base/mnt
	mkdir -p "$native" "$src" "$mnt"
	[ "$caller" = user ] || [ "$daemon" = user ] && chown "$TEST_USER:" "$native" "$src" "$mnt"
	if [ "$daemon" = root ]; then
		mount_sandyfs --allow-other "$@" "$src" "$mnt"
	else
		mount_as "$TEST_USER" "$@" "$src" "$mnt"
	fi || {
		not_ok "$label: the mount"
		return
	}
	local run=("$PYTHON" "$_scratch_base/differential.py" --label "$label" --seconds "$seconds"
		${owner_modes:+--owner-modes}
		${SANDY_DIFF_SEED:+--seed "$SANDY_DIFF_SEED"} "$native" "$mnt")
	if [ "$caller" = user ]; then
		runuser -u "$TEST_USER" -- "${run[@]}" || _failed=1
	else
		"${run[@]}" || _failed=1
	fi
	check "$label: the daemon still serves" is_mounted "$mnt"
}

way "root daemon, judged, root caller" root root
way "root daemon, judged, user caller" root user
way "root daemon, lazy, root caller" root root --lazy-open
way "root daemon, lazy, user caller" root user --lazy-open
owner_modes=1
way "user daemon, judged" user user
way "user daemon, lazy" user user --lazy-open
done_testing
