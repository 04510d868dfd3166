/* gitcheck.c - see gitcheck.h. */
#include "gitcheck.h"
#include "policy/gitobj.h"
#include "policy/gitshape.h"
#include "policy/symchain.h"
#include "common/err.h"
#include "common/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The longest symlink target judged; git stores any size, the kernel
 * follows none longer than a page. */
#define TARGET_MAX 4096

struct check {
	const struct sfs_policy *p;
	git_repository *repo;
	const git_oid *commit;
	git_tree *tree;	   /* the commit's */
	git_tree **others; /* its parents but the first, for merges */
	size_t nothers;
	sfs_git_refusal_fn fn;
	void *ctx;
	int refused;
	char **err;
	/* The path being looked at, grown as the walk goes down. */
	char *path;
	size_t len, cap;
	/* The commit's symlinks, read when the first one is judged. */
	struct sfs_link *links;
	size_t nlinks;
	bool links_read;
};

static const char why_submodule[] =
	"a submodule entry makes the host's git check out another repository here, with "
	"its own .git, from wherever .gitmodules says: a nested repository";
static const char why_name[] = "git refuses to check out this name: empty, '.', '..' or with "
			       "a '/' in it, it would land somewhere other than the path shown";
static const char why_chain[] =
	"another symlink of the commit passes through this one, and the host, following "
	"both, would reach a name the policy refuses";
static const char why_unlinked[] =
	"another symlink of the commit resolved through this one, and with this one gone the "
	"host, following it, would reach a name the policy refuses";
static const char why_unreadable[] = "the symlink's target cannot be judged: longer than "
				     "a page or with a NUL byte in it";

const char *sfs_git_change_name(enum sfs_git_change c)
{
	switch (c) {
	case SFS_GIT_ADD:
		return "adds";
	case SFS_GIT_MODIFY:
		return "changes";
	case SFS_GIT_MODE:
		return "changes the mode of";
	case SFS_GIT_TYPE:
		return "changes the type of";
	case SFS_GIT_DELETE:
		return "removes";
	}
	return "changes";
}

static int git_fail(struct check *c, const char *what)
{
	const git_error *e = git_error_last();

	return err_set(c->err, EIO, "cannot read %s of commit %.12s: %s", what,
		       git_oid_tostr_s(c->commit), e && e->message ? e->message : "libgit2 error");
}

/* Appends "/NAME" (or NAME at the top) to the path; returns the old length. */
static int path_push(struct check *c, const char *name, size_t *old)
{
	size_t n = strlen(name), need = c->len + n + 2;

	if (need > c->cap) {
		size_t cap = need * 2;
		char *s = realloc(c->path, cap);
		if (!s)
			return -ENOMEM;
		c->path = s;
		c->cap = cap;
	}
	*old = c->len;
	if (c->len)
		c->path[c->len++] = '/';
	memcpy(c->path + c->len, name, n + 1);
	c->len += n;
	return 0;
}

static void path_pop(struct check *c, size_t old)
{
	c->len = old;
	c->path[old] = '\0';
}

static int refuse(struct check *c, enum sfs_git_change change, enum sfs_class cls, const char *file,
		  int line, const char *text, const char *why)
{
	const struct sfs_git_refusal r = {
		.commit = c->commit,
		.path = c->path,
		.change = change,
		.cls = cls,
		.rule_file = file,
		.rule_line = line,
		.rule_text = text,
		.why = why,
	};

	c->refused++;
	return c->fn ? c->fn(c->ctx, &r) : 0;
}

static int refuse_decision(struct check *c, enum sfs_git_change change,
			   const struct sfs_decision *d)
{
	return refuse(c, change, d->cls, d->rule_file, d->rule ? d->rule->line : 0, d->rule_text,
		      d->why);
}

