/* test_egress.c - the network allowlist as data (launcher/world/egress.c): the
 * domain check every entry passes (hostile strings included), the lists
 * from a variable, the built-in entries per agent and project type, the
 * resolvers taken from a resolv.conf, the servers file (a name without its
 * subdomains unless asked, no default upstream), the ruleset, and the
 * egress log: dnsmasq's and ulogd's lines turned into records, records
 * written and read back (the proxy's, with the name they were for), the
 * summary's counts and Loki's push body; and the name match the proxy
 * checks with. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "launcher/world/egress.h"

#include <errno.h>
#include "tap.h"
#include "utf8.h"

static bool has(const struct strv *s, const char *v)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], v))
			return true;
	return false;
}

static void test_domain_check(void)
{
	static const char *const good[] = {
		"example.com",	   "a-b.example.com", "*.example.com",	"xn--bcher-kva.example",
		"API.Example.COM", "1.example.com",   "a.b.c.d.e.test",
	};
	static const char *const bad[] = {
		"",
		"-rf",
		"x.test; touch /tmp/pwned",
		"$(id)",
		"`id`",
		"a..b",
		".a.b",
		"a.b.",
		"localhost",
		"1.2.3.4",
		"a_b.com",
		"*.*.com",
		"*example.com",
		"ex*.com",
		"ünï.test",
		"a.-b.com",
		"a-.com",
		" a.com",
		"a.com ",
		"x.test\nlate.test",
		"../x.test",
		"x.test/../y",
		"*.",
		"*.com",
	};
	const char *why = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		ok(egress_domain_check(good[i], &why) == 0, "domain '%s' is taken", good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char shown[64];
		size_t j = 0;
		for (const char *c = bad[i]; *c && j < sizeof(shown) - 1; c++)
			shown[j++] = *c == '\n' ? '|' : *c;
		shown[j] = '\0';
		why = NULL;
		int r = egress_domain_check(bad[i], &why);
		ok(r == -EINVAL && why && *why, "domain '%s' is refused, with a reason (%s)", shown,
		   why ? why : "none");
	}
	char label[80], name[300];
	memset(label, 'a', 63);
	label[63] = '\0';
	snprintf(name, sizeof(name), "%s.test", label);
	ok(egress_domain_check(name, &why) == 0, "a 63-character label is taken");
	memset(label, 'a', 64);
	label[64] = '\0';
	snprintf(name, sizeof(name), "%s.test", label);
	ok(egress_domain_check(name, &why) == -EINVAL, "a 64-character label is refused");
	/* 4 labels of 61 and ".tests": 253 in all, then one more. */
	snprintf(name, sizeof(name), "%.61s.%.61s.%.61s.%.61s.tests", label, label, label, label);
	ok_eq_long(strlen(name), 253, "the long name is 253 characters");
	ok(egress_domain_check(name, &why) == 0, "a 253-character name is taken");
	snprintf(name, sizeof(name), "a%.61s.%.61s.%.61s.%.61s.tests", label, label, label, label);
	ok(egress_domain_check(name, &why) == -EINVAL, "a 254-character name is refused");
	memset(name, 'a', 299);
	name[299] = '\0';
	ok(egress_domain_check(name, &why) == -EINVAL, "a 300-character name is refused");
}

static void test_parse_list(void)
{
	struct strv out = {0};
	char *bad = NULL;
	const char *why;

	ok(egress_parse_list("a.test b.test,c.test", &out, &bad, &why) == 0 && out.n == 3 &&
		   has(&out, "a.test") && has(&out, "b.test") && has(&out, "c.test"),
	   "'a.test b.test,c.test' gives all three");
	ok(egress_parse_list(" ,\n\t, ", &out, &bad, &why) == 0 && out.n == 3,
	   "separators alone give nothing");
	ok(egress_parse_list(NULL, &out, &bad, &why) == 0 && out.n == 3, "no list gives nothing");
	ok(egress_parse_list("D.Test", &out, &bad, &why) == 0 && has(&out, "d.test"),
	   "entries are lower-cased");
	ok(egress_parse_list("e.test x.test;id f.test", &out, &bad, &why) == -EINVAL && bad &&
		   !strcmp(bad, "x.test;id") && out.n == 4 && !has(&out, "e.test"),
	   "a bad entry is named, and nothing of its list is kept");
	free(bad);
	strv_free(&out);
}

