/* netproxy.c - see netproxy.h. */

#include "netproxy.h"
#include "sys/sandy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char netproxy_established[] = "HTTP/1.1 200 Connection established\r\n\r\n";

/* The end of the head in BUF: the offset past its empty line, or 0. A
 * bare LF ends lines too, as most servers take it. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* The length of the line at P (before END), without its CR LF or LF; *NEXT
 * past it. */
static size_t line_at(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

	*next = nl ? nl + 1 : end;
	return n > 0 && p[n - 1] == '\r' ? n - 1 : n;
}

static bool is_tchar(char c)
{
	return isalnum((unsigned char)c) || strchr("!#$%&'*+-.^_`|~", c);
}

/* HOST[:PORT] (HOSTPORT, LEN bytes) into REQ; DEFAULT_PORT 0: a port is
 * needed. */
static int parse_authority(const char *hp, size_t len, unsigned default_port,
			   struct netproxy_request *req, const char **why)
{
	const char *end = hp + len, *colon = NULL;
	char host[EGRESS_DOMAIN_MAX + 2];
	size_t n;

	if (len > 0 && hp[0] == '[') {
		const char *close = memchr(hp, ']', len);
		if (!close) {
			*why = "an IPv6 address without its ']'";
			return -EINVAL;
		}
		n = (size_t)(close - hp - 1);
		if (n == 0 || n >= sizeof(host)) {
			*why = "a bad IPv6 address";
			return -EINVAL;
		}
		memcpy(host, hp + 1, n);
		host[n] = '\0';
		struct in6_addr a6;
		if (inet_pton(AF_INET6, host, &a6) != 1) {
			*why = "a bad IPv6 address";
			return -EINVAL;
		}
		req->address = true;
		if (close + 1 < end) {
			if (close[1] != ':') {
				*why = "a bad host";
				return -EINVAL;
			}
			colon = close + 1;
		}
	} else {
		colon = memchr(hp, ':', len);
		n = colon ? (size_t)(colon - hp) : len;
		if (n == 0 || n >= sizeof(host)) {
			*why = n ? "a host name longer than 253 characters" : "no host";
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++) {
			char c = (char)tolower((unsigned char)hp[i]);
			/* What host names and addresses are made of; nothing
			 * the name check or a record could take for more. */
			if (!isalnum((unsigned char)c) && c != '-' && c != '.' && c != '_') {
				*why = "a host that is not a name or an address";
				return -EINVAL;
			}
			host[i] = c;
		}
		host[n] = '\0';
		/* "example.com." is example.com. */
		if (n > 1 && host[n - 1] == '.')
			host[--n] = '\0';
		struct in_addr a4;
		req->address = inet_pton(AF_INET, host, &a4) == 1;
	}
	memcpy(req->host, host, strlen(host) + 1);
	if (!colon) {
		req->port = default_port;
		if (!default_port) {
			*why = "CONNECT without a port";
			return -EINVAL;
		}
		return 0;
	}
	unsigned long port = 0;
	const char *p = colon + 1;
	if (p == end || end - p > 5) {
		*why = "a bad port";
		return -EINVAL;
	}
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p)) {
			*why = "a bad port";
			return -EINVAL;
		}
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (port == 0 || port > 65535) {
		*why = "a bad port";
		return -EINVAL;
	}
	req->port = (unsigned)port;
	return 0;
}

/* A plain request's TARGET (LEN bytes at offset OFF of the head): an
 * http:// URL. */
static int parse_url(const char *head, size_t off, size_t len, struct netproxy_request *req,
		     const char **why)
{
	const char *t = head + off, *end = t + len;

	if (len >= 8 && !strncasecmp(t, "https://", 8)) {
		*why = "an https:// URL in a plain request; an HTTPS client asks for a tunnel "
		       "(CONNECT), as it does with the https_proxy variable";
		return -EINVAL;
	}
	if (len < 7 || strncasecmp(t, "http://", 7) != 0) {
		*why = t[0] == '/' ? "a request for the proxy itself: it takes http:// URLs and "
				     "CONNECT"
				   : "a target that is not an http:// URL";
		return -EINVAL;
	}
	const char *a = t + 7, *a_end = a;
	while (a_end < end && *a_end != '/' && *a_end != '?' && *a_end != '#')
		a_end++;
	/* user:password@host: the host is after the last '@'. */
	for (const char *p = a; p < a_end; p++)
		if (*p == '@')
			a = p + 1;
	int r = parse_authority(a, (size_t)(a_end - a), 80, req, why);
	if (r < 0)
		return r;
	const char *hash = memchr(a_end, '#', (size_t)(end - a_end));
	const char *p_end = hash ? hash : end;
	req->path_off = (size_t)(a_end - head);
	req->path_len = (size_t)(p_end - a_end);
	req->path_slash = req->path_len > 0 && *a_end == '?';
	return 0;
}

