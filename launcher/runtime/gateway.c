/* gateway.c - see gateway.h. */

#include "gateway.h"
#include "engine.h"
#include "nsnet.h"
#include "sys/proc.h"
#include "world/world.h"

#include "common/fileat.h"

#include <cJSON.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

/* How long the gateway may take to come up, and how often its logs are
 * pushed to Loki while the session runs. */
#define GATEWAY_START_SECONDS 30
#define LOKI_INTERVAL_MS      1000
/* Records kept for Loki while it does not answer. */
#define LOKI_PENDING_MAX (4u << 20)

/* Where the gateway sees the session's files, and its entry point (in the
 * image, launcher/container/gateway/gateway.sh). */
#define GATEWAY_NETDIR "/sandy"
#define GATEWAY_LOGDIR "/log"
#define GATEWAY_ENTRY  "/usr/local/lib/sandy/gateway"

/* The "allow" list of the user's config.json, appended to OUT. */
static int config_allow(const struct host_user *user, struct strv *out)
{
	cleanup_free char *dir = world_config_dir(user);
	cleanup_free char *path = dir ? sandy_asprintf("%s/config.json", dir) : NULL;
	cleanup_free char *text = NULL;
	const cJSON *e;
	int r;

	if (!path)
		return 0;
	r = sandy_read_file(path, 1 << 20, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		sandy_error("cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	cJSON *root = cJSON_Parse(text);
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(root, "allow");
	if (!cJSON_IsObject(root) || (allow && !cJSON_IsArray(allow))) {
		sandy_error("cannot use '%s': not a JSON object whose \"allow\" is a list of "
			    "domains",
			    path);
		cJSON_Delete(root);
		return -EINVAL;
	}
	r = 0;
	cJSON_ArrayForEach(e, allow)
	{
		const char *name = cJSON_GetStringValue(e), *why = "not a string";
		cleanup_free char *bad = NULL;
		if (name && strpbrk(name, " ,\t\r\n"))
			why = "one domain per entry";
		else if (name && egress_parse_list(name, out, &bad, &why) == 0)
			continue;
		if (name)
			sandy_error("bad domain '%s' in \"allow\" of '%s': %s", name, path, why);
		else
			sandy_error("bad domain entry in \"allow\" of '%s': %s", path, why);
		r = -EINVAL;
		break;
	}
	cJSON_Delete(root);
	return r;
}

int gateway_allowlist(const char *agent, const struct strv *sources, const struct strv *args,
		      const struct host_user *user, struct strv *out)
{
	cleanup_free char *bad = NULL;
	const char *why = NULL;
	int r = egress_builtin(agent, sources, out);

	if (r == 0)
		r = config_allow(user, out);
	if (r == 0 && egress_parse_list(getenv("SANDY_ALLOW_DOMAINS"), out, &bad, &why) < 0) {
		sandy_error("bad domain '%s' in SANDY_ALLOW_DOMAINS: %s", bad ? bad : "", why);
		return -EINVAL;
	}
	for (size_t i = 0; r == 0 && args && i < args->n; i++) {
		if (egress_domain_check(args->v[i], &why) < 0) {
			sandy_error("bad domain '%s' for --allow: %s", args->v[i], why);
			return -EINVAL;
		}
		r = egress_parse_list(args->v[i], out, &bad, &why);
	}
	if (r == -ENOMEM)
		sandy_error("out of memory");
	if (r == 0)
		egress_dedup(out);
	return r;
}

int gateway_upstreams_env(struct strv *out)
{
	const char *env = getenv("SANDY_DNS_UPSTREAM");
	char *copy = env && *env ? strdup(env) : NULL, *save = NULL;
	int r = env && *env && !copy ? -ENOMEM : 0;

	for (char *t = copy ? strtok_r(copy, " ,", &save) : NULL; r == 0 && t;
	     t = strtok_r(NULL, " ,", &save)) {
		if (egress_upstream_check(t) < 0) {
			sandy_error("bad address '%s' in SANDY_DNS_UPSTREAM: an IPv4 address "
				    "outside 127.0.0.0/8 is needed",
				    t);
			r = -EINVAL;
		} else {
			r = strv_push(out, t);
		}
	}
	free(copy);
	return r;
}

/* The resolvers the gateway forwards to: SANDY_DNS_UPSTREAM, else the
 * host's (from resolv.conf; systemd-resolved's upstream list when the
 * host's own points at loopback). */
static int upstreams(struct strv *out)
{
	static const char *const files[] = {"/etc/resolv.conf", "/run/systemd/resolve/resolv.conf"};
	const char *env = getenv("SANDY_DNS_UPSTREAM");

	if (env && *env)
		return gateway_upstreams_env(out);
	for (size_t i = 0; i < ARRAY_SIZE(files) && out->n == 0; i++) {
		cleanup_free char *text = NULL;
		if (sandy_read_file(files[i], 1 << 16, &text) == 0 &&
		    egress_resolv_conf(text, out) < 0)
			return -ENOMEM;
	}
	if (out->n == 0) {
		sandy_error("cannot find a DNS resolver for the gateway: /etc/resolv.conf names "
			    "no IPv4 nameserver outside loopback; set SANDY_DNS_UPSTREAM=ADDRESS");
		return -ENOENT;
	}
	return 0;
}

int gateway_check_inputs(const char *agent, const struct strv *args, const struct host_user *user,
			 bool container)
{
	cleanup_strv struct strv allow = {0}, servers = {0};
	const struct strv none = {0};
	int r = gateway_allowlist(agent, &none, args, user, &allow);

	if (r < 0)
		return r;
	return container ? upstreams(&servers) : gateway_upstreams_env(&servers);
}

static int write_in(const char *dir, const char *name, const char *text, int mode)
{
	cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (!text)
		return -ENOMEM;
	if (dfd < 0)
		return -errno;
	/* Whole or not at all: dnsmasq may reread it at any moment. */
	return fileat_replace(dfd, name, text, strlen(text), (mode_t)mode, NULL);
}

/* NETDIR/NAME: the entries of V, one a line. */
static int write_lines(const char *netdir, const char *name, const struct strv *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		fprintf(f, "%s\n", v->v[i]);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	int r = write_in(netdir, name, buf, 0644);
	free(buf);
	return r;
}

/* NETDIR's files from the allowlist and the upstreams: the servers file
 * dnsmasq rereads, and the lists `sandy allow` starts from. */
int gateway_write_lists(const char *netdir, const struct strv *allow, const struct strv *up)
{
	cleanup_free char *servers = egress_servers_file(allow, up);
	int r = servers ? write_in(netdir, "servers", servers, 0644) : -ENOMEM;

	if (r == 0)
		r = write_lines(netdir, "allow", allow);
	if (r == 0)
		r = write_lines(netdir, "upstreams", up);
	return r;
}

static int make_dirs(const struct gateway_spec *spec, struct gateway *g, bool container)
{
	g->netdir = sandy_asprintf("%s/net", spec->session_dir);
	g->logdir = sandy_asprintf("%s/egress", spec->session_dir);
	if (!g->netdir || !g->logdir)
		return -ENOMEM;
	if (mkdir(g->netdir, 0755) < 0 || mkdir(g->logdir, 0700) < 0)
		return -errno;
	/* The gateway's root has no CAP_DAC_OVERRIDE: the directory it logs
	 * into must be open to it. Only this one, inside the private session
	 * directory. */
	if (container && chmod(g->logdir, 0777) < 0)
		return -errno;
	return 0;
}

static int open_log(const struct gateway_spec *spec, struct gateway *g)
{
	cleanup_free char *dir = NULL;
	int r = world_make_data_dir(spec->user, "egress", &dir);

	if (r < 0)
		return r;
	g->log_path = sandy_asprintf("%s/%s.jsonl", dir, spec->session_id);
	if (!g->log_path)
		return -ENOMEM;
	g->log_fd = open(g->log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (g->log_fd < 0) {
		r = -errno;
		sandy_error("cannot create the egress log '%s': %s", g->log_path, strerror(-r));
		return r;
	}
	if (geteuid() == 0 && spec->user->uid != 0 &&
	    fchown(g->log_fd, spec->user->uid, spec->user->gid) < 0)
		return -errno;
	return 0;
}

static int run_gateway(const struct gateway_spec *spec, struct gateway *g)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *errout = NULL;
	int r = 0;

	r = strv_ok(r, strv_push(&argv, spec->engine));
	r = strv_ok(r, strv_push(&argv, "run"));
	r = strv_ok(r, strv_push(&argv, "--detach"));
	r = strv_ok(r, strv_push(&argv, "--rm"));
	r = strv_ok(r, strv_pushf(&argv, "--name=%s", g->name));
	r = strv_ok(r, strv_pushf(&argv, "--label=sandy.session=%s", spec->session_id));
	r = strv_ok(r, strv_pushf(&argv, "--label=sandy.project=%s", spec->project));
	r = strv_ok(r, strv_push(&argv, "--label=sandy.role=gateway"));
	r = strv_ok(r, strv_push(&argv, "--init"));
	/* NET_ADMIN for the firewall, ulogd's NFLOG socket and dnsmasq's set;
	 * the rest for dnsmasq to bind port 53 and drop to its own user. */
	r = strv_ok(r, engine_push_hardening(&argv));
	r = strv_ok(r, strv_push(&argv, "--cap-add=NET_ADMIN"));
	r = strv_ok(r, strv_push(&argv, "--cap-add=NET_BIND_SERVICE"));
	r = strv_ok(r, strv_push(&argv, "--cap-add=SETUID"));
	r = strv_ok(r, strv_push(&argv, "--cap-add=SETGID"));
	r = strv_ok(r, strv_push(&argv, "--read-only"));
	r = strv_ok(r, strv_push(&argv, "--tmpfs=/run:rw,nosuid,nodev,noexec,mode=0755"));
	r = strv_ok(r, strv_push(&argv, "--tmpfs=/tmp:rw,nosuid,nodev,noexec,mode=1777"));
	/* The agent shares this namespace and its resolv.conf. IPv6 off here
	 * too, not only in the ruleset. */
	r = strv_ok(r, strv_push(&argv, "--dns=127.0.0.1"));
	r = strv_ok(r, strv_push(&argv, "--sysctl=net.ipv6.conf.all.disable_ipv6=1"));
	r = strv_ok(r, strv_push(&argv, "--memory=256m"));
	r = strv_ok(r, strv_push(&argv, "--pids-limit=64"));
	r = strv_ok(r, engine_push_ulimits(&argv, spec->engine, 64));
	r = strv_ok(r, engine_push_bind(&argv, g->netdir, GATEWAY_NETDIR, "readonly"));
	r = strv_ok(r, engine_push_bind(&argv, g->logdir, GATEWAY_LOGDIR, NULL));
	r = strv_ok(r, strv_push(&argv, spec->image));
	r = strv_ok(r, strv_push(&argv, GATEWAY_ENTRY));
	if (r < 0)
		return r;
	int status =
		proc_run(argv.v, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_CAPTURE, NULL, &errout);
	if (status != 0) {
		const char *why = status < 0 ? strerror(-status) : errout ? errout : "";
		sandy_error("cannot start the network gateway '%s': %.*s", g->name,
			    (int)strcspn(why, "\n"), why);
		return -EIO;
	}
	g->running = true;
	return 0;
}

static bool container_running(const char *engine, const char *name)
{
	char *argv[] = {(char *)engine, "inspect",    "--format", "{{.State.Running}}",
			"--",		(char *)name, NULL};
	cleanup_free char *out = NULL;

	return proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) == 0 &&
	       out && !strncmp(out, "true", 4);
}

/* Waits for the gateway's "ready" file, which holds the uid its resolver
 * runs as. */
static int wait_ready(struct gateway *g, uid_t agent_uid)
{
	cleanup_free char *ready = sandy_asprintf("%s/ready", g->logdir);
	cleanup_free char *log = sandy_asprintf("%s/gateway.log", g->logdir);

	if (!ready || !log)
		return -ENOMEM;
	for (int i = 0; i < GATEWAY_START_SECONDS * 10; i++) {
		cleanup_free char *text = NULL;
		if (sandy_read_file(ready, 64, &text) == 0 && strchr(text, '\n')) {
			if (strtoul(text, NULL, 10) == agent_uid) {
				sandy_error(
					"cannot filter the network for uid %u: it is the uid of "
					"the gateway's resolver",
					(unsigned)agent_uid);
				return -EPERM;
			}
			return 0;
		}
		if (i % 10 == 9 && !container_running(g->engine, g->name))
			break;
		struct timespec t = {0, 100 * 1000 * 1000};
		nanosleep(&t, NULL);
	}
	cleanup_free char *why = NULL;
	sandy_read_file(log, 1 << 16, &why);
	sandy_error("the network gateway '%s' did not come up%s%s", g->name,
		    why && *why ? "; its log:\n" : "", why ? why : "");
	return -EIO;
}

int gateway_start(const struct gateway_spec *spec, uid_t agent_uid, struct gateway *g)
{
	cleanup_strv struct strv up = {0};
	int r;

	*g = (struct gateway){.log_fd = -1, .proxy = -1};
	g->engine = strdup(spec->engine);
	g->image = strdup(spec->image);
	g->session_id = strdup(spec->session_id);
	g->name = sandy_asprintf("sandy-%s-net", spec->session_id);
	const char *loki = getenv("LOKI_URL");
	if (loki && *loki)
		g->loki_url = strdup(loki);
	if (!g->engine || !g->image || !g->session_id || !g->name ||
	    (loki && *loki && !g->loki_url))
		return -ENOMEM;
	if ((r = upstreams(&up)) < 0)
		return r;
	if ((r = make_dirs(spec, g, true)) < 0) {
		sandy_error("cannot create the gateway's files in '%s': %s", spec->session_dir,
			    strerror(-r));
		return r;
	}
	cleanup_free char *rules = egress_ruleset(&up, false);
	r = write_in(g->netdir, "rules.nft", rules, 0644);
	if (r == 0)
		r = gateway_write_lists(g->netdir, spec->allow, &up);
	if (r < 0) {
		sandy_error("cannot write the gateway's files in '%s': %s", g->netdir,
			    strerror(-r));
		return r;
	}
	if ((r = open_log(spec, g)) < 0)
		return r;
	if ((r = run_gateway(spec, g)) < 0)
		return r;
	return wait_ready(g, agent_uid);
}

/* The allowlist as the proxy reads it, an entry a line. */
int gateway_write_allow(const char *netdir, const struct strv *allow)
{
	return write_lines(netdir, "allow", allow);
}

int gateway_start_proxy(const struct gateway_spec *spec, struct gateway *g)
{
	cleanup_strv struct strv up = {0};
	int r;

	*g = (struct gateway){.log_fd = -1, .proxy = -1};
	g->session_id = strdup(spec->session_id);
	const char *loki = getenv("LOKI_URL");
	if (loki && *loki)
		g->loki_url = strdup(loki);
	if (!g->session_id || (loki && *loki && !g->loki_url))
		return -ENOMEM;
	if ((r = gateway_upstreams_env(&up)) < 0)
		return r;
	if ((r = make_dirs(spec, g, false)) < 0 || (r = gateway_write_allow(g->netdir, spec->allow)) < 0) {
		sandy_error("cannot write the network proxy's files in '%s': %s", spec->session_dir,
			    strerror(-r));
		return r;
	}
	if ((r = open_log(spec, g)) < 0)
		return r;
	g->proxy_socket = sandy_asprintf("%s/proxy.sock", g->netdir);
	cleanup_free char *allow = sandy_asprintf("%s/allow", g->netdir);
	cleanup_free char *records = sandy_asprintf("%s/proxy.jsonl", g->logdir);
	if (!g->proxy_socket || !allow || !records)
		return -ENOMEM;
	struct nsnet_proxy p = {
		.socket_path = g->proxy_socket,
		.allow_path = allow,
		.records_path = records,
		.session_id = spec->session_id,
		.upstreams = &up,
		.user = spec->user,
	};
	if ((r = nsnet_proxy_start(&p, &g->proxy)) < 0)
		return r;
	g->running = true;
	return 0;
}

void gateway_stop(struct gateway *g)
{
	if (g->proxy > 0)
		nsnet_proxy_stop(g->proxy);
	else if (g->running)
		engine_remove(g->engine, g->name);
	g->proxy = -1;
	g->running = false;
}

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* POSTs the pending records to Loki's push API with curl (an argument
 * vector: nothing passes through a shell). Kept for the next try when
 * Loki does not take them. */
