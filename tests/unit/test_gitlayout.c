/* test_gitlayout.c - what libgit2 adds to the policy at mount time: the
 * core.hooksPath directory and a gitdir kept outside .git, inside SOURCE,
 * present or absent; nothing outside SOURCE. */
#include "git/gitlayout.h"
#include "policy/policy.h"
#include "scratch.h"
#include "tap.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct sfs_policy *compiled_policy(void)
{
	struct sfs_policy *p = sfs_policy_new();
	struct sfs_rule w = {.cls = SFS_CLASS_WRITABLE,
			     .file = "test",
			     .key = "write",
			     .pattern = "**",
			     .why = "t"};
	char *err = NULL;

	sfs_policy_add_rule(p, &w, &err);
	sfs_policy_compile(p, &err);
	free(err);
	return p;
}

static enum sfs_class class_of(struct sfs_policy *p, const char *path)
{
	struct sfs_decision d;

	return sfs_policy_classify(p, path, &d);
}

static void set_config(const char *repo_path, const char *key, const char *value)
{
	git_repository *repo;
	git_config *cfg;

	git_repository_open(&repo, repo_path);
	git_repository_config(&cfg, repo);
	git_config_set_string(cfg, key, value);
	git_config_free(cfg);
	git_repository_free(repo);
}

static void test_hooks_path(const char *dir)
{
	char src[512];
	git_repository *repo;
	char *err = NULL;

	snprintf(src, sizeof(src), "%s/repo", dir);
	git_libgit2_init();
	ok(git_repository_init(&repo, src, 0) == 0, "a repository to protect");
	git_repository_free(repo);
	set_config(src, "core.hooksPath", ".husky/_");

	struct sfs_policy *p = compiled_policy();
	ok(sfs_git_protect_layout(p, src, &err) == 0, "the layout is read (%s)", err ? err : "ok");
	free(err);
	ok(class_of(p, ".husky/_") == SFS_CLASS_IMMUTABLE,
	   "an absent core.hooksPath directory is immutable");
	ok(class_of(p, ".husky/_/pre-commit") == SFS_CLASS_IMMUTABLE, "and everything below it");
	ok(class_of(p, ".husky/other") == SFS_CLASS_WRITABLE, "its siblings are not");
	ok(class_of(p, ".git/config") == SFS_CLASS_IMMUTABLE, ".git stays immutable by name");
	sfs_policy_free(p);

	set_config(src, "core.hooksPath", "/etc/hooks-elsewhere");
	p = compiled_policy();
	ok(sfs_git_protect_layout(p, src, &err) == 0 &&
		   class_of(p, "etc/hooks-elsewhere") == SFS_CLASS_WRITABLE,
	   "a hooksPath outside SOURCE adds nothing inside it");
	free(err);
	sfs_policy_free(p);
	git_libgit2_shutdown();
}

static void test_separate_gitdir(const char *dir)
{
	char work[512], gitdir[512];
	git_repository *repo;
	git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
	char *err = NULL;

	snprintf(work, sizeof(work), "%s/sep", dir);
	snprintf(gitdir, sizeof(gitdir), "%s/sep/meta/store", dir);
	/* As `git init --separate-git-dir`: the gitdir under another name,
	 * and a .git file pointing at it. */
	opts.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_BARE;
	git_libgit2_init();
	int r = git_repository_init_ext(&repo, gitdir, &opts);
	if (r == 0)
		git_repository_free(repo);
	char dotgit[600];
	snprintf(dotgit, sizeof(dotgit), "%s/.git", work);
	FILE *f = fopen(dotgit, "w");
	if (f) {
		fputs("gitdir: meta/store\n", f);
		fclose(f);
	}
	ok(r == 0 && f, "a repository whose gitdir is inside the worktree under another name");
	struct sfs_policy *p = compiled_policy();
	ok(sfs_git_protect_layout(p, work, &err) == 0, "the layout is read (%s)", err ? err : "ok");
	free(err);
	ok(class_of(p, "meta/store/config") == SFS_CLASS_IMMUTABLE,
	   "the gitdir a .git file points at is immutable");
	ok(class_of(p, "meta/other") == SFS_CLASS_WRITABLE, "its siblings are not");
	sfs_policy_free(p);

	char plain[512];
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	mkdir(plain, 0755);
	p = compiled_policy();
	ok(sfs_git_protect_layout(p, plain, &err) == 0, "a SOURCE that is no repository is fine");
	free(err);
	sfs_policy_free(p);
	git_libgit2_shutdown();
}

int main(void)
{
	const char *dir = scratch_dir();

	/* Not the user's config: the test sets its own. */
	setenv("HOME", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	test_hooks_path(dir);
	test_separate_gitdir(dir);
	return tap_done();
}
