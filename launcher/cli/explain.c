/* explain.c - `sandy explain [RULE OPTIONS] [-C PROJECT_DIR] [--json]
 * PATH...`: `sandyfs explain`, run as a session's questions run sandyfs
 * (runtime/fsquery.h), in sandy's place. */

#include "cli.h"
#include "runtime/fsquery.h"
#include "session/agentgit.h"

struct explain_opts {
	struct strv rule_args;
	const char *project;
	bool json;
	char **paths;
	int n_paths;
};

static const char shortopts[] = ":t:r:C:h";

static const struct option longopts[] = {
	RULE_LONG_OPTS,
	{"json", no_argument, NULL, OPT_JSON},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int explain_parse(int argc, char **argv, struct explain_opts *o)
{
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if ((r = rule_option(c, &o->rule_args)) < 0)
			return SANDY_EXIT_FAILURE;
		if (r > 0)
			continue;
		if (c == 'C')
			o->project = optarg;
		else if (c == OPT_JSON)
			o->json = true;
		else
			return help_or_bad_option(c, argv);
	}
	if (optind == argc)
		return usage_error("explain needs at least one PATH");
	o->paths = argv + optind;
	o->n_paths = argc - optind;
	return CLI_RUN;
}

/* Replaces sandy with `sandyfs explain`, asked as a session would mount
 * the project: with the agent's own .git at the top of a work tree.
 * Returns only on failure, said. */
static void explain(const struct explain_opts *o)
{
	cleanup_sandyfs_prog struct sandyfs_prog fs = {0};
	cleanup_strv struct strv full = {0}, args = {0};
	cleanup_free char *git = NULL;

	if (sandyfs_prog_find(&fs, NULL, o->project, &o->rule_args) < 0)
		return;
	int r = strv_extend(&args, &o->rule_args);
	if (r == 0 && agentgit_host_dir(o->project, &git) > 0)
		r = strv_push(&args, "--private-git");
	r = strv_ok(r, sandyfs_query_argv(&full, &fs, "explain", o->json, &args));
	for (int i = 0; r == 0 && i < o->n_paths; i++)
		r = strv_push(&full, o->paths[i]);
	if (r < 0) {
		out_of_memory();
		return;
	}
	sandyfs_exec(&full);
}

int cmd_explain(int argc, char **argv)
{
	struct explain_opts o = {.project = "."};
	int status = explain_parse(argc, argv, &o);

	if (status == CLI_RUN) {
		explain(&o);
		status = SANDY_EXIT_FAILURE;
	}
	strv_free(&o.rule_args);
	return status;
}
