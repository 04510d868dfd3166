/*
 * test_canon: the canonical form of names (fusefs/canon.c):
 * case and Unicode folding, NFC, HFS+ ignorables, NTFS trailing dots,
 * spaces and streams, git's 8.3 short names, invalid UTF-8, and bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/canon.h"
#include "tap.h"

static char out[4096];

static const char *canon(const char *s)
{
	ssize_t n = sfs_canon_component(s, strlen(s), out, sizeof(out));

	return n < 0 ? "(error)" : out;
}

static const char *canon_path(const char *s)
{
	ssize_t n = sfs_canon_path(s, strlen(s), out, sizeof(out));

	return n < 0 ? "(error)" : out;
}

/* Printable form of S for failure messages. */
static const char *show(const char *s)
{
	static char buf[4][512];
	static int k;
	char *b = buf[k++ % 4];
	size_t o = 0;

	for (; *s && o + 5 < sizeof(buf[0]); s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f)
			b[o++] = (char)c;
		else
			o += (size_t)snprintf(b + o, sizeof(buf[0]) - o, "\\x%02x", c);
	}
	b[o] = '\0';
	return b;
}

static void expect(const char *in, const char *want, const char *what)
{
	const char *got = canon(in);

	if (!ok(strcmp(got, want) == 0, "%s: '%s' -> '%s'", what, show(in), show(want)))
		printf("#   got '%s'\n", show(got));
}

static void expect_path(const char *in, const char *want, const char *what)
{
	const char *got = canon_path(in);

	if (!ok(strcmp(got, want) == 0, "%s: '%s' -> '%s'", what, show(in), show(want)))
		printf("#   got '%s'\n", show(got));
}

/* UTF-8 encoding of code point C into B (NUL-terminated). */
static void utf8(uint32_t c, char *b)
{
	if (c < 0x80) {
		b[0] = (char)c;
		b[1] = 0;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
		b[2] = 0;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		b[3] = 0;
	} else {
		b[0] = (char)(0xf0 | (c >> 18));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		b[4] = 0;
	}
}

static void test_case(void)
{
	expect(".GIT", ".git", "ASCII case");
	expect(".Envrc", ".envrc", "ASCII case");
	expect(".VSCode", ".vscode", "ASCII case");
	expect("Makefile", "makefile", "ASCII case");
	expect("already-lower", "already-lower", "lower case unchanged");
	expect("\xe2\x84\xaa", "k", "U+212A KELVIN SIGN folds to k");
	expect("\xc5\xbf", "s", "U+017F LONG S folds to s");
	expect(".gi\xc5\xa3", ".gi\xc5\xa3", "U+0163 is not t");
	expect(".g\xc4\xb1t", ".git", "U+0131 DOTLESS I upper-cases to I (NTFS)");
	expect(".G\xc4\xb0T", ".git", "U+0130 lower-cases to i");
	expect("\xe2\x84\xaa\xc5\xbf", "ks", "both in one name");
	expect(".ba\xc5\xbfhrc", ".bashrc", "long s inside a name");
	expect("\xc3\x89t\xc3\xa9", "\xc3\xa9t\xc3\xa9", "U+00C9 folds to U+00E9");
	expect("STRA\xc3\x9f"
	       "E",
	       "strasse", "sharp s folds to ss");
	expect("\xef\xbc\xa1", "\xef\xbd\x81", "fullwidth A folds to fullwidth a, not ASCII");
}

static void test_nfc(void)
{
	expect("e\xcc\x81", "\xc3\xa9", "e + U+0301 composes to U+00E9");
	expect("E\xcc\x81", "\xc3\xa9", "E + U+0301 folds and composes");
	expect("\xc3\xa9", "\xc3\xa9", "precomposed stays");
	expect("A\xcc\x88rger", "\xc3\xa4rger", "NFD umlaut composes");
	expect("\xe2\x84\xab", "\xc3\xa5", "U+212B ANGSTROM SIGN is a with ring");
}

