/* ops.c - see ops.h.
 *
 * Rules every handler follows (as in libfuse's passthrough_ll):
 *  - it replies exactly once, on every path;
 *  - host access is an *at() call relative to an anchor fd from the inode
 *    table, with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW; no path string is ever
 *    resolved from '/';
 *  - a node whose name no longer leads to its inode answers ESTALE, and
 *    the kernel looks the name up again;
 *  - everything that creates, changes or opens runs with the caller's
 *    credentials (creds.h), after the guard (guard.h) has allowed every
 *    name it touches; lookups and listings ask the guard what is visible. */

#include "ops.h"
#include "compat.h"
#include "creds.h"
#include "guard.h"
#include "inode.h"
#include "owner.h"
#include "stats.h"
#include "store.h"
#include "path.h"
#include "common/util.h"
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

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
	/* The kernel leaves the umask to us (POSIX ACLs, dont_mask). */
	bool posix_acl;
	/* Files just created, kept open a little while: with no_open the
	 * kernel gets no handle from create (it would never release one),
	 * yet the creator may go on writing a file whose mode lets nobody
	 * open it for writing again (cp of a 0444 file, install -m 0).
	 * Only an unprivileged daemon needs them: root opens such a file
	 * again for each write. A kept fd holds a file removed behind the
	 * daemon's back until 64 newer ones push it out. */
	pthread_mutex_t created_lock;
	struct created_fd {
		const struct sfs_node *node;
		uint64_t generation;
		int fd, accmode;
	} created[64];
	unsigned created_next;
	struct sfs_stats stats;
};

struct sfs_dir_handle {
	DIR *dp;
};

int sfs_fs_new(int rootfd, const struct sfs_fs_config *cfg, struct sfs_policy *policy,
	       struct sfs_audit *audit, struct sfs_store *store, struct sfs_fs **out, char **err)
{
	struct sfs_owner *owner = NULL;
	struct sfs_stat st;
	struct sfs_fs *fs;
	int r = sfs_stat_fd(rootfd, &st);

	*err = NULL;
	fs = r == 0 ? calloc(1, sizeof(*fs)) : NULL;
	if (r == 0 && !fs)
		r = -ENOMEM;
	if (r == 0)
		r = sfs_owner_new(sfs_store_dir_fd(store), &owner);
	if (r == 0)
		r = sfs_table_new(rootfd, &st, cfg->anchor_limit, &fs->table);
	if (r < 0) {
		/* Everything handed over is released on every failure. */
		sfs_owner_free(owner);
		free(fs);
		close(rootfd);
		sfs_policy_free(policy);
		sfs_audit_close(audit);
		sfs_store_free(store);
		return r;
	}
	fs->store = store;
	sfs_table_set_store(fs->table, sfs_store_tree_fd(store));
	r = sfs_guard_new(policy, audit, owner, fs->table, &fs->guard, err);
	if (r < 0) {
		sfs_table_free(fs->table);
		sfs_store_free(store);
		free(fs);
		return r;
	}
	fs->timeout = cfg->cache_timeout;
	fs->watched_timeout = cfg->watched_timeout;
	fs->no_open = cfg->no_open;
	fs->no_opendir = true;
	pthread_mutex_init(&fs->created_lock, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(fs->created); i++)
		fs->created[i].fd = -1;
	if (cfg->watch_host && sfs_watch_new(fs->table, rootfd, &fs->stats, &fs->watch) == 0)
		sfs_watch_dir(fs->watch, sfs_table_root(fs->table), rootfd, NULL);
	sfs_creds_init();
	*out = fs;
	return 0;
}

int sfs_fs_start(struct sfs_fs *fs, struct fuse_session *se)
{
	return fs->watch ? sfs_watch_start(fs->watch, se) : 0;
}

void sfs_fs_stop(struct sfs_fs *fs)
{
	sfs_watch_free(fs->watch);
	fs->watch = NULL;
}

void sfs_fs_free(struct sfs_fs *fs)
{
	if (!fs)
		return;
	sfs_fs_stop(fs);
	for (size_t i = 0; i < ARRAY_SIZE(fs->created); i++)
		if (fs->created[i].fd >= 0)
			close(fs->created[i].fd);
	pthread_mutex_destroy(&fs->created_lock);
	sfs_guard_free(fs->guard);
	sfs_table_free(fs->table);
	sfs_store_free(fs->store);
	free(fs);
}

struct sfs_stats *sfs_fs_stats(struct sfs_fs *fs)
{
	return &fs->stats;
}

static double timeout_for(const struct sfs_fs *fs, const struct sfs_node_info *info)
{
	return info->covered ? fs->watched_timeout : fs->timeout;
}

static struct sfs_fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct sfs_node *node_of(fuse_req_t req, fuse_ino_t ino)
{
	return sfs_node_from_id(fs_of(req)->table, ino);
}

static struct sfs_caller caller_of(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return (struct sfs_caller){.pid = ctx->pid, .uid = ctx->uid};
}

/* A file whose last name went through the mount while it was open: no
 * name of any class reaches it any more, so changing it changes no path. */
static bool is_nameless_orphan(struct sfs_fs *fs, struct sfs_node *n)
{
	struct sfs_node_info info;
	struct sfs_stat st;

	sfs_node_info(fs->table, n, &info);
	return info.orphan_fd >= 0 && sfs_stat_fd(info.orphan_fd, &st) == 0 && st.st.st_nlink == 0;
}

/* Asks the guard about OP on node N itself. */
static int check_node(fuse_req_t req, struct sfs_node *n, enum sfs_op op, const char *opname)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_caller c = caller_of(req);
	struct sfs_subject who = SFS_SUBJECT_NODE(n);
	char path[SFS_PATH_MAX];
	int r = sfs_node_relpath(fs->table, n, NULL, path, sizeof(path));

	if (r == -ENOENT && is_nameless_orphan(fs, n))
		return 0;
	if (r == 0)
		r = sfs_guard_check(fs->guard, &c, path, op, opname, NULL, &who);
	/* A change through one name of a file with hard links changes them
	 * all: every name the kernel knows must allow it. */
	for (unsigned i = 0; r == 0; i++) {
		if (sfs_node_alias_relpath(fs->table, n, i, path, sizeof(path)) < 0)
			break;
		r = sfs_guard_check(fs->guard, &c, path, op, opname, NULL, &who);
	}
	/* What was allowed, was allowed where N was: a directory the host
	 * moved onto a protected name is not judged by its old one. */
	if (r == 0)
		r = sfs_node_check_place(fs->table, n);
	return r;
}

/* Whether the path PATH, a name in directory PARENT, is a private
 * directory's own name: PARENT is in SOURCE, PATH is private. The name
 * then lives in the store's mirror of PARENT, and only a directory may
 * be there. */
static bool private_root(struct sfs_fs *fs, struct sfs_node *parent, const char *path)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, parent, &info);
	return !info.in_store && sfs_guard_private(fs->guard, path);
}

/* The store's mirror of directory PARENT (in SOURCE), into DIR (which owns
 * the fd): made when CREATE, else -ENOENT when it is not there. What is
 * known of it is kept in the node. */
static int open_mirror(struct sfs_fs *fs, struct sfs_node *parent, bool create,
		       struct sfs_anchor *dir)
{
	char path[SFS_PATH_MAX];
	struct sfs_node_info info;

	sfs_node_info(fs->table, parent, &info);
	if (info.mirror == 0 && !create)
		return -ENOENT;
	int r = sfs_node_relpath(fs->table, parent, NULL, path, sizeof(path));
	if (r < 0)
		return r;
	int fd = sfs_store_mirror(fs->store, sfs_table_rootfd(fs->table), path, create);
	if (fd == -ENOENT || fd == -ENOTDIR) {
		sfs_node_set_mirror(fs->table, parent, false);
		return -ENOENT;
	}
	if (fd < 0)
		return fd;
	sfs_node_set_mirror(fs->table, parent, true);
	sfs_anchor_put(dir);
	*dir = (struct sfs_anchor){.table = fs->table, .fd = fd, .own_fd = true};
	return 0;
}

/* What the policy lets a lookup see at a path (sfs_guard_visible). */
struct view {
	int err; /* -ENOENT: hidden */
	int overlay_fd;
	bool private;
};

static struct view view_of(struct sfs_fs *fs, const char *path)
{
	struct view v;

	v.err = sfs_guard_visible(fs->guard, path, &v.overlay_fd, &v.private);
	return v;
}

/* Pins in DIR the host directory where PARENT's entry at PATH (seen as V)
 * lives: PARENT's own, or, for a private directory's own name, the store's
 * mirror of PARENT (made when CREATE). */
