/* ops.c - see ops.h. The filesystem's lifecycle and the handlers of names
 * and attributes: lookup, getattr, setattr, readlink, mknod, mkdir,
 * symlink, link, unlink, rmdir, rename, statfs. Open files are handle.c's,
 * directories dir.c's, extended attributes xattr.c's; what they all call
 * is request.c's.
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
#include "fs.h"
#include "request.h"
#include "host/compat.h"
#include "host/creds.h"
#include "deferred.h"
#include "guard.h"
#include "inode.h"
#include "owner.h"
#include "stats.h"
#include "host/store.h"
#include "common/path.h"
#include "common/util.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static void host_name_changed(void *ctx, const char *relpath, int parentfd)
{
	sfs_guard_links_host_changed(ctx, relpath, parentfd);
}

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
	if (cfg->watch_host && sfs_watch_new(fs->table, rootfd, &fs->stats, &fs->watch) == 0) {
		sfs_watch_dir(fs->watch, sfs_table_root(fs->table), rootfd, NULL);
		/* The index of SOURCE's symlinks hears of the host's changes. */
		sfs_watch_on_name(fs->watch, host_name_changed, fs->guard);
	}
	sfs_creds_init();
	*out = fs;
	return 0;
}

int sfs_fs_start(struct sfs_fs *fs, struct fuse_session *se)
{
	int r = sfs_guard_start(fs->guard);

	if (r == 0)
		r = sfs_deferred_start(se, &fs->deferred);

	if (r < 0)
		return r;
	return fs->watch ? sfs_watch_start(fs->watch, se) : 0;
}

void sfs_fs_stop(struct sfs_fs *fs)
{
	sfs_watch_free(fs->watch);
	fs->watch = NULL;
	sfs_deferred_stop(fs->deferred);
	fs->deferred = NULL;
}

void sfs_fs_free(struct sfs_fs *fs)
{
	if (!fs)
		return;
	sfs_fs_stop(fs);
	sfs_guard_free(fs->guard);
	sfs_table_free(fs->table);
	sfs_store_free(fs->store);
	free(fs);
}

struct sfs_stats *sfs_fs_stats(struct sfs_fs *fs)
{
	return &fs->stats;
}

/* Replies with an entry the kernel now holds a reference to; if the reply
 * does not reach it (the request was interrupted), the reference is
 * dropped again. */
static void reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e) != 0 && e->ino)
		sfs_table_forget(fs_of(req)->table, fs_node_of(req, e->ino), 1);
}

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
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 17)
	/* Clearing set-id bits and capabilities on a write is the host's
	 * business, where the write lands as the caller: the kernel need not
	 * ask for security.capability before every write. */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
#endif
	conn->time_gran = 1;
}

