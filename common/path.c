/* path.c - see path.h. */
#include "path.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

int path_append(char *buf, size_t cap, size_t *blen, const char *name, size_t len)
{
	size_t at = *blen;
	bool sep = at > 0 && !(at == 1 && buf[0] == '/');

	if (at + sep + len + 1 > cap)
		return -ENAMETOOLONG;
	if (sep)
		buf[at++] = '/';
	memcpy(buf + at, name, len);
	at += len;
	buf[at] = '\0';
	*blen = at;
	return 0;
}

int path_step(char *buf, size_t cap, size_t *blen, const char *comp, size_t len)
{
	if (len == 0 || (len == 1 && comp[0] == '.'))
		return 0;
	if (len == 2 && comp[0] == '.' && comp[1] == '.') {
		bool absolute = *blen > 0 && buf[0] == '/';
		size_t top = absolute ? 1 : 0;
		if (*blen <= top)
			return absolute ? 0 : -EXDEV;
		size_t at = *blen;
		while (at > top && buf[at - 1] != '/')
			at--;
		if (at > top)
			at--; /* the '/' before it */
		buf[at] = '\0';
		*blen = at;
		return 0;
	}
	int r = path_append(buf, cap, blen, comp, len);
	return r < 0 ? r : 1;
}

int path_resolve(char *buf, size_t cap, size_t *blen, const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		int r = path_step(buf, cap, blen, p, n);
		if (r < 0)
			return r;
		p += n;
		while (*p == '/')
			p++;
	}
	return 0;
}

int path_normalise(const char *path, char *out, size_t cap)
{
	size_t len = 0;

	if (cap == 0)
		return -ENAMETOOLONG;
	out[0] = '\0';
	if (path[0] == '/') {
		if (cap < 2)
			return -ENAMETOOLONG;
		out[len++] = '/';
		out[len] = '\0';
	}
	int r = path_resolve(out, cap, &len, path);
	return r < 0 ? r : (int)len;
}

const char *path_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 0 || (n == 1 && dir[0] == '/'))
		return path + (path[0] == '/' && n == 1);
	if (strncmp(path, dir, n) != 0)
		return NULL;
	if (path[n] == '\0')
		return path + n;
	return path[n] == '/' ? path + n + 1 : NULL;
}

size_t path_dirlen(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}
