/* gitobj.c - see gitobj.h. */
#include "gitobj.h"
#include "canon.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * git's canon_mode (cache.h), applied by decode_tree_entry (tree-walk.c)
 * to every entry it reads: a regular file keeps only the owner's exec bit
 * (100755 or 100644), anything whose type bits say symlink is a symlink,
 * anything that says directory a tree, and everything else, 000000 and
 * 170000 included, a gitlink. The type bits are compared whole, so 120755
 * is a symlink and 160755 a gitlink, where libgit2's
 * git_tree_entry_filemode calls both an executable file.
 */
unsigned sfs_git_canon_mode(unsigned mode)
{
	switch (mode & 0170000u) {
	case 0100000u:
		return mode & 0100u ? SFS_GIT_MODE_EXEC : SFS_GIT_MODE_FILE;
	case 0120000u:
		return SFS_GIT_MODE_LINK;
	case 0040000u:
		return SFS_GIT_MODE_TREE;
	default:
		return SFS_GIT_MODE_GITLINK;
	}
}

int sfs_gitobj_tree_next(const void *data, size_t size, size_t *pos, struct sfs_gitobj_entry *e)
{
	const char *s = (const char *)data + *pos, *end = (const char *)data + size;
	const char *p = s;
	unsigned mode = 0;

	if (*pos >= size)
		return 0;
	/* As git's get_mode: octal digits up to a space, at least one, their
	 * value wrapping as git's unsigned int does. */
	while (p < end && *p != ' ') {
		if (*p < '0' || *p > '7')
			return -EINVAL;
		mode = (mode << 3) + (unsigned)(*p - '0');
		p++;
	}
	if (p == s || p == end)
		return -EINVAL;
	const char *name = p + 1;
	const char *nul = memchr(name, '\0', (size_t)(end - name));
	if (!nul || (size_t)(end - nul - 1) < SFS_GIT_RAWSZ)
		return -EINVAL;
	*e = (struct sfs_gitobj_entry){
		.mode_text = s,
		.mode_len = (size_t)(p - s),
		.mode = mode,
		.name = name,
		.len = (size_t)(nul - name),
		.id = (const unsigned char *)nul + 1,
	};
	*pos = (size_t)(nul + 1 + SFS_GIT_RAWSZ - (const char *)data);
	return 1;
}

/* ---- trees -------------------------------------------------------------- */

static const char why_unreadable[] = "git cannot read it as a tree (git fsck: badTree)";
static const char why_padded[] = "a tree entry's mode is zero-padded (git fsck: "
				 "zeroPaddedFilemode)";
static const char why_mode[] =
	"a tree entry's mode is none of 100644, 100755, 120000, 40000 and 160000: git checks "
	"such an entry out as another type than the mode reads (git fsck: badFilemode)";
static const char why_empty[] = "a tree entry has an empty name (git fsck: emptyName)";
static const char why_slash[] = "a tree entry's name has a '/' in it (git fsck: fullPathname)";
static const char why_dot[] = "a tree entry is named '.' (git fsck: hasDot)";
static const char why_dotdot[] = "a tree entry is named '..' (git fsck: hasDotdot)";
static const char why_dotgit[] = "a tree entry is named .git in a spelling some host reads as "
				 "such (git fsck: hasDotgit)";
static const char why_modlink[] = "a .gitmodules that is a symlink (git fsck: gitmodulesSymlink)";
static const char why_null[] = "a tree entry names the null id (git fsck: nullSha1)";
static const char why_order[] = "tree entries out of git's order (git fsck: treeNotSorted)";
static const char why_dup[] = "two tree entries of the same name (git fsck: duplicateEntries)";

static bool is_mode(const struct sfs_gitobj_entry *e, const char *text)
{
	return e->mode_len == strlen(text) && !memcmp(e->mode_text, text, e->mode_len);
}

