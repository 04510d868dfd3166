/* sandyfs.h - running sandyfs for a session: `sandyfs mount` with the
 * session's rule options, questions about its policy, watching the detached
 * daemon, and unmounting, including a dead (ENOTCONN) mount left by a
 * crashed run. */
#ifndef SANDY_SANDYFS_H
#define SANDY_SANDYFS_H

#include "sys/sandy.h"

#include <stdbool.h>
#include <sys/types.h>

/* How sandy runs sandyfs for what is not a mount (rules, explain, store,
 * git): the program on this host, or, where none runs (the portable shape
 * of sandy, platform.h: a Mac has no Linux sandyfs), sandyfs in a short
 * container of its own image in the engine's world, which sees the
 * project, the store, the user's rule files and those of --rules at their
 * host paths (fsbox_query_argv). */
struct sandyfs_prog {
	char *path;	  /* on this host; NULL when it runs in a container */
	char *project;	  /* the project as the questions name it */
	struct strv argv; /* what runs sandyfs: PATH, or ENGINE run ... IMAGE sandyfs */
};

/* Finds sandyfs for questions about PROJECT under RULE_ARGS: on this host,
 * else through ENGINE (NULL: the first that answers). Says what is
 * missing; 0 or -errno. */
int sandyfs_prog_find(struct sandyfs_prog *p, const char *engine, const char *project,
		      const struct strv *rule_args);
void sandyfs_prog_free(struct sandyfs_prog *p);
static inline void sandyfs_prog_freep(struct sandyfs_prog *p)
{
	sandyfs_prog_free(p);
}
#define cleanup_sandyfs_prog __attribute__((cleanup(sandyfs_prog_freep)))

/* Replaces this process with ARGV (sandyfs's argv, as the _argv helpers
 * make it); returns only on failure, with the message printed. */
int sandyfs_exec(const struct strv *argv);

/* The start of a question to sandyfs about the project's policy under
 * RULE_ARGS: `SANDYFS CMD [--json] RULE_ARGS -- PROJECT`, appended to ARGV;
 * the caller adds CMD's paths, if any, and runs it. */
int sandyfs_query_argv(struct strv *argv, const struct sandyfs_prog *p, const char *cmd, bool json,
		       const struct strv *rule_args);

/* Starts sandyfs serving PROJECT at MP; returns once the mount is live.
 * RULE_ARGS (-t/-r/--no-detect) are passed as they are. GIT_SEEN_AT, when
 * not NULL, gives the agent its own repository at .git, whose alternates
 * find the project's git directory there. sandyfs prints its own message
 * on failure; -EIO then. */
int sandyfs_mount(const char *sandyfs, const struct strv *rule_args, bool allow_other,
		  const char *audit, const char *pidfile, const char *git_seen_at,
		  const char *project, const char *mp);

/* The argv of that `sandyfs mount` (in the foreground with FOREGROUND),
 * appended to ARGV. */
int sandyfs_mount_argv(struct strv *argv, const char *sandyfs, const struct strv *rule_args,
		       bool allow_other, bool foreground, const char *audit, const char *pidfile,
		       const char *git_seen_at, const char *project, const char *mp);

/* The detached daemon, so that its death is noticed while the session
 * runs. fd is a pidfd, or -1 where the kernel has none (then poll). */
struct sandyfs_daemon {
	pid_t pid;
	int fd;
};

int sandyfs_watch(const char *pidfile, struct sandyfs_daemon *d);
bool sandyfs_alive(const struct sandyfs_daemon *d);
/* Waits up to MS milliseconds for the daemon to exit (after unmounting). */
void sandyfs_wait_exit(const struct sandyfs_daemon *d, int ms);
/* Ends a daemon whose mount is gone from here: SIGTERM, then waits up to
 * MS milliseconds. A copy of the mount in another mount namespace (podman's
 * conmon copies the mount table as it starts) keeps its connection, and
 * so the daemon, alive after the unmount; nothing may reach the project
 * through a session that has ended. */
void sandyfs_end(const struct sandyfs_daemon *d, int ms);
void sandyfs_unwatch(struct sandyfs_daemon *d);

/* Unmounts MP, a sandyfs mount or a bind sandy made for one: `sandyfs
 * umount` (which also clears a dead mount) when SANDYFS is known and MP is
 * a FUSE mount, then plain umount; when the mount is busy, detaches it
 * lazily. 0, or -errno with the message printed. */
int sandyfs_unmount(const char *sandyfs, const char *mp);

#endif
