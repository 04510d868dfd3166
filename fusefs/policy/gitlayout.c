/* gitlayout.c - see gitlayout.h. This is the only module that reads git
 * metadata; it runs once, before the mount serves anything. */
#include "gitlayout.h"
#include "gitreach.h"
#include "path.h"
#include "common/err.h"

#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SUBMODULE_DEPTH 8

/* PATH (absolute, or relative to directory BASE) normalised lexically. */
static int resolve(const char *base, const char *path, char *out, size_t size)
{
	char joined[PATH_MAX * 2];
	int n = path[0] == '/' ? snprintf(joined, sizeof(joined), "%s", path)
			       : snprintf(joined, sizeof(joined), "%s/%s", base, path);

	if (n < 0 || (size_t)n >= sizeof(joined))
		return -ENAMETOOLONG;
	n = sfs_path_normalise(joined, out, size);
	return n < 0 ? n : 0;
}

/* Whether REL has a component named .git (already immutable by name). */
static bool under_dotgit(const char *rel)
{
	for (const char *c = rel; *c;) {
		size_t l = strcspn(c, "/");
		if (l == 4 && strncasecmp(c, ".git", 4) == 0)
			return true;
		c += l;
		if (*c == '/')
			c++;
	}
	return false;
}

struct walk {
	struct sfs_policy *policy;
	const char *source; /* realpath of SOURCE */
	char **err;
	int depth;
	int failed; /* a submodule's negative errno */
};

static int add_if_inside(struct walk *w, const char *abs, const char *why)
{
	char norm[PATH_MAX];
	const char *rel;

	if (resolve("/", abs, norm, sizeof(norm)) < 0)
		return 0;
	rel = sfs_path_below(norm, w->source);
	if (!rel || !*rel || under_dotgit(rel))
		return 0;
	int r = sfs_policy_add_immutable(w->policy, rel, why);
	if (r < 0)
		err_set(w->err, -r, "cannot protect git path '%s': %s", rel, strerror(-r));
	return r;
}

static int protect_repo(struct walk *w, git_repository *repo);

static int submodule_cb(git_submodule *sm, const char *name, void *payload)
{
	struct walk *w = payload;
	git_repository *sub = NULL;

	(void)name;
	if (git_submodule_open(&sub, sm) != 0)
		return 0; /* not checked out: its gitdir, if any, is under .git */
	w->depth++;
	int r = w->depth <= MAX_SUBMODULE_DEPTH ? protect_repo(w, sub) : 0;
	w->depth--;
	git_repository_free(sub);
	return r < 0 ? (w->failed = r, -1) : 0;
}

static int protect_repo(struct walk *w, git_repository *repo)
{
	char hooks[PATH_MAX];
	git_config *cfg = NULL;
	int r;

	r = add_if_inside(w, git_repository_path(repo),
			  "the repository's gitdir (named by a "
			  "gitdir: pointer file)");
	if (r == 0)
		r = add_if_inside(w, git_repository_commondir(repo),
				  "the repository's common gitdir (commondir)");
	const char *workdir = git_repository_workdir(repo);
	if (r == 0 && workdir && git_repository_config_snapshot(&cfg, repo) == 0) {
		const char *hp = NULL;
		if (git_config_get_string(&hp, cfg, "core.hooksPath") == 0 && hp && *hp) {
			char expanded[PATH_MAX];
			const char *home = getenv("SANDY_USER_HOME");
			if (!home || home[0] != '/')
				home = getenv("HOME");
			if (hp[0] == '~' && hp[1] == '/' && home)
				snprintf(expanded, sizeof(expanded), "%s%s", home, hp + 1);
			else
				snprintf(expanded, sizeof(expanded), "%s", hp);
			if (resolve(workdir, expanded, hooks, sizeof(hooks)) == 0)
				r = add_if_inside(w, hooks,
						  "core.hooksPath: git runs the hooks found here");
		}
		git_config_free(cfg);
	}
	if (r == 0)
		r = sfs_git_protect_reach(w->policy, w->source, repo, w->err);
	if (r == 0 && git_submodule_foreach(repo, submodule_cb, w) != 0 && w->failed)
		r = w->failed;
	return r;
}

void sfs_git_library_init(void)
{
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
}

int sfs_git_protect_layout(struct sfs_policy *p, const char *source, char **err)
{
	char real[PATH_MAX];
	git_repository *repo = NULL;

	*err = NULL;
	if (!realpath(source, real))
		return err_set(err, errno, "cannot resolve source '%s': %s", source,
			       strerror(errno));
	sfs_git_library_init();
	/* Searching upwards too: SOURCE inside a repository may hold that
	 * repository's hooksPath. */
	int r = git_repository_open_ext(&repo, real, 0, NULL);
	char dotgit[PATH_MAX + 8];
	struct stat st;
	snprintf(dotgit, sizeof(dotgit), "%s/.git", real);
	if (r == GIT_ENOTFOUND && lstat(dotgit, &st) != 0) {
		git_libgit2_shutdown();
		return 0;
	}
	if (r != 0) {
		const git_error *e = git_error_last();
		err_set(err, EIO, "cannot read the git repository at '%s': %s", source,
			e ? e->message : "unknown error");
		git_libgit2_shutdown();
		return -EIO;
	}
	struct walk w = {.policy = p, .source = real, .err = err};
	r = protect_repo(&w, repo);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return r;
}
