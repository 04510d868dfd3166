/*
 * policy: the compiled policy object and the pure decision function (see
 * policy.h). Owns class precedence, the built-in .git rule and the verdict
 * of each operation (symlink targets: symchain.c).
 *
 * Fast path of a decision: canonicalise the path into a stack buffer (pure
 * ASCII names are only lower-cased), look for a ".git" component, run one
 * combined regex of every private, hidden, protected and overlay glob over
 * the canonical path, and, when it does not match, the write regex over
 * the real path. The per-class regexes run only when the combined one
 * matched.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "glob.h"
#include "common/path.h"
#include "policy.h"
#include "common/err.h"
#include "common/util.h"

struct imm {
	char *canon;
	size_t len;
	struct sfs_rule rule;
};

struct classset {
	struct sfs_globset *gs;
	const struct sfs_rule **map; /* glob index -> rule */
	size_t n;
};

struct sfs_policy {
	struct sfs_rule **rules;
	size_t nrules, caprules;
	struct sfs_rule_source *sources;
	size_t nsources;
	bool compiled;

	bool ownership;
	/* SOURCE's .git and .worktrees are the agent's private repository and
	 * worktrees, served from the store (sfs_policy_set_private_git). */
	bool private_git;

	/* protect is split by tier: tiers 1 and 2 do not apply in a
	 * generated tree (gen, a subset of the write rules). */
	struct classset write, gen, private, protect0, protect12, hide, overlay, strict;
	/* Tier 1 and 2 protections a user-level file released: writable. */
	struct classset released;
	/* Hide rules with exceptions, each asked on its own: a path the
	 * pattern matches and no exception does is hidden. */
	struct hide_except {
		const struct sfs_rule *rule;
		struct sfs_globset *pattern, *except;
	} *hexc;
	size_t nhexc;
	struct imm *imm;
	size_t nimm;
	/* Canonical names (or glob components) that stricter rules pass
	 * through on the way to what they protect (sfs_policy_shadow_name). */
	char **shadow;
	size_t nshadow;
};

static const struct sfs_rule rule_git = {
	.cls = SFS_CLASS_IMMUTABLE,
	.file = "(built-in)",
	.key = "immutable",
	.index = 0,
	.pattern = ".git",
	.why = "git internals: the host's git reads config (core.fsmonitor, hooksPath, "
	       "filters, aliases), hooks and attributes from here, and a planted or nested "
	       ".git (directory or gitdir: file) repoints git at content the writer controls",
};

static const struct sfs_rule rule_private_git = {
	.cls = SFS_CLASS_PRIVATE,
	.file = "(built-in)",
	.key = "private-git",
	.index = 0,
	.pattern = ".git",
	.why = "the agent's own repository, kept in the store and layered on the host's "
	       "objects: it commits here, the host's .git does not change, and its branches "
	       "come back only through the checked import (sandy git import)",
};

static const struct sfs_rule rule_private_worktrees = {
	.cls = SFS_CLASS_PRIVATE,
	.file = "(built-in)",
	.key = "private-git",
	.index = 1,
	.pattern = ".worktrees",
	.why = "the worktrees of the agent's own repository (git worktree add .worktrees/NAME), "
	       "whose .git files point into it: kept in the store with it",
};

static const struct sfs_rule rule_root = {
	.cls = SFS_CLASS_READONLY,
	.file = "(built-in)",
	.key = "root",
	.index = 0,
	.pattern = "",
	.why = "SOURCE itself is never removed, renamed or re-moded",
};

/* Fails closed: what cannot be evaluated is neither visible nor writable. */
static const struct sfs_rule rule_error = {
	.cls = SFS_CLASS_HIDDEN,
	.file = "(built-in)",
	.key = "error",
	.index = 0,
	.pattern = "",
	.why = "the policy could not be evaluated for this path (out of memory, or a "
	       "pattern match failed), so it is treated as hidden",
};

static const struct sfs_rule rule_owned = {
	.cls = SFS_CLASS_OWNED,
	.file = "(built-in)",
	.key = "owned",
	.index = 0,
	.pattern = "",
	.why = "created through the mount by the agent (or being created now), so the agent "
	       "may change, rename and remove it (a rule file with \"owned\": false turns "
	       "this off)",
};

static void set_rule(struct sfs_decision *out, enum sfs_class cls, const struct sfs_rule *r);

static const char why_default[] = "no write rule matches: read-only by default";
static const char why_released[] =
	"released by a user-level rule file: the agent may change it (the protection's "
	"reason stands: review what it writes)";

/* ---- names -------------------------------------------------------------- */

