#!/usr/bin/env bash
# Correctness: the POSIX conformance
# suite (tests/conformance/conformance.c). Every case runs on a native
# directory and on a sandyfs mount of a source directory next to it (the
# same host filesystem) and what the two runs observe must be equal. Run by
# tests/run.sh on each build flavour, so the fallback build (no O_PATH,
# openat2 or /proc) passes the same suite.
#
# Four modes, each case printed with the mode in front of its name:
#   root: the daemon runs as root with --allow-other; the suite runs as root
#         and does the unprivileged parts as the test user (--as-uid/--as-gid);
#   lazy: the same with --lazy-open (the kernel opens files without asking);
#   user: the daemon runs as the test user without --allow-other and so does
#         the suite; files owned by "someone else" (root) are prepared as root
#         beforehand (conformance --prepare);
#   user-lazy: the same with --lazy-open.
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
user_mode() { # MODE [MOUNT OPTION...]
	local mode=$1 base native src mnt nsod=
	shift
	base=$(scratch)
	native=$base/native src=$base/source mnt=$base/mnt
	mkdir -p "$native" "$src" "$mnt"
	chown "$uid:$gid" "$native" "$src" "$mnt"
	# a copy the test user can surely run, whatever the build directory's modes
	install -m 755 "$CONF" "$base/conformance"
	if ! "$base/conformance" --prepare --as-uid "$uid" --as-gid "$gid" "$native" "$src" \
		${filter:+"$filter"}; then
		not_ok "$mode: the fixtures owned by root are prepared"
		return
	fi
	if ! mount_as "$TEST_USER" "$@" "$src" "$mnt" || ! is_mounted "$mnt"; then
		not_ok "$mode: sandyfs mount as $TEST_USER $*"
		return
	fi
	# The portable flavour has no O_PATH: see perm_own_caller.
	"$SANDYFS" --version | grep -q portable && nsod=1
	run_suite "$mode" runuser -u "$TEST_USER" -- env ${nsod:+CONFORMANCE_DAEMON_NEEDS_READ_ON_DIRS=1} \
		"$base/conformance" --prefix "$mode: " \
		"$native" "$mnt" "$src" ${filter:+"$filter"}
	check "$mode: the daemon is still serving after the suite" is_mounted "$mnt"
	runuser -u "$TEST_USER" -- "$SANDYFS" umount "$mnt" >/dev/null 2>&1
	check "$mode: sandyfs umount after the suite" eval '! is_mounted "$mnt"'
}
user_mode user
user_mode user-lazy --lazy-open

