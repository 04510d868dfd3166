/* main.c - the sandyfs command line: a table of commands (cli.h), each in
 * a file of its own. */

#include "cli.h"
#include "config.h"
#include "host/compat.h"
#include "sandyfs_help.h"

#include "common/usage.h"

#include <stdio.h>
#include <string.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

const char sandyfs_usage[] = SANDYFS_HELP;
const struct cli sandyfs_cli = {"sandyfs", "sandyfs --help", 2};

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"mount", cmd_mount},	  {"umount", cmd_umount}, {"unmount", cmd_umount},
	{"explain", cmd_explain}, {"rules", cmd_rules},	  {"store", cmd_store},
	{"git", cmd_git},
};

int main(int argc, char **argv)
{
	usage_set_prog("sandyfs");
	if (argc < 2)
		return cli_usage_error(&sandyfs_cli, "no command given");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(sandyfs_usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("sandyfs %s (libfuse %d.%d, %s)\n", SANDY_VERSION, FUSE_MAJOR_VERSION,
		       FUSE_MINOR_VERSION, sfs_compat_flavour());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (cmd[0] == '-')
		return cli_usage_error(&sandyfs_cli, "unknown option '%s'", cmd);
	return cli_usage_error(&sandyfs_cli, "unknown command '%s'", cmd);
}
