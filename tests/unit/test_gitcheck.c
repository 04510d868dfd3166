/*
 * test_gitcheck: sfs_git_check_commit (fusefs/git/gitcheck.c) on real
 * libgit2 repositories in a scratch directory, with the shipped rules of a
 * Node project (base + node) and a few rules added by hand.
 *
 * Trees and commits are written as raw objects through the object database
 * (git_odb_write), so that entries git and libgit2 refuse to make (".git",
 * "..", ".", "a/b", gitlinks to absent commits) can be stored exactly as a
 * hostile commit would store them. Every case asserts the exact number of
 * refusals and, for each refusal, its path, change, class, commit id and
 * the deciding rule (file, line and pattern).
 *
 *  - accepted: ordinary adds, changes, removals, exec bits, symlinks that
 *    stay in the project, root commits and merges of ordinary changes;
 *  - refused: protected, hidden, overlay, private and immutable paths (in
 *    case, Unicode and NTFS spellings too), submodules, symlinks the mount
 *    would refuse, names git refuses, type changes at protected names;
 *  - refused too: entries at modes libgit2 reads otherwise than git
 *    (120755, 160755), symlinks named like a directory a stricter rule
 *    passes through, the removal of a link others resolved through,
 *    directories made into a repository's shape;
 *  - merges: judged only on what differs from every parent;
 *  - objects: what git fsck refuses (raw trees and commits), missing or
 *    mistyped objects, each object judged once per import, the host's
 *    never; both checks together as the import makes them;
 *  - the callback: its negative return stops the check and is returned;
 *    unreadable objects are errors, never silent acceptance;
 *  - sfs_policy_set_private_git and the symlink-target check with it on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "policy/canon.h"
#include "config.h"
#include "git/gitcheck.h"
#include "policy/policy.h"
#include "policy/symchain.h"
#include "policy/rules.h"
#include "scratch.h"
#include "tap.h"

#define BASE	SANDY_SOURCE_RULES_DIR "/base.json"
#define NODE	SANDY_SOURCE_RULES_DIR "/node.json"
#define HAND	"hand.json"
#define BUILTIN "(built-in)"

/* Rules added by hand (user trust); the lines matter: refusals name them. */
static const char hand_rules[] =
	"{\n"
	"  \"protect\": [\n"
	"    {\"path\": \"deploy/prod.sh\", \"why\": \"the release job runs it\"}\n"
	"  ],\n"
	"  \"hide\": [\n"
	"    {\"path\": \"secrets/\", \"why\": \"the deploy job's credentials\"}\n"
	"  ]\n"
	"}\n";
#define HAND_LINE_PROD	  3
#define HAND_LINE_SECRETS 6

static git_repository *repo;
static git_odb *odb;
static struct sfs_policy *policy; /* the host's: base, node, hand rules; no private git */

/* Lines of the shipped rules that decide, found in the files themselves. */
static int l_envrc, l_vscode, l_node_modules, l_env_overlay, l_env_dot, l_pem, l_workflows,
	l_package_json;

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		perror("strdup");
		exit(1);
	}
	return d;
}

static void git_die(const char *what)
{
	const git_error *e = git_error_last();

	printf("Bail out! %s: %s\n", what, e && e->message ? e->message : "libgit2 error");
	exit(1);
}

/* Printable form of a name with control or non-ASCII bytes. */
static const char *show(const char *s)
{
	static char buf[4][300];
	static int k;
	char *b = buf[k++ % 4];
	size_t o = 0;

	for (; *s && o + 8 < sizeof(buf[0]); s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f)
			b[o++] = (char)c;
		else
			o += (size_t)snprintf(b + o, sizeof(buf[0]) - o, "\\x%02x", c);
	}
	if (*s)
		o += (size_t)snprintf(b + o, sizeof(buf[0]) - o, "...");
	b[o] = '\0';
	return b;
}

/* The 1-based line of FILE that holds NEEDLE, 0 when none does. */
static int line_of(const char *file, const char *needle)
{
	FILE *f = fopen(file, "r");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, needle)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* ---- trees, written raw ------------------------------------------------- */

struct tdir;

struct tent {
	char *name;
	unsigned mode;
	git_oid id;	  /* a leaf's, or the written subtree's */
	struct tdir *sub; /* a directory made here */
};

struct tdir {
	struct tent *e;
	size_t n;
};

static struct tdir *td_new(void)
{
	return xcalloc(1, sizeof(struct tdir));
}

static void td_free(struct tdir *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->e[i].name);
		td_free(d->e[i].sub);
	}
	free(d->e);
	free(d);
}

/* The entry named exactly NAME in D, made when absent. */
static struct tent *td_entry(struct tdir *d, const char *name)
{
	struct tent *e;

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->e[i].name, name))
			return &d->e[i];
	e = realloc(d->e, (d->n + 1) * sizeof(*e));
	if (!e) {
		perror("realloc");
		exit(1);
	}
	d->e = e;
	e += d->n++;
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	return e;
}

/* Makes entry NAME of D a leaf. */
static void td_leaf(struct tdir *d, const char *name, unsigned mode, const git_oid *id)
{
	struct tent *e = td_entry(d, name);

	td_free(e->sub);
	e->sub = NULL;
	e->mode = mode;
	git_oid_cpy(&e->id, id);
}

/* The subdirectory named exactly NAME of D (replacing a leaf there). */
static struct tdir *td_sub(struct tdir *d, const char *name)
{
	struct tent *e = td_entry(d, name);

	if (!e->sub) {
		e->sub = td_new();
		e->mode = 040000;
	}
	return e->sub;
}

/* The directory holding PATH's last component ('/' separates), made as
 * needed; *LAST is that component. */
static struct tdir *td_parent(struct tdir *d, const char *path, const char **last)
{
	const char *s;
	char comp[1024];

	while ((s = strchr(path, '/'))) {
		snprintf(comp, sizeof(comp), "%.*s", (int)(s - path), path);
		d = td_sub(d, comp);
		path = s + 1;
	}
	*last = path;
	return d;
}

static git_oid blob_of(const char *data, size_t len)
{
	git_oid id;

	if (git_odb_write(&id, odb, data, len, GIT_OBJECT_BLOB) < 0)
		git_die("blob");
	return id;
}

static void put(struct tdir *t, const char *path, unsigned mode, const char *data, size_t len)
{
	const char *name;
	struct tdir *d = td_parent(t, path, &name);
	git_oid id = blob_of(data, len);

	td_leaf(d, name, mode, &id);
}

static void file(struct tdir *t, const char *path, const char *content)
{
	put(t, path, 0100644, content, strlen(content));
}

static void exe(struct tdir *t, const char *path, const char *content)
{
	put(t, path, 0100755, content, strlen(content));
}

static void link_to(struct tdir *t, const char *path, const char *target)
{
	put(t, path, 0120000, target, strlen(target));
}

/* A submodule entry (mode 160000) naming a commit of another repository. */
static void gitlink(struct tdir *t, const char *path)
{
	const char *name;
	struct tdir *d = td_parent(t, path, &name);
	git_oid id;

	git_oid_fromstr(&id, "0123456789abcdef0123456789abcdef01234567");
	td_leaf(d, name, 0160000, &id);
}

static void rm(struct tdir *t, const char *path)
{
	const char *name;
	struct tdir *d = td_parent(t, path, &name);

	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->e[i].name, name)) {
			free(d->e[i].name);
			td_free(d->e[i].sub);
			memmove(&d->e[i], &d->e[i + 1], (d->n - i - 1) * sizeof(d->e[0]));
			d->n--;
			return;
		}
	printf("Bail out! rm: no '%s'\n", path);
	exit(1);
}

/* git's order: names compared bytewise as if a tree's ended in '/'. */
static int ent_cmp(const void *a, const void *b)
{
	const struct tent *x = a, *y = b;
	size_t lx = strlen(x->name), ly = strlen(y->name), n = lx < ly ? lx : ly;
	int r = memcmp(x->name, y->name, n);

	if (r)
		return r;
	int cx = lx > n ? (unsigned char)x->name[n] : x->sub ? '/' : 0;
	int cy = ly > n ? (unsigned char)y->name[n] : y->sub ? '/' : 0;
	return cx - cy;
}

/* Writes D (and its subtrees) as tree objects: "<octal mode> <name>\0<20-byte id>"... */
static git_oid td_write(struct tdir *d)
{
	size_t cap = 64, len = 0;
	char *buf = xcalloc(cap, 1);
	git_oid id;

	for (size_t i = 0; i < d->n; i++)
		if (d->e[i].sub)
			d->e[i].id = td_write(d->e[i].sub);
	qsort(d->e, d->n, sizeof(d->e[0]), ent_cmp);
	for (size_t i = 0; i < d->n; i++) {
		const struct tent *e = &d->e[i];
		size_t need = len + strlen(e->name) + 32 + GIT_OID_RAWSZ;

		if (need > cap) {
			cap = need * 2;
			buf = realloc(buf, cap);
			if (!buf) {
				perror("realloc");
				exit(1);
			}
		}
		len += (size_t)snprintf(buf + len, cap - len, "%o %s", e->mode, e->name) + 1;
		memcpy(buf + len, e->id.id, GIT_OID_RAWSZ);
		len += GIT_OID_RAWSZ;
	}
	if (git_odb_write(&id, odb, buf, len, GIT_OBJECT_TREE) < 0)
		git_die("tree");
	free(buf);
	return id;
}

