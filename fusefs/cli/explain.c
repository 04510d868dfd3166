/* explain.c - `sandyfs explain [OPTIONS] SOURCE PATH...`: sfs_explain(). */

#include "query.h"
#include "sandyfs_help.h"

static const char explain_usage[] =
	"usage: sandyfs explain [RULE OPTIONS] [--private-git] [--store DIR] [--json] SOURCE PATH...\n"
	"\n"
	"For each PATH (relative to SOURCE, or SOURCE/PATH; it need not exist): its class,\n"
	"the rule that decided it (file, line, entry), why, and what you can do about a\n"
	"path the agent may not change. A file the agent created through the mount is\n"
	"'owned'; a private path lives in the project's store (--store, as for mount).\n"
	"\n" SANDYFS_HELP_RULE_OPTIONS
	"      --private-git      as a mount with --private-git: .git is the agent's own\n"
	"      --store DIR        the project's store (default: as `sandyfs mount`)\n"
	"      --json             print JSON instead of text\n";

/* A usage error points at `sandyfs explain --help`. */
static const struct cli explain_cli = {"sandyfs", "sandyfs explain --help", 2};

int cmd_explain(int argc, char **argv)
{
	struct sfs_query q;
	int rc = query_parse(argc, argv, &q, explain_usage, &explain_cli);

	if (rc < 0 && argc - optind < 2)
		rc = cli_usage_error(&explain_cli, "explain needs SOURCE and at least one PATH");
	if (rc < 0) {
		q.source = argv[optind];
		rc = sfs_explain(&q, argv + optind + 1, argc - optind - 1);
	}
	sfs_rule_opts_free(&q.rules);
	return rc;
}
