/*
 * symchain: symlink targets resolved as the host resolves them, through the
 * chain of symlinks they pass, and the links a change of one name can
 * redirect (see symchain.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "canon.h"
#include "common/path.h"
#include "symchain.h"
#include "common/util.h"

static const struct sfs_rule rule_sym_absolute = {
	.cls = SFS_CLASS_PROTECTED,
	.file = "(built-in)",
	.key = "symlink",
	.index = 0,
	.pattern = "/*",
	.why = "absolute symlink targets mean different things in the container and on "
	       "the host",
};

static const struct sfs_rule rule_sym_escape = {
	.cls = SFS_CLASS_PROTECTED,
	.file = "(built-in)",
	.key = "symlink",
	.index = 1,
	.pattern = "..",
	.why = "the symlink target leaves SOURCE",
};

static const struct sfs_rule rule_sym_backslash = {
	.cls = SFS_CLASS_PROTECTED,
	.file = "(built-in)",
	.key = "symlink",
	.index = 2,
	.pattern = "\\",
	.why = "the symlink target contains a backslash, which Windows tools read as a "
	       "directory separator",
};

static const struct sfs_rule rule_sym_loop = {
	.cls = SFS_CLASS_PROTECTED,
	.file = "(built-in)",
	.key = "symlink",
	.index = SFS_RULE_SYMLINK_LOOP,
	.pattern = "",
	.why = "the target passes through more than 40 symlinks without coming back to one "
	       "it passed: the host would not resolve it (ELOOP), a resolver without that "
	       "limit might, and where it would lead cannot be judged",
};

/* Fails closed: a target that cannot be followed is not made. */
static const struct sfs_rule rule_sym_error = {
	.cls = SFS_CLASS_HIDDEN,
	.file = "(built-in)",
	.key = "symlink",
	.index = 4,
	.pattern = "",
	.why = "the symlink target could not be followed (a name too long, out of memory, "
	       "or SOURCE could not be read), so it is refused",
};

void sfs_symlink_refuse(struct sfs_decision *out, const struct sfs_rule *r)
{
	sfs_policy_refuse(out, r);
}

/* The class of a place the host's resolution reaches: the link lives in
 * SOURCE, where .git is the host's own repository, not the agent's. */
static void classify_target(const struct sfs_policy *p, const char *path, struct sfs_decision *out)
{
	sfs_policy_classify(p, path, out);
	/* The agent's .git (private-git rule 0); its .worktrees stay its own. */
	if (out->rule && out->rule->key && !strcmp(out->rule->key, "private-git") &&
	    out->rule->index == 0) {
		const struct sfs_rule *git = sfs_policy_immutable(p, 0);

		out->cls = SFS_CLASS_IMMUTABLE;
		out->rule = git;
		out->rule_file = git->file;
		out->rule_index = git->index;
		out->rule_text = git->pattern;
		out->why = git->why;
	}
}

/* A link target no host resolves the same way everywhere: NULL when fine. */
static const struct sfs_rule *bad_target(const char *target)
{
	if (!*target || *target == '/')
		return &rule_sym_absolute;
	if (strchr(target, '\\'))
		return &rule_sym_backslash;
	return NULL;
}

/* The components still to resolve: a growing string, "TARGET/REST". */
struct pending {
	char *s;
	size_t pos;
};

/* Replaces what is left of PD by TARGET followed by it. */
static int splice(struct pending *pd, const char *target)
{
	const char *rest = pd->s + pd->pos;
	size_t tl = strlen(target), rl = strlen(rest);
	char *n = malloc(tl + 1 + rl + 1);

	if (!n)
		return -ENOMEM;
	memcpy(n, target, tl);
	n[tl] = '/';
	memcpy(n + tl + 1, rest, rl + 1);
	free(pd->s);
	pd->s = n;
	pd->pos = 0;
	return 0;
}

/* Where a resolution stood after each hop: the directory it resolves from
 * and what is left to resolve. Standing where it stood before, it goes
 * round forever: the chain leads nowhere, for the kernel (ELOOP) and for
 * any resolver, and every place on the round was judged. */
struct seen {
	struct {
		char *s; /* the directory, a NUL, what is left */
		size_t dirlen, len;
	} v[SFS_SYMLINK_MAX_HOPS + 1];
	size_t n;
};

/* 1 when DIR (DIRLEN bytes) with REST was seen before, else 0 after
 * noting it; -ENOMEM. */
