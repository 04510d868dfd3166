/* egress.c - see egress.h. */

#include "egress.h"
#include "sys/sandy.h"

#include "common/quote.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <ctype.h>
#include <string.h>

int egress_domain_check(const char *name, const char **why)
{
	const char *p = name;
	size_t labels = 0;
	bool last_numeric = true;

	if (!name || !*name) {
		*why = "empty";
		return -EINVAL;
	}
	if (strlen(name) > EGRESS_DOMAIN_MAX) {
		*why = "longer than 253 characters";
		return -EINVAL;
	}
	if (!strncmp(p, "*.", 2))
		p += 2;
	for (;;) {
		size_t len = 0;
		last_numeric = true;
		for (; p[len] && p[len] != '.'; len++) {
			unsigned char c = (unsigned char)p[len];
			if (!isascii(c) || !(isalnum(c) || c == '-')) {
				*why = "only letters, digits, hyphens and dots are allowed (and a "
				       "leading '*.')";
				return -EINVAL;
			}
			if (!isdigit(c))
				last_numeric = false;
		}
		if (len == 0) {
			*why = "an empty label (two dots in a row, or a dot at an end)";
			return -EINVAL;
		}
		if (len > 63) {
			*why = "a label longer than 63 characters";
			return -EINVAL;
		}
		if (p[0] == '-' || p[len - 1] == '-') {
			*why = "a label starts or ends with a hyphen";
			return -EINVAL;
		}
		labels++;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (labels < 2) {
		*why = "a single label; give the whole name (e.g. example.com)";
		return -EINVAL;
	}
	if (last_numeric) {
		*why = "an address, not a domain";
		return -EINVAL;
	}
	return 0;
}

int egress_parse_list(const char *list, struct strv *out, char **bad, const char **why)
{
	static const char seps[] = " ,\t\r\n";
	size_t start = out->n;
	int r = 0;

	*bad = NULL;
	for (const char *p = list ? list : ""; r == 0;) {
		p += strspn(p, seps);
		if (!*p)
			break;
		size_t len = strcspn(p, seps);
		char *entry = strndup(p, len);
		if (!entry) {
			r = -ENOMEM;
			break;
		}
		for (char *c = entry; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (egress_domain_check(entry, why) < 0) {
			*bad = strndup(p, len);
			free(entry);
			r = -EINVAL;
			break;
		}
		r = strv_take(out, entry);
		p += len;
	}
	if (r < 0) {
		while (out->n > start)
			free(out->v[--out->n]);
		if (out->v)
			out->v[out->n] = NULL;
	}
	return r;
}

/* What every agent needs to reach besides its own endpoints: GitHub, for
 * git, gh and the releases they download. */
static const char *const github_domains[] = {
	"github.com",
	"api.github.com",
	"codeload.github.com",
	"uploads.github.com",
	"objects.githubusercontent.com",
	"raw.githubusercontent.com",
	"release-assets.githubusercontent.com",
	"*.githubusercontent.com",
	NULL,
};

static const struct {
	const char *key; /* an agent kind, or a rule source's name */
	const char *const domains[8];
} builtin_domains[] = {
	{"claude",
	 {"api.anthropic.com", "console.anthropic.com", "statsig.anthropic.com", "claude.ai",
	  NULL}},
	{"codex", {"api.openai.com", "auth.openai.com", "chatgpt.com", NULL}},
	{"gemini",
	 {"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com",
	  "oauth2.googleapis.com", "accounts.google.com", "www.googleapis.com", NULL}},
	{"node", {"registry.npmjs.org", "registry.yarnpkg.com", "repo.yarnpkg.com", NULL}},
	{"python", {"pypi.org", "files.pythonhosted.org", NULL}},
	{"rust",
	 {"crates.io", "index.crates.io", "static.crates.io", "static.rust-lang.org", NULL}},
	{"go", {"proxy.golang.org", "sum.golang.org", NULL}},
	{"ruby", {"rubygems.org", "index.rubygems.org", NULL}},
	{"java",
	 {"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org",
	  NULL}},
	{"gradle",
	 {"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org",
	  "downloads.gradle.org", "dl.google.com", "maven.google.com", NULL}},
	{"scala", {"repo.maven.apache.org", "repo1.maven.org", "repo.scala-sbt.org", NULL}},
	{"clojure",
	 {"repo.clojars.org", "clojars.org", "repo.maven.apache.org", "repo1.maven.org", NULL}},
	{"php", {"repo.packagist.org", "packagist.org", NULL}},
	{"dotnet", {"api.nuget.org", "globalcdn.nuget.org", "www.nuget.org", NULL}},
	{"swift", {"cdn.cocoapods.org", "download.swift.org", NULL}},
	{"elixir", {"hex.pm", "repo.hex.pm", "builds.hex.pm", NULL}},
	{"erlang", {"hex.pm", "repo.hex.pm", NULL}},
	{"haskell", {"hackage.haskell.org", "downloads.haskell.org", "www.stackage.org", NULL}},
	{"dart", {"pub.dev", "pub.dartlang.org", NULL}},
	{"zig", {"ziglang.org", NULL}},
	{"ocaml", {"opam.ocaml.org", NULL}},
	{"r", {"cloud.r-project.org", "cran.r-project.org", "bioconductor.org", NULL}},
	{"julia", {"pkg.julialang.org", "storage.julialang.net", NULL}},
	{"perl", {"cpan.metacpan.org", "fastapi.metacpan.org", "cpanmetadb.plackperl.org", NULL}},
	{"lua", {"luarocks.org", NULL}},
	{"terraform",
	 {"registry.terraform.io", "releases.hashicorp.com", "registry.opentofu.org", NULL}},
	{"nix", {"cache.nixos.org", "channels.nixos.org", NULL}},
};

static int push_all(struct strv *out, const char *const *domains)
{
	int r = 0;

	for (; r == 0 && *domains; domains++)
		r = strv_push(out, *domains);
	return r;
}

/* NAME without a directory or a ".json" suffix equals KEY. */
static bool source_is(const char *name, const char *key)
{
	const char *base = strrchr(name, '/');
	size_t len;

	base = base ? base + 1 : name;
	len = strlen(base);
	if (len > 5 && !strcmp(base + len - 5, ".json"))
		len -= 5;
	return len == strlen(key) && !strncmp(base, key, len);
}

int egress_builtin(const char *agent, const struct strv *sources, struct strv *out)
{
	int r = push_all(out, github_domains);

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(builtin_domains); i++) {
		bool wanted = agent && !strcmp(agent, builtin_domains[i].key);
		for (size_t j = 0; !wanted && sources && j < sources->n; j++)
			wanted = source_is(sources->v[j], builtin_domains[i].key);
		if (wanted)
			r = push_all(out, builtin_domains[i].domains);
	}
	return r;
}

void egress_dedup(struct strv *allow)
{
	size_t w = 0;

	strv_sort(allow);
	for (size_t i = 0; i < allow->n; i++) {
		if (w > 0 && !strcmp(allow->v[w - 1], allow->v[i]))
			free(allow->v[i]);
		else
			allow->v[w++] = allow->v[i];
	}
	allow->n = w;
	if (allow->v)
		allow->v[w] = NULL;
}

int egress_upstream_check(const char *address)
{
	struct in_addr a;

	if (!address || inet_pton(AF_INET, address, &a) != 1)
		return -EINVAL;
	return (ntohl(a.s_addr) >> 24) == 127 ? -EINVAL : 0;
}

int egress_resolv_conf(const char *text, struct strv *out)
{
	int r = 0;

	for (const char *line = text; r == 0 && line && *line;) {
		size_t len = strcspn(line, "\n");
		char buf[256], word[64], address[64];
		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			if (sscanf(buf, " %63s %63s", word, address) == 2 &&
			    !strcmp(word, "nameserver") && egress_upstream_check(address) == 0)
				r = strv_push(out, address);
		}
		line += len;
		if (*line)
			line++;
	}
	return r;
}