int netproxy_parse(const char *buf, size_t len, struct netproxy_request *req, const char **why)
{
	size_t hlen = head_end(buf, len);
	const char *next;

	memset(req, 0, sizeof(*req));
	if (!hlen) {
		if (len < NETPROXY_HEAD_MAX)
			return 0;
		*why = "a request head longer than 16 KiB";
		return -EINVAL;
	}
	if (hlen > NETPROXY_HEAD_MAX) {
		*why = "a request head longer than 16 KiB";
		return -EINVAL;
	}
	req->head_len = hlen;
	size_t n = line_at(buf, buf + hlen, &next);
	const char *sp1 = memchr(buf, ' ', n);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - buf)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || sp2 == sp1 + 1) {
		*why = "not an HTTP request line";
		return -EINVAL;
	}
	for (const char *p = buf; p < sp1; p++)
		if (!is_tchar(*p)) {
			*why = "not an HTTP request line";
			return -EINVAL;
		}
	size_t vlen = n - (size_t)(sp2 + 1 - buf);
	if (vlen != 8 || (strncmp(sp2 + 1, "HTTP/1.1", 8) && strncmp(sp2 + 1, "HTTP/1.0", 8))) {
		*why = "not HTTP/1.0 or HTTP/1.1";
		return -EINVAL;
	}
	memcpy(req->version, sp2 + 1, 8);
	req->version[8] = '\0';
	/* The target: no control characters or spaces, which a forwarded
	 * request line would carry. */
	for (const char *p = sp1 + 1; p < sp2; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			*why = "a target with a space or a control character";
			return -EINVAL;
		}
	/* Header lines: no obsolete folding, which a reader of the
	 * forwarded head could take differently from this one. */
	for (const char *p = next; p < buf + hlen;) {
		size_t l = line_at(p, buf + hlen, &next);
		if (l > 0 && (p[0] == ' ' || p[0] == '\t')) {
			*why = "a folded header line";
			return -EINVAL;
		}
		if (l > 0 && !memchr(p, ':', l)) {
			*why = "a header line without a colon";
			return -EINVAL;
		}
		p = next;
	}
	req->method_len = (size_t)(sp1 - buf);
	size_t toff = (size_t)(sp1 + 1 - buf), tlen = (size_t)(sp2 - sp1 - 1);
	if (req->method_len == 7 && !strncmp(buf, "CONNECT", 7)) {
		req->tunnel = true;
		return parse_authority(buf + toff, tlen, 0, req, why) < 0 ? -EINVAL : 1;
	}
	return parse_url(buf, toff, tlen, req, why) < 0 ? -EINVAL : 1;
}

enum netproxy_verdict netproxy_decide(const struct strv *allow, const struct netproxy_request *req)
{
	const char *why;

	if (req->address)
		return NETPROXY_ADDRESS;
	if (!strncmp(req->host, "*.", 2) || egress_domain_check(req->host, &why) < 0)
		return NETPROXY_NOT_A_NAME;
	return egress_name_allowed(allow, req->host) ? NETPROXY_ALLOWED : NETPROXY_NOT_LISTED;
}

/* Whether the header line L (LEN bytes) is NAME's. */
static bool header_is(const char *l, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && l[n] == ':' && !strncasecmp(l, name, n);
}

char *netproxy_origin_head(const char *buf, const struct netproxy_request *req)
{
	static const char *const dropped[] = {
		"Host",	      "Connection",	     "Proxy-Connection",
		"Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate"};
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);
	const char *next, *end = buf + req->head_len;

	if (!f)
		return NULL;
	fprintf(f, "%.*s %s%.*s %s\r\n", (int)req->method_len, buf,
		req->path_slash || !req->path_len ? "/" : "", (int)req->path_len,
		buf + req->path_off, req->version);
	line_at(buf, end, &next);
	for (const char *p = next; p < end; p = next) {
		size_t l = line_at(p, end, &next);
		bool drop = l == 0;
		for (size_t i = 0; !drop && i < ARRAY_SIZE(dropped); i++)
			drop = header_is(p, l, dropped[i]);
		if (!drop)
			fprintf(f, "%.*s\r\n", (int)l, p);
	}
	if (req->port == 80)
		fprintf(f, "Host: %s\r\n", req->host);
	else
		fprintf(f, "Host: %s:%u\r\n", req->host, req->port);
	fputs("Connection: close\r\n\r\n", f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static const char *reason(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 502:
		return "Bad Gateway";
	case 504:
		return "Gateway Timeout";
	default:
		return "Error";
	}
}

static char *answer(int status, const char *body)
{
	if (!body)
		return NULL;
	return sandy_asprintf("HTTP/1.1 %d %s\r\n"
			      "Content-Type: text/plain; charset=utf-8\r\n"
			      "Content-Length: %zu\r\n"
			      "Connection: close\r\n"
			      "\r\n"
			      "%s",
			      status, reason(status), strlen(body), body);
}

