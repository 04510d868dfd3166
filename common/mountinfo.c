/* mountinfo.c - see mountinfo.h. */
#include "mountinfo.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

void mountinfo_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

struct mountinfo_line {
	char *mountpoint;
	char *optional; /* "shared:N master:M" ... */
	char *fstype;
};

/* Splits one mountinfo line in place:
 * id parent maj:min root mountpoint options [optional...] - fstype source superopts */
static bool parse_line(char *line, struct mountinfo_line *m)
{
	char *save = NULL, *tok;
	int field = 0;
	static char empty[] = "";

	m->optional = empty;
	m->mountpoint = m->fstype = NULL;
	char *opt_start = NULL, *opt_end = NULL;
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
		if (field == 4) {
			m->mountpoint = tok;
		} else if (field >= 6 && !m->fstype) {
			if (!strcmp(tok, "-")) {
				tok = strtok_r(NULL, " \n", &save);
				if (!tok)
					return false;
				m->fstype = tok;
				break;
			}
			if (!opt_start)
				opt_start = tok;
			opt_end = tok + strlen(tok);
		}
	}
	if (!m->mountpoint || !m->fstype)
		return false;
	if (opt_start) {
		/* strtok_r put NULs between the optional fields: rejoin them. */
		for (char *p = opt_start; p < opt_end; p++)
			if (!*p)
				*p = ' ';
		m->optional = opt_start;
	}
	mountinfo_unescape(m->mountpoint);
	return true;
}

/* /proc/self/mountinfo, close-on-exec (without glibc's "e" mode, which
 * not every libc has); NULL and errno where there is no /proc. */
static FILE *open_mountinfo(void)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (fd >= 0 && !f)
		close_keep_errno(fd);
	return f;
}

int mount_lookup(const char *path, struct mount_entry *e)
{
	cleanup_file FILE *f = open_mountinfo();
	cleanup_free char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (!f)
		return -errno;
	/* The last entry for a path is the one on top. */
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_line m;
		if (!parse_line(line, &m) || strcmp(m.mountpoint, path) != 0)
			continue;
		found = 1;
		if (e) {
			snprintf(e->fstype, sizeof(e->fstype), "%s", m.fstype);
			e->shared = strstr(m.optional, "shared:") != NULL;
			e->slave = strstr(m.optional, "master:") != NULL;
		}
	}
	return found;
}

int mounts_under(const char *dir, struct strv *out)
{
	cleanup_file FILE *f = open_mountinfo();
	cleanup_free char *line = NULL;
	cleanup_strv struct strv all = {0};
	size_t cap = 0, len = strlen(dir);

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_line m;
		if (!parse_line(line, &m))
			continue;
		if (strncmp(m.mountpoint, dir, len) != 0 ||
		    (m.mountpoint[len] != '\0' && m.mountpoint[len] != '/'))
			continue;
		int r = strv_push(&all, m.mountpoint);
		if (r < 0)
			return r;
	}
	/* mountinfo lists a mount after the one it sits on. */
	for (size_t i = all.n; i-- > 0;) {
		int r = strv_push(out, all.v[i]);
		if (r < 0)
			return r;
	}
	return 0;
}
