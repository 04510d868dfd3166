/* umount.c - `sandyfs umount MOUNTPOINT`: sfs_umount_main(). */

#include "cli.h"
#include "daemon.h"

#include <stdio.h>
#include <string.h>

int cmd_umount(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(sandyfs_usage, stdout);
		return 0;
	}
	if (argc != 2)
		return cli_usage_error(&sandyfs_cli, "umount needs exactly one MOUNTPOINT");
	if (argv[1][0] == '-')
		return cli_usage_error(&sandyfs_cli, "unknown option '%s'", argv[1]);
	return sfs_umount_main(argv[1]);
}