static void test_builtin(void)
{
	struct strv sources = {0}, out = {0};

	strv_push(&sources, "base");
	strv_push(&sources, "node.json");
	strv_push(&sources, "/home/u/.config/sandy/rules.d/python.json");
	ok(egress_builtin("claude", &sources, &out) == 0, "built-in entries for claude");
	ok(has(&out, "api.anthropic.com"), "claude: api.anthropic.com");
	ok(has(&out, "github.com") && has(&out, "api.github.com") &&
		   has(&out, "release-assets.githubusercontent.com"),
	   "GitHub, release assets included");
	ok(has(&out, "registry.npmjs.org"), "node: registry.npmjs.org");
	ok(has(&out, "pypi.org") && has(&out, "files.pythonhosted.org"), "python: PyPI");
	ok(!has(&out, "crates.io") && !has(&out, "api.openai.com"),
	   "nothing of other types or agents");
	strv_free(&out);
	strv_push(&sources, "php");
	strv_push(&sources, "elixir.json");
	ok(egress_builtin("claude", &sources, &out) == 0 && has(&out, "repo.packagist.org") &&
		   has(&out, "repo.hex.pm") && !has(&out, "hackage.haskell.org"),
	   "php and elixir: Packagist and Hex, nothing of haskell");
	for (size_t i = 0; i < out.n; i++) {
		const char *why;
		if (egress_domain_check(out.v[i], &why) < 0)
			ok(false, "built-in entry '%s' passes the check", out.v[i]);
	}
	strv_free(&out);
	ok(egress_builtin("codex", NULL, &out) == 0 && has(&out, "api.openai.com") &&
		   !has(&out, "api.anthropic.com") && !has(&out, "registry.npmjs.org"),
	   "codex, no project types: its endpoints and GitHub only");
	strv_push(&out, "github.com");
	size_t before = out.n;
	egress_dedup(&out);
	ok(out.n == before - 1 && has(&out, "github.com"), "dedup drops the repeated entry");
	for (size_t i = 1; i < out.n; i++)
		if (strcmp(out.v[i - 1], out.v[i]) >= 0)
			ok(false, "dedup leaves the list sorted");
	strv_free(&out);
	strv_free(&sources);
}

static void test_upstreams(void)
{
	struct strv out = {0};

	ok(egress_upstream_check("10.0.0.1") == 0, "10.0.0.1 is an upstream");
	ok(egress_upstream_check("127.0.0.53") < 0, "127.0.0.53 (loopback) is not");
	ok(egress_upstream_check("::1") < 0 && egress_upstream_check("x") < 0 &&
		   egress_upstream_check("10.0.0.1; id") < 0,
	   "neither are IPv6, names, or anything with more in it");
	ok(egress_resolv_conf("# comment\nnameserver 127.0.0.53\nnameserver 10.1.2.3\n"
			      "nameserver fe80::1\nsearch example.com\nnameserver 10.1.2.4",
			      &out) == 0 &&
		   out.n == 2 && !strcmp(out.v[0], "10.1.2.3") && !strcmp(out.v[1], "10.1.2.4"),
	   "resolv.conf: the IPv4 nameservers outside loopback, in order");
	strv_free(&out);
}

