/* fileat.h - the file helpers of both programs, each relative to a
 * directory fd (AT_FDCWD for a path as given): reading a whole file,
 * writing a whole buffer, replacing a file whole. The daemon's own
 * host access (O_PATH, openat2, the fallback flavour) is
 * fusefs/host/compat.h; these are for the files the programs keep
 * themselves. Negative errno. */
#ifndef SANDY_COMMON_FILEAT_H
#define SANDY_COMMON_FILEAT_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Only a regular file, and not through a symlink (ELOOP): a FIFO or
 * device planted there is refused (EINVAL), not waited on; longer than
 * MAX is EFBIG. Without it: whatever NAME opens to, its first MAX bytes
 * (a /proc file has no size to check). */
#define FILEAT_REGULAR 1

/* NAME in DIRFD into a malloc'ed, NUL-terminated *OUT; its length in
 * *LEN when LEN is not NULL. */
int fileat_read(int dirfd, const char *name, size_t max, int flags, char **out, size_t *len);

/* All LEN bytes of DATA to FD, across short writes and EINTR. */
int fileat_write_all(int fd, const void *data, size_t len);

/* NAME (one component) in DIRFD replaced whole: DATA written with MODE
 * (exactly, whatever the umask) to a new file beside it and renamed over
 * it, so that a reader sees the old file or the new one, and a symlink
 * there is replaced, never followed. As root, with OWNER not NULL, the
 * file gets OWNER's ids. */
int fileat_replace(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
		   const struct stat *owner);

#endif
