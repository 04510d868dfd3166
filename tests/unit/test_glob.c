/*
 * test_glob: gitignore-style globs compiled to PCRE2 (fusefs/glob.c):
 * matching semantics, bad globs and their reasons, canonical sets with 8.3
 * aliases, combined sets (which glob matched, independent of order),
 * partial matching for "could something below match", size limits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/glob.h"
#include "tap.h"

/* Does GLOB (alone) match SUBJECT? -1 when the glob does not compile. */
static int glob_matches(const char *glob, unsigned flags, const char *subject)
{
	struct sfs_globset *gs;
	const char *g[] = {glob};
	char *reason = NULL;
	size_t bad;
	int r;

	if (sfs_globset_new(g, 1, flags, &gs, &bad, &reason) < 0) {
		printf("#   '%s' does not compile: %s\n", glob, reason ? reason : "?");
		free(reason);
		return -1;
	}
	r = sfs_globset_match(gs, subject, strlen(subject), NULL);
	sfs_globset_free(gs);
	return r == 0 ? 1 : r == -ENOENT ? 0 : -1;
}

struct mcase {
	const char *glob;
	const char *subject;
	int match;
};

static const struct mcase cases[] = {
	/* '*' within a component, at any depth when there is no '/' */
	{"*.c", "a.c", 1},
	{"*.c", "x/y/a.c", 1},
	{"*.c", "a.c/inside", 1}, /* the name and everything below it */
	{"*.c", "a.cc", 0},
	{"*.c", "a/c", 0},
	{"*.c", ".c", 1},
	{"*", "anything", 1},
	/* a trailing slash: the same as without */
	{"src/", "src", 1},
	{"src/", "src/a/b", 1},
	{"src/", "lib/src/a", 1},
	{"src/", "xsrc", 0},
	{"src/", "srcx/a", 0},
	/* anchoring: leading '/' or a '/' inside */
	{"/src", "src/a", 1},
	{"/src", "a/src", 0},
	{"a/b", "a/b", 1},
	{"a/b", "a/b/c", 1},
	{"a/b", "x/a/b", 0},
	{"a/b", "a/bc", 0},
	/* ** */
	{"**/b", "b", 1},
	{"**/b", "x/y/b", 1},
	{"**/b", "x/yb", 0},
	{"a/**", "a", 0},
	{"a/**", "a/x", 1},
	{"a/**", "a/x/y", 1},
	{"a/**", "ab/x", 0},
	{"a/**/b", "a/b", 1},
	{"a/**/b", "a/x/y/b", 1},
	{"a/**/b", "a/xb", 0},
	{"a/**/**/b", "a/x/b", 1},
	{"**", "a", 1},
	{"**", "a/b", 1},
	{"foo**bar", "fooxbar", 1},
	{"foo**bar", "foo/bar", 0},
	{"**/.cargo/config", "x/y/.cargo/config", 1},
	{"**/.cargo/config", ".cargo/config", 1},
	/* ? and brackets */
	{"?", "a", 1},
	{"?", "ab", 0},
	{"?", "\xc3\xa9", 1},
	{"?", "\xe2\x84\xaa", 1},
	{"?", "\xff", 1},
	{"?x", "/x", 0},
	{"[abc]x", "bx", 1},
	{"[abc]x", "dx", 0},
	{"[!abc]x", "dx", 1},
	{"[!abc]x", "ax", 0},
	{"[^abc]x", "dx", 1},
	{"[!abc]x", "\xc3\xa9x", 1},
	{"[a-c]", "b", 1},
	{"[a-c]", "d", 0},
	{"[]]", "]", 1},
	{"[!]]", "a", 1},
	{"[!]]", "]", 0},
	{"[[:digit:]]x", "5x", 1},
	{"[[:digit:]]x", "ax", 0},
	{"[.-0]", "/", 0},
	/* escapes and regex metacharacters are literal */
	{"\\*", "*", 1},
	{"\\*", "a", 0},
	{"a+b", "a+b", 1},
	{"a+b", "aab", 0},
	{"(x)|y", "(x)|y", 1},
	{"(x)|y", "y", 0},
	{"a.b", "axb", 0},
	{"$x^", "$x^", 1},
	/* newlines are ordinary name bytes */
	{"*.c", "a\n.c", 1},
	{"*.c", "a.c\n", 0},
	{"a", "a\n", 0},
	/* case is exact without canonical mode */
	{"Makefile", "makefile", 0},
	{"*.TS", "x.ts", 0},
};

