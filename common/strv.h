/* strv.h - a NULL-terminated, growable array of malloc'ed strings: an argv
 * under construction, a list of names. Functions return 0 or -ENOMEM; after
 * a failure the strv stays valid and is freed as usual. */
#ifndef SANDY_COMMON_STRV_H
#define SANDY_COMMON_STRV_H

#include <stddef.h>

struct strv {
	char **v;
	size_t n, cap;
};

int strv_push(struct strv *s, const char *str);
int strv_pushf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes STR (malloc'ed) over, or frees it on failure. */
int strv_take(struct strv *s, char *str);
int strv_extend(struct strv *s, const struct strv *from);
void strv_sort(struct strv *s);
void strv_free(struct strv *s);

/* The first -errno of a sequence of pushes, so that a long argv can be
 * built without checking every line: r = strv_ok(r, strv_push(...)). */
static inline int strv_ok(int sofar, int r)
{
	return sofar < 0 ? sofar : r;
}

static inline void cleanup_strvp(struct strv *s)
{
	strv_free(s);
}
#define cleanup_strv __attribute__((cleanup(cleanup_strvp)))

#endif