static void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LOOKUP);
	struct sfs_fs *fs = fs_of(req);
	struct fuse_entry_param e;
	cleanup_anchor struct sfs_anchor dir = {0};
	struct view v = {0};

	char path[PATH_REL_MAX];

	if (strlen(name) > NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	int r = sfs_node_relpath(fs->table, fs_node_of(req, parent), name, path, sizeof(path));
	if (r == 0) {
		v = fs_view_of(fs, path);
		r = v.err;
	}
	if (r == 0)
		r = fs_entry_dir(fs, fs_node_of(req, parent), &v, false, &dir);
	if (r == 0)
		r = fs_lookup_at(fs, fs_node_of(req, parent), dir.fd, name, path, &v, &e, NULL);
	if (r == -ENOENT) {
		/* A negative entry the kernel may cache: long where a host
		 * create would be heard. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = sfs_node_watched(fs->table, fs_node_of(req, parent))
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
	sfs_table_forget(fs_of(req)->table, fs_node_of(req, ino), nlookup);
	fuse_reply_none(req);
}

static void sfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FORGET);
	for (size_t i = 0; i < count; i++)
		sfs_table_forget(fs_of(req)->table, fs_node_of(req, forgets[i].ino),
				 forgets[i].nlookup);
	fuse_reply_none(req);
}

static int stat_node(struct sfs_fs *fs, struct sfs_node *n, struct fuse_file_info *fi,
		     struct sfs_stat *st)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	if (info.overlay_fd >= 0)
		return sfs_stat_fd(info.overlay_fd, st);
	int open_fd = info.type == S_IFREG ? fs_handle_fd_if_open(fi) : 0;
	if (open_fd > 0)
		return sfs_stat_fd(open_fd, st);
	if (info.orphan_fd >= 0)
		return sfs_stat_fd(info.orphan_fd, st);
	cleanup_located struct located at = {0};
	int r = fs_locate(fs, n, LOCATE_CHECK, &at);
	int orphan_fd = fs_orphan_fd(fs, n, r);
	if (orphan_fd >= 0)
		return sfs_stat_fd(orphan_fd, st);
	if (r == 0)
		*st = at.st;
	return r;
}

static void reply_attr(fuse_req_t req, struct sfs_node *n, const struct sfs_stat *st)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	fuse_reply_attr(req, &st->st, fs_timeout_for(fs, &info));
}

static void sfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, GETATTR);
	struct sfs_stat st;
	int r = stat_node(fs_of(req), fs_node_of(req, ino), fi, &st);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_attr(req, fs_node_of(req, ino), &st);
}

/* Everything is located with the daemon's credentials, then changed with
 * the caller's; a new size through IO (check_setattr). */
static int apply_setattr(fuse_req_t req, struct sfs_fs *fs, struct sfs_node *n,
			 const struct stat *attr, int valid, struct fuse_file_info *fi,
			 const struct io_fd *io)
{
	cleanup_located struct located at = {0};
	cleanup_creds struct sfs_creds creds = {0};
	struct sfs_node_info info;
	int r = fs_locate(fs, n, LOCATE_CHECK, &at);
	if (r == 0 && (valid & FUSE_SET_ATTR_MODE))
		fs_keep_before_chmod(fs, n, at.st.st.st_mode, attr->st_mode);
	int cr = sfs_creds_enter(req, &creds);

	if (cr < 0)
		return cr;

	/* An open file whose name is gone (unlinked, renamed on the host)
	 * is still reachable through its handle or kept fd. */
	sfs_node_info(fs->table, n, &info);
	int fd = info.type == S_IFREG ? fs_handle_fd_if_open(fi) : 0;
	if (fd <= 0) {
		int kept = fs_orphan_fd(fs, n, r);
		fd = kept >= 0 ? kept : info.orphan_fd;
	}
	bool by_fd = fd > 0;
	if (r < 0 && !by_fd)
		return r;
	if (valid & FUSE_SET_ATTR_MODE) {
		if (by_fd)
			r = fchmod(fd, attr->st_mode) < 0 ? -errno : 0;
		else
			r = sfs_chmod_at(at.loc.dir.fd, at.loc.name, attr->st_mode);
		if (r < 0)
			return r;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
		if (by_fd)
			r = fchown(fd, uid, gid) < 0 ? -errno : 0;
		else
			r = sfs_chown_at(at.loc.dir.fd, at.loc.name, uid, gid);
		if (r < 0)
			return r;
	}
	if ((valid & FUSE_SET_ATTR_SIZE) && ftruncate(io->fd, attr->st_size) < 0)
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
			r = futimens(fd, tv) < 0 ? -errno : 0;
		else
			r = sfs_utimens_at(at.loc.dir.fd, at.loc.name, tv);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A set-uid or set-gid bit is never set through the mount; one the host
 * set may stay (a chmod that keeps it) or go. */
static int refuse_setid(fuse_req_t req, struct sfs_node *n, const struct stat *attr, int valid,
			struct fuse_file_info *fi)
{
	struct sfs_stat st;

	if (!(valid & FUSE_SET_ATTR_MODE))
		return 0;
	int r = stat_node(fs_of(req), n, fi, &st);
	if (r < 0)
		return r;
	if (!(attr->st_mode & ~st.st.st_mode & (S_ISUID | S_ISGID)))
		return 0;
	struct sfs_caller c = fs_caller_of(req);
	char path[PATH_REL_MAX];
	r = sfs_node_relpath(fs_of(req)->table, n, NULL, path, sizeof(path));
	return r < 0 ? r
		     : sfs_guard_deny_builtin(fs_of(req)->guard, &c, path, "chmod",
					      "set-uid and set-gid bits are never set through the "
					      "mount");
}

/* The guard's checks of a setattr and, for a new size, the fd it goes
 * through (opened now when the kernel opened the file without asking),
 * under one hold of the mutation lock: the file is opened where it was
 * judged. */
static int check_setattr(fuse_req_t req, struct sfs_node *n, int valid, struct fuse_file_info *fi,
			 struct io_fd *io)
{
	struct sfs_fs *fs = fs_of(req);
	int r = 0;

	fs_mutation_lock(fs);
	if (valid & FUSE_SET_ATTR_SIZE)
		r = fs_check_node_locked(req, n, SFS_OP_TRUNCATE, "truncate");
	if (r == 0 && (valid & ~FUSE_SET_ATTR_SIZE))
		r = fs_check_node_locked(req, n, SFS_OP_SETATTR, "setattr");
	if (r == 0 && (valid & FUSE_SET_ATTR_SIZE))
		r = fs_io_fd_get_locked(fs, n, fi, O_WRONLY, io);
	fs_mutation_unlock(fs);
	return r;
}

static void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, SETATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	cleanup_io struct io_fd io = {0};
	struct sfs_stat st;
	int r = refuse_setid(req, n, attr, valid, fi);

	if (r == 0)
		r = check_setattr(req, n, valid, fi, &io);
	if (r == 0)
		r = apply_setattr(req, fs, n, attr, valid, fi, &io);
	fs_io_fd_put(&io);
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
	cleanup_located struct located at = {0};
	char buf[PATH_MAX + 1];
	int r = fs_locate(fs, fs_node_of(req, ino), LOCATE_NAME, &at);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	ssize_t len = readlinkat(at.loc.dir.fd, at.loc.name, buf, sizeof(buf));
	if (len < 0)
		fuse_reply_err(req, errno == ENOENT ? ESTALE : errno);
	else if ((size_t)len >= sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[len] = '\0';
		fuse_reply_readlink(req, buf);
	}
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
	bool mark = r == 0 && made && !ch->in_store && !sfs_verdict_writable(&ch->v);
	struct view v = r == 0 ? fs_view_of_verdict(fs, &ch->v) : (struct view){0};

	if (mark) {
		sfs_creds_leave(&ch->creds);
		if (sfs_stat_at(ch->dir.fd, name, &st) == 0)
			sfs_guard_mark_owned(fs->guard, -1, ch->dir.fd, name, &st, true);
	}
	if (r == 0)
		r = fs_lookup_at(fs, fs_node_of(req, parent), ch->dir.fd, name, ch->path, &v, &e,
				 NULL);
	if (r == 0 && mark)
		sfs_node_set_owned(fs->table, fs_node_of(req, e.ino), true);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_entry(req, &e);
}

static void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, MKNOD);
	struct sfs_caller c = fs_caller_of(req);
	cleanup_change struct change ch = {0};
	struct sfs_subject who = fs_subject_new();
	/* A regular file is a create; FIFOs and sockets need a writable
	 * name (a host tool reading one would hang). */
	enum sfs_op op = S_ISREG(mode) ? SFS_OP_CREATE : SFS_OP_MKNOD;

	fs_change_lock(req, &ch, false);
	int r = fs_change_locate(req, parent, name, op, &who, false, &ch);
	/* Device nodes are never created, whatever the policy says. */
	if (r == 0 && !S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode))
		r = sfs_guard_deny_judged(fs_of(req)->guard, &c, &ch.v, "mknod",
					  "device nodes are never created through the mount");
	if (r == 0)
		r = fs_refuse_private_root(req, &ch, "mknod");
	if (r == 0)
		r = fs_change_conclude(req, &ch, "mknod", &who);
	if (r == 0)
		r = sfs_creds_enter(req, &ch.creds);
	if (r == 0 && mknodat(ch.dir.fd, name, fs_new_mode(req, ch.dir.fd, mode), rdev) < 0)
		r = -errno;
	reply_new_entry(req, parent, &ch, name, r, true);
}

