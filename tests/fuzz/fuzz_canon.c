/*
 * fuzz_canon: libFuzzer target for the name canonicaliser (fusefs/canon.c).
 * Any byte string: canonicalising never overflows SFS_CANON_CAP, never
 * reads or writes out of bounds (ASan), and is idempotent, in both the
 * NTFS reading and the POSIX spelling; a buffer one byte too small is
 * refused cleanly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/canon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	size_t cap = SFS_CANON_CAP(size);
	char *once = malloc(cap), *twice = malloc(cap), *small;
	ssize_t a, b;

	a = sfs_canon_path(in, size, once, cap);
	if (a < 0 || (size_t)a >= cap)
		abort(); /* SFS_CANON_CAP must always suffice */
	b = sfs_canon_path(once, (size_t)a, twice, cap);
	if (b != a || memcmp(once, twice, (size_t)a) != 0)
		abort(); /* canonical names are fixed points */
	a = sfs_canon_path_posix(in, size, once, cap);
	if (a < 0 || (size_t)a >= cap)
		abort();
	b = sfs_canon_path_posix(once, (size_t)a, twice, cap);
	if (b != a || memcmp(once, twice, (size_t)a) != 0)
		abort();
	a = sfs_canon_path(in, size, once, cap);
	if (sfs_canon_component(in, size, twice, cap) < 0 || sfs_canon_fold(in, size, twice, cap) < 0)
		abort();
	/* Exactly too small: must fail, never write past the end (ASan). */
	small = malloc((size_t)a);
	if (a > 0 && sfs_canon_path(in, size, small, (size_t)a) >= 0)
		abort();
	free(small);
	free(once);
	free(twice);
	return 0;
}
