/* cli.c - see cli.h. */
#include "cli.h"
#include "usage.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

int cli_usage_error(const struct cli *c, const char *fmt, ...)
{
	char see[512];
	va_list ap;

	snprintf(see, sizeof(see), "see '%s'\n", c->help);
	va_start(ap, fmt);
	usage_report(see, fmt, ap);
	va_end(ap);
	return c->status;
}

int cli_bad_option(const struct cli *c, int opt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		return cli_usage_error(c, "option '%s' needs a value", arg);
	if (optopt && optopt < 256)
		return cli_usage_error(c, "unknown option '-%c'", optopt);
	return cli_usage_error(c, "unknown option '%s'", arg);
}
