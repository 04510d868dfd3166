/* test_owner.c - ownership (fusefs/owner.c): the mark beside a file binds
 * to that inode (a copy on another file, or a new file at the same name,
 * is not owned), symlinks and files that cannot carry it are recorded in
 * the store's file and read back by the next daemon, a record goes with
 * the inode's last name, a record of one type never stands for another,
 * and the mark is recognised in no other spelling. */
#include "owner.h"
#include "scratch.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int dir, store;

static struct sfs_stat stat_of(const char *name)
{
	struct sfs_stat st = {0};

	if (sfs_stat_at(dir, name, &st) < 0)
		printf("#   stat %s: %s\n", name, strerror(errno));
	return st;
}

static void make(const char *name)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, "x\n", 2) != 2) {
		perror(name);
		exit(1);
	}
	close(fd);
}

static int owned(struct sfs_owner *o, const char *name)
{
	struct sfs_stat st = stat_of(name);

	return sfs_owner_check(o, dir, name, &st);
}

static void test_mark(struct sfs_owner *o)
{
	struct sfs_stat st;
	unsigned char v[16];

	make("own.c");
	make("host.c");
	st = stat_of("own.c");
	ok(sfs_owner_mark(o, -1, dir, "own.c", &st, true) == 0, "a new file is marked");
	ok(owned(o, "own.c") == 1, "... and owned");
	ok(owned(o, "host.c") == 0, "a file the agent did not make is not owned");
	char path[512];
	snprintf(path, sizeof(path), "%s/own.c", scratch_path);
	ssize_t n = lgetxattr(path, SFS_OWNER_XATTR, v, sizeof(v));
	ok(n == 8, "the mark is 8 bytes beside the file (%zd)", n);
	snprintf(path, sizeof(path), "%s/host.c", scratch_path);
	ok(n == 8 && lsetxattr(path, SFS_OWNER_XATTR, v, 8, 0) == 0 && owned(o, "host.c") == 0,
	   "the mark copied onto another file proves nothing");
	/* The user's editor writes a new file over the agent's, keeping its
	 * extended attributes. */
	make("own.c.tmp");
	snprintf(path, sizeof(path), "%s/own.c.tmp", scratch_path);
	if (n == 8)
		lsetxattr(path, SFS_OWNER_XATTR, v, 8, 0);
	renameat(dir, "own.c.tmp", dir, "own.c");
	ok(owned(o, "own.c") == 0, "a file the user re-creates at the name is the user's");

	/* A fresh mark leaves mtime == ctime, as a file just made has. */
	make("fresh.c");
	st = stat_of("fresh.c");
	int fd = openat(dir, "fresh.c", O_RDONLY);
	sfs_owner_mark(o, fd, dir, "fresh.c", &st, true);
	close(fd);
	st = stat_of("fresh.c");
	ok(st.st.st_mtim.tv_sec == st.st.st_ctim.tv_sec &&
		   st.st.st_mtim.tv_nsec == st.st.st_ctim.tv_nsec,
	   "after a fresh mark, mtime equals ctime");
	/* A moved file keeps its mtime. */
	struct timespec old[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	make("moved.c");
	utimensat(dir, "moved.c", old, 0);
	st = stat_of("moved.c");
	sfs_owner_mark(o, -1, dir, "moved.c", &st, false);
	st = stat_of("moved.c");
	ok(st.st.st_mtim.tv_sec == 1000000000 && owned(o, "moved.c") == 1,
	   "a mark on a file moved there keeps its mtime");
}

static void test_records(struct sfs_owner **o)
{
	struct sfs_stat st;

	symlinkat("own.c", dir, "link");
	st = stat_of("link");
	ok(sfs_owner_mark(*o, -1, dir, "link", &st, true) == 0 && owned(*o, "link") == 1,
	   "a symlink, which cannot carry the mark, is recorded");
	symlinkat("own.c", dir, "other-link");
	ok(owned(*o, "other-link") == 0, "another symlink is not");
	int fd = openat(store, "owned", O_RDONLY);
	char buf[256] = "";
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	ok(n > 0 && buf[0] == '+' && strstr(buf, ":120000\n"),
	   "the record is a line in the store's 'owned' file, with the type");

	/* The next daemon reads the records. */
	sfs_owner_free(*o);
	ok(sfs_owner_new(store, o) == 0 && owned(*o, "link") == 1,
	   "the next daemon finds the record");

	/* A record of a symlink never stands for a file of the same number. */
	struct sfs_stat fake = stat_of("link");
	fake.st.st_mode = S_IFREG | 0644;
	ok(sfs_owner_check(*o, -1, "link", &fake) == 0,
	   "a file reusing a recorded symlink's number is not owned");

	st = stat_of("link");
	sfs_owner_forget(*o, &st);
	ok(owned(*o, "link") == 0, "forgotten when its last name goes");
	sfs_owner_free(*o);
	ok(sfs_owner_new(store, o) == 0 && owned(*o, "link") == 0, "... also for the next daemon");

	/* Without a store nothing is recorded, and symlinks are not owned. */
	struct sfs_owner *bare;
	symlinkat("x", dir, "bare-link");
	st = stat_of("bare-link");
	ok(sfs_owner_new(-1, &bare) == 0 &&
		   sfs_owner_mark(bare, -1, dir, "bare-link", &st, true) < 0 &&
		   sfs_owner_check(bare, dir, "bare-link", &st) == 0,
	   "without a store, a symlink cannot be marked");
	sfs_owner_free(bare);
}

static void test_compaction(struct sfs_owner **o)
{
	struct sfs_stat st;
	char name[32];

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		symlinkat("x", dir, name);
		st = stat_of(name);
		sfs_owner_mark(*o, -1, dir, name, &st, true);
		if (i % 10)
			sfs_owner_forget(*o, &st);
	}
	sfs_owner_free(*o);
	ok(sfs_owner_new(store, o) == 0, "300 records, 270 of them forgotten, read back");
	struct stat fst;
	fstatat(store, "owned", &fst, 0);
	int live = 0;
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		live += owned(*o, name);
	}
	ok(live == 30, "the 30 kept are owned (%d)", live);
	ok(fst.st_size < 30 * 40, "the file was written anew without the forgotten (%lld bytes)",
	   (long long)fst.st_size);
}

int main(void)
{
	struct sfs_owner *o = NULL;
	const char *base = scratch_dir();
	char path[512];

	snprintf(path, sizeof(path), "%s/store", base);
	mkdir(path, 0700);
	store = open(path, O_RDONLY | O_DIRECTORY);
	dir = open(base, O_RDONLY | O_DIRECTORY);
	if (!ok(store >= 0 && dir >= 0 && sfs_owner_new(store, &o) == 0, "an owner on a store"))
		return tap_done();
	test_mark(o);
	test_records(&o);
	test_compaction(&o);
	ok(sfs_owner_is_mark("user.sandyfs") && !sfs_owner_is_mark("user.sandyfs.x") &&
		   !sfs_owner_is_mark("trusted.sandyfs") && !sfs_owner_is_mark("user.other"),
	   "the mark's name, and nothing else, is the mark");
	sfs_owner_free(o);
	close(store);
	close(dir);
	return tap_done();
}
