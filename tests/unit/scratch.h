/* scratch.h - a temporary directory for a unit test, removed at exit. */
#ifndef SANDY_SCRATCH_H
#define SANDY_SCRATCH_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch_path[256];

static int scratch_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? 0 : 0;
}

static void scratch_cleanup(void)
{
	if (scratch_path[0])
		nftw(scratch_path, scratch_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Creates the directory and returns its path. */
static inline const char *scratch_dir(void)
{
	snprintf(scratch_path, sizeof(scratch_path), "/var/tmp/sandy-unit.XXXXXX");
	if (!mkdtemp(scratch_path)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(scratch_cleanup);
	return scratch_path;
}

#endif
