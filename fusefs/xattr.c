/* xattr.c - extended attributes: read with the daemon's credentials after
 * the kernel's own check, changed as the caller after the guard's. The
 * ownership mark (owner.h) is the daemon's, never shown, set or removed
 * through the mount. The rules of ops.c hold here too. */
#include "fs.h"
#include "request.h"
#include "host/compat.h"
#include "host/creds.h"
#include "guard.h"
#include "inode.h"
#include "owner.h"
#include "stats.h"
#include "common/path.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

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

/* Where a node's xattrs are: at its name (the call there fails by itself
 * when the name leads nowhere), or, for a node whose last name went
 * through the mount, on the fd kept for it (*ORPHAN_FD). */
static int xattr_target(struct sfs_fs *fs, struct sfs_node *n, struct located *at, int *orphan_fd)
{
	int r = fs_locate(fs, n, LOCATE_NAME, at);

	*orphan_fd = r == -ENOENT ? fs_orphan_fd(fs, n, r) : -1;
	return *orphan_fd >= 0 ? 0 : r;
}

void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, GETXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	cleanup_located struct located at = {0};
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
	ssize_t r = size && !value ? -ENOMEM : xattr_target(fs, n, &at, &orphan_fd);
	if (r == 0 && orphan_fd >= 0) {
		r = fgetxattr(orphan_fd, name, value, size);
		r = r < 0 ? -errno : r;
	} else if (r == 0)
		r = sfs_getxattr_at(at.loc.dir.fd, at.loc.name, name, value, size);
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

#ifdef XATTR_LIST_MAX
#define LIST_ROOM XATTR_LIST_MAX
#else
#define LIST_ROOM 65536
#endif

static ssize_t list_xattrs(const struct located *at, int orphan_fd, char *buf, size_t size)
{
	if (orphan_fd < 0)
		return sfs_listxattr_at(at->loc.dir.fd, at->loc.name, buf, size);
	ssize_t r = flistxattr(orphan_fd, buf, size);
	return r < 0 ? -errno : r;
}

void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, LISTXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	cleanup_located struct located at = {0};
	cleanup_free char *list = NULL;
	ssize_t r;

	if (xattrs_hidden(fs, n)) {
		reply_xattr_bytes(req, size, NULL, 0);
		return;
	}
	int orphan_fd = -1;
	r = xattr_target(fs, n, &at, &orphan_fd);
	/* The whole list, whatever SIZE asks, so that the filtered length is
	 * what a size query reports; in one call into a buffer the size of
	 * the longest list Linux has, as a size query and a second call
	 * would race with changes between them (a larger buffer elsewhere). */
	for (size_t room = LIST_ROOM; r == 0; room *= 2) {
		free(list);
		list = malloc(room);
		r = list ? list_xattrs(&at, orphan_fd, list, room) : -ENOMEM;
		if (r != -ERANGE || room >= LIST_ROOM * 16)
			break;
		r = 0;
	}
	if (r > 0)
		r = drop_unseen(list, r, fuse_req_ctx(req)->uid == 0);
	reply_xattr_bytes(req, size, list, r);
}

/* Nobody sets or removes the ownership mark through the mount: that would
 * make a host file the agent's. */
static int refuse_mark(fuse_req_t req, struct sfs_node *n, const char *name, const char *opname)
{
	struct sfs_caller c = fs_caller_of(req);
	char path[PATH_REL_MAX];

	if (!sfs_owner_is_mark(name))
		return 0;
	int r = sfs_node_relpath(fs_of(req)->table, n, NULL, path, sizeof(path));
	return r < 0 ? r
		     : sfs_guard_deny_builtin(fs_of(req)->guard, &c, path, opname,
					      "the ownership mark is never set or removed through "
					      "the mount");
}

void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
		  int flags)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, SETXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	cleanup_located struct located at = {0};
	cleanup_creds struct sfs_creds creds = {0};
	int orphan_fd = -1;
	int r = refuse_mark(req, n, name, "setxattr");

	if (r == 0)
		r = fs_check_node(req, n, SFS_OP_XATTR, "setxattr");
	if (r == 0)
		r = xattr_target(fs, n, &at, &orphan_fd);
	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0 && orphan_fd >= 0)
		r = fsetxattr(orphan_fd, name, value, size, flags) < 0 ? -errno : 0;
	else if (r == 0)
		r = sfs_setxattr_at(at.loc.dir.fd, at.loc.name, name, value, size, flags);
	fuse_reply_err(req, -r);
}

void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	SFS_TIME_REQUEST(&fs_of(req)->stats, REMOVEXATTR);
	struct sfs_fs *fs = fs_of(req);
	struct sfs_node *n = fs_node_of(req, ino);
	cleanup_located struct located at = {0};
	cleanup_creds struct sfs_creds creds = {0};
	int orphan_fd = -1;
	int r = refuse_mark(req, n, name, "removexattr");

	if (r == 0)
		r = fs_check_node(req, n, SFS_OP_XATTR, "removexattr");
	if (r == 0)
		r = xattr_target(fs, n, &at, &orphan_fd);
	if (r == 0)
		r = sfs_creds_enter(req, &creds);
	if (r == 0 && orphan_fd >= 0)
		r = fremovexattr(orphan_fd, name) < 0 ? -errno : 0;
	else if (r == 0)
		r = sfs_removexattr_at(at.loc.dir.fd, at.loc.name, name);
	fuse_reply_err(req, -r);
}
