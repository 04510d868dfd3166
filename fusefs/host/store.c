/* store.c - see store.h. */
#include "store.h"
#include "compat.h"
#include "common/cachedir.h"
#include "common/err.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper than any dependency tree; only bounds the recursion of clear. */
#define CLEAR_MAX_DEPTH 2048

struct sfs_store {
	int dir_fd, tree_fd, lock_fd;
};

int sfs_store_default_path(const char *source_resolved, char **out)
{
	cleanup_free char *base = sandy_cache_dir();
	const char *name = strrchr(source_resolved, '/');
	char clean[41];
	size_t n = 0;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	*out = NULL;
	if (!base)
		return -ENOENT;
	for (const char *p = source_resolved; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	name = name && name[1] ? name + 1 : "root";
	for (; *name && n < sizeof(clean) - 1; name++) {
		char c = *name;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		clean[n++] = plain ? c : '_';
	}
	clean[n] = '\0';
	if (asprintf(out, "%s/projects/%s-%016llx", base, clean, (unsigned long long)h) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Gives directory NAME in DIRFD the owner and mode of SOURCE's directory
 * ST (the daemon's own uid cannot give away what it makes, so only root
 * changes the owner). */
static void copy_dir_attrs(int dirfd, const char *name, const struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	if (geteuid() == 0 && fchown(fd, st->st_uid, st->st_gid) < 0) {
		/* The owner stays the daemon's: callers of another uid are
		 * then refused by the host, not let in. */
	}
	if (fchmod(fd, st->st_mode & 03777) < 0) {
		/* Keeps the mode mkdir gave it. */
	}
	close(fd);
}

int sfs_store_open(const char *path, const char *source_resolved, int source_fd,
		   struct sfs_store **out, char **err)
{
	struct sfs_store *s;
	struct stat st;
	int r;

	*out = NULL;
	*err = NULL;
	r = sandy_make_path(path, 0700);
	if (r < 0)
		return err_set(err, -r, "cannot make store directory '%s': %s", path, strerror(-r));
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->tree_fd = s->lock_fd = -1;
	s->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0) {
		r = err_set(err, errno, "cannot open store '%s': %s", path, strerror(errno));
		goto fail;
	}
	s->lock_fd = openat(s->dir_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->lock_fd < 0) {
		r = err_set(err, errno, "cannot lock store '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (flock(s->lock_fd, LOCK_SH | LOCK_NB) < 0) {
		int e = errno == EWOULDBLOCK ? EBUSY : errno;
		r = err_set(err, e, "cannot lock store '%s': %s (is it being cleared?)", path,
			    strerror(e));
		goto fail;
	}
	int sf = openat(s->dir_fd, "source", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			0644);
	if (sf >= 0) {
		dprintf(sf, "%s\n", source_resolved);
		close(sf);
	}
	if (mkdirat(s->dir_fd, "tree", 0755) == 0 && fstat(source_fd, &st) == 0)
		copy_dir_attrs(s->dir_fd, "tree", &st);
	else if (errno != EEXIST) {
		r = err_set(err, errno, "cannot make the tree of store '%s': %s", path,
			    strerror(errno));
		goto fail;
	}
	s->tree_fd = openat(s->dir_fd, "tree", sfs_anchor_flags());
	if (s->tree_fd < 0) {
		r = err_set(err, errno, "cannot open the tree of store '%s': %s", path,
			    strerror(errno));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sfs_store_free(s);
	return r;
}

void sfs_store_free(struct sfs_store *s)
{
	if (!s)
		return;
	if (s->tree_fd >= 0)
		close(s->tree_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	free(s);
}

int sfs_store_lock_alone(struct sfs_store *s)
{
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	int e = errno == EWOULDBLOCK ? EBUSY : errno;
	/* A failed conversion may have dropped the shared lock: take it back. */
	if (flock(s->lock_fd, LOCK_SH | LOCK_NB) < 0)
		return -errno;
	return -e;
}

int sfs_store_lock_shared(struct sfs_store *s)
{
	return flock(s->lock_fd, LOCK_SH | LOCK_NB) < 0 ? -errno : 0;
}

int sfs_store_tree_fd(const struct sfs_store *s)
{
	return s->tree_fd;
}

int sfs_store_dir_fd(const struct sfs_store *s)
{
	return s->dir_fd;
}

int sfs_store_mirror(struct sfs_store *s, int source_fd, const char *relpath, bool create)
{
	cleanup_free char *path = strdup(relpath);
	int cur = fcntl(s->tree_fd, F_DUPFD_CLOEXEC, 3);

	if (!path || cur < 0) {
		if (cur >= 0)
			close(cur);
		return path ? -errno : -ENOMEM;
	}
	for (char *comp = path; *comp;) {
		char *slash = strchr(comp, '/');
		if (slash)
			*slash = '\0';
		if (!strcmp(comp, "..") || !strcmp(comp, ".") || !*comp) {
			close(cur);
			return -EINVAL;
		}
		int fd = openat(cur, comp, sfs_anchor_flags());
		if (fd < 0 && errno == ENOENT && create) {
			/* SOURCE's directory of the same path, as far as it
			 * is there: the made one gets its owner and mode. */
			struct stat st = {
				.st_mode = 0755, .st_uid = geteuid(), .st_gid = getegid()};
			int src = sfs_open_beneath(source_fd, path, sfs_anchor_flags(), 0);
			if (src >= 0) {
				if (fstat(src, &st) < 0)
					st.st_mode = 0755;
				close(src);
			}
			if (mkdirat(cur, comp, 0700) == 0)
				copy_dir_attrs(cur, comp, &st);
			else if (errno != EEXIST) {
				close_keep_errno(cur);
				return -errno;
			}
			fd = openat(cur, comp, sfs_anchor_flags());
		}
		if (fd < 0) {
			close_keep_errno(cur);
			return -errno;
		}
		close(cur);
		cur = fd;
		if (!slash)
			break;
		*slash = '/';
		comp = slash + 1;
	}
	return cur;
}

static uint64_t usage_bytes, usage_files;

static int count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	usage_bytes += (uint64_t)st->st_blocks * 512;
	usage_files++;
	return 0;
}

int sfs_store_usage(const char *path, uint64_t *bytes, uint64_t *files)
{
	cleanup_free char *tree = NULL;
	struct stat st;

	*bytes = *files = 0;
	if (asprintf(&tree, "%s/tree", path) < 0)
		return -ENOMEM;
	if (lstat(tree, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	usage_bytes = usage_files = 0;
	if (nftw(tree, count_entry, 64, FTW_PHYS | FTW_MOUNT) < 0)
		return -errno;
	*bytes = usage_bytes;
	*files = usage_files - 1; /* not the tree itself */
	return 0;
}

/* rm -rf of NAME in DIRFD, never following a symlink. */
static int remove_at(int at, const char *name, int depth)
{
	if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > CLEAR_MAX_DEPTH)
		return -ELOOP;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	/* Read-only directories (some packages ship them) are emptied too. */
	if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700 &&
	    fchmod(fd, st.st_mode | 0700) < 0) {
		/* The removals below then say why. */
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close_keep_errno(fd);
		return -errno;
	}
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			r = remove_at(dirfd(d), e->d_name, depth + 1);
	closedir(d);
	if (r == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

int sfs_store_clear(const char *path, char **err)
{
	*err = NULL;
	cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0
				       : err_set(err, errno, "cannot open store '%s': %s", path,
						 strerror(errno));
	cleanup_fd int lock = openat(dfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return err_set(
				err, EBUSY,
				"cannot clear store '%s': a mount of the project is using it",
				path);
		return err_set(err, errno, "cannot clear store '%s': %s", path, strerror(errno));
	}
	DIR *d = fdopendir(dfd);
	if (!d)
		return err_set(err, errno, "cannot read store '%s': %s", path, strerror(errno));
	dfd = -1; /* the DIR has it */
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "lock"))
			r = remove_at(dirfd(d), e->d_name, 0);
	if (r == 0 && unlinkat(dirfd(d), "lock", 0) < 0 && errno != ENOENT)
		r = -errno;
	closedir(d);
	if (r == 0 && rmdir(path) < 0 && errno != ENOENT)
		r = -errno;
	if (r < 0)
		return err_set(err, -r, "cannot clear store '%s': %s", path, strerror(-r));
	return 0;
}