static void test_servers_file(void)
{
	struct strv allow = {0}, up = {0};

	strv_push(&allow, "a.test");
	strv_push(&allow, "*.b.test");
	strv_push(&allow, "b.test");
	strv_push(&allow, "*.c.test");
	strv_push(&up, "10.0.0.2");
	strv_push(&up, "10.0.0.3");
	char *s = egress_servers_file(&allow, &up);
	ok(s != NULL, "the servers file is made");
	ok(strstr(s, "server=/a.test/10.0.0.2\n") && strstr(s, "server=/a.test/10.0.0.3\n"),
	   "a name is forwarded to every upstream");
	ok(strstr(s, "server=/*.a.test/\n") != NULL, "its subdomains are answered locally");
	ok(strstr(s, "server=/*.b.test/10.0.0.2\n") && !strstr(s, "server=/*.b.test/\n"),
	   "with '*.b.test' allowed too, b.test's subdomains are forwarded");
	ok(strstr(s, "server=/*.c.test/10.0.0.2\n") && !strstr(s, "server=/c.test/"),
	   "'*.c.test' forwards the subdomains only");
	bool default_upstream = false;
	for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (*l != '#' && strncmp(l, "server=/", 8) != 0)
			default_upstream = true;
	ok(!default_upstream && !strstr(s, "/#/"), "no line forwards names outside the list");
	free(s);
	strv_free(&allow);
	s = egress_servers_file(&allow, &up);
	ok(s && !strstr(s, "server="), "an empty allowlist forwards nothing");
	free(s);
	strv_free(&up);
}

/* The same rule as the servers file, for the proxy that checks names
 * itself. */
static void test_name_allowed(void)
{
	struct strv allow = {0};

	strv_push(&allow, "a.test");
	strv_push(&allow, "*.b.test");
	strv_push(&allow, "b.test");
	strv_push(&allow, "*.c.test");
	ok(egress_name_allowed(&allow, "a.test"), "a listed name is allowed");
	ok(!egress_name_allowed(&allow, "www.a.test") && !egress_name_allowed(&allow, "x.y.a.test"),
	   "its subdomains are not");
	ok(egress_name_allowed(&allow, "b.test") && egress_name_allowed(&allow, "www.b.test") &&
		   egress_name_allowed(&allow, "x.y.b.test"),
	   "with '*.b.test' too, b.test and its subdomains at any depth are");
	ok(!egress_name_allowed(&allow, "c.test") && egress_name_allowed(&allow, "x.c.test"),
	   "'*.c.test' allows the subdomains only");
	ok(!egress_name_allowed(&allow, "xa.test") && !egress_name_allowed(&allow, "a.test.evil") &&
		   !egress_name_allowed(&allow, "evilb.test") &&
		   !egress_name_allowed(&allow, "c.test.evil"),
	   "no match by suffix or prefix of a label");
	ok(!egress_name_allowed(&allow, "test") && !egress_name_allowed(&allow, ""),
	   "a parent of an entry is not allowed by it");
	strv_free(&allow);
	ok(!egress_name_allowed(&allow, "a.test"), "an empty allowlist allows nothing");
}

static void test_ruleset(void)
{
	struct strv up = {0};

	strv_push(&up, "10.0.0.2");
	char *r = egress_ruleset(&up, false);
	ok(r && strstr(r, "type filter hook output priority 0; policy drop;"),
	   "outbound: default drop");
	ok(r && strstr(r, "type filter hook input priority 0; policy drop;"),
	   "inbound: default drop");
	ok(r && strstr(r, "elements = { 10.0.0.2 }"), "the upstream's address is in its set");
	ok(r && strstr(r, "meta skuid \"dnsmasq\" ip daddr @upstream4"),
	   "only dnsmasq reaches the upstream");
	ok(r && strstr(r, "ip daddr @allowed4 ct state new log group 7 prefix \"allowed\" accept"),
	   "resolved addresses are allowed, each new connection logged");
	ok(r && strstr(r, "log group 7 prefix \"refused\"\n"), "everything else is logged refused");
	ok(r && strstr(r, "oif \"lo\" ip6 daddr ::1 accept") && !strstr(r, "ip6 daddr @"),
	   "IPv6 only on loopback");
	ok(r && !strstr(r, "skuid 0"), "a host's session: root is held like anyone");
	free(r);
	r = egress_ruleset(&up, true);
	const char *root = r ? strstr(r, "\t\tmeta skuid 0 accept\n") : NULL;
	ok(root && strstr(r, "chain output") < root && root < strstr(r, "log group 7 prefix"),
	   "a Pod's: root goes out, in the output chain before anything is refused");
	free(r);
	strv_free(&up);
}

