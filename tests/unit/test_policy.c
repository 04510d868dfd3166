/*
 * test_policy: the pure decision function (fusefs/policy.c) with the
 * shipped rule files and with small synthetic ones.
 *
 *  - every shipped protected and hidden name, at the
 *    root, at depth 1 and at depth >= 4, present or absent (the decision
 *    never looks), in case variants, with HFS+ ignorables inserted, with
 *    NTFS trailing dots/spaces and streams, as 8.3 short names, with
 *    U+212A/U+017F/U+0131 spellings, and everything below it: never
 *    writable, always its strict class. The write globs of each project
 *    type make its sources writable, and nothing under a protected name.
 *  - shuffling the order of rule files and of the entries in
 *    them (fixed-seed PRNG) never changes a verdict, nor the deciding rule.
 *  - precedence, errno, mkdir/rmdir, overlays, symlink targets, owned,
 *    private and generated paths.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "config.h"
#include "policy/policy.h"
#include "policy/symchain.h"
#include "policy/rules.h"
#include "tap.h"
#include "common/strv.h"

/* Every shipped project type (rules/NAME.json but base.json), read in main. */
static const char **all_types;
static size_t NTYPES;

/* The types the shipped rules must have: a file gone missing is a failure. */
static const char *const expected_types[] = {
	"c",	  "clojure", "dart",  "dotnet",	   "elixir", "erlang", "go",
	"gradle", "haskell", "java",  "julia",	   "latex",  "lua",    "nix",
	"node",	  "ocaml",   "perl",  "php",	   "python", "r",      "ruby",
	"rust",	  "scala",   "swift", "terraform", "web",    "zig",
};

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct sfs_policy *load_types(const char *const *types, size_t n)
{
	struct sfs_loader *l = sfs_loader_new(SANDY_SOURCE_RULES_DIR, SANDY_SOURCE_OVERLAYS_DIR);
	struct sfs_policy *p = NULL;
	char *err = NULL;
	int r = sfs_loader_add_type(l, "base", "test", &err);

	for (size_t i = 0; r == 0 && i < n; i++)
		r = sfs_loader_add_type(l, types[i], "test", &err);
	if (r == 0)
		r = sfs_loader_finish(l, &p, &err);
	if (r < 0)
		printf("# cannot load rules: %s\n", err ? err : "?");
	free(err);
	sfs_loader_free(l);
	return p;
}

/* A policy from JSON texts, each named "t<i>.json" unless NAMES is given. */
static struct sfs_policy *load_json(const char *const *texts, const char *const *names, size_t n,
				    enum sfs_trust trust, char **errp)
{
	struct sfs_loader *l = sfs_loader_new(SANDY_SOURCE_RULES_DIR, SANDY_SOURCE_OVERLAYS_DIR);
	struct sfs_policy *p = NULL;
	char *err = NULL, name[32];
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++) {
		snprintf(name, sizeof(name), "t%zu.json", i);
		r = sfs_loader_add_buffer(l, names ? names[i] : name, texts[i], strlen(texts[i]),
					  trust, "test", &err);
	}
	if (r == 0)
		r = sfs_loader_finish(l, &p, &err);
	if (r < 0 && !errp)
		printf("# cannot load rules: %s\n", err ? err : "?");
	if (errp)
		*errp = err;
	else
		free(err);
	sfs_loader_free(l);
	return p;
}

static const char *show(const char *s)
{
	static char buf[4][600];
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

static bool strict_class(enum sfs_class c)
{
	return c == SFS_CLASS_IMMUTABLE || c == SFS_CLASS_HIDDEN || c == SFS_CLASS_PROTECTED ||
	       c == SFS_CLASS_OVERLAY;
}

/* ---- samples and spellings ---------------------------------------------- */

#define MAXC 8
struct name {
	char comp[MAXC][128];
	int n;
	bool anchored;
};

/*
 * A concrete name the glob matches: '*' becomes STAR, a leading "**" + "/"
 * is dropped (floating), a trailing '/' is dropped. False for brackets.
 */
static bool sample_of(const char *glob, const char *star, struct name *nm)
{
	char buf[512], *s = buf, *tok, *save = NULL;
	bool floating = false;
	size_t len;

	memset(nm, 0, sizeof(*nm));
	if (strpbrk(glob, "[\\?"))
		return false;
	snprintf(buf, sizeof(buf), "%s", glob);
	if (!strncmp(s, "**/", 3)) {
		floating = true;
		s += 3;
	}
	if (*s == '/') {
		nm->anchored = true;
		s++;
	}
	len = strlen(s);
	if (len && s[len - 1] == '/')
		s[--len] = '\0';
	if (strchr(s, '/') && !floating)
		nm->anchored = true;
	for (tok = strtok_r(s, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		char *o = nm->comp[nm->n];

		if (nm->n == MAXC || !strcmp(tok, "**"))
			return false;
		for (; *tok; tok++) {
			if (*tok == '*')
				o += sprintf(o, "%s", star);
			else
				*o++ = *tok;
		}
		*o = '\0';
		/* "lefthook." is no spelling of lefthook.*: NTFS calls it "lefthook" */
		if (!nm->comp[nm->n][0] || o[-1] == '.' || o[-1] == ' ')
			return false;
		nm->n++;
	}
	return nm->n > 0;
}

static void join(const struct name *nm, const char *prefix, const char *suffix, char *out,
		 size_t cap)
{
	size_t o = (size_t)snprintf(out, cap, "%s", prefix);

	for (int i = 0; i < nm->n && o < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? "/" : "", nm->comp[i]);
	if (o < cap)
		snprintf(out + o, cap - o, "%s", suffix);
}

/* The N-th 8.3 short name Windows would give NAME (ASCII), or the hashed form. */
static void short_name(const char *name, int num, bool hashed, char *out)
{
	const char *s = name, *dot, *end;
	char base[128], ext[4] = "", tail[16];
	size_t bl = 0, el = 0, keep;

	while (*s == '.')
		s++;
	dot = strrchr(s, '.');
	end = dot ? dot : s + strlen(s);
	for (const char *p = s; p < end && bl < sizeof(base) - 1; p++)
		if (*p != '.' && *p != ' ')
			base[bl++] = (char)toupper(strchr("+,;=[]", *p) ? '_' : *p);
	if (dot)
		for (const char *p = dot + 1; *p && el < 3; p++)
			if (*p != ' ')
				ext[el++] = (char)toupper(*p);
	ext[el] = '\0';
	snprintf(tail, sizeof(tail), "%s~%d", hashed ? "1A2B" : "", num);
	keep = hashed ? 2 : 8 - strlen(tail);
	if (keep > 6)
		keep = 6;
	if (keep > bl)
		keep = bl;
	sprintf(out, "%.*s%s%s%s", (int)keep, base, tail, el ? "." : "", ext);
}

struct spelling {
	char path[1024];
	const char *how;
};

struct spellings {
	struct spelling *v;
	size_t n, cap;
};

static void add_spelling(struct spellings *s, const struct name *nm, const char *prefix,
			 const char *how)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
	}
	join(nm, prefix, "", s->v[s->n].path, sizeof(s->v[0].path));
	s->v[s->n].how = how;
	s->n++;
}

/* Copies SRC into a component, truncating (no test name is that long). */
static void set_comp(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n > sizeof(((struct name *)0)->comp[0]) - 1)
		n = sizeof(((struct name *)0)->comp[0]) - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void utf8(uint32_t c, char *b)
{
	if (c < 0x800) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
		b[2] = 0;
	} else {
		b[0] = (char)(0xe0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		b[3] = 0;
	}
}

static const uint32_t hfs_ignorable[] = {0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b,
					 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c,
					 0x206d, 0x206e, 0x206f, 0xfeff};

