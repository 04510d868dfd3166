/* store.c - `sandyfs store [--store DIR] [--clear] SOURCE`: sfs_store_main(). */

#include "cli.h"
#include "daemon.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

int cmd_store(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"store", required_argument, NULL, 's'},
		{"clear", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *store = NULL;
	bool clear = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			store = optarg;
			break;
		case 'c':
			clear = true;
			break;
		case 'h':
			fputs(sandyfs_usage, stdout);
			return 0;
		default:
			return cli_bad_option(&sandyfs_cli, c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(&sandyfs_cli, "store needs exactly one SOURCE%s",
				       argc - optind > 1 ? " (too many arguments)" : "");
	return sfs_store_main(argv[optind], store, clear);
}
