/* sandy.h - what every launcher module shares: sandy's exit status, its
 * messages in git's style and small file helpers, on top of common/'s
 * cleanup attributes and strv. Nothing here knows about mounts, containers
 * or sessions. */
#ifndef SANDY_SANDY_H
#define SANDY_SANDY_H

#include "common/strv.h"
#include "common/util.h"

#include <errno.h>
#include <stddef.h>

/* Exit statuses of sandy itself. The command's own status is passed through
 * unchanged, so sandy's failures use the value the POSIX command wrappers
 * (env, nice, timeout, chroot) use: a script can tell them apart. */
#define SANDY_EXIT_FAILURE 125

/* "sandy: <message>\n" on stderr, in git's style: lower-case, what failed
 * first, the subject quoted. */
void sandy_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for information the user should see (a fallback taken, a stale
 * session cleaned); identical format so it reads as one voice. */
void sandy_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* malloc'ed formatted string, or NULL (errno ENOMEM). */
char *sandy_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads a whole small file (at most MAX bytes) into a NUL-terminated
 * malloc'ed buffer. */
int sandy_read_file(const char *path, size_t max, char **out);
/* Writes all of DATA to FD, retrying short writes and EINTR. */
int sandy_write_all(int fd, const char *data, size_t len);
/* Creates or replaces PATH with DATA, mode MODE. */
int sandy_write_file(const char *path, const char *data, size_t len, int mode);

#endif
