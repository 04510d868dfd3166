#!/usr/bin/env bash
# `sandy allow DOMAIN` against a running session: hostile strings (a shell
# command, a command substitution, an option, nothing, 300 characters) are
# refused with a message, run nothing and leave the session's allowlist as
# it was; a valid name takes effect in the running session without a
# restart; --session picks one of several, and without one running it
# says so.
source "$SANDY_SRC/tests/network/internet.bash"
require_docker
unset SANDY_NETWORK
check "the gateway image is there (sandy build-image --gateway-only)" \
	eval '"$SANDY" build-image --gateway-only >"$_scratch_base/gateway-build.log" 2>&1'
new_project
check "the test internet is up" start_internet || done_testing
export SANDY_DNS_UPSTREAM=$INET_DNS

out=$("$SANDY" allow late.test 2>&1)
rc=$?
check_eq "with no session running, sandy allow fails (status 125)" 125 "$rc"
check "... saying there is no running session" grep -q 'no running session' <<<"$out"

# The agent resolves late.test, says so, waits for the host's go, and
# tries again.
"$SANDY" -q --rules "$rules" --no-detect "$proj" -- sh -c '
	resolve() { nslookup -type=a "$1" 2>/dev/null | awk "/^Name:/ {n=1} n && /^Address/ {print \$2; exit}"; }
	echo "before=$(resolve late.test)"
	: >/workspace/src/ready
	i=0; while [ ! -e /workspace/src/go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
	a=$(resolve late.test)
	echo "after=$a"
	echo "get=$(printf "GET / HTTP/1.0\r\n\r\n" | nc -w 5 "$a" 80 2>/dev/null | tail -n 1)"
	' </dev/null >"$base/agent.out" 2>"$base/agent.err" &
agent=$!
check "the session is running" wait_until 30000 test -e "$proj/src/ready"
sess=$(cd "$RUNDIR" && ls -d */ | tr -d / | head -n 1)
netdir=$RUNDIR/$sess/net
before=$(cat "$netdir/allow" "$netdir/servers" | sha256sum)
check "the session's allowlist does not hold late.test" eval '! grep -qx late.test "$netdir/allow"'

pwned=$base/pwned
long=$(printf 'a%.0s' $(seq 1 290)).test
for bad in "x.test; touch $pwned" '$(id)' '`id`' -rf '' "$long" 'x.test
late.test' '../x.test' 'x.test/../y' '*.*.test' 'ünï.test'; do
	shown=$(printf '%q' "$bad" | cut -c1-40)
	out=$("$SANDY" allow "$bad" 2>&1)
	rc=$?
	check_eq "sandy allow $shown: refused (status 125)" 125 "$rc"
	check "sandy allow $shown: says it is a bad domain" grep -q "^sandy: bad domain" <<<"$out"
	check_fails "sandy allow $shown: ran nothing (no uid in its output)" grep -q 'uid=' <<<"$out"
done
out=$("$SANDY" allow --session "$sess" -- "-rf" 2>&1)
check_eq "sandy allow --session ID -- -rf: refused" 125 "$?"
check_fails "no command ran: '$pwned' does not exist" test -e "$pwned"
check_eq "the allowlist and the servers file are unchanged" "$before" \
	"$(cat "$netdir/allow" "$netdir/servers" | sha256sum)"

out=$("$SANDY" allow --session nosuch-00000000 late.test 2>&1)
check_eq "sandy allow --session with an unknown ID: status 125" 125 "$?"
check "... saying so" grep -q "no running session 'nosuch-00000000'" <<<"$out"
out=$("$SANDY" allow --session "$sess" LATE.test 2>&1)
rc=$?
check_eq "sandy allow --session ID LATE.test: status 0" 0 "$rc"
[ "$rc" = 0 ] || diag "$out"
check "the allowlist now holds late.test (lower case)" grep -qx late.test "$netdir/allow"
out=$("$SANDY" allow late.test 2>&1)
check_eq "allowing it again (the only session, no --session): status 0" 0 "$?"
check "... says it is already allowed" grep -q "already allowed" <<<"$out"
: >"$proj/src/go"
wait "$agent"
check_eq "the session ended: status 0" 0 "$?"
check_eq "before: late.test did not resolve" "" "$(sed -n 's/^before=//p' "$base/agent.out")"
check_eq "after sandy allow: late.test resolves in the same session" "${INET_ADDR[late.test]}" \
	"$(sed -n 's/^after=//p' "$base/agent.out")"
check_eq "... and answers over HTTP" "hello from late.test" "$(sed -n 's/^get=//p' "$base/agent.out")"
[ "$_failed" = 0 ] || sed 's/^/# /' "$base/agent.out" "$base/agent.err"
check "no container is left" no_container "$proj"
done_testing