static int place(struct sfs_fs *fs, struct sfs_node *parent, const char *path, const struct view *v,
		 bool create, struct sfs_anchor *dir)
{
	if (v->private && private_root(fs, parent, path))
		return open_mirror(fs, parent, create, dir);
	return sfs_anchor_get(fs->table, parent, dir);
}

/* Looks NAME up in DIRFD (which is where PARENT's entry NAME lives, NAME
 * being at PATH, seen as V: NULL to ask) and makes the kernel a new
 * reference to it: -ENOENT for what the policy hides, the overlay file
 * for what it overlays. A directory seen for the first time is watched.
 * FOUND (may be NULL) gets what was found. */
static int lookup_at(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
		     const char *path, const struct view *v, struct fuse_entry_param *e,
		     struct sfs_stat *found)
{
	struct sfs_node_info info;
	struct sfs_stat st;
	struct view asked;

	if (!v) {
		asked = view_of(fs, path);
		v = &asked;
	}
	int overlay_fd = v->overlay_fd, r = v->err;
	if (r == 0)
		r = overlay_fd >= 0 ? sfs_stat_fd(overlay_fd, &st) : sfs_stat_at(dirfd, name, &st);
	if (r < 0)
		return r;
	bool store_base = v->private && private_root(fs, parent, path);
	if (store_base && !S_ISDIR(st.st.st_mode))
		return -ENOENT; /* a private directory is a directory */
	struct sfs_node *n = sfs_table_intern(fs->table, parent, name, &st, store_base);
	if (!n)
		return -ENOMEM;
	if (overlay_fd >= 0)
		sfs_node_set_overlay(fs->table, n, overlay_fd);
	sfs_node_info(fs->table, n, &info);
	if (fs->watch && info.type == S_IFDIR && !sfs_node_watched(fs->table, n))
		sfs_watch_dir(fs->watch, n, dirfd, name);
	memset(e, 0, sizeof(*e));
	e->ino = sfs_node_id(n);
	e->generation = info.generation;
	e->attr = st.st;
	e->attr_timeout = e->entry_timeout = timeout_for(fs, &info);
	if (found)
		*found = st;
	return 0;
}

/* Replies with an entry the kernel now holds a reference to; if the reply
 * does not reach it (the request was interrupted), the reference is
 * dropped again. */
static void reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e) != 0 && e->ino)
		sfs_table_forget(fs_of(req)->table, node_of(req, e->ino), 1);
}

/* Locates N and checks that its name still leads to it. */
static int locate_verified(struct sfs_fs *fs, struct sfs_node *n, struct sfs_location *loc,
			   struct sfs_stat *st)
{
	int r = sfs_locate(fs->table, n, loc);

	if (r < 0)
		return r;
	r = sfs_stat_at(loc->dir.fd, loc->name, st);
	if (r == -ENOENT)
		return -ESTALE;
	if (r < 0)
		return r;
	return sfs_node_matches(fs->table, n, st) ? 0 : -ESTALE;
}

/* The O_TRUNC of an open of N, once FD (opened without it) is known to be
 * N. O_RDONLY|O_TRUNC truncates too (Linux): through a write fd of its
 * own, checked the same way. */
static int truncate_opened(struct sfs_fs *fs, struct sfs_node *n, const struct sfs_location *loc,
			   int fd, int flags)
{
	struct sfs_stat st;

	if ((flags & O_ACCMODE) != O_RDONLY)
		return ftruncate(fd, 0) < 0 ? -errno : 0;
	cleanup_fd int wfd =
		openat(loc->dir.fd, loc->name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (wfd < 0)
		return -errno;
	int r = sfs_stat_fd(wfd, &st);
	if (r < 0)
		return r;
	if (!sfs_node_matches(fs->table, n, &st))
		return -ESTALE;
	return ftruncate(wfd, 0) < 0 ? -errno : 0;
}

/* Opens N itself with FLAGS (never following a symlink) and checks that
 * what was opened is N. The way there is resolved with the daemon's own
 * credentials (an anchor on the portable flavour is a directory opened for
 * reading, which a caller with search permission only could not open);
 * with AS_CALLER, the open itself is the caller's. */
static int open_node_as(fuse_req_t as_caller, struct sfs_fs *fs, struct sfs_node *n, int flags)
{
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	struct sfs_stat st;
	int r = sfs_locate(fs->table, n, &loc);

	if (r == 0 && as_caller)
		r = sfs_creds_enter(as_caller, &creds);
	if (r < 0)
		return r;
	/* O_TRUNC waits until the file opened is known to be N: the name may
	 * lead to another file by now (the user replaced it on the host),
	 * which nobody judged. */
	cleanup_fd int fd =
		openat(loc.dir.fd, loc.name, (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	r = sfs_stat_fd(fd, &st);
	if (r < 0)
		return r;
	if (!sfs_node_matches(fs->table, n, &st))
		return -ESTALE;
	if ((flags & O_TRUNC) && S_ISREG(st.st.st_mode) &&
	    (r = truncate_opened(fs, n, &loc, fd, flags)) < 0)
		return r;
	return steal_fd(&fd);
}

static int open_node(struct sfs_fs *fs, struct sfs_node *n, int flags)
{
	return open_node_as(NULL, fs, n, flags);
}

/* What the kernel holds from open or create to release. An open that can
 * change the file opens the host file at once, as the caller; a read-only
 * one waits for the first request that needs an fd: most are served from
 * the page cache (FOPEN_KEEP_CACHE) and never need one, which saves the
 * daemon a host open and close per file (rg, tar, compilers). */
struct open_file {
	_Atomic int fd; /* -1 until opened */
	int flags;	/* host open flags for the deferred open */
};

static struct open_file *handle_of(const struct fuse_file_info *fi)
{
	return fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
}

/* The handle's fd if the host file is open already, else 0 (also when the
 * kernel opened the file without asking: no handle). */
static int handle_fd_if_open(const struct fuse_file_info *fi)
{
	struct open_file *h = handle_of(fi);
	int fd = h ? atomic_load(&h->fd) : -1;

	return fd > 0 ? fd : 0;
}

/* The handle's fd, opening the host file now if the open was deferred;
 * 0 without a handle. */
static int handle_fd(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi)
{
	struct open_file *h = handle_of(fi);

	if (!h)
		return 0;
	int fd = atomic_load(&h->fd);
	if (fd > 0)
		return fd;
	/* Unlinked since it was opened: the fd kept for it then. */
	struct sfs_node_info info;
	sfs_node_info(fs->table, n, &info);
	if (info.orphan_fd >= 0) {
		fd = fcntl(info.orphan_fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			fd = -errno;
	} else {
		fd = open_node(fs, n, h->flags);
	}
	if (fd < 0)
		return fd;
	int none = -1;
	if (!atomic_compare_exchange_strong(&h->fd, &none, fd)) {
		close(fd); /* another request opened it first */
		fd = none;
	}
	return fd;
}

/* Hands the kernel a handle on FD (-1: open at first use with FLAGS). */
static int handle_new(struct fuse_file_info *fi, int fd, int flags)
{
	struct open_file *h = malloc(sizeof(*h));

	if (!h)
		return -ENOMEM;
	atomic_init(&h->fd, fd);
	h->flags = flags;
	fi->fh = (uintptr_t)h;
	return 0;
}

static void handle_free(struct fuse_file_info *fi)
{
	struct open_file *h = handle_of(fi);

	if (!h)
		return;
	int fd = atomic_load(&h->fd);
	if (fd > 0)
		close(fd);
	free(h);
	fi->fh = 0;
}

static void keep_created(struct sfs_fs *fs, struct sfs_node *n, int fd, int accmode)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	pthread_mutex_lock(&fs->created_lock);
	struct created_fd *slot = &fs->created[fs->created_next++ % ARRAY_SIZE(fs->created)];
	if (slot->fd >= 0)
		close(slot->fd);
	*slot = (struct created_fd){n, info.generation, fd, accmode};
	pthread_mutex_unlock(&fs->created_lock);
}

/* A duplicate of the fd N was created with, if still kept and opened for
 * ACCMODE (or both ways); else -1. */
static int created_dup(struct sfs_fs *fs, struct sfs_node *n, int accmode)
{
	struct sfs_node_info info;
	int fd = -1;

	sfs_node_info(fs->table, n, &info);
	pthread_mutex_lock(&fs->created_lock);
	for (size_t i = 0; i < ARRAY_SIZE(fs->created) && fd < 0; i++) {
		struct created_fd *c = &fs->created[i];
		if (c->fd >= 0 && c->node == n && c->generation == info.generation &&
		    (c->accmode == accmode || c->accmode == O_RDWR))
			fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 3);
	}
	pthread_mutex_unlock(&fs->created_lock);
	return fd;
}

/* The fd an I/O request works on: the handle from open or create, the
 * overlay file, the fd kept for a node unlinked while the kernel still
 * knew it, or one opened with FLAGS for this request alone. */
struct io_fd {
	int fd;
	bool owned;
};

static int io_fd_get(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi,
		     int flags, struct io_fd *io)
{
	struct sfs_node_info info;

	io->owned = false;
	io->fd = handle_fd(fs, n, fi);
	if (io->fd != 0)
		return io->fd < 0 ? io->fd : 0;
	sfs_node_info(fs->table, n, &info);
	if (info.overlay_fd >= 0 || info.orphan_fd >= 0) {
		io->fd = info.overlay_fd >= 0 ? info.overlay_fd : info.orphan_fd;
		return 0;
	}
	io->fd = created_dup(fs, n, flags & O_ACCMODE);
	if (io->fd < 0)
		io->fd = open_node(fs, n, flags | O_NONBLOCK);
	if (io->fd < 0)
		return io->fd;
	io->owned = true;
	return 0;
}

static void io_fd_put(struct io_fd *io)
{
	if (io->owned)
		close_keep_errno(io->fd);
	io->owned = false;
}
#define cleanup_io __attribute__((cleanup(io_fd_put)))

static void sfs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct sfs_fs *fs = userdata;

	if (conn->capable & FUSE_CAP_EXPIRE_ONLY)
		conn->want |= FUSE_CAP_EXPIRE_ONLY;
	sfs_watch_set_expire_only(fs->watch, conn->want & FUSE_CAP_EXPIRE_ONLY);
	/* The kernel enforces POSIX ACLs along with the mode bits. */
	if ((conn->capable & FUSE_CAP_POSIX_ACL) && (conn->capable & FUSE_CAP_DONT_MASK))
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
	fs->posix_acl = conn->want & FUSE_CAP_POSIX_ACL;
	/* Opening a directory changes nothing: the kernel may do it without
	 * asking, and keep the listing (FOPEN_CACHE_DIR). */
	if (fs->no_opendir && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT))
		conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
	else
		fs->no_opendir = false;
	if (fs->no_open && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT)) {
		conn->want |= FUSE_CAP_NO_OPEN_SUPPORT;
		/* O_TRUNC must then arrive as a truncate the policy sees. */
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	} else {
		fs->no_open = false;
	}
	/* Page cache kept across opens, dropped when the mtime changes. */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
	/* Writes go straight to the host: a denied write must never sit in
	 * a dirty page first, and O_APPEND stays atomic between writers. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* Locks are kept by the kernel, among the mount's users. */
	conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
	conn->time_gran = 1;
}

