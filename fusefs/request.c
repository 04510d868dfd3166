/* request.c - see request.h. */
#include "request.h"
#include "host/compat.h"
#include "host/creds.h"
#include "host/store.h"
#include "guard.h"
#include "inode.h"
#include "common/util.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reaching a node ---------------------------------------------------- */

/* How many times a node is located again when its name led nowhere or
 * elsewhere: a rename through the mount may have moved it between the
 * locating and the call (the kernel retries an ESTALE path walk once, and
 * a read or getattr not at all). */
#define LOCATE_TRIES 4

static int locate_checked_once(struct sfs_fs *fs, struct sfs_node *n, struct located *at)
{
	int r = sfs_locate(fs->table, n, &at->loc);

	return r < 0 ? r : sfs_node_found(fs->table, n, &at->loc, -1, &at->st);
}

int fs_locate(struct sfs_fs *fs, struct sfs_node *n, enum locate_how how, struct located *at)
{
	if (how == LOCATE_NAME)
		return sfs_locate(fs->table, n, &at->loc);
	int r = locate_checked_once(fs, n, at);
	for (int i = 1; r == -ESTALE && i < LOCATE_TRIES; i++) {
		fs_located_put(at);
		r = locate_checked_once(fs, n, at);
	}
	return r;
}

/* The O_TRUNC of an open of N, once FD (opened without it) is known to be
 * N. O_RDONLY|O_TRUNC truncates too (Linux): through a write fd of its
 * own, checked the same way. */