static void test_dns_lines(void)
{
	static const char *const lines[] = {
		"Dec  1 19:18:14 dnsmasq[1]: started, version 2.90 cachesize 150",
		"Dec  1 19:18:15 dnsmasq[1]: 1 127.0.0.1/47616 query[A] allowed.test from "
		"127.0.0.1",
		"Dec  1 19:18:15 dnsmasq[1]: 1 127.0.0.1/47616 forwarded allowed.test to 10.0.0.2",
		"Dec  1 19:18:15 dnsmasq[1]: 1 127.0.0.1/47616 reply allowed.test is 10.0.0.3",
		"Dec  1 19:18:15 dnsmasq[1]: 3 127.0.0.1/50470 query[A] blocked.test from "
		"127.0.0.1",
		"Dec  1 19:18:15 dnsmasq[1]: 3 127.0.0.1/50470 config error is REFUSED (EDE: not "
		"ready)",
		"Dec  1 19:18:24 dnsmasq[1]: 8 127.0.0.1/44470 query[AAAA] x.allowed.test from "
		"127.0.0.1",
		"Dec  1 19:18:24 dnsmasq[1]: 8 127.0.0.1/44470 config x.allowed.test is NXDOMAIN",
		"Dec  1 19:18:25 dnsmasq[1]: 9 127.0.0.1/44471 query[A] allowed.test from "
		"127.0.0.1",
		"Dec  1 19:18:25 dnsmasq[1]: 9 127.0.0.1/44471 cached allowed.test is 10.0.0.3",
		"Dec  1 19:18:25 dnsmasq[1]: nftset inet sandy allowed4 Error: No such file",
		"garbage",
	};
	struct egress_dns_reader rd = {0};
	struct egress_record recs[8];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(lines) && n < ARRAY_SIZE(recs); i++)
		if (egress_dns_line(&rd, lines[i], 1000.5, &recs[n]))
			n++;
	ok_eq_long(n, 4, "four queries, one record each");
	ok(n > 0 && recs[0].dns && recs[0].allowed && !strcmp(recs[0].name, "allowed.test") &&
		   !strcmp(recs[0].qtype, "A") && recs[0].time == 1000.5,
	   "forwarded: allowed, with its name and type");
	ok(n > 1 && !recs[1].allowed && !strcmp(recs[1].name, "blocked.test"),
	   "refused by config: refused, named by its query, not 'error'");
	ok(n > 2 && !recs[2].allowed && !strcmp(recs[2].name, "x.allowed.test") &&
		   !strcmp(recs[2].qtype, "AAAA"),
	   "answered locally (a subdomain not allowed): refused");
	ok(n > 3 && recs[3].allowed, "answered from the cache: allowed");
}