static void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, MKDIR);
	cleanup_change struct change ch = {0};
	struct sfs_subject who = fs_subject_new();
	int r = fs_change_begin(req, parent, name, SFS_OP_MKDIR, "mkdir", true, &who, &ch);

	if (r == 0 && mkdirat(ch.dir.fd, name, fs_new_mode(req, ch.dir.fd, mode)) < 0)
		r = -errno;
	reply_new_entry(req, parent, &ch, name, r, true);
}

static void sfs_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, SYMLINK);
	struct sfs_caller c = fs_caller_of(req);
	cleanup_change struct change ch = {0};

	/* Exclusive: the components of the target asked about must not turn
	 * into symlinks (rmdir, then symlink) before this one is made. */
	fs_change_lock(req, &ch, true);
	int r = fs_change_locate(req, parent, name, SFS_OP_SYMLINK, NULL, false, &ch);
	if (r == 0)
		r = fs_refuse_private_root(req, &ch, "symlink");
	if (r == 0)
		r = sfs_guard_symlink_judged(fs_of(req)->guard, &c, &ch.v, target);
	/* And the links that would resolve through it once it is there. */
	struct sfs_link_change lc = {SFS_LINK_SET, ch.path, NULL, target};
	bool checked = false;
	if (r == 0 && !ch.in_store)
		checked = (r = sfs_guard_links_check(fs_of(req)->guard, &c, &lc, "symlink")) == 0;
	if (r == 0)
		r = sfs_creds_enter(req, &ch.creds);
	if (r == 0 && symlinkat(target, ch.dir.fd, name) < 0)
		r = -errno;
	if (checked)
		sfs_guard_links_done(fs_of(req)->guard, &lc, r == 0);
	reply_new_entry(req, parent, &ch, name, r, true);
}

