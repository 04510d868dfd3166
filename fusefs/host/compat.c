/* compat.c - see compat.h. The Linux flavour uses O_PATH anchors, openat2
 * and /proc/self/fd for xattrs; the portable flavour (macOS, and Linux with
 * -Dportable_fallback=true) uses plain POSIX *at() calls with O_NOFOLLOW. */
#include "compat.h"
#include "creds.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SANDYFS_PORTABLE_FALLBACK
#include <linux/openat2.h>
#endif
#ifdef __linux__
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

/* A libc result as 0-or-value, or negative errno. */
static inline int neg_errno(int r)
{
	return r < 0 ? -errno : r;
}

const char *sfs_compat_flavour(void)
{
#ifdef SANDYFS_PORTABLE_FALLBACK
	return "portable (no O_PATH, openat2 or /proc)";
#else
	return "linux (O_PATH, openat2, /proc/self/fd)";
#endif
}

int sfs_anchor_flags(void)
{
#ifdef SANDYFS_PORTABLE_FALLBACK
	return O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
	return O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#endif
}

/* The walk every flavour can do: one component at a time, each opened with
 * O_NOFOLLOW relative to the previous one, ".." refused, so nothing
 * resolves outside DIRFD whatever the host does to the tree meanwhile. */
static int open_beneath_walk(int dirfd, const char *relpath, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(relpath);
	int cur = dirfd;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, relpath, len + 1);

	char *comp = buf;
	for (;;) {
		char *slash = strchr(comp, '/');
		while (slash && slash[1] == '/')
			*slash++ = '\0';
		if (slash)
			*slash = '\0';
		if (strcmp(comp, "..") == 0) {
			if (cur != dirfd)
				close(cur);
			return -EXDEV;
		}
		bool last = !slash || slash[1] == '\0';
		int fd;
		if (last)
			fd = openat(cur, *comp ? comp : ".", flags | O_NOFOLLOW | O_CLOEXEC, mode);
		else
			fd = openat(cur, *comp ? comp : ".", sfs_anchor_flags());
		if (fd < 0)
			fd = -errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0 || last)
			return fd;
		cur = fd;
		comp = slash + 1;
	}
}

static int open_beneath_one(int dirfd, const char *relpath, int flags, mode_t mode);

/* A tree may nest deeper than one system call's PATH_MAX: a longer path is
 * opened in pieces, each beneath the one before. */
int sfs_open_beneath(int dirfd, const char *relpath, int flags, mode_t mode)
{
	size_t len = strlen(relpath);

	if (len < PATH_MAX)
		return open_beneath_one(dirfd, relpath, flags, mode);
	char *copy = strdup(relpath);
	if (!copy)
		return -ENOMEM;
	int cur = dirfd, fd;
	char *p = copy;
	for (;;) {
		if (strlen(p) < PATH_MAX) {
			fd = open_beneath_one(cur, p, flags, mode);
			break;
		}
		char *cut = p + PATH_MAX - 1;
		while (cut > p && *cut != '/')
			cut--;
		if (cut == p) {
			fd = -ENAMETOOLONG;
			break;
		}
		*cut = '\0';
		fd = open_beneath_one(cur, p, sfs_anchor_flags(), 0);
		if (fd < 0)
			break;
		if (cur != dirfd)
			close(cur);
		cur = fd;
		p = cut + 1;
	}
	if (cur != dirfd)
		close(cur);
	free(copy);
	return fd;
}

static int open_beneath_one(int dirfd, const char *relpath, int flags, mode_t mode)
{
#ifndef SANDYFS_PORTABLE_FALLBACK
	static atomic_int no_openat2;

	if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			.mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, dirfd, relpath, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		/* ENOSYS: an older kernel; EPERM: a seccomp filter that
		 * does not know the call. Either way the walk is as safe. */
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
	}
#endif
	return open_beneath_walk(dirfd, relpath, flags, mode);
}