/* Every spelling of NM under PREFIX that a host may treat as the same name. */
static void spellings_of(const struct name *nm, const char *prefix, struct spellings *s)
{
	static const char *const ntfs[] = {
		".", " ", "..", ". .", "::$DATA", ":$DATA", ":x", ". :zone", "::$INDEX_ALLOCATION"};
	struct name v;
	char tmp[256];

	add_spelling(s, nm, prefix, "as written");
	v = *nm;
	for (int c = 0; c < v.n; c++)
		for (char *p = v.comp[c]; *p; p++)
			*p = (char)toupper(*p);
	add_spelling(s, &v, prefix, "upper case");
	v = *nm;
	for (int c = 0; c < v.n; c++)
		for (char *p = v.comp[c]; *p; p++)
			*p = (char)((p - v.comp[c]) % 2 ? toupper(*p) : tolower(*p));
	add_spelling(s, &v, prefix, "alternating case");
	for (int k = 0; k < 3; k++) {
		v = *nm;
		for (int c = 0; c < v.n; c++)
			for (char *p = v.comp[c]; *p; p++)
				*p = (char)(next_rand() % 2 ? toupper(*p) : tolower(*p));
		add_spelling(s, &v, prefix, "random case");
	}
	/* HFS+ ignorables at every position of every component */
	for (size_t h = 0; h < sizeof(hfs_ignorable) / sizeof(hfs_ignorable[0]); h++) {
		char ig[4];

		utf8(hfs_ignorable[h], ig);
		for (int c = 0; c < nm->n; c++)
			for (size_t pos = 0; pos <= strlen(nm->comp[c]); pos++) {
				v = *nm;
				snprintf(v.comp[c], sizeof(v.comp[c]), "%.*s%s%s", (int)pos,
					 nm->comp[c], ig, nm->comp[c] + pos);
				add_spelling(s, &v, prefix, "HFS+ ignorable inserted");
			}
	}
	/* NTFS trailing dots, spaces and streams on each component */
	for (size_t t = 0; t < sizeof(ntfs) / sizeof(ntfs[0]); t++)
		for (int c = 0; c < nm->n; c++) {
			v = *nm;
			snprintf(tmp, sizeof(tmp), "%s%s", nm->comp[c], ntfs[t]);
			set_comp(v.comp[c], tmp);
			add_spelling(s, &v, prefix, "NTFS trailing dots/spaces/stream");
		}
	/* 8.3 short names, one component at a time */
	for (int c = 0; c < nm->n; c++) {
		static const struct {
			int num;
			bool hashed;
		} forms[] = {{1, false},  {2, false},	{4, false}, {9, false},
			     {10, false}, {123, false}, {1, true},  {7, true}};

		for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
			v = *nm;
			short_name(nm->comp[c], forms[f].num, forms[f].hashed, v.comp[c]);
			add_spelling(s, &v, prefix, "8.3 short name");
		}
	}
	/* characters that fold (or upper-case) to ASCII */
	static const struct {
		char ascii;
		uint32_t cp;
		const char *how;
	} uni[] = {{'k', 0x212a, "U+212A KELVIN SIGN for k"},
		   {'s', 0x17f, "U+017F LONG S for s"},
		   {'i', 0x131, "U+0131 DOTLESS I for i"},
		   {'i', 0x130, "U+0130 for i"}};
	for (size_t u = 0; u < sizeof(uni) / sizeof(uni[0]); u++) {
		char enc[4];
		bool any = false;

		utf8(uni[u].cp, enc);
		v = *nm;
		for (int c = 0; c < v.n; c++) {
			char *o = tmp;

			for (const char *p = nm->comp[c]; *p; p++) {
				if (tolower(*p) == uni[u].ascii) {
					o += sprintf(o, "%s", enc);
					any = true;
				} else {
					*o++ = *p;
				}
			}
			*o = '\0';
			set_comp(v.comp[c], tmp);
		}
		if (any)
			add_spelling(s, &v, prefix, uni[u].how);
	}
	/* a combination */
	v = *nm;
	for (int c = 0; c < v.n; c++) {
		char ig[4];

		utf8(0x200d, ig);
		for (char *p = v.comp[c]; *p; p++)
			*p = (char)toupper(*p);
		snprintf(tmp, sizeof(tmp), "%s%s. ", ig, v.comp[c]);
		set_comp(v.comp[c], tmp);
	}
	add_spelling(s, &v, prefix, "upper case + ignorable + trailing dot and space");
}

/*
 * Checks every spelling of a strict name, and below it: class strict, no
 * mutation allowed, hidden ones invisible. Returns the number of failures.
 */
static int check_spellings(const struct sfs_policy *p, const struct spellings *s,
			   enum sfs_class want, int tier, size_t *checked)
{
	static const char *const below[] = {"", "/child.txt", "/a/b/c/src/x.ts"};
	int bad = 0;

	for (size_t i = 0; i < s->n; i++)
		for (size_t b = 0; b < sizeof(below) / sizeof(below[0]); b++) {
			char path[1200];
			struct sfs_decision d, c, m;

			snprintf(path, sizeof(path), "%s%s", s->v[i].path, below[b]);
			sfs_policy_decide(p, path, SFS_OP_LOOKUP, &d);
			sfs_policy_decide(p, path, SFS_OP_CREATE, &c);
			sfs_policy_decide(p, path, SFS_OP_MKDIR, &m);
			(*checked)++;
			if (strict_class(d.cls) && !c.allowed && !m.allowed && c.err &&
			    (want != SFS_CLASS_HIDDEN || d.cls != SFS_CLASS_HIDDEN ||
			     (!d.allowed && d.err == ENOENT)) &&
			    (want != SFS_CLASS_HIDDEN || d.cls != SFS_CLASS_PROTECTED))
				continue;
			/* An 8.3 short name may also spell a private directory
			 * (NODE~123: .node-version or node_modules): then what
			 * is written lands in the store, never in SOURCE. */
			if (d.cls == SFS_CLASS_PRIVATE && strstr(s->v[i].how, "8.3"))
				continue;
			/* With every type loaded at the root, one type's private
			 * directory can hold another's protected name (Elixir's
			 * deps/ and Julia's deps/build.jl; Gradle's .gradle/ is
			 * also a '*.gradle'): private wins, and what is written
			 * there lands in the store. */
			if (d.cls == SFS_CLASS_PRIVATE && d.rule &&
			    d.rule->cls == SFS_CLASS_PRIVATE)
				continue;
			/* And one type's generated tree can waive another's tier
			 * 1 or 2 name (Perl's generated /Makefile, c's Makefile). */
			if (tier > 0 && d.cls == SFS_CLASS_WRITABLE && d.rule && d.rule->generated)
				continue;
			if (bad++ < 3)
				printf("#   %s: '%s' -> %s (create %s, mkdir %s)\n", s->v[i].how,
				       show(path), sfs_class_name(d.cls),
				       c.allowed ? "allowed" : "denied",
				       m.allowed ? "allowed" : "denied");
		}
	return bad;
}

/* ---- the table of every shipped strict name ------------------------------ */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void test_strict_names(const struct sfs_policy *p)
{
	static const char *const prefixes[] = {"", "d1/", "a/b/c/d/", "src/x/y/z/w/"};
	size_t total = 0, groups = 0;

	for (size_t i = 0; i < sfs_policy_rule_count(p); i++) {
		const struct sfs_rule *r = sfs_policy_rule(p, i);
		static const char *const stars[] = {"x", "", "Sample.Name"};

		if (r->cls != SFS_CLASS_PROTECTED && r->cls != SFS_CLASS_HIDDEN)
			continue;
		for (size_t pi = 0; pi < sizeof(prefixes) / sizeof(prefixes[0]); pi++) {
			struct spellings s = {0};
			size_t checked = 0;
			int bad = 0, samples = 0;

			for (size_t st = 0; st < sizeof(stars) / sizeof(stars[0]); st++) {
				struct name nm;

				if (!sample_of(r->pattern, stars[st], &nm))
					continue;
				if (nm.anchored && pi > 0)
					continue;
				samples++;
				spellings_of(&nm, prefixes[pi], &s);
			}
			if (!samples) {
				if (pi == 0)
					ok(false, "%s '%s' (%s:%d): no sample path (brackets?)",
					   r->key, r->pattern, base_name(r->file), r->line);
				continue;
			}
			bad = check_spellings(p, &s, r->cls, r->tier, &checked);
			groups++;
			total += checked;
			ok(bad == 0,
			   "%s '%s' (%s:%d) at depth %zu: %zu spellings and paths below, "
			   "none writable",
			   r->key, r->pattern, base_name(r->file), r->line,
			   (size_t)(pi == 0   ? 0
				    : pi == 1 ? 1
				    : pi == 2 ? 4
					      : 5),
			   checked);
			free(s.v);
		}
	}
	printf("# %zu groups, %zu paths checked\n", groups, total);
}

/*
 * A colon or a backslash is part of a name on Linux: "zz:x.pth" is a .pth
 * file there, though Windows would read the stream "x.pth" of "zz", and
 * "tasks/a\\b.rake" a .rake file in tasks/. Every rule with a star, its
 * star spelled so, keeps its class; so do the names an attacker used.
 */
