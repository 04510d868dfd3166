/*
 * test_gitobj: git's objects read from their bytes (fusefs/policy/gitobj.c):
 * the mode canonicalisation git applies to every tree entry, the reading
 * of tree entries, and the checks of trees and commits the import makes
 * before it copies anything. Objects are written here byte by byte, as a
 * hostile commit would write them, with no git or libgit2 in between.
 *
 * What git 2.39 (Debian 12) did with trees holding these modes, checked
 * out with `git checkout` after `git hash-object --literally -t tree`
 * (git ls-tree shows the same canonical mode):
 *   120755 -> a symlink        160755, 000000, 020644, 130000, 170000,
 *   100664, 100600, 100000     060000 -> a gitlink (an empty directory)
 *          -> a file, 0644     40755 -> a directory
 *   100700 -> a file, 0755     1100644 -> a file, 0644 (libgit2 refuses
 *                              to read such a tree at all)
 * `git fsck --strict` only reported "badFilemode" for them and exited 0;
 * a zero-padded mode (040000) made it fail.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/gitobj.h"
#include "tap.h"

/* ---- trees, byte by byte ------------------------------------------------ */

struct ent {
	const char *mode;
	const char *name;
	size_t len; /* 0: strlen(name) */
	int id;	    /* every byte of the id; 0: 0x11, -1: the null id */
};

struct buf {
	char b[8192];
	size_t n;
};

static void add(struct buf *t, const char *mode, const char *name, size_t len, unsigned char id)
{
	size_t ml = strlen(mode);

	memcpy(t->b + t->n, mode, ml);
	t->n += ml;
	t->b[t->n++] = ' ';
	memcpy(t->b + t->n, name, len);
	t->n += len;
	t->b[t->n++] = '\0';
	memset(t->b + t->n, id, SFS_GIT_RAWSZ);
	t->n += SFS_GIT_RAWSZ;
}

static struct buf tree_of(size_t n, const struct ent *e)
{
	struct buf t = {.n = 0};

	for (size_t i = 0; i < n; i++)
		add(&t, e[i].mode, e[i].name, e[i].len ? e[i].len : strlen(e[i].name),
		    (unsigned char)(e[i].id == -1 ? 0
				    : e[i].id	  ? e[i].id
						  : 0x11));
	return t;
}

#define TREE(...)                                                                                  \
	tree_of(sizeof((const struct ent[]){__VA_ARGS__}) / sizeof(struct ent),                    \
		(const struct ent[]){__VA_ARGS__})

static const char *show(const char *s, size_t len)
{
	static char out[4][256];
	static int k;
	char *o = out[k++ % 4];
	size_t j = 0;

	for (size_t i = 0; i < len && j + 5 < sizeof(out[0]); i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f)
			o[j++] = (char)c;
		else
			j += (size_t)snprintf(o + j, sizeof(out[0]) - j, "\\x%02x", c);
	}
	o[j] = '\0';
	return o;
}

/* Tree T is refused for a reason whose text holds WHY, at entry AT (NULL:
 * at none). */
static void tree_refused(const char *what, struct buf t, const char *why, const char *at)
{
	struct sfs_gitobj_fault f = {0};
	int r = sfs_gitobj_check_tree(t.b, t.n, &f);
	bool where = at ? f.at && f.atlen == strlen(at) && !memcmp(f.at, at, f.atlen) : !f.at;

	if (!ok(r == 1 && f.why && strstr(f.why, why) && where, "tree refused: %s (%s)", what, why))
		printf("#   got %d: %s at '%s'\n", r, f.why ? f.why : "(none)",
		       f.at ? show(f.at, f.atlen) : "(none)");
}

static void tree_sound(const char *what, struct buf t)
{
	struct sfs_gitobj_fault f = {0};
	int r = sfs_gitobj_check_tree(t.b, t.n, &f);

	if (!ok(r == 0, "tree sound: %s", what))
		printf("#   got %d: %s at '%s'\n", r, f.why ? f.why : "(none)",
		       f.at ? show(f.at, f.atlen) : "(none)");
}

