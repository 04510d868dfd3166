/* egress.h - the network allowlist, as data: which domains the agent may
 * reach (built in for the agent and the project's types, plus the user's),
 * the check every domain passes before it is used anywhere, the files the
 * gateway enforces it with (dnsmasq's servers file, the nftables ruleset),
 * and the egress log: the gateway's raw logs (dnsmasq's query log, ulogd's
 * JSON lines) turned into one JSON record per DNS query and per connection
 * attempt, and the counts the session summary prints. No I/O here: the
 * gateway (gateway.c) reads and writes the files. */
#ifndef SANDY_EGRESS_H
#define SANDY_EGRESS_H

#include "common/strv.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

enum egress_mode {
	EGRESS_FILTERED, /* the allowlist, through the gateway (default) */
	EGRESS_OPEN,	 /* the engine's default network, unfiltered */
	EGRESS_NONE,	 /* no network at all */
};

/* Longest domain the allowlist takes (DNS's limit for a name in text). */
#define EGRESS_DOMAIN_MAX 253

/* 0 when NAME is a domain the allowlist takes: labels of letters, digits
 * and hyphens, none starting or ending with a hyphen, 1-63 characters
 * each, at least two labels, the last not all digits (an address is not a
 * domain), at most EGRESS_DOMAIN_MAX in all, with an optional leading
 * "*." (its subdomains, not the name itself). Otherwise -EINVAL and *WHY
 * says what is wrong. */
int egress_domain_check(const char *name, const char **why);

/* Appends every entry of LIST (separated by spaces, commas, tabs or
 * newlines; "" holds none) to OUT, lower-cased. The first entry that fails
 * the check stops it: -EINVAL, *BAD (malloc'ed) the entry, *WHY the
 * reason, and OUT unchanged. */
int egress_parse_list(const char *list, struct strv *out, char **bad, const char **why);

/* Appends the built-in entries: the endpoints of AGENT ("claude", "codex",
 * "gemini"), GitHub, and the package registries of the rule SOURCES named
 * (rule file names: "node", "python.json", ...). */
int egress_builtin(const char *agent, const struct strv *sources, struct strv *out);

/* Sorts ALLOW and drops repeated entries. */
void egress_dedup(struct strv *allow);

/* 0 when ADDRESS is an IPv4 address outside 127.0.0.0/8 (a resolver the
 * gateway can forward to). */
int egress_upstream_check(const char *address);

/* The IPv4 resolvers of a resolv.conf's TEXT, loopback ones left out. */
int egress_resolv_conf(const char *text, struct strv *out);

/* Whether ALLOW lets NAME (lower case, as egress_domain_check takes it,
 * without "*.") be reached: an entry equal to NAME, or a "*.PARENT" entry
 * for a PARENT that NAME is a subdomain of (at any depth). The rule the
 * servers file below gives dnsmasq, for what checks names itself (the
 * proxy of a session without a container, netproxy.h). */
bool egress_name_allowed(const struct strv *allow, const char *name);

/* dnsmasq's servers file for ALLOW, forwarding to UPSTREAMS: a name is
 * forwarded, its subdomains are not (unless "*.name" is allowed too); a
 * "*.name" entry forwards the subdomains. Every other name is refused.
 * malloc'ed, NULL without memory. */
char *egress_servers_file(const struct strv *allow, const struct strv *upstreams);

/* The nftables ruleset of the agent's network namespace: outbound IPv4
 * only to loopback, to the addresses the allowlisted names resolved to
 * (the set dnsmasq fills) and, from dnsmasq alone, to UPSTREAMS on port
 * 53; IPv6 only on loopback; new inbound connections dropped; every new
 * outbound attempt logged to NFLOG group EGRESS_NFLOG_GROUP with the
 * prefix "allowed" or "refused". With ROOT_OUT, root's sockets go
 * anywhere, unlogged: in a Pod (kube.c) every container shares the one
 * namespace, the agent never runs as root there, and sandy's own
 * containers, which do, push the agent's branches to the repository's
 * host whether or not the allowlist names it. Never for a session on a
 * host, whose agent may run as root. malloc'ed. */
#define EGRESS_NFLOG_GROUP 7
char *egress_ruleset(const struct strv *upstreams, bool root_out);

/* One record of the egress log. */
struct egress_record {
	bool dns; /* a DNS query, else a connection attempt */
	bool allowed;
	double time; /* seconds since the epoch */
	/* DNS: the name asked for. A connection: the name it was asked for by,
	 * where that is known (through the proxy), else "". */
	char name[EGRESS_DOMAIN_MAX + 2];
	char qtype[16];	 /* DNS: A, AAAA, ... */
	char proto[16];	 /* tcp, udp, icmp, icmpv6, or the number */
	char dest[48];	 /* the address; "" when none was tried (a name refused) */
	int port;	 /* 0 when the protocol has none */
	unsigned family; /* 4 or 6 */
};

/* dnsmasq's query log (log-queries=extra) line by line: a query's serial
 * is remembered until the line that decides it (forwarded or answered from
 * the cache: allowed; refused or answered locally: refused). */
struct egress_dns_reader {
	struct pending_query {
		unsigned long serial;
		char name[EGRESS_DOMAIN_MAX + 2];
		char qtype[16];
	} pending[64];
	unsigned next;
};

/* 1 and *REC when LINE decides a query, 0 when it does not, NOW the
 * record's time. */
int egress_dns_line(struct egress_dns_reader *r, const char *line, double now,
		    struct egress_record *rec);

/* 1 and *REC for one of ulogd's JSON lines, 0 for a line that is not a
 * logged attempt. */
int egress_packet_line(const char *line, struct egress_record *rec);

/* The record as one JSON line (with its newline), malloc'ed. */
char *egress_record_json(const struct egress_record *rec, const char *session);

/* A record read back from the egress log; 0 for a line that is not one. */
int egress_record_parse(const char *line, struct egress_record *rec);

/* What the session summary prints: totals, and refused attempts grouped by
 * destination (a name, or address:port/protocol) with their counts. */
struct egress_stats {
	unsigned long queries, queries_refused, connects, connects_refused;
	struct refused_dest {
		char *dest;
		unsigned long count;
	} * refused;
	size_t n_refused;
};

int egress_stats_add(struct egress_stats *st, const struct egress_record *rec);
void egress_stats_print(FILE *f, const struct egress_stats *st, const char *log_path);
void egress_stats_free(struct egress_stats *st);

/* Loki's push API body for RECORDS (JSON lines, as written to the log):
 * one stream per kind and verdict, labelled job="sandy" and the session.
 * malloc'ed; NULL without memory or when there is no record. */
char *egress_loki_body(const char *records, const char *session);

#endif