int sfs_stat_fd(int fd, struct sfs_stat *out)
{
	return sfs_stat_at(fd, "", out);
}

/* The birth time is what tells a reused inode number from the old file, so
 * every flavour asks for it: statx on Linux (it is not one of the calls the
 * portable flavour does without), st_birthtim on the BSDs and macOS. */
int sfs_stat_at(int dirfd, const char *name, struct sfs_stat *out)
{
#ifdef __linux__
	struct statx stx;
	int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (*name ? 0 : AT_EMPTY_PATH);

	if (statx(dirfd, name, flags, STATX_BASIC_STATS | STATX_BTIME, &stx) < 0)
		return -errno;
	struct stat *st = &out->st;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	st->st_ino = stx.stx_ino;
	st->st_mode = stx.stx_mode;
	st->st_nlink = stx.stx_nlink;
	st->st_uid = stx.stx_uid;
	st->st_gid = stx.stx_gid;
	st->st_rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
	st->st_size = (off_t)stx.stx_size;
	st->st_blksize = stx.stx_blksize;
	st->st_blocks = (blkcnt_t)stx.stx_blocks;
	st->st_atim.tv_sec = stx.stx_atime.tv_sec;
	st->st_atim.tv_nsec = stx.stx_atime.tv_nsec;
	st->st_mtim.tv_sec = stx.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = stx.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = stx.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = stx.stx_ctime.tv_nsec;
	out->btime_ns =
		(stx.stx_mask & STATX_BTIME)
			? (uint64_t)stx.stx_btime.tv_sec * 1000000000u + stx.stx_btime.tv_nsec
			: 0;
	return 0;
#else
	int r = *name ? fstatat(dirfd, name, &out->st, AT_SYMLINK_NOFOLLOW)
		      : fstat(dirfd, &out->st);
	if (r < 0)
		return -errno;
	out->btime_ns = (uint64_t)out->st.st_birthtimespec.tv_sec * 1000000000u +
			(uint64_t)out->st.st_birthtimespec.tv_nsec;
	return 0;
#endif
}

/* The inode NAME names, held open for the calls that only take an fd or a
 * path: an fd opened for reading on the portable flavour (only regular
 * files and directories: opening a device or FIFO can have effects), an
 * O_PATH fd reached through /proc/self/fd on Linux. Symlinks are refused
 * with EPERM: no race-free call reaches a symlink's own xattrs on every
 * kernel this runs on. */
struct attr_target {
	int fd;
	char path[32];
};

