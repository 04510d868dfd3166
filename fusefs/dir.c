/* dir.c - directory handles and listings: opendir to releasedir, and
 * readdir(plus), which leaves out what the policy hides and lists a SOURCE
 * directory's private directories (from the store) after its own entries.
 * The rules of ops.c hold here too. */
#include "fs.h"
#include "request.h"
#include "host/compat.h"
#include "guard.h"
#include "inode.h"
#include "stats.h"
#include "common/path.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sfs_dir_handle {
	DIR *dp;
};

/* A directory stream on N, positioned nowhere yet. */
static int dir_handle_open(struct sfs_fs *fs, struct sfs_node *n, struct sfs_dir_handle **out)
{
	struct sfs_dir_handle *d = calloc(1, sizeof(*d));
	int fd = d ? fs_open_node(fs, n, O_RDONLY | O_DIRECTORY, NULL) : -ENOMEM;

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

void sfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
	int r = dir_handle_open(fs, fs_node_of(req, ino), &d);
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
 * PATH (PATH_REL_MAX bytes). */
static bool entry_path(char *path, size_t dirlen, const char *name)
{
	return path_append(path, PATH_REL_MAX, &dirlen, name, strlen(name)) == 0;
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
	int r = fs_open_mirror(fs, parent, false, &mirror);

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
		    !fs_view_of(fs, path).private || sfs_stat_at(dirfd(dp), de->d_name, &st) < 0 ||
		    !S_ISDIR(st.st.st_mode))
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
	/* What the policy lets a lookup see of a private path, judged above. */
	const struct view private_view = {.err = 0, .overlay_fd = -1, .private = true};
	for (size_t i = first; r == 0 && i < n; i++) {
		struct fuse_entry_param e = {0};
		if (!entry_path(path, dirlen, names[i]))
			continue;
		if (plus) {
			if (fs_lookup_at(fs, parent, dirfd(dp), names[i], path, &private_view, &e,
					 NULL) < 0)
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
				sfs_table_forget(fs->table, fs_node_of(req, e.ino), 1);
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
	struct sfs_node *parent = fs_node_of(req, ino);
	struct sfs_node_info pinfo;
	/* Without opendir, each call has a stream of its own; the offsets
	 * are the host's telldir cookies, valid across streams. */
	bool own_stream = !d;
	int opened = own_stream ? dir_handle_open(fs, parent, &d) : 0;
	cleanup_free char *buf = calloc(1, size);
	char *p = buf;
	size_t rem = size;
	char path[PATH_REL_MAX] = "";
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
		bool plus_bare = false;
		if (is_dot_or_dotdot(name)) {
			e.attr.st_ino = de->d_ino;
			e.attr.st_mode = (mode_t)de->d_type << 12;
		} else {
			struct view v;
			if (!entry_path(path, dirlen, name)) {
				err = ENAMETOOLONG;
				break;
			}
			v = fs_view_of(fs, path);
			/* Hidden, or SOURCE's copy of a private directory,
			 * which is served from the store instead. */
			int r = v.err ? v.err : v.private && privates ? -ENOENT : 0;
			if (r == 0 && plus)
				r = fs_lookup_at(fs, parent, dirfd(d->dp), name, path, &v, &e,
						 NULL);
			if (r == -ENOENT) /* ... or removed on the host since */
				continue;
			/* A directory the daemon may read but not search
			 * (an unprivileged daemon, mode r--): the names,
			 * without attributes, which the kernel then asks
			 * for by lookup, as readdir would give them. */
			if (r == -EACCES && plus) {
				e = (struct fuse_entry_param){0};
				r = 0;
				plus_bare = true;
			}
			if (r < 0) {
				err = -r;
				break;
			}
			if (!plus || plus_bare) {
				e.attr.st_ino = de->d_ino;
				e.attr.st_mode = (mode_t)de->d_type << 12;
			}
		}
		size_t entsize = add_entry(req, p, rem, name, &e, next, plus);
		if (entsize > rem) {
			if (e.ino)
				sfs_table_forget(fs->table, fs_node_of(req, e.ino), 1);
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

void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READDIR);
	do_readdir(req, ino, size, off, fi, false);
}

void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, READDIRPLUS);
	do_readdir(req, ino, size, off, fi, true);
}

void sfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, RELEASEDIR);
	(void)ino;
	if (dir_handle(fi))
		dir_handle_close(dir_handle(fi));
	fuse_reply_err(req, 0);
}

void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, FSYNCDIR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	struct sfs_dir_handle *d = dir_handle(fi);
	struct sfs_node_info info;
	bool owned = false;
	int fd;

	/* Removed while open: the descriptor kept for it then (a removed
	 * directory is still fsync'able natively). */
	sfs_node_info(fs->table, n, &info);
	if (d) {
		fd = dirfd(d->dp);
	} else if (info.orphan_fd >= 0) {
		fd = info.orphan_fd;
	} else {
		fd = fs_open_node(fs, n, O_RDONLY | O_DIRECTORY, NULL);
		owned = fd >= 0;
		int orphan_fd = fs_orphan_fd(fs, n, fd);
		fd = orphan_fd >= 0 ? orphan_fd : fd;
	}
	int r = fd < 0 ? fd : ((datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0);

	if (owned)
		close(fd);
	fuse_reply_err(req, -r);
}
