/* test_gitreach.c - what the host's git configuration reaches in SOURCE
 * becomes immutable at mount time: symlinked hooks' targets (every hop),
 * include.path and includeIf targets present or absent (and what they
 * include), programs of helpers, drivers, filters and aliases that are
 * paths in the tree, excludes and attributes files, from the repository's
 * config, the user's global one and the system's; nothing outside SOURCE,
 * and nothing for settings that name no path. */
#include "git/gitlayout.h"
#include "policy/policy.h"
#include "scratch.h"
#include "tap.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256], src[512], global[700], home[600];

static struct sfs_policy *layout(void)
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
	err = NULL;
	if (sfs_git_protect_layout(p, src, &err) < 0) {
		printf("# layout: %s\n", err ? err : "?");
		sfs_policy_free(p);
		p = NULL;
	}
	free(err);
	return p;
}

/* The class of PATH, and the reason when it is immutable. */
static enum sfs_class class_of(struct sfs_policy *p, const char *path, const char **why)
{
	struct sfs_decision d;
	enum sfs_class c = p ? sfs_policy_classify(p, path, &d) : SFS_CLASS_WRITABLE;

	if (why)
		*why = p ? d.why : "";
	return c;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void append_config(const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/.git/config", src);
	f = fopen(path, "a");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool immutable_for(struct sfs_policy *p, const char *path, const char *key)
{
	const char *why = NULL;

	if (class_of(p, path, &why) != SFS_CLASS_IMMUTABLE) {
		printf("#   %s: %s\n", path, sfs_class_name(class_of(p, path, NULL)));
		return false;
	}
	if (key && !strstr(why, key)) {
		printf("#   %s: why '%s' does not name '%s'\n", path, why, key);
		return false;
	}
	return true;
}

static void test_repository_config(void)
{
	append_config("[include]\n\tpath = ../.gitconfig.local\n"
		      "[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../conf/only-elsewhere\n"
		      "[core]\n\tfsmonitor = scripts/fsmon --quiet\n"
		      "\texcludesFile = .ignore-global\n\tattributesFile = conf/attrs\n"
		      "\teditor = vi\n\tpager = less\n"
		      "[filter \"x\"]\n\tclean = python3 tools/clean.py %f\n\tsmudge = cat\n"
		      "[diff \"pdf\"]\n\ttextconv = ./bin/pdf2txt\n"
		      "[merge \"m\"]\n\tdriver = sh -c 'tools/merge.sh %O %A %B'\n"
		      "[credential]\n\thelper = !tools/cred.sh\n\thelper = store\n"
		      "[alias]\n\ty = !sh ./bin/y.sh\n\tco = checkout\n"
		      "[gpg]\n\tprogram = tools/gpg\n"
		      "[remote \"origin\"]\n\turl = ../elsewhere.git\n"
		      "\tfetch = +refs/heads/*:refs/remotes/origin/*\n");
	struct sfs_policy *p = layout();

	ok(p != NULL, "the repository's layout and configuration are read");
	ok(immutable_for(p, ".gitconfig.local", "include.path"),
	   "an absent include.path target is immutable, and the reason names the setting");
	ok(immutable_for(p, "conf/only-elsewhere", "includeif"),
	   "an includeIf target whose condition does not hold today too");
	ok(immutable_for(p, "scripts/fsmon", "core.fsmonitor"), "the fsmonitor program");
	ok(immutable_for(p, ".ignore-global", "core.excludesfile"), "core.excludesFile's file");
	ok(immutable_for(p, "conf/attrs", "core.attributesfile"), "core.attributesFile's file");
	ok(immutable_for(p, "tools/clean.py", "filter.x.clean"), "a filter's program");
	ok(immutable_for(p, "bin/pdf2txt", "textconv"), "a diff driver's textconv");
	ok(immutable_for(p, "tools/merge.sh", "merge.m.driver"),
	   "a merge driver's program, inside the quotes of sh -c");
	ok(immutable_for(p, "tools/cred.sh", "credential.helper"), "a '!' credential helper");
	ok(immutable_for(p, "bin/y.sh", "alias.y"), "a shell alias's program");
	ok(immutable_for(p, "tools/gpg", "gpg.program"), "gpg.program");
	ok(class_of(p, "scripts/other", NULL) == SFS_CLASS_WRITABLE &&
		   class_of(p, "tools/clean.py.bak", NULL) == SFS_CLASS_WRITABLE,
	   "their neighbours stay writable");
	ok(class_of(p, "vi", NULL) == SFS_CLASS_WRITABLE &&
		   class_of(p, "checkout", NULL) == SFS_CLASS_WRITABLE &&
		   class_of(p, "store", NULL) == SFS_CLASS_WRITABLE &&
		   class_of(p, "refs/heads/main", NULL) == SFS_CLASS_WRITABLE,
	   "programs found on PATH, git's own commands and what is no command add nothing");
	sfs_policy_free(p);

	/* The include exists and includes further. */
	char path[1024];
	snprintf(path, sizeof(path), "%s/.gitconfig.local", src);
	write_file(path, "[include]\n\tpath = conf/deeper\n[core]\n\tsshCommand = tools/ssh\n");
	p = layout();
	ok(immutable_for(p, "conf/deeper", ".gitconfig.local"),
	   "an included file's own include is immutable, relative to it");
	ok(immutable_for(p, "tools/ssh", "core.sshcommand"), "and what it names");
	sfs_policy_free(p);
}

static void test_hook_links(void)
{
	char path[1024], target[1024];

	snprintf(path, sizeof(path), "%s/.git/hooks", src);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.git/hooks/pre-commit", src);
	ok(symlink("../../scripts/pre-commit", path) == 0, "a hook installed as a link");
	snprintf(path, sizeof(path), "%s/scripts", src);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/scripts/pre-push", src);
	snprintf(target, sizeof(target), "%s/.git/hooks/pre-push", src);
	ok(symlink(path, target) == 0 && symlink("real/push.sh", path) == 0,
	   "and one through a link in the tree");
	snprintf(path, sizeof(path), "%s/.git/hooks/post-checkout", src);
	ok(symlink("/usr/bin/true", path) == 0, "and one outside the tree");

	struct sfs_policy *p = layout();
	ok(immutable_for(p, "scripts/pre-commit", "pre-commit"),
	   "the target of a symlinked hook is immutable (absent)");
	ok(immutable_for(p, "scripts/pre-push", "pre-push") &&
		   immutable_for(p, "scripts/real/push.sh", "pre-push"),
	   "every hop of a chain of links is");
	ok(class_of(p, "scripts/real/other.sh", NULL) == SFS_CLASS_WRITABLE &&
		   class_of(p, "usr/bin/true", NULL) == SFS_CLASS_WRITABLE,
	   "nothing else, and nothing for a hook outside SOURCE");
	sfs_policy_free(p);
}

static void test_user_config(void)
{
	char path[1024];

	/* The user's global file, with a conditional include into the
	 * project and a "~/" path. */
	snprintf(path, sizeof(path), "[includeIf \"gitdir:~/\"]\n\tpath = %s/team.gitconfig\n"
		 "[core]\n\thooksPath = ~/hooks\n[diff]\n\texternal = ~/proj/tools/difftool\n",
		 src);
	write_file(global, path);
	setenv("GIT_CONFIG_GLOBAL", global, 1);
	setenv("SANDY_USER_HOME", root, 1); /* the home above the project */
	struct sfs_policy *p = layout();
	ok(immutable_for(p, "team.gitconfig", "global"),
	   "a file the user's global configuration includes, in SOURCE");
	ok(immutable_for(p, "tools/difftool", "diff.external"),
	   "a '~/' path the user's configuration names, when the home holds SOURCE");
	sfs_policy_free(p);
	unsetenv("GIT_CONFIG_GLOBAL");

	/* A project that is the user's home: ~/.gitconfig is its file. */
	setenv("SANDY_USER_HOME", src, 1);
	p = layout();
	ok(immutable_for(p, ".gitconfig", "configuration file") &&
		   immutable_for(p, ".config/git/config", "configuration file"),
	   "the global configuration files themselves, when SOURCE holds them");
	sfs_policy_free(p);
	setenv("SANDY_USER_HOME", home, 1);
}

static void test_booleans(void)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/.git/config", src);
	write_file(path, "[core]\n\tbare = false\n\tfsmonitor = true\n[pager]\n\tlog = false\n"
			 "\tdiff = tools/pager\n");
	struct sfs_policy *p = layout();
	ok(class_of(p, "true", NULL) == SFS_CLASS_WRITABLE &&
		   class_of(p, "false", NULL) == SFS_CLASS_WRITABLE,
	   "a boolean fsmonitor or pager names no program");
	ok(immutable_for(p, "tools/pager", "pager.diff"), "a pager that is a path does");
	sfs_policy_free(p);
}

int main(void)
{
	const char *dir = scratch_dir();
	git_repository *repo = NULL;

	snprintf(root, sizeof(root), "%s", dir);
	snprintf(src, sizeof(src), "%s/proj", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(global, sizeof(global), "%s/global.gitconfig", home);
	mkdir(home, 0755);
	setenv("SANDY_USER_HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	unsetenv("GIT_CONFIG_GLOBAL");
	unsetenv("XDG_CONFIG_HOME");
	git_libgit2_init();
	if (!ok(git_repository_init(&repo, src, 0) == 0, "a repository"))
		return tap_done();
	git_repository_free(repo);
	git_libgit2_shutdown();
	test_repository_config();
	test_hook_links();
	test_user_config();
	test_booleans();
	return tap_done();
}
