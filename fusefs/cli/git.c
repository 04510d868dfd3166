/* git.c - `sandyfs git list|import|check`: the agent's private repository
 * (git/gitpriv.h). */

#include "cli.h"
#include "git/gitpriv.h"

#include "common/usage.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* sandyfs git list|import|check: the private repository (gitpriv.h). */
int cmd_git(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_FORCE, OPT_GIT_DIR, OPT_STORE, OPT_HOST_GIT };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"force", no_argument, NULL, OPT_FORCE},
		{"git-dir", required_argument, NULL, OPT_GIT_DIR},
		{"host-git", required_argument, NULL, OPT_HOST_GIT},
		{"store", required_argument, NULL, OPT_STORE},
		{"help", no_argument, NULL, 'h'},
		SFS_RULE_LONG_OPTS,
		{NULL, 0, NULL, 0},
	};
	struct sfs_rule_opts rules = {0};
	const char *git_dir = NULL, *store = NULL, *host_git = NULL;
	bool json = false, force = false;
	int c, status;

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			fputs(sandyfs_usage, stdout);
			return 0;
		}
		return cli_usage_error(&sandyfs_cli, "git needs list, import or check");
	}
	const char *sub = argv[1];
	argc--;
	argv++;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h" SFS_RULE_SHORT_OPTS, longopts, NULL)) != -1) {
		int used = sfs_rule_opts_parse(&rules, c, optarg);
		if (used < 0) {
			error("out of memory");
			status = 1;
			goto out;
		}
		if (used)
			continue;
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_GIT_DIR:
			git_dir = optarg;
			break;
		case OPT_STORE:
			store = optarg;
			break;
		case OPT_HOST_GIT:
			host_git = optarg;
			break;
		case 'h':
			fputs(sandyfs_usage, stdout);
			status = 0;
			goto out;
		default:
			status = cli_bad_option(&sandyfs_cli, c, argv);
			goto out;
		}
	}
	int nargs = argc - optind;
	bool check_only = git_dir || host_git;
	if (!strcmp(sub, "list") && nargs == 1 && !force && !check_only)
		status = sfs_git_list_main(&rules, store, json, argv[optind]);
	else if (!strcmp(sub, "import") && nargs == 2 && !json && !check_only)
		status = sfs_git_import_main(&rules, store, force, argv[optind], argv[optind + 1]);
	else if (!strcmp(sub, "check") && nargs >= 2 && !json && !force && !store)
		status = sfs_git_check_main(&rules, git_dir, host_git, argv[optind],
					    argv + optind + 1, nargs - 1);
	else if (strcmp(sub, "list") && strcmp(sub, "import") && strcmp(sub, "check"))
		status = cli_usage_error(&sandyfs_cli, "unknown git command '%s'", sub);
	else
		status = cli_usage_error(&sandyfs_cli, "bad arguments for 'git %s'", sub);
out:
	sfs_rule_opts_free(&rules);
	return status;
}
