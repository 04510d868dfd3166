/* ops.h - the FUSE low-level operations: a thin shell that turns each
 * kernel request into *at() calls on the host through the inode table, and
 * asks the policy before anything that could change SOURCE. */
#ifndef SANDYFS_OPS_H
#define SANDYFS_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>

struct sfs_fs;

struct sfs_fs_config {
	/* How long the kernel may trust an entry, an attribute or a negative
	 * lookup that a host change could alter unheard: host changes show
	 * through the mount within this time. */
	double cache_timeout;
	/* The same where host changes are heard (watch.h) and invalidated
	 * as they happen; bounds the damage of a lost notification. */
	double watched_timeout;
	bool watch_host;
	/* Let the kernel open files without a round trip (FUSE no_open):
	 * the policy then judges the writes, truncates and setattrs rather
	 * than the open, so a denied O_WRONLY open fails at its first write.
	 * Directories are always opened without one (nothing to judge). */
	bool no_open;
	/* Upper bound on cached directory fds. */
	unsigned anchor_limit;
};

struct sfs_policy;
struct sfs_audit;
struct sfs_store;

/* Takes ownership of ROOTFD (an anchor fd on SOURCE), POLICY, AUDIT (NULL:
 * no audit log) and STORE (the project's store, store.h: where private
 * directories live and ownership records are kept). On failure *ERR
 * may say more. */
int sfs_fs_new(int rootfd, const struct sfs_fs_config *cfg, struct sfs_policy *policy,
	       struct sfs_audit *audit, struct sfs_store *store, struct sfs_fs **out, char **err);
void sfs_fs_free(struct sfs_fs *fs);
/* Starts and stops what runs beside the request loop (host change
 * notifications): after the mount, in the process that serves it. */
int sfs_fs_start(struct sfs_fs *fs, struct fuse_session *se);
void sfs_fs_stop(struct sfs_fs *fs);

/* The request counters (stats.h). */
struct sfs_stats *sfs_fs_stats(struct sfs_fs *fs);

extern const struct fuse_lowlevel_ops sfs_ll_ops;

#endif
