#!/usr/bin/env bash
# How a session ends: the container killed from
# outside, SIGTERM, SIGHUP and Ctrl-C (SIGINT to the process group) sent to
# sandy, the sandyfs daemon killed mid-session, and sandy itself killed
# (with its daemon, leaving a dead ENOTCONN mount). Each must end with no
# mount and no container left and a clear message, and the next sandy in
# that directory must work.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project

# start_session ARGS...: sandy in the background (its own process group,
# like a shell job) with a command that says it started, then sleeps.
# Sets PID, OUT, ERR; returns once the command runs.
start_session() {
	OUT=$base/out ERR=$base/err
	: >"$OUT"
	setsid "$SANDY" "$@" "$proj" -- sh -c 'echo started; exec sleep 60' \
		</dev/null >"$OUT" 2>"$ERR" &
	PID=$!
	kill_at_exit "$PID"
	wait_until 20 grep -q started "$OUT"
}

# daemon_pid: the sandyfs daemon of the running session of $proj.
daemon_pid() {
	local d
	for d in $(session_dirs "$proj"); do
		cat "$d/sandyfs.pid" && return
	done
}

# finish NAME STATUS MESSAGE: waits for sandy and checks the aftermath.
finish() {
	local name=$1 want=$2 msg=$3 rc
	local end=$((SECONDS + 30))
	while kill -0 "$PID" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.05; done
	wait "$PID"
	rc=$?
	check_eq "$name: sandy's exit status" "$want" "$rc"
	if grep -q -- "$msg" "$ERR"; then
		ok "$name: sandy says so ('$msg')"
	else
		not_ok "$name: sandy says so ('$msg')"
		sed 's/^/#   /' "$ERR"
	fi
	check "$name: no mount left (mountinfo)" no_sandy_mounts "$proj"
	check "$name: no container left (docker ps -a)" no_container "$proj"
	next_start "$name"
}

next_start() {
	local out
	out=$("$SANDY" -q "$proj" -- sh -c 'echo again' </dev/null 2>&1)
	check_eq "$1: the next sandy in that directory works" again "$out"
	check "$1: ... and leaves nothing mounted" no_sandy_mounts "$proj"
}

# --- the container killed from outside
start_session
# Asked again for a while: under load the engine's answer can lag the
# command's first output.
container_listed() { test -n "$(docker ps -q --filter "label=sandy.project=$proj")"; }
check "docker kill: the container runs" wait_until 20 container_listed
docker kill "$(docker ps -q --filter "label=sandy.project=$proj")" >/dev/null
finish "docker kill" 137 "killed by SIGKILL"

# --- signals to sandy
start_session
# The directory under the mount, seen through a bind of its parent that
# does not carry the mount along, has no permission bits: a runtime that
# missed the mount would show the agent a directory it cannot use.
under=$base/under
mkdir -p "$under"
d=$(session_dirs "$proj")
if [ -n "$d" ] && mount --bind "$d/view" "$under"; then
	check_eq "the directory under the sandyfs mount is mode 000" 0 \
		"$(stat -c %a "$under/workspace" 2>&1)"
	umount "$under"
else
	not_ok "the directory under the sandyfs mount is mode 000 (no session or no bind)"
fi
kill -TERM "$PID"
finish "SIGTERM" 143 "received SIGTERM; stopping the container"

start_session
kill -HUP "$PID"
finish "SIGHUP" 129 "received SIGHUP; stopping the container"

# Ctrl-C without a terminal: SIGINT to the whole foreground group.
start_session
kill -INT -- "-$PID"
finish "Ctrl-C" 130 "received SIGINT"

# Ctrl-C at a terminal: with a container it reaches the command through the
# container's TTY (the command decides; here it exits 3); without one, the
# command runs in a session of its own, away from the terminal (so that it
# cannot type into it), and sandy hands the SIGINT on, leaving the decision
# to it (an interactive shell just drops the line). script(1) provides the
# terminal.
# The command is exec'd, so no shell of script's ($SHELL, dash on a bare
# machine) sits in the foreground group to die of the SIGINT itself; script -e
# hands back the command's status. The ^C is typed once the command says
# "ctrl-c-ready" (its trap set), however long the session takes to start.
ctrl_c() { # COMMAND-STRING: types ^C once the command has printed "ctrl-c-ready"
	local log=$base/ctrl-c.out
	: >"$log"
	(
		for _ in $(seq 600); do
			grep -q ctrl-c-ready "$log" && break
			sleep 0.1
		done
		printf '\003'
	) | timeout 90 script -qec "exec $1" /dev/null >"$log" 2>&1
	local rc=${PIPESTATUS[1]}
	tr -d '\r' <"$log"
	echo "rc=$rc"
}
out=$(ctrl_c "'$SANDY' -q '$proj' -- sh -c 'trap \"echo got-int; exit 3\" INT; echo ctrl-c-ready; sleep 20'")
check "Ctrl-C at a terminal: reaches the command in the container" grep -q 'got-int$' <<<"$out"
check_eq "Ctrl-C at a terminal: sandy's status is the command's" rc=3 "$(grep '^rc=' <<<"$out")"
check "Ctrl-C at a terminal: no mount left" no_sandy_mounts "$proj"
check "Ctrl-C at a terminal: no container left" no_container "$proj"
out=$(ctrl_c "'$SANDY' -q --runtime=none '$proj' -- sh -c 'trap \"echo got-int\" INT; echo ctrl-c-ready; sleep 4; echo survived'")
check "Ctrl-C at a terminal, none: the command gets it" grep -q 'got-int$' <<<"$out"
check "Ctrl-C at a terminal, none: the command decides to go on" grep -qx survived <<<"$out"
check_eq "Ctrl-C at a terminal, none: sandy's status is the command's" rc=0 \
	"$(grep '^rc=' <<<"$out")"