static void test_posix_spellings(const struct sfs_policy *p)
{
	static const char *const stars[] = {"zz:x", "zz\\x", "a:b\\c", ":"};
	static const char *const prefixes[] = {"", "d1/", "a/b:c/d\\e/f/"};
	static const char *const attacks[] = {
		"env/lib/python3.11/site-packages/zz:x.pth",
		"env/lib/python3.11/site-packages/zz\\x.pth",
		"engine/lib/tasks/zz:x.rake",
		"engine/lib/tasks/zz\\x.rake",
		"x:y.sbt",
		"x:y.cmake",
		"w:x.code-workspace",
		"x:y.mk",
		"x:y.csproj",
		"sub/x:y.csproj",
		"a:b/.envrc",
		".vscode:x/../.vscode/tasks.json",
	};
	size_t checked = 0;
	int bad = 0;

	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		struct sfs_decision d, c;

		sfs_policy_decide(p, attacks[i], SFS_OP_LOOKUP, &d);
		sfs_policy_decide(p, attacks[i], SFS_OP_CREATE, &c);
		ok(strict_class(d.cls) && !c.allowed && c.err == EROFS, "'%s': %s, create refused",
		   show(attacks[i]), sfs_class_name(d.cls));
	}
	for (size_t i = 0; i < sfs_policy_rule_count(p); i++) {
		const struct sfs_rule *r = sfs_policy_rule(p, i);

		if ((r->cls != SFS_CLASS_PROTECTED && r->cls != SFS_CLASS_HIDDEN) ||
		    !strchr(r->pattern, '*'))
			continue;
		for (size_t st = 0; st < sizeof(stars) / sizeof(stars[0]); st++) {
			struct name nm;

			if (!sample_of(r->pattern, stars[st], &nm))
				continue;
			for (size_t pi = 0; pi < sizeof(prefixes) / sizeof(prefixes[0]); pi++) {
				char path[1200];
				struct sfs_decision d, c;

				if (nm.anchored && pi > 0)
					continue;
				join(&nm, prefixes[pi], "", path, sizeof(path));
				sfs_policy_decide(p, path, SFS_OP_LOOKUP, &d);
				sfs_policy_decide(p, path, SFS_OP_CREATE, &c);
				checked++;
				if (strict_class(d.cls) && !c.allowed)
					continue;
				/* One type's private directory may hold another's
				 * name: what is written there lands in the store. */
				if (d.cls == SFS_CLASS_PRIVATE)
					continue;
				if (r->tier > 0 && d.cls == SFS_CLASS_WRITABLE && d.rule &&
				    d.rule->generated)
					continue;
				if (bad++ < 5)
					printf("#   '%s' (%s '%s') -> %s\n", show(path), r->key,
					       r->pattern, sfs_class_name(d.cls));
			}
		}
	}
	ok(bad == 0 && checked > 100,
	   "every starred protected or hidden rule, its star spelled with ':' and '\\': "
	   "%zu paths, none writable",
	   checked);
}

static void test_git(const struct sfs_policy *p)
{
	static const char *const prefixes[] = {"", "d1/", "a/b/c/d/", "src/x/y/z/w/"};
	static const char *const extra[] = {"GIT~1",
					    "git~2",
					    ".git::$INDEX_ALLOCATION",
					    ".Git. ",
					    ".g\xe2\x80\x8cit",
					    "\xef\xbb\xbf.GIT",
					    ".g\xc4\xb1t",
					    "gi~1x",
					    "sub\\.git"};

	for (size_t pi = 0; pi < sizeof(prefixes) / sizeof(prefixes[0]); pi++) {
		struct spellings s = {0};
		struct name nm = {.n = 1};
		size_t checked = 0;
		int bad, immut = 0;

		strcpy(nm.comp[0], ".git");
		spellings_of(&nm, prefixes[pi], &s);
		for (size_t e = 0; e < sizeof(extra) / sizeof(extra[0]); e++) {
			strcpy(nm.comp[0], extra[e]);
			if (strcmp(extra[e], "gi~1x"))
				add_spelling(&s, &nm, prefixes[pi], "git spelling");
		}
		bad = check_spellings(p, &s, SFS_CLASS_IMMUTABLE, 0, &checked);
		for (size_t i = 0; i < s.n; i++) {
			char path[1100];
			struct sfs_decision d;

			snprintf(path, sizeof(path), "%s/hooks/pre-commit", s.v[i].path);
			sfs_policy_decide(p, path, SFS_OP_LOOKUP, &d);
			if (d.cls != SFS_CLASS_IMMUTABLE && immut++ < 3)
				printf("#   %s: '%s' -> %s\n", s.v[i].how, show(path),
				       sfs_class_name(d.cls));
		}
		ok(bad == 0 && immut == 0,
		   ".git at depth %zu: %zu spellings, all immutable (and what is below)",
		   (size_t)(pi == 0   ? 0
			    : pi == 1 ? 1
			    : pi == 2 ? 4
				      : 5),
		   checked);
		free(s.v);
	}
}

/* Sources of each type: writable with base + that type. */
static void test_type_sources(void)
{
	static const struct {
		const char *type;
		const char *paths[8];
	} t[] = {
		{"node",
		 {"src/index.ts", "src/components/App.tsx", "test/app.test.js", "lib/util.mjs",
		  "node_modules/react/index.js", "dist/bundle.js", "docs/api.md", NULL}},
		{"python",
		 {"src/pkg/mod.py", "tests/test_x.py", "pkg/sub/mod.py", "docs/index.rst",
		  ".venv/lib/python3.11/site-packages/x/__init__.py", "build/lib/x.py", NULL}},
		{"rust",
		 {"src/main.rs", "src/bin/tool.rs", "tests/it.rs", "benches/b.rs",
		  "target/debug/app", "crates/x/src/lib.rs", "Cargo.lock", NULL}},
		{"go",
		 {"main.go", "cmd/app/main.go", "pkg/x/x_test.go", "internal/y/y.go", "go.sum",
		  "testdata/in.txt", NULL}},
		{"c",
		 {"src/main.c", "include/x.h", "lib/a.cpp", "build/main.o", "tests/t.c",
		  "sub/dir/file.hpp", NULL}},
		{"java",
		 {"src/main/java/App.java", "src/test/java/AppTest.java",
		  "app/src/main/kotlin/X.kt", "target/classes/App.class", "build/libs/app.jar",
		  NULL}},
		{"ruby",
		 {"lib/x.rb", "spec/x_spec.rb", "app/models/user.rb", "test/t.rb", "Gemfile.lock",
		  "app/views/x.html.erb", NULL}},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *types[] = {t[i].type};
		struct sfs_policy *p = load_types(types, 1);
		int bad = 0, n = 0;

		if (!p) {
			ok(false, "load base + %s", t[i].type);
			continue;
		}
		for (int k = 0; t[i].paths[k]; k++, n++) {
			struct sfs_decision d;

			sfs_policy_decide(p, t[i].paths[k], SFS_OP_CREATE, &d);
			if (((d.cls != SFS_CLASS_WRITABLE && d.cls != SFS_CLASS_PRIVATE) ||
			     !d.allowed) &&
			    bad++ < 3)
				printf("#   '%s' -> %s\n", t[i].paths[k], sfs_class_name(d.cls));
		}
		ok(bad == 0, "%s: its %d sample sources are writable (or private)", t[i].type, n);
		sfs_policy_free(p);
	}
}

/*
 * For each type: a path matching each write glob, put under every strict
 * name of the policy (and, for floating names, a strict name put under each
 * writable path): never writable. The one exception, by design: a tier 1
 * or 2 name inside a generated tree (build/Makefile); tier 0 names stay
 * protected there, and that is checked too.
 */
static void test_nothing_writable_below_strict(void)
{
	for (size_t ti = 0; ti < NTYPES; ti++) {
		const char *types[] = {all_types[ti]};
		struct sfs_policy *p = load_types(types, 1);
		size_t checked = 0;
		int bad = 0;

		if (!p) {
			ok(false, "load base + %s", all_types[ti]);
			continue;
		}
		for (size_t w = 0; w < sfs_policy_rule_count(p); w++) {
			const struct sfs_rule *wr = sfs_policy_rule(p, w);
			struct name wn;
			char wpath[512];

			if (wr->cls != SFS_CLASS_WRITABLE || !sample_of(wr->pattern, "x", &wn))
				continue;
			join(&wn, "", "", wpath, sizeof(wpath));
			for (size_t s = 0; s < sfs_policy_rule_count(p); s++) {
				const struct sfs_rule *sr = sfs_policy_rule(p, s);
				struct name sn;
				char spath[512], path[1100];
				struct sfs_decision d;

				if ((sr->cls != SFS_CLASS_PROTECTED &&
				     sr->cls != SFS_CLASS_HIDDEN) ||
				    !sample_of(sr->pattern, "x", &sn))
					continue;
				join(&sn, "", "", spath, sizeof(spath));
				snprintf(path, sizeof(path), "%s/%s", spath, wpath);
				sfs_policy_decide(p, path, SFS_OP_CREATE, &d);
				checked++;
				/* A private directory below a strict name
				 * (.vscode/node_modules) lives in the store:
				 * nothing of it reaches SOURCE. */
				if (d.allowed && d.cls != SFS_CLASS_PRIVATE && bad++ < 3)
					printf("#   '%s' (write '%s' under %s '%s') is writable\n",
					       path, wr->pattern, sr->key, sr->pattern);
				if (sn.anchored)
					continue;
				snprintf(path, sizeof(path), "%s/%s", wpath, spath);
				sfs_policy_decide(p, path, SFS_OP_CREATE, &d);
				checked++;
				bool waived = wr->generated && sr->cls == SFS_CLASS_PROTECTED &&
					      sr->tier > 0;
				if (d.allowed != waived && d.cls != SFS_CLASS_PRIVATE && bad++ < 3)
					printf("#   '%s' (%s '%s' under %s '%s') is %s\n", path,
					       sr->key, sr->pattern, wr->key, wr->pattern,
					       d.allowed ? "writable" : "not writable");
			}
		}
		ok(bad == 0 && checked > 100,
		   "%s: %zu write-glob paths under (and over) strict names, none writable "
		   "(but tier 1 and 2 names in generated trees)",
		   all_types[ti], checked);
		sfs_policy_free(p);
	}
}

