/* install.c - see install.h. */
#include "install.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "config.h"
#include "err.h"
#include "strv.h"
#include "util.h"

static char *self_dir;
static bool uninstalled;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* PATH with "." and ".." components and repeated slashes resolved as
 * text, in place. Sound for the paths made here: /proc/self/exe names the
 * executable with every symlink resolved, so ".." after one of its
 * directories is that directory's parent. */
static void normalise(char *path)
{
	char *out = path, *p = path;

	while (*p) {
		while (*p == '/')
			p++;
		size_t len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (out > path && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, p, len);
			out += len;
		}
		p += len;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* This program's own path, resolved, in BUF: Linux says it in /proc, macOS
 * through dyld (the only branch not compiled on Linux, kept to the one
 * call). */
static bool self_path(char buf[PATH_MAX])
{
#ifdef __APPLE__
	char raw[PATH_MAX];
	uint32_t size = sizeof(raw);

	return _NSGetExecutablePath(raw, &size) == 0 && realpath(raw, buf) && buf[0] == '/';
#else
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX - 1);

	if (n <= 0 || buf[0] != '/')
		return false;
	buf[n] = '\0';
	return true;
#endif
}

static void init(void)
{
	char buf[PATH_MAX];

	if (!self_path(buf))
		return;
	char *slash = strrchr(buf, '/');
	*slash = '\0';
	self_dir = strdup(slash == buf ? "/" : buf);
	if (!self_dir)
		return;
	/* The build directory as it is now (it may lie behind a symlink); a
	 * build directory that is gone makes every program an installed one. */
	cleanup_free char *build = realpath(SANDY_BUILD_ROOT, NULL);
	size_t len = build ? strlen(build) : 0;
	uninstalled = build && !strncmp(self_dir, build, len) &&
		      (self_dir[len] == '/' || self_dir[len] == '\0');
}

const char *install_self_dir(void)
{
	pthread_once(&once, init);
	return self_dir;
}

bool install_uninstalled(void)
{
	pthread_once(&once, init);
	return uninstalled;
}

/* Whether PATH is ITEM: the program, or a directory (with the probe file). */
static bool present(const struct install_item *item, const char *path)
{
	struct stat st;

	if (item->program)
		return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	if (!item->probe)
		return true;
	cleanup_free char *probe = NULL;
	if (asprintf(&probe, "%s/%s", path, item->probe) < 0) {
		probe = NULL;
		return false;
	}
	return stat(probe, &st) == 0;
}

int install_find(const struct install_item *item, char **path, char **err)
{
	cleanup_strv struct strv looked = {0};
	cleanup_free char *beside = NULL, *configured = NULL;
	const char *e = item->env ? getenv(item->env) : NULL;
	const char *dir = install_self_dir();
	int r = 0;

	*path = NULL;
	if (e && *e)
		return (*path = strdup(e)) ? 0 : -ENOMEM;
	if (install_uninstalled() && item->build) {
		if (present(item, item->build))
			return (*path = strdup(item->build)) ? 0 : -ENOMEM;
		r = strv_ok(r, strv_pushf(&looked, "'%s' (this build's)", item->build));
	}
	int n = 0;
	if (dir && item->program)
		n = asprintf(&beside, "%s/%s", dir, item->name);
	else if (dir && *SANDY_BINDIR_TO_DATADIR)
		n = asprintf(&beside, "%s/%s/sandy/%s", dir, SANDY_BINDIR_TO_DATADIR, item->name);
	if (n < 0) {
		beside = NULL;
		return -ENOMEM;
	}
	if (item->program)
		n = asprintf(&configured, "%s/%s", SANDY_BINDIR, item->name);
	else
		n = asprintf(&configured, "%s/sandy/%s", SANDY_DATADIR, item->name);
	if (n < 0) {
		configured = NULL;
		return -ENOMEM;
	}
	if (beside) {
		normalise(beside);
		if (present(item, beside))
			return *path = steal_ptr(&beside), 0;
		r = strv_ok(r, strv_pushf(&looked, "'%s' (beside the program)", beside));
	}
	normalise(configured);
	/* Installed where it was configured for, the two are one place. */
	if (!beside || strcmp(beside, configured) != 0) {
		if (present(item, configured))
			return *path = steal_ptr(&configured), 0;
		r = strv_ok(r, strv_pushf(&looked, "'%s' (the configured prefix)", configured));
	}
	if (r < 0)
		return r;

	cleanup_free char *list = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&list, &size);
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < looked.n; i++)
		fprintf(m, "%s%s", i == 0 ? "" : i + 1 == looked.n ? " and " : ", ", looked.v[i]);
	if (fclose(m) != 0)
		return -ENOMEM;
	if (item->env)
		return err_set(err, ENOENT, "cannot find %s: looked in %s; set %s to name it",
			       item->what, list, item->env);
	return err_set(err, ENOENT, "cannot find %s: looked in %s", item->what, list);
}

const struct install_item install_rules = {
	.what = "the shipped rules",
	.env = "SANDY_RULES_DIR",
	.build = SANDY_SOURCE_RULES_DIR,
	.name = "rules",
};

const struct install_item install_overlays = {
	.what = "the shipped read-only overlays",
	.env = "SANDY_OVERLAYS_DIR",
	.build = SANDY_SOURCE_OVERLAYS_DIR,
	.name = "ro-overlays",
};
