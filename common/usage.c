/* usage.c - see usage.h. */
#include "usage.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *prog;

void usage_set_prog(const char *name)
{
	prog = name;
}

static const char *prog_name(void)
{
	if (prog)
		return prog;
#ifdef __APPLE__
	return getprogname();
#else
	return program_invocation_short_name;
#endif
}

void usage_report(const char *tail, const char *fmt, va_list ap)
{
	char buf[4096];
	int saved = errno;
	int n = snprintf(buf, sizeof(buf), "%s: ", prog_name());

	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	size_t len = m < 0 ? (size_t)n : (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	/* A tail that does not fit is written after: the message itself
	 * stays one write. */
	size_t t = tail ? strlen(tail) : 0;
	if (t && len + t <= sizeof(buf)) {
		memcpy(buf + len, tail, t);
		len += t;
		t = 0;
	}
	fflush(stderr);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(STDERR_FILENO, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	if (t && write(STDERR_FILENO, tail, t) < 0) {
		/* Nothing to tell where stderr is gone. */
	}
	errno = saved;
}

int verror(const char *fmt, va_list ap)
{
	usage_report(NULL, fmt, ap);
	return -1;
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return -1;
}

void vnote(const char *fmt, va_list ap)
{
	usage_report(NULL, fmt, ap);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(fmt, ap);
	va_end(ap);
}