static void test_ignorables(void)
{
	static const uint32_t hfs[] = {0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b,
				       0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c,
				       0x206d, 0x206e, 0x206f, 0xfeff};
	const char *name = ".git";

	for (size_t i = 0; i < sizeof(hfs) / sizeof(hfs[0]); i++) {
		int bad = 0;

		for (size_t pos = 0; pos <= strlen(name); pos++) {
			char in[64], ig[8];

			utf8(hfs[i], ig);
			snprintf(in, sizeof(in), "%.*s%s%s", (int)pos, name, ig, name + pos);
			if (strcmp(canon(in), ".git") != 0) {
				printf("#   '%s' -> '%s'\n", show(in), show(out));
				bad++;
			}
		}
		ok(bad == 0, "HFS ignorable U+%04X dropped at every position of '.git'",
		   (unsigned)hfs[i]);
	}
	expect(".g\xe2\x80\x8c\xe2\x80\x8dit\xef\xbb\xbf", ".git", "several ignorables at once");
	expect(".gi\xc2\xadt", ".git", "U+00AD SOFT HYPHEN (default ignorable) dropped");
	expect(".git\xe2\x80\x8b", ".git", "U+200B ZERO WIDTH SPACE dropped");
}

static void test_ntfs(void)
{
	expect(".git.", ".git", "trailing dot");
	expect(".git ", ".git", "trailing space");
	expect(".git. . ..", ".git", "trailing dots and spaces");
	expect(".git::$INDEX_ALLOCATION", ".git", "::$INDEX_ALLOCATION stream");
	expect(".git:stream", ".git", ":stream suffix");
	expect(".git. :x:$DATA", ".git", "dots, spaces, then a stream");
	expect(".envrc:$DATA", ".envrc", "stream on another name");
	expect("a:b", "a", "any colon starts a stream");
	expect(". git", ". git", "inner space kept");
	expect("..", "..", "'..' kept");
	expect(".", ".", "'.' kept");
	expect("...", "...", "all dots kept");
	expect(":x", ":x", "nothing before the stream: kept");
	expect(" ", " ", "single space kept");
}

static void test_short_names(void)
{
	expect("GIT~1", ".git", "GIT~1");
	expect("git~1", ".git", "git~1");
	expect("Git~2", ".git", "GIT~2 (git accepts only ~1; stricter)");
	expect("GIT~10", ".git", "GIT~10");
	expect("GIT~1.", ".git", "GIT~1 with trailing dot");
	expect("GIT~1::$DATA", ".git", "GIT~1 with stream");
	expect("GIT~0", "git~0", "~0 is no short name");
	expect("GIT~1X", "git~1x", "GIT~1X is another name");
	expect("GIT~", "git~", "no number");
	expect("GITMOD~1", ".gitmodules", "GITMOD~1");
	expect("GITMOD~4", ".gitmodules", "GITMOD~4");
	expect("GITMOD~9", ".gitmodules", "GITMOD~9 (git: 1-4; stricter)");
	expect("GI7EBA~1", ".gitmodules", "GI7EBA~1 (hashed)");
	expect("gi7eba~9", ".gitmodules", "gi7eba~9");
	expect("GI7EB~12", ".gitmodules", "GI7EB~12 (shorter prefix, longer number)");
	expect("GI7EBA~1 .", ".gitmodules", "hashed with trailing space and dot");
	expect("GI7EBA~10", ".git", "an unknown hashed form may be .git's own");
	expect("GI12AB~3", ".git", "any giXXXX~N hashed form is taken as .git");
	expect("GI12A~3", "gi12a~3", "hashed forms have four hex digits");
	expect("GITATT~1", ".gitattributes", "GITATT~1");
	expect("GI7D29~1", ".gitattributes", "GI7D29~1 (hashed)");
	expect("GI7D29~1:x", ".gitattributes", "GI7D29~1 with stream");
	expect("GI7D2~99", ".gitattributes", "GI7D2~99");
	expect("GIXXXX~1", "gixxxx~1", "other hashes are other names");
	expect("VSCODE~1", "vscode~1", "other short names stay (matched by the globs)");
}

