/* sandy.c - see sandy.h. */

#include "sandy.h"

#include "common/usage.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

/* The launcher's names for the one printer (common/usage.h). */
void sandy_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

void sandy_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(fmt, ap);
	va_end(ap);
}

char *sandy_asprintf(const char *fmt, ...)
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

int sandy_read_file(const char *path, size_t max, char **out)
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

int sandy_write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

int sandy_write_file(const char *path, const char *data, size_t len, int mode)
{
	cleanup_fd int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	int r = sandy_write_all(fd, data, len);
	if (r < 0)
		return r;
	/* open() applied the umask; the caller asked for MODE. */
	if (fchmod(fd, (mode_t)mode) < 0)
		return -errno;
	return close(steal_fd(&fd)) < 0 ? -errno : 0;
}
