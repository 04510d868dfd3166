/* handle.c - open files, from the open or create that makes the kernel a
 * handle to its release, and the handlers of their I/O (read, write,
 * fsync, fallocate, copy_file_range, lseek). The handle's deferred host
 * open, the fd each I/O request works on and the fds kept for files
 * removed while open are request.c's. The rules of ops.c hold here too. */
#include "fs.h"
#include "request.h"
#include "deferred.h"
#include "host/compat.h"
#include "host/creds.h"
#include "guard.h"
#include "inode.h"
#include "stats.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
	struct open_file *h = fs_handle_of(fi);

	if (!h)
		return;
	int fd = atomic_load(&h->fd);
	if (fd > 0)
		close(fd);
	free(h);
	fi->fh = 0;
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

static int overlay_of(struct sfs_fs *fs, struct sfs_node *n)
{
	struct sfs_node_info info;

	sfs_node_info(fs->table, n, &info);
	return info.overlay_fd;
}

void sfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, OPEN);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	int overlay_fd = overlay_of(fs, n);

	if (fs->no_open) {
		/* The kernel takes this as "open without asking" from now on. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	bool for_change = opens_for_change(fi->flags);
	int r = for_change ? fs_check_node(req, n, SFS_OP_WRITE, "open") : 0;
	int fd = -1;

	/* Counted before the host file is opened or its name checked: a
	 * removal of the name from then on keeps the file for this handle
	 * (fs_keep_before_removal), as the kernel will think it open. */
	sfs_node_handles(fs->table, n, 1);

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
		fd = fs_open_node(fs, n, host_open_flags(fi->flags), req);
		if (fd < 0)
			r = fd;
	} else if (r == 0) {
		/* Still there under its name: if the host replaced it (git
		 * rewrites .git/index so), ESTALE makes the kernel look the
		 * name up again and open what is there now. */
		cleanup_located struct located at = {0};
		r = fs_locate(fs, n, LOCATE_CHECK, &at);
	}
	if (r == 0)
		r = handle_new(fi, fd, host_open_flags(fi->flags));
	if (r < 0) {
		sfs_node_handles(fs->table, n, -1);
		close_keep_errno(fd);
		fuse_reply_err(req, -r);
		return;
	}
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) != 0) {
		sfs_node_handles(fs->table, n, -1);
		handle_free(fi);
	}
}

void sfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, CREATE);
	struct sfs_fs *fs = fs_of(req);
	cleanup_change struct change ch = {0};
	struct fuse_entry_param e;
	struct sfs_subject who = fs_subject_new();
	struct sfs_stat st;
	int fd = -1;
	int r = fs_change_begin(req, parent, name, SFS_OP_CREATE, "create", false, &who, &ch);

	if (r == 0)
		r = fs_refuse_private_root(req, &ch, "create");
	/* Where only ownership lets the agent in, the name must really be
	 * new (a file the host made there meanwhile is not opened), and what
	 * is made is marked the agent's. */
	bool owned = r == 0 && !sfs_verdict_writable(&ch.v);
	if (r == 0) {
		int excl = (fi->flags & O_EXCL) || owned ? O_EXCL : 0;
		fd = openat(ch.dir.fd, name, host_open_flags(fi->flags) | O_CREAT | excl,
			    fs_new_mode(req, ch.dir.fd, mode));
		if (fd < 0)
			r = -errno;
	}
	if (r == 0 && owned) {
		sfs_creds_leave(&ch.creds);
		if (sfs_stat_fd(fd, &st) == 0)
			sfs_guard_mark_owned(fs->guard, fd, ch.dir.fd, name, &st, true);
	}
	/* With a handle to give out, the node counts it from its lookup on. */
	bool with_handle = !fs->no_open;
	struct view v = r == 0 ? fs_view_of_verdict(fs, &ch.v) : (struct view){0};
	if (r == 0 && with_handle)
		r = fs_lookup_created(fs, fs_node_of(req, parent), ch.dir.fd, name, ch.path, &v,
				      &e);
	else if (r == 0)
		r = fs_lookup_at(fs, fs_node_of(req, parent), ch.dir.fd, name, ch.path, &v, &e,
				 NULL);
	if (r < 0) {
		close_keep_errno(fd);
		fuse_reply_err(req, -r);
		return;
	}
	if (owned)
		sfs_node_set_owned(fs->table, fs_node_of(req, e.ino), true);
	/* Once it opens without asking, the kernel never releases what it
	 * opened, created files included: no handle must be left to leak. */
	fi->fh = 0;
	if (fs->no_open && sfs_creds_switching()) {
		close(fd);
	} else if (fs->no_open) {
		sfs_node_keep_fd(fs->table, fs_node_of(req, e.ino), fd, fi->flags & O_ACCMODE);
	} else if ((r = handle_new(fi, fd, 0)) < 0) {
		/* The file exists now; the kernel learns of it at its next
		 * lookup. */
		close(fd);
		sfs_node_handles(fs->table, fs_node_of(req, e.ino), -1);
		sfs_table_forget(fs->table, fs_node_of(req, e.ino), 1);
		fuse_reply_err(req, -r);
		return;
	}
	fi->keep_cache = 1;
	if (fuse_reply_create(req, &e, fi) != 0) {
		if (fi->fh)
			sfs_node_handles(fs->table, fs_node_of(req, e.ino), -1);
		handle_free(fi);
		sfs_table_forget(fs->table, fs_node_of(req, e.ino), 1);
	}
}

