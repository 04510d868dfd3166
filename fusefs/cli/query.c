/* query.c - the options `sandyfs explain` and `sandyfs rules` share: the
 * rule options, --private-git, --store and --json, into one sfs_query. */

#include "query.h"

#include "common/usage.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int query_parse(int argc, char **argv, struct sfs_query *q, const char *usage,
		const struct cli *cli)
{
	static const struct option longopts[] = {
		SFS_RULE_LONG_OPTS,
		{"json", no_argument, NULL, 'j'},
		{"store", required_argument, NULL, 's'},
		{"private-git", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	memset(q, 0, sizeof(*q));
	optind = 0; /* full reset: main may have run getopt already */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":" SFS_RULE_SHORT_OPTS "h", longopts, NULL)) != -1) {
		int r = sfs_rule_opts_parse(&q->rules, opt, optarg);

		if (r < 0) {
			error("out of memory");
			return 1;
		}
		if (r > 0)
			continue;
		switch (opt) {
		case 'j':
			q->json = true;
			break;
		case 's':
			q->store = optarg;
			break;
		case 'p':
			q->private_git = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return cli_bad_option(cli, opt, argv);
		}
	}
	return -1;
}