static void loki_push(struct gateway *g)
{
	cleanup_free char *body = egress_loki_body(g->loki_pending, g->session_id);
	cleanup_free char *file = sandy_asprintf("%s/loki-batch.json", g->logdir);
	cleanup_free char *url = NULL;
	cleanup_free char *out = NULL;
	size_t n = strlen(g->loki_url);

	while (n > 0 && g->loki_url[n - 1] == '/')
		n--;
	url = sandy_asprintf("%.*s/loki/api/v1/push", (int)n, g->loki_url);
	clock_gettime(CLOCK_MONOTONIC, &g->loki_last);
	if (!body || !file || !url || sandy_write_file(file, body, strlen(body), 0600) < 0)
		return;
	cleanup_free char *data = sandy_asprintf("@%s", file);
	char *argv[] = {"curl",
			"--silent",
			"--show-error",
			"--max-time",
			"5",
			"--output",
			"/dev/null",
			"--write-out",
			"%{http_code}",
			"--header",
			"Content-Type: application/json",
			"--data-binary",
			data,
			"--",
			url,
			NULL};
	int status =
		data ? proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL)
		     : -ENOMEM;
	unlink(file);
	if (status == 0 && out && out[0] == '2') {
		g->loki_len = 0;
		g->loki_pending[0] = '\0';
		g->loki_failed = false;
		return;
	}
	if (!g->loki_failed)
		sandy_note("cannot push the egress log to Loki at '%s' (%s); will retry", url,
			   status == -ENOENT ? "curl is not installed"
			   : status == 0     ? (out && *out ? out : "no answer")
					     : "curl failed");
	g->loki_failed = true;
	if (g->loki_len > LOKI_PENDING_MAX) {
		sandy_note("dropping %zu bytes of egress records Loki did not take", g->loki_len);
		g->loki_len = 0;
		g->loki_pending[0] = '\0';
	}
}

