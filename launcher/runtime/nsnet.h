/* nsnet.h - the network of a session without a container (nsrun.h) that
 * keeps to the allowlist: the sandbox has a network namespace of its own,
 * with loopback alone, and reaches the network only through sandy's proxy.
 *
 * The proxy runs outside the namespace, a child of sandy, and listens on a
 * Unix socket in the session directory, which the sandbox sees. For each
 * request (netproxy.h's protocol) it checks the host against the
 * allowlist, which it reads again whenever `sandy allow` has changed its
 * file, resolves an allowed name (through SANDY_DNS_UPSTREAM's resolvers
 * when set, else this machine's resolver), connects, relays both ways, and
 * writes one egress record. Inside the sandbox a bridge listens on
 * 127.0.0.1 and relays each connection to the socket; the command's
 * environment names it as the HTTP and HTTPS proxy. The sandbox has no
 * DNS: names are resolved by the proxy. */
#ifndef SANDY_NSNET_H
#define SANDY_NSNET_H

#include "sys/host.h"
#include "sys/sandy.h"

#include <sys/types.h>

struct nsnet_proxy {
	const char *socket_path;  /* where it listens */
	const char *allow_path;	  /* the allowlist, an entry a line */
	const char *records_path; /* its egress records, JSON lines (egress.h) */
	const char *session_id;
	const struct strv *upstreams; /* SANDY_DNS_UPSTREAM's; empty: the host's resolver */
	const struct host_user *user; /* sudo's user: the proxy runs as it */
};

/* Listens on SOCKET_PATH and starts the proxy; 0 and *PID, or -errno with
 * the message printed. Connections made before it runs wait for it. */
int nsnet_proxy_start(const struct nsnet_proxy *spec, pid_t *pid);

/* Ends the proxy PID; its records are complete once this returns. */
void nsnet_proxy_stop(pid_t pid);

/* Inside the sandbox, before the command: listens on 127.0.0.1 (a port
 * the kernel picks) and relays each connection to SOCKET_PATH, from a
 * process of its own that ends with the sandbox and that the command's
 * signals do not reach; then sets this process's proxy variables
 * (HTTP_PROXY, HTTPS_PROXY, their lower-case forms and NO_PROXY for
 * loopback) for the command it will run. 0 or -errno, message printed. */
int nsnet_bridge_start(const char *socket_path);

#endif
