/* owner.h - which inodes of SOURCE the agent owns: those it created
 * through the mount. An owned file stays the agent's to change, rename and
 * remove, in this session and later ones, wherever it lies (unless its
 * name is of a stricter class): temp files, object files, binaries.
 *
 * The mark is kept on the host beside the file: the extended attribute
 * user.sandyfs, holding a hash of the inode's identity (number and birth
 * time), so the attribute copied onto another file, or kept by an editor
 * that writes a new file over the old one, proves nothing: the user's new
 * file is the user's. It is 8 bytes, so that it still fits in the inode
 * beside an SELinux label or an ACL on ext4. Setting it changes the
 * file's ctime, so the file's times are set once more after it: a new file
 * has mtime == ctime, as natively. The mount never shows, sets or removes the
 * attribute. What cannot carry one (symlinks, filesystems without user
 * attributes, a file whose mode keeps an unprivileged daemon out) is
 * recorded in the store's 'owned' file instead, by identity. */
#ifndef SANDYFS_OWNER_H
#define SANDYFS_OWNER_H

#include "host/compat.h"

#include <stdbool.h>

#define SFS_OWNER_XATTR "user.sandyfs"

struct sfs_owner;

/* STORE_DIR_FD: the store (store.h) whose 'owned' file holds the records
 * (read now, appended to later), or -1 for none (nothing is recorded, and
 * only marks on the host count). */
int sfs_owner_new(int store_dir_fd, struct sfs_owner **out);
void sfs_owner_free(struct sfs_owner *o);

/* Marks the inode ST describes, at NAME in DIRFD (and open as FD, or -1),
 * as owned. FRESH: it was just made, and its times are set again after
 * the mark (mtime == ctime, as for a new file natively); otherwise they
 * stay (a file moved keeps its mtime). */
int sfs_owner_mark(struct sfs_owner *o, int fd, int dirfd, const char *name,
		   const struct sfs_stat *st, bool fresh);

/* Whether the inode at NAME in DIRFD, described by ST, is owned: 1 yes,
 * 0 no (also when it cannot be told). */
int sfs_owner_check(struct sfs_owner *o, int dirfd, const char *name, const struct sfs_stat *st);

/* The inode ST describes lost its last name through the mount: its record
 * goes, so that a new file reusing the inode number is not taken for it. */
void sfs_owner_forget(struct sfs_owner *o, const struct sfs_stat *st);

/* Whether an extended attribute name is the mark (in any namespace
 * spelling the kernel would accept for it). */
bool sfs_owner_is_mark(const char *xattr_name);

#endif
