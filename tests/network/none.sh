#!/usr/bin/env bash
# --runtime=none (bubblewrap) without a container engine: the sandbox has
# a network namespace of its own. The host's abstract Unix sockets and
# loopback services are out of its reach (their listeners see nothing);
# allowlisted names of a test internet (internet.bash) answer through
# sandy's proxy, a tunnel and a plain request, other names get the 403
# that says how to allow them, without a query for them leaving, and
# each request is one record in the egress log and the summary; `sandy
# allow` opens a name in the running session. A fork loop and a memory hog
# stop at their limits, as root (a cgroup here when there is one) and as
# an ordinary user (rlimits in the sandbox's user namespace, which count
# its processes alone); the defaults are a container's; nothing is left
# running, also when sandy is killed outright (the next session clears
# the cgroup). --network=open still shares the host's network.
source "$SANDY_SRC/tests/network/internet.bash"
unset SANDY_NETWORK
new_project
check "the test internet is up" start_internet || done_testing
export SANDY_DNS_UPSTREAM=$INET_DNS
allowed=${INET_ADDR[allowed.test]}

# Listeners on the host that the sandbox must not reach: an abstract Unix
# socket and TCP on 127.0.0.1. Each logs one line per connection.
abstract=sandy-none-test-$$
tcpport=$((20000 + $$ % 20000))
"$PYTHON" -u - "$abstract" "$tcpport" >"$base/listeners.log" 2>&1 <<'PY' &
import select, socket, sys
a = socket.socket(socket.AF_UNIX)
a.bind("\0" + sys.argv[1])
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", int(sys.argv[2])))
for s in (a, t):
    s.listen(16)
print("listening", flush=True)
while True:
    for s in select.select([a, t], [], [])[0]:
        c, _ = s.accept()
        print("connection", "abstract" if s is a else "tcp", flush=True)
        c.sendall(b"host-answered\n")
        c.close()
PY
kill_at_exit $!
disown
wait_until 10 grep -q listening "$base/listeners.log"

