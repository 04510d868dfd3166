/* err.c - see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int err_set(char **err, int errnum, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		free(*err);
		va_start(ap, fmt);
		if (vasprintf(err, fmt, ap) < 0)
			*err = NULL;
		va_end(ap);
	}
	return -errnum;
}
