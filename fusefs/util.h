/* util.h - small helpers shared by every module: cleanup attributes in the
 * style of crun/systemd, and errno-preserving close. Nothing here knows
 * about FUSE or the policy. */
#ifndef SANDYFS_UTIL_H
#define SANDYFS_UTIL_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define SFS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* close() that never disturbs errno: used on error paths, where the errno
 * of the failed call is the one to report. */
static inline void sfs_close_keep_errno(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	errno = saved;
}

static inline void sfs_cleanup_fdp(int *fd)
{
	sfs_close_keep_errno(*fd);
}

static inline void sfs_cleanup_freep(void *p)
{
	int saved = errno;

	free(*(void **)p);
	errno = saved;
}

#define cleanup_fd   __attribute__((cleanup(sfs_cleanup_fdp)))
#define cleanup_free __attribute__((cleanup(sfs_cleanup_freep)))

/* Hands an fd out of a cleanup_fd variable so it is not closed. */
static inline int sfs_steal_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

#endif