static void test_packet_lines(void)
{
	static const char refused[] =
		"{\"timestamp\": \"2026-12-01T19:28:02.472237\", \"oob.prefix\": \"refused\", "
		"\"oob.time.sec\": 1796153282, \"oob.time.usec\": 472237, \"oob.family\": 2, "
		"\"ip.protocol\": 6, \"src_port\": 41786, \"dest_port\": 80, \"src_ip\": "
		"\"172.17.0.3\", \"dest_ip\": \"1.2.3.4\"}";
	static const char v6[] = "{\"oob.prefix\": \"allowed\", \"oob.family\": 10, "
				 "\"ip.protocol\": 58, \"dest_ip\": \"ff02::2\"}";
	struct egress_record rec;

	ok(egress_packet_line(refused, &rec) == 1 && !rec.dns && !rec.allowed &&
		   !strcmp(rec.dest, "1.2.3.4") && rec.port == 80 && !strcmp(rec.proto, "tcp") &&
		   rec.family == 4 && rec.time > 1796153282.47 && rec.time < 1796153282.48,
	   "a refused TCP attempt: address, port, protocol, time");
	ok(egress_packet_line(v6, &rec) == 1 && rec.allowed && rec.family == 6 &&
		   !strcmp(rec.proto, "icmpv6") && rec.port == 0,
	   "an IPv6 ICMP record");
	ok(egress_packet_line("{\"oob.prefix\": \"other\", \"dest_ip\": \"1.2.3.4\"}", &rec) == 0,
	   "another prefix is not an attempt");
	ok(egress_packet_line("not json", &rec) == 0 && egress_packet_line("", &rec) == 0,
	   "garbage is no record");
}

