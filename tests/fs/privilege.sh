#!/usr/bin/env bash
# --drop-mount-privilege: a root daemon gives up CAP_SYS_ADMIN once the
# mount is live, in every thread, before anything is served, and serves as
# before: an allowed write lands on the host, a protected name is refused
# with EROFS and never reaches the host, a write as another uid makes a
# file of that uid, chown works as root's. What it costs is checked too:
# trusted.* attributes are refused (a control mount without the option
# sets one), and on SIGTERM the daemon cannot unmount; it closes its
# connection, completes its audit log and exits 0, leaving a dead mount
# that `sandyfs umount` (as root, with the capability) removes.
# Twice: with CAP_SETPCAP, which lets the daemon drop the capability from
# its bounding set too; and without it, as in sandy's own container, where
# the bounding set keeps it and no_new_privs stops an exec from taking it
# back (foreground, as the container runs it). Then once unmounted from
# outside, when the daemon just ends; and as an unprivileged user's daemon,
# which has nothing to give up and unmounts itself as ever.
source "$SANDY_SRC/tests/lib.sh"

ADMIN=21 SETPCAP=8

# has_cap FIELD BIT [STATUS-FILE]: FIELD (CapEff, ...) has BIT set.
has_cap() {
	local v
	v=$(awk -v f="$1:" '$1 == f { print $2 }' "${3:-/proc/self/status}") || return 1
	[ -n "$v" ] && (((16#$v >> $2) & 1))
}

# tasks_with FIELD BIT PID: how many of PID's threads have BIT in FIELD;
# tasks_without: how many do not.
tasks_with() {
	local t n=0
	for t in /proc/"$3"/task/*/status; do
		has_cap "$1" "$2" "$t" && n=$((n + 1))
	done
	echo $n
}
tasks_without() {
	local t n=0
	for t in /proc/"$3"/task/*/status; do
		has_cap "$1" "$2" "$t" || n=$((n + 1))
	done
	echo $n
}

# field_of_all FIELD PID: FIELD's value in each of PID's threads, one per
# line, sorted and made unique.
field_of_all() {
	awk -v f="$1:" '$1 == f { print $2 }' /proc/"$2"/task/*/status | sort -u
}

if [ "$(id -u)" != 0 ] || ! has_cap CapEff $ADMIN || ! has_cap CapEff $SETPCAP; then
	skip_all "needs root with CAP_SYS_ADMIN and CAP_SETPCAP (mounts without fusermount3)"
fi
ensure_test_user || {
	not_ok "the test user $TEST_USER exists"
	done_testing
}
uid=$(id -u "$TEST_USER")

base=$(scratch)
src=$base/src mnt=$base/mnt
mkdir -p "$src/shared" "$mnt"
real=$(realpath "$mnt")
chmod 777 "$src/shared"
echo served >"$src/hello"

# --- control: without the option the daemon holds the capability ------------
if mount_sandyfs --allow-other --pid-file "$base/pid" "$src" "$mnt"; then
	pid=$(cat "$base/pid")
	at_exit "kill -9 $pid 2>/dev/null"
	cat "$mnt/hello" >/dev/null
	check "control: the daemon holds CAP_SYS_ADMIN in CapEff" \
		test "$(tasks_with CapEff $ADMIN "$pid")" -gt 0
	: >"$mnt/control"
	check "control: root sets a trusted.* attribute through the mount" \
		setfattr -n trusted.sandytest -v 1 "$mnt/control"
	check_eq "control: ... and it is on the host" 1 \
		"$(getfattr --only-values -n trusted.sandytest "$src/control" 2>/dev/null)"
	"$SANDYFS" umount "$mnt"
	check "control: sandyfs umount" wait_until 5 eval '! is_mounted "$mnt"'
	rm -f "$src/control"
else
	not_ok "control: mount"
fi

# serves DESC PID: what the daemon PID serves at $mnt still works, checked
# on $src: a read, an allowed write, a refused .envrc, a write as the test
# user, chown as root and as the test user, and a trusted.* attribute
# refused now.
serves() {
	local desc=$1 out
	check_eq "$desc: a read" served "$(cat "$mnt/hello" 2>&1)"
	echo new >"$mnt/new" 2>/dev/null
	check_eq "$desc: an allowed write lands on the host" new "$(cat "$src/new" 2>&1)"
	out=$(echo x 2>&1 >"$mnt/.envrc")
	check "$desc: a write to .envrc is refused with EROFS ($out)" \
		eval '[[ $out == *"Read-only file system"* ]]'
	check "$desc: ... and .envrc is not on the host" test ! -e "$src/.envrc"
	runuser -u "$TEST_USER" -- sh -c "echo mine >'$mnt/shared/mine'"
	check_eq "$desc: a write as $TEST_USER makes a file of uid $uid on the host" \
		"$uid mine" "$(stat -c %u "$src/shared/mine" 2>&1) $(cat "$src/shared/mine" 2>&1)"
	chown "$TEST_USER" "$mnt/new"
	check_eq "$desc: root's chown through the mount reaches the host" \
		"$uid" "$(stat -c %u "$src/new" 2>&1)"
	out=$(runuser -u "$TEST_USER" -- chown 0 "$mnt/shared/mine" 2>&1)
	check "$desc: $TEST_USER cannot give its file to root ($out)" \
		eval '[[ $out == *"Operation not permitted"* ]]'
	check_eq "$desc: ... and the host file stays $TEST_USER's" \
		"$uid" "$(stat -c %u "$src/shared/mine" 2>&1)"
	out=$(setfattr -n trusted.sandytest -v 1 "$mnt/new" 2>&1)
	check "$desc: a trusted.* attribute is refused without CAP_SYS_ADMIN ($out)" \
		eval '[[ $out == *"Operation not permitted"* ]]'
	check "$desc: ... and the host file has none" \
		eval '! getfattr -n trusted.sandytest "$src/new" >/dev/null 2>&1'
	rm -f "$src/new" "$src/shared/mine"
}

# dropped DESC PID: none of PID's threads (there are several by now) holds
# CAP_SYS_ADMIN in its effective, permitted or inheritable set.
dropped() {
	local desc=$1 pid=$2 f
	check "$desc: the daemon runs several threads ($(ls /proc/"$pid"/task | wc -l))" \
		test "$(ls /proc/"$pid"/task | wc -l)" -ge 2
	for f in CapEff CapPrm CapInh; do
		check_eq "$desc: no thread has CAP_SYS_ADMIN in $f ($(field_of_all $f "$pid" | xargs))" \
			0 "$(tasks_with $f $ADMIN "$pid")"
	done
	check "$desc: the rest of root's capabilities stay (CAP_CHOWN, CAP_SETUID)" \
		eval 'has_cap CapEff 0 /proc/$pid/status && has_cap CapEff 7 /proc/$pid/status'
}

# flood N: N refused creates of .envrc, faster than the audit log's rate.
flood() {
	local i
	for ((i = 0; i < $1; i++)); do : 2>/dev/null >"$mnt/.envrc"; done
}

# audit_adds_up DESC LOG N: LOG's records and its suppressed counts add up
# to N, and its last line is the suppressed count the daemon wrote at its
# end.
audit_adds_up() {
	local desc=$1 log=$2 records suppressed
	records=$(grep -c '"op":' "$log")
	suppressed=$(grep -o '"suppressed":[0-9]*' "$log" | awk -F: '{ s += $2 } END { print s + 0 }')
	check_eq "$desc: the audit log's records ($records) and suppressed counts ($suppressed) add up" \
		"$3" $((records + suppressed))
	check "$desc: its last line is the count suppressed at the end" \
		eval 'tail -n 1 "$log" | grep -q "\"suppressed\":[1-9]"'
}

# left_dead DESC PID: after SIGTERM the daemon PID exits and leaves the mount
# in the table, dead; sandyfs umount removes it.
left_dead() {
	local desc=$1 pid=$2
	check "$desc: SIGTERM ends the daemon" wait_until 5 eval '! pid_alive $pid'
	check "$desc: the pid file is removed" test ! -e "$base/pid"
	check "$desc: the mount is left in the table" is_mounted "$mnt"
	# The main thread can be reaped before the last of the others has
	# closed /dev/fuse: the connection ends with the last one.
	check "$desc: ... dead (ENOTCONN)" \
		wait_until 5 eval '[[ $(stat "$mnt" 2>&1) == *"Transport endpoint is not connected"* ]]'
	check "$desc: sandyfs umount removes it" "$SANDYFS" umount "$mnt"
	check "$desc: nothing is mounted there any more" eval '! is_mounted "$mnt"'
	check "$desc: the mountpoint is an empty directory again" \
		eval 'stat "$mnt" >/dev/null 2>&1 && [ -z "$(ls -A "$mnt" 2>&1)" ]'
	check_eq "$desc: SOURCE is untouched" served "$(cat "$src/hello")"
}

# --- with CAP_SETPCAP: the bounding set loses it too --------------------------
rm -f "$base/pid" "$base/audit"
if mount_sandyfs --allow-other --drop-mount-privilege --pid-file "$base/pid" \
	--audit "$base/audit" "$src" "$mnt"; then
	pid=$(cat "$base/pid")
	at_exit "kill -9 $pid 2>/dev/null"
	serves "setpcap" "$pid"
	dropped "setpcap" "$pid"
	check_eq "setpcap: no thread has it in its bounding set" 0 "$(tasks_with CapBnd $ADMIN "$pid")"
	check_eq "setpcap: no_new_privs is not needed" 0 "$(field_of_all NoNewPrivs "$pid" | xargs)"
	flood 2000
	kill -TERM "$pid"
	left_dead "setpcap" "$pid"
	audit_adds_up "setpcap" "$base/audit" 2001
else
	not_ok "setpcap: mount --drop-mount-privilege"
fi

# --- without CAP_SETPCAP, in the foreground: sandy's own container -----------
rm -f "$base/pid" "$base/audit"
track_mount "$mnt"
setpriv --bounding-set=-setpcap -- env --default-signal=INT "$SANDYFS" mount "${ALLOW_ALL[@]}" \
	-f --allow-other --drop-mount-privilege --pid-file "$base/pid" --audit "$base/audit" \
	"$src" "$mnt" 2>"$base/fg.err" &
fpid=$!
at_exit "kill -9 $fpid 2>/dev/null"
if wait_until 10 test -s "$base/pid"; then
	pid=$(cat "$base/pid")
	check_eq "no setpcap: the pid file names the foreground daemon" "$fpid" "$pid"
	check "no setpcap: the daemon started without CAP_SETPCAP" \
		eval '! has_cap CapEff $SETPCAP /proc/$pid/status'
	serves "no setpcap" "$pid"
	dropped "no setpcap" "$pid"
	check_eq "no setpcap: every thread's bounding set keeps it (none can drop it)" \
		0 "$(tasks_without CapBnd $ADMIN "$pid")"
	check_eq "no setpcap: so every thread has no_new_privs" 1 "$(field_of_all NoNewPrivs "$pid" | xargs)"
	flood 2000
	kill -TERM "$pid"
	wait "$fpid"
	check_eq "no setpcap: the daemon exits with status 0" 0 $?
	check_eq "no setpcap: it says why the mount stays" \
		"sandyfs: cannot unmount '$real' without the privilege to mount (--drop-mount-privilege): its connection is closed; 'sandyfs umount $real' as root removes it" \
		"$(cat "$base/fg.err")"
	left_dead "no setpcap" "$pid"
	audit_adds_up "no setpcap" "$base/audit" 2001
else
	not_ok "no setpcap: mount -f --drop-mount-privilege serves"
	diag "stderr: $(cat "$base/fg.err")"
fi

# --- unmounted from outside: the daemon ends and has nothing to say ----------
rm -f "$base/pid"
track_mount "$mnt"
"$SANDYFS" mount "${ALLOW_ALL[@]}" -f --drop-mount-privilege --pid-file "$base/pid" \
	"$src" "$mnt" 2>"$base/fg.err" &
fpid=$!
at_exit "kill -9 $fpid 2>/dev/null"
if wait_until 10 test -s "$base/pid"; then
	check_eq "umount: the daemon serves" served "$(cat "$mnt/hello" 2>&1)"
	check "umount: sandyfs umount (as root) removes the mount" "$SANDYFS" umount "$mnt"
	wait "$fpid"
	check_eq "umount: the daemon exits with status 0" 0 $?
	check_eq "umount: it says nothing" "" "$(cat "$base/fg.err")"
	check "umount: nothing is mounted there any more" eval '! is_mounted "$mnt"'
else
	not_ok "umount: mount -f --drop-mount-privilege serves"
	diag "stderr: $(cat "$base/fg.err")"
fi

# --- a daemon of an unprivileged user: nothing to give up -------------------
# It never held the capability, so it sets no no_new_privs either, which
# would leave the set-user-ID fusermount3 it unmounts with powerless.
ubase=$base/user usrc=$base/user/src umnt=$base/user/mnt
mkdir -p "$usrc" "$umnt"
echo served >"$usrc/hello"
chown -R "$TEST_USER" "$ubase"
if mount_as "$TEST_USER" --drop-mount-privilege --pid-file "$ubase/pid" "$usrc" "$umnt"; then
	pid=$(cat "$ubase/pid")
	at_exit "kill -9 $pid 2>/dev/null"
	check_eq "user: the daemon serves" served "$(runuser -u "$TEST_USER" -- cat "$umnt/hello" 2>&1)"
	check_eq "user: no_new_privs is not set" 0 "$(field_of_all NoNewPrivs "$pid" | xargs)"
	kill -TERM "$pid"
	check "user: SIGTERM ends the daemon" wait_until 5 eval '! pid_alive $pid'
	check "user: and it unmounts itself" eval '! is_mounted "$umnt"'
else
	not_ok "user: mount --drop-mount-privilege as $TEST_USER"
fi

done_testing
