/* allow.c - `sandy allow [--session ID] DOMAIN`: DOMAIN added to a running
 * session's allowlist (session/allow.h). */

#include "cli.h"
#include "session/allow.h"

#include <string.h>

struct allow_opts {
	const char *session; /* NULL: the only one with an allowlist */
	const char *domain;
};

/* No getopt: everything but --session and --help is the domain, checked
 * as one: "-rf" is a bad domain, not an option. */
static int allow_parse(int argc, char **argv, struct allow_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return print_usage();
		if (!strcmp(a, "--session") && i + 1 < argc)
			o->session = argv[++i];
		else if (!strncmp(a, "--session=", 10))
			o->session = a + 10;
		else if (!strcmp(a, "--session"))
			return usage_error("--session needs a session ID");
		else if (!strcmp(a, "--") && i + 2 == argc && !o->domain)
			o->domain = argv[++i];
		else if (o->domain)
			return usage_error("allow takes one DOMAIN, not '%s' and '%s'", o->domain,
					   a);
		else
			o->domain = a;
	}
	if (!o->domain)
		return usage_error("allow needs a DOMAIN");
	return CLI_RUN;
}

int cmd_allow(int argc, char **argv)
{
	struct allow_opts o = {0};
	int status = allow_parse(argc, argv, &o);

	return status == CLI_RUN ? session_allow(o.domain, o.session) : status;
}
