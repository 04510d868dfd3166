#!/usr/bin/env bash
# The network allowlist, inside real sessions on a test internet of the
# test's own (internet.bash): allowlisted names resolve and answer, every
# other name is refused by sandy's resolver before any query leaves (the
# upstream's query log is checked), addresses nobody resolved are refused,
# IPv6 goes nowhere but loopback, SANDY_ALLOW_DOMAINS takes every entry,
# the agent holds no capability and cannot change the rules, and every
# query and connection attempt is one JSON record in the egress log, the
# summary's counts and Loki's copy included; the same gateway under
# podman. --network=open and none do what they say. (Without a container,
# the allowlist's proxy: tests/network/none.sh.)
source "$SANDY_SRC/tests/network/internet.bash"
require_docker
unset SANDY_NETWORK
check "sandy build-image --gateway-only builds the gateway image" \
	eval '"$SANDY" build-image --gateway-only >"$_scratch_base/gateway-build.log" 2>&1'
new_project
check "the test internet is up" start_internet || done_testing
export SANDY_DNS_UPSTREAM=$INET_DNS

allowed=${INET_ADDR[allowed.test]} blocked=${INET_ADDR[blocked.test]}
secret=c2VjcmV0LWRhdGE

# The agent's side: each probe prints one "NAME=RESULT" line.
probe='
resolve() { nslookup -type=a "$1" 2>/dev/null | awk "/^Name:/ {n=1} n && /^Address/ {print \$2; exit}"; }
get() { printf "GET / HTTP/1.0\r\n\r\n" | nc -w 5 "$1" 80 2>/dev/null | tail -n 1; }
'

