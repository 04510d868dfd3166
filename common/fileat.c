/* fileat.c - see fileat.h. */
#include "fileat.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int fileat_read(int dirfd, const char *name, size_t max, int flags, char **out, size_t *len)
{
	int oflags = O_RDONLY | O_CLOEXEC;

	if (flags & FILEAT_REGULAR)
		oflags |= O_NOFOLLOW | O_NONBLOCK;
	cleanup_fd int fd = openat(dirfd, name, oflags);
	struct stat st;
	size_t want = max;

	*out = NULL;
	if (fd < 0)
		return -errno;
	if (flags & FILEAT_REGULAR) {
		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode))
			return -EINVAL;
		if ((uint64_t)st.st_size > max)
			return -EFBIG;
		want = (size_t)st.st_size;
	}
	cleanup_free char *buf = malloc(want + 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (len)
		*len = got;
	*out = steal_ptr(&buf);
	return 0;
}

int fileat_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fileat_replace(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
		   const struct stat *owner)
{
	char tmp[64];
	int fd = -1;

	for (int i = 0; i < 100 && fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), ".sandy-%d-%d.tmp", (int)getpid(), i);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	int r = fileat_write_all(fd, data, len);
	/* openat() applied the umask; the caller asked for MODE. */
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && owner && geteuid() == 0 && fchown(fd, owner->st_uid, owner->st_gid) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}