static void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LOOKUP);
	struct sfs_fs *fs = fs_of(req);
	struct fuse_entry_param e;
	cleanup_anchor struct sfs_anchor dir = {0};
	struct view v = {0};

	char path[SFS_PATH_MAX];

	if (strlen(name) > NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	int r = sfs_node_relpath(fs->table, node_of(req, parent), name, path, sizeof(path));
	if (r == 0) {
		v = view_of(fs, path);
		r = v.err;
	}
	if (r == 0)
		r = place(fs, node_of(req, parent), path, &v, false, &dir);
	if (r == 0)
		r = lookup_at(fs, node_of(req, parent), dir.fd, name, path, &v, &e, NULL);
	if (r == -ENOENT) {
		/* A negative entry the kernel may cache: long where a host
		 * create would be heard. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = sfs_node_watched(fs->table, node_of(req, parent))
					  ? fs->watched_timeout
					  : fs->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_entry(req, &e);
}

static void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FORGET);
	sfs_table_forget(fs_of(req)->table, node_of(req, ino), nlookup);
	fuse_reply_none(req);
}

static void sfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FORGET);
	for (size_t i = 0; i < count; i++)
		sfs_table_forget(fs_of(req)->table, node_of(req, forgets[i].ino),
				 forgets[i].nlookup);
	fuse_reply_none(req);
}

static int overlay_of(struct sfs_fs *fs, struct sfs_node *n)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	return info.overlay_fd;
}

static int stat_node(struct sfs_fs *fs, struct sfs_node *n, struct fuse_file_info *fi,
		     struct sfs_stat *st)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	if (info.overlay_fd >= 0)
		return sfs_stat_fd(info.overlay_fd, st);
	int open_fd = info.type == S_IFREG ? handle_fd_if_open(fi) : 0;
	if (open_fd > 0)
		return sfs_stat_fd(open_fd, st);
	if (info.orphan_fd >= 0)
		return sfs_stat_fd(info.orphan_fd, st);
	cleanup_location struct sfs_location loc = {0};
	return locate_verified(fs, n, &loc, st);
}

static void reply_attr(fuse_req_t req, struct sfs_node *n, const struct sfs_stat *st)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	fuse_reply_attr(req, &st->st, timeout_for(fs, &info));
}

static void sfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, GETATTR);
	struct sfs_stat st;
	int r = stat_node(fs_of(req), node_of(req, ino), fi, &st);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_attr(req, node_of(req, ino), &st);
}

/* Everything is located with the daemon's credentials, then changed with
 * the caller's. */
static int apply_setattr(fuse_req_t req, struct sfs_fs *fs, struct sfs_node *n,
			 const struct stat *attr, int valid, struct fuse_file_info *fi)
{
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_io struct io_fd io = {0};
	struct sfs_node_info info;
	struct sfs_stat st;
	int r = locate_verified(fs, n, &loc, &st);
	int ir = (valid & FUSE_SET_ATTR_SIZE) ? io_fd_get(fs, n, fi, O_WRONLY, &io) : 0;
	int cr = sfs_creds_enter(req, &creds);

	if (ir < 0)
		return ir;
	if (cr < 0)
		return cr;

	/* An open file whose name is gone (unlinked, renamed on the host)
	 * is still reachable through its handle or kept fd. */
	sfs_node_info(fs->table, n, &info);
	int fd = info.type == S_IFREG ? handle_fd_if_open(fi) : 0;
	if (fd <= 0)
		fd = info.orphan_fd;
	bool by_fd = fd > 0;
	if (r < 0 && !by_fd)
		return r;
	if (valid & FUSE_SET_ATTR_MODE) {
		if (by_fd)
			r = fchmod(fd, attr->st_mode) < 0 ? -errno : 0;
		else
			r = sfs_chmod_at(loc.dir.fd, loc.name, attr->st_mode);
		if (r < 0)
			return r;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
		if (by_fd)
			r = fchown(fd, uid, gid);
		else
			r = fchownat(loc.dir.fd, loc.name, uid, gid, AT_SYMLINK_NOFOLLOW);
		if (r < 0)
			return -errno;
	}
	if ((valid & FUSE_SET_ATTR_SIZE) && ftruncate(io.fd, attr->st_size) < 0)
		return -errno;
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
		if (valid & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		if (by_fd)
			r = futimens(fd, tv);
		else
			r = utimensat(loc.dir.fd, loc.name, tv, AT_SYMLINK_NOFOLLOW);
		if (r < 0)
			return -errno;
	}
	return 0;
}

/* A set-uid or set-gid bit is never set through the mount; one the host
 * set may stay (a chmod that keeps it) or go. */
static int check_setattr(fuse_req_t req, struct sfs_node *n, const struct stat *attr, int valid,
			 struct fuse_file_info *fi)
{
	struct sfs_stat st;
	int r;

	if (valid & FUSE_SET_ATTR_MODE) {
		r = stat_node(fs_of(req), n, fi, &st);
		if (r < 0)
			return r;
		if (attr->st_mode & ~st.st.st_mode & (S_ISUID | S_ISGID)) {
			struct sfs_caller c = caller_of(req);
			char path[SFS_PATH_MAX];
			r = sfs_node_relpath(fs_of(req)->table, n, NULL, path, sizeof(path));
			return r < 0 ? r
				     : sfs_guard_deny_builtin(fs_of(req)->guard, &c, path, "chmod",
							      "set-uid and set-gid bits are never "
							      "set through the mount");
		}
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		r = check_node(req, n, SFS_OP_TRUNCATE, "truncate");
		if (r < 0)
			return r;
	}
	if (valid & ~FUSE_SET_ATTR_SIZE)
		return check_node(req, n, SFS_OP_SETATTR, "setattr");
	return 0;
}

static void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, SETATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	struct sfs_stat st;
	int r = check_setattr(req, n, attr, valid, fi);

	if (r == 0)
		r = apply_setattr(req, fs, n, attr, valid, fi);
	if (r == 0)
		r = stat_node(fs, n, fi, &st);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_attr(req, n, &st);
}

static void sfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READLINK);
	struct sfs_fs *fs = fs_of(req);
	cleanup_location struct sfs_location loc = {0};
	char buf[PATH_MAX + 1];
	int r = sfs_locate(fs->table, node_of(req, ino), &loc);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	ssize_t len = readlinkat(loc.dir.fd, loc.name, buf, sizeof(buf));
	if (len < 0)
		fuse_reply_err(req, errno == ENOENT ? ESTALE : errno);
	else if ((size_t)len >= sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[len] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

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

static void change_end(struct change *ch)
{
	sfs_creds_leave(&ch->creds);
	if (ch->locked)
		sfs_guard_unlock(ch->locked);
	ch->locked = NULL;
	sfs_anchor_put(&ch->dir);
}
#define cleanup_change __attribute__((cleanup(change_end)))

/* Resolves NAME's path in PARENT and pins the directory that holds it
 * (with CREATE, a store mirror is made when missing); no check yet. */
static int change_locate(fuse_req_t req, fuse_ino_t parent, const char *name, bool create,
			 struct change *ch)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *dir = node_of(req, parent);
	struct sfs_node_info info;

	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	int r = sfs_node_relpath(fs->table, dir, name, ch->path, sizeof(ch->path));
	if (r < 0)
		return r;
	sfs_node_info(fs->table, dir, &info);
	ch->private_root = !info.in_store && sfs_guard_private(fs->guard, ch->path);
	ch->in_store = info.in_store || ch->private_root;
	if (ch->private_root)
		return open_mirror(fs, dir, create, &ch->dir);
	r = sfs_anchor_get(fs->table, dir, &ch->dir);
	if (r == 0)
		r = sfs_node_verify(fs->table, dir, ch->dir.fd);
	return r;
}