/* ---- order never matters ------------------------------------------------- */

struct verdict {
	enum sfs_class cls;
	bool allowed;
	int err;
	char rule[600];
};

static void verdict_of(const struct sfs_policy *p, const char *path, enum sfs_op op,
		       struct verdict *v)
{
	struct sfs_decision d;

	sfs_policy_decide(p, path, op, &d);
	v->cls = d.cls;
	v->allowed = d.allowed;
	v->err = d.err;
	snprintf(v->rule, sizeof(v->rule), "%s|%s|%s", d.rule_file, d.rule_text, d.why);
}

static void shuffle_array(cJSON *arr)
{
	int n = cJSON_GetArraySize(arr);
	cJSON **items;

	if (n < 2)
		return;
	items = calloc((size_t)n, sizeof(*items));
	for (int i = n - 1; i >= 0; i--)
		items[i] = cJSON_DetachItemFromArray(arr, i);
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(next_rand() % (uint64_t)(i + 1));
		cJSON *t = items[i];

		items[i] = items[j];
		items[j] = t;
	}
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, items[i]);
	free(items);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return NULL;
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Paths worth deciding: samples of every rule, below them, and others. */
static char **corpus_of(const struct sfs_policy *p, size_t *n)
{
	static const char *const extra[] = {
		"",	      "README.md",     "src/a.ts",   "src/.env",    ".env",
		".env.local", "x/.git/config", "sub/.envrc", "GIT~1/HEAD",  "deep/a/b/c.py",
		"src/secret", "src/a.cfg",     "x.key",	     "a/b/x.key",   ".ENV",
		"VSCODE~1",   "lib/x.c",       "src/x/y",    "docs/a/b.md", "other"};
	static const char *const below[] = {"", "/c", "/q/r.ts"};
	size_t cap = 64, k = 0;
	char **v = malloc(cap * sizeof(*v));

	for (size_t i = 0; i < sfs_policy_rule_count(p); i++) {
		const struct sfs_rule *r = sfs_policy_rule(p, i);
		struct name nm;
		char path[600];

		if (!sample_of(r->pattern, "x", &nm))
			continue;
		for (size_t b = 0; b < 3; b++) {
			join(&nm, b == 2 ? "d/e/" : "", below[b], path, sizeof(path));
			if (k == cap)
				v = realloc(v, (cap *= 2) * sizeof(*v));
			v[k++] = strdup(path);
		}
	}
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		if (k == cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		v[k++] = strdup(extra[i]);
	}
	*n = k;
	return v;
}

static const enum sfs_op check_ops[] = {SFS_OP_LOOKUP, SFS_OP_CREATE, SFS_OP_MKDIR,
					SFS_OP_UNLINK, SFS_OP_RMDIR,  SFS_OP_RENAME_TO};
#define NOPS (sizeof(check_ops) / sizeof(check_ops[0]))

/*
 * Loads the files (JSON texts named NAMES) in ROUNDS random orders with
 * their arrays shuffled and compares every verdict with the first order.
 */
static void permutation_test(const char *what, char **texts, const char *const *names,
			     size_t nfiles, int rounds)
{
	const char *t0[16];
	struct sfs_policy *ref;
	struct verdict *rv;
	char **corpus;
	size_t ncorpus;
	int differ = 0, loaded = 0;

	for (size_t i = 0; i < nfiles; i++)
		t0[i] = texts[i];
	ref = load_json(t0, names, nfiles, SFS_TRUST_SHIPPED, NULL);
	if (!ok(ref != NULL, "%s: the files load", what))
		return;
	corpus = corpus_of(ref, &ncorpus);
	rv = calloc(ncorpus * NOPS, sizeof(*rv));
	for (size_t c = 0; c < ncorpus; c++)
		for (size_t o = 0; o < NOPS; o++)
			verdict_of(ref, corpus[c], check_ops[o], &rv[c * NOPS + o]);
	for (int round = 0; round < rounds; round++) {
		size_t order[16];
		char *shuffled[16];
		const char *tx[16], *nx[16];
		struct sfs_policy *p;

		for (size_t i = 0; i < nfiles; i++)
			order[i] = i;
		for (size_t i = nfiles - 1; i > 0; i--) {
			size_t j = next_rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < nfiles; i++) {
			cJSON *root = cJSON_Parse(texts[order[i]]);
			static const char *const keys[] = {"write", "protect", "hide", "overlay"};

			for (size_t k = 0; k < 4; k++) {
				cJSON *a = cJSON_GetObjectItem(root, keys[k]);

				if (a)
					shuffle_array(a);
			}
			shuffled[i] = cJSON_Print(root);
			cJSON_Delete(root);
			tx[i] = shuffled[i];
			nx[i] = names[order[i]];
		}
		p = load_json(tx, nx, nfiles, SFS_TRUST_SHIPPED, NULL);
		for (size_t i = 0; i < nfiles; i++)
			free(shuffled[i]);
		if (!p)
			continue;
		loaded++;
		for (size_t c = 0; c < ncorpus; c++)
			for (size_t o = 0; o < NOPS; o++) {
				struct verdict v, *r = &rv[c * NOPS + o];

				verdict_of(p, corpus[c], check_ops[o], &v);
				if (v.cls == r->cls && v.allowed == r->allowed && v.err == r->err &&
				    !strcmp(v.rule, r->rule))
					continue;
				if (differ++ < 5)
					printf("#   round %d, %s '%s': %s/%d (%s) vs %s/%d (%s)\n",
					       round, sfs_op_name(check_ops[o]), show(corpus[c]),
					       sfs_class_name(v.cls), v.allowed, v.rule,
					       sfs_class_name(r->cls), r->allowed, r->rule);
			}
		sfs_policy_free(p);
	}
	ok(loaded == rounds && differ == 0,
	   "%s: %d shuffles of file and entry order, %zu paths x %zu operations, same verdict "
	   "and deciding rule",
	   what, rounds, ncorpus, NOPS);
	for (size_t c = 0; c < ncorpus; c++)
		free(corpus[c]);
	free(corpus);
	free(rv);
	sfs_policy_free(ref);
}

static void test_order_shipped(void)
{
	static const char *const names[] = {"base", "node", "python", "c", "rust"};
	char *texts[5], *paths[5];
	const char *pn[5];

	for (size_t i = 0; i < 5; i++) {
		cJSON *root;
		char path[512];

		snprintf(path, sizeof(path), "%s/%s.json", SANDY_SOURCE_RULES_DIR, names[i]);
		paths[i] = strdup(path);
		pn[i] = paths[i];
		texts[i] = read_text(path);
		/* all files are given explicitly: drop "extends" */
		root = cJSON_Parse(texts[i]);
		cJSON_DeleteItemFromObject(root, "extends");
		free(texts[i]);
		texts[i] = cJSON_Print(root);
		cJSON_Delete(root);
	}
	permutation_test("shipped base+node+python+c+rust", texts, pn, 5, 20);
	for (size_t i = 0; i < 5; i++) {
		free(texts[i]);
		free(paths[i]);
	}
}

