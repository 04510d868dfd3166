/* world.h - the agent's world around the project: its persistent home, its
 * settings and memory file (generated, read-only), the host's agent
 * configuration shown read-only, its environment, a throwaway copy of the
 * user's git identity, SSH and the shared folders. Built once per session
 * as a list of mounts and variables, which each runtime (engine.c for a
 * container, nsrun.c for bubblewrap) turns into its own command line: the
 * decisions live here, the syntax there. */
#ifndef SANDY_WORLD_H
#define SANDY_WORLD_H

#include "sys/host.h"
#include "sys/sandy.h"

#include <stdbool.h>

/* The push gate's pieces, on the host: the hook directory, and what the
 * hook runs (sandyfs with the shipped rules and overlays); found by the
 * session (session/agentgit.h), mounted into the world. */
struct agentgit_gate {
	char *hooks; /* a directory holding pre-push */
	char *sandyfs;
	char *rules;
	char *overlays;
};

/* Whether NAME is an agent sandy knows how to house (claude, codex,
 * gemini), as `--agent` takes them. */
bool world_agent_known(const char *name);

/* The npm package an image installs agent NAME from (NULL: not an agent). */
const char *world_agent_package(const char *name);

struct world_mount {
	char *source; /* on the host */
	char *target; /* inside */
	bool readonly;
};

struct world {
	struct world_mount *mounts; /* in order: later ones go over earlier */
	size_t n_mounts;
	struct strv env; /* NAME=VALUE, the command's whole environment */
	char *home;	 /* $HOME inside */
};

struct world_spec {
	const char *agent; /* an agent name */
	const struct host_user *user;
	const char *home;	 /* $HOME inside */
	const char *run;	 /* where the session's files are seen inside */
	const char *session_dir; /* the session directory (host) */
	const char *session_id;
	const struct strv *env_args; /* --env NAME[=VALUE] as given */
	bool keep_path;		     /* pass the host's PATH (runtime none) */
	const char *workspace;	     /* the project's path inside */
	/* The project's git directory, shown read-only at RUN/host-git for
	 * the agent's own repository (session/agentgit.h); NULL: none. */
	const char *host_git;
	const struct agentgit_gate *gate; /* the push gate, or NULL */
	bool tty;
	/* The command's program (runtime none): when the user's PATH finds it
	 * in the user's home, which the agent's home replaces, it and what it
	 * runs under are shown read-only at their paths. NULL: none. */
	const char *program;
};

/* Builds the world: makes the agent's home when missing (copying the
 * host's credentials into it once), writes the generated settings, memory
 * file and git config into the session directory, checks SSH. Messages are
 * printed; -errno on failure (a malformed host settings file, an unusable
 * SANDY_SSH_KEY, ...), with nothing started. */
int world_build(const struct world_spec *spec, struct world *out);
void world_free(struct world *w);

/* A directory of sandy's data: ${SANDY_DATA_DIR:-${XDG_DATA_HOME:-~/.local/share}/sandy}/SUB
 * ("home" for the agent homes), for USER (sudo's user: its own home, never
 * root's environment). world_make_data_dir also makes it, as the user's,
 * and says so when it cannot. */
int world_data_dir(const struct host_user *user, const char *sub, char **out);
int world_make_data_dir(const struct host_user *user, const char *sub, char **out);

/* The user's configuration directory (config.json, rules.d):
 * $SANDY_CONFIG_DIR (as common/cachedir.h takes it), else $XDG_CONFIG_HOME/sandy (not sudo's
 * user's: the variable is root's environment), else ~/.config/sandy of world_user_home. Malloc'ed;
 * NULL when there is no home. */
char *world_config_dir(const struct host_user *u);

/* Sets SANDY_CONFIG_DIR to world_config_dir when it is not set, so that
 * every reader of the user's configuration (the gateway's allowlist
 * here, the rules.d that sandyfs reads with common/cachedir.h's
 * sandy_config_dir, $HOME based) reads the same one, also under sudo,
 * where $HOME is root's; and SANDY_USER_HOME to the user's home, where
 * sandyfs reads the user's git configuration. -errno on failure. */
int world_export_config_dir(const struct host_user *u);

/* The user's home on the host: $HOME when it is a directory of the user's,
 * else the passwd entry's (sudo's user: sudo replaced the environment);
 * NULL when there is none. */
const char *world_user_home(const struct host_user *u);

/* Validates one --env argument: NAME or NAME=VALUE with NAME a shell
 * variable name. */
bool world_env_arg_valid(const char *arg);

#endif