static void test_invalid_utf8(void)
{
	expect("\xff.GIT", "\xff.git", "invalid byte kept, ASCII still folded");
	expect("\xc3", "\xc3", "truncated sequence kept");
	expect("a\xe2\x80", "a\xe2\x80", "truncated 3-byte sequence kept");
	expect("\xc0\xaf", "\xc0\xaf", "overlong encoding kept as bytes");
	expect("\xed\xa0\x80x", "\xed\xa0\x80x", "encoded surrogate kept as bytes");
	expect("\xff\xc3\x89", "\xff\xc3\xa9", "valid text after an invalid byte still folds");
	expect("\xc3\x89\xff\xe2\x84\xaa",
	       "\xc3\xa9\xff"
	       "k",
	       "invalid byte between valid ones");
	expect(".git\xff", ".git\xff", "invalid byte is part of the name");
	expect("\xc3\xe2\x80\x8c\x81", "\xc3\xa1",
	       "bytes joined by a dropped ignorable are folded too (fixed point)");
	expect("\xe2\x80\xe2\x80\x8c\x8c.git", ".git",
	       "an ignorable formed by joining is dropped too");
	/* 20 soft hyphens nested between invalid bytes: each round of
	 * folding drops one and joins the next (found by fuzz_canon). */
	char nested[64], *p = nested;
	for (int i = 0; i < 20; i++)
		*p++ = '\xc2';
	for (int i = 0; i < 20; i++)
		*p++ = '\xad';
	strcpy(p, ".git");
	expect(nested, ".git", "twenty nested soft hyphens all go");
}

static void test_paths(void)
{
	expect_path("", "", "empty path");
	expect_path("a/B/C", "a/b/c", "components folded");
	expect_path("a//b", "a/b", "empty component dropped");
	expect_path("/x/", "x", "leading and trailing slash dropped");
	expect_path("a\\.GIT\\config", "a/.git/config", "backslash separates (Windows tools)");
	expect_path("x/GIT~1./hooks", "x/.git/hooks", "short name in the middle");
	expect_path("src/.VSCODE./tasks.json::$DATA", "src/.vscode/tasks.json",
		    "each component canonical");
	expect_path("a/../b", "a/../b", "dot-dot kept for the caller to reject");
}

static void test_bounds(void)
{
	char small[4];
	char *big, *o;
	size_t n = 3000, cap;
	ssize_t r;
	int bad = 0;

	ok(sfs_canon_component("abcdef", 6, small, sizeof(small)) == -ENOSPC,
	   "too small a buffer gives -ENOSPC");
	ok(sfs_canon_component("abc", 3, small, sizeof(small)) == 3 && !strcmp(small, "abc"),
	   "an exact fit works");
	ok(sfs_canon_path("GIT~1", 5, small, sizeof(small)) == -ENOSPC,
	   "a short name that grows is bounded too");
	ok(sfs_canon_component("x", 1, small, 0) == -ENOSPC, "zero capacity");

	/* SFS_CANON_CAP holds the worst expansions: U+0390 folds to 3 code points. */
	static const char *const grow[] = {"\xce\x90", "\xef\xac\x83", "\xe1\xbe\x80",
					   "GIT~1/",   "GI7EBA~1/",    "\xc3\x9f"};
	for (size_t g = 0; g < sizeof(grow) / sizeof(grow[0]); g++) {
		size_t gl = strlen(grow[g]), len = 0;

		big = malloc(n * gl + 1);
		for (size_t i = 0; i < n; i++, len += gl)
			memcpy(big + len, grow[g], gl);
		big[len] = '\0';
		cap = SFS_CANON_CAP(len);
		o = malloc(cap);
		r = sfs_canon_path(big, len, o, cap);
		if (r < 0 || (size_t)r >= cap) {
			bad++;
			printf("#   '%s' x %zu: %zd for capacity %zu\n", show(grow[g]), n, r, cap);
		}
		free(big);
		free(o);
	}
	ok(bad == 0, "SFS_CANON_CAP suffices for the worst growing inputs");
}