/* Takes the mutation lock, before any path is worked out: a path judged
 * under the lock is still the path when the change lands, since whatever
 * could rename a directory above it waits for the lock. */
static void change_lock(fuse_req_t req, struct change *ch, bool exclusive)
{
	ch->locked = fs_of(req)->guard;
	sfs_guard_lock(ch->locked, exclusive);
}

/* What CREATE, MKDIR and SYMLINK make is the agent's own. */
static struct sfs_subject subject_new(void)
{
	return (struct sfs_subject){.dirfd = -1, .owned = 1};
}

/* The common case: OP on NAME in PARENT, as the caller, about WHO (NULL:
 * what is at NAME now). CREATE: a store mirror the name lives in is made
 * if need be. */
static int change_begin(fuse_req_t req, fuse_ino_t parent, const char *name, enum sfs_op op,
			const char *opname, bool create, struct sfs_subject *who, struct change *ch)
{
	struct sfs_caller c = caller_of(req);

	change_lock(req, ch, false);
	int r = change_locate(req, parent, name, create, ch);
	struct sfs_subject at_name = SFS_SUBJECT_AT(ch->dir.fd, name, NULL);
	if (r == 0)
		r = sfs_guard_check(fs_of(req)->guard, &c, ch->path, op, opname, NULL,
				    who ? who : &at_name);
	if (r == 0)
		r = sfs_creds_enter(req, &ch->creds);
	return r;
}

/* Only a directory may be a private directory's own name: the store holds
 * directories of dependencies and tool state, nothing else. */
static int refuse_private_root(fuse_req_t req, struct change *ch, const char *opname)
{
	struct sfs_caller c = caller_of(req);

	if (!ch->private_root)
		return 0;
	return sfs_guard_deny_builtin(fs_of(req)->guard, &c, ch->path, opname,
				      "only a directory may have the name of a private directory");
}

/* The tail shared by everything that makes a new name: look it up, mark it
 * the agent's own (as the daemon: the mark is not the caller's to set),
 * hand the kernel its entry. */
static void reply_new_entry(fuse_req_t req, fuse_ino_t parent, struct change *ch, const char *name,
			    int r, bool made)
{
	struct sfs_fs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct sfs_stat st;
	/* Only where ownership is what lets the agent change it: at a
	 * writable name the mark would tell nothing, and costs a write. */
	bool mark = r == 0 && made && !ch->in_store && !sfs_guard_writable(fs->guard, ch->path);

	if (mark) {
		sfs_creds_leave(&ch->creds);
		if (sfs_stat_at(ch->dir.fd, name, &st) == 0)
			sfs_guard_mark_owned(fs->guard, -1, ch->dir.fd, name, &st, true);
	}
	if (r == 0)
		r = lookup_at(fs, node_of(req, parent), ch->dir.fd, name, ch->path, NULL, &e, NULL);
	if (r == 0 && mark)
		sfs_node_set_owned(fs->table, node_of(req, e.ino), true);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_entry(req, &e);
}

/* The mode a new name in DIRFD gets: set-uid and set-gid bits are never
 * created through the mount; and with POSIX ACLs the kernel leaves the
 * caller's umask to us, to apply unless the directory's default ACL rules
 * instead (the host applies that one itself). */
static mode_t new_mode(fuse_req_t req, int dirfd, mode_t mode)
{
	mode &= ~(mode_t)(S_ISUID | S_ISGID);
	if (fs_of(req)->posix_acl &&
	    sfs_getxattr_at(dirfd, ".", "system.posix_acl_default", NULL, 0) <= 0)
		mode &= ~fuse_req_ctx(req)->umask;
	return mode;
}

static void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, MKNOD);
	struct sfs_caller c = caller_of(req);
	cleanup_change struct change ch = {0};
	struct sfs_subject who = subject_new();

	change_lock(req, &ch, false);
	int r = change_locate(req, parent, name, false, &ch);
	/* Device nodes are never created, whatever the policy says. */
	if (r == 0 && !S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode))
		r = sfs_guard_deny_builtin(fs_of(req)->guard, &c, ch.path, "mknod",
					   "device nodes are never created through the mount");
	if (r == 0)
		r = refuse_private_root(req, &ch, "mknod");
	/* A regular file is a create; FIFOs and sockets need a writable
	 * name (a host tool reading one would hang). */
	if (r == 0)
		r = sfs_guard_check(fs_of(req)->guard, &c, ch.path,
				    S_ISREG(mode) ? SFS_OP_CREATE : SFS_OP_MKNOD, "mknod", NULL,
				    &who);
	if (r == 0)
		r = sfs_creds_enter(req, &ch.creds);
	if (r == 0 && mknodat(ch.dir.fd, name, new_mode(req, ch.dir.fd, mode), rdev) < 0)
		r = -errno;
	reply_new_entry(req, parent, &ch, name, r, true);
}

static void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, MKDIR);
	cleanup_change struct change ch = {0};
	struct sfs_subject who = subject_new();
	int r = change_begin(req, parent, name, SFS_OP_MKDIR, "mkdir", true, &who, &ch);

	if (r == 0 && mkdirat(ch.dir.fd, name, new_mode(req, ch.dir.fd, mode)) < 0)
		r = -errno;
	reply_new_entry(req, parent, &ch, name, r, true);
}

static void sfs_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, SYMLINK);
	struct sfs_caller c = caller_of(req);
	cleanup_change struct change ch = {0};

	/* Exclusive: the components of the target asked about must not turn
	 * into symlinks (rmdir, then symlink) before this one is made. */
	change_lock(req, &ch, true);
	int r = change_locate(req, parent, name, false, &ch);
	if (r == 0)
		r = refuse_private_root(req, &ch, "symlink");
	if (r == 0)
		r = sfs_guard_symlink(fs_of(req)->guard, &c, ch.path, target);
	if (r == 0)
		r = sfs_creds_enter(req, &ch.creds);
	if (r == 0 && symlinkat(target, ch.dir.fd, name) < 0)
		r = -errno;
	reply_new_entry(req, parent, &ch, name, r, true);
}

