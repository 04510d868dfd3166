/* netproxy.h - the protocol of the allowlisting proxy that a session
 * without a container reaches the network through (nsnet.h runs it): the
 * request head an HTTP client sends a proxy (CONNECT HOST:PORT for a
 * tunnel, or a plain http:// request in absolute form), the decision on
 * its host by the allowlist's own rule (egress.h), the head the origin
 * gets for a plain request, the proxy's own answers, the addresses it
 * never connects to, and the DNS messages it resolves names with when
 * SANDY_DNS_UPSTREAM names the resolvers. No I/O here. */
#ifndef SANDY_NETPROXY_H
#define SANDY_NETPROXY_H

#include "egress.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* The longest request head the proxy reads before it refuses it. */
#define NETPROXY_HEAD_MAX 16384

struct netproxy_request {
	bool tunnel;  /* CONNECT: bytes both ways; else a plain http:// request */
	bool address; /* HOST is an IP address, not a name */
	/* Lower case, without a final dot; an IPv6 address without brackets. */
	char host[EGRESS_DOMAIN_MAX + 2];
	unsigned port;
	size_t head_len; /* the head's bytes, its blank line included */
	/* A plain request: its method and its target in origin form, as
	 * offsets into the head; PATH_LEN 0 is "/", and PATH_SLASH says "/"
	 * goes before the target (a query with no path). */
	size_t method_len, path_off, path_len;
	bool path_slash;
	char version[9]; /* "HTTP/1.0" or "HTTP/1.1" */
};

/* Parses the request head at the start of BUF (LEN bytes): 1 and *REQ
 * once the empty line that ends it is there, 0 while it is incomplete
 * (and shorter than NETPROXY_HEAD_MAX), -EINVAL when it is not a request
 * this proxy takes, *WHY saying why (for the answer 400). */
int netproxy_parse(const char *buf, size_t len, struct netproxy_request *req, const char **why);

enum netproxy_verdict {
	NETPROXY_ALLOWED,
	NETPROXY_NOT_LISTED, /* a name the allowlist does not hold */
	NETPROXY_NOT_A_NAME, /* a name no allowlist can hold (one label, ...) */
	NETPROXY_ADDRESS,    /* an address: the allowlist holds names */
};

/* REQ's host against ALLOW, by egress_name_allowed. */
enum netproxy_verdict netproxy_decide(const struct strv *allow, const struct netproxy_request *req);

/* The head the origin gets for the plain request REQ, whose head is BUF:
 * the request line in origin form, the client's header lines but Host
 * and those meant for the proxy or for one connection (Proxy-*,
 * Connection, Keep-Alive), then Host from the request's URL and
 * "Connection: close" (one request per connection, so that a next one,
 * for another host, comes through the proxy's check again). malloc'ed. */
char *netproxy_origin_head(const char *buf, const struct netproxy_request *req);

/* What the proxy answers when the tunnel is open. */
extern const char netproxy_established[];

/* The proxy's answers that end the connection, malloc'ed: a status line,
 * a text body for the agent and the user reading its output.
 * netproxy_refusal: 403 for REQ's host and VERDICT (not ALLOWED), saying
 * sandy refused it, why, and how the user allows a name;
 * netproxy_local_refusal: 403 for HOST, which resolved to ADDRESS, one of
 * this machine's own; netproxy_error: STATUS (400, 502, 504) with WHY,
 * about HOST when it is not NULL. */
char *netproxy_refusal(const struct netproxy_request *req, enum netproxy_verdict verdict);
char *netproxy_local_refusal(const char *host, const char *address);
char *netproxy_error(int status, const char *host, const char *why);

/* Whether the proxy never connects to SA: this machine's loopback, the
 * unspecified address (which reaches this machine) and link-local
 * addresses (a cloud's metadata service), also as IPv4 mapped into IPv6.
 * The proxy runs outside the sandbox, beside the host's own services: a
 * name that resolves there must not take the agent to them. */
bool netproxy_address_local(const struct sockaddr *sa);

/* A DNS query (recursion desired) for the A records of NAME with ID, in
 * BUF: its length, or -EINVAL (a name DNS cannot carry, a BUF too small). */
int netproxy_dns_query(const char *name, unsigned id, unsigned char *buf, size_t size);

/* The IPv4 addresses in MSG, the answer to query ID: how many (at most
 * MAX) in OUT; -ENOENT when the name does not exist, -EIO for the other
 * errors a resolver answers, -EINVAL when MSG is not that answer. */
int netproxy_dns_answer(const unsigned char *msg, size_t len, unsigned id, struct in_addr *out,
			size_t max);

#endif
