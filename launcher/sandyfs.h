/* sandyfs.h - running sandyfs for a session: `sandyfs mount` with the
 * session's rule options, questions about its policy, watching the detached
 * daemon, and unmounting, including a dead (ENOTCONN) mount left by a
 * crashed run. */
#ifndef SANDY_SANDYFS_H
#define SANDY_SANDYFS_H

#include "sandy.h"

#include <stdbool.h>
#include <sys/types.h>

/* The start of a question to SANDYFS about PROJECT's policy under
 * RULE_ARGS: `SANDYFS CMD [--json] RULE_ARGS -- PROJECT`, appended to ARGV;
 * the caller adds CMD's paths, if any, and runs it. */
int sandyfs_query_argv(struct strv *argv, const char *sandyfs, const char *cmd, bool json,
		       const struct strv *rule_args, const char *project);

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
void sandyfs_unwatch(struct sandyfs_daemon *d);

/* Unmounts MP, a sandyfs mount or a bind sandy made for one: `sandyfs
 * umount` (which also clears a dead mount) when SANDYFS is known and MP is
 * a FUSE mount, then plain umount; when the mount is busy, detaches it
 * lazily. 0, or -errno with the message printed. */
int sandyfs_unmount(const char *sandyfs, const char *mp);

#endif