static int attr_target_open(int dirfd, const char *name, struct attr_target *t)
{
	struct sfs_creds_pause pause;
	struct stat st;

	/* Reached with the daemon's own credentials: the kernel walked
	 * there as the caller already (or the caller holds the file open,
	 * whose directory it need not be able to search). The call through
	 * the descriptor is the caller's, with the file's own checks. */
	sfs_creds_pause(&pause);
	int r = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (r == 0 && S_ISLNK(st.st_mode))
		r = -EPERM;
#ifdef SANDYFS_PORTABLE_FALLBACK
	/* A FIFO, socket or device has no user xattrs to show (as on Linux)
	 * and is not opened to find out. */
	else if (r == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		r = -ENOTSUP;
	if (r == 0) {
		t->fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (t->fd < 0 && errno == EACCES && S_ISREG(st.st_mode))
			t->fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
#else
	if (r == 0)
		t->fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
#endif
	if (r == 0 && t->fd < 0)
		r = errno == ELOOP ? -EPERM : -errno;
	sfs_creds_resume(&pause);
	if (r < 0)
		return r;
	snprintf(t->path, sizeof(t->path), "/proc/self/fd/%d", t->fd);
	return 0;
}

/* Closes the target and turns a libc result into value-or-negative-errno. */
static ssize_t attr_target_done(struct attr_target *t, ssize_t r)
{
	r = r < 0 ? -errno : r;
	close(t->fd);
	return r;
}

int sfs_chmod_at(int dirfd, const char *name, mode_t mode)
{
	struct attr_target t;
	int r = attr_target_open(dirfd, name, &t);
#ifdef SANDYFS_PORTABLE_FALLBACK
	/* A file its owner cannot open (mode 0), for a daemon that is not
	 * root: by name, as that owner, who need not open it to chmod it. */
	if (r == -EACCES)
		return neg_errno(fchmodat(dirfd, name, mode, AT_SYMLINK_NOFOLLOW));
	if (r < 0)
		return r == -EPERM || r == -ENOTSUP ? -EOPNOTSUPP : r;
	return (int)attr_target_done(&t, fchmod(t.fd, mode));
#else
	if (r == -EPERM) /* a symlink, which has no mode of its own here */
		return neg_errno(fchmodat(dirfd, name, mode, AT_SYMLINK_NOFOLLOW));
	if (r < 0)
		return r;
	return (int)attr_target_done(&t, chmod(t.path, mode));
#endif
}

/* A symlink (EPERM) and, on the fallback, a FIFO, socket or device
 * (ENOTSUP) or a file the daemon cannot open (EACCES: one that is not
 * root, a mode-0 file) are changed by name, as before. */
static bool by_name(int r)
{
#ifdef SANDYFS_PORTABLE_FALLBACK
	if (r == -EACCES)
		return true;
#endif
	return r == -EPERM || r == -ENOTSUP;
}

int sfs_chown_at(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	struct attr_target t;
	int r = attr_target_open(dirfd, name, &t);
	if (by_name(r))
		return neg_errno(fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW));
	if (r < 0)
		return r;
#ifdef SANDYFS_PORTABLE_FALLBACK
	return (int)attr_target_done(&t, fchown(t.fd, uid, gid));
#else
	return (int)attr_target_done(&t, fchownat(t.fd, "", uid, gid, AT_EMPTY_PATH));
#endif
}

int sfs_utimens_at(int dirfd, const char *name, const struct timespec tv[2])
{
	struct attr_target t;
	int r = attr_target_open(dirfd, name, &t);
	if (by_name(r))
		return neg_errno(utimensat(dirfd, name, tv, AT_SYMLINK_NOFOLLOW));
	if (r < 0)
		return r;
#ifdef SANDYFS_PORTABLE_FALLBACK
	return (int)attr_target_done(&t, futimens(t.fd, tv));
#else
	return (int)attr_target_done(&t, utimensat(AT_FDCWD, t.path, tv, 0));
#endif
}

#ifdef SANDYFS_PORTABLE_FALLBACK
#define XATTR_CALL(fdcall, pathcall) fdcall
#else
#define XATTR_CALL(fdcall, pathcall) pathcall
#endif

ssize_t sfs_getxattr_at(int dirfd, const char *name, const char *attr, void *buf, size_t size)
{
	struct attr_target t;
	int r = attr_target_open(dirfd, name, &t);
	if (r == -ENOTSUP)
		return -ENODATA;
	if (r < 0)
		return r;
	return attr_target_done(&t, XATTR_CALL(fgetxattr(t.fd, attr, buf, size),
					       getxattr(t.path, attr, buf, size)));
}

ssize_t sfs_listxattr_at(int dirfd, const char *name, char *buf, size_t size)
{
	struct attr_target t;
	int r = attr_target_open(dirfd, name, &t);
	if (r == -ENOTSUP)
		return 0;
	if (r < 0)
		return r;
	return attr_target_done(
		&t, XATTR_CALL(flistxattr(t.fd, buf, size), listxattr(t.path, buf, size)));
}

/* The target of a change to an attribute: where none can be had, EPERM,
 * as Linux answers for user xattrs there. */
static int attr_target_for_change(int dirfd, const char *name, struct attr_target *t)
{
	int r = attr_target_open(dirfd, name, t);

	return r == -ENOTSUP ? -EPERM : r;
}

int sfs_setxattr_at(int dirfd, const char *name, const char *attr, const void *value, size_t size,
		    int flags)
{
	struct attr_target t;
	int r = attr_target_for_change(dirfd, name, &t);
	if (r < 0)
		return r;
	return (int)attr_target_done(&t, XATTR_CALL(fsetxattr(t.fd, attr, value, size, flags),
						    setxattr(t.path, attr, value, size, flags)));
}

int sfs_removexattr_at(int dirfd, const char *name, const char *attr)
{
	struct attr_target t;
	int r = attr_target_for_change(dirfd, name, &t);
	if (r < 0)
		return r;
	return (int)attr_target_done(
		&t, XATTR_CALL(fremovexattr(t.fd, attr), removexattr(t.path, attr)));
}

int sfs_rename_at(int olddirfd, const char *oldname, int newdirfd, const char *newname,
		  unsigned int flags)
{
	if (flags == 0)
		return neg_errno(renameat(olddirfd, oldname, newdirfd, newname));
	return neg_errno(renameat2(olddirfd, oldname, newdirfd, newname, flags));
}

bool sfs_mount_privilege_droppable(void)
{
#ifdef __linux__
	return true;
#else
	return false;
#endif
}

int sfs_quiet_view(int dirfd)
{
#if defined(__linux__) && defined(SYS_open_tree) && defined(SYS_mount_setattr)
	/* linux/mount.h's values; that header does not mix with glibc's
	 * sys/mount.h. */
	enum {
		TREE_CLONE = 1,		  /* OPEN_TREE_CLONE */
		ATTR_RDONLY = 0x1,	  /* MOUNT_ATTR_RDONLY */
		ATTR_NOATIME = 0x10,	  /* MOUNT_ATTR_NOATIME */
		ATTR_ATIME_MASK = 0x70,	  /* MOUNT_ATTR__ATIME */
		FLAGS_RECURSIVE = 0x8000, /* AT_RECURSIVE */
	};
	struct {
		uint64_t attr_set, attr_clr, propagation, userns_fd;
	} attr = {.attr_set = ATTR_RDONLY | ATTR_NOATIME, .attr_clr = ATTR_ATIME_MASK};
	int fd = (int)syscall(SYS_open_tree, dirfd, "",
			      TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | FLAGS_RECURSIVE);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | FLAGS_RECURSIVE, &attr,
		    sizeof(attr)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
#else
	(void)dirfd;
	return -EOPNOTSUPP;
#endif
}

int sfs_drop_mount_privilege(void)
{
#ifdef __linux__
	/* The raw calls: glibc has no wrapper, and libcap would be a
	 * library for two system calls. */
	struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	const unsigned i = CAP_TO_INDEX(CAP_SYS_ADMIN);
	const __u32 admin = CAP_TO_MASK(CAP_SYS_ADMIN);

	if (syscall(SYS_capget, &head, caps) < 0)
		return -errno;
	bool held = caps[i].permitted & admin;
	int bounded = prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0);
	if (bounded < 0)
		return -errno;
	if (bounded && caps[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)) {
		if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0)
			return -errno;
		bounded = 0;
	}
	/* A bounding set that keeps it (a container's without CAP_SETPCAP)
	 * hands it to whatever root execs: the daemon execs nothing once
	 * mounted, but one taken over could. no_new_privs caps an exec's
	 * permitted set at the one before. Not for a daemon of a user
	 * that never held it: its unmount runs the set-user-ID
	 * fusermount3, which the bit would leave powerless. */
	if (bounded && (held || geteuid() == 0 || getuid() == 0) &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	caps[i].effective &= ~admin;
	caps[i].permitted &= ~admin;
	caps[i].inheritable &= ~admin;
	if (syscall(SYS_capset, &head, caps) < 0)
		return -errno;
	return held;
#else
	return -EOPNOTSUPP;
#endif
}
