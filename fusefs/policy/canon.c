/*
 * canon: canonical form of path names for matching the stricter classes.
 * See canon.h for the steps; this file owns the Unicode work
 * (through utf8proc) and the NTFS rules taken from git's is_ntfs_dotgit.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "canon.h"

/* Code points HFS+ ignores in names, as git's is_hfs_dotgit lists them. */
static bool hfs_ignorable(utf8proc_int32_t c)
{
	return (c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x206a && c <= 0x206f) || c == 0xfeff;
}

/*
 * NTFS compares names by upper-casing them, so U+0131 DOTLESS I equals 'I'
 * there although Unicode case folding keeps it apart; U+0130 lower-cases
 * to 'i'. Map every such character to its ASCII letter before folding.
 */
static utf8proc_int32_t ascii_case_alias(utf8proc_int32_t c)
{
	utf8proc_int32_t u, l;

	if (c < 0x80)
		return c;
	u = utf8proc_toupper(c);
	if (u >= 0 && u < 0x80)
		return u >= 'A' && u <= 'Z' ? u + ('a' - 'A') : u;
	l = utf8proc_tolower(c);
	if (l >= 0 && l < 0x80)
		return l;
	return c;
}

struct sink {
	char *out;
	size_t cap;
	size_t len;
	bool overflow;
};

static void sink_put(struct sink *k, const void *p, size_t n)
{
	if (k->overflow || n >= k->cap - k->len) {
		k->overflow = true;
		return;
	}
	memcpy(k->out + k->len, p, n);
	k->len += n;
}

#define FOLD_BUF  512
#define FOLD_OPTS (UTF8PROC_DECOMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE)

/* Composes (NFC) the decomposed code points in BUF and appends them. */
static void flush_codepoints(struct sink *k, utf8proc_int32_t *buf, size_t n)
{
	utf8proc_ssize_t bytes;
	uint8_t enc[4];

	if (n == 0)
		return;
	bytes = utf8proc_reencode(buf, (utf8proc_ssize_t)n, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
	if (bytes >= 0) {
		sink_put(k, buf, (size_t)bytes);
		return;
	}
	/* Not expected for valid code points; keep them uncomposed. */
	for (size_t i = 0; i < n; i++)
		sink_put(k, enc, (size_t)utf8proc_encode_char(buf[i], enc));
}

/*
 * Folds S into K. Returns true when the result may not be a fixed point:
 * an ignorable was dropped next to invalid bytes, so bytes that were
 * apart (and invalid) may now form a valid sequence.
 */
static bool fold_into(struct sink *k, const unsigned char *s, size_t len)
{
	utf8proc_int32_t buf[FOLD_BUF];
	size_t n = 0, i = 0;
	bool dropped = false, raw = false;

	while (i < len) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t step, r;
		int bc = 0;

		if (s[i] < 0x80) {
			cp = s[i];
			step = 1;
		} else {
			step = utf8proc_iterate(s + i, (utf8proc_ssize_t)(len - i), &cp);
			if (step < 1) {
				/* Invalid UTF-8: the byte stands for itself. */
				flush_codepoints(k, buf, n);
				n = 0;
				sink_put(k, s + i, 1);
				raw = true;
				i++;
				continue;
			}
		}
		i += (size_t)step;
		if (hfs_ignorable(cp)) {
			dropped = true;
			continue;
		}
		cp = ascii_case_alias(cp);
		r = utf8proc_decompose_char(cp, buf + n, (utf8proc_ssize_t)(FOLD_BUF - n),
					    FOLD_OPTS, &bc);
		if (r > (utf8proc_ssize_t)(FOLD_BUF - n)) {
			/* Names this long cannot be protected literals; a
			 * composition split at the flush does not matter. */
			flush_codepoints(k, buf, n);
			n = 0;
			r = utf8proc_decompose_char(cp, buf, FOLD_BUF, FOLD_OPTS, &bc);
		}
		if (r < 0 || r > (utf8proc_ssize_t)(FOLD_BUF - n)) {
			uint8_t enc[4];

			flush_codepoints(k, buf, n);
			n = 0;
			sink_put(k, enc, (size_t)utf8proc_encode_char(cp, enc));
			continue;
		}
		dropped |= r == 0; /* a default-ignorable code point */
		n += (size_t)r;
	}
	flush_codepoints(k, buf, n);
	return dropped && raw;
}

static void fold(struct sink *k, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < len && u[i] < 0x80; i++)
		;
	if (i < len) {
		size_t start = k->len;
		bool again = fold_into(k, u, len);

		/* Fold the result again until it is stable: each round that changes
		 * something joins invalid bytes into a valid sequence, so there are
		 * at most LEN rounds (a chain of soft hyphens between invalid
		 * bytes, C2 C2 C2 AD AD AD, loses one per round: a fixed cap of
		 * 16 left the fuzzer a name that changed when canonicalised
		 * twice). */
		for (size_t round = 0; again && round <= len && !k->overflow; round++) {
			size_t n = k->len - start;
			char *copy = malloc(n ? n : 1);

			if (!copy) {
				k->overflow = true;
				return;
			}
			memcpy(copy, k->out + start, n);
			k->len = start;
			again = fold_into(k, (const unsigned char *)copy, n);
			if (k->len - start == n && memcmp(copy, k->out + start, n) == 0)
				again = false;
			free(copy);
		}
		return;
	}
	if (k->overflow || len >= k->cap - k->len) {
		k->overflow = true;
		return;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = u[i];

		k->out[k->len + i] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
	}
	k->len += len;
}