/* xorshift: a fixed seed, so failures reproduce. */
static uint64_t rng = 0x5eed5eed12345678ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_properties(void)
{
	static const char *const pieces[] = {
		"a",
		"B",
		".",
		" ",
		":",
		"~",
		"1",
		"g",
		"I",
		"T",
		"\xc3\x89",
		"e\xcc\x81",
		"\xe2\x84\xaa",
		"\xc5\xbf",
		"\xc4\xb1",
		"\xc4\xb0",
		"\xe2\x80\x8c",
		"\xef\xbb\xbf",
		"\xff",
		"\xc3",
		"\xce\x90",
		"\xc3\x9f",
		"/",
		"\\",
	};
	int not_idem = 0, crash_free = 1;

	for (int i = 0; i < 20000; i++) {
		char in[256], once[2048], twice[2048];
		size_t len = 0;
		int k = (int)(next_rand() % 12);
		ssize_t a, b;

		for (int j = 0; j < k; j++) {
			const char *p = pieces[next_rand() % (sizeof(pieces) / sizeof(pieces[0]))];

			memcpy(in + len, p, strlen(p));
			len += strlen(p);
		}
		in[len] = '\0';
		a = sfs_canon_path(in, len, once, sizeof(once));
		if (a < 0) {
			crash_free = 0;
			continue;
		}
		b = sfs_canon_path(once, (size_t)a, twice, sizeof(twice));
		if (b != a || memcmp(once, twice, (size_t)a) != 0) {
			if (not_idem++ < 5)
				printf("#   '%s' -> '%s' -> '%s'\n", show(in), show(once),
				       show(twice));
		}
	}
	ok(crash_free, "20000 random names canonicalise within SFS_CANON_CAP");
	ok(not_idem == 0, "the canonical form is idempotent (%d counterexamples)", not_idem);
}

static void test_fold(void)
{
	char b[64];

	ok(sfs_canon_fold("A.", 2, b, sizeof(b)) == 2 && !strcmp(b, "a."),
	   "fold keeps trailing dots (glob text)");
	ok(sfs_canon_fold("*.PEM", 5, b, sizeof(b)) == 5 && !strcmp(b, "*.pem"),
	   "fold keeps glob characters");
	ok(sfs_canon_fold("GIT~1", 5, b, sizeof(b)) == 5 && !strcmp(b, "git~1"),
	   "fold does not map short names");
}

static const char *canon_posix(const char *s)
{
	ssize_t n = sfs_canon_path_posix(s, strlen(s), out, sizeof(out));

	return n < 0 ? "(error)" : out;
}

/* The POSIX spelling: folded, but ':', '\\', trailing dots and 8.3 names
 * are the name's own, as Linux and macOS keep them. */
static void test_posix(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"env/zz:x.PTH", "env/zz:x.pth"},
		{"tasks/a\\b.rake", "tasks/a\\b.rake"},
		{".Envrc. ", ".envrc. "},
		{"GIT~1/config", "git~1/config"},
		{"a//b/", "a/b"},
		{".\xe2\x80\x8cgit/HEAD", ".git/head"},
		{"\xe2\x84\xaa" "ey", "key"},
		{"x::$DATA", "x::$data"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(!strcmp(canon_posix(cases[i].in), cases[i].want), "posix '%s' -> '%s'",
		   show(cases[i].in), cases[i].want);
	ok(!strcmp(canon_path("env/zz:x.pth"), "env/zz"),
	   "while the NTFS reading cuts the same name at its colon");
	char small[4];
	ok(sfs_canon_path_posix("abcdef", 6, small, sizeof(small)) == -ENOSPC,
	   "posix: -ENOSPC when the output does not fit");
}

int main(void)
{
	test_case();
	test_nfc();
	test_ignorables();
	test_ntfs();
	test_short_names();
	test_invalid_utf8();
	test_paths();
	test_bounds();
	test_properties();
	test_fold();
	test_posix();
	return tap_done();
}