static int seen_before(struct seen *sn, const char *dir, size_t dirlen, const char *rest)
{
	size_t rl = strlen(rest), len = dirlen + 1 + rl;

	for (size_t i = 0; i < sn->n; i++)
		if (sn->v[i].dirlen == dirlen && sn->v[i].len == len &&
		    !memcmp(sn->v[i].s, dir, dirlen) && !memcmp(sn->v[i].s + dirlen + 1, rest, rl))
			return 1;
	if (sn->n == ARRAY_SIZE(sn->v))
		return 0;
	char *s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, dir, dirlen);
	s[dirlen] = '\0';
	memcpy(s + dirlen + 1, rest, rl + 1);
	sn->v[sn->n].s = s;
	sn->v[sn->n].dirlen = dirlen;
	sn->v[sn->n].len = len;
	sn->n++;
	return 0;
}

static void seen_free(struct seen *sn)
{
	for (size_t i = 0; i < sn->n; i++)
		free(sn->v[i].s);
}

static void check_chain(const struct sfs_policy *p, const char *linkpath, const char *target,
			sfs_symlink_probe probe, void *ctx, char *path, size_t cap,
			struct sfs_decision *out)
{
	struct pending pd = {strdup(target), 0};
	char hop[PATH_REL_MAX];
	size_t len = path_dirlen(linkpath);
	int hops = 0;
	struct seen *seen = calloc(1, sizeof(*seen));

	if (!pd.s || !seen || len + 1 > cap) {
		sfs_symlink_refuse(out, &rule_sym_error);
		goto done;
	}
	memcpy(path, linkpath, len);
	path[len] = '\0';
	/* Every place the target passes counts, not only its end. */
	while (pd.s[pd.pos]) {
		const char *comp = pd.s + pd.pos;
		size_t n = strcspn(comp, "/");
		int r = path_step(path, cap, &len, comp, n);

		pd.pos += n;
		while (pd.s[pd.pos] == '/')
			pd.pos++;
		if (r == -EXDEV) {
			sfs_symlink_refuse(out, &rule_sym_escape);
			goto done;
		}
		if (r < 0) {
			sfs_symlink_refuse(out, &rule_sym_error);
			goto done;
		}
		if (r == 0)
			continue;
		struct sfs_decision d;
		classify_target(p, path, &d);
		if (sfs_class_protective(d.cls)) {
			*out = d;
			out->allowed = false;
			out->err = EROFS;
			goto done;
		}
		/* Asked before a later ".." can take the component back: the
		 * host resolves "a/../x" through "a", and through what "a"
		 * points to. */
		int link = probe ? probe(ctx, path, hop, sizeof(hop)) : 0;
		if (link < 0) {
			sfs_symlink_refuse(out, &rule_sym_error);
			goto done;
		}
		if (link == 0)
			continue;
		const struct sfs_rule *bad = bad_target(hop);
		if (bad || ++hops > SFS_SYMLINK_MAX_HOPS) {
			sfs_symlink_refuse(out, bad ? bad : &rule_sym_loop);
			goto done;
		}
		/* The link's target replaces it, resolved from its directory. */
		len = path_dirlen(path);
		path[len] = '\0';
		int again = splice(&pd, hop);
		if (again == 0)
			again = seen_before(seen, path, len, pd.s);
		if (again < 0) {
			sfs_symlink_refuse(out, &rule_sym_error);
			goto done;
		}
		if (again)
			goto done; /* a loop, allowed as a link to nothing is */
	}
	/* ".." steps can end on a stricter directory without a push. */
	if (len > 0) {
		struct sfs_decision d;

		classify_target(p, path, &d);
		if (sfs_class_protective(d.cls)) {
			*out = d;
			out->allowed = false;
			out->err = EROFS;
		}
	}
done:
	if (seen)
		seen_free(seen);
	free(seen);
	free(pd.s);
}

void sfs_policy_check_symlink_target(const struct sfs_policy *p, const char *linkpath,
				     const char *target, sfs_symlink_probe probe, void *ctx,
				     struct sfs_decision *out)
{
	const struct sfs_rule *bad = bad_target(target);
	char *path;

	if (bad) {
		sfs_symlink_refuse(out, bad);
		if (!*target)
			out->err = ENOENT;
		return;
	}
	path = malloc(PATH_REL_MAX);
	if (!path) {
		sfs_symlink_refuse(out, &rule_sym_error);
		return;
	}
	check_chain(p, linkpath, target, probe, ctx, path, PATH_REL_MAX, out);
	free(path);
}

void sfs_policy_check_symlink(const struct sfs_policy *p, const char *linkpath, const char *target,
			      sfs_symlink_probe probe, void *ctx, struct sfs_decision *out)
{
	/* The link made will be the agent's own. */
	sfs_policy_decide_owned(p, linkpath, SFS_OP_SYMLINK, true, out);
	if (!out->allowed || out->cls == SFS_CLASS_PRIVATE)
		return;
	sfs_policy_check_symlink_target(p, linkpath, target, probe, ctx, out);
}

