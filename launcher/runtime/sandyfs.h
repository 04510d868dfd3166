/* sandyfs.h - running sandyfs for a session: `sandyfs mount` with the
 * session's rule options, watching the detached daemon, and unmounting,
 * including a dead (ENOTCONN) mount left by a crashed run. Questions about
 * the policy are fsquery.h's. */
#ifndef SANDY_SANDYFS_H
#define SANDY_SANDYFS_H

#include "sys/sandy.h"

#include <stdbool.h>
#include <sys/types.h>

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
