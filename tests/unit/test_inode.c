/* test_inode.c - the inode table: identities, names kept true through
 * renames and unlinks, reused inode numbers, the bounded anchor cache and
 * the bounded kept fds. */
#include "inode.h"
#include "scratch.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int root;
static struct sfs_table *table;

static struct sfs_node *intern(struct sfs_node *parent, int dirfd, const char *name)
{
	struct sfs_stat st;

	if (sfs_stat_at(dirfd, name, &st) < 0)
		return NULL;
	return sfs_table_intern(table, parent, name, &st, false, 0);
}

static bool relpath_is(struct sfs_node *n, const char *expected)
{
	char buf[4096];
	int r = sfs_node_relpath(table, n, NULL, buf, sizeof(buf));

	if (r < 0 || strcmp(buf, expected) != 0) {
		printf("#   relpath: %s\n", r < 0 ? strerror(-r) : buf);
		return false;
	}
	return true;
}

static void test_identity(void)
{
	struct sfs_node *r = sfs_table_root(table);
	struct sfs_node *a = intern(r, root, "a");
	struct sfs_node *a2 = intern(r, root, "a");
	struct sfs_node_info info;

	ok(a && a == a2, "looking a name up twice gives the same node");
	ok(sfs_node_id(r) == 1 && sfs_node_from_id(table, 1) == r, "the root is node id 1");
	ok(sfs_node_from_id(table, sfs_node_id(a)) == a, "node ids map back to their node");

	int dfd = openat(root, "a", O_RDONLY | O_DIRECTORY);
	struct sfs_node *b = intern(a, dfd, "b");
	close(dfd);
	dfd = openat(root, "a/b", O_RDONLY | O_DIRECTORY);
	struct sfs_node *c = intern(b, dfd, "c");
	close(dfd);
	ok(relpath_is(c, "a/b/c") && relpath_is(r, ""), "relpath joins the names from the root");

	/* A hard link: one inode, two names; the node follows the last. */
	linkat(root, "a/b/c", root, "a/c-link", 0);
	dfd = openat(root, "a", O_RDONLY | O_DIRECTORY);
	struct sfs_node *c2 = intern(a, dfd, "c-link");
	close(dfd);
	ok(c2 == c && relpath_is(c, "a/c-link"), "a hard link is the same node, at its new name");

	/* The same inode number with another birth time is another file. */
	struct sfs_stat st;
	sfs_stat_at(root, "a/c-link", &st);
	sfs_node_info(table, c, &info);
	uint64_t gen = info.generation;
	st.btime_ns += 1;
	struct sfs_node *reused = sfs_table_intern(table, a, "c-link", &st, false, 0);
	sfs_node_info(table, reused, &info);
	ok(reused != c && info.generation != gen,
	   "a reused inode number becomes a new node with a new generation");
	st.st.st_mode = S_IFDIR | 0755;
	st.btime_ns -= 1;
	struct sfs_node *retyped = sfs_table_intern(table, a, "c-link", &st, false, 0);
	ok(retyped != c && retyped != reused, "a changed file type is a new node too");
	sfs_table_forget(table, reused, 1);
	sfs_table_forget(table, retyped, 1);

	struct sfs_table_stats before, after;
	sfs_table_stats(table, &before);
	sfs_table_forget(table, c, 2);
	sfs_table_forget(table, b, 1);
	sfs_table_stats(table, &after);
	ok(after.nodes == before.nodes - 2,
	   "forgetting the last references frees nodes (%llu -> %llu)",
	   (unsigned long long)before.nodes, (unsigned long long)after.nodes);
	sfs_table_forget(table, a, 2);
	sfs_table_stats(table, &after);
	ok(after.nodes == 0, "the table is empty once the kernel forgot everything (%llu)",
	   (unsigned long long)after.nodes);
}

