/* nsrun.h - the runtime without a container engine (--runtime=none): the
 * command runs in a bubblewrap sandbox, as the invoking user (sudo's user
 * when run through sudo), with the host's filesystem read-only, private
 * /tmp, /run, /proc and /dev, no new privileges and no capabilities, the
 * agent's world (world.h) mounted in, and PROJECT_DIR replaced by the
 * sandyfs view. The network is the host's. */
#ifndef SANDY_NSRUN_H
#define SANDY_NSRUN_H

#include "host.h"
#include "world.h"

#include <stdbool.h>
#include <sys/types.h>

struct nsrun_spec {
	const char *bwrap;	 /* the bubblewrap binary */
	const char *project;	 /* replaced ... */
	const char *view;	 /* ... by this mount; NULL: served as it is (--fs=bind) */
	const char *session_dir; /* shown read-only inside, at its own path */
	const struct host_user *user;
	const struct world *world;
	bool no_network;      /* a network namespace of its own: loopback only */
	char *const *command; /* NULL: the user's shell */
};

/* Forks the sandbox; returns once bubblewrap has been exec'ed (0, *PID) or
 * could not be (-errno, message printed). */
int nsrun_start(const struct nsrun_spec *spec, pid_t *pid);

/* Sends SIG to the command's process group inside the sandbox that
 * nsrun_start started as PID (bubblewrap's own process is left alone). */
void nsrun_interrupt(pid_t pid, int sig);

#endif
