/* sandy.c - see sandy.h. */

#include "sandy.h"

#include "common/fileat.h"
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
	return fileat_read(AT_FDCWD, path, max, 0, out, NULL);
}

int sandy_write_all(int fd, const char *data, size_t len)
{
	return fileat_write_all(fd, data, len);
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
