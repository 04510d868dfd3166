/* test_compat.c - the portability layer: nothing it resolves leaves the
 * anchor directory or follows a symlink, in either flavour. */
#include "host/compat.h"
#include "scratch.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int root;

static void make_tree(const char *dir)
{
	root = open(dir, O_RDONLY | O_DIRECTORY);
	mkdirat(root, "d", 0755);
	mkdirat(root, "d/sub", 0755);
	close(openat(root, "d/sub/file", O_CREAT | O_WRONLY, 0644));
	close(openat(root, "plain", O_CREAT | O_WRONLY, 0600));
	symlinkat("/etc", root, "abs");
	symlinkat("..", root, "up");
	symlinkat("d", root, "d-link");
	symlinkat("plain", root, "plain-link");
}

static void test_open_beneath(void)
{
	int fd = sfs_open_beneath(root, "d/sub/file", O_RDONLY, 0);
	ok(fd >= 0, "open_beneath opens a file two levels down");
	if (fd >= 0)
		close(fd);

	fd = sfs_open_beneath(root, "d/sub", O_RDONLY | O_DIRECTORY, 0);
	ok(fd >= 0, "open_beneath opens a directory");
	if (fd >= 0)
		close(fd);

	fd = sfs_open_beneath(root, "abs/passwd", O_RDONLY, 0);
	ok(fd < 0, "open_beneath refuses an absolute symlink in the path (%d)", fd);

	fd = sfs_open_beneath(root, "up/etc", O_RDONLY, 0);
	ok(fd < 0, "open_beneath refuses a symlink to '..' in the path (%d)", fd);

	fd = sfs_open_beneath(root, "d-link/sub/file", O_RDONLY, 0);
	ok(fd < 0, "open_beneath refuses even an inside symlink as a component (%d)", fd);

	fd = sfs_open_beneath(root, "../etc/passwd", O_RDONLY, 0);
	ok(fd < 0, "open_beneath refuses '..' (%d)", fd);

	fd = sfs_open_beneath(root, "d/../../etc", O_RDONLY, 0);
	ok(fd < 0, "open_beneath refuses '..' in the middle (%d)", fd);

	fd = sfs_open_beneath(root, "plain-link", O_RDONLY, 0);
	ok(fd < 0, "open_beneath does not follow a final symlink (%d)", fd);

	fd = sfs_open_beneath(root, "d/new", O_CREAT | O_EXCL | O_WRONLY, 0640);
	struct stat st;
	ok(fd >= 0 && fstatat(root, "d/new", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		   (st.st_mode & 07777) == 0640,
	   "open_beneath creates with the given mode");
	if (fd >= 0)
		close(fd);
}

static void test_stat(void)
{
	struct sfs_stat s;
	struct stat native;

	fstatat(root, "d/sub/file", &native, AT_SYMLINK_NOFOLLOW);
	int dfd = openat(root, "d/sub", O_RDONLY | O_DIRECTORY);
	ok(sfs_stat_at(dfd, "file", &s) == 0 && s.st.st_ino == native.st_ino &&
		   s.st.st_dev == native.st_dev && S_ISREG(s.st.st_mode),
	   "stat_at reports the host identity");
	ok(sfs_stat_at(root, "plain-link", &s) == 0 && S_ISLNK(s.st.st_mode),
	   "stat_at does not follow a symlink");
	ok(sfs_stat_at(root, "missing", &s) == -ENOENT, "stat_at answers -ENOENT");
	ok(sfs_stat_at(dfd, ".", &s) == 0 && S_ISDIR(s.st.st_mode), "stat_at of '.'");
	ok(sfs_stat_at(dfd, "file", &s) == 0 && s.btime_ns != 0, "stat_at reports the birth time");
	close(dfd);
}

static void test_chmod(void)
{
	struct stat st;

	ok(sfs_chmod_at(root, "plain", 0640) == 0 && fstatat(root, "plain", &st, 0) == 0 &&
		   (st.st_mode & 07777) == 0640,
	   "chmod_at changes a file's mode");
	int r = sfs_chmod_at(root, "plain-link", 0777);
	ok(r < 0 && fstatat(root, "plain", &st, 0) == 0 && (st.st_mode & 07777) == 0640,
	   "chmod_at of a symlink fails and leaves its target alone (%d)", r);
}

static void test_xattr(void)
{
	char buf[64];

	int r = sfs_setxattr_at(root, "plain", "user.sandy", "v1", 2, 0);
	if (r == -EOPNOTSUPP) {
		printf("# skip xattr cases: the scratch filesystem has no user xattrs\n");
		return;
	}
	ok(r == 0, "setxattr_at sets a user xattr");
	ok(sfs_getxattr_at(root, "plain", "user.sandy", buf, sizeof(buf)) == 2 &&
		   memcmp(buf, "v1", 2) == 0,
	   "getxattr_at reads it back");
	ok(sfs_getxattr_at(root, "plain", "user.sandy", NULL, 0) == 2,
	   "getxattr_at with size 0 reports the size");
	ok(sfs_listxattr_at(root, "plain", buf, sizeof(buf)) > 0, "listxattr_at lists it");
	ok(sfs_setxattr_at(root, "plain", "user.sandy", "v2", 2, XATTR_CREATE) == -EEXIST,
	   "XATTR_CREATE on an existing xattr is -EEXIST");
	ok(sfs_removexattr_at(root, "plain", "user.sandy") == 0 &&
		   sfs_getxattr_at(root, "plain", "user.sandy", buf, sizeof(buf)) == -ENODATA,
	   "removexattr_at removes it");
	ok(sfs_setxattr_at(root, "plain-link", "user.sandy", "v", 1, 0) == -EPERM &&
		   sfs_getxattr_at(root, "plain", "user.sandy", buf, sizeof(buf)) == -ENODATA,
	   "setxattr_at of a symlink is -EPERM and does not reach its target");
}

static void test_rename(void)
{
	struct stat a, b;

	close(openat(root, "ra", O_CREAT | O_WRONLY, 0644));
	close(openat(root, "rb", O_CREAT | O_WRONLY, 0644));
	fstatat(root, "ra", &a, 0);
	ok(sfs_rename_at(root, "ra", root, "rb", RENAME_NOREPLACE) == -EEXIST,
	   "RENAME_NOREPLACE onto an existing name is -EEXIST");
	ok(sfs_rename_at(root, "ra", root, "rb", RENAME_EXCHANGE) == 0 &&
		   fstatat(root, "rb", &b, 0) == 0 && b.st_ino == a.st_ino,
	   "RENAME_EXCHANGE swaps the two names");
	ok(sfs_rename_at(root, "rb", root, "rc", 0) == 0 && fstatat(root, "rc", &b, 0) == 0 &&
		   b.st_ino == a.st_ino,
	   "plain rename moves the name");
}

int main(void)
{
	make_tree(scratch_dir());
	printf("# flavour: %s\n", sfs_compat_flavour());
	test_open_beneath();
	test_stat();
	test_chmod();
	test_xattr();
	test_rename();
	close(root);
	return tap_done();
}
