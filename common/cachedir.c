/* cachedir.c - see cachedir.h. */
#include "cachedir.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int sandy_make_path(const char *path, unsigned mode)
{
	char *p = strdup(path);
	int r = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; r == 0 && *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			r = -errno;
		*s = '/';
	}
	if (r == 0 && mkdir(p, (mode_t)mode) < 0 && errno != EEXIST)
		r = -errno;
	free(p);
	return r;
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