/* Whether NAME (LEN bytes, one component) is, canonically, CANON. */
static int canon_is(const char *name, size_t len, const char *canon)
{
	char stack[SFS_CANON_CAP(NAME_MAX) + 1];
	size_t cap = SFS_CANON_CAP(len) + 1;
	char *buf = cap <= sizeof(stack) ? stack : malloc(cap);

	if (!buf)
		return -ENOMEM;
	ssize_t n = sfs_canon_component(name, len, buf, cap);
	int r = n >= 0 && !strcmp(buf, canon);
	if (buf != stack)
		free(buf);
	return n < 0 ? -ENOMEM : r;
}

/* Whether NAME is .git to some host: whole, or any part after a
 * backslash, which Windows takes for a separator (git's fsck_tree looks
 * there too). */
static int is_dotgit(const char *name, size_t len)
{
	const char *p = name, *end = name + len;

	for (;;) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		int r = canon_is(p, (size_t)((bs ? bs : end) - p), ".git");
		if (r != 0 || !bs)
			return r;
		p = bs + 1;
	}
}

/* git's tree order: names compared bytewise, a tree's as if it ended in
 * '/' (fsck.c's verify_ordered). 0 for the very same name. */
static int entry_cmp(const struct sfs_gitobj_entry *a, const struct sfs_gitobj_entry *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int r = memcmp(a->name, b->name, n);

	if (r)
		return r;
	if (a->len == b->len)
		return 0;
	unsigned ca = a->len > n		     ? (unsigned char)a->name[n]
		      : a->mode == SFS_GIT_MODE_TREE ? '/'
						     : 0;
	unsigned cb = b->len > n		     ? (unsigned char)b->name[n]
		      : b->mode == SFS_GIT_MODE_TREE ? '/'
						     : 0;
	return ca < cb ? -1 : ca > cb ? 1 : 0;
}

static int fault(struct sfs_gitobj_fault *f, const char *why, const struct sfs_gitobj_entry *e)
{
	*f = (struct sfs_gitobj_fault){
		.why = why, .at = e ? e->name : NULL, .atlen = e ? e->len : 0};
	return 1;
}

/* The faults of one entry alone. */
static int entry_fault(const struct sfs_gitobj_entry *e, struct sfs_gitobj_fault *f)
{
	static const unsigned char null_id[SFS_GIT_RAWSZ];

	if (e->mode_text[0] == '0')
		return fault(f, why_padded, e);
	if (!is_mode(e, "100644") && !is_mode(e, "100755") && !is_mode(e, "120000") &&
	    !is_mode(e, "40000") && !is_mode(e, "160000"))
		return fault(f, why_mode, e);
	if (e->len == 0)
		return fault(f, why_empty, e);
	if (memchr(e->name, '/', e->len))
		return fault(f, why_slash, e);
	if (e->len == 1 && e->name[0] == '.')
		return fault(f, why_dot, e);
	if (e->len == 2 && e->name[0] == '.' && e->name[1] == '.')
		return fault(f, why_dotdot, e);
	if (!memcmp(e->id, null_id, SFS_GIT_RAWSZ))
		return fault(f, why_null, e);
	int r = is_dotgit(e->name, e->len);
	if (r != 0)
		return r < 0 ? r : fault(f, why_dotgit, e);
	if (e->mode == SFS_GIT_MODE_LINK && (r = canon_is(e->name, e->len, ".gitmodules")) != 0)
		return r < 0 ? r : fault(f, why_modlink, e);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	const struct sfs_gitobj_entry *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int r = memcmp(x->name, y->name, n);

	return r ? r : x->len < y->len ? -1 : x->len > y->len;
}

/* A file and a directory of one name sort apart ("a", "a.c", "a/"):
 * found by sorting the names alone. */
static int twice(const void *data, size_t size, size_t n, struct sfs_gitobj_fault *f)
{
	struct sfs_gitobj_entry *v = calloc(n ? n : 1, sizeof(*v));
	size_t pos = 0, i = 0;
	int r = 0;

	if (!v)
		return -ENOMEM;
	while (i < n && sfs_gitobj_tree_next(data, size, &pos, &v[i]) == 1)
		i++;
	qsort(v, i, sizeof(*v), name_cmp);
	for (size_t k = 1; k < i && r == 0; k++)
		if (name_cmp(&v[k - 1], &v[k]) == 0)
			r = fault(f, why_dup, &v[k]);
	free(v);
	return r;
}

