/* test_netproxy.c - the allowlisting proxy's protocol (launcher/world/netproxy.c):
 * request heads as HTTP clients send a proxy (CONNECT, absolute URLs, a
 * user in the URL, IPv6 addresses, a head in pieces) and the ones it
 * refuses (hostile hosts, smuggled lines, folded headers, https:// in a
 * plain request, a head too long); the decision by the allowlist's rule;
 * the head the origin gets; the answers; the addresses never connected
 * to; and the DNS query and answers it resolves with. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "launcher/world/netproxy.h"

#include <errno.h>
#include "tap.h"

static int parse(const char *head, struct netproxy_request *req, const char **why)
{
	*why = "";
	return netproxy_parse(head, strlen(head), req, why);
}

static void test_parse(void)
{
	struct netproxy_request req;
	const char *why;
	const char connect[] = "CONNECT API.Example.com.:443 HTTP/1.1\r\nHost: x\r\n\r\nTLS...";

	ok(parse(connect, &req, &why) == 1 && req.tunnel && !req.address &&
		   !strcmp(req.host, "api.example.com") && req.port == 443 &&
		   req.head_len == strlen(connect) - strlen("TLS..."),
	   "CONNECT: a tunnel to the host in lower case, its final dot dropped, the port; the "
	   "head ends at its empty line (%s)",
	   req.host);
	for (size_t n = 0; n < strlen(connect) - strlen("TLS..."); n++)
		if (netproxy_parse(connect, n, &req, &why) != 0) {
			ok(false, "a head in pieces: incomplete until its empty line (%zu)", n);
			break;
		}
	ok(parse("GET http://a.test:8080/x/y?q=1#frag HTTP/1.1\nAccept: */*\n\n", &req, &why) ==
			   1 &&
		   !req.tunnel && !strcmp(req.host, "a.test") && req.port == 8080 &&
		   !strcmp(req.version, "HTTP/1.1"),
	   "an absolute http:// URL, lines ending in LF alone");
	ok(parse("POST http://user:pw@allowed.test@evil.test/ HTTP/1.0\r\n\r\n", &req, &why) == 1 &&
		   !strcmp(req.host, "evil.test") && req.port == 80,
	   "a user in the URL: the host is after the last '@' (%s)", req.host);
	ok(parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &req, &why) == 1 && req.address &&
		   !strcmp(req.host, "2001:db8::1"),
	   "an IPv6 address in brackets");
	ok(parse("CONNECT 10.0.0.3:22 HTTP/1.1\r\n\r\n", &req, &why) == 1 && req.address &&
		   req.port == 22,
	   "an IPv4 address, any port");

	static const struct {
		const char *head, *what;
	} bad[] = {
		{"CONNECT a.test HTTP/1.1\r\n\r\n", "CONNECT without a port"},
		{"CONNECT a.test:0 HTTP/1.1\r\n\r\n", "port 0"},
		{"CONNECT a.test:65536 HTTP/1.1\r\n\r\n", "port 65536"},
		{"CONNECT a.test:+443 HTTP/1.1\r\n\r\n", "a signed port"},
		{"CONNECT a.test:443x HTTP/1.1\r\n\r\n", "a port with more after it"},
		{"GET /index.html HTTP/1.1\r\nHost: a.test\r\n\r\n",
		 "a request for the proxy itself"},
		{"GET https://a.test/ HTTP/1.1\r\n\r\n", "https:// in a plain request"},
		{"GET ftp://a.test/ HTTP/1.1\r\n\r\n", "another scheme"},
		{"GET http://a.test/ HTTP/2.0\r\n\r\n", "another version"},
		{"GET http://a.test/  HTTP/1.1\r\n\r\n", "two spaces"},
		{"GET http://a.test/\r\n\r\n", "no version"},
		{"G(T http://a.test/ HTTP/1.1\r\n\r\n", "a method that is not a token"},
		{"CONNECT a.test;id:443 HTTP/1.1\r\n\r\n", "a shell character in the host"},
		{"CONNECT *.a.test:443 HTTP/1.1\r\n\r\n", "a wildcard as the host"},
		{"CONNECT a%2etest:443 HTTP/1.1\r\n\r\n", "a percent-encoded host"},
		{"GET http://a.test\x01/ HTTP/1.1\r\n\r\n", "a control character in the target"},
		{"GET http://[::1/ HTTP/1.1\r\n\r\n", "an unclosed IPv6 bracket"},
		{"GET http://:80/ HTTP/1.1\r\n\r\n", "no host"},
		{"GET http://a.test/ HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", "a folded header"},
		{"GET http://a.test/ HTTP/1.1\r\nno colon here\r\n\r\n",
		 "a header without a colon"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = parse(bad[i].head, &req, &why);
		ok(r == -EINVAL && *why, "refused: %s (%s)", bad[i].what, why);
	}

	char *big = malloc(NETPROXY_HEAD_MAX + 64);
	memset(big, 'a', NETPROXY_HEAD_MAX + 63);
	memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
	big[NETPROXY_HEAD_MAX + 63] = '\0';
	ok(parse(big, &req, &why) == -EINVAL && strstr(why, "16 KiB"),
	   "a head of 16 KiB without its end is refused, not waited for");
	memcpy(big + NETPROXY_HEAD_MAX + 10, "\r\n\r\n", 4);
	ok(parse(big, &req, &why) == -EINVAL, "and so is one that ends past 16 KiB");
	free(big);
}

