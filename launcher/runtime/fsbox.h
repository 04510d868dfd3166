/* fsbox.h - sandyfs in a container of sandy's own, for a container engine
 * that does not see this host's mounts (Docker Desktop, colima, OrbStack,
 * podman machine, a remote or rootless engine): the engine's world has its
 * own filesystem, where a FUSE mount made here never arrives.
 *
 * The container (SANDY_FS_IMAGE, engine.h) holds the privilege the mount needs
 * (CAP_SYS_ADMIN and /dev/fuse) and the daemon's own (fsuid switching,
 * DAC override); it sees the project, the store and the session directory
 * at their host paths, as the engine shares host folders, and mounts below
 * a directory of the engine's world (FSBOX_ENGINE_DIR) bound with shared
 * propagation, from which the agent's container binds it with rslave. The
 * agent's container holds no capability, as in host mode. */
#ifndef SANDY_FSBOX_H
#define SANDY_FSBOX_H

#include "common/strv.h"

#include <stdbool.h>
#include <sys/types.h>

/* In the engine's world, not on this host: one directory per session. */
#define FSBOX_ENGINE_DIR "/var/lib/sandy/sessions"
/* For rootless podman, whose world is this host's files seen from a user
 * and mount namespace of the user's own (`podman unshare` enters it),
 * where FSBOX_ENGINE_DIR cannot be made: this directory of the runtime
 * directory, made a shared mount there (fsbox_engine_root). */
#define FSBOX_ROOTLESS_DIR ".engine"

struct fsbox_spec {
	const char *engine;
	const char *image;
	const char *session_id;
	const char *engine_root; /* FSBOX_ENGINE_DIR, or fsbox_engine_root's */
	const char *session_dir; /* host path: the pid file, audit log, policy */
	const char *project;
	const char *store_root; /* host path of the projects' stores */
	const char *audit;
	const char *pidfile;
	const char *git_seen_at; /* --git-host-path, or NULL */
	const struct strv *rule_args;
};

struct fsbox {
	const char *engine, *image;
	char *engine_root; /* where the sessions' directories are, in the engine's world */
	char *name;	   /* sandy-fs-ID */
	char *engine_dir;  /* engine_root/ID */
	char *mountpoint;  /* engine_dir/workspace, in the engine's world */
	pid_t waiter;	   /* `ENGINE wait NAME`: it ends when the container does */
	int waiter_fd;	   /* its pidfd, or -1 */
	bool started;
};

/* The image of that container: $SANDY_FS_IMAGE, else SANDY_FS_IMAGE. */
const char *fsbox_image(void);

/* The label that says which sandy built the image (its version). */
#define FSBOX_VERSION_LABEL "org.sandy.version"

/* Whether ENGINE has IMAGE, built by this sandy: its sandyfs and shipped
 * rules are then this sandy's, and the policy it serves is the one `sandy
 * explain` shows. 0; -ENOENT when it is missing; -ESTALE when another
 * sandy built it (*BUILT: its version, "" for one from before the label).
 * *BUILT is malloc'ed, NULL when the image is missing. */
int fsbox_image_state(const char *engine, const char *image, char **built);
/* fsbox_image_state, and a message that says how to build it when it is
 * missing or stale. */
int fsbox_image_check(const char *engine, const char *image);

/* The container's name for session SESSION_ID (malloc'ed). */
char *fsbox_name(const char *session_id);

/* The argv that runs sandyfs for a question about PROJECT (explain,
 * rules, store, git) in a short container of IMAGE: as this user, no
 * network, no capability; the project, the store, the rule files of
 * RULE_ARGS and the user's configuration directory at their host paths;
 * started in WORKDIR (in the project). The caller appends sandyfs's
 * arguments. */
int fsbox_query_argv(struct strv *argv, const char *engine, const char *image, const char *project,
		     const char *workdir, const struct strv *rule_args);

/* Starts the container and waits until it serves (its pid file appears in
 * the session directory). Says what failed. */
int fsbox_start(const struct fsbox_spec *spec, struct fsbox *b);

/* Whether the container still runs. */
bool fsbox_alive(struct fsbox *b);

/* Stops the container (the daemon unmounts and its audit log is complete),
 * removes it and, when the daemon died without unmounting, the dead mount
 * it left in the engine's world. */
void fsbox_stop(struct fsbox *b, bool died);

void fsbox_free(struct fsbox *b);

/* What a session SESSION_ID that crashed left in ENGINE's world below
 * ENGINE_ROOT: its container stopped and removed, the mount and
 * directories cleared. */
void fsbox_sweep(const char *engine, const char *engine_root, const char *session_id);

/* Whether ENGINE is rootless podman on this host: its world is this
 * host's files in a namespace of the user's own. */
bool fsbox_rootless_podman(const char *engine);

/* Where ENGINE's sessions get their directories (malloc'ed in *ROOT):
 * FSBOX_ENGINE_DIR; for rootless podman RUNDIR/FSBOX_ROOTLESS_DIR, made
 * a shared mount in podman's namespace so that the daemon's mount there
 * reaches the agent's container. Says what failed. */
int fsbox_engine_root(const char *engine, const char *rundir, char **root);

/* What ENGINE was found to see, remembered in RUNDIR (the runtime
 * directory) for the engine it reaches now (its own ID and name, and
 * DOCKER_HOST and CONTAINER_HOST): 1 this host's mounts, 0 not, -1 not
 * known yet. */
int fsbox_remembered(const char *rundir, const char *engine);
void fsbox_remember(const char *rundir, const char *engine, bool sees_mounts);

/* Whether ENGINE shows a container the mount at MOUNTPOINT on this host
 * (a FUSE mount of sandyfs), asked of a container of IMAGE that binds it:
 * 1 yes, 0 no (the engine has a world of its own), negative when the
 * engine could not run the probe at all. */
int fsbox_engine_sees_mounts(const char *engine, const char *image, const char *mountpoint);

/* `sandy build-image`: IMAGE from BASE (a Debian 12 image), with sandyfs
 * and the files it ships with. sandyfs is this host's, copied, when
 * ENGINE's machine runs it; otherwise, or when FROM_SOURCE, it is built
 * from its source in a first stage of the image's build. */
int fsbox_build_image(const char *engine, const char *image, const char *base, bool from_source);

#endif
