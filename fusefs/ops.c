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
 *    credentials (creds.h) and first asks may_change(), the one place the
 *    policy is consulted. */

#include "ops.h"
#include "compat.h"
#include "creds.h"
#include "inode.h"
#include "util.h"
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	struct sfs_watch *watch; /* NULL when host changes cannot be heard */
	double timeout;		 /* for what the host may change unheard */
	double watched_timeout;	 /* for what host notifications cover */
};

struct sfs_dir_handle {
	DIR *dp;
	off_t offset;
	struct dirent *entry;
};

int sfs_fs_new(int rootfd, const struct sfs_fs_config *cfg, struct sfs_fs **out)
{
	struct sfs_stat st;
	struct sfs_fs *fs;
	int r = sfs_stat_fd(rootfd, &st);

	if (r < 0)
		return r;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	r = sfs_table_new(rootfd, &st, cfg->anchor_limit, &fs->table);
	if (r < 0) {
		free(fs);
		return r;
	}
	fs->timeout = cfg->cache_timeout;
	fs->watched_timeout = cfg->watched_timeout;
	if (cfg->watch_host && sfs_watch_new(fs->table, rootfd, &fs->watch) == 0)
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
	sfs_table_free(fs->table);
	free(fs);
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

/* What kind of change an operation makes to a name, for the policy. */
enum change {
	CHANGE_CREATE,
	CHANGE_MKDIR,
	CHANGE_MKNOD,
	CHANGE_SYMLINK,
	CHANGE_LINK,
	CHANGE_WRITE,
	CHANGE_SETATTR,
	CHANGE_XATTR,
	CHANGE_UNLINK,
	CHANGE_RMDIR,
	CHANGE_RENAME_FROM,
	CHANGE_RENAME_TO,
};

/* The single place where the filesystem asks whether NAME in PARENT (or
 * the node itself when NAME is NULL) may undergo CHANGE. Returns 0 or a
 * negative errno (EROFS for a denial). The policy engine plugs in here;
 * until then everything is allowed. */
static int may_change(fuse_req_t req, struct sfs_node *parent, const char *name, enum change change)
{
	(void)req;
	(void)parent;
	(void)name;
	(void)change;
	return 0;
}

/* Looks NAME up in DIRFD (which is PARENT's directory) and makes the kernel
 * a new reference to it. A directory seen for the first time is watched. */
static int lookup_at(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
		     struct fuse_entry_param *e)
{
	struct sfs_node_info info;
	struct sfs_stat st;
	int r = sfs_stat_at(dirfd, name, &st);

	if (r < 0)
		return r;
	struct sfs_node *n = sfs_table_intern(fs->table, parent, name, &st);
	if (!n)
		return -ENOMEM;
	sfs_node_info(fs->table, n, &info);
	if (fs->watch && info.type == S_IFDIR && !sfs_node_watched(fs->table, n))
		sfs_watch_dir(fs->watch, n, dirfd, name);
	memset(e, 0, sizeof(*e));
	e->ino = sfs_node_id(n);
	e->generation = info.generation;
	e->attr = st.st;
	e->attr_timeout = e->entry_timeout = timeout_for(fs, &info);
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

/* Opens N itself with FLAGS (never following a symlink) and checks that
 * what was opened is N. */
static int open_node(struct sfs_fs *fs, struct sfs_node *n, int flags)
{
	cleanup_location struct sfs_location loc = {0};
	struct sfs_stat st;
	int r = sfs_locate(fs->table, n, &loc);

	if (r < 0)
		return r;
	cleanup_fd int fd = openat(loc.dir.fd, loc.name, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	r = sfs_stat_fd(fd, &st);
	if (r < 0)
		return r;
	if (!sfs_node_matches(fs->table, n, &st))
		return -ESTALE;
	return sfs_steal_fd(&fd);
}

static void sfs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
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
	struct sfs_fs *fs = fs_of(req);
	struct fuse_entry_param e;
	cleanup_anchor struct sfs_anchor dir = {0};

	if (strlen(name) > NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	int r = sfs_anchor_get(fs->table, node_of(req, parent), &dir);
	if (r == 0)
		r = lookup_at(fs, node_of(req, parent), dir.fd, name, &e);
	if (r == -ENOENT) {
		/* A negative entry the kernel may cache: long where a host
		 * create would be heard. */
		struct sfs_node_info info;
		sfs_node_info(fs->table, node_of(req, parent), &info);
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
	sfs_table_forget(fs_of(req)->table, node_of(req, ino), nlookup);
	fuse_reply_none(req);
}

static void sfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		sfs_table_forget(fs_of(req)->table, node_of(req, forgets[i].ino),
				 forgets[i].nlookup);
	fuse_reply_none(req);
}

static bool is_regular_node(struct sfs_fs *fs, struct sfs_node *n)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	return info.type == S_IFREG;
}

static int stat_node(struct sfs_fs *fs, struct sfs_node *n, struct fuse_file_info *fi,
		     struct sfs_stat *st)
{
	if (fi && is_regular_node(fs, n))
		return sfs_stat_fd((int)fi->fh, st);
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
	struct sfs_stat st;
	int r = stat_node(fs_of(req), node_of(req, ino), fi, &st);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_attr(req, node_of(req, ino), &st);
}

static int truncate_node(struct sfs_fs *fs, struct sfs_node *n, struct fuse_file_info *fi,
			 off_t size)
{
	if (fi)
		return ftruncate((int)fi->fh, size) < 0 ? -errno : 0;
	cleanup_fd int fd = open_node(fs, n, O_WRONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	return ftruncate(fd, size) < 0 ? -errno : 0;
}

static int apply_setattr(struct sfs_fs *fs, struct sfs_node *n, const struct stat *attr, int valid,
			 struct fuse_file_info *fi)
{
	cleanup_location struct sfs_location loc = {0};
	struct sfs_stat st;
	bool by_fd = fi && is_regular_node(fs, n);
	int r = locate_verified(fs, n, &loc, &st);

	/* An open file whose name is gone (unlinked, renamed on the host)
	 * is still reachable through its fd. */
	if (r < 0 && !by_fd)
		return r;
	if (valid & FUSE_SET_ATTR_MODE) {
		if (by_fd)
			r = fchmod((int)fi->fh, attr->st_mode) < 0 ? -errno : 0;
		else
			r = sfs_chmod_at(loc.dir.fd, loc.name, attr->st_mode);
		if (r < 0)
			return r;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
		if (by_fd)
			r = fchown((int)fi->fh, uid, gid);
		else
			r = fchownat(loc.dir.fd, loc.name, uid, gid, AT_SYMLINK_NOFOLLOW);
		if (r < 0)
			return -errno;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		r = truncate_node(fs, n, by_fd ? fi : NULL, attr->st_size);
		if (r < 0)
			return r;
	}
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
			r = futimens((int)fi->fh, tv);
		else
			r = utimensat(loc.dir.fd, loc.name, tv, AT_SYMLINK_NOFOLLOW);
		if (r < 0)
			return -errno;
	}
	return 0;
}

static void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_creds struct sfs_creds creds = {0};
	struct sfs_stat st;
	int r = may_change(req, n, NULL, CHANGE_SETATTR);

	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0)
		r = apply_setattr(fs, n, attr, valid, fi);
	if (r == 0)
		r = stat_node(fs, n, fi, &st);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_attr(req, n, &st);
}

