/* fs.h - what the files of the FUSE handlers share, and nothing else uses:
 * the filesystem's state (struct sfs_fs), the helpers more than one of them
 * calls, and the handlers that ops.c puts in sfs_ll_ops from the others.
 *
 *  - ops.c: the filesystem's lifecycle, these helpers, and the handlers of
 *    names and attributes (lookup, getattr, setattr, mkdir, rename, ...);
 *  - handle.c: open files, from open or create to release, and their I/O;
 *  - dir.c: directory handles and listings;
 *  - xattr.c: extended attributes.
 *
 * Not installed. The helpers are fs_*, the handlers sfs_ and the name of
 * their request. */
#ifndef SANDYFS_FS_H
#define SANDYFS_FS_H

#include "ops.h"
#include "host/creds.h"
#include "guard.h"
#include "inode.h"
#include "policy/path.h"
#include "stats.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

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

/* ops.c: nodes and names. */

/* Asks the guard about OP on node N itself. */
int fs_check_node(fuse_req_t req, struct sfs_node *n, enum sfs_op op, const char *opname);

/* Locates N and checks that its name still leads to it. */
int fs_locate_verified(struct sfs_fs *fs, struct sfs_node *n, struct sfs_location *loc,
		       struct sfs_stat *st);

/* The store's mirror of directory PARENT (in SOURCE), into DIR (which owns
 * the fd): made when CREATE, else -ENOENT when it is not there. What is
 * known of it is kept in the node. */
int fs_open_mirror(struct sfs_fs *fs, struct sfs_node *parent, bool create, struct sfs_anchor *dir);

/* What the policy lets a lookup see at a path (sfs_guard_visible). */
struct view {
	int err; /* -ENOENT: hidden */
	int overlay_fd;
	bool private;
};

struct view fs_view_of(struct sfs_fs *fs, const char *path);

/* Looks NAME up in DIRFD (which is where PARENT's entry NAME lives, NAME
 * being at PATH, seen as V: NULL to ask) and makes the kernel a new
 * reference to it: -ENOENT for what the policy hides, the overlay file
 * for what it overlays. A directory seen for the first time is watched.
 * FOUND (may be NULL) gets what was found. */
int fs_lookup_at(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
		 const char *path, const struct view *v, struct fuse_entry_param *e,
		 struct sfs_stat *found);

/* fs_lookup_at for a file just created and opened, with the handle about
 * to be given out counted on its node in the same step: a removal of the
 * name in between keeps the file for the handle (fs_keep_before_removal)
 * as it does for any file open. */
int fs_lookup_created(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
		      const char *path, struct fuse_entry_param *e);

/* A change to one name in a directory, from the guard's yes to the host
 * call: the name's path, the directory that holds it pinned (verified to be
 * where the table says, so the path the policy judged is the path the
 * change lands at; for a private directory's own name, the store's mirror
 * of the directory), the mutation lock and the caller's identity. */
struct change {
	char path[SFS_PATH_MAX];
	struct sfs_anchor dir;
	struct sfs_creds creds;
	struct sfs_guard *locked; /* non-NULL while the mutation lock is held */
	bool private_root;	  /* the name is a private directory's own */
	bool in_store;		  /* the name is in the store, not in SOURCE */
};

/* The common case: OP on NAME in PARENT, as the caller, about WHO (NULL:
 * what is at NAME now). CREATE: a store mirror the name lives in is made
 * if need be. */
int fs_change_begin(fuse_req_t req, fuse_ino_t parent, const char *name, enum sfs_op op,
		    const char *opname, bool create, struct sfs_subject *who, struct change *ch);
void fs_change_end(struct change *ch);
#define cleanup_change __attribute__((cleanup(fs_change_end)))

/* Only a directory may be a private directory's own name: the store holds
 * directories of dependencies and tool state, nothing else. */
int fs_refuse_private_root(fuse_req_t req, struct change *ch, const char *opname);

/* What a new name (create, mknod, mkdir) is made for: the agent's own. */
static inline struct sfs_subject fs_subject_new(void)
{
	return (struct sfs_subject){.dirfd = -1, .owned = 1};
}

/* The mode a new name in DIRFD gets: set-uid and set-gid bits are never
 * created through the mount; and with POSIX ACLs the kernel leaves the
 * caller's umask to us, to apply unless the directory's default ACL rules
 * instead (the host applies that one itself). */
mode_t fs_new_mode(fuse_req_t req, int dirfd, mode_t mode);

/* handle.c: open files. */

/* Opens N itself with FLAGS (never following a symlink), with the daemon's
 * credentials, and checks that what was opened is N. */
int fs_open_node(struct sfs_fs *fs, struct sfs_node *n, int flags);

/* The handle's fd if the host file is open already, else 0 (also when the
 * kernel opened the file without asking: no handle). */
int fs_handle_fd_if_open(const struct fuse_file_info *fi);

/* The fd an I/O request works on: the handle from open or create, the
 * overlay file, the fd kept for a node unlinked while the kernel still
 * knew it, or one opened with FLAGS for this request alone. */
struct io_fd {
	int fd;
	bool owned;
};

int fs_io_fd_get(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi, int flags,
		 struct io_fd *io);
void fs_io_fd_put(struct io_fd *io);
#define cleanup_io __attribute__((cleanup(fs_io_fd_put)))

/* Before NAME (described by ST) goes from DIRFD: if the kernel knows the
 * file and may have it open (a handle out, or no_open, where the daemon
 * holds none), an fd that keeps it reachable once its name is gone; -1
 * otherwise. *NODE gets the file's node, if known; opens of it wait from
 * now until fs_keep_after_removal, which every call must be followed by. */
int fs_keep_before_removal(struct sfs_fs *fs, int dirfd, const char *name,
			   const struct sfs_stat *st, struct sfs_node **node);

/* After the removal: the node takes the fd if it lost its last name. I/O
 * then goes to that fd (fs_io_fd_get), or to the node's kept fd, and both
 * live as long as the kernel knows the file: a file written and removed
 * in a loop holds no blocks once the kernel forgets it. */
void fs_keep_after_removal(struct sfs_fs *fs, struct sfs_node *node, int fd);

/* After ERR from locating or opening N by its name: the fd kept for N once
 * its last name went (borrowed), waiting for a removal under way to have
 * kept it, when ERR says the name led nowhere (ENOENT, ESTALE); else -1. */
int fs_orphan_fd(struct sfs_fs *fs, struct sfs_node *n, int err);

/* Before N's mode goes from OLD to NEW: an unprivileged daemon that opens
 * files without handles (no_open) keeps an fd of N while it may still
 * open it, for the writes of whoever has it open (inode.h, kept fds). */
void fs_keep_before_chmod(struct sfs_fs *fs, struct sfs_node *n, mode_t old, mode_t new);

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