/* ---- commits ------------------------------------------------------------ */

static git_commit **commits;
static size_t ncommits;

/* A commit of tree TREE with the N parents given, written raw. */
static git_commit *commit_tree(const git_oid *tree, size_t n, git_commit *const *parents)
{
	static unsigned seq;
	char buf[2048], hex[GIT_OID_HEXSZ + 1];
	git_commit *c, **grown;
	git_oid id;
	int o;

	o = snprintf(buf, sizeof(buf), "tree %s\n", git_oid_tostr(hex, sizeof(hex), tree));
	for (size_t i = 0; i < n; i++)
		o += snprintf(buf + o, sizeof(buf) - (size_t)o, "parent %s\n",
			      git_oid_tostr(hex, sizeof(hex), git_commit_id(parents[i])));
	seq++;
	o += snprintf(buf + o, sizeof(buf) - (size_t)o,
		      "author Test <test@example.org> %u +0000\n"
		      "committer Test <test@example.org> %u +0000\n\ncase %u\n",
		      1700000000u + seq, 1700000000u + seq, seq);
	if (git_odb_write(&id, odb, buf, (size_t)o, GIT_OBJECT_COMMIT) < 0 ||
	    git_commit_lookup(&c, repo, &id) < 0)
		git_die("commit");
	grown = realloc(commits, (ncommits + 1) * sizeof(*commits));
	if (!grown) {
		perror("realloc");
		exit(1);
	}
	commits = grown;
	commits[ncommits++] = c;
	return c;
}

/* A commit of T with N parents (git_commit *), T freed. */
static git_commit *commit_of(struct tdir *t, size_t n, ...)
{
	git_commit *parents[8];
	va_list ap;

	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		parents[i] = va_arg(ap, git_commit *);
	va_end(ap);
	git_oid tree = td_write(t);
	td_free(t);
	return commit_tree(&tree, n, parents);
}

/* ---- checking ----------------------------------------------------------- */

#define MAXGOT 16

struct got {
	char *path, *file, *text, *why;
	enum sfs_git_change change;
	enum sfs_class cls;
	int line;
	bool commit_ok; /* the refusal names the commit checked */
};

static struct got got[MAXGOT];
static int ngot;
static const git_oid *checked; /* the commit being checked */
static int stop_at, stop_code; /* the STOP_AT'th refusal returns STOP_CODE */

static void got_clear(void)
{
	for (int i = 0; i < ngot && i < MAXGOT; i++) {
		free(got[i].path);
		free(got[i].file);
		free(got[i].text);
		free(got[i].why);
	}
	memset(got, 0, sizeof(got));
	ngot = 0;
}

static int collect(void *ctx, const struct sfs_git_refusal *r)
{
	int *calls = ctx;

	if (calls)
		(*calls)++;
	if (ngot < MAXGOT) {
		struct got *g = &got[ngot];

		g->path = xstrdup(r->path);
		g->file = xstrdup(r->rule_file ? r->rule_file : "(null)");
		g->text = xstrdup(r->rule_text ? r->rule_text : "(null)");
		g->why = xstrdup(r->why ? r->why : "");
		g->change = r->change;
		g->cls = r->cls;
		g->line = r->rule_line;
		g->commit_ok = r->commit && git_oid_equal(r->commit, checked);
	}
	ngot++;
	return stop_at && ngot == stop_at ? stop_code : 0;
}

static void dump_one(const struct got *g)
{
	printf("#     %s '%s': %s by %s:%d '%s'%s\n", sfs_git_change_name(g->change), show(g->path),
	       sfs_class_name(g->cls), g->file, g->line, show(g->text),
	       g->commit_ok ? "" : " (wrong commit id)");
}

static void dump_got(void)
{
	for (int i = 0; i < ngot && i < MAXGOT; i++)
		dump_one(&got[i]);
}

static int check_with(const struct sfs_policy *p, git_commit *c, char **err)
{
	got_clear();
	checked = git_commit_id(c);
	return sfs_git_check_commit(p, repo, c, collect, NULL, err);
}

static const struct got *find_got(const char *path)
{
	for (int i = 0; i < ngot && i < MAXGOT; i++)
		if (!strcmp(got[i].path, path))
			return &got[i];
	return NULL;
}

struct want {
	const char *path;
	enum sfs_git_change change;
	enum sfs_class cls;
	const char *file;
	int line;
	const char *text;
};

/* Each refusal W describes was made, exactly as described. */
static void expect_wants(const char *what, size_t n, const struct want *w)
{
	for (size_t i = 0; i < n; i++) {
		const struct got *g = find_got(w[i].path);
		bool good = g && g->change == w[i].change && g->cls == w[i].cls &&
			    !strcmp(g->file, w[i].file) && g->line == w[i].line &&
			    !strcmp(g->text, w[i].text) && g->commit_ok && g->why[0];

		if (!ok(good, "%s: %s '%s' refused as %s by %s:%d '%s'", what,
			sfs_git_change_name(w[i].change), show(w[i].path), sfs_class_name(w[i].cls),
			w[i].file, w[i].line, show(w[i].text))) {
			if (g)
				dump_one(g);
			else
				printf("#   no refusal at that path\n");
		}
	}
}

/* Checks C with P: exactly N refusals, those W describes. */
static void expect_p(const struct sfs_policy *p, const char *what, git_commit *c, size_t n,
		     const struct want *w)
{
	char *err = NULL;
	int r = check_with(p, c, &err);

	if (!ok(r == (int)n && ngot == (int)n && !err, "%s: %zu refusal%s", what, n,
		n == 1 ? "" : "s")) {
		printf("#   returned %d (%s), callback called %d time(s)\n", r,
		       err ? err : "no error", ngot);
		dump_got();
	}
	free(err);
	expect_wants(what, n, w);
}

static void expect(const char *what, git_commit *c, size_t n, const struct want *w)
{
	expect_p(policy, what, c, n, w);
}

#define ACCEPTED(what, c) expect((what), (c), 0, NULL)
#define REFUSED(what, c, ...)                                                                      \
	do {                                                                                       \
		const struct want w_[] = {__VA_ARGS__};                                            \
		expect((what), (c), sizeof(w_) / sizeof(w_[0]), w_);                               \
	} while (0)

/* ---- the project -------------------------------------------------------- */

/* A small Node project as the host has it. */
static struct tdir *project(void)
{
	struct tdir *t = td_new();

	file(t, "package.json", "{\"name\": \"demo\", \"scripts\": {\"test\": \"node t.js\"}}\n");
	file(t, "README.md", "# demo\n");
	file(t, "LICENSE", "MIT\n");
	file(t, "src/index.js", "module.exports = 1;\n");
	file(t, "src/a.c", "int main(void) { return 0; }\n");
	file(t, "src/lib/util.js", "exports.x = 2;\n");
	file(t, "docs/guide.md", "guide\n");
	exe(t, "scripts/build.sh", "#!/bin/sh\necho build\n");
	return t;
}

static git_commit *base_commit(void)
{
	static git_commit *base;

	if (!base)
		base = commit_of(project(), 0);
	return base;
}

/* The base project with .envrc. */
static git_commit *envrc_commit(void)
{
	static git_commit *c;

	if (!c) {
		struct tdir *t = project();
		file(t, ".envrc", "export A=1\n");
		c = commit_of(t, 1, base_commit());
	}
	return c;
}

/* A commit of the base project changed by FN, on the base commit. */
static git_commit *changed(void (*fn)(struct tdir *))
{
	struct tdir *t = project();

	fn(t);
	return commit_of(t, 1, base_commit());
}

/* ---- accepted ----------------------------------------------------------- */

static void ch_add_sources(struct tdir *t)
{
	file(t, "src/new.c", "int x;\n");
	file(t, "src/deep/er/still/mod.js", "1;\n");
	file(t, "README.md", "# demo, changed\n");
	file(t, "notes/todo.txt", "todo\n");
}

static void ch_modify(struct tdir *t)
{
	file(t, "src/a.c", "int main(void) { return 1; }\n");
	file(t, "src/lib/util.js", "exports.x = 3;\n");
}

static void ch_remove(struct tdir *t)
{
	rm(t, "src/a.c");
	rm(t, "docs");
}

static void ch_exec_bits(struct tdir *t)
{
	exe(t, "src/a.c", "int main(void) { return 0; }\n");
	file(t, "scripts/build.sh", "#!/bin/sh\necho build\n");
}

static void ch_symlinks(struct tdir *t)
{
	link_to(t, "src/main.js", "index.js");
	link_to(t, "docs/a.c", "../src/a.c");
	link_to(t, "lib", "src/lib");
	link_to(t, "src/deps", "../node_modules/left-pad");
	link_to(t, "up", "src/../docs/guide.md");
}

static void ch_file_to_link(struct tdir *t)
{
	link_to(t, "src/a.c", "lib/util.js");
}

static void ch_readonly(struct tdir *t)
{
	file(t, "LICENSE", "Apache-2.0\n");
	file(t, "Makefile", "all:\n");
}

static void ch_generated(struct tdir *t)
{
	file(t, "dist/package.json", "{}\n");
	file(t, "build/Dockerfile", "FROM scratch\n");
}

