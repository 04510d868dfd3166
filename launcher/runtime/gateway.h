/* gateway.h - a session's network gateway: a container of its own, from
 * the gateway image (dnsmasq, nftables, ulogd), that owns the network
 * namespace the agent's container joins. It loads the firewall, runs the
 * only resolver the agent has and logs every query and new connection;
 * it holds NET_ADMIN (and what dnsmasq needs to drop to its own user), the
 * agent holds no capability at all and so cannot change what it set up.
 *
 * Here: choosing the allowlist and the upstream resolvers, writing the
 * files the gateway runs on into the session directory, starting and
 * stopping it, turning its raw logs into the egress log (and pushing them
 * to Loki when LOKI_URL is set), the summary's network lines, and `sandy
 * allow`, which changes a running session's allowlist.
 *
 * A session without a container has no gateway container: the same
 * allowlist is held by a proxy (nsnet.h), which this starts and stops in
 * its place, and whose records go the same way into the egress log. */
#ifndef SANDY_GATEWAY_H
#define SANDY_GATEWAY_H

#include "world/egress.h"
#include "sys/host.h"
#include "sys/sandy.h"

#include <stdbool.h>
#include <sys/types.h>

#define SANDY_DEFAULT_GATEWAY_IMAGE "sandy-gateway:latest"

struct gateway_spec {
	const char *engine;
	const char *image;
	const char *session_dir;
	const char *session_id;
	const char *project; /* for the container's label, as the agent's has it */
	const struct host_user *user;
	const struct strv *allow; /* the whole allowlist, checked */
};

struct gateway {
	char *engine, *image, *name, *session_id;
	char *netdir;	/* SESSION/net: the files the gateway reads */
	char *logdir;	/* SESSION/egress: what it writes */
	char *log_path; /* the egress log, JSON lines, kept after the session */
	bool running;
	/* Without a container: the proxy's process and socket. */
	pid_t proxy;
	char *proxy_socket;
	/* the egress log's reader */
	struct egress_dns_reader dns;
	off_t dns_done, packets_done, proxy_done;
	int log_fd;
	/* records not yet pushed to Loki */
	char *loki_url;
	char *loki_pending;
	size_t loki_len;
	struct timespec loki_last;
	bool loki_failed;
};

/* The session's allowlist: the built-in entries for AGENT and the rule
 * SOURCES, the user's config ("allow" in config.json), SANDY_ALLOW_DOMAINS
 * and ARGS (--allow), each checked; a bad entry is reported with where it
 * came from, and nothing is started. */
int gateway_allowlist(const char *agent, const struct strv *sources, const struct strv *args,
		      const struct host_user *user, struct strv *out);

/* What the user gave the allowlist and the resolver (--allow,
 * SANDY_ALLOW_DOMAINS, config.json, SANDY_DNS_UPSTREAM), checked before
 * anything is started: a bad entry is reported as gateway_allowlist does.
 * With CONTAINER, also that the gateway finds a resolver (a proxy on this
 * host uses its resolver as it is). */
int gateway_check_inputs(const char *agent, const struct strv *args, const struct host_user *user,
			 bool container);

/* SANDY_DNS_UPSTREAM's addresses, each checked (nothing when it is
 * unset); -EINVAL said. */
int gateway_upstreams_env(struct strv *out);

/* Writes the gateway's files into the session directory and starts it;
 * returns once its resolver answers and its rules hold (or says why it
 * could not). AGENT_UID is refused when it is the resolver's own. */
int gateway_start(const struct gateway_spec *spec, uid_t agent_uid, struct gateway *g);

/* Turns what the gateway logged since the last call into egress log
 * records, and pushes them to Loki when it is time (FINAL: now). */
void gateway_drain(struct gateway *g, bool final);

/* Without a container: writes the allowlist into the session directory
 * and starts the proxy (nsnet.h) on SESSION/net/proxy.sock
 * (G->proxy_socket), with SANDY_DNS_UPSTREAM's resolvers when set. ENGINE
 * and IMAGE of SPEC are not used. */
int gateway_start_proxy(const struct gateway_spec *spec, struct gateway *g);

/* Removes the gateway container, or ends the proxy. Its logs stay to be
 * drained. */
void gateway_stop(struct gateway *g);

/* The summary's network lines, from the egress log. */
void gateway_summary(FILE *f, const struct gateway *g);

void gateway_free(struct gateway *g);

/* A running session's network files in NETDIR (SESSION/net), which
 * `sandy allow` changes: the gateway's allowlist and upstream resolvers
 * (dnsmasq's servers file beside them), or the allowlist of the proxy of
 * a session without a container. Read back, every entry is checked again;
 * each file is written whole and renamed into place. Negative errno. */
int gateway_read_lists(const char *netdir, struct strv *allow, struct strv *up);
int gateway_write_lists(const char *netdir, const struct strv *allow, const struct strv *up);
int gateway_read_allow(const char *netdir, struct strv *allow);
int gateway_write_allow(const char *netdir, const struct strv *allow);

/* Has the gateway container NAME (of ENGINE) reread its allowlist: the
 * status of `ENGINE exec`, its stderr in *ERROUT. */
int gateway_reload(const char *engine, const char *name, char **errout);

#endif
