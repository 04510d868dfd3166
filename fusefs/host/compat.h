/* compat.h - the portability layer: every host call whose best form is
 * Linux-only (O_PATH, openat2, /proc/self/fd) goes through here, with a
 * fallback that uses none of them. The fallback is what a macOS/macFUSE
 * build takes; -Dportable_fallback=true builds it on Linux so the
 * whole test suite runs against it too.
 *
 * Every function works relative to a directory fd, never follows a
 * symlink in any component it resolves, and returns a negative errno on
 * failure (0 or a non-negative value on success). */
#ifndef SANDYFS_COMPAT_H
#define SANDYFS_COMPAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What the daemon needs to know about a host inode: its identity (dev, ino
 * and, where the filesystem records it, the birth time, so that a reused
 * inode number is never mistaken for the old file) and its attributes. */
struct sfs_stat {
	struct stat st;
	uint64_t btime_ns; /* 0 when the filesystem does not say */
};

/* Name of the compiled-in flavour, for --version. */
const char *sfs_compat_flavour(void);

/* Open flags of a directory fd that is only ever used as the anchor of
 * *at() calls: O_PATH where it exists (no read permission needed). */
int sfs_anchor_flags(void);

/* Opens RELPATH (one or more components, no leading '/') beneath DIRFD.
 * No component may be a symlink or "..": openat2 with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS where the kernel has it, else a component walk with
 * O_NOFOLLOW. Returns the fd or -errno. */
int sfs_open_beneath(int dirfd, const char *relpath, int flags, mode_t mode);

/* lstat of NAME (one component, or "." for DIRFD itself). */
int sfs_stat_at(int dirfd, const char *name, struct sfs_stat *out);

/* fstat of an open fd, with the birth time where available. */
int sfs_stat_fd(int fd, struct sfs_stat *out);

/* chmod, chown and utimensat of NAME without following it if it is a
 * symlink. On Linux, NAME is reached with the daemon's own credentials
 * (sfs_creds_pause) and changed with the calling thread's: the caller
 * the kernel let there, or that holds the file open, need not be able
 * to search its directory, as natively. */
int sfs_chmod_at(int dirfd, const char *name, mode_t mode);
int sfs_chown_at(int dirfd, const char *name, uid_t uid, gid_t gid);
int sfs_utimens_at(int dirfd, const char *name, const struct timespec tv[2]);

/* Extended attributes of NAME, never following a symlink. On the fallback
 * they go through an fd opened for reading; symlinks answer EPERM there
 * and on Linux alike, since no race-free call reaches a symlink's xattrs
 * on every kernel this runs on. */
ssize_t sfs_getxattr_at(int dirfd, const char *name, const char *attr, void *buf, size_t size);
ssize_t sfs_listxattr_at(int dirfd, const char *name, char *buf, size_t size);
int sfs_setxattr_at(int dirfd, const char *name, const char *attr, const void *value, size_t size,
		    int flags);
int sfs_removexattr_at(int dirfd, const char *name, const char *attr);

/* renameat2 with the Linux flags (RENAME_NOREPLACE, RENAME_EXCHANGE). */
int sfs_rename_at(int olddirfd, const char *oldname, int newdirfd, const char *newname,
		  unsigned int flags);

/* A second view of DIRFD's directory for reading alone: a detached
 * read-only copy of its mounts (open_tree, mount_setattr) on which reads
 * never change access times, so that the daemon's own bookkeeping (the
 * index of SOURCE's symlinks reads every one) changes nothing the host or
 * the mount shows, as a native directory would not. Needs CAP_SYS_ADMIN
 * and Linux 5.12 (in both flavours: it is not among what the portable one
 * does without): the new fd, or -errno (-EOPNOTSUPP off Linux), in which
 * case the caller reads through DIRFD. */
int sfs_quiet_view(int dirfd);

/* Whether sfs_drop_mount_privilege can work here: capabilities are
 * Linux's, in both flavours (capget and capset are not among the calls
 * the portable one does without). */
bool sfs_mount_privilege_droppable(void);

/* Gives up CAP_SYS_ADMIN, which mounting needed and serving does not:
 * from the effective, permitted and inheritable sets, and from the
 * bounding set where CAP_SETPCAP allows it; where it does not, and an
 * exec would take it back from there (as root), the no_new_privs bit
 * keeps every exec from gaining anything. All of it is per thread: call
 * it before any thread starts, so that each inherits the result. 1 when
 * the capability was held and is gone, 0 when it was not held, -errno
 * (-EOPNOTSUPP where sfs_mount_privilege_droppable is false). */
int sfs_drop_mount_privilege(void);

#endif