static void test_rename_unlink(void)
{
	struct sfs_node *r = sfs_table_root(table);
	struct sfs_stat old_st, new_st;

	close(openat(root, "x", O_CREAT | O_WRONLY, 0644));
	close(openat(root, "y", O_CREAT | O_WRONLY, 0644));
	struct sfs_node *x = intern(r, root, "x");
	struct sfs_node *y = intern(r, root, "y");

	sfs_stat_at(root, "x", &old_st);
	sfs_stat_at(root, "y", &new_st);
	renameat2(root, "x", root, "y", RENAME_EXCHANGE);
	sfs_table_note_rename(table, r, "x", &old_st, r, "y", &new_st, true);
	ok(relpath_is(x, "y") && relpath_is(y, "x"), "RENAME_EXCHANGE swaps the nodes' names");

	sfs_stat_at(root, "y", &old_st);
	sfs_stat_at(root, "x", &new_st);
	renameat(root, "y", root, "x");
	sfs_table_note_rename(table, r, "y", &old_st, r, "x", &new_st, false);
	char buf[64];
	ok(relpath_is(x, "x") && sfs_node_relpath(table, y, NULL, buf, sizeof(buf)) == -ENOENT,
	   "a rename over a name detaches the node that was there (gone: ENOENT)");

	sfs_stat_at(root, "x", &old_st);
	unlinkat(root, "x", 0);
	sfs_table_note_unlink(table, r, "x", &old_st);
	ok(sfs_node_relpath(table, x, NULL, buf, sizeof(buf)) == -ENOENT,
	   "an unlinked node has no name any more (ENOENT, as natively)");
	sfs_table_forget(table, x, 1);
	sfs_table_forget(table, y, 1);
}

static void test_cycle(void)
{
	struct sfs_node *r = sfs_table_root(table);

	mkdirat(root, "p", 0755);
	mkdirat(root, "p/q", 0755);
	struct sfs_node *p = intern(r, root, "p");
	int dfd = openat(root, "p", O_RDONLY | O_DIRECTORY);
	struct sfs_node *q = intern(p, dfd, "q");
	close(dfd);
	/* The host moves p/q out and p under it, behind the table's back. */
	renameat(root, "p/q", root, "q");
	renameat(root, "p", root, "q/p");
	dfd = openat(root, "q", O_RDONLY | O_DIRECTORY);
	struct sfs_node *p2 = intern(q, dfd, "p");
	close(dfd);
	char buf[256];
	int rp = sfs_node_relpath(table, p2, NULL, buf, sizeof(buf));
	ok(p2 == p && (rp == -ESTALE || rp == 0),
	   "a host move that would make a cycle leaves no cycle behind (%d)", rp);
	struct sfs_anchor a;
	int ra = sfs_anchor_get(table, q, &a);
	ok(ra == -ESTALE || (ra == 0 && a.fd >= 0),
	   "an anchor on a node with a stale parent answers, never loops (%d)", ra);
	if (ra == 0)
		sfs_anchor_put(&a);
	sfs_table_forget(table, p, 1);
	sfs_table_forget(table, q, 1);
}

static void test_anchors(void)
{
	struct sfs_node *r = sfs_table_root(table);
	struct sfs_node *dirs[12];
	struct sfs_anchor pinned[6];
	struct sfs_table_stats s;
	char name[16];

	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "dir%d", i);
		mkdirat(root, name, 0755);
		dirs[i] = intern(r, root, name);
	}
	for (int i = 0; i < 12; i++) {
		struct sfs_anchor a;
		if (sfs_anchor_get(table, dirs[i], &a) == 0)
			sfs_anchor_put(&a);
	}
	sfs_table_stats(table, &s);
	ok(s.anchors_cached <= 4, "the anchor cache stays within its limit (%llu cached)",
	   (unsigned long long)s.anchors_cached);

	bool all = true;
	for (int i = 0; i < 6; i++)
		all &= sfs_anchor_get(table, dirs[i], &pinned[i]) == 0;
	for (int i = 0; i < 6; i++)
		all &= fcntl(pinned[i].fd, F_GETFD) >= 0;
	ok(all, "pinned anchors stay open beyond the limit");
	for (int i = 0; i < 6; i++)
		sfs_anchor_put(&pinned[i]);

	/* The host replaces dir11 by a symlink to a directory outside. */
	struct sfs_anchor a;
	sfs_anchor_get(table, dirs[11], &a);
	sfs_anchor_put(&a);
	for (int i = 0; i < 8; i++) { /* push dir11 out of the cache */
		if (sfs_anchor_get(table, dirs[i], &a) == 0)
			sfs_anchor_put(&a);
	}
	unlinkat(root, "dir11", AT_REMOVEDIR);
	symlinkat("/etc", root, "dir11");
	int rr = sfs_anchor_get(table, dirs[11], &a);
	ok(rr == -ESTALE, "a directory replaced by a symlink answers -ESTALE, not the target (%d)",
	   rr);
	if (rr == 0)
		sfs_anchor_put(&a);

	/* The host replaces dir10 by another directory: same name, new inode. */
	unlinkat(root, "dir10", AT_REMOVEDIR);
	mkdirat(root, "dir10-new", 0755);
	renameat(root, "dir10-new", root, "dir10");
	rr = sfs_anchor_get(table, dirs[10], &a);
	ok(rr == -ESTALE, "a directory replaced by another answers -ESTALE (%d)", rr);
	if (rr == 0)
		sfs_anchor_put(&a);
	for (int i = 0; i < 12; i++)
		sfs_table_forget(table, dirs[i], 1);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Kept fds: one per node, the least recently used closed past the limit,
 * a read-write one not replaced by a narrower one, closed when the kernel
 * forgets the node. */
