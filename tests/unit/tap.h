/* tap.h - the few lines of TAP every unit test prints: one "ok - ..." or
 * "not ok - ..." per case, a failure count for the exit status, and the
 * plan at the end. */
#ifndef SANDY_TAP_H
#define SANDY_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_failures, tap_count;

__attribute__((format(printf, 2, 3))) static bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(cond ? "ok - " : "not ok - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	tap_count++;
	if (!cond)
		tap_failures++;
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok((cond), __VA_ARGS__)

/* ok() that also prints the two values when they differ. */
#define ok_eq_long(actual, expected, ...)                                                          \
	do {                                                                                       \
		long a_ = (long)(actual), e_ = (long)(expected);                                   \
		if (!tap_ok(a_ == e_, __VA_ARGS__))                                                \
			printf("#   got %ld, expected %ld\n", a_, e_);                             \
	} while (0)

/* The plan comes last, so a test that stops early is seen to. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif
