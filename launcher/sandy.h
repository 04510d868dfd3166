/* util.h - what every launcher module shares: git-style messages, cleanup
 * attributes, a growable argv (strv) and small string helpers. Nothing here
 * knows about mounts, containers or sessions. */
#ifndef SANDY_UTIL_H
#define SANDY_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A NULL-terminated, growable array of malloc'ed strings: an argv under
 * construction. Functions return 0 or -ENOMEM; after a failure the strv
 * stays valid and is freed as usual. */
struct strv {
	char **v;
	size_t n, cap;
};

int strv_push(struct strv *s, const char *str);
int strv_pushf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strv_extend(struct strv *s, const struct strv *from);
void strv_free(struct strv *s);

/* The last -errno of a sequence of strv pushes, so that a long argv can be
 * built without checking every line: r = strv_ok(r, strv_push(...)). */
static inline int strv_ok(int sofar, int r)
{
	return sofar < 0 ? sofar : r;
}

static inline void cleanup_freep(void *p)
{
	int saved = errno;

	free(*(void **)p);
	errno = saved;
}

static inline void cleanup_fdp(int *fd)
{
	int saved = errno;

	if (*fd >= 0)
		close(*fd);
	errno = saved;
}

static inline void cleanup_filep(FILE **f)
{
	int saved = errno;

	if (*f)
		fclose(*f);
	errno = saved;
}

static inline void cleanup_strvp(struct strv *s)
{
	strv_free(s);
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_fd   __attribute__((cleanup(cleanup_fdp)))
#define cleanup_file __attribute__((cleanup(cleanup_filep)))
#define cleanup_strv __attribute__((cleanup(cleanup_strvp)))

/* Hands a pointer or fd out of a cleanup variable. */
static inline void *steal_ptr(void *pp)
{
	void *p = *(void **)pp;

	*(void **)pp = NULL;
	return p;
}

static inline int steal_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

/* Reads a whole small file (at most MAX bytes) into a NUL-terminated
 * malloc'ed buffer. */
int read_file(const char *path, size_t max, char **out);
/* Creates or replaces PATH with DATA, mode MODE. */
int write_file(const char *path, const char *data, size_t len, int mode);

/* Whether NAME is an executable found in PATH (or a path to one). */
bool find_in_path(const char *name, char **found);

/* The first line of S (for quoting a tool's error message), trimmed,
 * malloc'ed; "" for NULL. */
char *first_line(const char *s);

#endif