const char *sfs_class_name(enum sfs_class c)
{
	switch (c) {
	case SFS_CLASS_WRITABLE:
		return "writable";
	case SFS_CLASS_READONLY:
		return "readonly";
	case SFS_CLASS_OVERLAY:
		return "overlay";
	case SFS_CLASS_PROTECTED:
		return "protected";
	case SFS_CLASS_HIDDEN:
		return "hidden";
	case SFS_CLASS_IMMUTABLE:
		return "immutable";
	case SFS_CLASS_OWNED:
		return "owned";
	case SFS_CLASS_PRIVATE:
		return "private";
	}
	return "unknown";
}

int sfs_class_rank(enum sfs_class c)
{
	switch (c) {
	case SFS_CLASS_READONLY:
		return 0;
	case SFS_CLASS_OWNED:
		return 1;
	case SFS_CLASS_WRITABLE:
		return 2;
	case SFS_CLASS_OVERLAY:
		return 3;
	case SFS_CLASS_PROTECTED:
		return 4;
	case SFS_CLASS_HIDDEN:
		return 5;
	case SFS_CLASS_PRIVATE:
		return 6;
	case SFS_CLASS_IMMUTABLE:
		return 7;
	}
	return 7;
}

bool sfs_class_protective(enum sfs_class c)
{
	return c == SFS_CLASS_IMMUTABLE || c == SFS_CLASS_HIDDEN || c == SFS_CLASS_PROTECTED ||
	       c == SFS_CLASS_OVERLAY;
}

const char *sfs_op_name(enum sfs_op op)
{
	static const char *const names[] = {
		[SFS_OP_LOOKUP] = "lookup",
		[SFS_OP_READ] = "read",
		[SFS_OP_CREATE] = "create",
		[SFS_OP_MKDIR] = "mkdir",
		[SFS_OP_MKNOD] = "mknod",
		[SFS_OP_SYMLINK] = "symlink",
		[SFS_OP_LINK_TARGET] = "link",
		[SFS_OP_LINK_SOURCE] = "link-source",
		[SFS_OP_WRITE] = "write",
		[SFS_OP_TRUNCATE] = "truncate",
		[SFS_OP_SETATTR] = "setattr",
		[SFS_OP_XATTR] = "setxattr",
		[SFS_OP_UNLINK] = "unlink",
		[SFS_OP_RMDIR] = "rmdir",
		[SFS_OP_RENAME_FROM] = "rename-from",
		[SFS_OP_RENAME_TO] = "rename-to",
	};

	if ((unsigned)op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "unknown";
}

/* ---- building ----------------------------------------------------------- */

struct sfs_policy *sfs_policy_new(void)
{
	struct sfs_policy *p = calloc(1, sizeof(struct sfs_policy));

	if (p)
		p->ownership = true;
	return p;
}

void sfs_policy_set_ownership(struct sfs_policy *p, bool on)
{
	p->ownership = on;
}

bool sfs_policy_ownership(const struct sfs_policy *p)
{
	return p->ownership;
}

void sfs_policy_set_private_git(struct sfs_policy *p, bool on)
{
	p->private_git = on;
}

bool sfs_policy_private_git(const struct sfs_policy *p)
{
	return p->private_git;
}

static void rule_free_strings(struct sfs_rule *r)
{
	free((char *)r->file);
	free((char *)r->key);
	free((char *)r->pattern);
	free((char *)r->why);
	free((char *)r->overlay_file);
	free((char *)r->released_by);
	for (size_t i = 0; r->except && r->except[i]; i++)
		free((char *)r->except[i]);
	free((void *)r->except);
}

static void classset_free(struct classset *c)
{
	sfs_globset_free(c->gs);
	free(c->map);
	memset(c, 0, sizeof(*c));
}

void sfs_policy_free(struct sfs_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		rule_free_strings(p->rules[i]);
		free(p->rules[i]);
	}
	free(p->rules);
	for (size_t i = 0; i < p->nsources; i++) {
		free((char *)p->sources[i].path);
		free((char *)p->sources[i].name);
		free((char *)p->sources[i].description);
		free((char *)p->sources[i].origin);
	}
	free(p->sources);
	for (size_t i = 0; i < p->nimm; i++) {
		free(p->imm[i].canon);
		free((char *)p->imm[i].rule.pattern);
		free((char *)p->imm[i].rule.why);
	}
	free(p->imm);
	for (size_t i = 0; i < p->nshadow; i++)
		free(p->shadow[i]);
	free(p->shadow);
	classset_free(&p->write);
	classset_free(&p->gen);
	classset_free(&p->private);
	classset_free(&p->protect0);
	classset_free(&p->protect12);
	classset_free(&p->hide);
	classset_free(&p->overlay);
	classset_free(&p->strict);
	classset_free(&p->released);
	for (size_t i = 0; i < p->nhexc; i++) {
		sfs_globset_free(p->hexc[i].pattern);
		sfs_globset_free(p->hexc[i].except);
	}
	free(p->hexc);
	free(p);
}