static void sfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
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

/* The tail shared by everything that makes a new name: look it up, hand the
 * kernel its entry. */
static void reply_new_entry(fuse_req_t req, struct sfs_node *parent, int dirfd, const char *name,
			    int r)
{
	struct fuse_entry_param e;

	if (r == 0)
		r = lookup_at(fs_of(req), parent, dirfd, name, &e);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_entry(req, &e);
}

/* Prepares a change to NAME in PARENT: asks the policy, takes on the
 * caller's identity, pins PARENT's fd. */
static int begin_change(fuse_req_t req, fuse_ino_t parent, const char *name, enum change change,
			struct sfs_creds *creds, struct sfs_anchor *dir)
{
	struct sfs_fs *fs = fs_of(req);
	int r;

	dir->node = NULL;
	dir->fd = -1;
	creds->switched = false;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	r = may_change(req, node_of(req, parent), name, change);
	if (r == 0)
		r = sfs_anchor_get(fs->table, node_of(req, parent), dir);
	if (r == 0)
		r = sfs_creds_enter(req, creds);
	return r;
}

static void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor dir = {0};
	int r;

	/* Device nodes are never created, whatever the policy says. */
	if (!S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode))
		r = -EROFS;
	else
		r = begin_change(req, parent, name, CHANGE_MKNOD, &creds, &dir);
	if (r == 0 && mknodat(dir.fd, name, mode, rdev) < 0)
		r = -errno;
	reply_new_entry(req, node_of(req, parent), dir.fd, name, r);
}

static void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor dir = {0};
	int r = begin_change(req, parent, name, CHANGE_MKDIR, &creds, &dir);

	if (r == 0 && mkdirat(dir.fd, name, mode) < 0)
		r = -errno;
	reply_new_entry(req, node_of(req, parent), dir.fd, name, r);
}

static void sfs_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor dir = {0};
	int r = begin_change(req, parent, name, CHANGE_SYMLINK, &creds, &dir);

	if (r == 0 && symlinkat(target, dir.fd, name) < 0)
		r = -errno;
	reply_new_entry(req, node_of(req, parent), dir.fd, name, r);
}

