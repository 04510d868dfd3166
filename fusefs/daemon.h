/* daemon.h - the life of a mount: checking SOURCE and MOUNTPOINT, creating
 * the FUSE session, detaching once the mount is live, serving, unmounting
 * on SIGTERM/SIGINT/SIGHUP; and unmounting from outside. */
#ifndef SANDYFS_DAEMON_H
#define SANDYFS_DAEMON_H

#include "policy/rules.h"

#include <stdbool.h>

struct sfs_mount_opts {
	const char *source;
	const char *mountpoint;
	bool foreground;
	bool allow_other;
	char *fuse_opts; /* comma-separated -o options, or NULL */
	const char *pid_file;
	const char *audit_file;	   /* --audit, or NULL */
	bool lazy_open;		   /* --lazy-open */
	const char *stats_file;	   /* --stats, or NULL */
	const char *store;	   /* --store, or NULL for the default (store.h) */
	bool private_git;	   /* --private-git (gitpriv.h) */
	const char *git_host_path; /* --git-host-path, or NULL */
	bool drop_mount_privilege; /* --drop-mount-privilege */
	bool over_mount;	   /* --over-mount: MOUNTPOINT may be a mount */
	struct sfs_rule_opts rules;
	double cache_timeout;
};

/* Mounts and serves; returns the process exit status (0 once unmounted
 * cleanly; in the parent of a daemonized mount, 0 once the mount is live). */
int sfs_mount_main(const struct sfs_mount_opts *o);

/* Unmounts MOUNTPOINT, also when its daemon is dead. Exit status. */
int sfs_umount_main(const char *mountpoint);

/* `sandyfs store`: prints SOURCE's store (STORE, or the default) and its
 * size, or clears it. Exit status. */
int sfs_store_main(const char *source, const char *store, bool clear);

#endif
