/* nsrun.h - the runtime without a container engine (--runtime=none): the
 * command runs in a bubblewrap sandbox, as the invoking user (sudo's user
 * when run through sudo), with the host's filesystem read-only, private
 * /tmp, /run, /proc and /dev, no new privileges and no capabilities, the
 * agent's world (world.h) mounted in, and PROJECT_DIR replaced by the
 * sandyfs view. Its network is a namespace of its own, with loopback
 * alone, reaching out through sandy's proxy (nsnet.h) or not at all; or,
 * asked for, the host's. Its processes and memory are limited as a
 * container's (nslimits.h).
 *
 * Inside, before the command, runs sandy itself (nsrun_inside: its own
 * executable, handed to bubblewrap as a descriptor, so that it is found
 * wherever it is installed): it sets the rlimits in the sandbox's user
 * namespace and starts the proxy's bridge, then execs the command, which
 * stays the sandbox's main process (its exit status and signals are the
 * session's, as without it). */
#ifndef SANDY_NSRUN_H
#define SANDY_NSRUN_H

#include "world/egress.h"
#include "sys/host.h"
#include "nslimits.h"
#include "world/world.h"

#include <stdbool.h>
#include <sys/types.h>

struct nsrun_spec {
	const char *bwrap;	 /* the bubblewrap binary */
	const char *project;	 /* replaced ... */
	const char *view;	 /* ... by this mount; NULL: served as it is (--fs=bind) */
	const char *session_dir; /* shown read-only inside, at its own path */
	const struct host_user *user;
	const struct world *world;
	/* FILTERED and NONE: a network namespace of its own; FILTERED
	 * reaches the proxy at PROXY_SOCKET (in SESSION_DIR); OPEN: the
	 * host's network. */
	enum egress_mode network;
	const char *proxy_socket;
	const struct nslimits *limits;
	char *const *command; /* NULL: the user's shell */
};

/* The first argument that makes sandy nsrun_inside, as main.c sees it. */
#define NSRUN_INSIDE "__sandbox"

/* Forks the sandbox; returns once bubblewrap has been exec'ed (0, *PID) or
 * could not be (-errno, message printed). */
int nsrun_start(const struct nsrun_spec *spec, pid_t *pid);

/* Sends SIG to the command's process group inside the sandbox that
 * nsrun_start started as PID (bubblewrap's own process is left alone). */
void nsrun_interrupt(pid_t pid, int sig);

/* `sandy __sandbox [--exe-fd N] [--nproc N] [--data BYTES] [--proxy
 * SOCKET] -- COMMAND...`, which nsrun_start has bubblewrap run inside the
 * sandbox: closes descriptor N (sandy's executable), sets RLIMIT_NPROC,
 * starts the bridge to the proxy at SOCKET (with the proxy variables),
 * sets RLIMIT_DATA, then execs COMMAND. Returns only on failure: sandy's
 * exit status, the message printed. ARGV[0] is NSRUN_INSIDE. */
int nsrun_inside(int argc, char **argv);

#endif