static void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LINK);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	cleanup_change struct change ch = {0};
	cleanup_located struct located src = {0};
	struct sfs_caller c = fs_caller_of(req);
	struct sfs_subject who = SFS_SUBJECT_NODE(n);
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	fs_change_lock(req, &ch, false);
	/* A second name for a protected inode would make it writable. */
	int r = fs_check_node_locked(req, n, SFS_OP_LINK_SOURCE, "link");
	if (r == 0)
		r = fs_change_locate(req, newparent, newname, SFS_OP_LINK_TARGET, &who, false, &ch);
	/* The store and SOURCE are two trees. */
	if (r == 0 && ch.in_store != info.in_store)
		r = -EXDEV;
	if (r == 0)
		r = fs_refuse_private_root(req, &ch, "link");
	if (r == 0)
		r = fs_change_conclude(req, &ch, "link", &who);
	if (r == 0 && info.type == S_IFLNK)
		r = sfs_guard_symlink_name_judged(fs->guard, &c, &ch.v, "link");
	if (r == 0)
		r = fs_locate(fs, n, LOCATE_CHECK, &src);
	/* A second name for a symlink is a symlink made there. */
	bool is_link = r == 0 && S_ISLNK(src.st.st.st_mode);
	if (is_link)
		r = sfs_guard_symlink_arrives(fs->guard, &c, src.loc.dir.fd, src.loc.name, ch.path,
					      "link");
	char target[PATH_MAX];
	struct sfs_link_change lc = {SFS_LINK_SET, ch.path, NULL, target};
	bool relink = r == 0 && is_link && !ch.in_store;
	if (relink) {
		ssize_t tl = readlinkat(src.loc.dir.fd, src.loc.name, target, sizeof(target) - 1);
		r = tl < 0 ? -errno : 0;
		target[tl < 0 ? 0 : tl] = '\0';
	}
	bool checked = false;
	if (r == 0 && relink)
		checked = (r = sfs_guard_links_check(fs->guard, &c, &lc, "link")) == 0;
	if (r == 0)
		r = sfs_creds_enter(req, &ch.creds);
	if (r == 0 && linkat(src.loc.dir.fd, src.loc.name, ch.dir.fd, newname, 0) < 0)
		r = -errno;
	if (checked)
		sfs_guard_links_done(fs->guard, &lc, r == 0);
	reply_new_entry(req, newparent, &ch, newname, r, false);
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
	int r = fs_change_begin(req, parent, name, is_dir ? SFS_OP_RMDIR : SFS_OP_UNLINK,
				is_dir ? "rmdir" : "unlink", false, NULL, &ch);

	if (r == 0) {
		struct sfs_node *gone = NULL;
		bool known = sfs_stat_at(ch.dir.fd, name, &st) == 0;
		/* The links that resolve through a symlink removed fall back
		 * to what is under its name. */
		struct sfs_link_change lc = {SFS_LINK_REMOVE, ch.path, NULL, NULL};
		bool unlink_link = known && S_ISLNK(st.st.st_mode) && !ch.in_store;
		if (unlink_link) {
			struct sfs_caller c = fs_caller_of(req);
			r = sfs_guard_links_check(fs->guard, &c, &lc, "unlink");
			if (r < 0) {
				fuse_reply_err(req, -r);
				return;
			}
		}
		int kept = known ? fs_keep_before_removal(fs, ch.dir.fd, name, &st, &gone) : -1;
		if (unlinkat(ch.dir.fd, name, is_dir ? AT_REMOVEDIR : 0) < 0) {
			r = -errno;
			if (unlink_link)
				sfs_guard_links_done(fs->guard, &lc, false);
		} else {
			if (unlink_link)
				sfs_guard_links_done(fs->guard, &lc, true);
			sfs_table_note_unlink(fs->table, fs_node_of(req, parent), name,
					      known ? &st : NULL);
			if (known)
				name_removed(fs, ch.in_store, &st);
		}
		fs_keep_after_removal(fs, gone, r == 0 ? kept : (close_keep_errno(kept), -1));
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

/* Whether a rename can redirect SOURCE's symlinks, and how (*LC): a
 * symlink or a directory moves, or a symlink is replaced or exchanged. */
static bool rename_redirects(const struct change *from, const struct change *to,
			     const struct sfs_stat *old, const struct sfs_stat *new, bool exchange,
			     unsigned after, struct sfs_link_change *lc)
{
	bool old_counts = old && (S_ISLNK(old->st.st_mode) || S_ISDIR(old->st.st_mode));
	bool new_counts = new && (S_ISLNK(new->st.st_mode) || S_ISDIR(new->st.st_mode));

	if (from->in_store || (!old_counts && !new_counts))
		return false;
	if (after & SFS_INTO_STORE) {
		/* It leaves SOURCE: removed, as the host sees it. */
		*lc = (struct sfs_link_change){SFS_LINK_REMOVE, from->path, NULL, NULL};
		return old_counts;
	}
	if (to->in_store)
		return false;
	*lc = (struct sfs_link_change){exchange ? SFS_LINK_EXCHANGE : SFS_LINK_MOVE, from->path,
				       to->path, NULL};
	return true;
}

static void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		       const char *newname, unsigned int flags)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RENAME);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_caller c = fs_caller_of(req);
	cleanup_change struct change from = {0};
	cleanup_change struct change to = {0};
	struct sfs_stat old_st, new_st;
	bool exchange = flags & RENAME_EXCHANGE;
	bool old_known = false, new_known = false, lc_needed = false, lc_checked = false;
	struct sfs_link_change lc = {0};
	int r = 0;

	/* RENAME_WHITEOUT would make a device node. */
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		r = -EINVAL;
	/* Exclusive: a directory's subtree is checked and moved while
	 * nothing else can add a name anywhere, and no other change can have
	 * judged a path this rename is about to alter. */
	fs_change_lock(req, &to, true);
	/* Each name's class, judged once: which ops the rename asks about
	 * them depends on what is there, which the class says where to find. */
	if (r == 0)
		r = fs_change_locate(req, parent, name, SFS_OP_LOOKUP, NULL, false, &from);
	if (r == 0)
		r = fs_change_locate(req, newparent, newname, SFS_OP_LOOKUP, NULL, true, &to);
	unsigned after = 0;
	if (r == 0) {
		old_known = sfs_stat_at(from.dir.fd, name, &old_st) == 0;
		new_known = sfs_stat_at(to.dir.fd, newname, &new_st) == 0;
		struct sfs_subject old =
			SFS_SUBJECT_AT(from.dir.fd, name, old_known ? &old_st : NULL);
		struct sfs_subject new =
			SFS_SUBJECT_AT(to.dir.fd, newname, new_known ? &new_st : NULL);
		r = sfs_guard_rename_judged(fs->guard, &c, &from.v, &old, &to.v, &new, flags,
					    &after);
		lc_needed = rename_redirects(&from, &to, old_known ? &old_st : NULL,
					     new_known ? &new_st : NULL, exchange, after, &lc);
		if (r == 0 && lc_needed)
			lc_checked = (r = sfs_guard_links_check(fs->guard, &c, &lc, "rename")) == 0;
		/* Only a directory may land at a private directory's name. */
		if (r == 0 && old_known && !S_ISDIR(old_st.st.st_mode))
			r = fs_refuse_private_root(req, &to, "rename");
		if (r == 0 && exchange && new_known && !S_ISDIR(new_st.st.st_mode))
			r = fs_refuse_private_root(req, &from, "rename");
	}
	if (r == 0)
		r = sfs_creds_enter(req, &to.creds);
	struct sfs_node *replaced = NULL;
	int kept = r == 0 && new_known && !exchange
			   ? fs_keep_before_removal(fs, to.dir.fd, newname, &new_st, &replaced)
			   : -1;
	if (r == 0)
		r = sfs_rename_at(from.dir.fd, name, to.dir.fd, newname, flags);
	if (lc_checked)
		sfs_guard_links_done(fs->guard, &lc, r == 0);
	if (r == 0 && (after & SFS_INTO_STORE)) {
		/* What the kernel knows of it was in SOURCE: it looks again
		 * (ESTALE) and finds it in the store. */
		sfs_table_note_unlink(fs->table, fs_node_of(req, newparent), newname,
				      new_known ? &new_st : NULL);
		sfs_table_note_moved_away(fs->table, fs_node_of(req, parent), name,
					  old_known ? &old_st : NULL, fs_node_of(req, newparent),
					  newname);
		name_removed(fs, false, &old_st);
	} else if (r == 0) {
		sfs_table_note_rename(fs->table, fs_node_of(req, parent), name,
				      old_known ? &old_st : NULL, fs_node_of(req, newparent),
				      newname, new_known ? &new_st : NULL, exchange);
		if (new_known && !exchange)
			name_removed(fs, to.in_store, &new_st);
		sfs_creds_leave(&to.creds);
		if (after & SFS_MARK_OLD)
			mark_moved(fs, to.dir.fd, newname, &old_st);
		if (after & SFS_MARK_NEW)
			mark_moved(fs, from.dir.fd, name, &new_st);
	}
	fs_keep_after_removal(fs, replaced, r == 0 ? kept : (close_keep_errno(kept), -1));
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
