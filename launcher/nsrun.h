/* nsrun.h - the runtime without a container (--runtime=none): the command
 * runs in a private mount namespace in which PROJECT_DIR is replaced by the
 * sandyfs view and the session directory is read-only, as the invoking user
 * (sudo's user when run through sudo). */
#ifndef SANDY_NSRUN_H
#define SANDY_NSRUN_H

#include "host.h"

#include <stdbool.h>
#include <sys/types.h>

struct nsrun_spec {
	const char *project;	 /* replaced ... */
	const char *view;	 /* ... by this mount; NULL: no replacement (--fs=bind) */
	const char *session_dir; /* made read-only inside */
	const char *policy;	 /* exported as SANDY_POLICY, SANDY_DENIALS */
	const char *audit;
	const char *session_id;
	const struct host_user *user;
	char *const *command; /* NULL: the user's shell */
};

/* Forks the command; returns once it has been exec'ed (0, *PID) or has
 * failed to start (-errno, message printed). */
int nsrun_start(const struct nsrun_spec *spec, pid_t *pid);

#endif