# The sandbox's side: each probe prints one "NAME=RESULT" line.
probe='
abstract() { python3 -c "import socket,sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(\"\\0'"$abstract"'\"); print(s.recv(100).decode().strip())
except OSError as e:
    print(type(e).__name__)"; }
tcp() { python3 -c "import socket
try:
    print(socket.create_connection((\"127.0.0.1\", '"$tcpport"'), 3).recv(100).decode().strip())
except OSError as e:
    print(type(e).__name__)"; }
'
sandy_none() { "$SANDY" --runtime=none --rules "$rules" --no-detect "$@"; }

# 1. The host's sockets, names through the proxy, the egress log.
out=$(sandy_none --allow allowed.test "$proj" -- sh -c "$probe"'
	echo "abstract=$(abstract)"
	echo "tcp=$(tcp)"
	echo "tcp_proxied=$(curl -sS -m 5 --noproxy "" -o /dev/null -w "%{http_code}" http://127.0.0.1:'"$tcpport"'/ 2>/dev/null)"
	echo "plain=$(curl -sS -m 10 http://allowed.test/ 2>&1)"
	echo "tunnel=$(curl -sS -m 10 --proxytunnel http://allowed.test/ 2>&1)"
	echo "blocked=$(curl -sS -m 10 -w " %{http_code}" http://blocked.test/ 2>&1 | tr "\n" " ")"
	echo "blocked_tunnel=$(curl -sS -m 10 -o /dev/null --proxytunnel http://blocked.test/ 2>&1)"
	echo "direct=$(curl -sS -m 5 --noproxy "*" -o /dev/null -w "%{http_code}" http://'"$allowed"'/ 2>&1)"
	echo "resolve=$(getent hosts allowed.test || echo none)"
	echo "proxy=$HTTPS_PROXY"
	grep -q "sandy.s HTTP proxy" "$SANDY_POLICY" && echo note=yes
	' </dev/null 2>"$base/err1")
rc=$?
check_eq "a filtered session: exit status 0" 0 "$rc"
check_eq "an abstract Unix socket of the host is out of reach" ConnectionRefusedError \
	"$(sed -n 's/^abstract=//p' <<<"$out")"
check_eq "a TCP listener on the host's 127.0.0.1 is out of reach" ConnectionRefusedError \
	"$(sed -n 's/^tcp=//p' <<<"$out")"
check_eq "... also through the proxy, which takes no address" 403 \
	"$(sed -n 's/^tcp_proxied=//p' <<<"$out")"
check_eq "the host's listeners saw no connection" "" "$(grep '^connection' "$base/listeners.log")"
check_eq "allowed.test answers a plain request through the proxy" "hello from allowed.test" \
	"$(sed -n 's/^plain=//p' <<<"$out")"
check_eq "... and through a tunnel (CONNECT)" "hello from allowed.test" \
	"$(sed -n 's/^tunnel=//p' <<<"$out")"
blocked=$(sed -n 's/^blocked=//p' <<<"$out")
check "blocked.test is refused with 403" grep -q ' 403$' <<<"$blocked"
check "... whose body says sandy refused it and how to allow it" \
	grep -q "sandy refused the connection to 'blocked.test': it is not on this session's network allowlist.*sandy allow blocked.test" <<<"$blocked"
check "a tunnel to blocked.test is refused with 403" \
	grep -q 'CONNECT tunnel failed, response 403' <<<"$(sed -n 's/^blocked_tunnel=//p' <<<"$out")"
check_fails "allowed.test's address, without the proxy, does not answer" \
	grep -q '^direct=200' <<<"$out"
check_eq "no name resolves in the sandbox" none "$(sed -n 's/^resolve=//p' <<<"$out")"
check "the proxy variables name the bridge on the sandbox's loopback" \
	grep -Eq '^proxy=http://127\.0\.0\.1:[0-9]+$' <<<"$out"
check "the policy note says the network goes through sandy's proxy" grep -qx note=yes <<<"$out"
check_eq "allowed.test's server saw the two requests" 2 "$(http_hits allowed.test)"
check_eq "blocked.test's server saw none" 0 "$(http_hits blocked.test)"
check "the upstream resolver was asked for allowed.test" upstream_saw allowed.test
check_fails "no query for blocked.test reached it" upstream_saw blocked.test
[ "$_failed" = 0 ] || sed 's/^/# /' <<<"$out" "$base/err1"

log=$(ls "$SANDY_DATA_DIR"/egress/*.jsonl 2>/dev/null | head -n 1)
has() { grep -c "$1" "$log"; }
check_eq "two allowed connections to allowed.test's address, port 80, named" 2 \
	"$(has "\"verdict\":\"allowed\",\"proto\":\"tcp\",\"dest\":\"$allowed\",\"port\":80,\"ip\":4,\"name\":\"allowed.test\"")"
check_eq "two refused ones for blocked.test, by name, with no address" 2 \
	"$(has '"verdict":"refused","proto":"tcp","port":80,"name":"blocked.test"}')"
check_eq "one refused for 127.0.0.1, by address" 1 \
	"$(has "\"verdict\":\"refused\",\"proto\":\"tcp\",\"dest\":\"127.0.0.1\",\"port\":$tcpport,\"ip\":4}")"
k=$(has '"kind":"connect"') kr=$(has '"kind":"connect","verdict":"refused"')
check_eq "the summary's counts are the log's" \
	"network: 0 DNS queries (0 refused), $k connection attempts ($kr refused)" \
	"$(grep -o '^sandy: network: [^;]*' "$base/err1" | sed 's/^sandy: //')"
check "the summary lists blocked.test by name and port" grep -q ' blocked.test:80/tcp$' "$base/err1"
check "the proxy is gone after the session" eval '! pgrep -f -- "--allow allowed.test $proj" >/dev/null'
check "nothing left mounted" no_sandy_mounts "$proj"
check "no session directory left" no_session_dir "$proj"

# 2. `sandy allow` in a running session: the proxy reads the list again.
rm -f "$proj/src/ready" "$proj/src/go"
sandy_none -q "$proj" -- sh -c '
	echo "before=$(curl -sS -m 10 -o /dev/null -w "%{http_code}" http://late.test/)"
	: >src/ready
	i=0; while [ ! -e src/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	echo "after=$(curl -sS -m 10 http://late.test/)"' </dev/null >"$base/late.out" 2>&1 &
sess=$!
check "the session is running" wait_until 30 test -e "$proj/src/ready"
out=$("$SANDY" allow late.test 2>&1)
check_eq "sandy allow late.test: status 0" 0 "$?" || diag "$out"
check "... says it is allowed" grep -q "allowed 'late.test' in session" <<<"$out"
: >"$proj/src/go"
wait "$sess"
check_eq "before: late.test refused (403)" 403 "$(sed -n 's/^before=//p' "$base/late.out")"
check_eq "after sandy allow: it answers in the same session" "hello from late.test" \
	"$(sed -n 's/^after=//p' "$base/late.out")"
[ "$_failed" = 0 ] || sed 's/^/# /' "$base/late.out"

# 3. --network=open: the host's network, its loopback and abstract sockets.
out=$(sandy_none -q --network=open "$proj" -- sh -c "$probe"'
	echo "abstract=$(abstract)"; echo "tcp=$(tcp)"; echo "proxy=${HTTPS_PROXY:-none}"' </dev/null 2>&1)
check_eq "--network=open reaches the host's TCP listener on 127.0.0.1" host-answered \
	"$(sed -n 's/^tcp=//p' <<<"$out")"
check_eq "... and its abstract Unix socket" host-answered "$(sed -n 's/^abstract=//p' <<<"$out")"
check_eq "... with no proxy of sandy's" none "$(sed -n 's/^proxy=//p' <<<"$out")"
check_eq "the host's listeners saw those two" 2 "$(grep -c '^connection' "$base/listeners.log")"

# 4. Limits. The defaults are a container's: half the memory, 4096
# processes or a quarter of pid_max.
mem=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 / 2))
[ "$mem" -lt $((512 << 20)) ] && mem=$((512 << 20))
pids=$(($(cat /proc/sys/kernel/pid_max) / 4))
[ "$pids" -gt 4096 ] && pids=4096
[ "$pids" -lt 256 ] && pids=256
# what ROOT's session's cgroup holds, or its rlimits: "PIDS MEMORY"
rm -f "$proj/src/ready" "$proj/src/go"
sandy_none -q --network=none "$proj" -- sh -c '
	grep -E "^Max (processes|data size)" /proc/self/limits
	: >src/ready; i=0; while [ ! -e src/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done' \
	</dev/null >"$base/limits.out" 2>&1 &
sess=$!
wait_until 30 test -e "$proj/src/ready"
sdir=$(session_dirs "$proj")
cg=$(cat "$sdir/cgroup" 2>/dev/null) cgm=$(cat "$sdir/cgroup-memory" 2>/dev/null)
if [ -n "$cg" ]; then
	if [ -e "$cg/memory.max" ]; then got_mem=$(cat "$cg/memory.max"); else got_mem=$(cat "$cgm/memory.limit_in_bytes"); fi
	got="$(cat "$cg/pids.max") $got_mem"
	# The kernel keeps a memory limit in whole pages.
	mem=$((mem / $(getconf PAGESIZE) * $(getconf PAGESIZE)))
	how="a cgroup of its own ($cg)"
else
	got="- $(awk '/^Max data size/ {print $4}' "$base/limits.out")"
	how="rlimits (no cgroup sandy may make here)"
fi
: >"$proj/src/go"
wait "$sess"
diag "root's sandbox is limited by $how"
# Root is held to no process rlimit: where there is no cgroup, its
# processes are not limited, and sandy says so (checked below).
if [ -n "$cg" ]; then
	check_eq "root: the sandbox's limits are a container's" "$pids $mem" "$got"
	check "root: its cgroup is gone after the session" test ! -e "$cg"
else
	check_eq "root: the sandbox's memory limit is a container's" "- $mem" "$got"
fi

# A session whose sandy is killed outright: its sandbox and its proxy end
# with it, and the next session clears the cgroup it left.
"$SANDY" -q --runtime=none --rules "$rules" --no-detect --allow allowed.test "$proj" -- \
	sleep 301.125 </dev/null >/dev/null 2>&1 &
sess=$!
wait_until 30 pgrep -fx "sleep 301.125" >/dev/null
sdir=$(session_dirs "$proj")
crashed_cg=$(cat "$sdir/cgroup" 2>/dev/null)
kill -9 "$sess"
wait "$sess" 2>/dev/null
check "killed: the sandbox ends with sandy" wait_until 10 eval '! pgrep -fx "sleep 301.125" >/dev/null'
check "killed: so does the proxy" \
	wait_until 10 eval '! pgrep -f -- "--allow allowed.test $proj -- sleep 301.125" >/dev/null'
sandy_none -q --network=none "$proj" -- true </dev/null >/dev/null 2>&1
check "killed: the next session clears what it left" eval '[ ! -e "$sdir" ] && no_sandy_mounts "$proj"'
if [ -n "$crashed_cg" ]; then
	check "killed: ... its cgroup too" test ! -e "$crashed_cg"
fi

# fork_loop MARKER SANDY...: a session (the command SANDY...) that starts
# up to 300 processes, each a "sleep MARKER", as fast as the limit lets
# it; sets SPAWNED (how many it started), PEAK (the most seen on the host
# at once), LEFT (how many are left after the session) and BEFORE/AFTER
# (the host's process count).
forker='import os, sys, time
n = 0
for i in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execvp("sleep", ["sleep", sys.argv[1]])
    n += 1
print("spawned=%d" % n, flush=True)
time.sleep(1)'
fork_loop() {
	local marker=$1
	shift
	BEFORE=$(ls /proc | grep -c '^[0-9]')
	"$@" python3 -c "$forker" "$marker" </dev/null >"$base/fork.out" 2>&1 &
	local s=$! p
	PEAK=0
	while pid_alive "$s"; do
		p=$(pgrep -fx "sleep $marker" | wc -l)
		[ "$p" -gt "$PEAK" ] && PEAK=$p
		sleep 0.05
	done
	wait "$s"
	sleep 0.2
	SPAWNED=$(sed -n 's/^spawned=//p' "$base/fork.out")
	LEFT=$(pgrep -fx "sleep $marker" | wc -l)
	AFTER=$(ls /proc | grep -c '^[0-9]')
}

# 5. Root: a fork loop and a memory hog against small limits.
export SANDY_PIDS=64 SANDY_MEMORY=128m
fork_loop 301.5 sandy_none --network=none "$proj" --
check "root: the fork loop is stopped by the limit (${SPAWNED:-none} of 300 started)" \
	test "${SPAWNED:-300}" -lt 64 -a "${SPAWNED:-0}" -gt 0
check "root: at most 64 of its processes ran at once ($PEAK)" test "$PEAK" -le 64 -a "$PEAK" -gt 0
check_eq "root: none is left after the session" 0 "$LEFT"
check "root: the host's process count is back ($BEFORE before, $AFTER after)" \
	test "$AFTER" -le $((BEFORE + 5))
if [ -z "$cg" ]; then
	check "root without a cgroup: sandy says its processes are not limited" \
		grep -q "the sandbox's processes are not limited" "$base/fork.out"
fi
hog='import sys
l = []
for i in range(64):
    l.append(bytearray(16 << 20))
    print("mib=%d" % (16 * (i + 1)), flush=True)'
out=$(sandy_none -q --network=none "$proj" -- python3 -c "$hog" </dev/null 2>&1)
rc=$?
reached=$(grep -o '^mib=[0-9]*' <<<"$out" | tail -n 1 | cut -d= -f2)
check "root: the memory hog is stopped (status $rc)" test "$rc" -ne 0
check "root: ... before 1 GiB, near its 128 MiB (reached ${reached:-0} MiB)" test "${reached:-0}" -le 128

# 6. An ordinary user: rlimits in the sandbox's user namespace. Its
# own processes outside the sandbox do not count against the limit.
ensure_test_user
uproj=$base/uproj
make_repo "$uproj" && chown -R "$TEST_USER:" "$uproj" || exit 1
as_user() {
	(cd "$uproj" && runuser -u "$TEST_USER" -- env SANDYFS="$SANDYFS" XDG_RUNTIME_DIR= SANDY_DATA_DIR= \
		SANDY_DNS_UPSTREAM="$SANDY_DNS_UPSTREAM" SANDY_PIDS="${SANDY_PIDS:-}" \
		SANDY_MEMORY="${SANDY_MEMORY:-}" \
		"$SANDY" --runtime=none --rules "$rules" --no-detect "$@")
}
runuser -u "$TEST_USER" -- sh -c 'for i in $(seq 1 80); do sleep 301.25 & echo $!; done' \
	>"$base/user-sleeps" </dev/null
at_exit "xargs -r kill <'$base/user-sleeps' 2>/dev/null"
out=$(as_user -q --network=none -- sh -c 'grep -E "^Max (processes|data size)" /proc/self/limits' </dev/null 2>&1)
check_eq "user: RLIMIT_NPROC and RLIMIT_DATA are the limits" "64 134217728" \
	"$(awk '/^Max processes/ {p=$3} /^Max data size/ {d=$4} END {print p, d}' <<<"$out")"
fork_loop 301.75 as_user -q --network=none --
check "user: the fork loop, started beside 80 processes of the user's, still starts more than 40 ($SPAWNED)" \
	test "${SPAWNED:-0}" -gt 40
check "user: and is stopped by the limit ($SPAWNED of 300 started)" test "${SPAWNED:-300}" -lt 64
check "user: at most 64 of its processes ran at once ($PEAK)" test "$PEAK" -le 64 -a "$PEAK" -gt 0
check_eq "user: none is left after the session" 0 "$LEFT"
check "user: the host's process count is back ($BEFORE before, $AFTER after)" \
	test "$AFTER" -le $((BEFORE + 5))
out=$(as_user -q --network=none -- python3 -c "$hog" </dev/null 2>&1)
rc=$?
reached=$(grep -o '^mib=[0-9]*' <<<"$out" | tail -n 1 | cut -d= -f2)
check "user: the memory hog is stopped (status $rc)" test "$rc" -ne 0
check "user: ... before 1 GiB, near its 128 MiB (reached ${reached:-0} MiB)" test "${reached:-0}" -le 128
# The bridge, sandy's own code, with the default limits: a sanitizer's
# build of it maps more than 128 MiB.
unset SANDY_PIDS SANDY_MEMORY
out=$(as_user -q --allow allowed.test -- sh -c 'curl -sS -m 10 http://allowed.test/; id -u' </dev/null 2>&1)
check_eq "user: allowed.test answers through the proxy" "hello from allowed.test|$(id -u "$TEST_USER")" \
	"$(paste -sd'|' <<<"$out")"
check "user: nothing left mounted" \
	eval "! grep -q ' $uproj \| /tmp/sandy-$(id -u "$TEST_USER")/' /proc/self/mountinfo"
done_testing
