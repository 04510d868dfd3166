#!/usr/bin/env bash
# SIGTERM and SIGINT (and SIGHUP, as --help says) to the
# daemon unmount cleanly: the mount leaves the mount table within a few
# seconds, the daemon exits, and the mountpoint is a plain directory again
# that takes a new mount; also while a process holds the mount busy. The
# same for `sandyfs mount -f`, whose exit status is then 0. An unprivileged
# mount goes away with `sandyfs umount` run by its user, and on SIGTERM.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
src=$base/src mnt=$base/mnt
mkdir -p "$src" "$mnt"
echo served >"$src/hello"

# gone_cleanly DESC MNT PID: the mount leaves the table and PID exits within
# 5 s; the mountpoint is an empty directory again; SOURCE is untouched.
gone_cleanly() {
	local desc=$1 mp=$2 pid=$3
	if poll_ms 5000 eval '! is_mounted "$mp"'; then
		ok "$desc: the mount leaves the mount table ($POLL_MS ms)"
	else
		not_ok "$desc: the mount leaves the mount table (still there after 5 s)"
	fi
	if poll_ms 5000 eval '! pid_alive $pid'; then
		ok "$desc: the daemon exits ($POLL_MS ms)"
	else
		not_ok "$desc: the daemon exits (still running after 5 s)"
	fi
	check "$desc: the mountpoint is an empty directory again" \
		eval 'stat "$mp" >/dev/null 2>&1 && [ -z "$(ls -A "$mp" 2>&1)" ]'
	check_eq "$desc: SOURCE is untouched" served "$(cat "$src/hello")"
}

# remounts DESC: the mountpoint takes a new mount, which serves SOURCE and
# goes away with sandyfs umount.
remounts() {
	local desc=$1
	if mount_sandyfs "$src" "$mnt" && [ "$(cat "$mnt/hello" 2>&1)" == served ]; then
		ok "$desc: a new mount on the same mountpoint works"
	else
		not_ok "$desc: a new mount on the same mountpoint works"
	fi
	"$SANDYFS" umount "$mnt" 2>/dev/null
	wait_until 5 eval '! is_mounted "$mnt"'
}

# --- the daemon (sandyfs mount daemonizes) -----------------------------------
# SIGINT may be ignored by inheritance when the suite itself runs in the
# background; env puts the default back, as an interactive shell has it.
for sig in TERM INT HUP; do
	rm -f "$base/pid"
	track_mount "$mnt"
	if ! env --default-signal=INT "$SANDYFS" mount "${ALLOW_ALL[@]}" --pid-file "$base/pid" "$src" "$mnt"; then
		not_ok "SIG$sig: mount"
		continue
	fi
	pid=$(cat "$base/pid" 2>/dev/null)
	at_exit "kill -9 $pid 2>/dev/null"
	check "SIG$sig: the pid file names a running daemon (${pid:-none})" pid_alive "${pid:-0}"
	check_eq "SIG$sig: the mount serves SOURCE" served "$(cat "$mnt/hello" 2>&1)"
	kill -$sig "$pid"
	gone_cleanly "SIG$sig" "$mnt" "$pid"
	remounts "SIG$sig"
done

# SIGTERM while the mount is busy (a process has its working directory and
# a file open in it): the mount still goes away.
if mount_sandyfs --pid-file "$base/pid" "$src" "$mnt"; then
	pid=$(cat "$base/pid")
	at_exit "kill -9 $pid 2>/dev/null"
	(cd "$mnt" && exec 3<hello && exec sleep 60) &
	holder=$!
	kill_at_exit $holder
	sleep 0.2
	check "busy: a process holds the mount" pid_alive $holder
	kill -TERM "$pid"
	gone_cleanly "SIGTERM on a busy mount" "$mnt" "$pid"
	kill -9 $holder 2>/dev/null
	wait $holder 2>/dev/null
	remounts "SIGTERM on a busy mount"
else
	not_ok "busy: mount"
fi