static int loki_keep(struct gateway *g, const char *line)
{
	size_t len = strlen(line);
	char *p = realloc(g->loki_pending, g->loki_len + len + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p + g->loki_len, line, len + 1);
	g->loki_pending = p;
	g->loki_len += len;
	return 0;
}

static void emit(struct gateway *g, const struct egress_record *rec)
{
	cleanup_free char *line = egress_record_json(rec, g->session_id);

	if (!line)
		return;
	if (g->log_fd >= 0)
		sandy_write_all(g->log_fd, line, strlen(line));
	if (g->loki_url)
		loki_keep(g, line);
}

/* The raw logs the egress log is made from. */
enum raw_log {
	RAW_DNS,     /* dnsmasq's query log */
	RAW_PACKETS, /* ulogd's JSON lines */
	RAW_PROXY,   /* the proxy's records, already in the egress log's form */
};

/* Reads the complete lines NAME gained past *DONE and hands each to
 * the converter. */
static void drain_file(struct gateway *g, const char *name, off_t *done, enum raw_log kind)
{
	cleanup_free char *path = sandy_asprintf("%s/%s", g->logdir, name);
	cleanup_fd int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	char buf[65536];
	size_t have = 0;
	ssize_t n;
	struct timespec now;

	if (fd < 0 || lseek(fd, *done, SEEK_SET) < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			struct egress_record rec;
			*nl = '\0';
			int got = kind == RAW_DNS
					  ? egress_dns_line(&g->dns, line,
							    (double)now.tv_sec + now.tv_nsec / 1e9,
							    &rec)
				  : kind == RAW_PACKETS ? egress_packet_line(line, &rec)
							: egress_record_parse(line, &rec);
			if (got)
				emit(g, &rec);
			line = nl + 1;
		}
		size_t used = (size_t)(line - buf);
		*done += (off_t)used;
		if (used == 0 && have == sizeof(buf) - 1) {
			*done += (off_t)have; /* a line longer than any record: skip it */
			used = have;
		}
		memmove(buf, buf + used, have - used);
		have -= used;
	}
}

