/* util.h - what every module of both programs shares: cleanup attributes in
 * the style of crun and systemd (a variable released when it goes out of
 * scope, errno kept), handing a value out of one, and errno-preserving
 * close. Nothing here knows about FUSE, policies or containers. */
#ifndef SANDY_COMMON_UTIL_H
#define SANDY_COMMON_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* close() that never disturbs errno: on error paths the errno of the call
 * that failed is the one to report. */
static inline void close_keep_errno(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	errno = saved;
}

static inline void cleanup_freep(void *p)
{
	int saved = errno;

	free(*(void **)p);
	errno = saved;
}

static inline void cleanup_fdp(int *fd)
{
	close_keep_errno(*fd);
}

static inline void cleanup_filep(FILE **f)
{
	int saved = errno;

	if (*f)
		fclose(*f);
	errno = saved;
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_fd   __attribute__((cleanup(cleanup_fdp)))
#define cleanup_file __attribute__((cleanup(cleanup_filep)))

/* Hands an fd or a pointer out of a cleanup variable, so it is kept. */
static inline int steal_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

static inline void *steal_ptr(void *pp)
{
	void *p = *(void **)pp;

	*(void **)pp = NULL;
	return p;
}

#endif
