/* cachedir.c - see cachedir.h. */
#include "cachedir.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *sandy_cache_dir(void)
{
	const char *v = getenv("SANDY_CACHE_DIR");
	char *out = NULL;

	if (v && *v)
		return strdup(v);
	v = getenv("XDG_CACHE_HOME");
	if (v && v[0] == '/')
		return asprintf(&out, "%s/sandy", v) < 0 ? NULL : out;
	v = getenv("HOME");
	if (!v || !*v) {
		struct passwd *pw = getpwuid(getuid());
		v = pw ? pw->pw_dir : NULL;
	}
	if (!v || !*v)
		return NULL;
	return asprintf(&out, "%s/.cache/sandy", v) < 0 ? NULL : out;
}

char *sandy_config_dir(void)
{
	const char *v = getenv("SANDY_CONFIG_DIR");
	char *out = NULL;

	if (v && *v)
		return strdup(v);
	v = getenv("XDG_CONFIG_HOME");
	if (v && v[0] == '/')
		return asprintf(&out, "%s/sandy", v) < 0 ? NULL : out;
	v = getenv("HOME");
	if (!v || !*v)
		return NULL;
	return asprintf(&out, "%s/.config/sandy", v) < 0 ? NULL : out;
}