static void test_canon_mode(void)
{
	static const struct {
		unsigned raw, canon;
	} m[] = {
		{0100644, SFS_GIT_MODE_FILE},	 {0100755, SFS_GIT_MODE_EXEC},
		{0120000, SFS_GIT_MODE_LINK},	 {0040000, SFS_GIT_MODE_TREE},
		{0160000, SFS_GIT_MODE_GITLINK}, {0120755, SFS_GIT_MODE_LINK},
		{0120644, SFS_GIT_MODE_LINK},	 {0160755, SFS_GIT_MODE_GITLINK},
		{0100664, SFS_GIT_MODE_FILE},	 {0100600, SFS_GIT_MODE_FILE},
		{0100000, SFS_GIT_MODE_FILE},	 {0100700, SFS_GIT_MODE_EXEC},
		{0100100, SFS_GIT_MODE_EXEC},	 {0100011, SFS_GIT_MODE_FILE},
		{0040755, SFS_GIT_MODE_TREE},	 {0000000, SFS_GIT_MODE_GITLINK},
		{0020644, SFS_GIT_MODE_GITLINK}, {0130000, SFS_GIT_MODE_GITLINK},
		{0170000, SFS_GIT_MODE_GITLINK}, {0060000, SFS_GIT_MODE_GITLINK},
		{01100644, SFS_GIT_MODE_FILE},	 {0777777, SFS_GIT_MODE_GITLINK},
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		ok(sfs_git_canon_mode(m[i].raw) == m[i].canon, "git reads mode %06o as %06o",
		   m[i].raw, m[i].canon);
}

static void test_tree_next(void)
{
	struct buf t = TREE({"100644", "a"}, {"120755", "lnk", 0, 0x22}, {"40000", "d"});
	struct sfs_gitobj_entry e;
	size_t pos = 0;
	int r;

	r = sfs_gitobj_tree_next(t.b, t.n, &pos, &e);
	ok(r == 1 && e.mode == 0100644 && e.len == 1 && !memcmp(e.name, "a", 1) &&
		   e.mode_len == 6 && e.id[0] == 0x11,
	   "the first entry: 100644 a");
	r = sfs_gitobj_tree_next(t.b, t.n, &pos, &e);
	ok(r == 1 && e.mode == 0120755 && sfs_git_canon_mode(e.mode) == SFS_GIT_MODE_LINK &&
		   e.len == 3 && e.id[19] == 0x22,
	   "the second: 120755 lnk, written as such, a symlink to git");
	r = sfs_gitobj_tree_next(t.b, t.n, &pos, &e);
	ok(r == 1 && e.mode == 040000 && e.mode_len == 5, "the third: 40000 d");
	ok(sfs_gitobj_tree_next(t.b, t.n, &pos, &e) == 0 && pos == t.n, "then the end");
	ok(sfs_gitobj_tree_next("", 0, &(size_t){0}, &e) == 0, "an empty tree has no entry");

	static const struct {
		const char *what, *bytes;
		size_t len;
	} bad[] = {
		{"no space after the mode", "100644", 6},
		{"an empty mode", " a\0", 3},
		{"a non-octal digit", "100648 a\0xxxxxxxxxxxxxxxxxxxx", 29},
		{"no NUL after the name", "100644 abc", 10},
		{"an id cut short", "100644 a\0xxxxxxxxxxxxxxxxxxx", 28},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pos = 0;
		ok(sfs_gitobj_tree_next(bad[i].bytes, bad[i].len, &pos, &e) == -EINVAL,
		   "unreadable: %s", bad[i].what);
	}
}

static void test_trees(void)
{
	tree_sound("the five modes, in git's order",
		   TREE({"100644", "README"}, {"100755", "build.sh"}, {"40000", "lib"},
			{"120000", "link"}, {"160000", "vendor"}));
	tree_sound("an empty tree", (struct buf){.n = 0});
	tree_sound("a file 'a.c' before a directory 'a' ('a/' sorts after 'a.c')",
		   TREE({"100644", "a.c"}, {"40000", "a"}));
	tree_sound("a directory 'a' before a file 'a0' ('/' < '0')",
		   TREE({"40000", "a"}, {"100644", "a0"}));
	tree_sound("names with bytes above 0x7f sort bytewise, unsigned",
		   TREE({"100644", "z"}, {"100644", "\xc3\xa9"}));
	tree_sound(".github, .gitignore, x.git: not .git",
		   TREE({"40000", ".github"}, {"100644", ".gitignore"}, {"100644", "x.git"}));

	tree_refused("120755, the symlink in disguise", TREE({"100644", "a"}, {"120755", "lnkabs"}),
		     "badFilemode", "lnkabs");
	tree_refused("160755, the gitlink in disguise", TREE({"160755", "sub"}), "badFilemode",
		     "sub");
	tree_refused("100664, which fsck passes but is no mode git writes", TREE({"100664", "old"}),
		     "badFilemode", "old");
	tree_refused("40755", TREE({"40755", "d"}), "badFilemode", "d");
	tree_refused("000000", TREE({"0", "z"}), "zeroPaddedFilemode", "z");
	tree_refused("040000, zero-padded", TREE({"040000", "d"}), "zeroPaddedFilemode", "d");
	tree_refused("0100644, zero-padded", TREE({"0100644", "f"}), "zeroPaddedFilemode", "f");
	tree_refused("1100644, a mode beyond 16 bits", TREE({"1100644", "f"}), "badFilemode", "f");
	tree_refused("an empty name", TREE({"100644", ""}), "emptyName", "");
	tree_refused("a name with '/'", TREE({"100644", "a/b"}), "fullPathname", "a/b");
	tree_refused("'.'", TREE({"40000", "."}), "hasDot", ".");
	tree_refused("'..'", TREE({"40000", ".."}), "hasDotdot", "..");
	tree_refused(".git", TREE({"40000", ".git"}), "hasDotgit", ".git");
	tree_refused(".GIT", TREE({"40000", ".GIT"}), "hasDotgit", ".GIT");
	tree_refused("git~1 (NTFS short name)", TREE({"40000", "git~1"}), "hasDotgit", "git~1");
	tree_refused(".git. (NTFS trailing dot)", TREE({"40000", ".git."}), "hasDotgit", ".git.");
	tree_refused(".g\\u200cit (HFS+ ignorable)", TREE({"40000", ".g\xe2\x80\x8cit"}),
		     "hasDotgit", ".g\xe2\x80\x8cit");
	tree_refused("x\\.git\\config (a backslash path on Windows)",
		     TREE({"100644", "x\\.git\\config"}), "hasDotgit", "x\\.git\\config");
	tree_refused(".gitmodules as a symlink", TREE({"120000", ".gitmodules"}),
		     "gitmodulesSymlink", ".gitmodules");
	tree_refused("the null id", TREE({"100644", "a", 0, -1}), "nullSha1", "a");
	tree_refused("names out of order", TREE({"100644", "b"}, {"100644", "a"}), "treeNotSorted",
		     "a");
	tree_refused("a directory 'a' before a file 'a.c' ('a/' > 'a.c')",
		     TREE({"40000", "a"}, {"100644", "a.c"}), "treeNotSorted", "a.c");
	tree_refused("a name twice", TREE({"100644", "a"}, {"100644", "a"}), "duplicateEntries",
		     "a");
	tree_refused("a file and a directory of one name, side by side",
		     TREE({"100644", "a"}, {"40000", "a"}), "duplicateEntries", "a");
	tree_refused("a file and a directory of one name, apart",
		     TREE({"100644", "a"}, {"100644", "a.c"}, {"40000", "a"}), "duplicateEntries",
		     "a");

	struct buf t = TREE({"100644", "a"});
	struct buf cut = t;
	cut.n--;
	tree_refused("an id one byte short", cut, "badTree", NULL);
	struct buf extra = t;
	memcpy(extra.b + extra.n, "100644", 6);
	extra.n += 6;
	tree_refused("trailing bytes after the last entry", extra, "badTree", NULL);
}

/* ---- commits ------------------------------------------------------------ */

#define TREE_LINE "tree 0123456789abcdef0123456789abcdef01234567\n"
#define PARENT1	  "parent 89abcdef0123456789abcdef0123456789abcdef\n"
#define PARENT2	  "parent 1111111111111111111111111111111111111111\n"
#define AUTHOR	  "author A U Thor <a@example.org> 1700000000 +0100\n"
#define COMMITTER "committer C O Mitter <c@example.org> 1700000001 -0530\n"

static void commit_is(const char *what, const char *text, size_t len, const char *why)
{
	struct sfs_gitobj_fault f = {0};
	int r = sfs_gitobj_check_commit(text, len, &f);

	if (!why) {
		if (!ok(r == 0, "commit sound: %s", what))
			printf("#   got %d: %s\n", r, f.why ? f.why : "(none)");
		return;
	}
	if (!ok(r == 1 && f.why && strstr(f.why, why), "commit refused: %s (%s)", what, why))
		printf("#   got %d: %s\n", r, f.why ? f.why : "(none)");
}

#define SOUND(what, text)	 commit_is((what), (text), sizeof(text) - 1, NULL)
#define REFUSED(what, text, why) commit_is((what), (text), sizeof(text) - 1, (why))

static int collect_parent(void *ctx, const unsigned char id[SFS_GIT_RAWSZ])
{
	unsigned char(*ids)[SFS_GIT_RAWSZ + 1] = ctx;
	size_t n = ids[0][0]++;

	memcpy(ids[n + 1], id, SFS_GIT_RAWSZ);
	return 0;
}

static void test_commits(void)
{
	SOUND("tree, author, committer, message", TREE_LINE AUTHOR COMMITTER "\nmessage\n");
	SOUND("a root commit with an empty message", TREE_LINE AUTHOR COMMITTER "\n");
	SOUND("two parents", TREE_LINE PARENT1 PARENT2 AUTHOR COMMITTER "\nmerge\n");
	SOUND("the date 0", TREE_LINE "author A <a@x> 0 +0000\n" COMMITTER "\nm\n");
	SOUND("an empty email", TREE_LINE "author A <> 1 +0000\n" COMMITTER "\nm\n");
	SOUND("the largest date git takes",
	      TREE_LINE "author A <a@x> 9223372036854775806 +0000\n" COMMITTER "\nm\n");
	SOUND("encoding and a signature with continuation lines",
	      TREE_LINE AUTHOR COMMITTER "encoding ISO-8859-1\n"
					 "gpgsig -----BEGIN PGP SIGNATURE-----\n"
					 " \n"
					 " abc\n"
					 " -----END PGP SIGNATURE-----\n"
					 "\nsigned\n");
	SOUND("a message holding header-like lines",
	      TREE_LINE AUTHOR COMMITTER "\ntree 0000\nparent x\n\n\nauthor y\n");

	REFUSED("a NUL in the message", TREE_LINE AUTHOR COMMITTER "\nmess\0age\n", "nulIn");
	REFUSED("a NUL in a header", TREE_LINE "author A <a@x>\0 1 +0000\n" COMMITTER "\nm\n",
		"nulIn");
	REFUSED("no blank line before the message", TREE_LINE AUTHOR COMMITTER "message\n",
		"unterminatedHeader");
	REFUSED("no blank line and no message", TREE_LINE AUTHOR COMMITTER, "unterminatedHeader");
	REFUSED("empty", "", "unterminatedHeader");
	REFUSED("no tree line", AUTHOR COMMITTER "\nm\n", "missingTree");
	REFUSED("a short tree id", "tree 0123\n" AUTHOR COMMITTER "\nm\n", "badTreeSha1");
	REFUSED("an upper-case tree id",
		"tree 0123456789ABCDEF0123456789abcdef01234567\n" AUTHOR COMMITTER "\nm\n",
		"badTreeSha1");
	REFUSED("a tree id with trailing text",
		"tree 0123456789abcdef0123456789abcdef01234567 x\n" AUTHOR COMMITTER "\nm\n",
		"badTreeSha1");
	REFUSED("a bad parent id", TREE_LINE "parent 123\n" AUTHOR COMMITTER "\nm\n",
		"badParentSha1");
	REFUSED("two tree lines", TREE_LINE TREE_LINE AUTHOR COMMITTER "\nm\n", "missingAuthor");
	REFUSED("no author", TREE_LINE COMMITTER "\nm\n", "missingAuthor");
	REFUSED("two authors", TREE_LINE AUTHOR AUTHOR COMMITTER "\nm\n", "multipleAuthors");
	REFUSED("no committer", TREE_LINE AUTHOR "\nm\n", "missingCommitter");
	REFUSED("a tree line among the later headers",
		TREE_LINE AUTHOR COMMITTER "encoding UTF-8\n" TREE_LINE "\nm\n", "second tree");
	REFUSED("a parent line after the author", TREE_LINE AUTHOR COMMITTER PARENT1 "\nm\n",
		"second tree");
	REFUSED("a second committer", TREE_LINE AUTHOR COMMITTER COMMITTER "\nm\n", "second tree");
	REFUSED("an ident with no name", TREE_LINE "author <a@x> 1 +0000\n" COMMITTER "\nm\n",
		"missingNameBeforeEmail");
	REFUSED("a '>' in the name", TREE_LINE "author A>B <a@x> 1 +0000\n" COMMITTER "\nm\n",
		"badName");
	REFUSED("no email", TREE_LINE "author A 1 +0000\n" COMMITTER "\nm\n", "missingEmail");
	REFUSED("no space before the email", TREE_LINE "author A<a@x> 1 +0000\n" COMMITTER "\nm\n",
		"missingSpaceBeforeEmail");
	REFUSED("a '<' in the email", TREE_LINE "author A <a<b@x> 1 +0000\n" COMMITTER "\nm\n",
		"badEmail");
	REFUSED("an unclosed email", TREE_LINE "author A <a@x 1 +0000\n" COMMITTER "\nm\n",
		"badEmail");
	REFUSED("no space before the date", TREE_LINE "author A <a@x>1 +0000\n" COMMITTER "\nm\n",
		"missingSpaceBeforeDate");
	REFUSED("a zero-padded date", TREE_LINE "author A <a@x> 0123 +0000\n" COMMITTER "\nm\n",
		"zeroPaddedDate");
	REFUSED("a date past 64 bits",
		TREE_LINE "author A <a@x> 99999999999999999999 +0000\n" COMMITTER "\nm\n",
		"badDate");
	REFUSED("the date time_t cannot pass",
		TREE_LINE "author A <a@x> 9223372036854775807 +0000\n" COMMITTER "\nm\n",
		"badDate");
	REFUSED("a date with a sign", TREE_LINE "author A <a@x> +5 +0000\n" COMMITTER "\nm\n",
		"badDate");
	REFUSED("no date", TREE_LINE "author A <a@x>  +0000\n" COMMITTER "\nm\n", "badDate");
	REFUSED("a zone of three digits", TREE_LINE "author A <a@x> 1 +000\n" COMMITTER "\nm\n",
		"badTimezone");
	REFUSED("a zone with no sign", TREE_LINE "author A <a@x> 1 0000\n" COMMITTER "\nm\n",
		"badTimezone");
	REFUSED("a zone with text after it",
		TREE_LINE "author A <a@x> 1 +0000x\n" COMMITTER "\nm\n", "badTimezone");
	REFUSED("a bad committer ident", TREE_LINE AUTHOR "committer C <c@x> 1\n\nm\n", "badDate");

	/* The links of a sound commit. */
	static const char merge[] = TREE_LINE PARENT1 PARENT2 AUTHOR COMMITTER "\nmerge\n";
	unsigned char tree[SFS_GIT_RAWSZ], ids[3][SFS_GIT_RAWSZ + 1] = {{0}};
	int r = sfs_gitobj_commit_links(merge, sizeof(merge) - 1, tree, collect_parent, ids);
	ok(r == 0 && tree[0] == 0x01 && tree[19] == 0x67 && ids[0][0] == 2 && ids[1][0] == 0x89 &&
		   ids[2][0] == 0x11 && ids[2][19] == 0x11,
	   "a merge's tree and its two parents, in order");
}

int main(void)
{
	test_canon_mode();
	test_tree_next();
	test_trees();
	test_commits();
	return tap_done();
}