int sfs_gitobj_check_tree(const void *data, size_t size, struct sfs_gitobj_fault *f)
{
	struct sfs_gitobj_entry e, prev = {0};
	size_t pos = 0, n = 0, trees = 0;
	int r;

	while ((r = sfs_gitobj_tree_next(data, size, &pos, &e)) == 1) {
		if ((r = entry_fault(&e, f)) != 0)
			return r;
		if (n > 0) {
			int c = entry_cmp(&prev, &e);
			if (c == 0)
				return fault(f, why_dup, &e);
			if (c > 0)
				return fault(f, why_order, &e);
		}
		trees += e.mode == SFS_GIT_MODE_TREE;
		prev = e;
		n++;
	}
	if (r < 0)
		return fault(f, why_unreadable, NULL);
	return trees ? twice(data, size, n, f) : 0;
}

/* ---- commits ------------------------------------------------------------ */

static const char why_nul[] = "a NUL byte in a commit (git fsck: nulInHeader, nulInCommit)";
static const char why_tree[] = "a commit's first line is not 'tree' and a lower-case hex id "
			       "(git fsck: missingTree, badTreeSha1)";
static const char why_parent[] = "a commit's parent line is not 'parent' and a lower-case hex "
				 "id (git fsck: badParentSha1)";
static const char why_noauthor[] = "a commit has no author line after its tree and parents "
				   "(git fsck: missingAuthor)";
static const char why_authors[] = "a commit has two author lines (git fsck: multipleAuthors)";
static const char why_nocommitter[] = "a commit has no committer line after its author (git "
				      "fsck: missingCommitter)";
static const char why_again[] = "a commit has a second tree, parent, author or committer "
				"header among its other headers";
static const char why_blank[] = "a commit's headers do not end in a blank line before the "
				"message (git fsck: unterminatedHeader)";
static const char why_noname[] = "an ident has no name before its email (git fsck: "
				 "missingNameBeforeEmail)";
static const char why_badname[] = "an ident's name has a '>' in it (git fsck: badName)";
static const char why_noemail[] = "an ident has no '<' for its email (git fsck: missingEmail)";
static const char why_space[] = "an ident has no space before its email (git fsck: "
				"missingSpaceBeforeEmail)";
static const char why_email[] = "an ident's email has a '<' in it or no closing '>' (git fsck: "
				"badEmail)";
static const char why_datespace[] = "an ident has no space before its date (git fsck: "
				    "missingSpaceBeforeDate)";
static const char why_zerodate[] = "an ident's date has a leading zero (git fsck: "
				   "zeroPaddedDate)";
static const char why_date[] = "an ident's date is not seconds in digits within a signed "
			       "64-bit time (git fsck: badDate, badDateOverflow)";
static const char why_zone[] = "an ident's time zone is not a sign and four digits (git fsck: "
			       "badTimezone)";

/* One header line: [*P, *NL) with *NL its '\n' (present: the headers
 * end in a blank line, checked first). */
struct cursor {
	const char *p, *end;
};

static const char *line_end(const struct cursor *c)
{
	return memchr(c->p, '\n', (size_t)(c->end - c->p));
}

static bool skip_prefix(struct cursor *c, const char *prefix)
{
	size_t n = strlen(prefix);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, prefix, n) != 0)
		return false;
	c->p += n;
	return true;
}

/* "HEX\n": 40 lower-case hex digits and the end of the line; *OUT gets the id. */
static bool hex_line(struct cursor *c, unsigned char *out)
{
	const char *nl = line_end(c);

	if (!nl || nl - c->p != 2 * SFS_GIT_RAWSZ)
		return false;
	for (size_t i = 0; i < 2 * SFS_GIT_RAWSZ; i++) {
		char h = c->p[i];
		unsigned v = h >= '0' && h <= '9'   ? (unsigned)(h - '0')
			     : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
						    : 16;
		if (v == 16)
			return false;
		if (out)
			out[i / 2] = (unsigned char)(i % 2 ? (out[i / 2] << 4) | v : v);
	}
	c->p = nl + 1;
	return true;
}