/* Rule sets built to overlap in every class, across files. */
static void test_order_synthetic(void)
{
	char *texts[] = {
		strdup("{\"write\": [\"**\", \"src/**\", \"*.cfg\", \"x.key\"],"
		       " \"protect\": [{\"path\": \"src/secret\", \"why\": \"A1\"},"
		       "  {\"path\": \"*.cfg\", \"why\": \"A2\"}, {\"path\": \"src/\", \"why\": "
		       "\"A3\", \"tier\": 1}],"
		       " \"hide\": [\"*.key\", {\"path\": \"src/secret\", \"why\": \"A4\"}]}"),
		strdup("{\"write\": [\"src/\", \"*.key\"],"
		       " \"protect\": [{\"path\": \"*.cfg\", \"why\": \"B1\"}, {\"path\": "
		       "\"*.key\", "
		       "\"why\": \"B2\"}, {\"path\": \".env\", \"why\": \"B3\"}],"
		       " \"hide\": [\".env\", \".env.*\", \"src/x\"],"
		       " \"overlay\": [{\"path\": \"src/secret\", \"file\": \"env-masked\"}]}"),
		strdup("{\"write\": [\"a/**/b\", \".env\"],"
		       " \"protect\": [{\"path\": \"src/x\", \"why\": \"C1\"}, {\"path\": \"a\", "
		       "\"why\": \"C2\"}, {\"path\": \"*.cfg\", \"why\": \"A2\"}],"
		       " \"hide\": [\"a/**/b\"],"
		       " \"overlay\": [{\"path\": \".env\", \"file\": \"env-masked\", \"why\": "
		       "\"C3\"}, {\"path\": \"x.key\", \"file\": \"env-masked\"}]}"),
	};
	const char *names[] = {"a.json", "b.json", "c.json"};

	permutation_test("synthetic overlapping rules", texts, names, 3, 60);
	for (size_t i = 0; i < 3; i++)
		free(texts[i]);
}

/* ---- precedence and verdicts --------------------------------------------- */

struct expect {
	const char *path;
	enum sfs_op op;
	enum sfs_class cls;
	bool allowed;
	int err;
	const char *why; /* substring, or NULL */
};

static void check_table(const struct sfs_policy *p, const char *what, const struct expect *e,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct sfs_decision d;

		sfs_policy_decide(p, e[i].path, e[i].op, &d);
		if (!ok(d.cls == e[i].cls && d.allowed == e[i].allowed && d.err == e[i].err &&
				(!e[i].why || strstr(d.why, e[i].why)),
			"%s: %s '%s' -> %s, %s%s", what, sfs_op_name(e[i].op), show(e[i].path),
			sfs_class_name(e[i].cls), e[i].allowed ? "allowed" : "denied",
			e[i].err == ENOENT  ? " (ENOENT)"
			: e[i].err == EROFS ? " (EROFS)"
					    : ""))
			printf("#   got %s, %s, errno %d, rule %s '%s', why '%s'\n",
			       sfs_class_name(d.cls), d.allowed ? "allowed" : "denied", d.err,
			       d.rule_file, d.rule_text, d.why);
	}
}

static void test_precedence(void)
{
	const char *json[] = {
		"{\"write\": [\"**\"],"
		" \"protect\": [{\"path\": \"a\", \"why\": \"prot-a\"}, {\"path\": \"both\", "
		"\"why\": \"prot-both\"}, {\"path\": \"p\", \"why\": \"prot-p\"},"
		"  {\"path\": \"/anch/x\", \"why\": \"prot-anch\"}],"
		" \"hide\": [\"both\", \".env\", \".env.*\", \"h/\", {\"path\": \".git\", \"why\": "
		"\"hide-git\"}],"
		" \"overlay\": [{\"path\": \".env\", \"file\": \"env-masked\", \"why\": "
		"\"ovl-env\"},"
		"  {\"path\": \"p\", \"file\": \"env-masked\", \"why\": \"ovl-p\"},"
		"  {\"path\": \"sub/.git/x\", \"file\": \"env-masked\"}]}",
	};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	const struct expect e[] = {
		{"b", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"b/c/d", SFS_OP_WRITE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"a", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "prot-a"},
		{"a/b/c", SFS_OP_WRITE, SFS_CLASS_PROTECTED, false, EROFS, "prot-a"},
		{"x/A", SFS_OP_UNLINK, SFS_CLASS_PROTECTED, false, EROFS, "prot-a"},
		{"a", SFS_OP_LOOKUP, SFS_CLASS_PROTECTED, true, 0, NULL},
		{"a", SFS_OP_READ, SFS_CLASS_PROTECTED, true, 0, NULL},
		{"both", SFS_OP_LOOKUP, SFS_CLASS_HIDDEN, false, ENOENT, NULL},
		{"both", SFS_OP_CREATE, SFS_CLASS_HIDDEN, false, ENOENT, NULL},
		{"h/x", SFS_OP_READ, SFS_CLASS_HIDDEN, false, ENOENT, NULL},
		{".env", SFS_OP_LOOKUP, SFS_CLASS_OVERLAY, true, 0, "ovl-env"},
		{".env", SFS_OP_WRITE, SFS_CLASS_OVERLAY, false, EROFS, "ovl-env"},
		{".env", SFS_OP_UNLINK, SFS_CLASS_OVERLAY, false, EROFS, NULL},
		{".ENV", SFS_OP_LOOKUP, SFS_CLASS_OVERLAY, true, 0, "ovl-env"},
		{"sub/.env", SFS_OP_LOOKUP, SFS_CLASS_HIDDEN, false, ENOENT, NULL},
		{".env.local", SFS_OP_LOOKUP, SFS_CLASS_HIDDEN, false, ENOENT, NULL},
		{".env/x", SFS_OP_LOOKUP, SFS_CLASS_HIDDEN, false, ENOENT, NULL},
		{"p", SFS_OP_LOOKUP, SFS_CLASS_OVERLAY, true, 0, "ovl-p"},
		{"p/q", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "prot-p"},
		{".git", SFS_OP_LOOKUP, SFS_CLASS_IMMUTABLE, true, 0, "git internals"},
		{"sub/.git/x", SFS_OP_LOOKUP, SFS_CLASS_IMMUTABLE, true, 0, NULL},
		{"sub/.git/x", SFS_OP_SETATTR, SFS_CLASS_IMMUTABLE, false, EROFS, NULL},
		{"anch/x", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "prot-anch"},
		{"q/anch/x", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"", SFS_OP_LOOKUP, SFS_CLASS_READONLY, true, 0, NULL},
		{"", SFS_OP_SETATTR, SFS_CLASS_READONLY, false, EROFS, NULL},
		{"", SFS_OP_RMDIR, SFS_CLASS_READONLY, false, EROFS, NULL},
	};

	if (!ok(p != NULL, "precedence rules load"))
		return;
	check_table(p, "precedence", e, sizeof(e) / sizeof(e[0]));
	sfs_policy_free(p);
}

static void test_ops(void)
{
	const char *json[] = {
		"{\"write\": [\"src/**\", \"*.ts\", \"/docs/\", \"Src2\"],"
		" \"protect\": [{\"path\": \".vscode/\", \"why\": \"vs\"}]}",
	};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	static const enum sfs_op mut[] = {SFS_OP_CREATE,      SFS_OP_MKNOD,	  SFS_OP_SYMLINK,
					  SFS_OP_LINK_TARGET, SFS_OP_LINK_SOURCE, SFS_OP_WRITE,
					  SFS_OP_TRUNCATE,    SFS_OP_SETATTR,	  SFS_OP_XATTR,
					  SFS_OP_UNLINK,      SFS_OP_RENAME_FROM, SFS_OP_RENAME_TO};
	const struct expect e[] = {
		{"src", SFS_OP_MKDIR, SFS_CLASS_READONLY, true, 0, NULL},
		{"src", SFS_OP_RMDIR, SFS_CLASS_READONLY, true, 0, NULL},
		{"src", SFS_OP_UNLINK, SFS_CLASS_READONLY, false, EROFS, NULL},
		{"src/a", SFS_OP_MKDIR, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"src/a/b", SFS_OP_RMDIR, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"lib", SFS_OP_MKDIR, SFS_CLASS_READONLY, true, 0, NULL}, /* lib/x.ts may exist */
		{"docs", SFS_OP_MKDIR, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"x/docs", SFS_OP_CREATE, SFS_CLASS_READONLY, false, EROFS, NULL},
		{".vscode", SFS_OP_MKDIR, SFS_CLASS_PROTECTED, false, EROFS, "vs"},
		{".vscode", SFS_OP_RMDIR, SFS_CLASS_PROTECTED, false, EROFS, NULL},
		{"a/.git", SFS_OP_MKDIR, SFS_CLASS_IMMUTABLE, false, EROFS, NULL},
		{"a/GIT~1", SFS_OP_MKDIR, SFS_CLASS_IMMUTABLE, false, EROFS, NULL},
		{"x.ts", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"X.TS", SFS_OP_CREATE, SFS_CLASS_READONLY, false, EROFS, NULL},
		{"SRC/x", SFS_OP_CREATE, SFS_CLASS_READONLY, false, EROFS, NULL},
		{"src2", SFS_OP_CREATE, SFS_CLASS_READONLY, false, EROFS, NULL},
		{"Src2", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"README", SFS_OP_LOOKUP, SFS_CLASS_READONLY, true, 0, "read-only by default"},
	};

	if (!ok(p != NULL, "operation rules load"))
		return;
	check_table(p, "ops", e, sizeof(e) / sizeof(e[0]));
	for (size_t i = 0; i < sizeof(mut) / sizeof(mut[0]); i++) {
		struct sfs_decision w, r, pr;

		sfs_policy_decide(p, "src/f.c", mut[i], &w);
		sfs_policy_decide(p, "README", mut[i], &r);
		sfs_policy_decide(p, ".vscode/tasks.json", mut[i], &pr);
		ok(w.allowed && !w.err && !r.allowed && r.err == EROFS && !pr.allowed &&
			   pr.err == EROFS,
		   "%s: allowed on writable, EROFS on readonly and protected", sfs_op_name(mut[i]));
	}
	ok(sfs_policy_write_possible_below(p, "lib") && sfs_policy_write_possible_below(p, "src") &&
		   sfs_policy_write_possible_below(p, ""),
	   "something writable can exist below 'lib' (x.ts), 'src' and the root");
	sfs_policy_free(p);

	const char *json2[] = {"{\"write\": [\"src/**\", \"/docs/x/\"]}"};

	p = load_json(json2, NULL, 1, SFS_TRUST_USER, NULL);
	ok(p && !sfs_policy_write_possible_below(p, "lib") &&
		   sfs_policy_write_possible_below(p, "docs") &&
		   !sfs_policy_write_possible_below(p, "docs/y") &&
		   sfs_policy_write_possible_below(p, "src/a/b"),
	   "nothing writable below 'lib' or 'docs/y' without floating globs");
	if (p) {
		const struct expect e2[] = {
			{"lib", SFS_OP_MKDIR, SFS_CLASS_READONLY, false, EROFS, NULL},
			{"docs", SFS_OP_MKDIR, SFS_CLASS_READONLY, true, 0, NULL},
			{"docs/y", SFS_OP_MKDIR, SFS_CLASS_READONLY, false, EROFS, NULL},
			{"docs/x", SFS_OP_MKDIR, SFS_CLASS_WRITABLE, true, 0, NULL},
		};
		check_table(p, "mkdir", e2, sizeof(e2) / sizeof(e2[0]));
	}
	sfs_policy_free(p);
}

