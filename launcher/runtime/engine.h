/* engine.h - the container engines, docker and podman (the same command
 * line): whether the engine answers, whether the image is there, the
 * hardened `run` command line, stopping and removing a session's container,
 * and building the agent image from launcher/container/. */
#ifndef SANDY_ENGINE_H
#define SANDY_ENGINE_H

#include "sys/host.h"
#include "sys/sandy.h"
#include "world/world.h"

#include <stdbool.h>
#include <sys/types.h>

#define SANDY_DEFAULT_IMAGE "sandy-agent:latest"
/* sandyfs's own container, for an engine that does not see this host's
 * mounts (fsbox.h). */
#define SANDY_FS_IMAGE "sandy-fs:latest"

struct container_spec {
	const char *engine; /* "docker" or "podman" */
	const char *image;
	const char *name;
	const char *session_id;
	const char *project;
	const char *workspace; /* host directory bound at /workspace */
	bool rslave;	       /* its mount is shared: let remounts through */
	const char *audit;     /* host files shown read-only under /run/sandy */
	const char *policy;
	uid_t uid;
	gid_t gid;
	bool tty;
	struct host_limits limits;
	const struct world *world; /* the agent's home, environment, ... */
	const char *network;	   /* --network: "container:GATEWAY", "none", or NULL */
	char *const *command;	   /* NULL: the image's default command */
};

/* 0 when ENGINE is installed and (docker) its daemon answers. Unless
 * QUIET, says what is wrong and how to fix it. */
int engine_check(const char *engine, bool quiet);

/* The engine a session without --runtime uses: docker when its daemon
 * answers, else podman when it answers, else NULL. Quiet. */
const char *engine_auto(void);

/* Whether IMAGE is present in ENGINE. Quiet. */
bool engine_has_image(const char *engine, const char *image);
/* The value of label KEY of IMAGE (malloc'ed, "" when it has none), or
 * NULL when the engine cannot say (no such image). */
char *engine_image_label(const char *engine, const char *image, const char *key);

/* 0 when IMAGE is present in ENGINE; otherwise says how to build it. */
int engine_image_check(const char *engine, const char *image);

/* 0 unless COMMAND runs an agent sandy knows (claude, codex, gemini) that
 * IMAGE does not have; then says which image to build. An image that
 * declares the agent as its own is trusted; any other is asked with its
 * shell (a container without network or capability), and one that cannot
 * tell is let through. */
int engine_agent_check(const char *engine, const char *image, char *const *command);

/* What every container of sandy gets: no capability (those it needs are
 * added back after), and none gained through exec (setuid, file caps). */
int engine_push_hardening(struct strv *argv);

/* `ENGINE run --rm` of a container that can do nothing: no network, and
 * engine_push_hardening(); the caller adds its options and the image. */
int engine_push_run_confined(struct strv *argv, const char *engine);

/* Appends "--mount type=bind,source=SRC,target=DST[,EXTRA]" to ARGV,
 * quoting what --mount's CSV syntax needs quoted. */
int engine_push_bind(struct strv *argv, const char *src, const char *dst, const char *extra);

/* Appends the --ulimit options ENGINE needs for a container with at most
 * PIDS processes (podman's own defaults exceed what many hosts grant). */
int engine_push_ulimits(struct strv *argv, const char *engine, unsigned pids);

/* Starts the foreground client (`ENGINE run ...` for the container SPEC
 * describes); it ends when the container does, with the command's status. */
int engine_run(const struct container_spec *spec, pid_t *client);

/* `ENGINE stop` with a grace period, then `rm -f` in case the client that
 * would have removed it is gone. Quiet. */
void engine_stop(const char *engine, const char *name, int seconds);
void engine_remove(const char *engine, const char *name);

/* The directory of the image's Dockerfile and the other container files
 * (malloc'ed), found as common/install.h says; NULL, the places looked in
 * printed, when none has one. */
char *engine_container_dir(void);

/* `ENGINE build` of DIR's Dockerfile as IMAGE, on BASE (the Dockerfile's
 * FROM, as a build argument), with EXTRA_ARGS; says what failed. */
int engine_build_dir(const char *engine, const char *dir, const char *image, const char *base,
		     char *const *extra_args);

/* The base image made from Debian packages (base-image.sh in DIR), its tag
 * in *TAG. */
int engine_build_base(const char *engine, const char *dir, char **tag);

/* The architecture of ENGINE's machine as it names it (docker: x86_64,
 * aarch64; podman: amd64, arm64), malloc'ed; NULL when it does not say. */
char *engine_arch(const char *engine);

#endif