# SIGUSR1 with --stats: the daemon writes its request counters and goes on
# serving; at unmount it writes them a last time.
if mount_sandyfs --pid-file "$base/pid" --stats "$base/stats.json" "$src" "$mnt"; then
	pid=$(cat "$base/pid")
	at_exit "kill -9 $pid 2>/dev/null"
	check "stats: the file is there from the start" grep -q '"serial": 1,' "$base/stats.json"
	mkdir "$mnt/made" && cat "$mnt/hello" >/dev/null
	kill -USR1 "$pid"
	check "stats: SIGUSR1 writes a fresh copy" \
		wait_until 5 grep -q '"serial": 2,' "$base/stats.json"
	check "stats: the mkdir is counted" \
		grep -q '^  "mkdir": {"count": 1, "usec": [0-9]*}' "$base/stats.json"
	check "stats: so are lookups" grep -q '^  "lookup": {"count": [1-9]' "$base/stats.json"
	check "stats: the daemon is still serving" test "$(cat "$mnt/hello" 2>&1)" == served
	rmdir "$mnt/made"
	"$SANDYFS" umount "$mnt"
	gone_cleanly "stats" "$mnt" "$pid"
	check "stats: unmounting writes the counters a last time" \
		grep -q '^  "rmdir": {"count": 1,' "$base/stats.json"
	check "stats: no temporary file is left" test ! -e "$base/stats.json.tmp"
else
	not_ok "stats: mount --stats"
fi

# --- sandyfs mount -f in the background ------------------------------------------
# A background job of a script starts with SIGINT ignored; env again.
for sig in TERM INT; do
	if ! mount_foreground "$mnt" "$base/fg.err" \
		env --default-signal=INT "$SANDYFS" mount "${ALLOW_ALL[@]}" -f "$src" "$mnt"; then
		not_ok "mount -f, SIG$sig: the mount becomes live"
		diag "stderr: $(cat "$base/fg.err")"
		kill -9 $FG_PID 2>/dev/null
		continue
	fi
	fpid=$FG_PID
	check_eq "mount -f, SIG$sig: the mount serves SOURCE" served "$(cat "$mnt/hello" 2>&1)"
	check "mount -f, SIG$sig: still in the foreground" pid_alive $fpid
	kill -$sig $fpid
	gone_cleanly "mount -f, SIG$sig" "$mnt" "$fpid"
	if ! pid_alive $fpid; then
		wait $fpid
		status=$?
		check_eq "mount -f, SIG$sig: exits with status 0" 0 $status
		[ $status -ne 0 ] && diag "stderr: $(head -c 1000 "$base/fg.err")"
	else
		not_ok "mount -f, SIG$sig: exits with status 0"
	fi
	remounts "mount -f, SIG$sig"
done

# --- an unprivileged mount ---------------------------------------------------------
if ! ensure_test_user; then
	not_ok "create the test user $TEST_USER"
	done_testing
fi
ubase=$(scratch)
usrc=$ubase/src umnt=$ubase/mnt
mkdir -p "$usrc" "$umnt"
echo "theirs" >"$usrc/hello"
chown -R "$TEST_USER:" "$ubase"
as_user() { runuser -u "$TEST_USER" -- "$@"; }

for how in umount TERM; do
	rm -f "$ubase/pid"
	if ! mount_as "$TEST_USER" --pid-file "$ubase/pid" "$usrc" "$umnt"; then
		not_ok "unprivileged ($how): mount by $TEST_USER"
		continue
	fi
	ok "unprivileged ($how): mount by $TEST_USER"
	upid=$(cat "$ubase/pid" 2>/dev/null)
	at_exit "kill -9 $upid 2>/dev/null"
	check_eq "unprivileged ($how): the daemon runs as $TEST_USER" "$TEST_USER" \
		"$(stat -c %U "/proc/${upid:-0}" 2>/dev/null)"
	check_eq "unprivileged ($how): the mount serves SOURCE to its user" theirs \
		"$(as_user cat "$umnt/hello" 2>&1)"
	as_user sh -c "echo written >'$umnt/new.$how'"
	check_eq "unprivileged ($how): a file written through the mount lands on the host, owned by $TEST_USER" \
		"written $TEST_USER" "$(cat "$usrc/new.$how" 2>&1) $(stat -c %U "$usrc/new.$how" 2>&1)"
	if [ $how == umount ]; then
		as_user "$SANDYFS" umount "$umnt" 2>"$ubase/err"
		rc=$?
		check_eq "unprivileged: sandyfs umount by $TEST_USER exits 0" 0 $rc
		[ $rc -ne 0 ] && diag "stderr: $(cat "$ubase/err")"
	else
		kill -TERM "$upid"
	fi
	if poll_ms 5000 eval '! is_mounted "$umnt"'; then
		ok "unprivileged ($how): the mount leaves the mount table ($POLL_MS ms)"
	else
		not_ok "unprivileged ($how): the mount leaves the mount table (still there after 5 s)"
	fi
	check "unprivileged ($how): the daemon exits" wait_until 5 eval '! pid_alive $upid'
	check "unprivileged ($how): the mountpoint is an empty directory again" \
		eval '[ -z "$(ls -A "$umnt" 2>&1)" ]'
done

done_testing