static void test_immutable_added(void)
{
	const char *json[] = {"{\"write\": [\"**\"]}"};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);

	if (!ok(p != NULL, "write-everything rules load"))
		return;
	ok(sfs_policy_add_immutable(p, ".husky/_", "hooksPath") == 0 &&
		   sfs_policy_add_immutable(p, "mods/gitdir", "a gitdir") == 0,
	   "immutable paths can be added after compiling");
	ok(sfs_policy_add_immutable(p, "", "x") < 0, "the root cannot be made immutable");
	const struct expect e[] = {
		{".husky/_", SFS_OP_CREATE, SFS_CLASS_IMMUTABLE, false, EROFS, "hooksPath"},
		{".husky/_/pre-commit", SFS_OP_WRITE, SFS_CLASS_IMMUTABLE, false, EROFS, NULL},
		{".HUSKY/_./pre-commit", SFS_OP_WRITE, SFS_CLASS_IMMUTABLE, false, EROFS, NULL},
		{".husky/_x", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{".husky/x", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"mods/gitdir/config", SFS_OP_LOOKUP, SFS_CLASS_IMMUTABLE, true, 0, "a gitdir"},
		{"x/mods/gitdir", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
	};
	check_table(p, "added immutable", e, sizeof(e) / sizeof(e[0]));
	ok(sfs_policy_immutable_count(p) == 3 &&
		   !strcmp(sfs_policy_immutable(p, 1)->pattern, ".husky/_"),
	   "added immutable paths are listed after the built-in .git");
	sfs_policy_free(p);
}

static void test_symlinks(void)
{
	const char *json[] = {"{\"write\": [\"src/**\", \"*.ts\"],"
			      " \"protect\": [{\"path\": \".vscode/\", \"why\": \"vs\"}],"
			      " \"hide\": [\".env\"]}"};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	static const struct {
		const char *link, *target;
		bool allowed;
		const char *what;
	} c[] = {
		{"src/l", "x.c", true, "a sibling"},
		{"src/a/l", "../b/c.ts", true, "up and down inside SOURCE"},
		{"src/l", "../README.md", true, "a readonly file"},
		{"src/l", "..", true, "the root"},
		{"src/l", "/etc/passwd", false, "an absolute target"},
		{"src/l", "", false, "an empty target"},
		{"src/l", "../../x", false, "a target leaving SOURCE"},
		{"src/l", "a/../../../x", false, "a target leaving SOURCE later"},
		{"src/l", "../.git/config", false, "into .git"},
		{"src/l", "../.GIT", false, "onto .GIT"},
		{"src/l", "GIT~1/hooks", false, "into an 8.3 .git"},
		{"src/l", "../.vscode/tasks.json", false, "to a protected absent name"},
		{"src/l", "../.vscode", false, "onto a protected name"},
		{"src/l", "../.env", false, "to a hidden name"},
		{"src/l", ".vscode/../x.ts", false, "through a protected directory"},
		{"src/l", "a\\..\\..\\x", false, "with backslashes"},
		{".vscode/l", "x", false, "a link named in a protected directory"},
		{"README.l", "src/x", true, "a link with a readonly name (owned)"},
		{"x.ts", "src", true, "a writable name at the root"},
	};

	if (!ok(p != NULL, "symlink rules load"))
		return;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct sfs_decision d;

		sfs_policy_check_symlink(p, c[i].link, c[i].target, NULL, NULL, &d);
		if (!ok(d.allowed == c[i].allowed && (d.allowed || d.err),
			"symlink '%s' -> '%s' (%s): %s", c[i].link, show(c[i].target), c[i].what,
			c[i].allowed ? "allowed" : "denied"))
			printf("#   got %s, %s '%s': %s\n", d.allowed ? "allowed" : "denied",
			       d.rule_file, d.rule_text, d.why);
	}
	char out[64];
	ok(sfs_policy_symlink_resolve("a/b/l", "../c", out, sizeof(out)) == 3 &&
		   !strcmp(out, "a/c"),
	   "resolve 'a/b/l' -> '../c' is 'a/c'");
	ok(sfs_policy_symlink_resolve("l", "./x/./y/", out, sizeof(out)) == 3 &&
		   !strcmp(out, "x/y"),
	   "resolve drops '.' and empty components");
	ok(sfs_policy_symlink_resolve("l", "..", out, sizeof(out)) == -EXDEV,
	   "resolve leaving SOURCE is -EXDEV");
	ok(sfs_policy_symlink_resolve("l", "/x", out, sizeof(out)) == -EINVAL,
	   "resolve of an absolute target is -EINVAL");
	ok(sfs_policy_symlink_resolve("l", "abcdefgh", out, 4) == -ENAMETOOLONG,
	   "resolve into a short buffer is -ENAMETOOLONG");
	sfs_policy_free(p);
}

static void test_misc(void)
{
	struct sfs_policy *p = sfs_policy_new();
	struct sfs_decision d;
	struct sfs_rule r = {.cls = SFS_CLASS_PROTECTED,
			     .file = "f",
			     .key = "protect",
			     .pattern = "[abc",
			     .why = "w"};
	char *reason = NULL;
	char *longpath;

	sfs_policy_decide(p, "x", SFS_OP_LOOKUP, &d);
	ok(d.cls == SFS_CLASS_HIDDEN && !d.allowed && d.err == ENOENT,
	   "an uncompiled policy fails closed (hidden)");
	ok(sfs_policy_add_rule(p, &r, &reason) == -EINVAL && reason &&
		   strstr(reason, "unterminated"),
	   "a bad glob is rejected with its reason");
	free(reason);
	r.cls = SFS_CLASS_IMMUTABLE;
	r.pattern = "x";
	ok(sfs_policy_add_rule(p, &r, &reason) == -EINVAL,
	   "immutable rules come only from .git and add_immutable");
	ok(sfs_policy_compile(p, NULL) == 0, "an empty policy compiles");
	sfs_policy_decide(p, "a/b", SFS_OP_CREATE, &d);
	ok(d.cls == SFS_CLASS_READONLY && !d.allowed && d.err == EROFS && d.rule == NULL &&
		   d.rule_index == -1 && !strcmp(d.rule_file, "(default)"),
	   "with no rules everything is readonly, by the default");
	longpath = malloc(70000);
	for (int i = 0; i < 69990; i += 2)
		memcpy(longpath + i, "a/", 2);
	strcpy(longpath + 69990, ".git/x");
	sfs_policy_decide(p, longpath, SFS_OP_LOOKUP, &d);
	ok(d.cls == SFS_CLASS_IMMUTABLE, "a 70000-byte path is decided too (heap fallback)");
	free(longpath);
	ok(!strcmp(sfs_class_name(SFS_CLASS_HIDDEN), "hidden") &&
		   !strcmp(sfs_op_name(SFS_OP_RENAME_TO), "rename-to") &&
		   sfs_class_rank(SFS_CLASS_IMMUTABLE) > sfs_class_rank(SFS_CLASS_HIDDEN) &&
		   sfs_class_rank(SFS_CLASS_HIDDEN) > sfs_class_rank(SFS_CLASS_PROTECTED) &&
		   sfs_class_rank(SFS_CLASS_PROTECTED) > sfs_class_rank(SFS_CLASS_OVERLAY) &&
		   sfs_class_rank(SFS_CLASS_OVERLAY) > sfs_class_rank(SFS_CLASS_WRITABLE) &&
		   sfs_class_rank(SFS_CLASS_WRITABLE) > sfs_class_rank(SFS_CLASS_READONLY),
	   "names and ranks of classes and operations");
	sfs_policy_free(p);
}