static void test_records(void)
{
	struct egress_record a = {.dns = true, .allowed = false, .time = 1796153282.25};
	struct egress_record b;

	snprintf(a.name, sizeof(a.name), "we\"ird\\na\tme.test");
	snprintf(a.qtype, sizeof(a.qtype), "TXT");
	char *line = egress_record_json(&a, "proj-1234");
	ok(line && line[strlen(line) - 1] == '\n' && !strchr(line, '\t') &&
		   strchr(line, '\n') == line + strlen(line) - 1,
	   "one line per record, whatever the name holds");
	ok(line && strstr(line, "\"time\":\"2026-12-01T19:28:02.250000Z\""),
	   "the time in UTC, microseconds");
	ok(line && egress_record_parse(line, &b) == 1 && b.dns && !b.allowed &&
		   !strcmp(b.name, a.name) && !strcmp(b.qtype, "TXT") && b.time == a.time,
	   "read back as written");

	/* A name DNS carries, not UTF-8 and with a terminal's escapes. */
	struct egress_record d = {.dns = true}, e;
	snprintf(d.name, sizeof(d.name), "x\377\033]52;c;aGk=\a.test");
	snprintf(d.qtype, sizeof(d.qtype), "A");
	char *d_line = egress_record_json(&d, "proj-1234");
	ok(d_line && utf8_ok((const unsigned char *)d_line, strlen(d_line)),
	   "a name that is not UTF-8 keeps the record UTF-8");
	ok(d_line && strstr(d_line, "\"name_hex\":\"78ff1b5d35323b633b61476b3d072e74657374\""),
	   "with the name's bytes in name_hex");
	ok(d_line && egress_record_parse(d_line, &e) == 1 && !strcmp(e.name, d.name),
	   "and read back as the very bytes");
	struct egress_stats ds = {0};
	egress_stats_add(&ds, &d);
	char *d_out = NULL;
	size_t d_len = 0;
	FILE *df = open_memstream(&d_out, &d_len);
	egress_stats_print(df, &ds, "/x/log.jsonl");
	fclose(df);
	ok(d_out && strstr(d_out, "    1  \"x\\377\\033]52;c;aGk=\\a.test (DNS)\"\n") &&
		   !strchr(d_out, '\033') && !strchr(d_out, '\a'),
	   "printed escaped: no control character reaches the terminal");
	free(d_out);
	free(d_line);
	egress_stats_free(&ds);

	struct egress_stats st = {0};
	struct egress_record c = {.allowed = false, .port = 80, .family = 4, .time = 1.0};
	snprintf(c.dest, sizeof(c.dest), "1.2.3.4");
	snprintf(c.proto, sizeof(c.proto), "tcp");
	egress_stats_add(&st, &a);
	egress_stats_add(&st, &a);
	egress_stats_add(&st, &c);
	a.allowed = true;
	egress_stats_add(&st, &a);
	ok(st.queries == 3 && st.queries_refused == 2 && st.connects == 1 &&
		   st.connects_refused == 1 && st.n_refused == 2,
	   "the counts, and refused destinations grouped");
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	egress_stats_print(f, &st, "/x/log.jsonl");
	fclose(f);
	ok(strstr(out, "network: 3 DNS queries (2 refused), 1 connection attempt (1 refused)") &&
		   strstr(out, "    2  \"we\\\"ird\\\\na\\tme.test (DNS)\"\n") &&
		   strstr(out, "    1  1.2.3.4:80/tcp\n"),
	   "printed: totals, then destinations by count, the agent's name escaped");
	free(out);
	egress_stats_free(&st);

	/* The proxy's records: a connection named by the name it was for. */
	struct egress_record p = {.allowed = false, .port = 443, .time = 2.0};
	snprintf(p.name, sizeof(p.name), "evil.test");
	snprintf(p.proto, sizeof(p.proto), "tcp");
	char *p_line = egress_record_json(&p, "proj-1234");
	ok(p_line &&
		   strstr(p_line, "\"kind\":\"connect\",\"verdict\":\"refused\",\"proto\":\"tcp\","
				  "\"port\":443,\"name\":\"evil.test\"}"),
	   "a refused name: its name and port, no address (%s)", p_line ? p_line : "none");
	ok(p_line && egress_record_parse(p_line, &b) == 1 && !b.dns && !b.allowed &&
		   !strcmp(b.name, "evil.test") && !b.dest[0] && b.port == 443,
	   "read back as written");
	snprintf(p.dest, sizeof(p.dest), "10.0.0.3");
	p.allowed = true;
	p.family = 4;
	free(p_line);
	p_line = egress_record_json(&p, "proj-1234");
	ok(p_line && strstr(p_line, "\"proto\":\"tcp\",\"dest\":\"10.0.0.3\",\"port\":443,\"ip\":4,"
				    "\"name\":\"evil.test\"}"),
	   "an allowed one: the address reached, then the name (%s)", p_line ? p_line : "none");
	p.allowed = false;
	egress_stats_add(&st, &p);
	egress_stats_add(&st, &p);
	ok(st.connects == 2 && st.connects_refused == 2 && st.n_refused == 1 &&
		   !strcmp(st.refused[0].dest, "evil.test:443/tcp"),
	   "the summary groups them by name and port (%s)",
	   st.n_refused ? st.refused[0].dest : "none");
	egress_stats_free(&st);
	free(p_line);

	char *c_line = egress_record_json(&c, "proj-1234");
	char *both = malloc(strlen(line) + strlen(c_line) + 20);
	sprintf(both, "%s%snot a record\n", line, c_line);
	char *body = egress_loki_body(both, "proj-1234");
	cJSON *root = cJSON_Parse(body);
	const cJSON *streams = cJSON_GetObjectItemCaseSensitive(root, "streams");
	ok(cJSON_GetArraySize(streams) == 2, "Loki: one stream per kind and verdict");
	const cJSON *s0 = cJSON_GetArrayItem(streams, 0);
	const cJSON *v0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s0, "values"), 0);
	const char *ts = cJSON_GetStringValue(cJSON_GetArrayItem(v0, 0));
	ok(ts && strspn(ts, "0123456789") == strlen(ts) && strlen(ts) == 19,
	   "Loki: the time in nanoseconds, as a string (%s)", ts ? ts : "none");
	ok(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			   cJSON_GetObjectItemCaseSensitive(s0, "stream"), "session")),
		   "proj-1234"),
	   "Loki: labelled with the session");
	ok(egress_loki_body("not a record\n", "s") == NULL, "Loki: no body without records");
	cJSON_Delete(root);
	free(body);
	free(both);
	free(c_line);
	free(line);
}

int main(void)
{
	test_domain_check();
	test_parse_list();
	test_builtin();
	test_upstreams();
	test_servers_file();
	test_name_allowed();
	test_ruleset();
	test_dns_lines();
	test_packet_lines();
	test_records();
	return tap_done();
}