static void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor dir = {0};
	cleanup_location struct sfs_location src = {0};
	struct sfs_stat st;
	int r = may_change(req, n, NULL, CHANGE_LINK);

	if (r == 0)
		r = begin_change(req, newparent, newname, CHANGE_CREATE, &creds, &dir);
	if (r == 0)
		r = locate_verified(fs, n, &src, &st);
	if (r == 0 && linkat(src.dir.fd, src.name, dir.fd, newname, 0) < 0)
		r = -errno;
	reply_new_entry(req, node_of(req, newparent), dir.fd, newname, r);
}

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, bool is_dir)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor dir = {0};
	struct sfs_stat st;
	int r = begin_change(req, parent, name, is_dir ? CHANGE_RMDIR : CHANGE_UNLINK, &creds,
			     &dir);

	if (r == 0) {
		bool known = sfs_stat_at(dir.fd, name, &st) == 0;
		if (unlinkat(dir.fd, name, is_dir ? AT_REMOVEDIR : 0) < 0)
			r = -errno;
		else
			sfs_table_note_unlink(fs->table, node_of(req, parent), name,
					      known ? &st : NULL);
	}
	fuse_reply_err(req, -r);
}

static void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, false);
}

static void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, true);
}

static void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		       const char *newname, unsigned int flags)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor olddir = {0};
	cleanup_anchor struct sfs_anchor newdir = {0};
	struct sfs_stat old_st, new_st;
	bool exchange = flags & RENAME_EXCHANGE;
	int r;

	/* RENAME_WHITEOUT would make a device node. */
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		r = -EINVAL;
	else
		r = may_change(req, node_of(req, parent), name, CHANGE_RENAME_FROM);
	if (r == 0)
		r = begin_change(req, newparent, newname, CHANGE_RENAME_TO, &creds, &newdir);
	if (r == 0 && strlen(name) > NAME_MAX)
		r = -ENAMETOOLONG;
	if (r == 0)
		r = sfs_anchor_get(fs->table, node_of(req, parent), &olddir);
	if (r == 0) {
		bool old_known = sfs_stat_at(olddir.fd, name, &old_st) == 0;
		bool new_known = sfs_stat_at(newdir.fd, newname, &new_st) == 0;
		r = sfs_rename_at(olddir.fd, name, newdir.fd, newname, flags);
		if (r == 0)
			sfs_table_note_rename(fs->table, node_of(req, parent), name,
					      old_known ? &old_st : NULL, node_of(req, newparent),
					      newname, new_known ? &new_st : NULL, exchange);
	}
	fuse_reply_err(req, -r);
}

/* Host open flags for a kernel open request. O_DIRECT is dropped: the
 * daemon's buffers are not aligned for it and the kernel page cache is
 * bypassed by the kernel anyway when it matters. */
static int host_open_flags(int flags)
{
	return (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT)) | O_NOFOLLOW | O_CLOEXEC;
}

static bool opens_for_change(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
}

static void sfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_creds struct sfs_creds creds = {0};
	int r = opens_for_change(fi->flags) ? may_change(req, n, NULL, CHANGE_WRITE) : 0;

	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0)
		r = open_node(fs, n, host_open_flags(fi->flags));
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uint64_t)r;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) != 0)
		close(r);
}

static void sfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_anchor struct sfs_anchor dir = {0};
	struct fuse_entry_param e;
	int fd = -1;
	int r = begin_change(req, parent, name, CHANGE_CREATE, &creds, &dir);

	if (r == 0) {
		fd = openat(dir.fd, name,
			    host_open_flags(fi->flags) | O_CREAT | (fi->flags & O_EXCL), mode);
		if (fd < 0)
			r = -errno;
	}
	if (r == 0)
		r = lookup_at(fs, node_of(req, parent), dir.fd, name, &e);
	if (r < 0) {
		sfs_close_keep_errno(fd);
		fuse_reply_err(req, -r);
		return;
	}
	fi->fh = (uint64_t)fd;
	fi->keep_cache = 1;
	if (fuse_reply_create(req, &e, fi) != 0) {
		close(fd);
		sfs_table_forget(fs->table, node_of(req, e.ino), 1);
	}
}

static void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	(void)ino;
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = (int)fi->fh;
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
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	struct write_identity w;
	int r = may_change(req, node_of(req, ino), NULL, CHANGE_WRITE);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = (int)fi->fh;
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
	(void)ino;
	close((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void sfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
	fuse_reply_err(req, r < 0 ? errno : 0);
}

static void sfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_creds struct sfs_creds creds = {0};
	struct sfs_dir_handle *d = calloc(1, sizeof(*d));
	int r = d ? sfs_creds_enter(req, &creds) : -ENOMEM;
	int fd = r == 0 ? open_node(fs, node_of(req, ino), O_RDONLY | O_DIRECTORY) : r;

	if (fd >= 0) {
		d->dp = fdopendir(fd);
		if (!d->dp) {
			sfs_close_keep_errno(fd);
			fd = -errno;
		}
	}
	if (fd < 0) {
		free(d);
		fuse_reply_err(req, -fd);
		return;
	}
	fi->fh = (uintptr_t)d;
	/* The kernel may keep the listing until the directory's mtime
	 * changes (auto_inval_data), so host changes still show. */
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) != 0) {
		closedir(d->dp);
		free(d);
	}
}