static bool name_ok(const char *name)
{
	return *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

/* E's mode as git checks it out: libgit2's git_tree_entry_filemode calls
 * 120755 an executable file, where git makes a symlink of it. */
static unsigned mode_of(const git_tree_entry *e)
{
	return sfs_git_canon_mode(git_tree_entry_filemode_raw(e));
}

static bool is_tree(const git_tree_entry *e)
{
	return e && mode_of(e) == SFS_GIT_MODE_TREE;
}

static bool is_link(const git_tree_entry *e)
{
	return e && mode_of(e) == SFS_GIT_MODE_LINK;
}

static bool is_gitlink(const git_tree_entry *e)
{
	return e && mode_of(e) == SFS_GIT_MODE_GITLINK;
}

static bool same_entry(const git_tree_entry *a, const git_tree_entry *b)
{
	if (!a || !b)
		return a == b;
	return mode_of(a) == mode_of(b) &&
	       git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b));
}

/* Whether one of the other parents of a merge has, at the current path,
 * exactly what the commit has (NEW, NULL when absent): the merge took it
 * from there rather than made it. */
static int from_other_parent(struct check *c, const git_tree_entry *new)
{
	for (size_t i = 0; i < c->nothers; i++) {
		git_tree_entry *e = NULL;
		int g = git_tree_entry_bypath(&e, c->others[i], c->path);

		if (g < 0 && g != GIT_ENOTFOUND)
			return git_fail(c, "a parent's tree");
		bool same = same_entry(e, new);
		git_tree_entry_free(e);
		if (same)
			return 1;
	}
	return 0;
}

static enum sfs_git_change change_of(const git_tree_entry *old, const git_tree_entry *new)
{
	if (!old)
		return SFS_GIT_ADD;
	if (!new)
		return SFS_GIT_DELETE;
	unsigned a = mode_of(old), b = mode_of(new);
	bool exec_only = (a == SFS_GIT_MODE_FILE || a == SFS_GIT_MODE_EXEC) &&
			 (b == SFS_GIT_MODE_FILE || b == SFS_GIT_MODE_EXEC);
	if (a == b)
		return SFS_GIT_MODIFY;
	/* A regular file stays one whatever its executable bit. */
	if (exec_only)
		return git_oid_equal(git_tree_entry_id(old), git_tree_entry_id(new))
			       ? SFS_GIT_MODE
			       : SFS_GIT_MODIFY;
	return SFS_GIT_TYPE;
}

/* The target of the symlink whose blob is ID into TARGET (CAP bytes): 1, 0
 * when it cannot be judged (too long, a NUL byte), or a negative errno. */
static int read_target(struct check *c, const git_oid *id, char *target, size_t cap)
{
	git_blob *blob = NULL;

	if (git_blob_lookup(&blob, c->repo, id) < 0)
		return git_fail(c, "a symlink");
	git_object_size_t size = git_blob_rawsize(blob);
	bool readable =
		size <= TARGET_MAX && size < cap && !memchr(git_blob_rawcontent(blob), '\0', size);
	if (readable) {
		memcpy(target, git_blob_rawcontent(blob), size);
		target[size] = '\0';
	}
	git_blob_free(blob);
	return readable;
}

/* Asked by the symlink check (sfs_symlink_probe): whether PREFIX is a
 * symlink in the commit, which the host's checkout would make, and where
 * it points. */
static int probe_commit(void *ctx, const char *prefix, char *target, size_t cap)
{
	struct check *c = ctx;
	git_tree_entry *e = NULL;
	int g = git_tree_entry_bypath(&e, c->tree, prefix);

	if (g == GIT_ENOTFOUND)
		return 0;
	if (g < 0)
		return -EIO;
	int r = 0;
	if (is_link(e)) {
		r = read_target(c, git_tree_entry_id(e), target, cap);
		if (r == 0)
			r = -ENAMETOOLONG; /* a target that cannot be followed */
	}
	git_tree_entry_free(e);
	return r;
}

/* Every symlink of the commit's tree, gathered once per commit. */
static int links_cb(const char *root, const git_tree_entry *e, void *payload)
{
	struct check *c = payload;
	char target[TARGET_MAX + 1];
	char *path = NULL;

	if (!is_link(e))
		return 0;
	int r = read_target(c, git_tree_entry_id(e), target, sizeof(target));
	if (r < 0)
		return -1;
	if (r == 0)
		return 0; /* judged, and refused, where it is added */
	if (asprintf(&path, "%s%s", root, git_tree_entry_name(e)) < 0)
		return -1;
	struct sfs_link *a = realloc(c->links, (c->nlinks + 1) * sizeof(*a));
	char *t = strdup(target);
	if (!a || !t) {
		if (a)
			c->links = a;
		free(path);
		free(t);
		return -1;
	}
	c->links = a;
	a[c->nlinks].path = path;
	a[c->nlinks].target = t;
	c->nlinks++;
	return 0;
}