static void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LINK);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_change struct change ch = {0};
	cleanup_location struct sfs_location src = {0};
	struct sfs_stat st;
	struct sfs_caller c = caller_of(req);
	struct sfs_subject who = SFS_SUBJECT_NODE(n);
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	change_lock(req, &ch, false);
	/* A second name for a protected inode would make it writable. */
	int r = check_node(req, n, SFS_OP_LINK_SOURCE, "link");
	if (r == 0)
		r = change_locate(req, newparent, newname, false, &ch);
	/* The store and SOURCE are two trees. */
	if (r == 0 && ch.in_store != info.in_store)
		r = -EXDEV;
	if (r == 0)
		r = refuse_private_root(req, &ch, "link");
	if (r == 0)
		r = sfs_guard_check(fs->guard, &c, ch.path, SFS_OP_LINK_TARGET, "link", NULL, &who);
	if (r == 0 && info.type == S_IFLNK)
		r = sfs_guard_symlink_name(fs->guard, &c, ch.path, "link");
	if (r == 0)
		r = sfs_creds_enter(req, &ch.creds);
	if (r == 0)
		r = locate_verified(fs, n, &src, &st);
	if (r == 0 && linkat(src.dir.fd, src.name, ch.dir.fd, newname, 0) < 0)
		r = -errno;
	reply_new_entry(req, newparent, &ch, newname, r, false);
}

/* Before NAME (described by ST) goes from DIRFD: if the kernel knows the
 * file and may have it open without the daemon holding a handle (no_open),
 * an fd that keeps it reachable once its name is gone. -1 otherwise. */
static int keep_before_removal(struct sfs_fs *fs, int dirfd, const char *name,
			       const struct sfs_stat *st, struct sfs_node **node)
{
	*node = NULL;
	/* fstat(), fchmod(), fsetxattr() on an open file reach the daemon
	 * without its handle (the kernel sends none for them), and a
	 * directory is open without one anyway (no_opendir). A file with no
	 * handle out, when every open makes one, is open nowhere. */
	if (!S_ISREG(st->st.st_mode) && !S_ISDIR(st->st.st_mode))
		return -1;
	*node = sfs_table_find(fs->table, st);
	if (!*node)
		return -1;
	struct sfs_node_info info;
	sfs_node_info(fs->table, *node, &info);
	if (S_ISREG(st->st.st_mode) && !fs->no_open && info.handles == 0)
		return -1;
	/* A directory too: a process may sit in it (its cwd) and still stat
	 * it, as natively. */
	int fd = S_ISDIR(st->st.st_mode)
			 ? -1
			 : openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct sfs_stat now;
	if (fd >= 0 && (sfs_stat_fd(fd, &now) < 0 || !sfs_node_matches(fs->table, *node, &now))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Closes the fds kept since N was created. */
static void created_drop(struct sfs_fs *fs, const struct sfs_node *n)
{
	pthread_mutex_lock(&fs->created_lock);
	for (size_t i = 0; i < ARRAY_SIZE(fs->created); i++) {
		struct created_fd *c = &fs->created[i];
		if (c->fd >= 0 && c->node == n) {
			close(c->fd);
			c->fd = -1;
		}
	}
	pthread_mutex_unlock(&fs->created_lock);
}

/* After the removal: the node takes the fd if it lost its last name. I/O
 * then goes to that fd (io_fd_get), which lives as long as the kernel
 * knows the file; a created fd would only hold a deleted file's blocks
 * until 64 newer files pushed it out (a 1 GiB file written and removed in
 * a loop filled a tmpfs so). */
static void keep_after_removal(struct sfs_fs *fs, struct sfs_node *node, int fd)
{
	if (fd >= 0) {
		if (sfs_node_adopt_orphan_fd(fs->table, node, fd))
			created_drop(fs, node);
		else
			close(fd);
	}
	sfs_node_unpin(fs->table, node);
}

/* ST's inode lost a name through the mount: with its last one, its
 * ownership record goes. */
static void name_removed(struct sfs_fs *fs, bool in_store, const struct sfs_stat *st)
{
	if (!in_store && (S_ISDIR(st->st.st_mode) || st->st.st_nlink <= 1))
		sfs_guard_forget_owned(fs->guard, st);
}

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, bool is_dir)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_change struct change ch = {0};
	struct sfs_stat st;
	int r = change_begin(req, parent, name, is_dir ? SFS_OP_RMDIR : SFS_OP_UNLINK,
			     is_dir ? "rmdir" : "unlink", false, NULL, &ch);

	if (r == 0) {
		struct sfs_node *gone = NULL;
		bool known = sfs_stat_at(ch.dir.fd, name, &st) == 0;
		int kept = known ? keep_before_removal(fs, ch.dir.fd, name, &st, &gone) : -1;
		if (unlinkat(ch.dir.fd, name, is_dir ? AT_REMOVEDIR : 0) < 0) {
			r = -errno;
		} else {
			sfs_table_note_unlink(fs->table, node_of(req, parent), name,
					      known ? &st : NULL);
			if (known)
				name_removed(fs, ch.in_store, &st);
		}
		keep_after_removal(fs, gone, r == 0 ? kept : (close_keep_errno(kept), -1));
	}
	fuse_reply_err(req, -r);
}

static void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, UNLINK);
	remove_name(req, parent, name, false);
}

static void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RMDIR);
	remove_name(req, parent, name, true);
}

/* The file ST describes, moved to NAME in DIRFD, is the agent's own now. */
static void mark_moved(struct sfs_fs *fs, int dirfd, const char *name, const struct sfs_stat *st)
{
	sfs_guard_mark_owned(fs->guard, -1, dirfd, name, st, false);
	struct sfs_node *n = sfs_table_find(fs->table, st);
	if (n) {
		sfs_node_set_owned(fs->table, n, true);
		sfs_node_unpin(fs->table, n);
	}
}

static void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		       const char *newname, unsigned int flags)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RENAME);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_caller c = caller_of(req);
	cleanup_change struct change from = {0};
	cleanup_change struct change to = {0};
	struct sfs_stat old_st, new_st;
	bool exchange = flags & RENAME_EXCHANGE;
	bool old_known = false, new_known = false;
	int r = 0;

	/* RENAME_WHITEOUT would make a device node. */
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		r = -EINVAL;
	/* Exclusive: a directory's subtree is checked and moved while
	 * nothing else can add a name anywhere, and no other change can have
	 * judged a path this rename is about to alter. */
	change_lock(req, &to, true);
	if (r == 0)
		r = change_locate(req, parent, name, false, &from);
	if (r == 0)
		r = change_locate(req, newparent, newname, true, &to);
	unsigned after = 0;
	if (r == 0) {
		old_known = sfs_stat_at(from.dir.fd, name, &old_st) == 0;
		new_known = sfs_stat_at(to.dir.fd, newname, &new_st) == 0;
		struct sfs_subject old =
			SFS_SUBJECT_AT(from.dir.fd, name, old_known ? &old_st : NULL);
		struct sfs_subject new =
			SFS_SUBJECT_AT(to.dir.fd, newname, new_known ? &new_st : NULL);
		r = sfs_guard_rename(fs->guard, &c, from.path, &old, to.path, &new, flags, &after);
		/* Only a directory may land at a private directory's name. */
		if (r == 0 && old_known && !S_ISDIR(old_st.st.st_mode))
			r = refuse_private_root(req, &to, "rename");
		if (r == 0 && exchange && new_known && !S_ISDIR(new_st.st.st_mode))
			r = refuse_private_root(req, &from, "rename");
	}
	if (r == 0)
		r = sfs_creds_enter(req, &to.creds);
	struct sfs_node *replaced = NULL;
	int kept = r == 0 && new_known && !exchange
			   ? keep_before_removal(fs, to.dir.fd, newname, &new_st, &replaced)
			   : -1;
	if (r == 0)
		r = sfs_rename_at(from.dir.fd, name, to.dir.fd, newname, flags);
	if (r == 0 && (after & SFS_INTO_STORE)) {
		/* What the kernel knows of it was in SOURCE: it looks again
		 * (ESTALE) and finds it in the store. */
		sfs_table_note_unlink(fs->table, node_of(req, newparent), newname,
				      new_known ? &new_st : NULL);
		sfs_table_note_moved_away(fs->table, node_of(req, parent), name,
					  old_known ? &old_st : NULL);
		name_removed(fs, false, &old_st);
	} else if (r == 0) {
		sfs_table_note_rename(fs->table, node_of(req, parent), name,
				      old_known ? &old_st : NULL, node_of(req, newparent), newname,
				      new_known ? &new_st : NULL, exchange);
		if (new_known && !exchange)
			name_removed(fs, to.in_store, &new_st);
		sfs_creds_leave(&to.creds);
		if (after & SFS_MARK_OLD)
			mark_moved(fs, to.dir.fd, newname, &old_st);
		if (after & SFS_MARK_NEW)
			mark_moved(fs, from.dir.fd, name, &new_st);
	}
	keep_after_removal(fs, replaced, r == 0 ? kept : (close_keep_errno(kept), -1));
	fuse_reply_err(req, -r);
}

