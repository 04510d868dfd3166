/*
 * glob: gitignore-style globs compiled to PCRE2, one combined regex per set.
 *
 * Syntax: '*' and '?' match within one component, '**' as a whole component
 * matches any number of components, '[...]' is a bracket expression ('!' or
 * '^' negates, ranges, [:alpha:] style classes), '\\' escapes. A pattern
 * without a '/' (other than a trailing one) matches a name at any depth; a
 * leading '/' or a '/' inside anchors it at SOURCE's root; "**" + "/" as a
 * prefix floats it again. A trailing '/' is accepted and means the same as
 * without it, because every match covers the name and everything below it:
 * "a" matches "a" and "a/x/y". "a/" + "**" matches only what is strictly
 * below "a".
 *
 * Subjects are relative paths without a leading '/', compared byte for byte
 * (no UTF-8 mode: invalid UTF-8 in names is fine; '?' and bracket
 * expressions treat a UTF-8 sequence as one character).
 */
#ifndef SANDYFS_GLOB_H
#define SANDYFS_GLOB_H

#include <stdbool.h>
#include <stddef.h>

enum {
	/*
	 * The set matches canonical names (canon.h): the literal text of each
	 * glob is case-folded, components that canonical names can never
	 * have (a trailing '.' or ' ', a ':') are rejected, and every literal
	 * component also matches its possible 8.3 short names ("VSCODE~1"
	 * for ".vscode"), so no spelling of a stricter name slips past.
	 */
	SFS_GLOB_CANONICAL = 1u << 0,
	/* Only exact paths, anchored at the root (overlay targets). */
	SFS_GLOB_EXACT = 1u << 1,
};

/*
 * sfs_glob_check: 0 when GLOB is valid under FLAGS; otherwise -EINVAL and
 * *ERR (malloc'ed, lower-case, no trailing period) says why, for
 * example "unterminated bracket expression". -ENOMEM on allocation failure.
 */
int sfs_glob_check(const char *glob, unsigned flags, char **err);

/* sfs_glob_regex: the PCRE2 source one glob compiles to (tests, `rules`). */
int sfs_glob_regex(const char *glob, unsigned flags, char **regex, char **err);

struct sfs_globset;

/*
 * sfs_globset_new: compiles N globs into one combined regex (JIT when
 * available). Which glob matched is recovered through (*MARK:i), so a match
 * returns the index of a matching glob. Among several globs matching at the
 * same position the choice depends only on the glob texts, never on their
 * order in GLOBS (ties between identical texts go to the lower index). On a
 * bad glob returns -EINVAL with *BAD its index and *ERR the reason.
 * N == 0 gives a set that matches nothing.
 */
int sfs_globset_new(const char *const *globs, size_t n, unsigned flags, struct sfs_globset **out,
		    size_t *bad, char **err);

void sfs_globset_free(struct sfs_globset *gs);

/*
 * sfs_globset_match: the index of a glob that matches SUBJECT (LEN bytes)
 * or a prefix of it ending at a component boundary; the leftmost such
 * prefix wins. *END (when not NULL) is where the matched name ends in
 * SUBJECT (LEN for a match of the whole subject). Returns -ENOENT when
 * nothing matches and another negative errno when matching failed (out of
 * memory, resource limit): callers must then fail closed.
 * Thread-safe; allocates only on a thread's first call.
 */
int sfs_globset_match(const struct sfs_globset *gs, const char *subject, size_t len, size_t *end);

/*
 * sfs_globset_match_prefix: 1 when some string S exists such that
 * SUBJECT + S matches the set (PCRE2 hard partial matching), 0 when not,
 * negative errno on failure. With SUBJECT = "dir/" this answers "could a
 * matching path exist below dir".
 */
int sfs_globset_match_prefix(const struct sfs_globset *gs, const char *subject, size_t len);

/* The combined regex source (the first chunk when the set was split). */
const char *sfs_globset_source(const struct sfs_globset *gs);

#endif
