#!/bin/sh
# The entry point of sandy's network gateway container. sandy writes the
# session's files into /sandy (read-only here) and reads what this writes
# into /log:
#   /sandy/rules.nft   the nftables ruleset of the shared network namespace
#   /sandy/servers     dnsmasq's servers file: the allowlisted names
#   /log/dns.log       dnsmasq's query log
#   /log/packets.json  ulogd's JSON lines, one per logged packet
#   /log/ready         written last: the uid dnsmasq runs as
#   /log/gateway.log   what went wrong, if anything did
# `gateway reload` (docker exec) makes dnsmasq reread the servers file.
# Nothing here takes a value from the agent or from a command line.
set -eu

if [ "${1:-}" = reload ]; then
	exec kill -HUP "$(cat /run/dnsmasq.pid)"
fi

exec 2>>/log/gateway.log

# Readable by the host user that runs sandy, whoever writes them.
for f in dns.log packets.json; do
	: >"/log/$f"
	chmod 0644 "/log/$f"
done

nft -f /sandy/rules.nft

plugins=$(dirname "$(ls /usr/lib/*/ulogd/ulogd_output_JSON.so)")
cat >/run/ulogd.conf <<CONF
[global]
logfile="/log/gateway.log"
loglevel=5
plugin="$plugins/ulogd_inppkt_NFLOG.so"
plugin="$plugins/ulogd_raw2packet_BASE.so"
plugin="$plugins/ulogd_filter_IP2STR.so"
plugin="$plugins/ulogd_output_JSON.so"
stack=log1:NFLOG,base1:BASE,ip2str1:IP2STR,json1:JSON
[log1]
group=7
netlink_qthreshold=1
[json1]
file="/log/packets.json"
sync=1
CONF
ulogd --daemon --configfile /run/ulogd.conf

# No resolv.conf, no hosts file: the servers file is all it forwards, and
# a name it does not list is refused. dnsmasq forks once it listens. Its
# log is written as it goes (no --log-async), so that nothing is lost when
# the session ends; likewise ulogd hands on every packet at once
# (netlink_qthreshold=1) instead of the kernel's one-second batches.
dnsmasq --no-resolv --no-hosts --no-poll --listen-address=127.0.0.1 --bind-interfaces \
	--user=dnsmasq --pid-file=/run/dnsmasq.pid --servers-file=/sandy/servers \
	--log-queries=extra --log-facility=/log/dns.log \
	--nftset=/#/4#inet#sandy#allowed4 --cache-size=1000

id -u dnsmasq >/log/ready.new
mv /log/ready.new /log/ready
exec sleep infinity