static void test_semantics(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mcase *c = &cases[i];
		int r = glob_matches(c->glob, 0, c->subject);

		ok(r == c->match, "'%s' %s '%s'", c->glob, c->match ? "matches" : "does not match",
		   c->subject[0] == '\n' || strchr(c->subject, '\n') ? "(name with newline)"
								     : c->subject);
	}
}

struct bad {
	const char *glob;
	unsigned flags;
	const char *reason; /* substring of the reason */
};

static const struct bad bads[] = {
	{"", 0, "empty pattern"},
	{"/", 0, "root"},
	{"a//b", 0, "empty path component"},
	{"a/../b", 0, "'.' and '..'"},
	{"./a", 0, "'.' and '..'"},
	{"[abc", 0, "unterminated bracket expression"},
	{"[", 0, "unterminated bracket expression"},
	{"[!", 0, "unterminated bracket expression"},
	{"a\\", 0, "trailing backslash"},
	{"[z-a]", 0, "out of order"},
	{"[[:nope:]]", 0, "unknown character class"},
	{"[[:alpha:", 0, "unterminated character class"},
	{"[\xc3\xa9]", 0, "non-ASCII"},
	{"foo.", SFS_GLOB_CANONICAL, "ends in '.'"},
	{"foo /x", SFS_GLOB_CANONICAL, "ends in ' '"},
	{"a:b", SFS_GLOB_CANONICAL, "contains ':'"},
	{"*.x", SFS_GLOB_CANONICAL | SFS_GLOB_EXACT, "exact path"},
	{"a/**", SFS_GLOB_CANONICAL | SFS_GLOB_EXACT, "exact path"},
	{"**/a", SFS_GLOB_CANONICAL | SFS_GLOB_EXACT, "exact path"},
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char *reason = NULL;
		int r = sfs_glob_check(bads[i].glob, bads[i].flags, &reason);

		if (!ok(r == -EINVAL && reason && strstr(reason, bads[i].reason),
			"bad glob '%s' is rejected: %s", bads[i].glob, bads[i].reason))
			printf("#   got %d '%s'\n", r, reason ? reason : "(none)");
		free(reason);
	}
	ok(sfs_glob_check("foo.", 0, &(char *){NULL}) == 0,
	   "a trailing dot is fine for write globs (real names)");
	ok(sfs_glob_check("a:b", 0, &(char *){NULL}) == 0, "so is a colon");
}

