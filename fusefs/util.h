/* util.h - small helpers shared by every module: cleanup attributes in the
 * style of crun/systemd, and errno-preserving close. Nothing here knows
 * about FUSE or the policy. */
#ifndef SANDYFS_UTIL_H
#define SANDYFS_UTIL_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define SFS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Room for a path relative to SOURCE, as the policy judges it. A tree may
 * nest deeper than PATH_MAX (every host call is relative, so the kernel's
 * limit is per call, not per tree); beyond this the mount answers
 * ENAMETOOLONG rather than judge a truncated path. */
#define SFS_PATH_MAX 16384

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