char *netproxy_refusal(const struct netproxy_request *req, enum netproxy_verdict verdict)
{
	cleanup_free char *body = NULL;
	const char *h = req->host;

	switch (verdict) {
	case NETPROXY_NOT_LISTED:
		body = sandy_asprintf(
			"sandy refused the connection to '%s': it is not on this session's network "
			"allowlist.\n"
			"The user can allow it in this session with 'sandy allow %s', or in every "
			"session with --allow %s, SANDY_ALLOW_DOMAINS or \"allow\" in "
			"~/.config/sandy/config.json.\n",
			h, h, h);
		break;
	case NETPROXY_NOT_A_NAME:
		body = sandy_asprintf("sandy refused the connection to '%s': not a name the "
				      "network allowlist can hold (a whole domain name, e.g. "
				      "example.com).\n",
				      h);
		break;
	case NETPROXY_ADDRESS:
	default:
		body = sandy_asprintf("sandy refused the connection to '%s': an address; the "
				      "network allowlist holds names, ask for one.\n",
				      h);
		break;
	}
	return answer(403, body);
}

char *netproxy_local_refusal(const char *host, const char *address)
{
	cleanup_free char *body =
		sandy_asprintf("sandy refused the connection to '%s': it resolves to %s, an "
			       "address of the machine sandy runs on, which the sandbox does not "
			       "reach.\n",
			       host, address);

	return answer(403, body);
}

char *netproxy_error(int status, const char *host, const char *why)
{
	cleanup_free char *body =
		host ? sandy_asprintf("sandy's proxy cannot reach '%s': %s.\n", host, why)
		     : sandy_asprintf("sandy's proxy cannot take this request: %s.\n", why);

	return answer(status, body);
}

bool netproxy_address_local(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		return (a >> 24) == 127 || (a >> 24) == 0 || (a >> 16) == 0xa9fe;
	}
	if (sa->sa_family != AF_INET6)
		return true; /* nothing the proxy connects to */
	const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LINKLOCAL(a))
		return true;
	if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
		struct sockaddr_in v4 = {.sin_family = AF_INET};
		memcpy(&v4.sin_addr, &a->s6_addr[12], 4);
		return netproxy_address_local((const struct sockaddr *)&v4);
	}
	return false;
}

int netproxy_dns_query(const char *name, unsigned id, unsigned char *buf, size_t size)
{
	size_t n = 0, len = strlen(name);

	/* Header, the name (one length byte per label, and the root's),
	 * type and class. */
	if (len == 0 || len > EGRESS_DOMAIN_MAX || size < 12 + len + 2 + 4)
		return -EINVAL;
	unsigned char header[12] = {(unsigned char)(id >> 8), (unsigned char)id, 0x01, 0, 0, 1};
	memcpy(buf, header, sizeof(header));
	n = sizeof(header);
	for (const char *p = name; *p;) {
		size_t l = strcspn(p, ".");
		if (l == 0 || l > 63)
			return -EINVAL;
		buf[n++] = (unsigned char)l;
		memcpy(buf + n, p, l);
		n += l;
		p += l;
		if (*p)
			p++;
	}
	buf[n++] = 0;
	buf[n++] = 0; /* type A */
	buf[n++] = 1;
	buf[n++] = 0; /* class IN */
	buf[n++] = 1;
	return (int)n;
}

/* Past the (possibly compressed) name at *OFF of MSG. */
static int skip_name(const unsigned char *msg, size_t len, size_t *off)
{
	for (size_t o = *off; o < len;) {
		unsigned char l = msg[o];
		if ((l & 0xc0) == 0xc0) {
			if (o + 2 > len)
				return -EINVAL;
			*off = o + 2;
			return 0;
		}
		if (l & 0xc0)
			return -EINVAL;
		o += 1 + (size_t)l;
		if (l == 0) {
			*off = o;
			return 0;
		}
	}
	return -EINVAL;
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

int netproxy_dns_answer(const unsigned char *msg, size_t len, unsigned id, struct in_addr *out,
			size_t max)
{
	size_t off = 12;
	int found = 0;

	if (len < 12 || get16(msg) != (id & 0xffff) || !(msg[2] & 0x80) || get16(msg + 4) != 1)
		return -EINVAL;
	unsigned rcode = msg[3] & 0x0f;
	if (rcode == 3)
		return -ENOENT;
	if (rcode != 0)
		return -EIO;
	if (skip_name(msg, len, &off) < 0 || off + 4 > len)
		return -EINVAL;
	off += 4;
	for (unsigned i = 0, an = get16(msg + 6); i < an; i++) {
		if (skip_name(msg, len, &off) < 0 || off + 10 > len)
			return -EINVAL;
		unsigned type = get16(msg + off), class = get16(msg + off + 2);
		size_t rdlen = get16(msg + off + 8);
		off += 10;
		if (off + rdlen > len)
			return -EINVAL;
		/* Only A records; a CNAME's own name needs no following, its
		 * target's addresses come in the same answer. */
		if (type == 1 && class == 1 && rdlen == 4 && (size_t)found < max)
			memcpy(&out[found++], msg + off, 4);
		off += rdlen;
	}
	return found;
}
