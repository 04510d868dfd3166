/* util.c - see util.h. */

#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

static void vmessage(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void vmessage(const char *fmt, va_list ap)
{
	char buf[4096];

	/* One write per message, so lines from concurrent processes (the
	 * daemon, docker) do not interleave within a line. */
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "sandy: %s\n", buf);
}

void sandy_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void sandy_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static int strv_take(struct strv *s, char *str)
{
	if (!str)
		return -ENOMEM;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			free(str);
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
	return 0;
}

int strv_push(struct strv *s, const char *str)
{
	return strv_take(s, strdup(str));
}

int strv_pushf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *str;

	va_start(ap, fmt);
	int r = vasprintf(&str, fmt, ap);
	va_end(ap);
	return strv_take(s, r < 0 ? NULL : str);
}

int strv_extend(struct strv *s, const struct strv *from)
{
	for (size_t i = 0; i < from->n; i++) {
		int r = strv_push(s, from->v[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

int read_file(const char *path, size_t max, char **out)
{
	cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	cleanup_free char *buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	size_t len = 0;
	while (len < max) {
		ssize_t n = read(fd, buf + len, max - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = steal_ptr(&buf);
	return 0;
}

int write_file(const char *path, const char *data, size_t len, int mode)
{
	cleanup_fd int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	/* open() applied the umask; the caller asked for MODE. */
	if (fchmod(fd, (mode_t)mode) < 0)
		return -errno;
	return close(steal_fd(&fd)) < 0 ? -errno : 0;
}

bool find_in_path(const char *name, char **found)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK) != 0)
			return false;
		if (found)
			*found = strdup(name);
		return true;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char buf[PATH_MAX];
		struct stat st;
		int n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", name);
		if (n > 0 && (size_t)n < sizeof(buf) && stat(buf, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(buf, X_OK) == 0) {
			if (found)
				*found = strdup(buf);
			return true;
		}
		path += len + (path[len] == ':');
	}
	return false;
}

char *first_line(const char *s)
{
	if (!s)
		return strdup("");
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	size_t len = strcspn(s, "\r\n");
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return strndup(s, len);
}