/* ---- owned, private, generated ------------------------------------------------ */

static void test_owned(void)
{
	const char *json[] = {
		"{\"write\": [\"src/**\"], \"protect\": [{\"path\": \".vscode/\", \"why\": "
		"\"vs\"}]}",
	};
	const char *off[] = {"{\"write\": [\"src/**\"]}", "{\"owned\": false}"};
	static const enum sfs_op mut[] = {
		SFS_OP_CREATE,	    SFS_OP_MKDIR,  SFS_OP_SYMLINK,  SFS_OP_LINK_TARGET,
		SFS_OP_LINK_SOURCE, SFS_OP_WRITE,  SFS_OP_TRUNCATE, SFS_OP_SETATTR,
		SFS_OP_XATTR,	    SFS_OP_UNLINK, SFS_OP_RMDIR,    SFS_OP_RENAME_FROM,
		SFS_OP_RENAME_TO};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	struct sfs_decision d;

	if (!ok(p != NULL, "ownership rules load"))
		return;
	ok(sfs_policy_ownership(p), "ownership is on by default");
	for (size_t i = 0; i < sizeof(mut) / sizeof(mut[0]); i++) {
		struct sfs_decision o, n, pr, g;

		sfs_policy_decide_owned(p, "README", mut[i], true, &o);
		sfs_policy_decide_owned(p, "README", mut[i], false, &n);
		sfs_policy_decide_owned(p, ".vscode/tasks.json", mut[i], true, &pr);
		sfs_policy_decide_owned(p, "a/.git/config", mut[i], true, &g);
		ok(o.allowed && o.cls == SFS_CLASS_OWNED && !n.allowed && n.err == EROFS &&
			   n.owner_decides && n.cls == SFS_CLASS_READONLY && !pr.allowed &&
			   !pr.owner_decides && pr.cls == SFS_CLASS_PROTECTED && !g.allowed &&
			   g.cls == SFS_CLASS_IMMUTABLE,
		   "%s: an owned inode on a readonly path is allowed, an unowned one not, and "
		   "ownership opens nothing stricter",
		   sfs_op_name(mut[i]));
	}
	sfs_policy_decide_owned(p, "README", SFS_OP_MKNOD, true, &d);
	ok(!d.allowed && !d.owner_decides, "mknod (a FIFO or socket) needs a writable name");
	sfs_policy_decide_owned(p, "", SFS_OP_SETATTR, true, &d);
	ok(!d.allowed && !d.owner_decides, "SOURCE itself is never owned");
	sfs_policy_decide_owned(p, "README", SFS_OP_LOOKUP, true, &d);
	ok(d.allowed && d.cls == SFS_CLASS_READONLY, "looking does not need ownership");
	sfs_policy_decide_owned(p, "src/a.c", SFS_OP_WRITE, false, &d);
	ok(d.allowed && d.cls == SFS_CLASS_WRITABLE && !d.owner_decides,
	   "a writable path needs no ownership");
	sfs_policy_free(p);

	p = load_json(off, NULL, 2, SFS_TRUST_USER, NULL);
	if (ok(p != NULL, "a rule file with \"owned\": false loads")) {
		sfs_policy_decide_owned(p, "README", SFS_OP_WRITE, true, &d);
		ok(!sfs_policy_ownership(p) && !d.allowed && !d.owner_decides,
		   "\"owned\": false: write globs alone decide");
		sfs_policy_decide_owned(p, "x.o", SFS_OP_CREATE, true, &d);
		ok(!d.allowed, "\"owned\": false: no new names outside the write globs");
		sfs_policy_free(p);
	}
}

static void test_private(void)
{
	const char *json[] = {
		"{\"write\": [\"src/\"],"
		" \"private\": [\"node_modules/\", {\"path\": \"__pycache__/\", \"why\": \"pyc\"}],"
		" \"protect\": [{\"path\": \".vscode/\", \"why\": \"vs\"},"
		"              {\"path\": \"package.json\", \"why\": \"pj\", \"tier\": 1}],"
		" \"hide\": [\".env\", \"*.pem\"]}",
	};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	const struct expect e[] = {
		{"node_modules", SFS_OP_LOOKUP, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules", SFS_OP_MKDIR, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules", SFS_OP_RMDIR, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/index.js", SFS_OP_CREATE, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/package.json", SFS_OP_WRITE, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/test/key.pem", SFS_OP_CREATE, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/.env", SFS_OP_LOOKUP, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/.vscode/s", SFS_OP_CREATE, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/.git/config", SFS_OP_WRITE, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"node_modules/x/node_modules/y", SFS_OP_MKNOD, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"a/b/node_modules/pkg/bin/x", SFS_OP_SYMLINK, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"NODE_MODULES/x", SFS_OP_CREATE, SFS_CLASS_PRIVATE, true, 0, NULL},
		{"src/pkg/__pycache__/m.pyc", SFS_OP_CREATE, SFS_CLASS_PRIVATE, true, 0, "pyc"},
		{".git/node_modules", SFS_OP_MKDIR, SFS_CLASS_IMMUTABLE, false, EROFS, NULL},
		{"sub/.git/node_modules/x", SFS_OP_LOOKUP, SFS_CLASS_IMMUTABLE, true, 0, NULL},
		{"node_modules.old", SFS_OP_CREATE, SFS_CLASS_READONLY, false, EROFS, NULL},
		{"package.json", SFS_OP_WRITE, SFS_CLASS_PROTECTED, false, EROFS, "pj"},
	};
	struct sfs_decision d;

	if (!ok(p != NULL, "private rules load"))
		return;
	check_table(p, "private", e, sizeof(e) / sizeof(e[0]));
	sfs_policy_check_symlink(p, "node_modules/.bin/x", "/usr/bin/env", NULL, NULL, &d);
	ok(d.allowed && d.cls == SFS_CLASS_PRIVATE,
	   "a symlink in a private directory may point anywhere (the store is not the host's "
	   "tree)");
	sfs_policy_check_symlink(p, "src/x", "../node_modules/y", NULL, NULL, &d);
	ok(d.allowed, "a symlink in SOURCE may point into a private directory (the host's own)");
	sfs_policy_free(p);
}

static void test_generated(void)
{
	const char *json[] = {
		"{\"write\": [\"src/\"], \"generated\": [\"build/\", \"/out/\"],"
		" \"protect\": [{\"path\": \"Makefile\", \"why\": \"mk\", \"tier\": 1},"
		"   {\"path\": \"*.cmake\", \"why\": \"cm\", \"tier\": 1},"
		"   {\"path\": \"**/.github/workflows/\", \"why\": \"ci\", \"tier\": 2},"
		"   {\"path\": \".mvn/\", \"why\": \"mvn\", \"tier\": 1},"
		"   {\"path\": \".envrc\", \"why\": \"direnv\"}]}",
	};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	const struct expect e[] = {
		{"build/Makefile", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"build/CMakeFiles/x.cmake", SFS_OP_WRITE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"build/.github/workflows/ci.yml", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0,
		 NULL},
		{"sub/dir/build/Makefile", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"out/Makefile", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"x/out/Makefile", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "mk"},
		{"build/x.o", SFS_OP_CREATE, SFS_CLASS_WRITABLE, true, 0, NULL},
		{"build/.envrc", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "direnv"},
		{"build/sub/.envrc", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "direnv"},
		{"Makefile", SFS_OP_WRITE, SFS_CLASS_PROTECTED, false, EROFS, "mk"},
		{"src/Makefile", SFS_OP_WRITE, SFS_CLASS_PROTECTED, false, EROFS, "mk"},
		{".mvn/build/x", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "mvn"},
		{"BUILD/Makefile", SFS_OP_CREATE, SFS_CLASS_PROTECTED, false, EROFS, "mk"},
	};

	if (!ok(p != NULL, "generated rules load"))
		return;
	check_table(p, "generated", e, sizeof(e) / sizeof(e[0]));
	sfs_policy_free(p);
}

