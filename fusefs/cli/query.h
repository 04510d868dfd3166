/* query.h - the options of the commands that ask about a source's policy
 * without mounting it (cli/explain.c, cli/rules.c). */
#ifndef SANDYFS_CLI_QUERY_H
#define SANDYFS_CLI_QUERY_H

#include "cli.h"
#include "explain.h"

/* Parses ARGV's options into *Q (zeroed first); the operands start at
 * optind. -1 to go on; else the exit status (--help, a usage error in
 * CLI's words, out of memory). */
int query_parse(int argc, char **argv, struct sfs_query *q, const char *usage,
		const struct cli *cli);

#endif