/* Host open flags for a kernel open request. O_DIRECT is dropped: the
 * daemon's buffers are not aligned for it and the kernel page cache is
 * bypassed by the kernel anyway when it matters. O_APPEND is dropped: the
 * kernel places appends itself (and is not told when fcntl takes the flag
 * away), so the host fd must write where it is told. */
static int host_open_flags(int flags)
{
	return (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT | O_APPEND)) | O_NOFOLLOW |
	       O_CLOEXEC;
}

static bool opens_for_change(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

static void sfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, OPEN);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	int overlay_fd = overlay_of(fs, n);

	if (fs->no_open) {
		/* The kernel takes this as "open without asking" from now on. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	bool for_change = opens_for_change(fi->flags);
	int r = for_change ? check_node(req, n, SFS_OP_WRITE, "open") : 0;
	int fd = -1;

	if (r == 0 && overlay_fd >= 0) {
		/* Read-only (the policy allows nothing else on an overlay);
		 * reads are pread()s, so a shared offset does no harm. */
		fd = dup(overlay_fd);
		if (fd < 0)
			r = -errno;
	} else if (r == 0 && for_change) {
		/* The kernel has checked the caller's permission to open
		 * (default_permissions); the host checks it again for what
		 * can change something, as the caller. */
		fd = open_node_as(req, fs, n, host_open_flags(fi->flags));
		if (fd < 0)
			r = fd;
	} else if (r == 0) {
		/* Still there under its name: if the host replaced it (git
		 * rewrites .git/index so), ESTALE makes the kernel look the
		 * name up again and open what is there now. */
		cleanup_location struct sfs_location loc = {0};
		struct sfs_stat st;
		r = locate_verified(fs, n, &loc, &st);
	}
	if (r == 0)
		r = handle_new(fi, fd, host_open_flags(fi->flags));
	if (r < 0) {
		close_keep_errno(fd);
		fuse_reply_err(req, -r);
		return;
	}
	fi->keep_cache = 1;
	sfs_node_handles(fs->table, n, 1);
	if (fuse_reply_open(req, fi) != 0) {
		sfs_node_handles(fs->table, n, -1);
		handle_free(fi);
	}
}

static void sfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, CREATE);
	struct sfs_fs *fs = fs_of(req);
	cleanup_change struct change ch = {0};
	struct fuse_entry_param e;
	struct sfs_subject who = subject_new();
	struct sfs_stat st;
	int fd = -1;
	int r = change_begin(req, parent, name, SFS_OP_CREATE, "create", false, &who, &ch);

	if (r == 0)
		r = refuse_private_root(req, &ch, "create");
	/* Where only ownership lets the agent in, the name must really be
	 * new (a file the host made there meanwhile is not opened), and what
	 * is made is marked the agent's. */
	bool owned = r == 0 && !sfs_guard_writable(fs->guard, ch.path);
	if (r == 0) {
		int excl = (fi->flags & O_EXCL) || owned ? O_EXCL : 0;
		fd = openat(ch.dir.fd, name, host_open_flags(fi->flags) | O_CREAT | excl,
			    new_mode(req, ch.dir.fd, mode));
		if (fd < 0)
			r = -errno;
	}
	if (r == 0 && owned) {
		sfs_creds_leave(&ch.creds);
		if (sfs_stat_fd(fd, &st) == 0)
			sfs_guard_mark_owned(fs->guard, fd, ch.dir.fd, name, &st, true);
	}
	if (r == 0)
		r = lookup_at(fs, node_of(req, parent), ch.dir.fd, name, ch.path, NULL, &e, NULL);
	if (r < 0) {
		close_keep_errno(fd);
		fuse_reply_err(req, -r);
		return;
	}
	if (owned)
		sfs_node_set_owned(fs->table, node_of(req, e.ino), true);
	/* Once it opens without asking, the kernel never releases what it
	 * opened, created files included: no handle must be left to leak. */
	fi->fh = 0;
	if (fs->no_open && geteuid() == 0) {
		close(fd);
	} else if (fs->no_open) {
		keep_created(fs, node_of(req, e.ino), fd, fi->flags & O_ACCMODE);
	} else if ((r = handle_new(fi, fd, 0)) < 0) {
		/* The file exists now; the kernel learns of it at its next
		 * lookup. */
		close(fd);
		sfs_table_forget(fs->table, node_of(req, e.ino), 1);
		fuse_reply_err(req, -r);
		return;
	}
	fi->keep_cache = 1;
	if (fi->fh)
		sfs_node_handles(fs->table, node_of(req, e.ino), 1);
	if (fuse_reply_create(req, &e, fi) != 0) {
		if (fi->fh)
			sfs_node_handles(fs->table, node_of(req, e.ino), -1);
		handle_free(fi);
		sfs_table_forget(fs->table, node_of(req, e.ino), 1);
	}
}

static void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READ);
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	cleanup_io struct io_fd io = {0};
	int r = io_fd_get(fs_of(req), node_of(req, ino), fi, O_RDONLY, &io);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = io.fd;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

/* Writes land with the caller's fsuid/fsgid, so quotas and reserved blocks
 * count as they would natively; groups were settled when the file was
 * opened. */
struct write_identity {
	bool switched;
};

static void write_identity_enter(fuse_req_t req, struct write_identity *w)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	w->switched = geteuid() == 0 && (ctx->uid != 0 || ctx->gid != 0);
	if (w->switched) {
		setfsgid(ctx->gid);
		setfsuid(ctx->uid);
	}
}

static void write_identity_leave(struct write_identity *w)
{
	if (w->switched) {
		setfsuid(0);
		setfsgid(0);
	}
}

static void sfs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
			  struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, WRITE);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	cleanup_io struct io_fd io = {0};
	struct write_identity w;
	struct sfs_node *n = node_of(req, ino);
	int r = check_node(req, n, SFS_OP_WRITE, "write");

	if (r == 0)
		r = io_fd_get(fs_of(req), n, fi, O_WRONLY, &io);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = io.fd;
	out.buf[0].pos = off;
	write_identity_enter(req, &w);
	ssize_t res = fuse_buf_copy(&out, in, 0);
	write_identity_leave(&w);
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

static void sfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RELEASE);
	if (handle_of(fi)) {
		handle_free(fi);
		sfs_node_handles(fs_of(req)->table, node_of(req, ino), -1);
	}
	fuse_reply_err(req, 0);
}

static void sfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FSYNC);
	cleanup_io struct io_fd io = {0};
	int r = io_fd_get(fs_of(req), node_of(req, ino), fi, O_RDONLY, &io);

	if (r == 0 && (datasync ? fdatasync(io.fd) : fsync(io.fd)) < 0)
		r = -errno;
	fuse_reply_err(req, -r);
}

/* A directory stream on N, positioned nowhere yet. */
static int dir_handle_open(struct sfs_fs *fs, struct sfs_node *n, struct sfs_dir_handle **out)
{
	struct sfs_dir_handle *d = calloc(1, sizeof(*d));
	int fd = d ? open_node(fs, n, O_RDONLY | O_DIRECTORY) : -ENOMEM;

	if (fd >= 0) {
		d->dp = fdopendir(fd);
		if (!d->dp) {
			close_keep_errno(fd);
			fd = -errno;
		}
	}
	if (fd < 0) {
		free(d);
		return fd;
	}
	*out = d;
	return 0;
}

static void dir_handle_close(struct sfs_dir_handle *d)
{
	closedir(d->dp);
	free(d);
}

static void sfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, OPENDIR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_dir_handle *d = NULL;

	if (fs->no_opendir) {
		/* From now on the kernel opens directories without asking,
		 * and caches their listings (FOPEN_CACHE_DIR) by default. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	/* Listing changes nothing and the kernel has checked the caller's
	 * permission (default_permissions). */
	int r = dir_handle_open(fs, node_of(req, ino), &d);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uintptr_t)d;
	/* The kernel may keep the listing until the directory's mtime
	 * changes (auto_inval_data), so host changes still show. */
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) != 0)
		dir_handle_close(d);
}