static struct sfs_dir_handle *dir_handle(struct fuse_file_info *fi)
{
	return (struct sfs_dir_handle *)(uintptr_t)fi->fh;
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi, bool plus)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_dir_handle *d = dir_handle(fi);
	struct sfs_node *parent = node_of(req, ino);
	cleanup_free char *buf = calloc(1, size);
	char *p = buf;
	size_t rem = size;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (offset != d->offset) {
		seekdir(d->dp, offset);
		d->entry = NULL;
		d->offset = offset;
	}
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		const char *name = d->entry->d_name;
		off_t next = d->entry->d_off;
		size_t entsize;
		if (plus) {
			struct fuse_entry_param e = {0};
			if (is_dot_or_dotdot(name)) {
				e.attr.st_ino = d->entry->d_ino;
				e.attr.st_mode = (mode_t)d->entry->d_type << 12;
			} else {
				int r = lookup_at(fs, parent, dirfd(d->dp), name, &e);
				if (r == -ENOENT) {
					/* Removed on the host since it was listed. */
					d->entry = NULL;
					d->offset = next;
					continue;
				}
				if (r < 0) {
					err = -r;
					break;
				}
			}
			entsize = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (entsize > rem) {
				if (e.ino)
					sfs_table_forget(fs->table, node_of(req, e.ino), 1);
				break;
			}
		} else {
			struct stat st = {
				.st_ino = d->entry->d_ino,
				.st_mode = (mode_t)d->entry->d_type << 12,
			};
			entsize = fuse_add_direntry(req, p, rem, name, &st, next);
			if (entsize > rem)
				break;
		}
		p += entsize;
		rem -= entsize;
		d->entry = NULL;
		d->offset = next;
	}
	/* An error after some entries: deliver those, the next call sees it. */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
}

static void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void sfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs_dir_handle *d = dir_handle(fi);

	(void)ino;
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

static void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	int fd = dirfd(dir_handle(fi)->dp);

	(void)ino;
	int r = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, r < 0 ? errno : 0);
}

static void sfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
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
	struct write_identity w;
	int r = may_change(req, node_of(req, ino), NULL, CHANGE_WRITE);

	if (r == 0) {
		write_identity_enter(req, &w);
		r = fallocate((int)fi->fh, mode, offset, length) < 0 ? -errno : 0;
		write_identity_leave(&w);
	}
	fuse_reply_err(req, -r);
}

static void sfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
				struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
				struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct write_identity w;
	int r = may_change(req, node_of(req, ino_out), NULL, CHANGE_WRITE);

	(void)ino_in;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	write_identity_enter(req, &w);
	ssize_t res = copy_file_range((int)fi_in->fh, &off_in, (int)fi_out->fh, &off_out, len,
				      (unsigned)flags);
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
	(void)ino;
	off_t res = lseek((int)fi->fh, off, whence);
	if (res < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}

static void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_free char *value = size ? malloc(size) : NULL;
	int r = size && !value ? -ENOMEM : sfs_locate(fs->table, node_of(req, ino), &loc);
	ssize_t res = r;

	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0)
		res = sfs_getxattr_at(loc.dir.fd, loc.name, name, value, size);
	else
		res = r;
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)res);
	else
		fuse_reply_buf(req, value, (size_t)res);
}

static void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct sfs_fs *fs = fs_of(req);
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	cleanup_free char *list = size ? malloc(size) : NULL;
	int r = size && !list ? -ENOMEM : sfs_locate(fs->table, node_of(req, ino), &loc);
	ssize_t res;

	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	res = r == 0 ? sfs_listxattr_at(loc.dir.fd, loc.name, list, size) : r;
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)res);
	else
		fuse_reply_buf(req, list, (size_t)res);
}

static void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			 size_t size, int flags)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	int r = may_change(req, n, NULL, CHANGE_XATTR);

	if (r == 0)
		r = sfs_locate(fs->table, n, &loc);
	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0)
		r = sfs_setxattr_at(loc.dir.fd, loc.name, name, value, size, flags);
	fuse_reply_err(req, -r);
}

static void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = node_of(req, ino);
	cleanup_location struct sfs_location loc = {0};
	cleanup_creds struct sfs_creds creds = {0};
	int r = may_change(req, n, NULL, CHANGE_XATTR);

	if (r == 0)
		r = sfs_locate(fs->table, n, &loc);
	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0)
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
