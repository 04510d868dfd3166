/* usage.h - the one printer of both programs' messages, after git's
 * usage.c: "PROG: MESSAGE" on stderr, lower case, the subject quoted. A
 * message is written whole in one write(2), so that the lines of
 * processes sharing a terminal (sandy, its daemon, docker) do not
 * interleave within a line. PROG is what usage_set_prog() set, else the
 * name the program was run by. */
#ifndef SANDY_COMMON_USAGE_H
#define SANDY_COMMON_USAGE_H

#include <stdarg.h>

void usage_set_prog(const char *prog);

/* Prints the message; returns -1, so that `return error(...)` ends a
 * function that reports failure as -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int verror(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* The same line for what is not a failure: what sandy did, or chose. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vnote(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* PROG: MESSAGE followed by further lines (TAIL, already formatted, each
 * ending in a newline), in the same single write. */
void usage_report(const char *tail, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
