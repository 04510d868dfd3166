/* rules.c - `sandyfs rules [OPTIONS] SOURCE` and `sandyfs rules --types`:
 * sfs_rules(), sfs_rules_types(). */

#include "query.h"
#include "sandyfs_help.h"

#include <getopt.h>
#include <string.h>

static const char rules_usage[] =
	"usage: sandyfs rules [RULE OPTIONS] [--private-git] [--json] SOURCE\n"
	"       sandyfs rules --types\n"
	"\n"
	"The effective policy for SOURCE: the rule files read and every rule by class.\n"
	"--types prints the project types --type takes, one per line.\n"
	"\n" SANDYFS_HELP_RULE_OPTIONS
	"      --private-git      as a mount with --private-git: .git is the agent's own\n"
	"      --json             print JSON instead of text\n";


/* A usage error points at `sandyfs rules --help`. */
static const struct cli rules_cli = {"sandyfs", "sandyfs rules --help", 2};

int cmd_rules(int argc, char **argv)
{
	struct sfs_query q;

	if (argc == 2 && !strcmp(argv[1], "--types"))
		return sfs_rules_types();
	int rc = query_parse(argc, argv, &q, rules_usage, &rules_cli);
	if (rc < 0 && argc - optind != 1)
		rc = cli_usage_error(&rules_cli, "rules needs exactly one SOURCE%s",
				     argc - optind > 1 ? " (too many arguments)" : "");
	if (rc < 0) {
		q.source = argv[optind];
		rc = sfs_rules(&q);
	}
	sfs_rule_opts_free(&q.rules);
	return rc;
}