static void test_decide(void)
{
	struct strv allow = {0};
	struct netproxy_request req;
	const char *why;

	strv_push(&allow, "allowed.test");
	strv_push(&allow, "*.wild.test");
	parse("CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_ALLOWED, "a listed name is allowed");
	parse("CONNECT ALLOWED.TEST.:443 HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_ALLOWED, "in any case, with a final dot");
	parse("CONNECT www.allowed.test:443 HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_NOT_LISTED, "its subdomain is not listed");
	parse("GET http://a.b.wild.test/ HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_ALLOWED, "'*.wild.test' allows a.b.wild.test");
	parse("GET http://wild.test/ HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_NOT_LISTED, "... not wild.test");
	parse("CONNECT localhost:443 HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_NOT_A_NAME, "one label is no name it takes");
	parse("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_NOT_A_NAME,
	   "nor is 127.1, which a resolver would read as an address");
	parse("CONNECT 10.0.0.3:443 HTTP/1.1\r\n\r\n", &req, &why);
	ok(netproxy_decide(&allow, &req) == NETPROXY_ADDRESS, "an address is refused as one");
	strv_push(&allow, "10.0.0.3");
	ok(netproxy_decide(&allow, &req) == NETPROXY_ADDRESS, "whatever the list holds");
	strv_free(&allow);
}

static void test_origin_head(void)
{
	struct netproxy_request req;
	const char *why;
	const char head[] = "POST http://u@a.test:8080/v1/messages?beta=true HTTP/1.1\r\n"
			    "Host: evil.test\r\n"
			    "Proxy-Connection: keep-alive\r\n"
			    "Proxy-Authorization: Basic eDp5\r\n"
			    "Content-Length: 2\r\n"
			    "connection: keep-alive\r\n"
			    "Keep-Alive: timeout=5\r\n"
			    "X-Api-Key: k\r\n"
			    "\r\n";

	ok(parse(head, &req, &why) == 1, "a plain POST");
	char *o = netproxy_origin_head(head, &req);
	bool same = o && !strcmp(o, "POST /v1/messages?beta=true HTTP/1.1\r\n"
				    "Content-Length: 2\r\n"
				    "X-Api-Key: k\r\n"
				    "Host: a.test:8080\r\n"
				    "Connection: close\r\n"
				    "\r\n");
	if (!ok(same, "the origin gets the path, its headers but the proxy's and the "
		      "connection's, the URL's host (never the client's Host) and one request "
		      "per connection") &&
	    o)
		printf("# %s", o);
	free(o);
	parse("GET http://a.test HTTP/1.0\n\n", &req, &why);
	o = netproxy_origin_head("GET http://a.test HTTP/1.0\n\n", &req);
	ok(o && !strcmp(o, "GET / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n"),
	   "no path: '/'; port 80 left out of Host");
	free(o);
	const char q[] = "GET http://a.test?x=1#f HTTP/1.1\r\n\r\n";
	parse(q, &req, &why);
	o = netproxy_origin_head(q, &req);
	ok(o && !strncmp(o, "GET /?x=1 HTTP/1.1\r\n", 20),
	   "a query alone gets its '/', no fragment");
	free(o);
}

static void test_answers(void)
{
	struct netproxy_request req;
	const char *why;

	parse("CONNECT blocked.test:443 HTTP/1.1\r\n\r\n", &req, &why);
	char *a = netproxy_refusal(&req, NETPROXY_NOT_LISTED);
	ok(a && !strncmp(a, "HTTP/1.1 403 Forbidden\r\n", 24), "a refusal is a 403");
	const char *body = a ? strstr(a, "\r\n\r\n") : NULL;
	char cl[64];
	snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", body ? strlen(body + 4) : 0);
	ok(body && strstr(a, cl), "with the body's length");
	ok(body && strstr(body, "sandy refused the connection to 'blocked.test'") &&
		   strstr(body, "not on this session's network allowlist") &&
		   strstr(body, "sandy allow blocked.test"),
	   "the body says sandy refused the name and how to allow it");
	free(a);
	parse("CONNECT 10.0.0.3:443 HTTP/1.1\r\n\r\n", &req, &why);
	a = netproxy_refusal(&req, NETPROXY_ADDRESS);
	ok(a && strstr(a, "'10.0.0.3': an address") && !strstr(a, "sandy allow"),
	   "an address: no 'sandy allow', which takes names");
	free(a);
	a = netproxy_local_refusal("rebind.test", "127.0.0.1");
	ok(a && strstr(a, "403") && strstr(a, "'rebind.test': it resolves to 127.0.0.1"),
	   "a name resolving to this machine: a 403 that says so");
	free(a);
	a = netproxy_error(502, "a.test", "connection refused");
	ok(a && !strncmp(a, "HTTP/1.1 502 Bad Gateway\r\n", 26) &&
		   strstr(a, "cannot reach 'a.test': connection refused."),
	   "502 with what failed");
	free(a);
	ok(!strcmp(netproxy_established, "HTTP/1.1 200 Connection established\r\n\r\n"),
	   "an open tunnel: 200");
}

static bool local4(const char *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	inet_pton(AF_INET, s, &a.sin_addr);
	return netproxy_address_local((struct sockaddr *)&a);
}

static bool local6(const char *s)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6};
	inet_pton(AF_INET6, s, &a.sin6_addr);
	return netproxy_address_local((struct sockaddr *)&a);
}

static void test_local(void)
{
	ok(local4("127.0.0.1") && local4("127.255.0.9") && local4("0.0.0.0") &&
		   local4("169.254.169.254"),
	   "IPv4 loopback, 0.0.0.0 and link-local are never connected to");
	ok(local6("::1") && local6("::") && local6("fe80::1") && local6("::ffff:127.0.0.1") &&
		   local6("::ffff:0.0.0.0") && local6("::ffff:169.254.169.254"),
	   "nor IPv6's, nor IPv4's mapped into IPv6");
	ok(!local4("10.0.0.3") && !local4("93.184.216.34") && !local4("192.168.1.1") &&
		   !local6("2001:db8::1") && !local6("::ffff:10.0.0.3"),
	   "other addresses are");
}

/* A response to query ID for a.test with the records given (each: type,
 * rdata length, rdata), rcode RCODE. */
static size_t response(unsigned char *m, unsigned id, unsigned rcode, int n_rr)
{
	unsigned char q[] = {1, 'a', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1};
	size_t n = 0;

	m[n++] = (unsigned char)(id >> 8);
	m[n++] = (unsigned char)id;
	m[n++] = 0x81;
	m[n++] = (unsigned char)(0x80 | rcode);
	unsigned char counts[] = {0, 1, 0, (unsigned char)n_rr, 0, 0, 0, 0};
	memcpy(m + n, counts, 8);
	n += 8;
	memcpy(m + n, q, sizeof(q));
	n += sizeof(q);
	for (int i = 0; i < n_rr; i++) {
		/* a CNAME first (pointer to the question's name), then A records */
		unsigned char cname[] = {0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 4, 1, 'b', 0xc0, 14};
		unsigned char a[] = {0xc0, 12, 0, 1, 0,	 1, 0, 0,
				     0,	   60, 0, 4, 10, 0, 0, (unsigned char)i};
		memcpy(m + n, i == 0 ? cname : a, 16);
		n += 16;
	}
	return n;
}

static void test_dns(void)
{
	unsigned char buf[512], m[512];
	struct in_addr out[4];

	int n = netproxy_dns_query("allowed.test", 0x1234, buf, sizeof(buf));
	static const unsigned char expect[] = {0x12, 0x34, 1,	0,   0,	  1,   0,   0,	 0,   0,
					       0,    0,	   7,	'a', 'l', 'l', 'o', 'w', 'e', 'd',
					       4,    't',  'e', 's', 't', 0,   0,   1,	 0,   1};
	ok(n == (int)sizeof(expect) && !memcmp(buf, expect, sizeof(expect)),
	   "the query: id, recursion desired, one question for A/IN");
	ok(netproxy_dns_query("a..test", 1, buf, sizeof(buf)) == -EINVAL &&
		   netproxy_dns_query("allowed.test", 1, buf, 20) == -EINVAL,
	   "no query for an empty label or into a short buffer");

	size_t len = response(m, 0x1234, 0, 3);
	n = netproxy_dns_answer(m, len, 0x1234, out, 4);
	ok(n == 2 && out[0].s_addr == htonl(0x0a000001) && out[1].s_addr == htonl(0x0a000002),
	   "the A records of an answer, past a CNAME and compressed names (%d)", n);
	ok(netproxy_dns_answer(m, len, 0x1234, out, 1) == 1, "at most as many as asked for");
	ok(netproxy_dns_answer(m, len, 0x4321, out, 4) == -EINVAL, "another query's id: no answer");
	ok(netproxy_dns_answer(m, len - 3, 0x1234, out, 4) == -EINVAL, "a cut answer: none");
	m[12 + 12 + 16 + 1] = 0xff; /* an A record's name pointer: past the end */
	m[12 + 12 + 16] = 0x3f;	    /* ... now a label running off the end */
	ok(netproxy_dns_answer(m, len, 0x1234, out, 4) == -EINVAL, "a bad name: none");
	len = response(m, 7, 3, 0);
	ok(netproxy_dns_answer(m, len, 7, out, 4) == -ENOENT, "NXDOMAIN");
	len = response(m, 7, 5, 0);
	ok(netproxy_dns_answer(m, len, 7, out, 4) == -EIO, "REFUSED");
	m[2] = 0x01;
	ok(netproxy_dns_answer(m, len, 7, out, 4) == -EINVAL, "a query is no answer");
}

int main(void)
{
	test_parse();
	test_decide();
	test_origin_head();
	test_answers();
	test_local();
	test_dns();
	return tap_done();
}