void gateway_drain(struct gateway *g, bool final)
{
	if (!g->logdir)
		return;
	drain_file(g, "dns.log", &g->dns_done, RAW_DNS);
	drain_file(g, "packets.json", &g->packets_done, RAW_PACKETS);
	drain_file(g, "proxy.jsonl", &g->proxy_done, RAW_PROXY);
	if (g->loki_url && g->loki_len && (final || ms_since(&g->loki_last) >= LOKI_INTERVAL_MS))
		loki_push(g);
}

void gateway_summary(FILE *f, const struct gateway *g)
{
	cleanup_file FILE *in = g->log_path ? fopen(g->log_path, "re") : NULL;
	struct egress_stats st = {0};
	char *line = NULL;
	size_t cap = 0;

	if (!in)
		return;
	while (getline(&line, &cap, in) > 0) {
		struct egress_record rec;
		if (egress_record_parse(line, &rec))
			egress_stats_add(&st, &rec);
	}
	free(line);
	egress_stats_print(f, &st, g->log_path);
	egress_stats_free(&st);
}

void gateway_free(struct gateway *g)
{
	if (g->log_fd >= 0)
		close(g->log_fd);
	free(g->engine);
	free(g->image);
	free(g->name);
	free(g->session_id);
	free(g->netdir);
	free(g->logdir);
	free(g->log_path);
	free(g->loki_url);
	free(g->loki_pending);
	free(g->proxy_socket);
	*g = (struct gateway){.log_fd = -1, .proxy = -1};
}

