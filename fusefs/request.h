/* request.h - what one FUSE request does between its handler and the host,
 * shared by the handler files (ops.c, handle.c, dir.c, xattr.c), which
 * call down into it and never into each other:
 *
 *  - a node reached: located by its name and checked to be there
 *    (fs_locate), opened (fs_open_node), or through the fd kept for it
 *    once its name went (fs_orphan_fd); the fd an I/O request works on,
 *    a handle's deferred open included (fs_io_fd_get);
 *  - the guard asked: about a node (fs_check_node), or about a name to be
 *    changed (fs_change_begin), whose path is judged once and its verdict
 *    carried to the steps after it (where the name lives, the ownership
 *    mark, what the kernel's entry shows);
 *  - lookups (fs_lookup_at), the store's mirrors (fs_open_mirror), files
 *    kept past their removal (fs_keep_before_removal).
 *
 * Not installed. The rules of ops.c hold here too: helpers return a
 * negative errno, host access is an *at() call through the inode table. */
#ifndef SANDYFS_REQUEST_H
#define SANDYFS_REQUEST_H

#include "fs.h"
#include "host/creds.h"
#include "guard.h"
#include "inode.h"
#include "common/path.h"

#include <stdatomic.h>
#include <stdbool.h>

static inline double fs_timeout_for(const struct sfs_fs *fs, const struct sfs_node_info *info)
{
	return info->covered ? fs->watched_timeout : fs->timeout;
}

/* ---- reaching a node ---------------------------------------------------- */

/* Node N as one request found it by its name: the directory that holds the
 * name pinned, and (LOCATE_CHECK) what is at the name, checked to be N.
 * The handler carries it to its host calls. */
struct located {
	struct sfs_location loc;
	struct sfs_stat st; /* LOCATE_CHECK only */
};

enum locate_how {
	/* The name only: the host call that follows fails by itself when
	 * the name leads nowhere (ENOENT, told ESTALE). */
	LOCATE_NAME,
	/* What is at the name is N; located again (a few times) when a
	 * rename through the mount moved it meanwhile: -ESTALE when it
	 * still leads elsewhere or nowhere. */
	LOCATE_CHECK,
};

int fs_locate(struct sfs_fs *fs, struct sfs_node *n, enum locate_how how, struct located *at);

static inline void fs_located_put(struct located *at)
{
	sfs_location_put(&at->loc);
}
#define cleanup_located __attribute__((cleanup(fs_located_put)))

/* Opens N itself with FLAGS (never following a symlink), under the
 * mutation lock, and checks that what was opened is N. The way there is
 * resolved with the daemon's credentials; the open itself is AS_CALLER's
 * when not NULL. O_TRUNC waits until the file is known to be N. */
int fs_open_node(struct sfs_fs *fs, struct sfs_node *n, int flags, fuse_req_t as_caller);

/* After ERR from locating or opening N by its name: the fd kept for N once
 * its last name went (borrowed), waiting for a removal under way to have
 * kept it, when ERR says the name led nowhere (ENOENT, ESTALE); else -1. */
int fs_orphan_fd(struct sfs_fs *fs, struct sfs_node *n, int err);

/* ---- open files ---------------------------------------------------------- */

/* What the kernel holds from open or create to release (handle.c makes and
 * frees it). An open that can change the file opens the host file at
 * once, as the caller; a read-only one waits for the first request that
 * needs an fd: most are served from the page cache (FOPEN_KEEP_CACHE) and
 * never need one, which saves the daemon a host open and close per file
 * (rg, tar, compilers). */
struct open_file {
	_Atomic int fd; /* -1 until opened */
	int flags;	/* host open flags for the deferred open */
};

static inline struct open_file *fs_handle_of(const struct fuse_file_info *fi)
{
	return fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
}

/* The handle's fd if the host file is open already, else 0 (also when the
 * kernel opened the file without asking: no handle). */
int fs_handle_fd_if_open(const struct fuse_file_info *fi);

/* The fd an I/O request works on: the handle from open or create, the
 * overlay file, the fd kept for a node unlinked while the kernel still
 * knew it, or one opened with FLAGS for this request alone. The _locked
 * form is for a caller holding the mutation lock (fs_mutation_lock). */
struct io_fd {
	int fd;
	bool owned;
};

