/* fs.h - what the files of the FUSE handlers share, and nothing else uses:
 * the filesystem's state (struct sfs_fs), and the handlers that ops.c puts
 * in sfs_ll_ops from the others. The helpers they call are request.h's.
 *
 *  - ops.c: the filesystem's lifecycle, and the handlers of names and
 *    attributes (lookup, getattr, setattr, mkdir, rename, ...);
 *  - handle.c: open files, from open or create to release, and their I/O;
 *  - dir.c: directory handles and listings;
 *  - xattr.c: extended attributes.
 *
 * Not installed. The helpers are fs_*, the handlers sfs_ and the name of
 * their request. */
#ifndef SANDYFS_FS_H
#define SANDYFS_FS_H

#include "guard.h"
#include "inode.h"
#include "stats.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

struct sfs_fs {
	struct sfs_table *table;
	struct sfs_guard *guard;
	struct sfs_store *store; /* where private directories live */
	struct sfs_watch *watch; /* NULL when host changes cannot be heard */
	double timeout;		 /* for what the host may change unheard */
	double watched_timeout;	 /* for what host notifications cover */
	/* The kernel opens without asking (it was answered ENOSYS once):
	 * I/O requests come without a handle, and the daemon opens the node
	 * for each one. Saves two round trips per open(). Always so for
	 * directories; for files only with --lazy-open, since the policy
	 * then sees the writes rather than the open. */
	bool no_open, no_opendir;
	/* Invalidations sent after a reply (started by sfs_fs_start). */
	struct sfs_deferred *deferred;
	/* The kernel leaves the umask to us (POSIX ACLs, dont_mask). */
	bool posix_acl;
	struct sfs_stats stats;
};

static inline struct sfs_fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline struct sfs_node *fs_node_of(fuse_req_t req, fuse_ino_t ino)
{
	return sfs_node_from_id(fs_of(req)->table, ino);
}

static inline struct sfs_caller fs_caller_of(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return (struct sfs_caller){.pid = ctx->pid, .uid = ctx->uid};
}

/* handle.c: open files. */

void sfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void sfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		struct fuse_file_info *fi);
void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void sfs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		   struct fuse_file_info *fi);
void sfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void sfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void sfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		   struct fuse_file_info *fi);
void sfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			 struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			 struct fuse_file_info *fi_out, size_t len, int flags);
void sfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi);

/* dir.c: directories. */

void sfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void sfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* xattr.c: extended attributes. */

void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		  int flags);
void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
