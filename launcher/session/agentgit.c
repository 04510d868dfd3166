/* agentgit.c - see agentgit.h. */
#include "agentgit.h"
#include "runtime/engine.h"
#include "sys/proc.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"

#include "config.h"
#include "common/install.h"
#include "common/quote.h"

#include <cJSON.h>
#include <git2.h>
#include <limits.h>
#include <string.h>

int agentgit_host_dir(const char *project, char **out)
{
	git_repository *repo = NULL;
	char wd[PATH_MAX], top[PATH_MAX];
	int r = 0;

	*out = NULL;
	if (!realpath(project, top))
		return -errno;
	git_libgit2_init();
	int g = git_repository_open_ext(&repo, top, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (g == 0 && !git_repository_is_bare(repo) && git_repository_workdir(repo) &&
	    realpath(git_repository_workdir(repo), wd) && strcmp(wd, top) == 0) {
		char *dir = strdup(git_repository_commondir(repo));
		size_t n = dir ? strlen(dir) : 0;
		while (n > 1 && dir[n - 1] == '/')
			dir[--n] = '\0';
		*out = dir;
		r = dir ? 1 : -ENOMEM;
	}
	git_repository_free(repo);
	git_libgit2_shutdown();
	return r;
}

char *agentgit_seen_at(const char *run)
{
	return sandy_asprintf("%s/host-git", run);
}

int agentgit_gate_find(const char *sandyfs, struct agentgit_gate *out)
{
	cleanup_free char *container = engine_container_dir(), *err = NULL;

	*out = (struct agentgit_gate){0};
	if (!container)
		return -ENOENT;
	int r = install_find(&install_rules, &out->rules, &err);
	if (r == 0)
		r = install_find(&install_overlays, &out->overlays, &err);
	if (r < 0) {
		sandy_error("cannot set up the push gate: %s", err ? err : strerror(-r));
		agentgit_gate_free(out);
		return r;
	}
	out->hooks = sandy_asprintf("%s/git-hooks", container);
	out->sandyfs = strdup(sandyfs);
	if (!out->hooks || !out->sandyfs) {
		agentgit_gate_free(out);
		return -ENOMEM;
	}
	return 0;
}

void agentgit_gate_free(struct agentgit_gate *g)
{
	free(g->hooks);
	free(g->sandyfs);
	free(g->rules);
	free(g->overlays);
	*g = (struct agentgit_gate){0};
}

static int git_argv(struct strv *argv, const struct sandyfs_prog *fs, const struct strv *rule_args,
		    const char *sub, bool json, bool force)
{
	int r = 0;

	r = strv_ok(r, strv_extend(argv, &fs->argv));
	r = strv_ok(r, strv_push(argv, "git"));
	r = strv_ok(r, strv_push(argv, sub));
	if (json)
		r = strv_ok(r, strv_push(argv, "--json"));
	if (force)
		r = strv_ok(r, strv_push(argv, "--force"));
	r = strv_ok(r, strv_extend(argv, rule_args));
	r = strv_ok(r, strv_push(argv, "--"));
	return strv_ok(r, strv_push(argv, fs->project));
}

int agentgit_command(const struct sandyfs_prog *fs, const struct strv *rule_args, const char *sub,
		     bool force, const char *branch)
{
	cleanup_strv struct strv argv = {0};
	int r = git_argv(&argv, fs, rule_args, sub, false, force);

	if (branch)
		r = strv_ok(r, strv_push(&argv, branch));
	if (r < 0) {
		sandy_error("out of memory");
		return SANDY_EXIT_FAILURE;
	}
	sandyfs_exec(&argv);
	return SANDY_EXIT_FAILURE;
}

void agentgit_summary(FILE *f, const struct sandyfs_prog *fs, const struct strv *rule_args)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL;
	int r = git_argv(&argv, fs, rule_args, "list", true, false);

	if (r < 0)
		return;
	/* A branch that cannot be read is an entry with "error", and the
	 * status is 1: the others are listed still. */
	proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL);
	cJSON *list = out ? cJSON_Parse(out) : NULL, *b;
	if (!cJSON_IsArray(list)) {
		fprintf(f, "sandy: cannot list the agent's branches ('sandy git' says why)\n");
		cJSON_Delete(list);
		return;
	}
	if (cJSON_GetArraySize(list) > 0)
		fprintf(f, "sandy: the agent's branches waiting to be imported (sandy git):\n");
	cJSON_ArrayForEach(b, list)
	{
		cleanup_free char *name = NULL, *shown = NULL;
		cJSON *n = cJSON_GetObjectItem(b, "commits");
		bool ok = cJSON_IsTrue(cJSON_GetObjectItem(b, "importable"));

		/* The agent named it: shown escaped. */
		if (quote_json_get(b, "branch", &name, NULL) < 0 || !(shown = quote_str(name)))
			continue;
		if (cJSON_IsString(cJSON_GetObjectItem(b, "error")))
			fprintf(f, "  %s: cannot be read ('sandy git' says why)\n", shown);
		else if (!cJSON_IsNumber(n))
			continue;
		else if (ok)
			fprintf(f, "  %s: %d commit%s; sandy git import %s\n", shown, n->valueint,
				n->valueint == 1 ? "" : "s", shown);
		else
			fprintf(f, "  %s: %d commit%s; cannot be imported ('sandy git' says why)\n",
				shown, n->valueint, n->valueint == 1 ? "" : "s");
	}
	cJSON_Delete(list);
}