int fs_io_fd_get(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi, int flags,
		 struct io_fd *io);
int fs_io_fd_get_locked(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi,
			int flags, struct io_fd *io);
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

/* Before N's mode goes from OLD to NEW: an unprivileged daemon that opens
 * files without handles (no_open) keeps an fd of N while it may still
 * open it, for the writes of whoever has it open (inode.h, kept fds). */
void fs_keep_before_chmod(struct sfs_fs *fs, struct sfs_node *n, mode_t old, mode_t new);

/* ---- asking the guard about a node --------------------------------------- */

/* The mutation lock, shared, around what must see no rename through the
 * mount: a path judged and the host call made where it was judged. */
void fs_mutation_lock(struct sfs_fs *fs);
void fs_mutation_unlock(struct sfs_fs *fs);

/* Asks the guard about OP on node N itself, under the mutation lock; the
 * _locked form with it held already (fs_mutation_lock, or a change's). */
int fs_check_node(fuse_req_t req, struct sfs_node *n, enum sfs_op op, const char *opname);
int fs_check_node_locked(fuse_req_t req, struct sfs_node *n, enum sfs_op op, const char *opname);

/* ---- what a lookup shows ------------------------------------------------- */

/* The store's mirror of directory PARENT (in SOURCE), into DIR (which owns
 * the fd): made when CREATE, else -ENOENT when it is not there. What is
 * known of it is kept in the node. */
int fs_open_mirror(struct sfs_fs *fs, struct sfs_node *parent, bool create, struct sfs_anchor *dir);

/* What the policy lets a lookup see at a path (sfs_guard_visible): asked
 * of the policy, or read from the path's verdict in this request. */
struct view {
	int err; /* -ENOENT: hidden */
	int overlay_fd;
	bool private;
};

struct view fs_view_of(struct sfs_fs *fs, const char *path);
struct view fs_view_of_verdict(struct sfs_fs *fs, const struct sfs_verdict *v);

/* Pins in DIR the host directory where PARENT's entry seen as V lives:
 * PARENT's own, or, for a private directory's own name, the store's mirror
 * of PARENT (made when CREATE). */
int fs_entry_dir(struct sfs_fs *fs, struct sfs_node *parent, const struct view *v, bool create,
		 struct sfs_anchor *dir);

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
		      const char *path, const struct view *v, struct fuse_entry_param *e);

/* ---- changing a name ----------------------------------------------------- */

/* A change to one name in a directory, from the guard's yes to the host
 * call: the name's path and its verdict (judged once, for the operation),
 * the directory that holds it pinned (verified to be where the table says,
 * so the path the policy judged is the path the change lands at; for a
 * private directory's own name, the store's mirror of the directory), the
 * mutation lock and the caller's identity. */
struct change {
	const char *name; /* the request's */
	char path[PATH_REL_MAX];
	struct sfs_verdict v;
	struct sfs_anchor dir;
	struct sfs_creds creds;
	struct sfs_guard *locked; /* non-NULL while the mutation lock is held */
	bool private_root;	  /* the name is a private directory's own */
	bool in_store;		  /* the name is in the store, not in SOURCE */
};

/* Takes the mutation lock for CH (EXCLUSIVE: renames and symlinks), before
 * any path is worked out: a path judged under the lock is still the path
 * when the change lands, since whatever could rename a directory above it
 * waits for the lock. */
void fs_change_lock(fuse_req_t req, struct change *ch, bool exclusive);

/* Works out NAME's path in PARENT, judges OP there once (about WHO, NULL
 * when unknown yet: sfs_guard_judge) and pins the directory that holds the
 * name (with CREATE, a store mirror is made when missing). Nothing is
 * audited yet: fs_change_conclude does that. */
int fs_change_locate(fuse_req_t req, fuse_ino_t parent, const char *name, enum sfs_op op,
		     struct sfs_subject *who, bool create, struct change *ch);

/* The rest of the guard's check of CH's verdict (sfs_guard_conclude), WHO
 * the inode it concerns (NULL: what is at the name now). */
int fs_change_conclude(fuse_req_t req, struct change *ch, const char *opname,
		       struct sfs_subject *who);

/* The common case, all of the above and the caller's credentials: OP on
 * NAME in PARENT, about WHO (NULL: what is at NAME now). */
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

#endif