static void ch_long_ok_target(struct tdir *t)
{
	/* "./" * 2042 + "src/index.js": exactly 4096 bytes, ending at src/index.js */
	char target[4097];
	size_t o = 0;

	while (o < 4096 - strlen("src/index.js")) {
		target[o++] = '.';
		target[o++] = '/';
	}
	strcpy(target + o, "src/index.js");
	link_to(t, "long", target);
}

static void test_accepted(void)
{
	struct tdir *t;
	char path[2048];

	t = td_new();
	file(t, "README.md", "# fresh\n");
	file(t, "src/index.js", "1;\n");
	file(t, "src/lib/x.ts", "export {};\n");
	exe(t, "scripts/run.sh", "#!/bin/sh\n");
	link_to(t, "src/link.js", "index.js");
	ACCEPTED("a root commit with only ordinary files", commit_of(t, 0));
	ACCEPTED("adding source files, nested directories, a README change",
		 changed(ch_add_sources));
	ACCEPTED("changing source files", changed(ch_modify));
	ACCEPTED("removing a file and a whole directory", changed(ch_remove));
	ACCEPTED("executable bits set and cleared on ordinary files", changed(ch_exec_bits));
	ACCEPTED("relative symlinks to ordinary files and directories inside the project",
		 changed(ch_symlinks));
	ACCEPTED("an ordinary file replaced by a symlink to an ordinary file",
		 changed(ch_file_to_link));
	ACCEPTED("readonly (not writable) paths: judged for protection, not writability",
		 changed(ch_readonly));
	ACCEPTED("tier-1 names inside a generated tree (dist/package.json, build/Dockerfile)",
		 changed(ch_generated));
	ACCEPTED("a symlink target of exactly 4096 bytes that stays ordinary",
		 changed(ch_long_ok_target));

	/* A path far longer than the checker's first buffer. */
	t = project();
	size_t o = 0;
	for (int i = 0; i < 120; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "d%03d/", i);
	snprintf(path + o, sizeof(path) - o, "leaf.js");
	file(t, path, "1;\n");
	ACCEPTED("an ordinary file 120 directories down", commit_of(t, 1, base_commit()));

	/* Each parent brings ordinary changes; the merge resolves a conflict in src/a.c. */
	t = project();
	file(t, "src/a.c", "int main(void) { return 2; }\n");
	file(t, "src/one.js", "1;\n");
	git_commit *a = commit_of(t, 1, base_commit());
	t = project();
	file(t, "src/a.c", "int main(void) { return 3; }\n");
	rm(t, "docs/guide.md");
	file(t, "docs/other.md", "other\n");
	git_commit *b = commit_of(t, 1, base_commit());
	t = project();
	file(t, "src/a.c", "int main(void) { return 5; }\n");
	file(t, "src/one.js", "1;\n");
	rm(t, "docs/guide.md");
	file(t, "docs/other.md", "other\n");
	file(t, "src/merge-only.js", "1;\n");
	ACCEPTED("a merge of two branches with ordinary changes and an ordinary resolution",
		 commit_of(t, 2, a, b));
}

/* ---- refused ------------------------------------------------------------ */