/* Canonical sets: folded literals and 8.3 short names of literal components. */
static void test_canonical(void)
{
	static const struct {
		const char *glob, *subject;
		int match;
	} c[] = {
		{"Makefile", "makefile", 1},
		{"CLAUDE.md", "claude.md", 1},
		{".vscode", "vscode~1", 1},
		{".vscode", "vscod~12", 1},
		{".vscode", "vs1a2b~1", 1},
		{".vscode", "x/vscode~3/tasks.json", 1},
		{".vscode", "vscode1", 0},
		{".vscode", "vscode~", 0},
		{".vscode", "vscodx~1", 0},
		{".github/workflows", "github~1/workfl~1/ci.yml", 1},
		{".github/workflows", ".github/workfl~1", 1},
		{".github/workflows", "github~1/workflows", 1},
		{"*.pem", "server~1.pem", 1},
		{"*.pem", "server~1.txt", 0},
		{".env.*", "env~1.loc", 1},
		{".env.*", "env~12", 1},
		{"pre-commit-config.yaml", "pre-co~1.yam", 1},
		{".pre-commit-config.yaml", "pre-co~1.yam", 1},
		{".pre-commit-config.yaml", "pre-co~1.yml", 0},
		{"package.json", "packag~1.jso", 1},
		{"build.gradle*", "buildg~1.kts", 1},
		{"CMakeLists.txt", "cmakel~1.txt", 1},
		{"x.a-b-c", "x~1.a-b", 1},
		{".pre-commit.c-d", "pre-co~1.c-d", 1},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ok(glob_matches(c[i].glob, SFS_GLOB_CANONICAL, c[i].subject) == c[i].match,
		   "canonical '%s' %s '%s'", c[i].glob, c[i].match ? "matches" : "does not match",
		   c[i].subject);
	ok(glob_matches(".vscode", 0, "vscode~1") == 0, "no short-name aliases for write globs");
}

static int set_match_text(const char *const *globs, size_t n, const char *subject,
			  const char **text, size_t *end)
{
	struct sfs_globset *gs;
	char *reason = NULL;
	size_t bad;
	int r;

	*text = NULL;
	if (sfs_globset_new(globs, n, SFS_GLOB_CANONICAL, &gs, &bad, &reason) < 0) {
		free(reason);
		return -EINVAL;
	}
	r = sfs_globset_match(gs, subject, strlen(subject), end);
	if (r >= 0)
		*text = globs[r];
	sfs_globset_free(gs);
	return r;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_sets(void)
{
	const char *two[] = {"b", "a"};
	const char *text;
	size_t end = 99;

	ok(set_match_text(two, 2, "a/b", &text, &end) == 1 && !strcmp(text, "a") && end == 1,
	   "the leftmost match wins and reports where the name ends");
	ok(set_match_text(two, 2, "x/b", &text, &end) == 0 && end == 3,
	   "a match at the end reports the subject length");
	ok(set_match_text(two, 2, "c", &text, NULL) == -ENOENT, "no match gives -ENOENT");
	ok(set_match_text(two, 0, "a", &text, NULL) == -ENOENT, "an empty set matches nothing");

	/* Whatever the order, the same glob text answers. */
	static const char *const base[] = {".env",     ".env.*", "*.pem",   ".vscode/",
					   ".envrc",   "*.env",	 ".e*",	    "src/**/*.key",
					   "**/.e*",   "env~1",	 "x/y/z",   ".github/workflows/",
					   ".github/", "*",	 "**/deep/"};
	static const char *const subjects[] = {".env",	    ".env.local",  "a.pem",
					       ".vscode/x", ".envrc",	   "x.env",
					       ".e",	    "src/a/b.key", "q/.eq",
					       "env~1",	    "x/y/z/w",	   ".github/workflows/ci",
					       ".github/x", "plain",	   "a/deep/b",
					       "vscode~1",  "envrc~1.x"};
	const size_t nb = sizeof(base) / sizeof(base[0]),
		     ns = sizeof(subjects) / sizeof(subjects[0]);
	const char *ref[sizeof(subjects) / sizeof(subjects[0])];
	int differ = 0;

	for (size_t s = 0; s < ns; s++)
		set_match_text(base, nb, subjects[s], &ref[s], NULL);
	for (int perm = 0; perm < 200; perm++) {
		const char *g[sizeof(base) / sizeof(base[0])];

		memcpy(g, base, sizeof(g));
		for (size_t i = nb - 1; i > 0; i--) {
			size_t j = next_rand() % (i + 1);
			const char *t = g[i];

			g[i] = g[j];
			g[j] = t;
		}
		for (size_t s = 0; s < ns; s++) {
			set_match_text(g, nb, subjects[s], &text, NULL);
			if ((text == NULL) != (ref[s] == NULL) || (text && strcmp(text, ref[s]))) {
				if (differ++ < 5)
					printf("#   perm %d: '%s' matched by '%s', first by '%s'\n",
					       perm, subjects[s], text ? text : "-",
					       ref[s] ? ref[s] : "-");
			}
		}
	}
	ok(differ == 0, "200 permutations of a set: every subject matched by the same glob");
}

static int prefix(const char *glob, const char *subject)
{
	struct sfs_globset *gs;
	const char *g[] = {glob};
	char *reason = NULL;
	size_t bad;
	int r;

	if (sfs_globset_new(g, 1, 0, &gs, &bad, &reason) < 0) {
		free(reason);
		return -1;
	}
	r = sfs_globset_match_prefix(gs, subject, strlen(subject));
	sfs_globset_free(gs);
	return r;
}

static void test_partial(void)
{
	static const struct {
		const char *glob, *dir;
		int below;
	} c[] = {
		{"src/**", "src/", 1},	   {"src/**", "lib/", 0},   {"src/**", "src/a/b/", 1},
		{"*.c", "any/", 1},	   {"*.c", "a/b/c/", 1},    {"docs/", "docs/", 1},
		{"docs/", "doc/", 1}, /* floating: doc/docs could exist */
		{"/docs/", "doc/", 0},	   {"/docs/", "docs/", 1},  {"a/b/c/**", "a/", 1},
		{"a/b/c/**", "a/b/", 1},   {"a/b/c/**", "a/x/", 0}, {"a/b/c/**", "a/b/c/", 1},
		{"a/**/z.txt", "a/q/", 1}, {"a/**/z.txt", "b/", 0}, {"tsconfig*.json", "x/", 1},
		{"/top.txt", "x/", 0},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ok(prefix(c[i].glob, c[i].dir) == c[i].below, "'%s' %s match below '%s'", c[i].glob,
		   c[i].below ? "can" : "cannot", c[i].dir);
}

static void test_sizes(void)
{
	enum { N = 3000, DEEP = 300 };
	char **g = calloc(N, sizeof(*g));
	struct sfs_globset *gs = NULL;
	char *reason = NULL;
	size_t bad;
	int wrong = 0;

	for (int i = 0; i < N; i++) {
		g[i] = malloc(64);
		snprintf(g[i], 64, "dir%d/file-%d-*.txt", i % 37, i);
	}
	if (ok(sfs_globset_new((const char *const *)g, N, SFS_GLOB_CANONICAL, &gs, &bad, &reason) ==
		       0,
	       "a set of %d globs compiles (split when PCRE2 needs it)", N)) {
		for (int i = 0; i < N; i++) {
			char s[64];
			int r;

			snprintf(s, sizeof(s), "dir%d/file-%d-x.txt", i % 37, i);
			r = sfs_globset_match(gs, s, strlen(s), NULL);
			if (r != i && wrong++ < 5)
				printf("#   '%s' matched %d, expected %d\n", s, r, i);
		}
		ok(wrong == 0, "each of the %d globs matches its own subject", N);
	}
	sfs_globset_free(gs);
	for (int i = 0; i < N; i++)
		free(g[i]);
	free(g);

	/* "a", "aa", "aaa", ...: a trie deeper than PCRE2's group nesting limit. */
	g = calloc(DEEP, sizeof(*g));
	for (int i = 0; i < DEEP; i++) {
		g[i] = malloc(DEEP + 2);
		memset(g[i], 'a', (size_t)i + 1);
		g[i][i + 1] = '\0';
	}
	gs = NULL;
	wrong = 0;
	if (ok(sfs_globset_new((const char *const *)g, DEEP, 0, &gs, &bad, &reason) == 0,
	       "%d globs sharing prefixes compile", DEEP)) {
		for (int i = 0; i < DEEP; i++)
			if (sfs_globset_match(gs, g[i], strlen(g[i]), NULL) != i)
				wrong++;
		ok(wrong == 0, "each nested glob matches exactly its own name");
	}
	sfs_globset_free(gs);
	for (int i = 0; i < DEEP; i++)
		free(g[i]);
	free(g);
	free(reason);
}

static void test_regex_text(void)
{
	char *re = NULL, *reason = NULL;

	ok(sfs_glob_regex("a.b", 0, &re, &reason) == 0 && re && !strstr(re, "a.b"),
	   "a '.' in a glob is escaped in the regex");
	free(re);
	ok(sfs_glob_regex("(*MARK:x)", 0, &re, &reason) == 0 && re && !strstr(re, "(*MARK"),
	   "regex syntax in a glob cannot reach PCRE2");
	free(re);
}

int main(void)
{
	test_semantics();
	test_bad();
	test_canonical();
	test_sets();
	test_partial();
	test_sizes();
	test_regex_text();
	return tap_done();
}
