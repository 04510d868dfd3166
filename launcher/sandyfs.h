/* mount.h - the filesystem side of a session: the shared bind that lets
 * mounts propagate into a container, `sandyfs mount` with the session's rule
 * options, watching the detached daemon, and unmounting, including a dead
 * (ENOTCONN) mount left by a crashed run. */
#ifndef SANDY_MOUNT_H
#define SANDY_MOUNT_H

#include "util.h"

#include <stdbool.h>
#include <sys/types.h>

/* What /proc/self/mountinfo says about the mount at PATH (resolved). */
struct mount_entry {
	char fstype[64];
	bool shared; /* in a peer group: rslave works for binds of it */
	bool slave;
};

/* 0 when PATH is a mount point (filling *E if non-NULL), -ENOENT when not. */
int mount_lookup(const char *path, struct mount_entry *e);

/* Mount points at or below DIR, deepest (most recently mounted) first. */
int mounts_under(const char *dir, struct strv *out);

/* Binds VIEW onto itself and makes it shared, so that what is mounted
 * below it propagates to the binds docker makes with rslave. Root only. */
int view_share(const char *view);

/* Starts sandyfs serving PROJECT at MP; returns once the mount is live.
 * RULE_ARGS (-t/-r/--no-detect) are passed as they are. sandyfs prints its
 * own message on failure; -EIO then. */
int sandyfs_mount(const char *sandyfs, const struct strv *rule_args, bool allow_other,
		  const char *audit, const char *pidfile, const char *project, const char *mp);

/* The detached daemon, so that its death is noticed while the session
 * runs. fd is a pidfd, or -1 where the kernel has none (then poll). */
struct sfs_daemon {
	pid_t pid;
	int fd;
};

int sandyfs_watch(const char *pidfile, struct sfs_daemon *d);
bool sandyfs_alive(const struct sfs_daemon *d);
/* Waits up to MS milliseconds for the daemon to exit (after unmounting). */
void sandyfs_wait_exit(const struct sfs_daemon *d, int ms);
void sandyfs_unwatch(struct sfs_daemon *d);

/* Unmounts MP: `sandyfs umount` (which also clears a dead mount) when
 * SANDYFS is known, then plain umount; when the mount is busy, detaches it
 * lazily. 0, or -errno with the message printed. */
int unmount_path(const char *sandyfs, const char *mp);

#endif