check "Ctrl-C at a terminal, none: no mount left" no_sandy_mounts "$proj"

# --- the sandyfs daemon killed mid-session
start_session
dpid=$(daemon_pid)
check "sandyfs killed: the daemon is found" test -n "$dpid"
[ -n "$dpid" ] && kill -KILL "$dpid"
finish "sandyfs killed" 125 "sandyfs stopped serving '$proj'"

# --- sandy and its daemon killed: a crashed run leaves a dead mount
start_session
dpid=$(daemon_pid)
kill -KILL "$PID" "$dpid"
wait "$PID" 2>/dev/null
dead() {
	local d
	d=$(session_dirs "$proj")
	# A name never looked up, which the kernel must ask the daemon for (the
	# mountpoint's own attributes may be answered from its cache).
	[ -n "$d" ] && awk -v m="$d/view/workspace" '$5 == m { f = 1 } END { exit !f }' \
		/proc/self/mountinfo && ! stat "$d/view/workspace/never-looked-up-$$" >/dev/null 2>&1 &&
		[[ $(stat "$d/view/workspace/never-looked-up-$$" 2>&1) == *"not connected"* ]]
}
check "crash: a dead (ENOTCONN) mount is left behind" dead
wait_until 10 no_container "$proj"
out=$("$SANDY" "$proj" -- sh -c 'echo after-crash' </dev/null 2>&1)
check "crash: the next start says it cleans up" \
	grep -q "cleaning up after an earlier session of '$proj'" <<<"$out"
check "crash: the next start works" grep -qx after-crash <<<"$out"
check "crash: nothing is left mounted" no_sandy_mounts "$proj"
check "crash: no container is left" no_container "$proj"
check "crash: no session directory is left" no_session_dir "$proj"

# --- without a container
start_session --runtime=none
kill -TERM "$PID"
finish "none, SIGTERM" 143 "received SIGTERM; stopping the command"

start_session --runtime=none
dpid=$(daemon_pid)
[ -n "$dpid" ] && kill -KILL "$dpid"
finish "none, sandyfs killed" 125 "sandyfs stopped serving"

# A copy of the session's mount in another mount namespace (podman's
# conmon makes one whenever a container starts) keeps the daemon's
# connection after sandy's unmount: sandy ends the daemon all the same,
# before it reads the audit log for its summary, and the copy serves
# nothing of the project any more.
start_session --runtime=none
dpid=$(daemon_pid)
d=$(session_dirs "$proj")
echo kept >"$proj/copy-probe.txt"
unshare --mount sleep 300 &
holder=$!
kill_at_exit "$holder"
check "a copy: the other namespace sees the project through the mount" wait_until 10 \
	eval 'nsenter --target $holder --mount cat "$d/view/workspace/copy-probe.txt" 2>/dev/null | grep -qx kept'
kill -TERM "$PID"
wait "$PID"
# Ended: no process, or a zombie not reaped yet (pid_alive: the daemon's
# parent is whoever adopted it).
check "a copy: sandy has ended its daemon when it exits" eval '[ -n "$dpid" ] && ! pid_alive "$dpid"'
check "a copy: the other namespace's copy serves nothing" \
	eval '! nsenter --target $holder --mount cat "$d/view/workspace/copy-probe.txt" >/dev/null 2>&1'
kill "$holder" 2>/dev/null
rm -f "$proj/copy-probe.txt"
check "a copy: no mount left" no_sandy_mounts "$proj"

# A command that ignores SIGTERM is killed after the grace period.
OUT=$base/out ERR=$base/err
: >"$OUT"
setsid "$SANDY" --runtime=none "$proj" -- sh -c 'trap "" TERM; echo started; while :; do sleep 1; done' \
	</dev/null >"$OUT" 2>"$ERR" &
PID=$!
kill_at_exit "$PID"
wait_until 20 grep -q started "$OUT"
kill -TERM "$PID"
finish "none, SIGTERM ignored" 143 "received SIGTERM"
done_testing