int sfs_policy_symlink_resolve(const char *linkpath, const char *target, char *out, size_t cap)
{
	size_t len = path_dirlen(linkpath);
	int r;

	if (!*target || *target == '/')
		return -EINVAL;
	if (len + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, linkpath, len);
	out[len] = '\0';
	r = path_resolve(out, cap, &len, target);
	return r < 0 ? r : (int)len;
}

/* ---- which links a change redirects ------------------------------------ */

/* Buffers for judging dependence, allocated once per question. */
struct dep_bufs {
	char *path, *canon, *cname;
	size_t pcap, ccap;
};

static int dep_bufs_init(struct dep_bufs *b)
{
	b->pcap = PATH_REL_MAX;
	b->ccap = SFS_CANON_CAP(PATH_REL_MAX);
	b->path = malloc(b->pcap);
	b->canon = malloc(b->ccap);
	b->cname = malloc(b->ccap);
	return b->path && b->canon && b->cname ? 0 : -ENOMEM;
}

static void dep_bufs_free(struct dep_bufs *b)
{
	free(b->path);
	free(b->canon);
	free(b->cname);
}

/* Whether the canonical PATH is NAME or below it. */
static bool at_or_below(const char *path, size_t plen, const char *name, size_t nlen)
{
	if (nlen == 0)
		return true;
	return plen >= nlen && memcmp(path, name, nlen) == 0 && (plen == nlen || path[nlen] == '/');
}

/* sfs_symlink_depends_on with NAME canonical in B->cname (NLEN bytes). */
static bool depends_on_in(struct dep_bufs *b, const char *linkpath, const char *target, size_t nlen)
{
	size_t len = path_dirlen(linkpath);
	ssize_t cl = sfs_canon_path(linkpath, strlen(linkpath), b->canon, b->ccap);

	/* What cannot be told counts as depending: it is judged again. */
	if (cl < 0 || at_or_below(b->canon, (size_t)cl, b->cname, nlen) || len + 1 > b->pcap)
		return true;
	memcpy(b->path, linkpath, len);
	b->path[len] = '\0';
	for (const char *s = target; *s;) {
		size_t n = strcspn(s, "/");
		int r = path_step(b->path, b->pcap, &len, s, n);

		if (r < 0)
			return r != -EXDEV; /* out of SOURCE: nothing in it redirects it */
		if (r > 0) {
			cl = sfs_canon_path(b->path, len, b->canon, b->ccap);
			if (cl < 0 || at_or_below(b->canon, (size_t)cl, b->cname, nlen))
				return true;
		}
		s += n;
		while (*s == '/')
			s++;
	}
	return false;
}

/* Puts NAME's canonical form in B->cname: its length, or -1. */
static ssize_t dep_name(struct dep_bufs *b, const char *name)
{
	return sfs_canon_path(name, strlen(name), b->cname, b->ccap);
}

bool sfs_symlink_depends_on(const char *linkpath, const char *target, const char *name)
{
	struct dep_bufs b;
	bool r = true;
	ssize_t nl;

	if (dep_bufs_init(&b) == 0 && (nl = dep_name(&b, name)) >= 0)
		r = depends_on_in(&b, linkpath, target, (size_t)nl);
	dep_bufs_free(&b);
	return r;
}

size_t sfs_symlink_affected(const struct sfs_link *links, size_t n, const char *const *changed,
			    size_t m, bool *affected)
{
	size_t marked = 0, from = 0;
	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	struct dep_bufs b;
	bool ok = order && dep_bufs_init(&b) == 0;

	for (size_t i = 0; i < n; i++)
		affected[i] = !ok; /* fails closed: every link is judged again */
	if (!ok) {
		free(order);
		if (order)
			dep_bufs_free(&b);
		return n;
	}
	for (size_t k = 0; k < m; k++) {
		ssize_t nl = dep_name(&b, changed[k]);
		for (size_t i = 0; i < n; i++)
			if (!affected[i] &&
			    (nl < 0 ||
			     depends_on_in(&b, links[i].path, links[i].target, (size_t)nl))) {
				affected[i] = true;
				order[marked++] = i;
			}
	}
	/* A link through a marked link is redirected with it. */
	while (from < marked) {
		ssize_t nl = dep_name(&b, links[order[from++]].path);
		for (size_t i = 0; i < n; i++)
			if (!affected[i] &&
			    (nl < 0 ||
			     depends_on_in(&b, links[i].path, links[i].target, (size_t)nl))) {
				affected[i] = true;
				order[marked++] = i;
			}
	}
	free(order);
	dep_bufs_free(&b);
	return marked;
}