static int truncate_opened(struct sfs_fs *fs, struct sfs_node *n, const struct located *at, int fd,
			   int flags)
{
	struct sfs_stat st;

	if ((flags & O_ACCMODE) != O_RDONLY)
		return ftruncate(fd, 0) < 0 ? -errno : 0;
	cleanup_fd int wfd = openat(at->loc.dir.fd, at->loc.name,
				    O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (wfd < 0)
		return -errno;
	int r = sfs_node_found(fs->table, n, NULL, wfd, &st);
	if (r < 0)
		return r;
	return ftruncate(wfd, 0) < 0 ? -errno : 0;
}

/* fs_open_node with the mutation lock held. */
static int open_node_locked(fuse_req_t as_caller, struct sfs_fs *fs, struct sfs_node *n, int flags)
{
	cleanup_located struct located at = {0};
	cleanup_creds struct sfs_creds creds = {0};

	sfs_node_removal_wait(fs->table, n);
	int r = fs_locate(fs, n, LOCATE_NAME, &at);

	if (r == 0 && as_caller)
		r = sfs_creds_enter(as_caller, &creds);
	if (r < 0)
		return r;
	/* O_TRUNC waits until the file opened is known to be N: the name may
	 * lead to another file by now (the user replaced it on the host),
	 * which nobody judged. */
	cleanup_fd int fd =
		openat(at.loc.dir.fd, at.loc.name, (flags & ~O_TRUNC) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	r = sfs_node_found(fs->table, n, NULL, fd, &at.st);
	if (r < 0)
		return r;
	if ((flags & O_TRUNC) && S_ISREG(at.st.st.st_mode) &&
	    (r = truncate_opened(fs, n, &at, fd, flags)) < 0)
		return r;
	return steal_fd(&fd);
}

/* Under the mutation lock, shared: a rename through the mount cannot move
 * N between its locating and its open (which would answer ESTALE, and the
 * kernel retries a path walk only once; a read not at all). The way there
 * is resolved with the daemon's own credentials (an anchor on the portable
 * flavour is a directory opened for reading, which a caller with search
 * permission only could not open). */
int fs_open_node(struct sfs_fs *fs, struct sfs_node *n, int flags, fuse_req_t as_caller)
{
	fs_mutation_lock(fs);
	int fd = open_node_locked(as_caller, fs, n, flags);
	fs_mutation_unlock(fs);
	return fd;
}

/* N opened by the daemon, the mutation lock held already (LOCKED) or not. */
static int open_node(struct sfs_fs *fs, struct sfs_node *n, int flags, bool locked)
{
	return locked ? open_node_locked(NULL, fs, n, flags) : fs_open_node(fs, n, flags, NULL);
}

int fs_orphan_fd(struct sfs_fs *fs, struct sfs_node *n, int err)
{
	struct sfs_node_info info;

	if (err != -ENOENT && err != -ESTALE)
		return -1;
	sfs_node_removal_wait(fs->table, n);
	sfs_node_info(fs->table, n, &info);
	return info.orphan_fd;
}

/* ---- open files ---------------------------------------------------------- */

int fs_handle_fd_if_open(const struct fuse_file_info *fi)
{
	struct open_file *h = fs_handle_of(fi);
	int fd = h ? atomic_load(&h->fd) : -1;

	return fd > 0 ? fd : 0;
}

/* The handle's fd, opening the host file now if the open was deferred;
 * 0 without a handle. */
static int handle_fd(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi,
		     bool locked)
{
	struct open_file *h = fs_handle_of(fi);

	if (!h)
		return 0;
	int fd = atomic_load(&h->fd);
	if (fd > 0)
		return fd;
	/* Unlinked since it was opened: the fd kept for it then. */
	struct sfs_node_info info;
	sfs_node_info(fs->table, n, &info);
	int orphan_fd = info.orphan_fd;
	if (orphan_fd < 0) {
		fd = open_node(fs, n, h->flags, locked);
		/* An unprivileged daemon, the mode changed since the open. */
		if (fd == -EACCES) {
			int kept = sfs_node_kept_dup(fs->table, n, h->flags & O_ACCMODE);
			fd = kept >= 0 ? kept : fd;
		}
		orphan_fd = fs_orphan_fd(fs, n, fd);
	}
	if (orphan_fd >= 0) {
		fd = fcntl(orphan_fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			fd = -errno;
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

static int io_fd_get(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi,
		     int flags, bool locked, struct io_fd *io)
{
	struct sfs_node_info info;

	io->owned = false;
	io->fd = handle_fd(fs, n, fi, locked);
	if (io->fd != 0)
		return io->fd < 0 ? io->fd : 0;
	sfs_node_info(fs->table, n, &info);
	if (info.overlay_fd >= 0) {
		io->fd = info.overlay_fd;
		return 0;
	}
	/* Before the orphan fd, which may be read-only where the kept one
	 * was opened for writing (a 0444 file the daemon cannot reopen). */
	io->fd = sfs_node_kept_dup(fs->table, n, flags & O_ACCMODE);
	if (io->fd < 0 && info.orphan_fd >= 0) {
		io->fd = info.orphan_fd;
		return 0;
	}
	if (io->fd < 0)
		io->fd = open_node(fs, n, flags | O_NONBLOCK, locked);
	int orphan_fd = fs_orphan_fd(fs, n, io->fd);
	if (orphan_fd >= 0) {
		io->fd = orphan_fd;
		return 0;
	}
	if (io->fd < 0)
		return io->fd;
	io->owned = true;
	return 0;
}

int fs_io_fd_get(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi, int flags,
		 struct io_fd *io)
{
	return io_fd_get(fs, n, fi, flags, false, io);
}

int fs_io_fd_get_locked(struct sfs_fs *fs, struct sfs_node *n, const struct fuse_file_info *fi,
			int flags, struct io_fd *io)
{
	return io_fd_get(fs, n, fi, flags, true, io);
}

void fs_io_fd_put(struct io_fd *io)
{
	if (io->owned)
		close_keep_errno(io->fd);
	io->owned = false;
}

int fs_keep_before_removal(struct sfs_fs *fs, int dirfd, const char *name,
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
	bool open = sfs_node_removal_begin(fs->table, *node);
	if (S_ISREG(st->st.st_mode) && !fs->no_open && !open)
		return -1;
	/* A directory too: a process may sit in it (its cwd) and still stat
	 * it, as natively. The daemon's own credentials open it: the
	 * descriptors it will serve were allowed by the kernel at their open,
	 * whatever the mode says now (a file created 0444 for writing), and
	 * every change through it is still judged. */
	struct sfs_creds_pause pause;
	sfs_creds_pause(&pause);
	int fd = S_ISDIR(st->st.st_mode)
			 ? -1
			 : openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	sfs_creds_resume(&pause);
	/* What an unprivileged daemon cannot open again it may have kept. */
	if (fd < 0 && S_ISREG(st->st.st_mode))
		fd = sfs_node_kept_dup(fs->table, *node, -1);
	struct sfs_stat now;
	if (fd >= 0 && sfs_node_found(fs->table, *node, NULL, fd, &now) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void fs_keep_after_removal(struct sfs_fs *fs, struct sfs_node *node, int fd)
{
	if (fd >= 0 && !sfs_node_adopt_orphan_fd(fs->table, node, fd))
		close(fd);
	if (node)
		sfs_node_removal_end(fs->table, node);
	sfs_node_unpin(fs->table, node);
}

void fs_keep_before_chmod(struct sfs_fs *fs, struct sfs_node *n, mode_t old, mode_t new)
{
	struct sfs_node_info info;

	/* Root opens the file again whatever its mode. With handles, one
	 * opened for reading waits for its first read to open (handle_fd). */
	if (sfs_creds_switching() || !S_ISREG(old) || !(old & ~new & 0666) ||
	    sfs_node_kept_accmode(fs->table, n) == O_RDWR)
		return;
	sfs_node_info(fs->table, n, &info);
	if (!fs->no_open && info.handles == 0)
		return;
	int accmode = O_RDWR;
	int fd = fs_open_node(fs, n, O_RDWR | O_NONBLOCK, NULL);
	for (int i = 0; fd < 0 && i < 2; i++) {
		accmode = i == 0 ? O_WRONLY : O_RDONLY;
		fd = fs_open_node(fs, n, accmode | O_NONBLOCK, NULL);
	}
	if (fd >= 0)
		sfs_node_keep_fd(fs->table, n, fd, accmode);
}

/* ---- asking the guard about a node --------------------------------------- */

void fs_mutation_lock(struct sfs_fs *fs)
{
	sfs_guard_lock(fs->guard, false);
}

void fs_mutation_unlock(struct sfs_fs *fs)
{
	sfs_guard_unlock(fs->guard);
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

int fs_check_node_locked(fuse_req_t req, struct sfs_node *n, enum sfs_op op, const char *opname)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_caller c = fs_caller_of(req);
	struct sfs_subject who = SFS_SUBJECT_NODE(n);
	char path[PATH_REL_MAX];
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

/* Under the mutation lock, shared: the path judged is N's path, and its
 * place checked there, with no rename through the mount in between
 * (which made the check of its place answer ESTALE). */
int fs_check_node(fuse_req_t req, struct sfs_node *n, enum sfs_op op, const char *opname)
{
	struct sfs_fs *fs = fs_of(req);

	fs_mutation_lock(fs);
	int r = fs_check_node_locked(req, n, op, opname);
	fs_mutation_unlock(fs);
	return r;
}

/* ---- what a lookup shows ------------------------------------------------- */

int fs_open_mirror(struct sfs_fs *fs, struct sfs_node *parent, bool create, struct sfs_anchor *dir)
{
	char path[PATH_REL_MAX];
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

struct view fs_view_of(struct sfs_fs *fs, const char *path)
{
	struct view v;

	v.err = sfs_guard_visible(fs->guard, path, &v.overlay_fd, &v.private);
	return v;
}

struct view fs_view_of_verdict(struct sfs_fs *fs, const struct sfs_verdict *verdict)
{
	struct view v;

	v.err = sfs_guard_view(fs->guard, verdict, &v.overlay_fd, &v.private);
	return v;
}

/* Whether PARENT's entry seen as V is a private directory's own name:
 * PARENT is in SOURCE, the entry's path is private. The name then lives in
 * the store's mirror of PARENT, and only a directory may be there. */
static bool private_root(struct sfs_fs *fs, struct sfs_node *parent, const struct view *v)
{
	struct sfs_node_info info;

	if (!v->private)
		return false;
	sfs_node_info(fs->table, parent, &info);
	return !info.in_store;
}

int fs_entry_dir(struct sfs_fs *fs, struct sfs_node *parent, const struct view *v, bool create,
		 struct sfs_anchor *dir)
{
	if (private_root(fs, parent, v))
		return fs_open_mirror(fs, parent, create, dir);
	return sfs_anchor_get(fs->table, parent, dir);
}

static int lookup_entry(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
			const char *path, const struct view *v, unsigned handles,
			struct fuse_entry_param *e, struct sfs_stat *found)
{
	struct sfs_node_info info;
	struct sfs_stat st;
	struct view asked;

	if (!v) {
		asked = fs_view_of(fs, path);
		v = &asked;
	}
	int overlay_fd = v->overlay_fd, r = v->err;
	if (r == 0)
		r = overlay_fd >= 0 ? sfs_stat_fd(overlay_fd, &st) : sfs_stat_at(dirfd, name, &st);
	if (r < 0)
		return r;
	bool store_base = private_root(fs, parent, v);
	if (store_base && !S_ISDIR(st.st.st_mode))
		return -ENOENT; /* a private directory is a directory */
	struct sfs_node *n = sfs_table_intern(fs->table, parent, name, &st, store_base, handles);
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
	e->attr_timeout = e->entry_timeout = fs_timeout_for(fs, &info);
	if (found)
		*found = st;
	return 0;
}

int fs_lookup_at(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
		 const char *path, const struct view *v, struct fuse_entry_param *e,
		 struct sfs_stat *found)
{
	return lookup_entry(fs, parent, dirfd, name, path, v, 0, e, found);
}

int fs_lookup_created(struct sfs_fs *fs, struct sfs_node *parent, int dirfd, const char *name,
		      const char *path, const struct view *v, struct fuse_entry_param *e)
{
	return lookup_entry(fs, parent, dirfd, name, path, v, 1, e, NULL);
}

/* ---- changing a name ----------------------------------------------------- */

void fs_change_lock(fuse_req_t req, struct change *ch, bool exclusive)
{
	ch->locked = fs_of(req)->guard;
	sfs_guard_lock(ch->locked, exclusive);
}

void fs_change_end(struct change *ch)
{
	sfs_creds_leave(&ch->creds);
	if (ch->locked)
		sfs_guard_unlock(ch->locked);
	ch->locked = NULL;
	sfs_anchor_put(&ch->dir);
}

int fs_change_locate(fuse_req_t req, fuse_ino_t parent, const char *name, enum sfs_op op,
		     struct sfs_subject *who, bool create, struct change *ch)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *dir = fs_node_of(req, parent);
	struct sfs_node_info info;

	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	ch->name = name;
	int r = sfs_node_relpath(fs->table, dir, name, ch->path, sizeof(ch->path));
	if (r < 0)
		return r;
	sfs_guard_judge(fs->guard, ch->path, op, who, &ch->v);
	sfs_node_info(fs->table, dir, &info);
	ch->private_root = !info.in_store && sfs_verdict_private(&ch->v);
	ch->in_store = info.in_store || ch->private_root;
	if (ch->private_root)
		return fs_open_mirror(fs, dir, create, &ch->dir);
	r = sfs_anchor_get(fs->table, dir, &ch->dir);
	if (r == 0)
		r = sfs_node_verify(fs->table, dir, ch->dir.fd);
	return r;
}

int fs_change_conclude(fuse_req_t req, struct change *ch, const char *opname,
		       struct sfs_subject *who)
{
	struct sfs_caller c = fs_caller_of(req);
	struct sfs_subject at_name = SFS_SUBJECT_AT(ch->dir.fd, ch->name, NULL);

	return sfs_guard_conclude(fs_of(req)->guard, &c, &ch->v, opname, NULL,
				  who ? who : &at_name);
}

int fs_change_begin(fuse_req_t req, fuse_ino_t parent, const char *name, enum sfs_op op,
		    const char *opname, bool create, struct sfs_subject *who, struct change *ch)
{
	fs_change_lock(req, ch, false);
	int r = fs_change_locate(req, parent, name, op, who, create, ch);
	if (r == 0)
		r = fs_change_conclude(req, ch, opname, who);
	if (r == 0)
		r = sfs_creds_enter(req, &ch->creds);
	return r;
}

int fs_refuse_private_root(fuse_req_t req, struct change *ch, const char *opname)
{
	struct sfs_caller c = fs_caller_of(req);

	if (!ch->private_root)
		return 0;
	return sfs_guard_deny_judged(fs_of(req)->guard, &c, &ch->v, opname,
				     "only a directory may have the name of a private directory");
}

mode_t fs_new_mode(fuse_req_t req, int dirfd, mode_t mode)
{
	mode &= ~(mode_t)(S_ISUID | S_ISGID);
	if (fs_of(req)->posix_acl &&
	    sfs_getxattr_at(dirfd, ".", "system.posix_acl_default", NULL, 0) <= 0)
		mode &= ~fuse_req_ctx(req)->umask;
	return mode;
}
