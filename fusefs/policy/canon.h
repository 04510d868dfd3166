/*
 * canon: the canonical form of path names.
 *
 * Protected, hidden, immutable and overlay names are matched on this form so
 * that spellings a host filesystem treats as the same name cannot slip past:
 * case-insensitive hosts (macOS, Windows), HFS+ ignorable code points, NTFS
 * trailing dots/spaces, ":stream" suffixes and 8.3 short names, and Unicode
 * characters that fold to ASCII (U+212A KELVIN SIGN, U+017F LONG S, U+0131
 * DOTLESS I).
 *
 * The canonical form is only ever compared, never used to access a file.
 * Invalid UTF-8 is kept byte for byte (no replacement, no error). Pure code:
 * no I/O, no global state, no allocation for names shorter than a few
 * hundred bytes.
 */
#ifndef SANDYFS_CANON_H
#define SANDYFS_CANON_H

#include <stddef.h>
#include <sys/types.h>

/*
 * An output buffer of this size always suffices for an input of IN bytes:
 * case folding and NFC grow UTF-8 by at most a factor of three, and an 8.3
 * short name grows by at most a few bytes.
 */
#define SFS_CANON_CAP(in) (4 * (size_t)(in) + 16)

/*
 * sfs_canon_component: the canonical form of one path component NAME of
 * LEN bytes, written NUL-terminated to OUT (CAP bytes).
 *
 *   1. drop HFS+ ignorable code points (U+200C-U+200F, U+202A-U+202E,
 *      U+206A-U+206F, U+FEFF) and the other Unicode default-ignorables;
 *   2. Unicode full case folding, then NFC; a character whose upper case
 *      is ASCII becomes that ASCII letter in lower case (NTFS upper-cases);
 *   3. cut at the first ':' (NTFS alternate data stream);
 *   4. strip trailing '.' and ' ' (NTFS);
 *   5. map the 8.3 short names git knows to their long names: "git~N" to
 *      ".git", "gitmod~N" and "gi7eba~N" to ".gitmodules", "gitatt~N" and
 *      "gi7d29~N" to ".gitattributes" (git's is_ntfs_dotgit logic, with any
 *      N where git accepts only 1..4), and any other hashed form "giXXXX~N"
 *      (four hex digits) to ".git", whose hash git does not pin down.
 *
 * "." and "..", and names that steps 3 and 4 would leave empty, are kept as
 * they are. Returns the length written, or -ENOSPC when CAP is too small.
 */
ssize_t sfs_canon_component(const char *name, size_t len, char *out, size_t cap);

/*
 * sfs_canon_path: the canonical form of a relative path: each component
 * canonicalised, joined with '/'. Both '/' and '\\' separate components (a
 * backslash is a directory separator for Windows tools) and empty
 * components (also those made only of ignorable code points) are dropped,
 * so "a//b\\.GIT" becomes "a/b/.git". Returns the
 * length written, or -ENOSPC.
 */
ssize_t sfs_canon_path(const char *path, size_t len, char *out, size_t cap);

/*
 * sfs_canon_path_posix: the same path as a POSIX host spells it, folded
 * but not read as Windows would: only '/' separates components, and ':',
 * trailing dots and spaces and 8.3 names are kept as they are. On Linux
 * "zz:x.pth" is a .pth file, which the NTFS reading above turns into "zz",
 * and "tasks/a\\b.rake" a .rake file in tasks/, which it moves one level
 * down: a name is judged in both spellings, the stricter winning
 * (policy.c). Returns the length or -ENOSPC.
 */
ssize_t sfs_canon_path_posix(const char *path, size_t len, char *out, size_t cap);

/*
 * sfs_canon_fold: steps 1 and 2 only, over the whole string (no component
 * handling). Used on the literal text of globs of the stricter classes so
 * that they compare with canonical names. Returns the length or -ENOSPC.
 */
ssize_t sfs_canon_fold(const char *s, size_t len, char *out, size_t cap);

#endif