# 1. Names and addresses.
out=$("$SANDY" --rules "$rules" --no-detect --allow allowed.test "$proj" -- sh -c "$probe"'
	a=$(resolve allowed.test); echo "allowed_addr=$a"
	echo "allowed_get=$(get "$a")"
	echo "blocked_addr=$(resolve blocked.test)"
	echo "data_addr=$(resolve '"$secret"'.blocked.test)"
	echo "sub_addr=$(resolve www.allowed.test)"
	echo "direct_get=$(get '"$blocked"')"
	grep "^Cap" /proc/self/status | tr -d "\t" | sed "s/^/cap_/"
	grep -q "^    allowed.test\$" /run/sandy/POLICY.md && echo note_lists=yes
	grep -q "sandy allow DOMAIN" /run/sandy/POLICY.md && echo note_allow=yes
	' </dev/null 2>"$base/err1")
rc=$?
check_eq "a filtered session: exit status 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$base/err1"
check_eq "allowed.test resolves to its address" "$allowed" "$(sed -n 's/^allowed_addr=//p' <<<"$out")"
check_eq "allowed.test answers over HTTP" "hello from allowed.test" "$(sed -n 's/^allowed_get=//p' <<<"$out")"
check_eq "blocked.test does not resolve" "" "$(sed -n 's/^blocked_addr=//p' <<<"$out")"
check_eq "a name under blocked.test does not resolve" "" "$(sed -n 's/^data_addr=//p' <<<"$out")"
check_eq "a subdomain of an allowed name is not allowed with it" "" "$(sed -n 's/^sub_addr=//p' <<<"$out")"
check_eq "blocked.test's address, connected to directly, does not answer" "" \
	"$(sed -n 's/^direct_get=//p' <<<"$out")"
check_eq "blocked.test's server saw no request" 0 "$(http_hits blocked.test)"
check_eq "allowed.test's server saw the one request" 1 "$(http_hits allowed.test)"
check "the upstream resolver saw the query for allowed.test" upstream_saw allowed.test
check_fails "no query for blocked.test reached the upstream resolver" upstream_saw blocked.test
check_fails "no query for $secret.blocked.test reached the upstream resolver" upstream_saw "$secret.blocked.test"
check_fails "no query for www.allowed.test reached the upstream resolver" upstream_saw www.allowed.test
check "the policy note lists allowed.test" grep -qx note_lists=yes <<<"$out"
check "the policy note says how the user can allow more" grep -qx note_allow=yes <<<"$out"
for c in Inh Prm Eff Bnd Amb; do
	check_eq "the agent holds no capability (Cap$c)" 0000000000000000 \
		"$(sed -n "s/^cap_Cap$c://p" <<<"$out")"
done

# 5. The egress log and the summary.
log=$(ls "$SANDY_DATA_DIR"/egress/*.jsonl 2>/dev/null | head -n 1)
check "the session wrote an egress log" test -s "$log"
check "every line of the egress log is a JSON record with a kind and a verdict" \
	"$PYTHON" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert r["kind"] in ("dns", "connect") and r["verdict"] in ("allowed", "refused"), l' "$log"
has() { grep -c "$1" "$log"; }
check_eq "one allowed A query for allowed.test" 1 "$(has '"kind":"dns","verdict":"allowed","name":"allowed.test","type":"A"')"
check_eq "one refused A query for blocked.test" 1 "$(has '"kind":"dns","verdict":"refused","name":"blocked.test","type":"A"')"
check_eq "one refused A query for the name carrying data" 1 \
	"$(has "\"verdict\":\"refused\",\"name\":\"$secret.blocked.test\",\"type\":\"A\"")"
check_eq "one allowed connection to allowed.test's address, port 80" 1 \
	"$(has "\"kind\":\"connect\",\"verdict\":\"allowed\",\"proto\":\"tcp\",\"dest\":\"$allowed\",\"port\":80")"
check_eq "one refused connection to blocked.test's address, port 80" 1 \
	"$(has "\"kind\":\"connect\",\"verdict\":\"refused\",\"proto\":\"tcp\",\"dest\":\"$blocked\",\"port\":80")"
q=$(has '"kind":"dns"') qr=$(has '"kind":"dns","verdict":"refused"')
k=$(has '"kind":"connect"') kr=$(has '"kind":"connect","verdict":"refused"')
check_eq "the summary's counts are the log's" \
	"network: $q DNS queries ($qr refused), $k connection attempts ($kr refused)" \
	"$(grep -o '^sandy: network: [^;]*' "$base/err1" | sed 's/^sandy: //')"
check "the summary lists the refused destination blocked.test" grep -q ' blocked.test (DNS)$' "$base/err1"
check "the summary lists the refused address $blocked:80/tcp" grep -q " $blocked:80/tcp\$" "$base/err1"
check "the gateway container is gone after the session" no_container "$proj"

# 3. SANDY_ALLOW_DOMAINS: every entry, whatever separates them; and the
# user's config.json.
mkdir -p "$base/config"
echo '{"allow": ["x.test"]}' >"$base/config/config.json"
out=$(SANDY_CONFIG_DIR=$base/config SANDY_ALLOW_DOMAINS="a.test b.test,c.test" "$SANDY" -q \
	--rules "$rules" --no-detect "$proj" -- \
	sh -c "$probe"'for n in a.test b.test c.test x.test blocked.test; do echo "$n=$(get "$(resolve $n)")"; done' \
	</dev/null 2>"$base/err3")
for n in a.test b.test c.test; do
	check_eq "SANDY_ALLOW_DOMAINS='a.test b.test,c.test' allows $n" "hello from $n" \
		"$(sed -n "s/^$n=//p" <<<"$out")"
done
check_eq "config.json's allow list allows x.test" "hello from x.test" "$(sed -n 's/^x.test=//p' <<<"$out")"
check_eq "... and nothing else (blocked.test)" "" "$(sed -n 's/^blocked.test=//p' <<<"$out")"
out=$(SANDY_ALLOW_DOMAINS="a.test;id" "$SANDY" -q --rules "$rules" --no-detect "$proj" -- true 2>&1 </dev/null)
rc=$?
check_eq "a bad SANDY_ALLOW_DOMAINS entry stops sandy (status 125)" 125 "$rc"
check "... saying which entry and why" grep -q "bad domain 'a.test;id' in SANDY_ALLOW_DOMAINS" <<<"$out"

# 2 and 6. IPv6, and the rules against the agent. The host (root) gives
# the shared namespace IPv6 and an address while the agent waits, which
# only a holder of NET_ADMIN can; the agent then tries IPv6 to that
# address and to loopback, and to undo the rules.
nftdir=$base/share/nft
mkdir -p "$nftdir"
cp /usr/sbin/nft "$nftdir/"
ldd /usr/sbin/nft | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}' | xargs -I{} cp -L {} "$nftdir/"
ld=$(cd "$nftdir" && ls ld-linux* | head -n 1)
# netns_of ROLE: the pid of the session's container (agent) or gateway.
container_pid() {
	local filter=(--filter "label=sandy.project=$(realpath "$proj")")
	if [ "$1" = gateway ]; then
		docker ps -q "${filter[@]}" --filter label=sandy.role=gateway
	else
		docker ps -q "${filter[@]}" | grep -vxF "$(docker ps -q "${filter[@]}" --filter label=sandy.role=gateway)"
	fi | head -n 1 | xargs -r docker inspect --format '{{.State.Pid}}'
}
v6_session() { # NETWORK ROLE: runs the IPv6 probe, the host's part for ROLE
	rm -f "$proj/src/ready" "$proj/src/go"
	SANDY_SHARE_DIR=$base/share "$SANDY" -q --network="$1" --rules "$rules" --no-detect "$proj" -- sh -c '
		nc -l -p 9090 -e echo v6-answered &
		: >/workspace/src/ready
		i=0; while [ ! -e /workspace/src/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
		echo "ula=$(nc -w 3 fd5a::2 9090 </dev/null 2>&1)"
		echo "loop=$(nc -w 3 ::1 9090 </dev/null 2>&1)"
		ip link set eth0 down 2>&1; echo "ipdown_rc=$?"
		ip route del default 2>&1; echo "route_rc=$?"
		~/shared/nft/'"$ld"' --library-path ~/shared/nft ~/shared/nft/nft flush ruleset 2>&1
		echo "nft_rc=$?"
		echo "after=$(printf "GET / HTTP/1.0\r\n\r\n" | nc -w 5 '"$blocked"' 80 2>/dev/null | tail -n 1)"
		kill %1 2>/dev/null' </dev/null >"$base/v6-$1.out" 2>"$base/v6-$1.err" &
	local sandy=$! pid=
	wait_until 30000 test -e "$proj/src/ready"
	pid=$(container_pid "$2")
	if [ -n "$pid" ]; then
		nsenter -t "$pid" -n sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.lo.disable_ipv6=0 \
			net.ipv6.conf.eth0.disable_ipv6=0
		nsenter -t "$pid" -n ip -6 addr add fd5a::2/64 dev eth0 nodad
	fi
	: >"$proj/src/go"
	wait "$sandy"
}
v6_session open agent
check_eq "without the allowlist (--network=open), IPv6 to the namespace's own address answers" \
	v6-answered "$(sed -n 's/^ula=//p' "$base/v6-open.out")"
hits=$(http_hits blocked.test)
v6_session filtered gateway
out=$(cat "$base/v6-filtered.out")
check_eq "with it, IPv6 to anything but loopback goes nowhere" "" "$(sed -n 's/^ula=//p' <<<"$out" | grep v6-answered)"
check_eq "IPv6 on loopback still works" v6-answered "$(sed -n 's/^loop=//p' <<<"$out")"
check_fails "taking the interface down fails" grep -qx 'ipdown_rc=0' <<<"$out"
check_fails "deleting the default route fails" grep -qx 'route_rc=0' <<<"$out"
check_fails "flushing the ruleset with nft fails" grep -qx 'nft_rc=0' <<<"$out"
check "... as not permitted" grep -q 'Could not process rule: Operation not permitted' <<<"$out"
check_eq "after those attempts, blocked.test's address is still refused" "" "$(sed -n 's/^after=//p' <<<"$out")"
check_eq "... and its server saw no new request" "$hits" "$(http_hits blocked.test)"
[ "$_failed" = 0 ] || sed 's/^/# /' "$base/v6-filtered.out" "$base/v6-filtered.err"

# Loki: the same records, pushed to a test receiver.
lokiport=$((20000 + $$ % 20000))
"$PYTHON" -u "$SANDY_SRC/tests/network/httpd.py" 127.0.0.1 "$lokiport" --loki "$base/loki.jsonl" \
	>"$base/loki.log" 2>&1 &
kill_at_exit $!
wait_until 10000 grep -q listening "$base/loki.log"
rm -f "$SANDY_DATA_DIR"/egress/*.jsonl
LOKI_URL=http://127.0.0.1:$lokiport "$SANDY" -q --rules "$rules" --no-detect --allow allowed.test "$proj" -- \
	sh -c "$probe"'get "$(resolve allowed.test)"; resolve blocked.test; get '"$blocked" </dev/null >/dev/null 2>"$base/err5"
log=$(ls "$SANDY_DATA_DIR"/egress/*.jsonl 2>/dev/null | head -n 1)
check "with LOKI_URL, Loki received pushes" test -s "$base/loki.jsonl"
check "Loki received exactly the egress log's records" "$PYTHON" -c 'import json,sys
pushed = sorted(v[1].strip() for l in open(sys.argv[1]) for s in json.loads(l)["streams"] for v in s["values"])
logged = sorted(l.strip() for l in open(sys.argv[2]))
assert pushed and pushed == logged, (len(pushed), len(logged))' "$base/loki.jsonl" "$log"
check "the pushed streams are labelled with the session" "$PYTHON" -c 'import json,sys
for l in open(sys.argv[1]):
    for s in json.loads(l)["streams"]:
        assert s["stream"]["job"] == "sandy" and s["stream"]["session"] and s["stream"]["verdict"]' "$base/loki.jsonl"

# podman (rootful): the same gateway, its image copied from docker's store.
if ENGINE=podman "$SANDY_SRC/launcher/container/busybox-image.sh" "$TEST_IMAGE" git ssh-add >/dev/null 2>&1 &&
	{ podman image inspect sandy-gateway:latest >/dev/null 2>&1 ||
		docker save sandy-gateway:latest | podman load >/dev/null 2>&1; }; then
	ok "podman has the test image and the gateway image"
else
	not_ok "podman has the test image and the gateway image"
fi
at_exit "podman ps -aq --filter 'label=sandy.project=$(realpath "$proj")' | xargs -r podman rm -f >/dev/null 2>&1"
out=$("$SANDY" -q --runtime=podman --rules "$rules" --no-detect --allow allowed.test "$proj" -- \
	sh -c "$probe"'echo "allowed=$(get "$(resolve allowed.test)")"; echo "blocked=$(resolve blocked.test)"
	echo "direct=$(get '"$blocked"')"; grep "^CapEff" /proc/self/status | tr -d "\t"' </dev/null 2>&1)
check_eq "podman: allowed.test answers through the gateway" "hello from allowed.test" \
	"$(sed -n 's/^allowed=//p' <<<"$out")"
check_eq "podman: blocked.test does not resolve" "" "$(sed -n 's/^blocked=//p' <<<"$out")"
check_eq "podman: blocked.test's address does not answer" "" "$(sed -n 's/^direct=//p' <<<"$out")"
check_eq "podman: the agent holds no capability" "CapEff:0000000000000000" "$(grep '^CapEff' <<<"$out")"
check "podman: no container is left" \
	eval '[ -z "$(podman ps -aq --filter "label=sandy.project=$(realpath "$proj")")" ]'
[ "$_failed" = 0 ] || sed 's/^/# /' <<<"$out"

# --network=none: no interface but loopback, no resolver.
out=$("$SANDY" -q --network=none --rules "$rules" --no-detect "$proj" -- sh -c "$probe"'
	echo "ifaces=$(awk -F: "NR > 2 {print \$1}" /proc/net/dev | tr -d " " | tr "\n" " ")"; echo "get=$(get '"$allowed"')"' </dev/null 2>&1)
check_eq "--network=none: loopback only" "lo " "$(sed -n 's/^ifaces=//p' <<<"$out")"
check_eq "--network=none: nothing answers" "" "$(sed -n 's/^get=//p' <<<"$out")"
out=$("$SANDY" -q --network=open --rules "$rules" --no-detect "$proj" -- true 2>&1 </dev/null)
check "--network=open warns that nothing is filtered" grep -q 'warning: --network=open' <<<"$out"
out=$("$SANDY" -q --runtime=none --rules "$rules" --no-detect "$proj" -- \
	sh -c 'echo "proxy=$HTTPS_PROXY"' 2>&1 </dev/null)
check "--runtime=none keeps to the allowlist too, through sandy's proxy (network/none.sh)" \
	grep -Eq '^proxy=http://127\.0\.0\.1:[0-9]+$' <<<"$out"
out=$("$SANDY" -q --runtime=none --network=none --rules "$rules" --no-detect "$proj" -- \
	sh -c 'awk -F: "NR > 2 {print \$1}" /proc/net/dev | tr -d " " | tr "\n" " "' 2>&1 </dev/null)
check_eq "--runtime=none --network=none: loopback only" "lo " "$out"
check "no container is left" no_container "$proj"
done_testing