ssize_t sfs_canon_fold(const char *s, size_t len, char *out, size_t cap)
{
	struct sink k = {out, cap, 0, cap == 0};

	fold(&k, s, len);
	if (k.overflow)
		return -ENOSPC;
	out[k.len] = '\0';
	return (ssize_t)k.len;
}

/* "[1-9][0-9]*" exactly. */
static bool is_tilde_number(const char *s, size_t n)
{
	if (n == 0 || s[0] < '1' || s[0] > '9')
		return false;
	for (size_t i = 1; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * git's fall-back 8.3 form: exactly eight characters, a prefix of the
 * hashed short name, '~', a digit 1-9, then digits.
 */
static bool is_hashed_short_name(const char *s, size_t n, const char *prefix)
{
	bool saw_tilde = false;

	if (n != 8)
		return false;
	for (size_t i = 0; i < 8; i++) {
		if (saw_tilde) {
			if (s[i] < '0' || s[i] > '9')
				return false;
		} else if (s[i] == '~') {
			if (++i >= 8 || s[i] < '1' || s[i] > '9')
				return false;
			saw_tilde = true;
		} else if (i >= 6 || s[i] != prefix[i]) {
			return false;
		}
	}
	return saw_tilde;
}

static bool is_prefixed_short_name(const char *s, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);

	return n > p + 1 && memcmp(s, prefix, p) == 0 && s[p] == '~' &&
	       is_tilde_number(s + p + 1, n - p - 1);
}

/* S is folded and trimmed; returns the long name it aliases, or NULL. */
static const char *git_short_name(const char *s, size_t n)
{
	if (!memchr(s, '~', n))
		return NULL;
	if (is_prefixed_short_name(s, n, "git"))
		return ".git";
	if (is_prefixed_short_name(s, n, "gitmod") || is_hashed_short_name(s, n, "gi7eba"))
		return ".gitmodules";
	if (is_prefixed_short_name(s, n, "gitatt") || is_hashed_short_name(s, n, "gi7d29"))
		return ".gitattributes";
	/* Any other hashed "gi" form may be .git's own (stricter than git). */
	if (n > 7 && s[0] == 'g' && s[1] == 'i' && strspn(s + 2, "0123456789abcdef") >= 4 &&
	    s[6] == '~' && is_tilde_number(s + 7, n - 7))
		return ".git";
	return NULL;
}

/* Canonicalises the component just folded at K->out[start..K->len). */
static void finish_component(struct sink *k, size_t start)
{
	char *s = k->out + start;
	size_t n = k->len - start;
	const char *colon, *alias;

	if (k->overflow)
		return;
	colon = memchr(s, ':', n);
	if (colon)
		n = (size_t)(colon - s);
	while (n > 0 && (s[n - 1] == '.' || s[n - 1] == ' '))
		n--;
	if (n == 0)
		return; /* ".", "..", "...", ":x": nothing a host would alias */
	alias = git_short_name(s, n);
	k->len = start;
	if (alias)
		sink_put(k, alias, strlen(alias));
	else
		k->len += n;
}

ssize_t sfs_canon_component(const char *name, size_t len, char *out, size_t cap)
{
	struct sink k = {out, cap, 0, cap == 0};

	fold(&k, name, len);
	finish_component(&k, 0);
	if (k.overflow)
		return -ENOSPC;
	out[k.len] = '\0';
	return (ssize_t)k.len;
}

/* Both readings of a path: NTFS (components also split at '\\' and
 * finished: streams cut, dots and spaces stripped, 8.3 names mapped) or
 * POSIX (folded only, '/' the only separator). */
static ssize_t canon_path_as(const char *path, size_t len, char *out, size_t cap, bool ntfs)
{
	struct sink k = {out, cap, 0, cap == 0};
	size_t i = 0;

	while (i < len) {
		size_t j = i, start;

		while (j < len && path[j] != '/' && (!ntfs || path[j] != '\\'))
			j++;
		if (j > i) {
			size_t before = k.len;

			if (k.len > 0)
				sink_put(&k, "/", 1);
			start = k.len;
			fold(&k, path + i, j - i);
			if (ntfs)
				finish_component(&k, start);
			/* Only ignorables: as empty as "a//b", so dropped the same way. */
			if (!k.overflow && k.len == start)
				k.len = before;
		}
		i = j + 1;
	}
	if (k.overflow)
		return -ENOSPC;
	out[k.len] = '\0';
	return (ssize_t)k.len;
}

ssize_t sfs_canon_path(const char *path, size_t len, char *out, size_t cap)
{
	return canon_path_as(path, len, out, cap, true);
}

ssize_t sfs_canon_path_posix(const char *path, size_t len, char *out, size_t cap)
{
	return canon_path_as(path, len, out, cap, false);
}