/* The rest of an ident line, as git's fsck_ident reads it (stricter where
 * said): "NAME <EMAIL> SECONDS +ZZZZ\n". */
static const char *ident(struct cursor *c)
{
	const char *nl = line_end(c), *p = c->p;

	if (*p == '<')
		return why_noname;
	p += strcspn(p, "<>\n");
	if (*p == '>')
		return why_badname;
	if (*p != '<')
		return why_noemail;
	if (p[-1] != ' ')
		return why_space;
	p++;
	p += strcspn(p, "<>\n");
	if (*p != '>')
		return why_email;
	p++;
	if (*p != ' ')
		return why_datespace;
	p++;
	if (*p == '0' && p[1] != ' ')
		return why_zerodate;
	uint64_t t = 0;
	const char *digits = p;
	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p++ - '0');
		if (t > ((uint64_t)INT64_MAX - d) / 10)
			return why_date;
		t = t * 10 + d;
	}
	/* git's date_overflows: a date must fit time_t below its maximum. */
	if (p == digits || *p != ' ' || t == (uint64_t)INT64_MAX)
		return why_date;
	p++;
	if ((p[0] != '+' && p[0] != '-') || nl - p != 5)
		return why_zone;
	for (int i = 1; i <= 4; i++)
		if (p[i] < '0' || p[i] > '9')
			return why_zone;
	c->p = nl + 1;
	return NULL;
}

static int commit_fault(struct sfs_gitobj_fault *f, const char *why)
{
	*f = (struct sfs_gitobj_fault){.why = why};
	return 1;
}

int sfs_gitobj_check_commit(const void *data, size_t size, struct sfs_gitobj_fault *f)
{
	const char *s = data;
	const char *blank = NULL;
	const char *why;

	if (memchr(s, '\0', size))
		return commit_fault(f, why_nul);
	/* The headers end at the first empty line; every line above it ends in
	 * '\n', so each header below is read up to one. */
	for (size_t i = 0; i + 1 < size && !blank; i++)
		if (s[i] == '\n' && s[i + 1] == '\n')
			blank = s + i + 1;
	if (!blank)
		return commit_fault(f, why_blank);
	struct cursor c = {s, blank};
	if (!skip_prefix(&c, "tree ") || !hex_line(&c, NULL))
		return commit_fault(f, why_tree);
	while (skip_prefix(&c, "parent "))
		if (!hex_line(&c, NULL))
			return commit_fault(f, why_parent);
	if (!skip_prefix(&c, "author "))
		return commit_fault(f, why_noauthor);
	if ((why = ident(&c)))
		return commit_fault(f, why);
	if (c.p < c.end && !strncmp(c.p, "author ", 7))
		return commit_fault(f, why_authors);
	if (!skip_prefix(&c, "committer "))
		return commit_fault(f, why_nocommitter);
	if ((why = ident(&c)))
		return commit_fault(f, why);
	/* Other headers (encoding, gpgsig and its continuation lines,
	 * mergetag) are git's business, but none of the four again. */
	while (c.p < c.end) {
		static const char *const again[] = {"tree ", "parent ", "author ", "committer "};
		for (size_t i = 0; i < sizeof(again) / sizeof(again[0]); i++)
			if (!strncmp(c.p, again[i], strlen(again[i])))
				return commit_fault(f, why_again);
		c.p = line_end(&c) + 1;
	}
	return 0;
}

int sfs_gitobj_commit_links(const void *data, size_t size, unsigned char tree[SFS_GIT_RAWSZ],
			    int (*parent)(void *ctx, const unsigned char id[SFS_GIT_RAWSZ]),
			    void *ctx)
{
	struct cursor c = {data, (const char *)data + size};
	unsigned char id[SFS_GIT_RAWSZ];
	int r = 0;

	if (!skip_prefix(&c, "tree ") || !hex_line(&c, tree))
		return -EINVAL;
	while (r == 0 && skip_prefix(&c, "parent ")) {
		if (!hex_line(&c, id))
			return -EINVAL;
		r = parent(ctx, id);
	}
	return r;
}
