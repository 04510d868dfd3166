/*
 * fuzz_glob: libFuzzer target for the glob compiler (fusefs/glob.c).
 * Input: one byte of flags, then globs separated by '\n', then a NUL and a
 * subject. Every glob either compiles or is refused with a reason; a set
 * of valid globs always compiles; matching and partial matching of the
 * subject never fail except on resource limits, and a reported match
 * names a glob of the set.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXG 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags;
	char *text, *subject, *globs[MAXG], *p;
	const char *valid[MAXG];
	size_t n = 0, nv = 0, bad;
	struct sfs_globset *gs = NULL;
	char *reason = NULL;
	int r;

	if (size < 1)
		return 0;
	flags = data[0] & 3;
	text = malloc(size + 1);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	subject = text + strlen(text) + 1;
	if (subject > text + size - 1)
		subject = text + size - 1;
	for (p = text; n < MAXG;) {
		char *nl = strchr(p, '\n');

		globs[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	for (size_t i = 0; i < n; i++) {
		r = sfs_glob_check(globs[i], flags, &reason);
		if (r == 0)
			valid[nv++] = globs[i];
		else if (r != -EINVAL || !reason)
			abort(); /* a refusal always says why */
		free(reason);
		reason = NULL;
	}
	r = sfs_globset_new(valid, nv, flags, &gs, &bad, &reason);
	if (r == -EINVAL)
		abort(); /* valid globs always combine */
	if (r == 0) {
		size_t end = 0;
		int m = sfs_globset_match(gs, subject, strlen(subject), &end);

		if (m >= (int)nv || (m >= 0 && end > strlen(subject)))
			abort();
		if (m < 0 && m != -ENOENT && m != -E2BIG && m != -ENOMEM)
			abort();
		m = sfs_globset_match_prefix(gs, subject, strlen(subject));
		if (m < 0 && m != -E2BIG && m != -ENOMEM)
			abort();
		sfs_globset_free(gs);
	}
	free(reason);
	free(text);
	return 0;
}