static bool allowed_exactly(const struct strv *allow, const char *name)
{
	for (size_t i = 0; i < allow->n; i++)
		if (!strcmp(allow->v[i], name))
			return true;
	return false;
}

bool egress_name_allowed(const struct strv *allow, const char *name)
{
	char wild[EGRESS_DOMAIN_MAX + 3];

	if (allowed_exactly(allow, name))
		return true;
	/* dnsmasq's "*.parent" matches every name below parent, at any
	 * depth, and not parent itself. */
	for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
		snprintf(wild, sizeof(wild), "*%s", dot);
		if (allowed_exactly(allow, wild))
			return true;
	}
	return false;
}

char *egress_servers_file(const struct strv *allow, const struct strv *upstreams)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs("# The names sandy's gateway forwards; every other name is refused.\n", f);
	for (size_t i = 0; i < allow->n; i++) {
		const char *name = allow->v[i];
		for (size_t j = 0; j < upstreams->n; j++)
			fprintf(f, "server=/%s/%s\n", name, upstreams->v[j]);
		/* dnsmasq forwards a name's subdomains with it; answering them
		 * here (NXDOMAIN) keeps the entry to the name itself, unless its
		 * subdomains are allowed too. */
		if (strncmp(name, "*.", 2) != 0) {
			char wild[EGRESS_DOMAIN_MAX + 3];
			snprintf(wild, sizeof(wild), "*.%s", name);
			if (!allowed_exactly(allow, wild))
				fprintf(f, "server=/%s/\n", wild);
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *egress_ruleset(const struct strv *upstreams, bool root_out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "# sandy's gateway: the agent's network namespace.\n"
		   "flush ruleset\n"
		   "table inet sandy {\n"
		   "\tset allowed4 {\n"
		   "\t\ttype ipv4_addr\n"
		   "\t}\n"
		   "\tset upstream4 {\n"
		   "\t\ttype ipv4_addr\n");
	if (upstreams->n) {
		fputs("\t\telements = { ", f);
		for (size_t i = 0; i < upstreams->n; i++)
			fprintf(f, "%s%s", i ? ", " : "", upstreams->v[i]);
		fputs(" }\n", f);
	}
	fprintf(f,
		"\t}\n"
		"\tchain output {\n"
		"\t\ttype filter hook output priority 0; policy drop;\n"
		"\t\tct state established,related accept\n"
		"\t\toif \"lo\" ip daddr 127.0.0.0/8 accept\n"
		"\t\toif \"lo\" ip6 daddr ::1 accept\n"
		"\t\tmeta skuid \"dnsmasq\" ip daddr @upstream4 meta l4proto { tcp, udp } th "
		"dport 53 accept\n"
		"%s"
		"\t\t# the kernel's own neighbour and router discovery: not an attempt\n"
		"\t\ticmpv6 type { nd-router-solicit, nd-neighbor-solicit, mld-listener-report, "
		"mld2-listener-report } drop\n"
		"\t\tip daddr @allowed4 ct state new log group %d prefix \"allowed\" accept\n"
		"\t\tlog group %d prefix \"refused\"\n"
		"\t\tmeta l4proto tcp reject with tcp reset\n"
		"\t\treject with icmpx type admin-prohibited\n"
		"\t}\n"
		"\tchain input {\n"
		"\t\ttype filter hook input priority 0; policy drop;\n"
		"\t\tiif \"lo\" accept\n"
		"\t\tct state established,related accept\n"
		"\t}\n"
		"}\n",
		root_out ? "\t\tmeta skuid 0 accept\n" : "", EGRESS_NFLOG_GROUP,
		EGRESS_NFLOG_GROUP);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Copies the next whitespace-separated word of *P into OUT (of SIZE). */
static bool next_word(const char **p, char *out, size_t size)
{
	const char *s = *p + strspn(*p, " \t");
	size_t len = strcspn(s, " \t\r\n");

	if (len == 0 || len >= size)
		return false;
	memcpy(out, s, len);
	out[len] = '\0';
	*p = s + len;
	return true;
}

int egress_dns_line(struct egress_dns_reader *r, const char *line, double now,
		    struct egress_record *rec)
{
	/* "Dec  1 19:18:24 dnsmasq[7]: SERIAL CLIENT/PORT WHAT NAME ..." */
	const char *p = strstr(line, "]: ");
	char serial_s[24], client[64], what[32], name[EGRESS_DOMAIN_MAX + 2];
	unsigned long serial;
	char *end;

	if (!p)
		return 0;
	p += 3;
	if (!next_word(&p, serial_s, sizeof(serial_s)) || !next_word(&p, client, sizeof(client)) ||
	    !next_word(&p, what, sizeof(what)) || !next_word(&p, name, sizeof(name)))
		return 0;
	serial = strtoul(serial_s, &end, 10);
	if (*end || !strchr(client, '/'))
		return 0;
	if (!strncmp(what, "query[", 6)) {
		struct pending_query *q = &r->pending[r->next++ % ARRAY_SIZE(r->pending)];
		size_t tlen = strcspn(what + 6, "]");
		q->serial = serial;
		snprintf(q->name, sizeof(q->name), "%s", name);
		snprintf(q->qtype, sizeof(q->qtype), "%.*s", (int)tlen, what + 6);
		return 0;
	}
	bool allowed;
	if (!strcmp(what, "forwarded") || !strcmp(what, "cached") || !strcmp(what, "cached-stale"))
		allowed = true;
	else if (!strcmp(what, "config") || !strcmp(what, "local"))
		allowed = false;
	else
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(r->pending); i++) {
		struct pending_query *q = &r->pending[i];
		if (q->serial != serial || !q->name[0])
			continue;
		memset(rec, 0, sizeof(*rec));
		rec->dns = true;
		rec->allowed = allowed;
		rec->time = now;
		memcpy(rec->name, q->name, sizeof(rec->name));
		memcpy(rec->qtype, q->qtype, sizeof(rec->qtype));
		q->name[0] = '\0'; /* decided: later lines of it are answers */
		return 1;
	}
	return 0;
}

static const char *json_string(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double json_number(const cJSON *o, const char *key, double fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

static void proto_name(int proto, char *out, size_t size)
{
	switch (proto) {
	case 6:
		snprintf(out, size, "tcp");
		break;
	case 17:
		snprintf(out, size, "udp");
		break;
	case 1:
		snprintf(out, size, "icmp");
		break;
	case 58:
		snprintf(out, size, "icmpv6");
		break;
	default:
		snprintf(out, size, "%d", proto);
	}
}

int egress_packet_line(const char *line, struct egress_record *rec)
{
	cJSON *o = cJSON_Parse(line);
	const char *prefix = json_string(o, "oob.prefix"), *dest = json_string(o, "dest_ip");
	int found = 0;

	if (prefix && dest && (!strcmp(prefix, "allowed") || !strcmp(prefix, "refused"))) {
		memset(rec, 0, sizeof(*rec));
		rec->allowed = !strcmp(prefix, "allowed");
		rec->time = json_number(o, "oob.time.sec", 0) +
			    json_number(o, "oob.time.usec", 0) / 1e6;
		rec->family = json_number(o, "oob.family", 2) == 10 ? 6 : 4;
		proto_name((int)json_number(o, "ip.protocol", 0), rec->proto, sizeof(rec->proto));
		snprintf(rec->dest, sizeof(rec->dest), "%s", dest);
		rec->port = (int)json_number(o, "dest_port", 0);
		found = 1;
	}
	cJSON_Delete(o);
	return found;
}

char *egress_record_json(const struct egress_record *rec, const char *session)
{
	cJSON *o = cJSON_CreateObject();
	char stamp[40];
	time_t secs = (time_t)rec->time;
	struct tm tm;
	char *text = NULL, *line = NULL;

	if (!o)
		return NULL;
	gmtime_r(&secs, &tm);
	size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + n, sizeof(stamp) - n, ".%06dZ",
		 (int)((rec->time - (double)secs) * 1e6 + 0.5) % 1000000);
	bool ok = cJSON_AddStringToObject(o, "time", stamp) &&
		  cJSON_AddNumberToObject(o, "epoch", rec->time) &&
		  cJSON_AddStringToObject(o, "session", session ? session : "") &&
		  cJSON_AddStringToObject(o, "kind", rec->dns ? "dns" : "connect") &&
		  cJSON_AddStringToObject(o, "verdict", rec->allowed ? "allowed" : "refused");
	/* The agent chose the name, and DNS carries any byte: name_hex keeps
	 * the line JSON (quote.h). */
	if (ok && rec->dns)
		ok = quote_json_add(o, "name", rec->name) == 0 &&
		     cJSON_AddStringToObject(o, "type", rec->qtype);
	else if (ok)
		ok = cJSON_AddStringToObject(o, "proto", rec->proto) &&
		     (!rec->dest[0] || cJSON_AddStringToObject(o, "dest", rec->dest)) &&
		     cJSON_AddNumberToObject(o, "port", rec->port) &&
		     (!rec->dest[0] || cJSON_AddNumberToObject(o, "ip", rec->family)) &&
		     (!rec->name[0] || cJSON_AddStringToObject(o, "name", rec->name));
	if (ok)
		text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text)
		line = sandy_asprintf("%s\n", text);
	free(text);
	return line;
}

int egress_record_parse(const char *line, struct egress_record *rec)
{
	cJSON *o = cJSON_Parse(line);
	const char *kind = json_string(o, "kind"), *verdict = json_string(o, "verdict");
	int found = 0;

	if (kind && verdict) {
		memset(rec, 0, sizeof(*rec));
		rec->dns = !strcmp(kind, "dns");
		rec->allowed = !strcmp(verdict, "allowed");
		rec->time = json_number(o, "epoch", 0);
		cleanup_free char *name = NULL;
		quote_json_get(o, "name", &name, NULL);
		snprintf(rec->name, sizeof(rec->name), "%s", name ? name : "");
		snprintf(rec->qtype, sizeof(rec->qtype), "%s",
			 json_string(o, "type") ? json_string(o, "type") : "");
		snprintf(rec->proto, sizeof(rec->proto), "%s",
			 json_string(o, "proto") ? json_string(o, "proto") : "");
		snprintf(rec->dest, sizeof(rec->dest), "%s",
			 json_string(o, "dest") ? json_string(o, "dest") : "");
		rec->port = (int)json_number(o, "port", 0);
		rec->family = (unsigned)json_number(o, "ip", 4);
		found = 1;
	}
	cJSON_Delete(o);
	return found;
}

int egress_stats_add(struct egress_stats *st, const struct egress_record *rec)
{
	char dest[EGRESS_DOMAIN_MAX + 64];

	if (rec->dns) {
		st->queries++;
		if (rec->allowed)
			return 0;
		st->queries_refused++;
		snprintf(dest, sizeof(dest), "%s (DNS)", rec->name);
	} else {
		st->connects++;
		if (rec->allowed)
			return 0;
		st->connects_refused++;
		/* Through the proxy, the name says more than the address. */
		if (rec->name[0])
			snprintf(dest, sizeof(dest), "%s:%d/%s", rec->name, rec->port, rec->proto);
		else if (rec->port)
			snprintf(dest, sizeof(dest), rec->family == 6 ? "[%s]:%d/%s" : "%s:%d/%s",
				 rec->dest, rec->port, rec->proto);
		else
			snprintf(dest, sizeof(dest), "%s/%s", rec->dest, rec->proto);
	}
	for (size_t i = 0; i < st->n_refused; i++)
		if (!strcmp(st->refused[i].dest, dest)) {
			st->refused[i].count++;
			return 0;
		}
	struct refused_dest *n = realloc(st->refused, (st->n_refused + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	st->refused = n;
	n[st->n_refused].dest = strdup(dest);
	if (!n[st->n_refused].dest)
		return -ENOMEM;
	n[st->n_refused++].count = 1;
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct refused_dest *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->dest, y->dest);
}

void egress_stats_print(FILE *f, const struct egress_stats *st, const char *log_path)
{
	fprintf(f,
		"sandy: network: %lu DNS %s (%lu refused), %lu connection %s (%lu refused); log: "
		"%s\n",
		st->queries, st->queries == 1 ? "query" : "queries", st->queries_refused,
		st->connects, st->connects == 1 ? "attempt" : "attempts", st->connects_refused,
		log_path);
	if (!st->n_refused)
		return;
	qsort(st->refused, st->n_refused, sizeof(*st->refused), by_count);
	fputs("  refused, by destination:\n", f);
	for (size_t i = 0; i < st->n_refused; i++) {
		/* A name the agent looked up: any bytes DNS carries. */
		cleanup_free char *dest = quote_str(st->refused[i].dest);
		fprintf(f, "    %5lu  %s\n", st->refused[i].count, quoted(dest));
	}
	fputs("  allow a name for a running session with 'sandy allow NAME'\n", f);
}

void egress_stats_free(struct egress_stats *st)
{
	for (size_t i = 0; i < st->n_refused; i++)
		free(st->refused[i].dest);
	free(st->refused);
	memset(st, 0, sizeof(*st));
}

/* The stream for KIND and VERDICT in STREAMS, made when missing. */
static cJSON *loki_values(cJSON *streams, const char *session, const char *kind,
			  const char *verdict)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, streams)
	{
		const cJSON *labels = cJSON_GetObjectItemCaseSensitive(s, "stream");
		if (!strcmp(json_string(labels, "kind"), kind) &&
		    !strcmp(json_string(labels, "verdict"), verdict))
			return cJSON_GetObjectItemCaseSensitive(s, "values");
	}
	cJSON *stream = cJSON_CreateObject(), *labels = cJSON_CreateObject();
	cJSON *values = cJSON_CreateArray();
	if (!stream || !labels || !values || !cJSON_AddItemToArray(streams, stream)) {
		cJSON_Delete(stream);
		cJSON_Delete(labels);
		cJSON_Delete(values);
		return NULL;
	}
	cJSON_AddItemToObject(stream, "stream", labels);
	cJSON_AddItemToObject(stream, "values", values);
	if (!cJSON_AddStringToObject(labels, "job", "sandy") ||
	    !cJSON_AddStringToObject(labels, "session", session) ||
	    !cJSON_AddStringToObject(labels, "kind", kind) ||
	    !cJSON_AddStringToObject(labels, "verdict", verdict))
		return NULL;
	return values;
}

char *egress_loki_body(const char *records, const char *session)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *streams = root ? cJSON_AddArrayToObject(root, "streams") : NULL;
	char *body = NULL;
	size_t n = 0;
	bool ok = streams != NULL;

	for (const char *line = records; ok && line && *line;) {
		size_t len = strcspn(line, "\n");
		cleanup_free char *one = strndup(line, len);
		struct egress_record rec;
		line += len + (line[len] == '\n');
		if (!one) {
			ok = false;
			break;
		}
		if (!egress_record_parse(one, &rec))
			continue;
		cJSON *values = loki_values(streams, session, rec.dns ? "dns" : "connect",
					    rec.allowed ? "allowed" : "refused");
		cJSON *pair = cJSON_CreateArray();
		char ns[32];
		snprintf(ns, sizeof(ns), "%.0f", rec.time * 1e9);
		if (!values || !pair || !cJSON_AddItemToArray(values, pair)) {
			cJSON_Delete(pair);
			ok = false;
			break;
		}
		ok = cJSON_AddItemToArray(pair, cJSON_CreateString(ns)) &&
		     cJSON_AddItemToArray(pair, cJSON_CreateString(one));
		n++;
	}
	if (ok && n)
		body = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return body;
}
