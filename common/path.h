/* path.h - paths as strings: joining a component, lexical normalisation,
 * "is below". A path relative to SOURCE has no leading '/', components
 * separated by one '/', no "." or ".." ("" is SOURCE itself); an absolute
 * path starts with '/'. Nothing here touches a filesystem. */
#ifndef SANDY_COMMON_PATH_H
#define SANDY_COMMON_PATH_H

#include <stddef.h>

/* Room for a path relative to SOURCE, as the policy judges it. A tree may
 * nest deeper than PATH_MAX (every host call is relative, so the kernel's
 * limit is per call, not per tree); beyond this the mount answers
 * ENAMETOOLONG rather than judge a truncated path. */
#define PATH_REL_MAX 16384

/* Appends component NAME (LEN bytes) to the path of *BLEN bytes in BUF (CAP
 * bytes of room), after a '/' unless the path is "" (or "/"). 0, or
 * -ENAMETOOLONG with BUF unchanged. */
int path_append(char *buf, size_t cap, size_t *blen, const char *name, size_t len);

/* One lexical step of COMP (LEN bytes) on the path in BUF: "" and "." do
 * nothing (0); ".." drops the last component (0; -EXDEV at the top of a
 * relative path, nothing at "/"); any other name is appended (1). */
int path_step(char *buf, size_t cap, size_t *blen, const char *comp, size_t len);

/* Every component of PATH through path_step, onto the path in BUF: the
 * lexical resolution of PATH relative to it. 0, -EXDEV, -ENAMETOOLONG. */
int path_resolve(char *buf, size_t cap, size_t *blen, const char *path);

/* PATH normalised lexically into OUT (CAP bytes): every component through
 * path_step, so slashes are folded and "." and ".." resolved. An
 * absolute path stays absolute ("/" for the root). The length, -EXDEV when
 * a relative path leaves its top, -ENAMETOOLONG. */
int path_normalise(const char *path, char *out, size_t cap);

/* What of PATH lies below directory DIR (both normalised): a pointer into
 * PATH ("" when they are equal), or NULL when PATH is neither DIR nor below
 * it. DIR "" (or "/" for absolute paths) holds everything. */
const char *path_below(const char *path, const char *dir);

/* The length of PATH's directory part: "a/b/c" -> 3, "a" -> 0. */
size_t path_dirlen(const char *path);

#endif