/* A symlink probe over a table of links, which logs what it was asked. */
struct probe_log {
	char asked[8][64];
	int n;
	int fail_at; /* answer -EIO on this call (1-based), 0 never */
};

static const char *const fake_links[][2] = {
	{"a", "x/real"},    {"x/y", "../z"},	    {"p", ".envrc"},	      {"q", ".vscode"},
	{"o", "../.."},	    {"loop1", "loop2"},	    {"loop2", "loop1"},	      {"abs", "/etc"},
	{"d1", "deploy/x"}, {"chain1", "chain2/f"}, {"chain2", "c3"},	      {"c3", "dir"},
	{"grow", "grow/a"}, {"self", "self"},	    {"lp1", "lp2/../.envrc"}, {"lp2", "lp1"},
};

static int fake_probe(void *ctx, const char *prefix, char *target, size_t cap)
{
	struct probe_log *l = ctx;

	if (l->n < 8)
		snprintf(l->asked[l->n], sizeof(l->asked[0]), "%s", prefix);
	l->n++;
	if (l->fail_at && l->n == l->fail_at)
		return -EIO;
	for (size_t i = 0; i < sizeof(fake_links) / sizeof(fake_links[0]); i++)
		if (!strcmp(prefix, fake_links[i][0])) {
			snprintf(target, cap, "%s", fake_links[i][1]);
			return 1;
		}
	return 0;
}

static void test_symlink_probe(void)
{
	const char *json[] = {
		"{\"write\": [\"**\"], \"protect\": ["
		"{\"path\": \"/deploy/prod\", \"why\": \"the test's protected name\"},"
		"{\"path\": \".envrc\", \"why\": \"direnv\"},"
		"{\"path\": \".vscode/\", \"why\": \"the editor\"}]}"};
	struct sfs_policy *p = load_json(json, NULL, 1, SFS_TRUST_USER, NULL);
	static const struct {
		const char *link, *target;
		bool allowed;
		const char *what;
	} c[] = {
		{"l", "a/../b", true, "through a symlink taken back by '..': x/b, allowed"},
		{"d/l", "../a", true, "onto a symlink whose target is allowed"},
		{"l", "x/y/w", true, "through a deeper symlink to an allowed place"},
		{"l", "chain1", true, "a chain of three links, every hop allowed"},
		{"l", "b/../c", true, "through a directory taken back"},
		{"l", "x/z", true, "past a symlink's sibling"},
		{"l", "p", false, "onto a symlink to .envrc"},
		{"l", "q/tasks.json", false, "through a symlink to .vscode"},
		{"l", "sub/../p", false, "through '..' onto a symlink to .envrc"},
		{"l", "o/x", false, "through a symlink that leaves SOURCE"},
		{"l", "loop1", true, "into a loop of symlinks, which leads nowhere"},
		{"l", "self", true, "a link to itself"},
		{"l", "lp1", false, "a loop that leaves more to resolve at every round"},
		{"l", "grow", false, "a chain that grows at every hop"},
		{"l", "abs/passwd", false, "through a symlink with an absolute target"},
		{"l", "d1/../prod", false, "through '..' after a symlink: deploy/prod, protected"},
		{"l", "prod", true, "the same name without the symlink: prod, allowed"},
	};
	struct probe_log log = {0};
	struct sfs_decision d;

	if (!ok(p != NULL, "probe rules load"))
		return;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(&log, 0, sizeof(log));
		sfs_policy_check_symlink(p, c[i].link, c[i].target, fake_probe, &log, &d);
		if (!ok(d.allowed == c[i].allowed && (d.allowed || d.err == EROFS),
			"symlink '%s' -> '%s' (%s): %s", c[i].link, c[i].target, c[i].what,
			c[i].allowed ? "allowed" : "denied"))
			printf("#   got %s: %s\n", d.allowed ? "allowed" : "denied", d.why);
	}
	memset(&log, 0, sizeof(log));
	sfs_policy_check_symlink(p, "l", "loop1", fake_probe, &log, &d);
	ok(d.allowed && log.n == 3, "a loop is known for one once it comes round (%d probes)",
	   log.n);
	memset(&log, 0, sizeof(log));
	sfs_policy_check_symlink(p, "l", "grow", fake_probe, &log, &d);
	ok(!d.allowed && d.rule && d.rule->index == SFS_RULE_SYMLINK_LOOP &&
		   strstr(d.why, "40 symlinks") && log.n == SFS_SYMLINK_MAX_HOPS + 1,
	   "a chain of more than %d links is refused after that many, and the reason says so",
	   SFS_SYMLINK_MAX_HOPS);
	memset(&log, 0, sizeof(log));
	sfs_policy_check_symlink(p, "l", "b/c/../d", fake_probe, &log, &d);
	ok(d.allowed && log.n == 3 && !strcmp(log.asked[0], "b") && !strcmp(log.asked[1], "b/c") &&
		   !strcmp(log.asked[2], "b/d"),
	   "every component is asked about as the target reaches it, in order");
	memset(&log, 0, sizeof(log));
	sfs_policy_check_symlink(p, "l", "a/w", fake_probe, &log, &d);
	ok(d.allowed && log.n == 4 && !strcmp(log.asked[0], "a") && !strcmp(log.asked[1], "x") &&
		   !strcmp(log.asked[2], "x/real") && !strcmp(log.asked[3], "x/real/w"),
	   "a symlink on the way is followed from its own directory");
	memset(&log, 0, sizeof(log));
	log.fail_at = 2;
	sfs_policy_check_symlink(p, "l", "b/c", fake_probe, &log, &d);
	ok(!d.allowed && d.err == EROFS, "a probe that cannot tell denies");
	sfs_policy_free(p);
}

/* Which links a change of one name redirects. */
static void test_symlink_depends(void)
{
	static const struct {
		const char *link, *target, *name;
		bool depends;
	} c[] = {
		{"b", "a/../prod.sh", "a", true}, {"b", "x/y", "a", false},
		{"d/b", "../a/x", "a", true},	  {"a/b", "c", "a", true},
		{"b", "A/x", "a", true},	  {"b", "../../x", "a", false},
		{"b", "ab/x", "a", false},	  {"b", "a/x/y", "a/x", true},
		{"b", "a", "a/x", false},	  {"src/l", "../build/lib.so.1", "build", true},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ok(sfs_symlink_depends_on(c[i].link, c[i].target, c[i].name) == c[i].depends,
		   "'%s' -> '%s' %s on '%s'", c[i].link, c[i].target,
		   c[i].depends ? "depends" : "does not depend", c[i].name);

	const struct sfs_link links[] = {
		{"b", "a/../p"}, {"c", "b/x"}, {"d", "e"}, {"f", "c"}, {"g", "../out"},
	};
	const char *changed[] = {"a"};
	bool hit[5];
	size_t n = sfs_symlink_affected(links, 5, changed, 1, hit);
	ok(n == 3 && hit[0] && hit[1] && !hit[2] && hit[3] && !hit[4],
	   "a change of 'a' redirects b, c through b, f through c; not d or g");
}

static bool load_type_names(struct strv *names)
{
	char *err = NULL;
	size_t missing = 0;

	setenv("SANDY_RULES_DIR", SANDY_SOURCE_RULES_DIR, 1);
	if (sfs_shipped_types(names, &err) < 0) {
		printf("# cannot list the shipped types: %s\n", err ? err : "?");
		free(err);
		return false;
	}
	for (size_t i = 0; i < sizeof(expected_types) / sizeof(expected_types[0]); i++) {
		bool found = false;

		for (size_t k = 0; k < names->n; k++)
			found |= !strcmp(names->v[k], expected_types[i]);
		if (!found && missing++ < 5)
			printf("#   no rules/%s.json\n", expected_types[i]);
	}
	all_types = (const char **)names->v;
	NTYPES = names->n;
	return missing == 0;
}

int main(void)
{
	struct strv names = {0};

	ok(load_type_names(&names), "the shipped rules have all %zu project types",
	   sizeof(expected_types) / sizeof(expected_types[0]));
	struct sfs_policy *all = load_types(all_types, NTYPES);

	if (!ok(all != NULL, "base and all %zu project types load together", NTYPES))
		return tap_done();
	test_strict_names(all);
	test_posix_spellings(all);
	test_git(all);
	sfs_policy_free(all);
	test_type_sources();
	test_nothing_writable_below_strict();
	test_order_shipped();
	test_order_synthetic();
	test_precedence();
	test_ops();
	test_immutable_added();
	test_symlinks();
	test_owned();
	test_private();
	test_generated();
	test_symlink_probe();
	test_symlink_depends();
	test_misc();
	strv_free(&names);
	return tap_done();
}