/* The allowlist and the upstreams a session's gateway started with, as
 * gateway_write_lists wrote them; every entry checked again. */
int gateway_read_lists(const char *netdir, struct strv *allow, struct strv *up)
{
	cleanup_free char *apath = sandy_asprintf("%s/allow", netdir);
	cleanup_free char *upath = sandy_asprintf("%s/upstreams", netdir);
	cleanup_free char *atext = NULL, *utext = NULL, *bad = NULL;
	const char *why;
	int r = apath && upath ? 0 : -ENOMEM;

	if (r == 0)
		r = sandy_read_file(apath, 1 << 20, &atext);
	if (r == 0)
		r = sandy_read_file(upath, 1 << 16, &utext);
	if (r == 0)
		r = egress_parse_list(atext, allow, &bad, &why);
	for (char *t = utext, *save = NULL; r == 0 && (t = strtok_r(t, "\n", &save)); t = NULL)
		r = egress_upstream_check(t) < 0 ? -EINVAL : strv_push(up, t);
	return r;
}

/* The allowlist the proxy of a session without a container reads. */
int gateway_read_allow(const char *netdir, struct strv *allow)
{
	cleanup_free char *path = sandy_asprintf("%s/allow", netdir);
	cleanup_free char *text = NULL, *bad = NULL;
	const char *why;
	int r = path ? sandy_read_file(path, 1 << 20, &text) : -ENOMEM;

	return r < 0 ? r : egress_parse_list(text, allow, &bad, &why);
}

/* The gateway's resolver rereads its servers file; the domain itself
 * never appears on this command line. As dnsmasq's own user: the
 * gateway's root holds no CAP_KILL. */
int gateway_reload(const char *engine, const char *name, char **errout)
{
	char *argv[] = {(char *)engine, "exec", "--user=dnsmasq", "--", (char *)name, GATEWAY_ENTRY,
			"reload", NULL};

	return proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_CAPTURE, NULL, errout);
}
