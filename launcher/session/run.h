/* run.h - one session: the options of one `sandy` invocation, as the
 * command line (main.c) hands them over, and the call that runs it. */
#ifndef SANDY_RUN_H
#define SANDY_RUN_H

#include "world/egress.h"
#include "sys/sandy.h"

#include <stdbool.h>

enum sandy_fs {
	SANDY_FS_FUSE,
	SANDY_FS_BIND,
};

/* Where sandyfs serves, with a container engine: on this host, or in a
 * container of sandy's own in the engine's world (fsbox.h); AUTO asks the
 * engine whether it sees this host's mounts. */
enum sandy_fs_mode {
	SANDY_FS_MODE_AUTO,
	SANDY_FS_MODE_HOST,
	SANDY_FS_MODE_CONTAINER,
};

enum sandy_runtime {
	SANDY_RUNTIME_AUTO,
	SANDY_RUNTIME_DOCKER,
	SANDY_RUNTIME_PODMAN,
	SANDY_RUNTIME_NONE,
};

struct sandy_opts {
	enum sandy_fs fs;
	enum sandy_fs_mode fs_mode;
	enum sandy_runtime runtime;
	const char *image;
	const char *agent;    /* the agent kind whose home and settings to use */
	struct strv env_args; /* --env NAME[=VALUE] */
	enum egress_mode network;
	struct strv allow_args; /* --allow DOMAIN */
	struct strv rule_args;	/* --type/--rules/--no-detect, as sandyfs takes them */
	bool quiet;
	bool push_gate;	     /* --push-gate */
	const char *project; /* as given; "." by default */
	char **command;	     /* NULL: the image's command, or the user's shell */
};

/* Runs one session; returns sandy's exit status (see --help). */
int run_session(const struct sandy_opts *o);

#endif