static struct sfs_dir_handle *dir_handle(struct fuse_file_info *fi)
{
	return (struct sfs_dir_handle *)(uintptr_t)fi->fh;
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Puts NAME after the directory path held in the first DIRLEN bytes of
 * PATH (SFS_PATH_MAX bytes). */
static bool entry_path(char *path, size_t dirlen, const char *name)
{
	return sfs_path_append(path, SFS_PATH_MAX, &dirlen, name, strlen(name)) == 0;
}

/* One entry into a readdir reply at *P (*REM bytes left): its size, which
 * is more than *REM when it did not fit (then nothing was added). */
static size_t add_entry(fuse_req_t req, char *p, size_t rem, const char *name,
			const struct fuse_entry_param *e, off_t next, bool plus)
{
	if (plus)
		return fuse_add_direntry_plus(req, p, rem, name, e, next);
	return fuse_add_direntry(req, p, rem, name, &e->attr, next);
}

/* The offsets of the private directories a SOURCE directory lists after
 * its own entries: the I-th has PRIVATE_OFFSET_BASE + I + 1, so that a
 * listing resumed there goes on with the next. The range sits just below
 * ext4's end-of-directory cookie and far above the small sequential ones
 * of tmpfs, btrfs and xfs, where no host cookie of this directory lands in
 * practice. */
#define PRIVATE_OFFSET_BASE ((off_t)0x7fffffffffff0000)
#define PRIVATE_OFFSET_MAX  0xfffe

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The private directories of PARENT (a directory in SOURCE whose path is
 * the first DIRLEN bytes of PATH) that exist in the store, from the
 * FIRST-th on (in name order), added to the reply at *P until it is full.
 */
static int add_private_entries(fuse_req_t req, struct sfs_node *parent, char *path, size_t dirlen,
			       char **p, size_t *rem, size_t first, bool plus)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_anchor struct sfs_anchor mirror = {0};
	int r = open_mirror(fs, parent, false, &mirror);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	int fd = openat(mirror.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dp) {
		close_keep_errno(fd);
		return -errno;
	}
	/* The names, sorted, so that an index means the same entry in the
	 * next call. Only private directories count: the others are the
	 * way to deeper ones. */
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while (n < PRIVATE_OFFSET_MAX && (de = readdir(dp))) {
		struct sfs_stat st;
		if (is_dot_or_dotdot(de->d_name) || !entry_path(path, dirlen, de->d_name) ||
		    !sfs_guard_private(fs->guard, path) ||
		    sfs_stat_at(dirfd(dp), de->d_name, &st) < 0 || !S_ISDIR(st.st.st_mode))
			continue;
		char **grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			names = grown ? grown : names;
			r = -ENOMEM;
			break;
		}
		names = grown;
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = first; r == 0 && i < n; i++) {
		struct fuse_entry_param e = {0};
		if (!entry_path(path, dirlen, names[i]))
			continue;
		if (plus) {
			if (lookup_at(fs, parent, dirfd(dp), names[i], path, NULL, &e, NULL) < 0)
				continue;
		} else {
			struct sfs_stat st;
			if (sfs_stat_at(dirfd(dp), names[i], &st) < 0)
				continue;
			e.attr.st_ino = st.st.st_ino;
			e.attr.st_mode = S_IFDIR;
		}
		size_t entsize = add_entry(req, *p, *rem, names[i], &e,
					   PRIVATE_OFFSET_BASE + (off_t)i + 1, plus);
		if (entsize > *rem) {
			if (e.ino)
				sfs_table_forget(fs->table, node_of(req, e.ino), 1);
			break;
		}
		*p += entsize;
		*rem -= entsize;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(dp);
	path[dirlen] = '\0';
	return r;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi, bool plus)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_dir_handle *d = dir_handle(fi);
	struct sfs_node *parent = node_of(req, ino);
	struct sfs_node_info pinfo;
	/* Without opendir, each call has a stream of its own; the offsets
	 * are the host's telldir cookies, valid across streams. */
	bool own_stream = !d;
	int opened = own_stream ? dir_handle_open(fs, parent, &d) : 0;
	cleanup_free char *buf = calloc(1, size);
	char *p = buf;
	size_t rem = size;
	char path[SFS_PATH_MAX] = "";
	/* What the policy hides is left out, so every entry is judged by its
	 * path: a directory without one lists nothing. */
	int err = buf ? -sfs_node_relpath(fs->table, parent, NULL, path, sizeof(path)) : ENOMEM;
	size_t dirlen = strlen(path);

	if (!err && opened < 0)
		err = -opened;
	if (err) {
		if (own_stream && opened == 0)
			dir_handle_close(d);
		fuse_reply_err(req, err);
		return;
	}
	sfs_node_info(fs->table, parent, &pinfo);
	/* A SOURCE directory lists its private directories (from the store)
	 * after its own entries; an offset among theirs resumes there. */
	bool privates = !pinfo.in_store;
	bool in_privates = privates && offset > PRIVATE_OFFSET_BASE &&
			   offset <= PRIVATE_OFFSET_BASE + PRIVATE_OFFSET_MAX;
	bool at_end = in_privates;
	if (!in_privates && offset != 0)
		seekdir(d->dp, offset);
	else if (!in_privates && !own_stream)
		rewinddir(d->dp);
	while (!in_privates) {
		errno = 0;
		struct dirent *de = readdir(d->dp);
		if (!de) {
			err = errno;
			at_end = !err;
			break;
		}
		const char *name = de->d_name;
		off_t next = de->d_off;
		struct fuse_entry_param e = {0};
		if (is_dot_or_dotdot(name)) {
			e.attr.st_ino = de->d_ino;
			e.attr.st_mode = (mode_t)de->d_type << 12;
		} else {
			struct view v;
			if (!entry_path(path, dirlen, name)) {
				err = ENAMETOOLONG;
				break;
			}
			v = view_of(fs, path);
			/* Hidden, or SOURCE's copy of a private directory,
			 * which is served from the store instead. */
			int r = v.err ? v.err : v.private && privates ? -ENOENT : 0;
			if (r == 0 && plus)
				r = lookup_at(fs, parent, dirfd(d->dp), name, path, &v, &e, NULL);
			if (r == -ENOENT) /* ... or removed on the host since */
				continue;
			if (r < 0) {
				err = -r;
				break;
			}
			if (!plus) {
				e.attr.st_ino = de->d_ino;
				e.attr.st_mode = (mode_t)de->d_type << 12;
			}
		}
		size_t entsize = add_entry(req, p, rem, name, &e, next, plus);
		if (entsize > rem) {
			if (e.ino)
				sfs_table_forget(fs->table, node_of(req, e.ino), 1);
			break;
		}
		p += entsize;
		rem -= entsize;
	}
	path[dirlen] = '\0';
	if (at_end && privates) {
		int r = add_private_entries(
			req, parent, path, dirlen, &p, &rem,
			in_privates ? (size_t)(offset - PRIVATE_OFFSET_BASE) : 0, plus);
		if (r < 0 && rem == size)
			err = -r;
	}
	if (own_stream)
		dir_handle_close(d);
	/* An error after some entries: deliver those, the next call sees it. */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
}

static void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READDIR);
	do_readdir(req, ino, size, off, fi, false);
}

static void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READDIRPLUS);
	do_readdir(req, ino, size, off, fi, true);
}

static void sfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RELEASEDIR);
	(void)ino;
	if (dir_handle(fi))
		dir_handle_close(dir_handle(fi));
	fuse_reply_err(req, 0);
}

static void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FSYNCDIR);
	struct sfs_dir_handle *d = dir_handle(fi);
	int fd =
		d ? dirfd(d->dp) : open_node(fs_of(req), node_of(req, ino), O_RDONLY | O_DIRECTORY);
	int r = fd < 0 ? fd : ((datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0);

	if (!d && fd >= 0)
		close(fd);
	fuse_reply_err(req, -r);
}

static void sfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, STATFS);
	struct statvfs sv;

	(void)ino;
	if (fstatvfs(sfs_table_rootfd(fs_of(req)->table), &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

static void sfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			  struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FALLOCATE);
	cleanup_io struct io_fd io = {0};
	struct write_identity w;
	struct sfs_node *n = node_of(req, ino);
	int r = check_node(req, n, SFS_OP_WRITE, "fallocate");

	if (r == 0)
		r = io_fd_get(fs_of(req), n, fi, O_WRONLY, &io);
	if (r == 0) {
		write_identity_enter(req, &w);
		r = fallocate(io.fd, mode, offset, length) < 0 ? -errno : 0;
		write_identity_leave(&w);
	}
	fuse_reply_err(req, -r);
}

