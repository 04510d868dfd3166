/* git.c - `sandy git [RULE OPTIONS] [list] [PROJECT_DIR]` and `sandy git
 * [RULE OPTIONS] import [--force] BRANCH [PROJECT_DIR]`: the agent's
 * branches, listed or imported by sandyfs (session/agentgit.h). */

#include "cli.h"
#include "runtime/fsquery.h"
#include "session/agentgit.h"

#include <string.h>

struct git_opts {
	struct strv rule_args;
	const char *sub; /* list or import */
	bool force;
	const char *branch; /* import's */
	const char *project;
};

static const char shortopts[] = ":t:r:h";

static const struct option longopts[] = {
	RULE_LONG_OPTS,
	{"force", no_argument, NULL, OPT_FORCE},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* The arguments after the options, NPOS of them at POS, into O. */
static int git_operands(char **pos, int npos, struct git_opts *o)
{
	if (npos > 0 && (!strcmp(pos[0], "list") || !strcmp(pos[0], "import"))) {
		o->sub = pos[0];
		pos++;
		npos--;
	}
	if (!strcmp(o->sub, "import")) {
		if (npos < 1 || npos > 2)
			return usage_error("git import needs BRANCH (and at most one PROJECT_DIR)");
		o->branch = pos[0];
		if (npos == 2)
			o->project = pos[1];
	} else if (o->force) {
		return usage_error("--force goes with 'git import'");
	} else if (npos > 1) {
		return usage_error("git list takes at most one PROJECT_DIR");
	} else if (npos == 1) {
		o->project = pos[0];
	}
	return CLI_RUN;
}

static int git_parse(int argc, char **argv, struct git_opts *o)
{
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if ((r = rule_option(c, &o->rule_args)) < 0)
			return SANDY_EXIT_FAILURE;
		if (r > 0)
			continue;
		if (c == OPT_FORCE)
			o->force = true;
		else
			return help_or_bad_option(c, argv);
	}
	return git_operands(argv + optind, argc - optind, o);
}

static int git(const struct git_opts *o)
{
	cleanup_sandyfs_prog struct sandyfs_prog fs = {0};

	if (sandyfs_prog_find(&fs, NULL, o->project, &o->rule_args) < 0)
		return SANDY_EXIT_FAILURE;
	return agentgit_command(&fs, &o->rule_args, o->sub, o->force, o->branch);
}

int cmd_git(int argc, char **argv)
{
	struct git_opts o = {.sub = "list", .project = "."};
	int status = git_parse(argc, argv, &o);

	if (status == CLI_RUN)
		status = git(&o);
	strv_free(&o.rule_args);
	return status;
}
