/* gitlayout.c - see gitlayout.h. This is the only module that reads git
 * metadata; it runs once, before the mount serves anything. */
#include "gitlayout.h"
#include "gitreach.h"
#include "common/path.h"
#include "common/err.h"

#include <errno.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SUBMODULE_DEPTH 8

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

	if (path_normalise(abs, norm, sizeof(norm)) < 0)
		return 0;
	return sfs_git_protect_path(w->policy, w->source, norm, why, w->err);
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
	int r;

	r = add_if_inside(w, git_repository_path(repo),
			  "the repository's gitdir (named by a "
			  "gitdir: pointer file)");
	if (r == 0)
		r = add_if_inside(w, git_repository_commondir(repo),
				  "the repository's common gitdir (commondir)");
	/* core.hooksPath, and everything else its configuration reaches. */
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