static void test_protected(void)
{
	struct tdir *t;

	t = project();
	file(t, ".envrc", "export A=1\n");
	REFUSED("adding .envrc", commit_of(t, 1, base_commit()),
		{".envrc", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, ".envrc", "export A=2\n");
	REFUSED("changing .envrc the parent has", commit_of(t, 1, envrc_commit()),
		{".envrc", SFS_GIT_MODIFY, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	REFUSED("removing .envrc", commit_of(project(), 1, envrc_commit()),
		{".envrc", SFS_GIT_DELETE, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	exe(t, ".envrc", "export A=1\n");
	REFUSED("only the mode of .envrc (100644 -> 100755)", commit_of(t, 1, envrc_commit()),
		{".envrc", SFS_GIT_MODE, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	/* Content and executable bit at once: still a regular file. */
	t = project();
	exe(t, ".envrc", "export A=3\n");
	REFUSED("content and mode of .envrc changed together: a change of content, not of type",
		commit_of(t, 1, envrc_commit()),
		{".envrc", SFS_GIT_MODIFY, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, ".vscode/tasks.json", "{\"tasks\": []}\n");
	REFUSED("adding .vscode/tasks.json", commit_of(t, 1, base_commit()),
		{".vscode/tasks.json", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode,
		 ".vscode/"});

	t = project();
	file(t, "package.json", "{\"scripts\": {\"postinstall\": \"curl x | sh\"}}\n");
	REFUSED("changing package.json (tier 1 of node)", commit_of(t, 1, base_commit()),
		{"package.json", SFS_GIT_MODIFY, SFS_CLASS_PROTECTED, NODE, l_package_json,
		 "package.json"});

	t = project();
	file(t, ".github/workflows/ci.yml", "on: push\n");
	REFUSED("adding a CI workflow (tier 2)", commit_of(t, 1, base_commit()),
		{".github/workflows/ci.yml", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_workflows,
		 "**/.github/workflows/"});

	t = project();
	exe(t, "deploy/prod.sh", "#!/bin/sh\n");
	file(t, "secrets/token", "hunter2\n");
	file(t, "deploy/staging.sh", "#!/bin/sh\n");
	REFUSED("names protected and hidden by rules added by hand", commit_of(t, 1, base_commit()),
		{"deploy/prod.sh", SFS_GIT_ADD, SFS_CLASS_PROTECTED, HAND, HAND_LINE_PROD,
		 "deploy/prod.sh"},
		{"secrets/token", SFS_GIT_ADD, SFS_CLASS_HIDDEN, HAND, HAND_LINE_SECRETS,
		 "secrets/"});

	t = project();
	file(t, "tools/hooks/pre-commit", "#!/bin/sh\n");
	REFUSED("a path made immutable after compiling (core.hooksPath)",
		commit_of(t, 1, base_commit()),
		{"tools/hooks/pre-commit", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0,
		 "tools/hooks"});

	t = project();
	file(t, ".envrc", "x\n");
	file(t, ".vscode/settings.json", "{}\n");
	file(t, "src/fine.js", "1;\n");
	file(t, "docs/fine.md", "fine\n");
	REFUSED("two protected names among ordinary ones: exactly those two",
		commit_of(t, 1, base_commit()),
		{".envrc", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"},
		{".vscode/settings.json", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode,
		 ".vscode/"});

	t = td_new();
	file(t, "README.md", "x\n");
	file(t, "package.json", "{}\n");
	REFUSED("a root commit is judged against the empty tree", commit_of(t, 0),
		{"package.json", SFS_GIT_ADD, SFS_CLASS_PROTECTED, NODE, l_package_json,
		 "package.json"});
}

static void test_hidden_private(void)
{
	struct tdir *t;

	t = project();
	file(t, ".env", "SECRET=1\n");
	REFUSED("adding .env (served as an overlay)", commit_of(t, 1, base_commit()),
		{".env", SFS_GIT_ADD, SFS_CLASS_OVERLAY, BASE, l_env_overlay, ".env"});

	t = project();
	file(t, ".env.local", "SECRET=1\n");
	file(t, "certs/server.pem", "-----BEGIN PRIVATE KEY-----\n");
	REFUSED("adding hidden names", commit_of(t, 1, base_commit()),
		{".env.local", SFS_GIT_ADD, SFS_CLASS_HIDDEN, BASE, l_env_dot, ".env.*"},
		{"certs/server.pem", SFS_GIT_ADD, SFS_CLASS_HIDDEN, BASE, l_pem, "*.pem"});

	t = project();
	file(t, "node_modules/x/index.js", "module.exports = evil;\n");
	REFUSED("adding node_modules/x/index.js (private)", commit_of(t, 1, base_commit()),
		{"node_modules/x/index.js", SFS_GIT_ADD, SFS_CLASS_PRIVATE, BASE, l_node_modules,
		 "node_modules/"});
}

static void test_git_names(void)
{
	struct tdir *t;

	t = project();
	exe(t, ".git/hooks/pre-commit", "#!/bin/sh\ncurl x | sh\n");
	REFUSED("a tree entry named .git holding hooks/pre-commit", commit_of(t, 1, base_commit()),
		{".git/hooks/pre-commit", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	file(t, "sub/.git/config", "[core]\n\tfsmonitor = evil\n");
	REFUSED("a nested .git (sub/.git/config)", commit_of(t, 1, base_commit()),
		{"sub/.git/config", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	file(t, "sub/.git", "gitdir: ../elsewhere\n");
	REFUSED("a .git file (gitdir pointer)", commit_of(t, 1, base_commit()),
		{"sub/.git", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	char path[2048];
	size_t o = 0;
	for (int i = 0; i < 100; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "dir%03d/", i);
	snprintf(path + o, sizeof(path) - o, ".git/config");
	file(t, path, "[core]\n");
	REFUSED("a .git 100 directories down", commit_of(t, 1, base_commit()),
		{path, SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	gitlink(t, "lib/vendored");
	REFUSED("a submodule (gitlink) at an ordinary path", commit_of(t, 1, base_commit()),
		{"lib/vendored", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "submodule entry"});

	t = project();
	gitlink(t, "src/lib");
	REFUSED("an ordinary directory replaced by a submodule", commit_of(t, 1, base_commit()),
		{"src/lib", SFS_GIT_TYPE, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "submodule entry"});
}

/* Names git refuses, stored raw: '..', '.', one with a '/' in it. */
static void test_bad_names(void)
{
	struct tdir *t, *d;
	git_oid id = blob_of("x\n", 2);
	char *err = NULL;
	int r;

	t = project();
	d = td_sub(t, "..");
	td_leaf(d, "escaped.js", 0100644, &id);
	REFUSED("a tree entry named '..' (and nothing below it judged)",
		commit_of(t, 1, base_commit()),
		{"..", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "tree entry name"});

	t = project();
	d = td_sub(t, "src");
	td_leaf(d, ".", 0100644, &id);
	REFUSED("a file named '.'", commit_of(t, 1, base_commit()),
		{"src/.", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "tree entry name"});

	t = project();
	td_leaf(t, "a/b", 0100644, &id);
	td_leaf(t, "..", 0100644, &id);
	REFUSED("a file named 'a/b' and one named '..'", commit_of(t, 1, base_commit()),
		{"a/b", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "tree entry name"},
		{"..", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "tree entry name"});

	t = project();
	td_leaf(t, "x\\.git\\config", 0100644, &id);
	REFUSED("a name with backslashes that Windows reads as x/.git/config",
		commit_of(t, 1, base_commit()),
		{"x\\.git\\config", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	/* libgit2 cannot even parse an empty name: the check must fail, not pass. */
	t = project();
	d = td_sub(t, "src");
	td_leaf(d, "", 0100644, &id);
	git_commit *c = commit_of(t, 1, base_commit());
	r = check_with(policy, c, &err);
	ok(r < 0 && err && ngot == 0,
	   "an empty tree entry name is an error (%d: %s), never an accepted commit", r,
	   err ? err : "no message");
	free(err);
}

static void test_spellings(void)
{
	struct tdir *t;
	char buf[256];
	static const struct {
		const char *name, *canon;
	} c[] = {
		{".ENVRC", ".envrc"},
		{".VSCode/tasks.json", ".vscode/tasks.json"},
		{".v\xc5\xbf"
		 "code/tasks.json",
		 ".vscode/tasks.json"},		       /* U+017F LONG S */
		{".en\xe2\x80\x8cvrc", ".envrc"},      /* U+200C, HFS+ ignorable */
		{".g\xc4\xb1t/config", ".git/config"}, /* U+0131 DOTLESS I */
		{".git./config", ".git/config"},
		{"GIT~1/hooks/pre-commit", ".git/hooks/pre-commit"},
		{".envrc::$DATA", ".envrc"},
		{".envrc. ", ".envrc"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ssize_t n = sfs_canon_path(c[i].name, strlen(c[i].name), buf, sizeof(buf));
		ok(n >= 0 && !strcmp(buf, c[i].canon), "canon folds '%s' to '%s'", show(c[i].name),
		   c[i].canon);
	}

	t = project();
	file(t, ".ENVRC", "x\n");
	REFUSED("a case variant: .ENVRC", commit_of(t, 1, base_commit()),
		{".ENVRC", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, ".VSCode/tasks.json", "{}\n");
	REFUSED("a case variant: .VSCode/tasks.json", commit_of(t, 1, base_commit()),
		{".VSCode/tasks.json", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode,
		 ".vscode/"});

	t = project();
	file(t, c[2].name, "{}\n");
	file(t, c[3].name, "x\n");
	file(t, c[4].name, "[core]\n");
	REFUSED("Unicode variants: U+017F in .vscode, U+200C in .envrc, U+0131 in .git",
		commit_of(t, 1, base_commit()),
		{c[2].name, SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode, ".vscode/"},
		{c[3].name, SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"},
		{c[4].name, SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	file(t, c[5].name, "[core]\n");
	exe(t, c[6].name, "#!/bin/sh\n");
	file(t, c[7].name, "x\n");
	file(t, c[8].name, "x\n");
	REFUSED("NTFS variants: .git., GIT~1, ::$DATA, trailing dot and space",
		commit_of(t, 1, base_commit()),
		{c[5].name, SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"},
		{c[6].name, SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"},
		{c[7].name, SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"},
		{c[8].name, SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});
}

static void test_symlinks(void)
{
	struct tdir *t;

	t = project();
	link_to(t, "link", ".git/hooks");
	REFUSED("a symlink to .git/hooks", commit_of(t, 1, base_commit()),
		{"link", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	link_to(t, "src/x", "../../outside");
	link_to(t, "x", "../outside");
	REFUSED("symlinks leaving the project", commit_of(t, 1, base_commit()),
		{"x", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, ".."},
		{"src/x", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, ".."});

	t = project();
	link_to(t, "abs", "/etc/passwd");
	REFUSED("an absolute symlink", commit_of(t, 1, base_commit()),
		{"abs", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "/*"});

	/* Chains are followed as the host follows them: every hop allowed,
	 * the chain is; one that lands on a protected name is refused, also
	 * where each link's own target looks harmless. */
	t = project();
	link_to(t, "a", "src");
	link_to(t, "b", "a/index.js");
	link_to(t, "c", "a/../README.md");
	link_to(t, "d", "b");
	ACCEPTED("a chain of symlinks whose every hop is allowed", commit_of(t, 1, base_commit()));
	t = project();
	link_to(t, "gh", ".github");
	link_to(t, "ci", "gh/workflows/ci.yml");
	REFUSED("a chain that reaches .github/workflows through a link to .github",
		commit_of(t, 1, base_commit()),
		{"ci", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_workflows,
		 "**/.github/workflows/"},
		{"gh", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink chain"});

	/* The chain made the other way round: b -> a/../x came first, while
	 * a did not exist; a symlink a later sends b elsewhere. */
	t = project();
	link_to(t, "b", "a/../workflows/ci.yml");
	link_to(t, "c", "a/../README.md");
	git_commit *with_b = commit_of(t, 1, base_commit());
	t = project();
	link_to(t, "b", "a/../workflows/ci.yml");
	link_to(t, "c", "a/../README.md");
	link_to(t, "a", ".github/x");
	REFUSED("a symlink that sends an earlier one to a protected name", commit_of(t, 1, with_b),
		{"a", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink chain"});
	t = project();
	link_to(t, "b", "a/../workflows/ci.yml");
	link_to(t, "c", "a/../README.md");
	link_to(t, "a", "deploy/x");
	ACCEPTED("a symlink that sends earlier ones to allowed names", commit_of(t, 1, with_b));
	t = project();
	link_to(t, "b", "a/../workflows/ci.yml");
	link_to(t, "c", "a/../README.md");
	link_to(t, "z", "src");
	ACCEPTED("a symlink that no other passes through, beside one that passes through an "
		 "absent name",
		 commit_of(t, 1, with_b));

	/* The link the others pass through is already in the parent. */
	t = project();
	link_to(t, "a", ".github");
	git_commit *with_a = commit_of(t, 1, base_commit());
	t = project();
	link_to(t, "a", ".github");
	link_to(t, "b", "a/workflows/x.yml");
	link_to(t, "c", "a/README.md");
	REFUSED("a symlink through a symlink the parent already had", commit_of(t, 1, with_a),
		{"b", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_workflows,
		 "**/.github/workflows/"});

	t = project();
	char *longt = xcalloc(5000, 1);
	memset(longt, 'a', 4097);
	link_to(t, "long", longt);
	free(longt);
	REFUSED("a symlink target of 4097 bytes", commit_of(t, 1, base_commit()),
		{"long", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink"});

	t = project();
	put(t, "nul", 0120000, "src\0/../.git", 12);
	link_to(t, "empty", "");
	link_to(t, "back", "src\\..\\.git");
	REFUSED("symlink targets with a NUL byte, empty, with backslashes",
		commit_of(t, 1, base_commit()),
		{"nul", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink"},
		{"empty", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "/*"},
		{"back", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "\\"});

	t = project();
	link_to(t, "src/cfg", "../.vscode/settings.json");
	link_to(t, "keys", "secrets/");
	link_to(t, "dotenv", "docs/../.env");
	REFUSED("symlinks to protected, hidden and overlay names", commit_of(t, 1, base_commit()),
		{"src/cfg", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode, ".vscode/"},
		{"keys", SFS_GIT_ADD, SFS_CLASS_HIDDEN, HAND, HAND_LINE_SECRETS, "secrets/"},
		{"dotenv", SFS_GIT_ADD, SFS_CLASS_OVERLAY, BASE, l_env_overlay, ".env"});

	t = project();
	link_to(t, "l", "src/index.js");
	git_commit *with_l = commit_of(t, 1, base_commit());
	t = project();
	link_to(t, "l", ".envrc");
	REFUSED("an existing symlink repointed at .envrc", commit_of(t, 1, with_l),
		{"l", SFS_GIT_MODIFY, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	link_to(t, "src/a.c", "../.git/config");
	REFUSED("an ordinary file replaced by a symlink into .git", commit_of(t, 1, base_commit()),
		{"src/a.c", SFS_GIT_TYPE, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});

	t = project();
	link_to(t, ".envrc", "src/index.js");
	REFUSED("a symlink named .envrc, however harmless its target: one refusal",
		commit_of(t, 1, base_commit()),
		{".envrc", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});
}

/* Symlinks the mount refuses for their name: one named like a directory a
 * stricter rule passes through gives what that rule protects a second
 * name, inside a directory the agent writes. */
static void test_shadow_names(void)
{
	struct tdir *t;

	t = project();
	file(t, "docs/ci/workflows/ci.yml", "on: push\n");
	link_to(t, ".github", "docs/ci");
	REFUSED(".github -> docs/ci, which holds workflows/ci.yml", commit_of(t, 1, base_commit()),
		{".github", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink name"});

	t = project();
	link_to(t, "src/.GitHub", "../docs");
	link_to(t, "deploy", "scripts");
	link_to(t, "tools", "src");
	REFUSED("links named .GitHub at depth, deploy (of deploy/prod.sh) and tools (of the "
		"hooks path tools/hooks)",
		commit_of(t, 1, base_commit()),
		{"src/.GitHub", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink name"},
		{"deploy", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink name"},
		{"tools", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink name"});

	t = project();
	link_to(t, ".github", "docs");
	git_commit *with_link = commit_of(t, 1, base_commit());
	t = project();
	link_to(t, ".github", "src");
	REFUSED("a link .github the parent has, repointed", commit_of(t, 1, with_link),
		{".github", SFS_GIT_MODIFY, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink name"});

	t = project();
	file(t, "deploy", "a file\n");
	git_commit *with_file = commit_of(t, 1, base_commit());
	t = project();
	link_to(t, "deploy", "scripts");
	REFUSED("a file deploy turned into a link", commit_of(t, 1, with_file),
		{"deploy", SFS_GIT_TYPE, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink name"});
}

/* A symlink removed, or replaced by a directory, sends the links that
 * resolved through it elsewhere: b -> a/../deploy/prod.sh reaches
 * src/deploy/prod.sh through a -> src/lib, and deploy/prod.sh (protected)
 * once a is gone. The mount refuses such an unlink. */
static void test_links_redirected(void)
{
	struct tdir *t;

	t = project();
	link_to(t, "a", "src/lib");
	link_to(t, "b", "a/../deploy/prod.sh");
	git_commit *with_a = commit_of(t, 1, base_commit());

	t = project();
	link_to(t, "b", "a/../deploy/prod.sh");
	REFUSED("removing the link a that b resolved through", commit_of(t, 1, with_a),
		{"a", SFS_GIT_DELETE, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink chain"});

	t = project();
	link_to(t, "b", "a/../deploy/prod.sh");
	file(t, "a/x", "x\n");
	REFUSED("replacing the link a by a directory", commit_of(t, 1, with_a),
		{"a", SFS_GIT_TYPE, SFS_CLASS_PROTECTED, BUILTIN, 0, "symlink chain"});
}

/* Directories git takes for a repository whatever their name: HEAD with
 * objects/ and refs/, or with commondir (`cd src && git status` reads
 * src/config and runs its core.fsmonitor). */
#define COMPLETES "HEAD + objects/ + refs/"
#define INSIDE	  "config, hooks/ of a git directory"

static void bare_repo(struct tdir *t, const char *dir)
{
	char p[256];
	const char *sep = *dir ? "/" : "";

	snprintf(p, sizeof(p), "%s%sHEAD", dir, sep);
	file(t, p, "ref: refs/heads/main\n");
	snprintf(p, sizeof(p), "%s%sobjects/info/packs", dir, sep);
	file(t, p, "\n");
	snprintf(p, sizeof(p), "%s%srefs/heads/main", dir, sep);
	file(t, p, "0123456789abcdef0123456789abcdef01234567\n");
}

static void test_gitdir_shape(void)
{
	struct tdir *t;

	t = project();
	bare_repo(t, "src/fixture");
	file(t, "src/fixture/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
	file(t, "half/HEAD", "ref: refs/heads/main\n");
	file(t, "half/objects/x", "x\n");
	REFUSED("src/fixture/ with HEAD, objects/, refs/ and a config; half/ without refs/",
		commit_of(t, 1, base_commit()),
		{"src/fixture/HEAD", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"src/fixture/objects", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"src/fixture/refs", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"src/fixture/config", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, INSIDE});

	t = project();
	bare_repo(t, "");
	REFUSED("the shape at the root", commit_of(t, 1, base_commit()),
		{"HEAD", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"objects", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"refs", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES});

	t = project();
	file(t, "a/b/c/d/head", "ref: refs/heads/main\n");
	file(t, "a/b/c/d/Objects/x", "x\n");
	file(t, "a/b/c/d/REFS./x", "x\n");
	REFUSED("head, Objects/, REFS./ four levels down: the names a host folds",
		commit_of(t, 1, base_commit()),
		{"a/b/c/d/head", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"a/b/c/d/Objects", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"a/b/c/d/REFS.", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES});

	t = project();
	file(t, "wt/HEAD", "ref: refs/heads/main\n");
	file(t, "wt/commondir", "../..\n");
	REFUSED("HEAD and commondir", commit_of(t, 1, base_commit()),
		{"wt/HEAD", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"wt/commondir", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES});

	/* One part added to a directory that had the others. */
	t = project();
	file(t, "src/x/HEAD", "ref: refs/heads/main\n");
	file(t, "src/x/objects/x", "x\n");
	git_commit *half = commit_of(t, 1, base_commit());
	t = project();
	file(t, "src/x/HEAD", "ref: refs/heads/main\n");
	file(t, "src/x/objects/x", "x\n");
	file(t, "src/x/refs/x", "x\n");
	REFUSED("refs/ completing a directory its parent had with HEAD and objects/",
		commit_of(t, 1, half),
		{"src/x/refs", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES});

	/* A git directory the host already has (a test fixture): its HEAD,
	 * objects and refs may change, what git reads commands from not. */
	t = project();
	bare_repo(t, "tests/repo.git");
	file(t, "tests/repo.git/config", "[core]\n\tbare = true\n");
	git_commit *fixture = commit_of(t, 1, base_commit());
	t = project();
	bare_repo(t, "tests/repo.git");
	file(t, "tests/repo.git/HEAD", "ref: refs/heads/other\n");
	file(t, "tests/repo.git/objects/ab/cdef", "x\n");
	file(t, "tests/repo.git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
	exe(t, "tests/repo.git/hooks/post-checkout", "#!/bin/sh\n");
	REFUSED("in the host's git directory: HEAD and objects changed, config and hooks/ too",
		commit_of(t, 1, fixture),
		{"tests/repo.git/config", SFS_GIT_MODIFY, SFS_CLASS_IMMUTABLE, BUILTIN, 0, INSIDE},
		{"tests/repo.git/hooks", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, INSIDE});
	t = project();
	bare_repo(t, "tests/repo.git");
	REFUSED("in the host's git directory: config removed", commit_of(t, 1, fixture),
		{"tests/repo.git/config", SFS_GIT_DELETE, SFS_CLASS_IMMUTABLE, BUILTIN, 0, INSIDE});

	/* A merge whose parents each have some of the parts. */
	t = project();
	file(t, "m/HEAD", "ref: refs/heads/main\n");
	file(t, "m/objects/x", "x\n");
	git_commit *p1 = commit_of(t, 1, base_commit());
	t = project();
	file(t, "m/refs/x", "x\n");
	file(t, "m/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
	git_commit *p2 = commit_of(t, 1, base_commit());
	t = project();
	file(t, "m/HEAD", "ref: refs/heads/main\n");
	file(t, "m/objects/x", "x\n");
	file(t, "m/refs/x", "x\n");
	file(t, "m/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
	REFUSED("a merge joining parts from two parents, each without the shape",
		commit_of(t, 2, p1, p2),
		{"m/refs", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, COMPLETES},
		{"m/config", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, INSIDE});
}

/* Modes written other than git writes them: judged as git checks them out
 * (git's canon_mode), not as libgit2's git_tree_entry_filemode reads them.
 * git 2.39 checked out 120755 and 120644 as symlinks and 160755 as a
 * gitlink (an empty directory); libgit2 calls all three executable files. */
static void test_raw_modes(void)
{
	struct tdir *t;

	t = project();
	put(t, "lnkabs", 0120755, "/etc", 4);
	put(t, "lnkgit", 0120755, ".git", 4);
	put(t, "src/cfg", 0120644, "../.vscode/settings.json", 24);
	REFUSED("symlinks at modes 120755 and 120644, which libgit2 calls files",
		commit_of(t, 1, base_commit()),
		{"lnkabs", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BUILTIN, 0, "/*"},
		{"lnkgit", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"},
		{"src/cfg", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode, ".vscode/"});

	t = project();
	struct tdir *d = td_sub(t, "vendor");
	git_oid id;
	git_oid_fromstr(&id, "0123456789abcdef0123456789abcdef01234567");
	td_leaf(d, "lib", 0160755, &id);
	REFUSED("a submodule at mode 160755", commit_of(t, 1, base_commit()),
		{"vendor/lib", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "submodule entry"});

	t = project();
	put(t, "src/a.c", 0120755, "../.git/config", 14);
	REFUSED("a file turned into a symlink at mode 120755: a change of type",
		commit_of(t, 1, base_commit()),
		{"src/a.c", SFS_GIT_TYPE, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"});
}

/* Types change at protected names: a file becomes a directory and back. */
static void test_type_changes(void)
{
	struct tdir *t;

	t = project();
	file(t, ".envrc/x", "x\n");
	REFUSED("the file .envrc replaced by a directory .envrc/", commit_of(t, 1, envrc_commit()),
		{".envrc", SFS_GIT_TYPE, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"},
		{".envrc/x", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, ".vscode/tasks.json", "{}\n");
	git_commit *with_dir = commit_of(t, 1, base_commit());
	t = project();
	file(t, ".vscode", "x\n");
	REFUSED("the directory .vscode/ replaced by a file .vscode", commit_of(t, 1, with_dir),
		{".vscode", SFS_GIT_TYPE, SFS_CLASS_PROTECTED, BASE, l_vscode, ".vscode/"},
		{".vscode/tasks.json", SFS_GIT_DELETE, SFS_CLASS_PROTECTED, BASE, l_vscode,
		 ".vscode/"});

	t = project();
	link_to(t, ".envrc", "src/index.js");
	REFUSED("the file .envrc replaced by a symlink", commit_of(t, 1, envrc_commit()),
		{".envrc", SFS_GIT_TYPE, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	gitlink(t, ".envrc");
	REFUSED("the file .envrc replaced by a submodule", commit_of(t, 1, envrc_commit()),
		{".envrc", SFS_GIT_TYPE, SFS_CLASS_IMMUTABLE, BUILTIN, 0, "submodule entry"});
}

/* ---- merges ------------------------------------------------------------- */

static void test_merges(void)
{
	struct tdir *t;

	/* A: an ordinary change; B: adds .envrc. */
	t = project();
	file(t, "src/a-side.js", "1;\n");
	git_commit *a = commit_of(t, 1, base_commit());
	t = project();
	file(t, ".envrc", "export FROM_B=1\n");
	git_commit *b = commit_of(t, 1, base_commit());
	t = project();
	file(t, ".envrc", "export FROM_C=1\n");
	git_commit *c = commit_of(t, 1, base_commit());

	REFUSED("the second parent's own commit adding .envrc", b,
		{".envrc", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, "src/a-side.js", "1;\n");
	file(t, ".envrc", "export FROM_B=1\n");
	ACCEPTED("a merge taking .envrc unchanged from its second parent", commit_of(t, 2, a, b));

	t = project();
	file(t, "src/a-side.js", "1;\n");
	file(t, ".envrc", "export FROM_B=1\n");
	ACCEPTED("a merge taking .envrc from its first parent", commit_of(t, 2, b, a));

	t = project();
	file(t, "src/a-side.js", "1;\n");
	ACCEPTED("a merge dropping .envrc, as its second parent has it (absent)",
		 commit_of(t, 2, b, a));

	t = project();
	file(t, "src/a-side.js", "1;\n");
	file(t, ".envrc", "export NEITHER=1\n");
	REFUSED("a merge introducing a .envrc neither parent had", commit_of(t, 2, a, b),
		{".envrc", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, ".envrc", "export FROM_B=1\nexport FROM_C=1\n");
	REFUSED("a merge resolving .envrc to content neither parent had", commit_of(t, 2, b, c),
		{".envrc", SFS_GIT_MODIFY, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	REFUSED("a merge removing the .envrc both parents have", commit_of(t, 2, b, c),
		{".envrc", SFS_GIT_DELETE, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, "src/a-side.js", "1;\n");
	exe(t, ".envrc", "export FROM_B=1\n");
	REFUSED("a merge taking B's .envrc with a mode neither parent had", commit_of(t, 2, a, b),
		{".envrc", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_envrc, ".envrc"});

	t = project();
	file(t, "src/a-side.js", "1;\n");
	file(t, ".envrc", "export FROM_C=1\n");
	file(t, ".vscode/tasks.json", "{}\n");
	REFUSED("an octopus merge: .envrc from the third parent passes, .vscode does not",
		commit_of(t, 3, a, b, c),
		{".vscode/tasks.json", SFS_GIT_ADD, SFS_CLASS_PROTECTED, BASE, l_vscode,
		 ".vscode/"});

	/* Submodules and symlinks a parent brought are that parent's business. */
	t = project();
	gitlink(t, "lib/vendored");
	link_to(t, "abs", "/etc/passwd");
	git_commit *s = commit_of(t, 1, base_commit());
	t = project();
	file(t, "src/a-side.js", "1;\n");
	gitlink(t, "lib/vendored");
	link_to(t, "abs", "/etc/passwd");
	ACCEPTED("a merge taking a submodule and a symlink from its second parent",
		 commit_of(t, 2, a, s));

	/* The host's history turned .envrc into a directory; the agent's branch
	 * (first parent) still has the file; the merge takes the host's side. */
	t = project();
	file(t, ".envrc", "export A=1\n");
	file(t, "src/a-side.js", "1;\n");
	git_commit *agent = commit_of(t, 1, envrc_commit());
	t = project();
	file(t, ".envrc/x", "x\n");
	git_commit *host = commit_of(t, 1, envrc_commit());
	t = project();
	file(t, ".envrc/x", "x\n");
	file(t, "src/a-side.js", "1;\n");
	ACCEPTED("a merge taking the directory .envrc/ from its second parent, replacing the "
		 "first parent's file",
		 commit_of(t, 2, agent, host));
	t = project();
	file(t, ".envrc", "export A=1\n");
	file(t, "src/a-side.js", "1;\n");
	ACCEPTED("a merge keeping the file .envrc of its second parent over the first parent's "
		 "directory",
		 commit_of(t, 2, host, agent));
}

/* ---- objects as git fsck sees them -------------------------------------- */

/* A tree written byte by byte, in the order given: "MODE NAME\0ID"... */
struct rawtree {
	char b[4096];
	size_t n;
};

static void rt_add(struct rawtree *t, const char *mode, const char *name, const git_oid *id)
{
	t->n += (size_t)snprintf(t->b + t->n, sizeof(t->b) - t->n, "%s %s", mode, name) + 1;
	memcpy(t->b + t->n, id->id, GIT_OID_RAWSZ);
	t->n += GIT_OID_RAWSZ;
}

static git_oid rt_write(const struct rawtree *t)
{
	git_oid id;

	if (git_odb_write(&id, odb, t->b, t->n, GIT_OBJECT_TREE) < 0)
		git_die("raw tree");
	return id;
}

/* A commit written as "tree TREE\n" and REST. */
static git_oid raw_commit(const git_oid *tree, const char *rest)
{
	char buf[1024], hex[GIT_OID_HEXSZ + 1];
	git_oid id;
	int n = snprintf(buf, sizeof(buf), "tree %s\n%s", git_oid_tostr(hex, sizeof(hex), tree),
			 rest);

	if (git_odb_write(&id, odb, buf, (size_t)n, GIT_OBJECT_COMMIT) < 0)
		git_die("raw commit");
	return id;
}

#define IDENTS                                                                                     \
	"author A <a@example.org> 1700000000 +0000\n"                                              \
	"committer A <a@example.org> 1700000000 +0000\n"

/* The objects of commit ID checked, with the host's objects KNOWN, and a
 * fresh record of what was seen unless SEEN is given. */
static int objects_of(git_odb *known, struct sfs_git_objects *seen, const git_oid *id, char **err)
{
	struct sfs_git_objects *o = seen;
	int r;

	got_clear();
	checked = id;
	if (!o && sfs_git_objects_new(known, &o) < 0)
		git_die("objects");
	r = sfs_git_check_objects(o, repo, id, collect, NULL, err);
	if (o != seen)
		sfs_git_objects_free(o);
	return r;
}

/* Commit ID's objects: exactly N refusals, each of object TYPE ID_OF at
 * PATH[i] for a reason holding WHY[i]. */
static void expect_objects(const char *what, git_odb *known, struct sfs_git_objects *seen,
			   const git_oid *id, size_t n, const char *const *path, const char *type,
			   const git_oid *id_of, const char *const *why)
{
	char *err = NULL, text[64], hex[GIT_OID_HEXSZ + 1];
	int r = objects_of(known, seen, id, &err);

	if (!ok(r == (int)n && ngot == (int)n && !err, "%s: %zu refusal%s", what, n,
		n == 1 ? "" : "s")) {
		printf("#   returned %d (%s), callback called %d time(s)\n", r,
		       err ? err : "no error", ngot);
		dump_got();
	}
	free(err);
	if (n)
		snprintf(text, sizeof(text), "%s %s", type, git_oid_tostr(hex, sizeof(hex), id_of));
	for (size_t i = 0; i < n; i++) {
		const struct got *g = find_got(path[i]);
		bool good = g && g->change == SFS_GIT_ADD && g->cls == SFS_CLASS_IMMUTABLE &&
			    !strcmp(g->file, BUILTIN) && g->line == 0 && !strcmp(g->text, text) &&
			    strstr(g->why, why[i]) && g->commit_ok;
		if (!ok(good, "%s: '%s' refused, '%s': %s", what, show(path[i]), text, why[i])) {
			if (g)
				printf("#     '%s' '%s': %s\n", show(g->path), g->text, g->why);
			else
				printf("#   no refusal at that path\n");
		}
	}
}

#define SOUND_OBJECTS(what, id) expect_objects((what), NULL, NULL, (id), 0, NULL, NULL, NULL, NULL)
#define BAD_OBJECT(what, id, path, type, of, why)                                                  \
	expect_objects((what), NULL, NULL, (id), 1, (const char *const[]){path}, (type), (of),     \
		       (const char *const[]){why})

static void test_objects(void)
{
	git_oid blob = blob_of("x\n", 2), target = blob_of("/etc", 4), missing, tree, sub, c;
	git_oid_fromstr(&missing, "00000000000000000000000000000000000000aa");
	struct rawtree t;

	SOUND_OBJECTS("an ordinary commit and its tree", git_commit_id(base_commit()));
	SOUND_OBJECTS("a merge",
		      git_commit_id(commit_of(project(), 2, base_commit(), envrc_commit())));

	t = (struct rawtree){0};
	rt_add(&t, "100644", "a", &blob);
	rt_add(&t, "120755", "lnkabs", &target);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a tree entry of mode 120755", &c, "lnkabs", "tree", &tree, "badFilemode");

	t = (struct rawtree){0};
	rt_add(&t, "100664", "old", &blob);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a tree entry of mode 100664", &c, "old", "tree", &tree, "badFilemode");

	t = (struct rawtree){0};
	rt_add(&t, "100644", "b", &blob);
	rt_add(&t, "100644", "a", &blob);
	sub = rt_write(&t);
	t = (struct rawtree){0};
	rt_add(&t, "40000", "src", &sub);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a subtree out of git's order", &c, "src/a", "tree", &sub, "treeNotSorted");

	t = (struct rawtree){0};
	rt_add(&t, "100644", "a", &blob);
	rt_add(&t, "100644", "a.c", &blob);
	rt_add(&t, "40000", "a", &sub);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a file and a directory of one name", &c, "a", "tree", &tree,
		   "duplicateEntries");

	t = (struct rawtree){0};
	rt_add(&t, "040000", "d", &sub);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a zero-padded mode", &c, "d", "tree", &tree, "zeroPaddedFilemode");

	t = (struct rawtree){0};
	rt_add(&t, "100644", "gone", &missing);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("an entry naming an object that is not there", &c, "gone", "tree", &tree,
		   "not there");

	t = (struct rawtree){0};
	rt_add(&t, "40000", "d", &blob);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a tree entry naming a blob", &c, "d", "tree", &tree, "another type");

	t = (struct rawtree){0};
	rt_add(&t, "100644", "f", &sub);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nm\n");
	BAD_OBJECT("a file entry naming a tree", &c, "f", "tree", &tree, "another type");

	struct tdir *td = project();
	tree = td_write(td);
	td_free(td);
	c = raw_commit(&tree, "author A <a@x> 0123 +0000\ncommitter A <a@x> 1 +0000\n\nm\n");
	BAD_OBJECT("a commit with a zero-padded date", &c, ".", "commit", &c, "zeroPaddedDate");
	c = raw_commit(&tree, IDENTS "m\n");
	BAD_OBJECT("a commit with no blank line before its message", &c, ".", "commit", &c,
		   "unterminatedHeader");
	c = raw_commit(&blob, IDENTS "\nm\n");
	BAD_OBJECT("a commit whose tree is a blob", &c, ".", "commit", &c, "another type");
	c = raw_commit(&tree, "parent 00000000000000000000000000000000000000aa\n" IDENTS "\nm\n");
	BAD_OBJECT("a commit whose parent is not there", &c, ".", "commit", &c, "not there");
	git_oid tree_of_base = *git_commit_tree_id(base_commit());
	char text[256], hex[GIT_OID_HEXSZ + 1];
	snprintf(text, sizeof(text), "parent %s\n" IDENTS "\nm\n",
		 git_oid_tostr(hex, sizeof(hex), &tree_of_base));
	c = raw_commit(&tree, text);
	BAD_OBJECT("a commit whose parent is a tree", &c, ".", "commit", &c, "another type");

	/* Two commits of one import share a faulty tree: one refusal. */
	struct sfs_git_objects *seen = NULL;
	if (sfs_git_objects_new(NULL, &seen) < 0)
		git_die("objects");
	t = (struct rawtree){0};
	rt_add(&t, "100755", "z", &blob);
	rt_add(&t, "100644", "y", &blob);
	sub = rt_write(&t);
	t = (struct rawtree){0};
	rt_add(&t, "40000", "lib", &sub);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nfirst\n");
	expect_objects("the first commit with a faulty tree", NULL, seen, &c, 1,
		       (const char *const[]){"lib/y"}, "tree", &sub,
		       (const char *const[]){"treeNotSorted"});
	snprintf(text, sizeof(text), "parent %s\n" IDENTS "\nsecond\n",
		 git_oid_tostr(hex, sizeof(hex), &c));
	t = (struct rawtree){0};
	rt_add(&t, "40000", "lib", &sub);
	rt_add(&t, "100644", "new", &blob);
	tree = rt_write(&t);
	c = raw_commit(&tree, text);
	expect_objects("the second, with the same tree below: judged once", NULL, seen, &c, 0, NULL,
		       NULL, NULL, NULL);
	sfs_git_objects_free(seen);

	/* Both checks, as the import makes them: the objects, then the
	 * changes as far as libgit2 can read them. */
	td = project();
	exe(td, ".git/hooks/pre-commit", "#!/bin/sh\n");
	git_commit *dotgit = commit_of(td, 1, base_commit());
	char *err = NULL;
	if (sfs_git_objects_new(NULL, &seen) < 0)
		git_die("objects");
	got_clear();
	checked = git_commit_id(dotgit);
	int r = sfs_git_check(policy, seen, repo, checked, collect, NULL, &err);
	const struct got *g1 = find_got(".git"), *g2 = find_got(".git/hooks/pre-commit");
	if (!ok(r == 2 && !err && g1 && strstr(g1->why, "hasDotgit") && g2 &&
			!strcmp(g2->text, ".git") && g2->commit_ok,
		"a tree entry .git: refused by fsck's rule at '.git' and by the policy below it"))
		dump_got();
	sfs_git_objects_free(seen);
	free(err);
	err = NULL;

	td = project();
	td_leaf(td, "dangling", 0120000, &missing);
	git_commit *dangling = commit_of(td, 1, base_commit());
	if (sfs_git_objects_new(NULL, &seen) < 0)
		git_die("objects");
	got_clear();
	checked = git_commit_id(dangling);
	r = sfs_git_check(policy, seen, repo, checked, collect, NULL, &err);
	g1 = find_got("dangling");
	if (!ok(r == 1 && !err && g1 && strstr(g1->why, "not there"),
		"a symlink whose blob is not there: refused, where the policy's check alone "
		"cannot read it (%d: %s)",
		r, err ? err : "no error"))
		dump_got();
	sfs_git_objects_free(seen);
	free(err);

	/* What the host has is the host's: neither judged nor copied. */
	git_repository *host = NULL;
	git_odb *known = NULL;
	char path[512];
	snprintf(path, sizeof(path), "%s/host", scratch_path);
	if (git_repository_init(&host, path, true) < 0 || git_repository_odb(&known, host) < 0)
		git_die("host repository");
	git_oid in_host;
	t = (struct rawtree){0};
	rt_add(&t, "100755", "z", &blob);
	rt_add(&t, "100644", "y", &blob);
	if (git_odb_write(&in_host, known, t.b, t.n, GIT_OBJECT_TREE) < 0)
		git_die("host tree");
	t = (struct rawtree){0};
	rt_add(&t, "40000", "lib", &sub);
	tree = rt_write(&t);
	c = raw_commit(&tree, IDENTS "\nonto the host's\n");
	expect_objects("a faulty tree the host has already", known, NULL, &c, 0, NULL, NULL, NULL,
		       NULL);
	git_odb_free(known);
	git_repository_free(host);
}

/* ---- the callback and errors -------------------------------------------- */

static void test_callback(void)
{
	struct tdir *t;
	char *err = NULL;
	int r, calls = 0;

	t = project();
	file(t, ".envrc", "x\n");
	file(t, ".vscode/tasks.json", "{}\n");
	file(t, ".env", "X=1\n");
	git_commit *c = commit_of(t, 1, base_commit());

	got_clear();
	checked = git_commit_id(c);
	stop_at = 1;
	stop_code = -42;
	r = sfs_git_check_commit(policy, repo, c, collect, &calls, &err);
	ok(r == -42 && calls == 1 && !err,
	   "a callback returning -42 at the first refusal stops the check with -42 (got %d after "
	   "%d call(s))",
	   r, calls);
	free(err);
	err = NULL;

	got_clear();
	calls = 0;
	stop_at = 2;
	stop_code = -ECANCELED;
	r = sfs_git_check_commit(policy, repo, c, collect, &calls, &err);
	ok(r == -ECANCELED && calls == 2 && !err,
	   "a callback returning -ECANCELED at the second refusal stops there (got %d after %d "
	   "call(s))",
	   r, calls);
	free(err);
	err = NULL;

	got_clear();
	calls = 0;
	stop_at = 1;
	stop_code = 7;
	r = sfs_git_check_commit(policy, repo, c, collect, &calls, &err);
	ok(r == 3 && calls == 3 && !err, "a positive return does not stop it (got %d, %d calls)", r,
	   calls);
	stop_at = 0;
	bool ids = ngot == 3;
	for (int i = 0; i < ngot && i < MAXGOT; i++)
		ids = ids && got[i].commit_ok;
	ok(ids, "every refusal carries the id of the commit checked");
	free(err);
	err = NULL;

	r = sfs_git_check_commit(policy, repo, c, NULL, NULL, &err);
	ok(r == 3 && !err, "without a callback the refusals are only counted (got %d)", r);
	free(err);
	err = NULL;

	ok(!strcmp(sfs_git_change_name(SFS_GIT_ADD), "adds") &&
		   !strcmp(sfs_git_change_name(SFS_GIT_MODIFY), "changes") &&
		   !strcmp(sfs_git_change_name(SFS_GIT_MODE), "changes the mode of") &&
		   !strcmp(sfs_git_change_name(SFS_GIT_TYPE), "changes the type of") &&
		   !strcmp(sfs_git_change_name(SFS_GIT_DELETE), "removes"),
	   "change names");

	/* Objects that are not there: an error with a message, never a pass. */
	git_oid missing;
	git_oid_fromstr(&missing, "00000000000000000000000000000000000000aa");
	t = project();
	td_leaf(t, "dangling", 0120000, &missing);
	c = commit_of(t, 1, base_commit());
	r = check_with(policy, c, &err);
	ok(r == -EIO && err && strstr(err, "cannot read"),
	   "a symlink whose blob is missing: -EIO (%d: %s)", r, err ? err : "no message");
	free(err);
	err = NULL;

	t = project();
	td_leaf(t, "gone", 040000, &missing);
	c = commit_of(t, 1, base_commit());
	r = check_with(policy, c, &err);
	ok(r == -EIO && err && strstr(err, "cannot read"),
	   "a subtree that is missing: -EIO (%d: %s)", r, err ? err : "no message");
	free(err);
	err = NULL;

	c = commit_tree(&missing, 1, (git_commit *[]){base_commit()});
	r = check_with(policy, c, &err);
	ok(r == -EIO && err, "a commit whose tree is missing: -EIO (%d: %s)", r,
	   err ? err : "no message");
	free(err);
	got_clear();
}

/* ---- private git -------------------------------------------------------- */

static void test_private_git(void)
{
	struct sfs_decision d;
	static const char *const priv[] = {".git", ".git/config", ".GIT/x", ".worktrees/x/.git",
					   "GIT~1/hooks/pre-commit"};
	static const char *const imm[] = {"sub/.git", "sub/.git/config", "sub/.GIT/hooks/x",
					  ".worktrees-not/.git"};

	sfs_policy_set_private_git(policy, true);
	ok(sfs_policy_private_git(policy), "private git can be switched on");
	for (size_t i = 0; i < sizeof(priv) / sizeof(priv[0]); i++) {
		sfs_policy_decide(policy, priv[i], SFS_OP_WRITE, &d);
		if (!ok(d.cls == SFS_CLASS_PRIVATE && d.allowed && d.err == 0 &&
				!strcmp(d.rule_file, BUILTIN) && d.rule &&
				!strcmp(d.rule->key, "private-git"),
			"private git: '%s' is private and writable", priv[i]))
			printf("#   got %s, %s, %s '%s'\n", sfs_class_name(d.cls),
			       d.allowed ? "allowed" : "denied", d.rule_file, d.rule_text);
	}
	for (size_t i = 0; i < sizeof(imm) / sizeof(imm[0]); i++) {
		sfs_policy_decide(policy, imm[i], SFS_OP_WRITE, &d);
		if (!ok(d.cls == SFS_CLASS_IMMUTABLE && !d.allowed && d.err == EROFS &&
				!strcmp(d.rule_text, ".git"),
			"private git: '%s' stays immutable", imm[i]))
			printf("#   got %s, %s, %s '%s'\n", sfs_class_name(d.cls),
			       d.allowed ? "allowed" : "denied", d.rule_file, d.rule_text);
	}

	d = (struct sfs_decision){.allowed = true};
	sfs_policy_check_symlink_target(policy, "link", ".git/hooks", NULL, NULL, &d);
	ok(!d.allowed && d.err == EROFS && d.cls == SFS_CLASS_IMMUTABLE &&
		   !strcmp(d.rule_file, BUILTIN) && !strcmp(d.rule_text, ".git"),
	   "private git: the target .git/hooks of 'link' is refused as immutable (got %s, '%s')",
	   sfs_class_name(d.cls), d.rule_text);
	d = (struct sfs_decision){.allowed = true};
	sfs_policy_check_symlink_target(policy, "src/l", "../.worktrees/x", NULL, NULL, &d);
	ok(d.allowed, "private git: a target into .worktrees is not protective (private)");
	sfs_policy_check_symlink(policy, "src/link", "../.git/config", NULL, NULL, &d);
	ok(!d.allowed && d.cls == SFS_CLASS_IMMUTABLE,
	   "private git: symlink(src/link -> ../.git/config) is refused as immutable");

	/* A commit is still judged: what is private is refused too. */
	struct tdir *t = project();
	file(t, ".git/hooks/pre-commit", "#!/bin/sh\n");
	link_to(t, "link", ".git/hooks");
	expect_p(policy, "private git on: a commit adding .git/hooks/pre-commit and link -> .git",
		 commit_of(t, 1, base_commit()), 2,
		 (const struct want[]){
			 {".git/hooks/pre-commit", SFS_GIT_ADD, SFS_CLASS_PRIVATE, BUILTIN, 0,
			  ".git"},
			 {"link", SFS_GIT_ADD, SFS_CLASS_IMMUTABLE, BUILTIN, 0, ".git"},
		 });

	sfs_policy_set_private_git(policy, false);
	ok(!sfs_policy_private_git(policy), "private git can be switched off");
	sfs_policy_decide(policy, ".git/config", SFS_OP_WRITE, &d);
	ok(d.cls == SFS_CLASS_IMMUTABLE && !d.allowed && d.err == EROFS &&
		   !strcmp(d.rule_text, ".git"),
	   "private git off: .git/config is immutable");
	sfs_policy_decide(policy, ".worktrees/x/file", SFS_OP_LOOKUP, &d);
	ok(d.cls == SFS_CLASS_READONLY, "private git off: .worktrees/x/file is plain readonly");
}

/* ---- main --------------------------------------------------------------- */

static struct sfs_policy *load_policy(void)
{
	struct sfs_loader *l = sfs_loader_new(SANDY_SOURCE_RULES_DIR, SANDY_SOURCE_OVERLAYS_DIR);
	struct sfs_policy *p = NULL;
	char *err = NULL;
	int r = l ? 0 : -ENOMEM;

	if (r == 0)
		r = sfs_loader_add_type(l, "base", "always", &err);
	if (r == 0)
		r = sfs_loader_add_type(l, "node", "--type", &err);
	if (r == 0)
		r = sfs_loader_add_buffer(l, HAND, hand_rules, strlen(hand_rules), SFS_TRUST_USER,
					  "--rules", &err);
	if (r == 0)
		r = sfs_loader_finish(l, &p, &err);
	if (r == 0)
		r = sfs_policy_add_immutable(p, "tools/hooks", "core.hooksPath");
	if (r < 0) {
		printf("# cannot load the rules: %s\n", err ? err : strerror(-r));
		sfs_policy_free(p);
		p = NULL;
	}
	free(err);
	sfs_loader_free(l);
	return p;
}

int main(void)
{
	const char *dir = scratch_dir();
	char path[512];

	l_envrc = line_of(BASE, "{\"path\": \".envrc\"");
	l_vscode = line_of(BASE, "{\"path\": \".vscode/\"");
	l_node_modules = line_of(BASE, "{\"path\": \"node_modules/\"");
	l_env_overlay = line_of(BASE, "{\"path\": \".env\", \"file\"");
	l_env_dot = line_of(BASE, "{\"path\": \".env.*\"");
	l_pem = line_of(BASE, "{\"path\": \"*.pem\"");
	l_workflows = line_of(BASE, "{\"path\": \"**/.github/workflows/\"");
	l_package_json = line_of(NODE, "{\"path\": \"package.json\"");
	if (!ok(l_envrc && l_vscode && l_node_modules && l_env_overlay && l_env_dot && l_pem &&
			l_workflows && l_package_json,
		"the deciding lines are found in the shipped rules"))
		return tap_done();

	policy = load_policy();
	if (!ok(policy != NULL, "base, node and hand-written rules load"))
		return tap_done();

	git_libgit2_init();
	snprintf(path, sizeof(path), "%s/repo", dir);
	if (git_repository_init(&repo, path, false) < 0 || git_repository_odb(&odb, repo) < 0)
		git_die("repository");

	test_accepted();
	test_protected();
	test_hidden_private();
	test_git_names();
	test_bad_names();
	test_spellings();
	test_symlinks();
	test_shadow_names();
	test_links_redirected();
	test_gitdir_shape();
	test_raw_modes();
	test_type_changes();
	test_merges();
	test_objects();
	test_callback();
	test_private_git();

	got_clear();
	for (size_t i = 0; i < ncommits; i++)
		git_commit_free(commits[i]);
	free(commits);
	git_odb_free(odb);
	git_repository_free(repo);
	git_libgit2_shutdown();
	sfs_policy_free(policy);
	return tap_done();
}