static int gather_links(struct check *c)
{
	if (c->links_read)
		return 0;
	c->links_read = true;
	if (git_tree_walk(c->tree, GIT_TREEWALK_PRE, links_cb, c) < 0)
		return git_fail(c, "the tree");
	return 0;
}

static void free_links(struct check *c)
{
	for (size_t i = 0; i < c->nlinks; i++) {
		free((char *)c->links[i].path);
		free((char *)c->links[i].target);
	}
	free(c->links);
}

/*
 * The other symlinks of the commit whose resolution passes through the
 * link at the current path (directly, or through one that does): judged
 * again, as the host, following both, would resolve them (b -> a/../x
 * judged before a -> elsewhere/ existed). 1 when one of them reaches a
 * refused name (its decision in *D), 0 when none does.
 */
static int links_through(struct check *c, struct sfs_decision *d)
{
	const char *changed[] = {c->path};
	bool *affected;
	int r = gather_links(c);

	if (r < 0)
		return r;
	affected = calloc(c->nlinks ? c->nlinks : 1, sizeof(*affected));
	if (!affected)
		return -ENOMEM;
	sfs_symlink_affected(c->links, c->nlinks, changed, 1, affected);
	for (size_t i = 0; r == 0 && i < c->nlinks; i++) {
		if (!affected[i] || !strcmp(c->links[i].path, c->path))
			continue;
		*d = (struct sfs_decision){.allowed = true};
		sfs_policy_check_symlink_target(c->p, c->links[i].path, c->links[i].target,
						probe_commit, c, d);
		if (!d->allowed)
			r = 1;
	}
	free(affected);
	return r;
}

static int check_symlink(struct check *c, enum sfs_git_change change, const git_tree_entry *new)
{
	char target[TARGET_MAX + 1];
	int r = read_target(c, git_tree_entry_id(new), target, sizeof(target));

	if (r < 0)
		return r;
	if (r == 0)
		return refuse(c, change, SFS_CLASS_PROTECTED, "(built-in)", 0, "symlink",
			      why_unreadable);
	struct sfs_decision d = {.allowed = true};
	sfs_policy_check_symlink_target(c->p, c->path, target, probe_commit, c, &d);
	if (!d.allowed)
		return refuse_decision(c, change, &d);
	/* As the mount: a link named like a directory that a stricter rule
	 * passes through (.cargo -> docs/c) would give what that rule
	 * protects a second name (docs/c/config.toml as .cargo/config.toml). */
	const char *name = git_tree_entry_name(new);
	if (sfs_policy_shadow_name(c->p, name, strlen(name), &d))
		return refuse_decision(c, change, &d);
	r = links_through(c, &d);
	if (r <= 0)
		return r;
	return refuse(c, change, d.cls, "(built-in)", 0, "symlink chain", why_chain);
}

/* One path whose entry differs between the parent (OLD) and the commit
 * (NEW); either may be NULL, or a tree when the other is a leaf (a file
 * that becomes a directory is a change of type). The leaf is judged; a
 * merge that has at the path what another parent has (tree or leaf) did
 * not make it. */