static void sfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
				struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
				struct fuse_file_info *fi_out, size_t len, int flags)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, COPY_FILE_RANGE);
	cleanup_io struct io_fd in = {0};
	cleanup_io struct io_fd out = {0};
	struct write_identity w;
	int r = check_node(req, node_of(req, ino_out), SFS_OP_WRITE, "copy_file_range");

	if (r == 0)
		r = io_fd_get(fs_of(req), node_of(req, ino_in), fi_in, O_RDONLY, &in);
	if (r == 0)
		r = io_fd_get(fs_of(req), node_of(req, ino_out), fi_out, O_WRONLY, &out);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	write_identity_enter(req, &w);
	ssize_t res = copy_file_range(in.fd, &off_in, out.fd, &off_out, len, (unsigned)flags);
	int e = errno;
	write_identity_leave(&w);
	if (res < 0)
		fuse_reply_err(req, e);
	else
		fuse_reply_write(req, (size_t)res);
}

static void sfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LSEEK);
	cleanup_io struct io_fd io = {0};
	int r = io_fd_get(fs_of(req), node_of(req, ino), fi, O_RDONLY, &io);
	off_t res = r < 0 ? r : lseek(io.fd, off, whence);

	if (r < 0)
		fuse_reply_err(req, -r);
	else if (res < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}

/* Nothing of SOURCE shows through an overlay; a symlink's own xattrs are
 * not reachable race-free (compat.h), so it has none to show. */
static bool xattrs_hidden(struct sfs_fs *fs, struct sfs_node *n)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	return info.overlay_fd >= 0 || info.type == S_IFLNK;
}

static void reply_xattr_bytes(fuse_req_t req, size_t size, const char *buf, ssize_t len)
{
	if (len < 0)
		fuse_reply_err(req, (int)-len);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)len);
	else if ((size_t)len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, buf, (size_t)len);
}

/* Where a node's xattrs are: at its name, or, for a node whose last name
 * went through the mount, on the fd kept for it (*ORPHAN_FD). */
static int xattr_target(struct sfs_fs *fs, struct sfs_node *n, struct sfs_location *loc,
			int *orphan_fd)
{
	struct sfs_node_info info;
	int r = sfs_locate(fs->table, n, loc);

	*orphan_fd = -1;
	if (r == -ENOENT) {
		sfs_node_info(fs->table, n, &info);
		if (info.orphan_fd >= 0) {
			*orphan_fd = info.orphan_fd;
			return 0;
		}
	}
	return r;
}

static void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, GETXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_location struct sfs_location loc = {0};
	cleanup_free char *value = size ? malloc(size) : NULL;

	/* The ownership mark is the daemon's, never the agent's to see. */
	if (xattrs_hidden(fs, n) || sfs_owner_is_mark(name)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	int orphan_fd = -1;
	/* Read with the daemon's credentials: the kernel has checked the
	 * caller's (user.* needs read permission, trusted.* a capability), and
	 * a directory the caller may only search is still readable here. */
	ssize_t r = size && !value ? -ENOMEM : xattr_target(fs, n, &loc, &orphan_fd);
	if (r == 0 && orphan_fd >= 0) {
		r = fgetxattr(orphan_fd, name, value, size);
		r = r < 0 ? -errno : r;
	} else if (r == 0)
		r = sfs_getxattr_at(loc.dir.fd, loc.name, name, value, size);
	reply_xattr_bytes(req, size, value, r);
}

/* Drops from LIST what the caller must not see: the ownership mark, and,
 * for a caller without CAP_SYS_ADMIN (TRUSTED false), the trusted.*
 * names, which it does not see natively either and which the daemon's
 * own capability must not show (fsuid switching keeps CAP_SYS_ADMIN). */
static ssize_t drop_unseen(char *list, ssize_t len, bool trusted)
{
	char *out = list;

	for (char *p = list; p < list + len;) {
		size_t l = strlen(p) + 1;
		if ((trusted || strncmp(p, "trusted.", 8) != 0) && !sfs_owner_is_mark(p)) {
			memmove(out, p, l);
			out += l;
		}
		p += l;
	}
	return out - list;
}

static ssize_t list_xattrs(const struct sfs_location *loc, int orphan_fd, char *buf, size_t size)
{
	if (orphan_fd < 0)
		return sfs_listxattr_at(loc->dir.fd, loc->name, buf, size);
	ssize_t r = flistxattr(orphan_fd, buf, size);
	return r < 0 ? -errno : r;
}

static void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LISTXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_location struct sfs_location loc = {0};
	cleanup_free char *list = NULL;
	ssize_t r;

	if (xattrs_hidden(fs, n)) {
		reply_xattr_bytes(req, size, NULL, 0);
		return;
	}
	int orphan_fd = -1;
	r = xattr_target(fs, n, &loc, &orphan_fd);
	/* The whole list, whatever SIZE asks, so that the filtered length is
	 * what a size query reports. Retried if it grows meanwhile. */
	for (int tries = 0; r == 0 && tries < 4; tries++) {
		r = list_xattrs(&loc, orphan_fd, NULL, 0);
		if (r <= 0)
			break;
		free(list);
		list = malloc((size_t)r);
		if (!list) {
			r = -ENOMEM;
			break;
		}
		r = list_xattrs(&loc, orphan_fd, list, (size_t)r);
		if (r != -ERANGE)
			break;
	}
	if (r > 0)
		r = drop_unseen(list, r, fuse_req_ctx(req)->uid == 0);
	reply_xattr_bytes(req, size, list, r);
}

/* Nobody sets or removes the ownership mark through the mount: that would
 * make a host file the agent's. */
static int refuse_mark(fuse_req_t req, struct sfs_node *n, const char *name, const char *opname)
{
	struct sfs_caller c = caller_of(req);
	char path[SFS_PATH_MAX];

	if (!sfs_owner_is_mark(name))
		return 0;
	int r = sfs_node_relpath(fs_of(req)->table, n, NULL, path, sizeof(path));
	return r < 0 ? r
		     : sfs_guard_deny_builtin(fs_of(req)->guard, &c, path, opname,
					      "the ownership mark is never set or removed through "
					      "the mount");
}

static void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			 size_t size, int flags)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, SETXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	int orphan_fd = -1;
	int r = refuse_mark(req, n, name, "setxattr");

	if (r == 0)
		r = check_node(req, n, SFS_OP_XATTR, "setxattr");
	if (r == 0)
		r = xattr_target(fs, n, &loc, &orphan_fd);
	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0 && orphan_fd >= 0)
		r = fsetxattr(orphan_fd, name, value, size, flags) < 0 ? -errno : 0;
	else if (r == 0)
		r = sfs_setxattr_at(loc.dir.fd, loc.name, name, value, size, flags);
	fuse_reply_err(req, -r);
}

static void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, REMOVEXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	int orphan_fd = -1;
	int r = refuse_mark(req, n, name, "removexattr");

	if (r == 0)
		r = check_node(req, n, SFS_OP_XATTR, "removexattr");
	if (r == 0)
		r = xattr_target(fs, n, &loc, &orphan_fd);
	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0 && orphan_fd >= 0)
		r = fremovexattr(orphan_fd, name) < 0 ? -errno : 0;
	else if (r == 0)
		r = sfs_removexattr_at(loc.dir.fd, loc.name, name);
	fuse_reply_err(req, -r);
}

const struct fuse_lowlevel_ops sfs_ll_ops = {
	.init = sfs_init,
	.lookup = sfs_lookup,
	.forget = sfs_forget,
	.forget_multi = sfs_forget_multi,
	.getattr = sfs_getattr,
	.setattr = sfs_setattr,
	.readlink = sfs_readlink,
	.mknod = sfs_mknod,
	.mkdir = sfs_mkdir,
	.symlink = sfs_symlink,
	.link = sfs_link,
	.unlink = sfs_unlink,
	.rmdir = sfs_rmdir,
	.rename = sfs_rename,
	.open = sfs_open,
	.create = sfs_create,
	.read = sfs_read,
	.write_buf = sfs_write_buf,
	/* No .flush: the kernel then stops sending one on every close(), a
	 * round trip saved per file; host fds are closed at release, and
	 * locks are the kernel's own. */
	.release = sfs_release,
	.fsync = sfs_fsync,
	.opendir = sfs_opendir,
	.readdir = sfs_readdir,
	.readdirplus = sfs_readdirplus,
	.releasedir = sfs_releasedir,
	.fsyncdir = sfs_fsyncdir,
	.statfs = sfs_statfs,
	.fallocate = sfs_fallocate,
	.copy_file_range = sfs_copy_file_range,
	.lseek = sfs_lseek,
	.getxattr = sfs_getxattr,
	.listxattr = sfs_listxattr,
	.setxattr = sfs_setxattr,
	.removexattr = sfs_removexattr,
};