/* The data of a read or write: FD at OFF, spliced where the kernel can. */
static void on_fd(struct fuse_bufvec *b, int fd, off_t off)
{
	b->buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	b->buf[0].fd = fd;
	b->buf[0].pos = off;
}

void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READ);
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	cleanup_io struct io_fd io = {0};
	int r = fs_io_fd_get(fs_of(req), fs_node_of(req, ino), fi, O_RDONLY, &io);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	on_fd(&buf, io.fd, off);
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

/* The fd to change node INO's content through, once OPNAME is allowed:
 * judged and, when the kernel opened the file without asking, opened
 * under one hold of the mutation lock, so that the file opened is the one
 * judged where it was judged. */
static int fd_to_change(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			const char *opname, struct io_fd *io)
{
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);

	fs_mutation_lock(fs);
	int r = fs_check_node_locked(req, n, SFS_OP_WRITE, opname);
	if (r == 0)
		r = fs_io_fd_get_locked(fs, n, fi, O_WRONLY, io);
	fs_mutation_unlock(fs);
	return r;
}

/* Whether REQ came through FUSE over io_uring (libfuse 3.18 and newer). */
static bool request_over_uring(fuse_req_t req)
{
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)
	return fuse_req_is_uring(req);
#else
	(void)req;
	return false;
#endif
}

void sfs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
		   struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, WRITE);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
	cleanup_io struct io_fd io = {0};
	struct sfs_creds creds;
	int r = fd_to_change(req, ino, fi, "write", &io);

	if (r < 0) {
		struct sfs_fs *fs = fs_of(req);
		bool uring = request_over_uring(req);
		fuse_reply_err(req, -r);
		/* Opened without asking, a file the policy keeps may be mapped
		 * shared and written in memory: the refused write-back must not
		 * leave the changed pages readable. Dropping them waits for the
		 * write-back to end, which the reply does: over /dev/fuse it is
		 * in the kernel now; over io_uring only once this worker is
		 * back at its ring, so another thread does it then. */
		if (r == -EROFS && fs->no_open && uring)
			sfs_deferred_inval_data(fs->deferred, ino);
		else if (r == -EROFS && fs->no_open)
			sfs_deferred_inval_now(fs->deferred, ino);
		return;
	}
	on_fd(&out, io.fd, off);
	sfs_creds_enter_ids(req, &creds);
	ssize_t res = fuse_buf_copy(&out, in, 0);
	sfs_creds_leave(&creds);
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else
		fuse_reply_write(req, (size_t)res);
}

void sfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RELEASE);
	if (fs_handle_of(fi)) {
		handle_free(fi);
		sfs_node_handles(fs_of(req)->table, fs_node_of(req, ino), -1);
	}
	fuse_reply_err(req, 0);
}

void sfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FSYNC);
	cleanup_io struct io_fd io = {0};
	int r = fs_io_fd_get(fs_of(req), fs_node_of(req, ino), fi, O_RDONLY, &io);

	if (r == 0 && (datasync ? fdatasync(io.fd) : fsync(io.fd)) < 0)
		r = -errno;
	fuse_reply_err(req, -r);
}

void sfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		   struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FALLOCATE);
	cleanup_io struct io_fd io = {0};
	struct sfs_creds creds;
	int r = fd_to_change(req, ino, fi, "fallocate", &io);

	if (r == 0) {
		sfs_creds_enter_ids(req, &creds);
		r = fallocate(io.fd, mode, offset, length) < 0 ? -errno : 0;
		sfs_creds_leave(&creds);
	}
	fuse_reply_err(req, -r);
}

void sfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			 struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			 struct fuse_file_info *fi_out, size_t len, int flags)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, COPY_FILE_RANGE);
	cleanup_io struct io_fd in = {0};
	cleanup_io struct io_fd out = {0};
	struct sfs_creds creds;
	int r = fd_to_change(req, ino_out, fi_out, "copy_file_range", &out);

	if (r == 0)
		r = fs_io_fd_get(fs_of(req), fs_node_of(req, ino_in), fi_in, O_RDONLY, &in);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	sfs_creds_enter_ids(req, &creds);
	ssize_t res = copy_file_range(in.fd, &off_in, out.fd, &off_out, len, (unsigned)flags);
	int e = errno;
	sfs_creds_leave(&creds);
	if (res < 0)
		fuse_reply_err(req, e);
	else
		fuse_reply_write(req, (size_t)res);
}

void sfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LSEEK);
	cleanup_io struct io_fd io = {0};
	int r = fs_io_fd_get(fs_of(req), fs_node_of(req, ino), fi, O_RDONLY, &io);
	off_t res = r < 0 ? r : lseek(io.fd, off, whence);

	if (r < 0)
		fuse_reply_err(req, -r);
	else if (res < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}
