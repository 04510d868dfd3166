# Shared by the network tests (tests/network/*.sh); not a test itself.
#
# A test "internet" that no packet leaves the machine for: a network
# namespace of its own behind a veth pair, holding an upstream DNS server
# (dnsmasq, with a query log) and one HTTP server per test name, each on an
# address of its own. The agent's container reaches it the way it would
# reach the real one: through docker's bridge and the host's routing.
# Everything started here runs under `timeout` and is removed at exit.

source "$SANDY_SRC/tests/launcher/helpers.bash"

# Debian's python3 (a python3 earlier in PATH may be a slow wrapper).
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3

# The names the upstream knows, and the last octet of each one's address.
declare -A INET_HOSTS=([allowed.test]=3 [blocked.test]=4 [a.test]=5 [b.test]=6 [c.test]=7
	[late.test]=8 [x.test]=9)

# start_internet: sets INET_NET (the /24's first three octets), INET_DNS,
# INET_NS, INET_DIR (logs: upstream-dns.log, http-NAME.log) and
# INET_ADDR[name].
start_internet() {
	local n=$(( ($$ % 200) + 20 ))
	INET_NS=sandy-inet-$$
	INET_NET=10.203.$n
	INET_DNS=$INET_NET.2
	INET_DIR=$base/internet
	mkdir -p "$INET_DIR"
	local host=si$$h peer=si$$p
	ip netns add "$INET_NS" || return 1
	at_exit "ip netns pids '$INET_NS' 2>/dev/null | xargs -r kill 2>/dev/null; sleep 0.2; ip netns del '$INET_NS' 2>/dev/null; ip link del '$host' 2>/dev/null"
	ip link add "$host" type veth peer name "$peer" || return 1
	ip link set "$peer" netns "$INET_NS"
	ip addr add "$INET_NET.1/24" dev "$host"
	ip link set "$host" up
	ip -n "$INET_NS" link set lo up
	ip -n "$INET_NS" addr add "$INET_DNS/24" dev "$peer"
	ip -n "$INET_NS" link set "$peer" up
	ip -n "$INET_NS" route add default via "$INET_NET.1"
	declare -gA INET_ADDR=()
	local name args=()
	for name in "${!INET_HOSTS[@]}"; do
		INET_ADDR[$name]=$INET_NET.${INET_HOSTS[$name]}
		ip -n "$INET_NS" addr add "${INET_ADDR[$name]}/32" dev "$peer"
		# And an IPv6 address nobody holds, as real hosts have one: a
		# refused AAAA query fails the whole lookup for musl's resolver
		# (Codex CLI's), where the real internet answers it.
		args+=("--address=/$name/${INET_ADDR[$name]}" "--address=/$name/fd5a:5a5a::${INET_HOSTS[$name]}")
	done
	# Every name under .test answers, so that a query that reached it
	# would succeed: only sandy's resolver keeps them out.
	ip netns exec "$INET_NS" timeout 900 dnsmasq --keep-in-foreground --no-resolv --no-hosts \
		--listen-address="$INET_DNS" --bind-interfaces --user=root --pid-file= \
		--log-queries --log-facility="$INET_DIR/upstream-dns.log" \
		"${args[@]}" --address=/test/$INET_NET.99 &
	for name in "${!INET_HOSTS[@]}"; do
		ip netns exec "$INET_NS" timeout 900 "$PYTHON" -u "$SANDY_SRC/tests/network/httpd.py" \
			"${INET_ADDR[$name]}" 80 "$name" >"$INET_DIR/http-$name.log" 2>&1 &
	done
	local i
	for i in $(seq 1 50); do
		[ "$(ls "$INET_DIR"/http-*.log 2>/dev/null | xargs -r grep -l '^listening' | wc -l)" = "${#INET_HOSTS[@]}" ] &&
			grep -q 'started' "$INET_DIR/upstream-dns.log" 2>/dev/null && return 0
		sleep 0.1
	done
	diag "the test internet did not come up"
	return 1
}

# upstream_saw NAME: whether any query for NAME (or a name under it)
# reached the upstream DNS server.
upstream_saw() {
	grep -Eq "query\[[A-Z]+\] ([^ ]*\.)?$(sed 's/\./\\./g' <<<"$1") from" "$INET_DIR/upstream-dns.log"
}

# http_hits NAME: the requests NAME's server answered.
http_hits() {
	grep -c '^request' "$INET_DIR/http-$1.log"
}
