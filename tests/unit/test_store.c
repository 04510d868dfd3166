/* test_store.c - the project's store (fusefs/host/store.c): its default place,
 * one per project; opening it makes its tree and takes the shared lock;
 * mirrors of SOURCE's directories made on demand with their owner and
 * mode; clearing refused while a daemon holds it, complete once none does;
 * the size of the private directories. */
#include "host/store.h"
#include "host/compat.h"
#include "scratch.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[256];

static char *at(const char *rel)
{
	static char bufs[4][512];
	static int k;
	char *b = bufs[k++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", base, rel);
	return b;
}

static void test_default_path(void)
{
	char *a = NULL, *b = NULL, *c = NULL;

	setenv("SANDY_CACHE_DIR", "/cache", 1);
	/* Called before ok(): its arguments are evaluated in no set order. */
	int r = sfs_store_default_path("/home/u/my proj", &a);
	ok(r == 0 && !strncmp(a, "/cache/projects/my_proj-", 24) && strlen(a) == 24 + 16,
	   "under $SANDY_CACHE_DIR/projects, named after the project (%s)", a ? a : "none");
	ok(sfs_store_default_path("/home/v/my proj", &b) == 0 && strcmp(a, b) != 0,
	   "another project of the same name has another store");
	free(b);
	ok(sfs_store_default_path("/home/u/my proj", &b) == 0 && !strcmp(a, b),
	   "the same project always has the same one");
	unsetenv("SANDY_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	r = sfs_store_default_path("/p", &c);
	ok(r == 0 && !strncmp(c, "/xdg/sandy/projects/p-", 22),
	   "else under $XDG_CACHE_HOME/sandy (%s)", c ? c : "none");
	free(c);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	r = sfs_store_default_path("/", &c);
	ok(r == 0 && !strncmp(c, "/home/u/.cache/sandy/projects/root-", 35),
	   "else under ~/.cache/sandy; SOURCE / is named 'root' (%s)", c ? c : "none");
	free(a);
	free(b);
	free(c);
}

static void test_open_mirror_clear(void)
{
	struct sfs_store *s = NULL, *s2 = NULL;
	char *err = NULL;
	struct stat st;
	uint64_t bytes, files;

	mkdir(at("src"), 0755);
	mkdir(at("src/a"), 0750);
	mkdir(at("src/a/b"), 0711);
	int src = open(at("src"), O_RDONLY | O_DIRECTORY);
	ok(sfs_store_open(at("store/x"), "/the/src", src, &s, &err) == 0, "open makes the store");
	ok(stat(at("store/x/tree"), &st) == 0 && S_ISDIR(st.st_mode) &&
		   stat(at("store/x/lock"), &st) == 0,
	   "with its tree and its lock");
	ok(sfs_store_open(at("store/x"), "/the/src", src, &s2, &err) == 0,
	   "a second daemon of the project opens it too (the lock is shared)");
	sfs_store_free(s2);

	ok(sfs_store_mirror(s, src, "a/b", false) == -ENOENT,
	   "a mirror that does not exist, asked without CREATE: ENOENT");
	int m = sfs_store_mirror(s, src, "a/b", true);
	ok(m >= 0 && stat(at("store/x/tree/a/b"), &st) == 0, "CREATE makes it");
	struct stat a, b;
	ok(stat(at("store/x/tree/a"), &a) == 0 && (a.st_mode & 07777) == 0750 &&
		   stat(at("store/x/tree/a/b"), &b) == 0 && (b.st_mode & 07777) == 0711,
	   "with the modes of SOURCE's directories (%o, %o)", a.st_mode & 07777, b.st_mode & 07777);
	struct stat fst;
	ok(m >= 0 && fstat(m, &fst) == 0 && fst.st_ino == b.st_ino, "the fd is on the mirror");
	if (m >= 0)
		close(m);
	ok(sfs_store_mirror(s, src, "", false) >= 0, "the root's mirror is the tree itself");
	ok(sfs_store_mirror(s, src, "a/../b", true) == -EINVAL, "'..' is refused");
	mkdir(at("store/x/tree/a/b/node_modules"), 0755);
	close(open(at("store/x/tree/a/b/node_modules/f.js"), O_WRONLY | O_CREAT, 0644));
	ok(sfs_store_usage(at("store/x"), &bytes, &files) == 0 && files == 4,
	   "usage counts what is below the tree (%llu files)", (unsigned long long)files);

	ok(sfs_store_clear(at("store/x"), &err) == -EBUSY && err && strstr(err, "is using it"),
	   "clearing is refused while a daemon holds it: %s", err ? err : "");
	free(err);
	err = NULL;
	ok(stat(at("store/x/tree/a/b/node_modules/f.js"), &st) == 0, "and changes nothing");
	sfs_store_free(s);
	/* A read-only directory inside, as some packages ship. */
	chmod(at("store/x/tree/a/b/node_modules"), 0555);
	ok(sfs_store_clear(at("store/x"), &err) == 0 && stat(at("store/x"), &st) < 0,
	   "once none does, it is removed whole");
	ok(stat(at("src/a/b"), &st) == 0, "SOURCE is untouched");
	ok(sfs_store_clear(at("store/x"), &err) == 0, "clearing a store that is gone is fine");
	ok(sfs_store_usage(at("store/x"), &bytes, &files) == 0 && files == 0 && bytes == 0,
	   "and it has no size");
	free(err);
	close(src);
}

int main(void)
{
	snprintf(base, sizeof(base), "%s", scratch_dir());
	test_default_path();
	test_open_mirror_clear();
	return tap_done();
}