/* N's own copy of the exceptions EXCEPT, each checked as a hide glob. */
static int dup_except(struct sfs_rule *n, const char *const *except)
{
	size_t k = 0;

	while (except[k])
		k++;
	char **v = calloc(k + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n->except = (const char *const *)v;
	for (size_t i = 0; i < k; i++)
		if (!(v[i] = strdup(except[i])))
			return -ENOMEM;
	return 0;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

unsigned sfs_class_glob_flags(enum sfs_class c)
{
	switch (c) {
	case SFS_CLASS_WRITABLE:
		return 0;
	case SFS_CLASS_OVERLAY:
		return SFS_GLOB_CANONICAL | SFS_GLOB_EXACT;
	default:
		return SFS_GLOB_CANONICAL;
	}
}

int sfs_policy_add_rule(struct sfs_policy *p, const struct sfs_rule *r, char **err)
{
	struct sfs_rule *n;
	bool oom = false;
	int rc;

	*err = NULL;
	if (p->compiled)
		return -EBUSY;
	switch (r->cls) {
	case SFS_CLASS_WRITABLE:
	case SFS_CLASS_PROTECTED:
	case SFS_CLASS_HIDDEN:
	case SFS_CLASS_PRIVATE:
		break;
	case SFS_CLASS_OVERLAY:
		if (!r->overlay_file)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!r->pattern || !r->file)
		return -EINVAL;
	rc = sfs_glob_check(r->pattern, sfs_class_glob_flags(r->cls), err);
	if (rc < 0)
		return rc;
	if (p->nrules == p->caprules) {
		size_t cap = p->caprules ? 2 * p->caprules : 64;
		struct sfs_rule **a = realloc(p->rules, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->rules = a;
		p->caprules = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = *r;
	n->file = dup_or_null(r->file, &oom);
	n->key = dup_or_null(r->key ? r->key : "", &oom);
	n->pattern = dup_or_null(r->pattern, &oom);
	n->why = dup_or_null(r->why ? r->why : "", &oom);
	n->overlay_file = dup_or_null(r->overlay_file, &oom);
	n->released_by = dup_or_null(r->released_by, &oom);
	n->except = NULL;
	if (r->except && dup_except(n, r->except) < 0)
		oom = true;
	if (oom) {
		rule_free_strings(n);
		free(n);
		return -ENOMEM;
	}
	p->rules[p->nrules++] = n;
	return 0;
}

int sfs_policy_add_source(struct sfs_policy *p, const struct sfs_rule_source *s)
{
	struct sfs_rule_source *a;
	bool oom = false;

	a = realloc(p->sources, (p->nsources + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	p->sources = a;
	a += p->nsources;
	a->path = dup_or_null(s->path, &oom);
	a->name = dup_or_null(s->name, &oom);
	a->description = dup_or_null(s->description, &oom);
	a->origin = dup_or_null(s->origin, &oom);
	if (oom) {
		free((char *)a->path);
		free((char *)a->name);
		free((char *)a->description);
		free((char *)a->origin);
		return -ENOMEM;
	}
	p->nsources++;
	return 0;
}

static int strcmp_null(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Content order, so that the deciding rule never depends on file order. */
static int rule_cmp(const void *a, const void *b)
{
	const struct sfs_rule *x = *(const struct sfs_rule *const *)a;
	const struct sfs_rule *y = *(const struct sfs_rule *const *)b;
	int c;

	if ((c = strcmp(x->pattern, y->pattern)))
		return c;
	if ((c = strcmp(x->file, y->file)))
		return c;
	if ((c = strcmp_null(x->why, y->why)))
		return c;
	if ((c = strcmp_null(x->overlay_file, y->overlay_file)))
		return c;
	if ((c = strcmp_null(x->key, y->key)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Which active rules go into a class set. */
static bool is_write(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_WRITABLE;
}

static bool is_generated(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_WRITABLE && r->generated;
}

static bool is_private(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_PRIVATE;
}

static bool is_protect0(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_PROTECTED && r->tier == 0;
}

static bool is_protect12(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_PROTECTED && r->tier != 0;
}

static bool is_hide(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_HIDDEN && !r->except;
}

static bool is_overlay(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_OVERLAY;
}

static bool is_released(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_PROTECTED && r->released_by;
}

static bool is_strict(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_PRIVATE || sfs_class_protective(r->cls);
}

/*
 * Builds the set of the active rules WANT selects. Overlay paths are
 * anchored with a leading '/' so that they keep meaning one exact path
 * inside the mixed "strict" set.
 */
static int build_classset(struct sfs_policy *p, struct classset *cs,
			  bool (*want)(const struct sfs_rule *), unsigned flags, char **err)
{
	const char **globs = NULL;
	char **owned = NULL;
	size_t n = 0, bad = 0;
	cleanup_free char *reason = NULL;
	int r;

	cs->map = calloc(p->nrules ? p->nrules : 1, sizeof(*cs->map));
	globs = calloc(p->nrules ? p->nrules : 1, sizeof(*globs));
	owned = calloc(p->nrules ? p->nrules : 1, sizeof(*owned));
	if (!cs->map || !globs || !owned) {
		free(globs);
		free(owned);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nrules; i++) {
		const struct sfs_rule *ru = p->rules[i];

		if ((ru->released_by && want != is_released) || !want(ru))
			continue;
		cs->map[n++] = ru;
	}
	qsort(cs->map, n, sizeof(*cs->map), rule_cmp);
	r = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sfs_rule *ru = cs->map[i];

		if (ru->cls == SFS_CLASS_OVERLAY && !(flags & SFS_GLOB_EXACT) &&
		    ru->pattern[0] != '/') {
			if (asprintf(&owned[i], "/%s", ru->pattern) < 0) {
				owned[i] = NULL;
				r = -ENOMEM;
				break;
			}
			globs[i] = owned[i];
		} else {
			globs[i] = ru->pattern;
		}
	}
	if (r == 0)
		r = sfs_globset_new(globs, n, flags, &cs->gs, &bad, &reason);
	if (r == -EINVAL)
		err_set(err, EINVAL, "%s:%d: bad glob '%s': %s", cs->map[bad]->file,
			cs->map[bad]->line, cs->map[bad]->pattern,
			reason ? reason : "does not compile");
	for (size_t i = 0; i < n; i++)
		free(owned[i]);
	free(owned);
	free(globs);
	cs->n = n;
	return r;
}

/* Adds the directory components of PATTERN before its last one to the
 * shadow names, canonically. */
static int add_shadows(struct sfs_policy *p, const char *pattern)
{
	const char *s = pattern;
	char canon[SFS_CANON_CAP(NAME_MAX) + 1];

	while (*s == '/')
		s++;
	for (;;) {
		size_t len = strcspn(s, "/");
		const char *next = s + len;
		while (*next == '/')
			next++;
		if (!*next)
			return 0; /* the last component: the protected name itself */
		if (len == 0 || (len == 2 && s[0] == '*' && s[1] == '*') || len > NAME_MAX) {
			s = next;
			continue;
		}
		ssize_t n = sfs_canon_component(s, len, canon, sizeof(canon));
		if (n < 0)
			return -EINVAL;
		bool known = false;
		for (size_t i = 0; i < p->nshadow && !known; i++)
			known = strcmp(p->shadow[i], canon) == 0;
		if (!known) {
			char **grown = realloc(p->shadow, (p->nshadow + 1) * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			p->shadow = grown;
			if (!(p->shadow[p->nshadow] = strdup(canon)))
				return -ENOMEM;
			p->nshadow++;
		}
		s = next;
	}
}

static int collect_shadows(struct sfs_policy *p)
{
	int r = add_shadows(p, ".git/x"); /* the built-in immutable name */

	for (size_t i = 0; r == 0 && i < p->nrules; i++) {
		const struct sfs_rule *rule = p->rules[i];
		if (sfs_class_protective(rule->cls) && !rule->released_by)
			r = add_shadows(p, rule->pattern);
	}
	return r;
}

/* The hide rules with exceptions: each its own pair of sets. */
static int build_hide_except(struct sfs_policy *p, char **err)
{
	const unsigned flags = SFS_GLOB_CANONICAL;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct sfs_rule *ru = p->rules[i];
		size_t n = 0, bad = 0;
		cleanup_free char *reason = NULL;

		if (ru->cls != SFS_CLASS_HIDDEN || !ru->except)
			continue;
		while (ru->except[n])
			n++;
		struct hide_except *a = realloc(p->hexc, (p->nhexc + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		p->hexc = a;
		a = &p->hexc[p->nhexc++];
		*a = (struct hide_except){.rule = ru};
		int r = sfs_globset_new(&ru->pattern, 1, flags, &a->pattern, &bad, &reason);
		if (r == 0)
			r = sfs_globset_new((const char *const *)ru->except, n, flags, &a->except,
					    &bad, &reason);
		if (r == -EINVAL)
			return err_set(err, EINVAL, "%s:%d: bad glob in 'except' of '%s': %s",
				       ru->file, ru->line, ru->pattern,
				       reason ? reason : "does not compile");
		if (r < 0)
			return r;
	}
	return 0;
}

int sfs_policy_compile(struct sfs_policy *p, char **err)
{
	const unsigned canon = SFS_GLOB_CANONICAL;
	int r;

	if (err)
		*err = NULL;
	if (p->compiled)
		return 0;
	r = build_classset(p, &p->write, is_write, 0, err);
	if (!r)
		r = build_classset(p, &p->gen, is_generated, 0, err);
	if (!r)
		r = build_classset(p, &p->private, is_private, canon, err);
	if (!r)
		r = build_classset(p, &p->protect0, is_protect0, canon, err);
	if (!r)
		r = build_classset(p, &p->protect12, is_protect12, canon, err);
	if (!r)
		r = build_classset(p, &p->hide, is_hide, canon, err);
	if (!r)
		r = build_classset(p, &p->overlay, is_overlay, canon | SFS_GLOB_EXACT, err);
	if (!r)
		r = build_classset(p, &p->strict, is_strict, canon, err);
	if (!r)
		r = build_classset(p, &p->released, is_released, canon, err);
	if (!r)
		r = build_hide_except(p, err);
	if (!r)
		r = collect_shadows(p);
	if (r < 0)
		return r;
	p->compiled = true;
	return 0;
}

int sfs_policy_add_immutable(struct sfs_policy *p, const char *relpath, const char *why)
{
	size_t len = strlen(relpath), cap = SFS_CANON_CAP(len);
	struct imm *a;
	char *c;
	ssize_t n;

	c = malloc(cap);
	if (!c)
		return -ENOMEM;
	n = sfs_canon_path(relpath, len, c, cap);
	if (n <= 0) {
		free(c);
		return n < 0 ? (int)n : -EINVAL; /* "" would make everything immutable */
	}
	a = realloc(p->imm, (p->nimm + 1) * sizeof(*a));
	if (!a) {
		free(c);
		return -ENOMEM;
	}
	p->imm = a;
	a += p->nimm;
	memset(a, 0, sizeof(*a));
	a->canon = c;
	a->len = (size_t)n;
	a->rule.cls = SFS_CLASS_IMMUTABLE;
	a->rule.file = "(built-in)";
	a->rule.key = "immutable";
	a->rule.index = (int)p->nimm + 1;
	a->rule.pattern = strdup(relpath);
	a->rule.why = strdup(why ? why : "part of the git repository layout");
	if (!a->rule.pattern || !a->rule.why) {
		free((char *)a->rule.pattern);
		free((char *)a->rule.why);
		free(c);
		return -ENOMEM;
	}
	p->nimm++;
	return add_shadows(p, relpath);
}

static const struct sfs_rule rule_shadow = {
	.cls = SFS_CLASS_PROTECTED,
	.file = "(built-in)",
	.key = "symlink",
	.index = 4,
	.pattern = "symlink name",
	.why = "a symlink with this name would give the protected paths below it a second "
	       "name in a writable directory",
};

bool sfs_policy_shadow_name(const struct sfs_policy *p, const char *name, size_t len,
			    struct sfs_decision *out)
{
	char canon[SFS_CANON_CAP(NAME_MAX) + 1];
	const struct sfs_rule *r = &rule_error; /* a name that cannot be judged */

	if (len <= NAME_MAX && sfs_canon_component(name, len, canon, sizeof(canon)) >= 0) {
		size_t i = 0;
		while (i < p->nshadow && fnmatch(p->shadow[i], canon, FNM_PERIOD) != 0)
			i++;
		if (i == p->nshadow)
			return false;
		r = &rule_shadow;
	}
	if (out) {
		sfs_policy_refuse(out, r);
		out->cls = SFS_CLASS_PROTECTED;
	}
	return true;
}

void sfs_policy_refuse(struct sfs_decision *out, const struct sfs_rule *r)
{
	set_rule(out, r->cls, r);
	out->overlay_file = NULL;
	out->owner_decides = false;
	out->allowed = false;
	out->err = EROFS;
}

/* ---- deciding ----------------------------------------------------------- */

static void set_rule(struct sfs_decision *out, enum sfs_class cls, const struct sfs_rule *r)
{
	out->cls = cls;
	out->rule = r;
	out->rule_file = r->file;
	out->rule_index = r->index;
	out->rule_text = r->pattern;
	out->why = r->why;
	out->overlay_file = r->overlay_file;
}

static void set_default(struct sfs_decision *out)
{
	out->cls = SFS_CLASS_READONLY;
	out->rule = NULL;
	out->rule_file = "(default)";
	out->rule_index = -1;
	out->rule_text = "";
	out->why = why_default;
	out->overlay_file = NULL;
}

static bool has_git_component(const char *c, size_t len)
{
	const char *p = c, *e = c + len;

	while (p < e) {
		const char *s = memchr(p, '/', (size_t)(e - p));
		size_t n = s ? (size_t)(s - p) : (size_t)(e - p);

		if (n == 4 && memcmp(p, ".git", 4) == 0)
			return true;
		if (!s)
			break;
		p = s + 1;
	}
	return false;
}

/* Whether the canonical path C[0..LEN) starts with the component NAME. */
static bool first_component_is(const char *c, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len >= n && memcmp(c, name, n) == 0 && (len == n || c[n] == '/');
}

/* Match in one class set: 1 and *RULE on a match, 0 on none, <0 on error. */
static int class_match(const struct classset *cs, const char *s, size_t len, size_t *end,
		       const struct sfs_rule **rule)
{
	int r = sfs_globset_match(cs->gs, s, len, end);

	if (r == -ENOENT)
		return 0;
	if (r < 0 || (size_t)r >= cs->n)
		return r < 0 ? r : -EINVAL;
	*rule = cs->map[r];
	return 1;
}

/* The immutable rule for the canonical path CANON[0..LEN), or NULL. */
static const struct sfs_rule *immutable_rule(const struct sfs_policy *p, const char *canon,
					     size_t len)
{
	if (has_git_component(canon, len))
		return &rule_git;
	for (size_t i = 0; i < p->nimm; i++) {
		const struct imm *m = &p->imm[i];

		if (len >= m->len && memcmp(canon, m->canon, m->len) == 0 &&
		    (len == m->len || canon[m->len] == '/'))
			return &m->rule;
	}
	return NULL;
}

/*
 * Whether a tier 1 or 2 protection whose name ends at PROT_END in the
 * canonical path is waived because REAL lies in a generated tree rooted at
 * or above that name (build/CMakeFiles/x.cmake, not .mvn/target/x): 1 yes,
 * 0 no, negative errno when it cannot be told.
 */
typedef ssize_t (*canon_fn)(const char *, size_t, char *, size_t);

static int generated_waives(const struct sfs_policy *p, canon_fn canon, const char *real,
			    size_t rlen, size_t prot_end)
{
	const struct sfs_rule *ru;
	size_t gen_end = 0;
	int r = class_match(&p->gen, real, rlen, &gen_end, &ru);

	if (r <= 0)
		return r;
	/* Compared on the canonical form of the tree's root, in the spelling
	 * the path is judged in, which is a prefix of the canonical path. */
	size_t cap = SFS_CANON_CAP(gen_end);
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	ssize_t n = canon(real, gen_end, buf, cap);
	free(buf);
	if (n < 0)
		return (int)n;
	return (size_t)n <= prot_end;
}

/* Classifies with the canonical path CANON already computed by SPELL. */
static void classify(const struct sfs_policy *p, canon_fn spell, const char *real, size_t rlen,
		     const char *canon, size_t clen, struct sfs_decision *out)
{
	const struct sfs_rule *ru = NULL, *below = NULL, *imm;
	size_t end = 0;
	bool waived = false, excepted = false;
	int r;

	if (clen == 0) {
		set_rule(out, SFS_CLASS_READONLY, &rule_root);
		return;
	}
	if (p->private_git) {
		/* Only the top-level ones: a .git anywhere below stays
		 * immutable, so no nested repository appears in SOURCE. */
		if (first_component_is(canon, clen, ".git")) {
			set_rule(out, SFS_CLASS_PRIVATE, &rule_private_git);
			return;
		}
		if (first_component_is(canon, clen, ".worktrees")) {
			set_rule(out, SFS_CLASS_PRIVATE, &rule_private_worktrees);
			return;
		}
	}
	int strict = sfs_globset_match(p->strict.gs, canon, clen, NULL);
	if (strict < 0 && strict != -ENOENT)
		goto fail;
	strict = strict >= 0;
	if (strict) {
		/* Private from its outermost private directory down, unless
		 * that directory is itself immutable (.git/node_modules). */
		r = class_match(&p->private, canon, clen, &end, &ru);
		if (r < 0)
			goto fail;
		if (r > 0 && !immutable_rule(p, canon, end)) {
			set_rule(out, SFS_CLASS_PRIVATE, ru);
			return;
		}
	}
	imm = immutable_rule(p, canon, clen);
	if (imm) {
		set_rule(out, SFS_CLASS_IMMUTABLE, imm);
		return;
	}
	if (strict) {
		r = class_match(&p->overlay, canon, clen, &end, &ru);
		if (r < 0)
			goto fail;
		if (r > 0) {
			if (end == clen) {
				set_rule(out, SFS_CLASS_OVERLAY, ru);
				return;
			}
			below = ru;
		}
		r = class_match(&p->hide, canon, clen, NULL, &ru);
		if (r < 0)
			goto fail;
		if (r > 0) {
			set_rule(out, SFS_CLASS_HIDDEN, ru);
			return;
		}
		for (size_t i = 0; i < p->nhexc; i++) {
			const struct hide_except *h = &p->hexc[i];

			r = sfs_globset_match(h->pattern, canon, clen, NULL);
			if (r == -ENOENT)
				continue;
			if (r < 0)
				goto fail;
			r = sfs_globset_match(h->except, canon, clen, NULL);
			if (r < 0 && r != -ENOENT)
				goto fail;
			if (r == -ENOENT) {
				set_rule(out, SFS_CLASS_HIDDEN, h->rule);
				return;
			}
			excepted = true;
		}
		r = class_match(&p->protect0, canon, clen, NULL, &ru);
		if (r < 0)
			goto fail;
		if (r > 0) {
			set_rule(out, SFS_CLASS_PROTECTED, ru);
			return;
		}
		r = class_match(&p->protect12, canon, clen, &end, &ru);
		if (r < 0)
			goto fail;
		if (r > 0) {
			int w = generated_waives(p, spell, real, rlen, end);
			if (w < 0)
				goto fail;
			if (!w) {
				set_rule(out, SFS_CLASS_PROTECTED, ru);
				return;
			}
			waived = true;
		}
		if (below) {
			/* Below an overlaid file nothing exists; keep it read-only. */
			set_rule(out, SFS_CLASS_OVERLAY, below);
			out->overlay_file = NULL;
			return;
		}
		/* The combined set matched but no class did: never expected,
		 * except for a protection a generated tree waived, or a hidden
		 * name an exception shows. */
		if (!waived && !excepted)
			goto fail;
	}
	r = class_match(&p->write, real, rlen, NULL, &ru);
	if (r > 0) {
		set_rule(out, SFS_CLASS_WRITABLE, ru);
		return;
	}
	/* A released protection makes its names writable by itself: the user
	 * who released it meant the agent to change them. */
	if (p->released.n && class_match(&p->released, canon, clen, NULL, &ru) > 0) {
		set_rule(out, SFS_CLASS_WRITABLE, ru);
		out->why = why_released;
		return;
	}
	/* A failed write match only loses writability: no need to fail closed. */
	set_default(out);
	return;
fail:
	set_rule(out, SFS_CLASS_HIDDEN, &rule_error);
}

#define STACK_CANON 4096

/* Classifies RELPATH, canonicalised by CANON, into OUT. */
static void classify_spelling(const struct sfs_policy *p, const char *relpath, size_t len,
			      canon_fn canon, struct sfs_decision *out)
{
	char stackbuf[STACK_CANON];
	char *buf = stackbuf;
	size_t cap = SFS_CANON_CAP(len);
	ssize_t n;

	if (cap > sizeof(stackbuf)) {
		buf = malloc(cap);
		if (!buf) {
			set_rule(out, SFS_CLASS_HIDDEN, &rule_error);
			return;
		}
	} else {
		cap = sizeof(stackbuf);
	}
	n = canon(relpath, len, buf, cap);
	if (n < 0)
		set_rule(out, SFS_CLASS_HIDDEN, &rule_error);
	else
		classify(p, canon, relpath, len, buf, (size_t)n, out);
	if (buf != stackbuf)
		free(buf);
}

/*
 * Classifies RELPATH into OUT (failing closed when it cannot). A name is
 * what every host tool may take it for: the canonical form reads it as
 * Windows would, cutting "zz:x.pth" at the colon and splitting at a
 * backslash, which on Linux is no separator at all. Where the two
 * readings can differ, both are judged and the stricter class wins.
 */
static void classify_path(const struct sfs_policy *p, const char *relpath, size_t len,
			  struct sfs_decision *out)
{
	struct sfs_decision posix;

	if (!p || !p->compiled) {
		set_rule(out, SFS_CLASS_HIDDEN, &rule_error);
		return;
	}
	classify_spelling(p, relpath, len, sfs_canon_path, out);
	if (!memchr(relpath, ':', len) && !memchr(relpath, '\\', len))
		return;
	classify_spelling(p, relpath, len, sfs_canon_path_posix, &posix);
	if (sfs_class_rank(posix.cls) > sfs_class_rank(out->cls))
		*out = posix;
}

/* Whether a released protection names something below RELPATH. */
static bool released_below(const struct sfs_policy *p, const char *relpath)
{
	size_t len = strlen(relpath), cap = SFS_CANON_CAP(len) + 1;
	cleanup_free char *buf = p->released.n ? malloc(cap) : NULL;

	if (!buf)
		return false;
	ssize_t n = sfs_canon_path(relpath, len, buf, cap - 1);
	if (n < 0)
		return false;
	buf[n++] = '/';
	return sfs_globset_match_prefix(p->released.gs, buf, (size_t)n) > 0;
}

bool sfs_policy_write_possible_below(const struct sfs_policy *p, const char *relpath)
{
	char stackbuf[STACK_CANON];
	size_t len = strlen(relpath);
	char *buf = stackbuf;
	int r;

	if (!p || !p->compiled)
		return false;
	/* Every glob matches some path, and all paths are below the root. */
	if (len == 0)
		return p->write.n > 0;
	if (len + 2 > sizeof(stackbuf)) {
		buf = malloc(len + 2);
		if (!buf)
			return false;
	}
	memcpy(buf, relpath, len);
	buf[len++] = '/';
	r = sfs_globset_match_prefix(p->write.gs, buf, len);
	if (buf != stackbuf)
		free(buf);
	return r > 0 || released_below(p, relpath);
}

enum sfs_class sfs_policy_classify(const struct sfs_policy *p, const char *relpath,
				   struct sfs_decision *out)
{
	sfs_policy_decide(p, relpath, SFS_OP_LOOKUP, out);
	return out->cls;
}

void sfs_policy_decide_owned(const struct sfs_policy *p, const char *relpath, enum sfs_op op,
			     bool owned, struct sfs_decision *out)
{
	classify_path(p, relpath, strlen(relpath), out);
	out->owner_decides = false;
	switch (op) {
	case SFS_OP_LOOKUP:
	case SFS_OP_READ:
		out->allowed = out->cls != SFS_CLASS_HIDDEN;
		break;
	default:
		out->allowed = out->cls == SFS_CLASS_WRITABLE || out->cls == SFS_CLASS_PRIVATE;
		if (out->allowed || out->cls != SFS_CLASS_READONLY || out->rule == &rule_root)
			break;
		if ((op == SFS_OP_MKDIR || op == SFS_OP_RMDIR) &&
		    sfs_policy_write_possible_below(p, relpath)) {
			out->allowed = true;
		} else if (p->ownership && owned && op != SFS_OP_MKNOD) {
			set_rule(out, SFS_CLASS_OWNED, &rule_owned);
			out->allowed = true;
		} else {
			out->owner_decides = p->ownership && op != SFS_OP_MKNOD;
		}
		break;
	}
	if (out->allowed)
		out->err = 0;
	else
		out->err = out->cls == SFS_CLASS_HIDDEN ? ENOENT : EROFS;
}

void sfs_policy_decide(const struct sfs_policy *p, const char *relpath, enum sfs_op op,
		       struct sfs_decision *out)
{
	sfs_policy_decide_owned(p, relpath, op, false, out);
}

/* ---- listing ------------------------------------------------------------ */

size_t sfs_policy_rule_count(const struct sfs_policy *p)
{
	return p->nrules;
}

const struct sfs_rule *sfs_policy_rule(const struct sfs_policy *p, size_t i)
{
	return i < p->nrules ? p->rules[i] : NULL;
}

size_t sfs_policy_immutable_count(const struct sfs_policy *p)
{
	return 1 + p->nimm;
}

const struct sfs_rule *sfs_policy_immutable(const struct sfs_policy *p, size_t i)
{
	if (i == 0)
		return &rule_git;
	return i <= p->nimm ? &p->imm[i - 1].rule : NULL;
}

const struct sfs_rule *sfs_policy_private_git_rule(const struct sfs_policy *p, size_t i)
{
	static const struct sfs_rule *const rules[] = {&rule_private_git, &rule_private_worktrees};

	return p->private_git && i < ARRAY_SIZE(rules) ? rules[i] : NULL;
}

size_t sfs_policy_source_count(const struct sfs_policy *p)
{
	return p->nsources;
}

const struct sfs_rule_source *sfs_policy_source(const struct sfs_policy *p, size_t i)
{
	return i < p->nsources ? &p->sources[i] : NULL;
}
