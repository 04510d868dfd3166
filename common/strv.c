/* strv.c - see strv.h. */
#include "strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strv_take(struct strv *s, char *str)
{
	if (!str)
		return -ENOMEM;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			free(str);
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
	return 0;
}

int strv_push(struct strv *s, const char *str)
{
	return strv_take(s, strdup(str));
}

int strv_pushf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *str;

	va_start(ap, fmt);
	int r = vasprintf(&str, fmt, ap);
	va_end(ap);
	return strv_take(s, r < 0 ? NULL : str);
}

int strv_extend(struct strv *s, const struct strv *from)
{
	for (size_t i = 0; i < from->n; i++) {
		int r = strv_push(s, from->v[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(struct strv *s)
{
	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), cmp_str);
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