static int judge(struct check *c, const git_tree_entry *old, const git_tree_entry *new)
{
	enum sfs_git_change change = change_of(old, new);
	const git_tree_entry *old_leaf = is_tree(old) ? NULL : old;
	const git_tree_entry *new_leaf = is_tree(new) ? NULL : new;
	struct sfs_decision d;
	int r;

	if (c->nothers) {
		r = from_other_parent(c, new);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (is_gitlink(old_leaf) || is_gitlink(new_leaf))
		return refuse(c, change, SFS_CLASS_IMMUTABLE, "(built-in)", 0, "submodule entry",
			      why_submodule);
	enum sfs_class cls = sfs_policy_classify(c->p, c->path, &d);
	if (cls == SFS_CLASS_PRIVATE || sfs_class_protective(cls))
		return refuse_decision(c, change, &d);
	if (is_link(new_leaf))
		return check_symlink(c, change, new_leaf);
	/* The links that resolved through a link removed, or replaced by a
	 * file or a directory, now resolve through what is there instead. */
	if (is_link(old) && (r = links_through(c, &d)) != 0)
		return r < 0 ? r
			     : refuse(c, change, d.cls, "(built-in)", 0, "symlink chain",
				      why_unlinked);
	return 0;
}

static int walk(struct check *c, git_tree *old, git_tree *new);

/* ---- the shape of a git directory ---------------------------------------- */

static bool is_part(const char *name)
{
	return sfs_gitdir_part(name, strlen(name)) != 0;
}

static bool is_command(const char *name)
{
	return sfs_gitdir_command_name(name, strlen(name));
}

/* The parts of a git directory (gitshape.h) that TREE's names are:
 * whatever their type, as git's test of objects/ and refs/ is whether it
 * can search them, which a symlink or an executable file passes too. */
static unsigned parts_of(git_tree *tree)
{
	unsigned parts = 0;

	for (size_t i = 0; i < git_tree_entrycount(tree); i++) {
		const char *name = git_tree_entry_name(git_tree_entry_byindex(tree, i));
		parts |= sfs_gitdir_part(name, strlen(name));
	}
	return parts;
}

/* Whether the part E (O before, NULL when absent) is one the commit
 * adds: new, or of another type or mode, which may make it count where
 * it did not (a file objects made executable passes that test). */
static bool part_added(const git_tree_entry *o, const git_tree_entry *e)
{
	return !o || mode_of(o) != mode_of(e);
}

/* Whether the git directory NEW was there already as OLD (a parent's tree
 * at its path): its parts not added, what git reads commands from the
 * same. */
static bool gitdir_kept(git_tree *old, git_tree *new)
{
	if (!old)
		return false;
	for (size_t i = 0; i < git_tree_entrycount(new); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(new, i);
		const char *name = git_tree_entry_name(e);
		const git_tree_entry *o = git_tree_entry_byname(old, name);

		if ((is_part(name) && part_added(o, e)) || (is_command(name) && !same_entry(o, e)))
			return false;
	}
	for (size_t i = 0; i < git_tree_entrycount(old); i++) {
		const char *name = git_tree_entry_name(git_tree_entry_byindex(old, i));

		if (is_command(name) && !git_tree_entry_byname(new, name))
			return false;
	}
	return true;
}

/* Whether parent I but the first has, at the current path, the git
 * directory NEW already (gitdir_kept). */
static int kept_by_other(struct check *c, size_t i, git_tree *new)
{
	git_tree_entry *e = NULL;
	git_tree *t = NULL;

	if (c->len == 0)
		return gitdir_kept(c->others[i], new);
	int g = git_tree_entry_bypath(&e, c->others[i], c->path);
	if (g == GIT_ENOTFOUND)
		return 0;
	if (g < 0 || (is_tree(e) && git_tree_lookup(&t, c->repo, git_tree_entry_id(e)) < 0)) {
		git_tree_entry_free(e);
		return git_fail(c, "a parent's tree");
	}
	bool kept = gitdir_kept(t, new);
	git_tree_free(t);
	git_tree_entry_free(e);
	return kept;
}

static int refuse_gitdir(struct check *c, const char *name, enum sfs_git_change change,
			 bool completes)
{
	struct sfs_decision d;
	size_t mark;
	int r = path_push(c, name, &mark);

	if (r < 0)
		return r;
	sfs_gitdir_refuse(&d, completes);
	r = refuse_decision(c, change, &d);
	path_pop(c, mark);
	return r;
}

/*
 * The directory at the current path, NEW in the commit and OLD in its
 * first parent (NULL: absent), when git takes NEW for a repository: the
 * parts the commit added (what completes it) and every change to what git
 * reads commands from in it are refused, unless a parent had that very
 * git directory (a fixture of the host's own). A merge that joins the
 * parts of two parents made the shape itself.
 */
static int judge_gitdir(struct check *c, git_tree *old, git_tree *new)
{
	if (!new || !sfs_gitdir_complete(parts_of(new)) || gitdir_kept(old, new))
		return 0;
	for (size_t i = 0; i < c->nothers; i++) {
		int r = kept_by_other(c, i, new);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	for (size_t i = 0; i < git_tree_entrycount(new); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(new, i);
		const char *name = git_tree_entry_name(e);
		const git_tree_entry *o = old ? git_tree_entry_byname(old, name) : NULL;
		bool completes = is_part(name) && part_added(o, e);
		int r = 0;

		if (completes || (is_command(name) && !same_entry(o, e)))
			r = refuse_gitdir(c, name, change_of(o, e), completes);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; old && i < git_tree_entrycount(old); i++) {
		const char *name = git_tree_entry_name(git_tree_entry_byindex(old, i));
		int r = 0;

		if (is_command(name) && !git_tree_entry_byname(new, name))
			r = refuse_gitdir(c, name, SFS_GIT_DELETE, false);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Goes down into the subtrees of OLD and NEW (either may not be one). */
static int descend(struct check *c, const git_tree_entry *old, const git_tree_entry *new)
{
	git_tree *a = NULL, *b = NULL;
	int r = 0;

	if (is_tree(old) && git_tree_lookup(&a, c->repo, git_tree_entry_id(old)) < 0)
		return git_fail(c, "a tree");
	if (is_tree(new) && git_tree_lookup(&b, c->repo, git_tree_entry_id(new)) < 0)
		r = git_fail(c, "a tree");
	if (r == 0)
		r = walk(c, a, b);
	git_tree_free(a);
	git_tree_free(b);
	return r;
}

/* One name that differs. Only what git stores as an entry of its own is
 * judged (files, symlinks, submodules): a directory exists through what
 * is in it, and everything below a kept name is kept too. */
static int one(struct check *c, const char *name, const git_tree_entry *old,
	       const git_tree_entry *new)
{
	size_t mark;
	int r = path_push(c, name, &mark);

	if (r < 0)
		return r;
	if (!name_ok(name))
		r = refuse(c, change_of(old, new), SFS_CLASS_IMMUTABLE, "(built-in)", 0,
			   "tree entry name", why_name);
	else {
		if ((old && !is_tree(old)) || (new && !is_tree(new)))
			r = judge(c, old, new);
		if (r >= 0 && (is_tree(old) || is_tree(new)))
			r = descend(c, old, new);
	}
	path_pop(c, mark);
	return r;
}

/* Every difference between trees OLD and NEW (NULL: empty) at the path. */
static int walk(struct check *c, git_tree *old, git_tree *new)
{
	size_t n = new ? git_tree_entrycount(new) : 0, m = old ? git_tree_entrycount(old) : 0;
	int r = judge_gitdir(c, old, new);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(new, i);
		const char *name = git_tree_entry_name(e);
		const git_tree_entry *o = old ? git_tree_entry_byname(old, name) : NULL;

		if (same_entry(o, e))
			continue;
		if ((r = one(c, name, o, e)) < 0)
			return r;
	}
	for (size_t i = 0; i < m; i++) {
		const git_tree_entry *o = git_tree_entry_byindex(old, i);
		const char *name = git_tree_entry_name(o);

		if (new &&git_tree_entry_byname(new, name))
			continue;
		if ((r = one(c, name, o, NULL)) < 0)
			return r;
	}
	return 0;
}

int sfs_git_check_commit(const struct sfs_policy *p, git_repository *repo, git_commit *commit,
			 sfs_git_refusal_fn fn, void *ctx, char **err)
{
	unsigned nparents = git_commit_parentcount(commit);
	git_tree *base = NULL;
	struct check c = {
		.p = p,
		.repo = repo,
		.commit = git_commit_id(commit),
		.fn = fn,
		.ctx = ctx,
		.err = err,
	};
	int r = 0;

	*err = NULL;
	c.path = calloc(1, 256);
	if (!c.path)
		return -ENOMEM;
	c.cap = 256;
	if (nparents > 1) {
		c.others = calloc(nparents - 1, sizeof(*c.others));
		if (!c.others)
			r = -ENOMEM;
	}
	if (r == 0 && git_commit_tree(&c.tree, commit) < 0)
		r = git_fail(&c, "the tree");
	for (unsigned i = 0; r == 0 && i < nparents; i++) {
		git_commit *parent = NULL;
		git_tree **slot = i == 0 ? &base : &c.others[c.nothers];

		if (git_commit_parent(&parent, commit, i) < 0 || git_commit_tree(slot, parent) < 0)
			r = git_fail(&c, "a parent");
		else if (i > 0)
			c.nothers++;
		git_commit_free(parent);
	}
	if (r == 0)
		r = walk(&c, base, c.tree);
	for (size_t i = 0; i < c.nothers; i++)
		git_tree_free(c.others[i]);
	free(c.others);
	git_tree_free(base);
	git_tree_free(c.tree);
	free_links(&c);
	free(c.path);
	return r < 0 ? r : c.refused;
}

/* ---- objects as git fsck sees them -------------------------------------- */

/* An object looked at: its type (GIT_OBJECT_INVALID when it is not
 * there), and whether it was judged or queued to be. */
struct seen {
	git_oid id;
	signed char type;
	bool judged;
	bool used;
};

struct sfs_git_objects {
	git_odb *known;
	struct seen *v;
	size_t cap, n;
	uint64_t seed; /* so that no one picks ids that crowd the table */
};

int sfs_git_objects_new(git_odb *known, struct sfs_git_objects **out)
{
	struct sfs_git_objects *o = calloc(1, sizeof(*o));
	struct timespec ts;

	if (!o)
		return -ENOMEM;
	o->cap = 1024;
	o->v = calloc(o->cap, sizeof(*o->v));
	if (!o->v) {
		free(o);
		return -ENOMEM;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	o->seed = ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid()) | 1;
	o->known = known;
	*out = o;
	return 0;
}

void sfs_git_objects_free(struct sfs_git_objects *o)
{
	if (!o)
		return;
	free(o->v);
	free(o);
}

static size_t slot_of(const struct sfs_git_objects *o, const git_oid *id)
{
	uint64_t h;

	memcpy(&h, id->id, sizeof(h));
	return (size_t)((h ^ o->seed) * 0x9e3779b97f4a7c15u >> 17) & (o->cap - 1);
}

/* The entry for ID, made (unused) when absent; NULL out of memory. */
static struct seen *seen_get(struct sfs_git_objects *o, const git_oid *id)
{
	if (2 * (o->n + 1) > o->cap) {
		struct sfs_git_objects grown = *o;
		grown.cap = o->cap * 2;
		grown.v = calloc(grown.cap, sizeof(*grown.v));
		if (!grown.v)
			return NULL;
		for (size_t i = 0; i < o->cap; i++) {
			if (!o->v[i].used)
				continue;
			size_t k = slot_of(&grown, &o->v[i].id);
			while (grown.v[k].used)
				k = (k + 1) & (grown.cap - 1);
			grown.v[k] = o->v[i];
		}
		free(o->v);
		*o = grown;
	}
	size_t k = slot_of(o, id);
	while (o->v[k].used && !git_oid_equal(&o->v[k].id, id))
		k = (k + 1) & (o->cap - 1);
	if (!o->v[k].used) {
		o->v[k] = (struct seen){.id = *id, .type = GIT_OBJECT_INVALID - 1, .used = true};
		o->n++;
	}
	return &o->v[k];
}

struct objcheck {
	struct sfs_git_objects *o;
	git_odb *odb;
	struct check *c; /* for refusals: the commit, the path, the callback */
	char object[64]; /* "tree ID": the rule text of a refusal */
};

static const char why_missing[] = "it names an object that is not there, which git fsck "
				  "reports as a broken link";
static const char why_type[] = "it names an object of another type than it says (a blob for "
			       "a tree, a tree for a parent), which git fsck reports as a "
			       "broken link";

/* ID's entry with its type looked up (GIT_OBJECT_INVALID: not there). */
static int type_of(struct objcheck *k, const git_oid *id, struct seen **out)
{
	struct seen *s = seen_get(k->o, id);

	if (!s)
		return -ENOMEM;
	if (s->type == GIT_OBJECT_INVALID - 1) {
		size_t size;
		git_object_t type;
		int g = git_odb_read_header(&size, &type, k->odb, id);
		if (g < 0 && g != GIT_ENOTFOUND)
			return git_fail(k->c, "an object");
		s->type = (signed char)(g < 0 ? GIT_OBJECT_INVALID : type);
	}
	*out = s;
	return 0;
}

/* A refusal of the object K->object, found at PATH of the commit's tree
 * ("" for the top), at its entry AT (ATLEN bytes) when AT is not NULL: 1,
 * or the callback's negative return. */
static int refuse_object(struct objcheck *k, const char *path, const char *at, size_t atlen,
			 const char *why)
{
	struct check *c = k->c;
	cleanup_free char *name = at ? strndup(at, atlen) : NULL;
	size_t mark;
	int r = at && !name ? -ENOMEM : 0;

	c->len = 0;
	c->path[0] = '\0';
	if (r == 0 && *path)
		r = path_push(c, path, &mark);
	if (r == 0 && name)
		r = path_push(c, name, &mark);
	if (r == 0 && c->len == 0)
		r = path_push(c, ".", &mark);
	if (r == 0)
		r = refuse(c, SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, "(built-in)", 0, k->object, why);
	return r < 0 ? r : 1;
}

static void name_object(struct objcheck *k, const char *type, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	snprintf(k->object, sizeof(k->object), "%s %s", type, git_oid_tostr(hex, sizeof(hex), id));
}

/* Trees still to judge, each with where the commit's tree has it. */
struct pending {
	git_oid id;
	char *path;
};

struct stack {
	struct pending *v;
	size_t n, cap;
};

static int stack_push(struct stack *st, const git_oid *id, const char *dir, const char *name,
		      size_t len)
{
	struct pending p = {.id = *id};

	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		struct pending *v = realloc(st->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	if (!name)
		p.path = strdup(dir);
	else if (asprintf(&p.path, "%s%s%.*s", dir, *dir ? "/" : "", (int)len, name) < 0)
		p.path = NULL;
	if (!p.path)
		return -ENOMEM;
	st->v[st->n++] = p;
	return 0;
}

static void stack_free(struct stack *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->v[i].path);
	free(st->v);
}

/* The type an entry of canonical mode MODE names. */
static git_object_t type_for(unsigned mode)
{
	return mode == SFS_GIT_MODE_TREE ? GIT_OBJECT_TREE : GIT_OBJECT_BLOB;
}

/* Tree P (new to the host): its bytes, then each object it names, the
 * trees among them queued on ST. 1 when refused. */
static int judge_tree(struct objcheck *k, const struct pending *p, struct stack *st)
{
	git_odb_object *obj = NULL;
	struct sfs_gitobj_fault f;
	struct sfs_gitobj_entry e;
	size_t pos = 0;
	int r;

	name_object(k, "tree", &p->id);
	if (git_odb_read(&obj, k->odb, &p->id) < 0)
		return git_fail(k->c, "a tree");
	const void *data = git_odb_object_data(obj);
	size_t size = git_odb_object_size(obj);
	r = sfs_gitobj_check_tree(data, size, &f);
	if (r == 1)
		r = refuse_object(k, p->path, f.at, f.atlen, f.why);
	while (r == 0 && sfs_gitobj_tree_next(data, size, &pos, &e) == 1) {
		unsigned mode = sfs_git_canon_mode(e.mode);
		git_oid id;
		struct seen *s;

		/* A submodule's commit is another repository's: neither here
		 * nor copied (and the check refuses the entry). */
		if (mode == SFS_GIT_MODE_GITLINK)
			continue;
		git_oid_fromraw(&id, e.id);
		if ((r = type_of(k, &id, &s)) < 0)
			break;
		if (s->type != (signed char)type_for(mode)) {
			r = refuse_object(k, p->path, e.name, e.len,
					  s->type == GIT_OBJECT_INVALID ? why_missing : why_type);
			break;
		}
		if (mode == SFS_GIT_MODE_TREE && !s->judged) {
			s->judged = true;
			if (!k->o->known || !git_odb_exists(k->o->known, &id))
				r = stack_push(st, &id, p->path, e.name, e.len);
		}
	}
	git_odb_object_free(obj);
	return r;
}

static int judge_parent(void *ctx, const unsigned char raw[SFS_GIT_RAWSZ])
{
	struct objcheck *k = ctx;
	struct seen *s;
	git_oid id;
	int r;

	git_oid_fromraw(&id, raw);
	if ((r = type_of(k, &id, &s)) < 0)
		return r;
	if (s->type != GIT_OBJECT_COMMIT)
		return refuse_object(k, "", NULL, 0,
				     s->type == GIT_OBJECT_INVALID ? why_missing : why_type);
	return 0;
}

/* The commit's bytes, its parents and its tree: 1 when refused, with the
 * tree to go on with in *TREE otherwise (zero when the host has it). */
static int judge_commit(struct objcheck *k, const git_oid *id, git_oid *tree)
{
	git_odb_object *obj = NULL;
	struct sfs_gitobj_fault f;
	unsigned char raw[SFS_GIT_RAWSZ];
	struct seen *s;
	int r;

	memset(tree, 0, sizeof(*tree));
	name_object(k, "commit", id);
	if (git_odb_read(&obj, k->odb, id) < 0)
		return git_fail(k->c, "the commit");
	const void *data = git_odb_object_data(obj);
	size_t size = git_odb_object_size(obj);
	if (git_odb_object_type(obj) != GIT_OBJECT_COMMIT)
		r = refuse_object(k, "", NULL, 0, why_type);
	else if (sfs_gitobj_check_commit(data, size, &f) == 1)
		r = refuse_object(k, "", NULL, 0, f.why);
	else
		r = sfs_gitobj_commit_links(data, size, raw, judge_parent, k);
	git_odb_object_free(obj);
	if (r != 0)
		return r;
	git_oid_fromraw(tree, raw);
	if ((r = type_of(k, tree, &s)) < 0)
		return r;
	if (s->type != GIT_OBJECT_TREE)
		return refuse_object(k, "", NULL, 0,
				     s->type == GIT_OBJECT_INVALID ? why_missing : why_type);
	if (s->judged || (k->o->known && git_odb_exists(k->o->known, tree)))
		memset(tree, 0, sizeof(*tree));
	s->judged = true;
	return 0;
}

int sfs_git_check_objects(struct sfs_git_objects *o, git_repository *repo, const git_oid *commit,
			  sfs_git_refusal_fn fn, void *ctx, char **err)
{
	struct check c = {.repo = repo, .commit = commit, .fn = fn, .ctx = ctx, .err = err};
	struct objcheck k = {.o = o, .c = &c};
	struct stack st = {0};
	git_oid tree;
	int r;

	*err = NULL;
	if (o->known && git_odb_exists(o->known, commit))
		return 0;
	c.path = calloc(1, 256);
	if (!c.path)
		return -ENOMEM;
	c.cap = 256;
	r = git_repository_odb(&k.odb, repo) < 0 ? git_fail(&c, "the objects") : 0;
	if (r == 0)
		r = judge_commit(&k, commit, &tree);
	if (r == 0 && !git_oid_is_zero(&tree))
		r = stack_push(&st, &tree, "", NULL, 0);
	while (r >= 0 && st.n > 0) {
		struct pending p = st.v[--st.n];
		r = judge_tree(&k, &p, &st);
		free(p.path);
	}
	stack_free(&st);
	git_odb_free(k.odb);
	free(c.path);
	return r < 0 ? r : c.refused;
}

int sfs_git_check(const struct sfs_policy *p, struct sfs_git_objects *o, git_repository *repo,
		  const git_oid *commit, sfs_git_refusal_fn fn, void *ctx, char **err)
{
	git_commit *c = NULL;
	int faulty = sfs_git_check_objects(o, repo, commit, fn, ctx, err), r;

	if (faulty < 0)
		return faulty;
	if (git_commit_lookup(&c, repo, commit) < 0)
		r = err_set(err, EIO, "cannot read commit %s: %s", git_oid_tostr_s(commit),
			    git_error_last() ? git_error_last()->message : "libgit2 error");
	else
		r = sfs_git_check_commit(p, repo, c, fn, ctx, err);
	git_commit_free(c);
	/* What libgit2 could not read (-EIO, with a message), not a refusal
	 * that stopped the check. */
	if (r == -EIO && *err && faulty > 0) {
		free(*err);
		*err = NULL;
		r = 0;
	}
	return r < 0 ? r : faulty + r;
}
