/* clean.c - `sandy clean [PROJECT_DIR]`: `sandyfs store --clear`, run as a
 * session's questions run sandyfs (runtime/fsquery.h), in sandy's place. */

#include "cli.h"
#include "runtime/fsquery.h"

#include <string.h>

struct clean_opts {
	const char *project;
};

/* No getopt: the one option is --help, and anything else that looks like
 * one is refused rather than taken for a directory. */
static int clean_parse(int argc, char **argv, struct clean_opts *o)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return print_usage();
	if (argc > 2)
		return usage_error("clean takes at most one PROJECT_DIR");
	if (argc == 2 && argv[1][0] == '-')
		return usage_error("unknown option '%s'", argv[1]);
	if (argc == 2)
		o->project = argv[1];
	return CLI_RUN;
}

/* Replaces sandy with `sandyfs store --clear`; returns only on failure,
 * said. */
static void clean(const struct clean_opts *o)
{
	cleanup_sandyfs_prog struct sandyfs_prog fs = {0};
	cleanup_strv struct strv full = {0};
	const struct strv no_rules = {0};

	if (sandyfs_prog_find(&fs, NULL, o->project, &no_rules) < 0)
		return;
	int r = strv_extend(&full, &fs.argv);
	r = strv_ok(r, strv_push(&full, "store"));
	r = strv_ok(r, strv_push(&full, "--clear"));
	r = strv_ok(r, strv_push(&full, "--"));
	r = strv_ok(r, strv_push(&full, fs.project));
	if (r < 0) {
		out_of_memory();
		return;
	}
	sandyfs_exec(&full);
}

int cmd_clean(int argc, char **argv)
{
	struct clean_opts o = {.project = "."};
	int status = clean_parse(argc, argv, &o);

	if (status != CLI_RUN)
		return status;
	clean(&o);
	return SANDY_EXIT_FAILURE;
}
