/* cli.h - the command-line conventions both programs keep: a usage error
 * names the program, says what is wrong in git's style and where the help
 * is, and is the program's usage exit status. */
#ifndef SANDY_COMMON_CLI_H
#define SANDY_COMMON_CLI_H

struct cli {
	const char *prog; /* "sandyfs" */
	const char *help; /* "sandyfs --help" */
	int status;	  /* the exit status of a usage error */
};

/* "PROG: MESSAGE\nsee 'HELP'\n" on stderr; returns C's status. */
int cli_usage_error(const struct cli *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* getopt_long's verdict on the option just parsed (C is its return value,
 * ARGV as given to it), as a usage error. */
int cli_bad_option(const struct cli *c, int opt, char **argv);

#endif