static void test_kept(void)
{
	struct sfs_node *r = sfs_table_root(table);
	struct sfs_node *f[4];
	int fds[4];
	char name[16];
	unsigned kept;
	uint64_t evicted;

	sfs_table_set_kept_limit(table, 3);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "kept%d", i);
		fds[i] = openat(root, name, O_CREAT | O_RDWR | O_CLOEXEC, 0444);
		f[i] = intern(r, root, name);
		sfs_node_keep_fd(table, f[i], fds[i], O_RDWR);
	}
	sfs_table_kept_counts(table, &kept, &evicted);
	ok(kept == 3 && evicted == 1 && !fd_open(fds[0]) && fd_open(fds[3]),
	   "past the limit the least recently kept fd is closed (%u kept, %llu evicted)", kept,
	   (unsigned long long)evicted);
	ok(sfs_node_kept_dup(table, f[0], O_WRONLY) < 0 && sfs_node_kept_accmode(table, f[0]) < 0,
	   "the node whose fd went has none");
	int d = sfs_node_kept_dup(table, f[1], O_WRONLY);
	ok(d >= 0 && d != fds[1] && write(d, "x", 1) == 1, "a duplicate of a read-write fd writes");
	close(d);
	/* f[1] is now the most recent: keeping another pushes out f[2]. */
	int more = openat(root, "kept0", O_RDONLY | O_CLOEXEC);
	sfs_node_keep_fd(table, f[0], more, O_RDONLY);
	ok(!fd_open(fds[2]) && fd_open(fds[1]), "a duplicate counts as a use (f1 stays, f2 goes)");
	ok(sfs_node_kept_dup(table, f[0], O_WRONLY) < 0, "a read-only kept fd serves no write");
	int narrow = openat(root, "kept1", O_RDONLY | O_CLOEXEC);
	sfs_node_keep_fd(table, f[1], narrow, O_RDONLY);
	ok(!fd_open(narrow) && fd_open(fds[1]),
	   "a read-write kept fd is not replaced by a read-only one");
	sfs_node_drop_kept(table, f[3]);
	ok(!fd_open(fds[3]) && sfs_node_kept_accmode(table, f[3]) < 0, "dropped, it is closed");
	int wr = openat(root, "kept3", O_WRONLY | O_CLOEXEC);
	sfs_node_keep_fd(table, f[3], wr, O_WRONLY);
	int rd = openat(root, "kept3", O_RDONLY | O_CLOEXEC);
	sfs_node_keep_fd(table, f[3], rd, O_RDONLY);
	ok(!fd_open(rd) && sfs_node_kept_accmode(table, f[3]) == O_WRONLY,
	   "a write-only kept fd is not replaced by a read-only one");
	sfs_node_drop_kept(table, f[3]);
	for (int i = 0; i < 4; i++)
		sfs_table_forget(table, f[i], 1);
	sfs_table_kept_counts(table, &kept, &evicted);
	ok(kept == 0 && !fd_open(fds[1]) && !fd_open(more),
	   "forgotten nodes close their kept fds (%u kept)", kept);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "kept%d", i);
		unlinkat(root, name, 0);
	}
}

int main(void)
{
	const char *dir = scratch_dir();
	struct sfs_stat st;

	root = open(dir, O_RDONLY | O_DIRECTORY);
	mkdirat(root, "a", 0755);
	mkdirat(root, "a/b", 0755);
	close(openat(root, "a/b/c", O_CREAT | O_WRONLY, 0644));
	sfs_stat_fd(root, &st);
	int anchor_root = open(dir, sfs_anchor_flags() & ~O_NOFOLLOW);
	ok(sfs_table_new(anchor_root, &st, 4, &table) == 0, "a table on the scratch directory");
	test_identity();
	test_rename_unlink();
	test_cycle();
	test_anchors();
	test_kept();
	sfs_table_free(table);
	close(root);
	return tap_done();
}