# --- what the daemon as the user refuses where the host would not -----------
# docs/DESIGN.md, Credentials: without CAP_DAC_OVERRIDE the daemon cannot
# list a directory its owner made unlistable, so a rename that moves one is
# refused (what it holds cannot be judged where it arrives), with the
# reason in the audit log; and with --lazy-open it keeps at most its budget
# of fds for files whose mode bars their owner, the least recently used
# going first.
if [ -z "$filter" ]; then
	base=$(scratch)
	src=$base/source mnt=$base/mnt
	mkdir -p "$src/p/d0" "$src/p/d400" "$src/p/d300" "$mnt"
	echo x >"$src/p/d0/f"
	echo x >"$src/p/d400/f"
	echo x >"$src/p/d300/f"
	chown -R "$uid:$gid" "$base"
	if mount_as "$TEST_USER" --audit "$base/audit" "$src" "$mnt"; then
		for m in 0 400 300; do
			runuser -u "$TEST_USER" -- chmod "$m" "$mnt/p/d$m"
			err=$(runuser -u "$TEST_USER" -- mv "$mnt/p/d$m" "$mnt/p/e$m" 2>&1)
			check "user, refused: mv of a mode-$m directory fails with EACCES" \
				grep -q "Permission denied" <<<"$err"
			check "user, refused: the host still has p/d$m and no p/e$m" \
				eval '[ -d "$src/p/d$m" ] && [ ! -e "$src/p/e$m" ]'
			check "user, refused: the audit log says why for p/d$m" \
				grep -q "\"path\":\"p/d$m\".*cannot be listed and searched.*EACCES" "$base/audit"
			chmod 755 "$src/p/d$m"
		done
		# An open file in a directory its owner made unsearchable: the
		# daemon, as that owner, cannot reach it by name to change it.
		mkdir -p "$src/q" && echo x >"$src/q/f" && chown -R "$uid:$gid" "$src/q"
		out=$(runuser -u "$TEST_USER" -- python3 -c '
import os, sys
d = sys.argv[1]
fd = os.open(d + "/f", os.O_RDWR)
os.chmod(d, 0)
for name, call in (("write", lambda: os.write(fd, b"y")),
                   ("fchmod", lambda: os.fchmod(fd, 0o600))):
    try:
        call()
        print(name, "ok")
    except OSError as e:
        print(name, os.strerror(e.errno))
os.chmod(d, 0o755)' "$mnt/q" 2>&1)
		# The portable flavour opens a directory to check where a file
		# is (no O_PATH), which a closed one refuses: even a write
		# through the descriptor fails there (docs/DESIGN.md, Credentials).
		if "$SANDYFS" --version | grep -q portable; then
			check_eq "user, refused: on the portable flavour the write fails with EACCES" \
				"write Permission denied" "$(grep ^write <<<"$out")"
			check_eq "user, refused: and the host file keeps its content" x \
				"$(cat "$src/q/f")"
		else
			check_eq "user, refused: write through the descriptor still works" "write ok" \
				"$(grep ^write <<<"$out")"
		fi
		check_eq "user, refused: fchmod in an unsearchable directory fails with EACCES" \
			"fchmod Permission denied" "$(grep ^fchmod <<<"$out")"
		check_eq "user, refused: the host file's mode is unchanged" 644 \
			"$(stat -c %a "$src/q/f")"
		runuser -u "$TEST_USER" -- "$SANDYFS" umount "$mnt" >/dev/null 2>&1
	else
		not_ok "user, refused: sandyfs mount as $TEST_USER"
	fi

	# The budget: a quarter of the fd limit, at least 16 (ulimit -n 64).
	base=$(scratch)
	src=$base/source mnt=$base/mnt
	mkdir -p "$src" "$mnt"
	chown "$uid:$gid" "$src" "$mnt"
	cat >"$base/budget.py" <<'PY'
import os, sys
mnt, n = sys.argv[1], int(sys.argv[2])
first = os.open(mnt + "/first", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
for i in range(n):
    os.close(os.open("%s/n%03d" % (mnt, i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
last = os.open(mnt + "/last", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
for name, fd in (("first", first), ("last", last)):
    try:
        os.write(fd, b"data")
        print(name, "ok")
    except OSError as e:
        print(name, os.strerror(e.errno))
PY
	runuser -u "$TEST_USER" -- bash -c 'ulimit -n 64 && exec "$0" mount "$@"' "$SANDYFS" \
		"${ALLOW_ALL[@]}" --lazy-open "$src" "$mnt" && track_mount "$mnt"
	if is_mounted "$mnt"; then
		out=$(runuser -u "$TEST_USER" -- python3 "$base/budget.py" "$mnt" 200 2>&1)
		check_eq "user-lazy, budget: the file created last is written through its descriptor" \
			"last ok" "$(grep ^last <<<"$out")"
		check_eq "user-lazy, budget: the one pushed out by 200 newer fails as its mode says" \
			"first Permission denied" "$(grep ^first <<<"$out")"
		check_eq "user-lazy, budget: on the host, last has the data and first none" \
			"4 0" "$(stat -c %s "$src/last") $(stat -c %s "$src/first")"
		check_eq "user-lazy, budget: all 200 files were made (kept fds never exhaust the limit)" \
			"200" "$(find "$src" -name 'n*' -type f | wc -l)"
		runuser -u "$TEST_USER" -- "$SANDYFS" umount "$mnt" >/dev/null 2>&1
	else
		not_ok "user-lazy, budget: sandyfs mount under ulimit -n 64"
	fi
fi

done_testing
