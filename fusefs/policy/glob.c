/*
 * glob: translation of gitignore-style globs to PCRE2 and the combined,
 * JIT-compiled regex per set (see glob.h for the syntax).
 *
 * A set is one regex whose alternatives share their literal prefixes (a
 * trie written as nested groups), because PCRE2 tries the alternatives of
 * a group one by one and a flat list of a hundred names costs a hundred
 * failed comparisons per component. Globs that start with '*' and a literal
 * ("*.php", "*.csproj") share one "[^/]*" followed by a trie of what comes
 * after the star, so a hundred extensions cost one scan of the component,
 * not a hundred. Each alternative ends in (*MARK:i) so
 * the matching glob is known without capture groups. Sets of the stricter
 * classes get a second regex in which literal components also match their
 * 8.3 short names; it is consulted only for subjects that contain "~" and
 * a digit, so ordinary names pay nothing for it.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <errno.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "glob.h"
#include "common/err.h"

/* ---- string builder ---------------------------------------------------- */

struct sb {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_grow(struct sb *b, size_t more)
{
	size_t cap;
	char *np;

	if (b->oom)
		return;
	if (b->len + more + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < b->len + more + 1)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = true;
		return;
	}
	b->p = np;
	b->cap = cap;
}

static void sb_addn(struct sb *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_add(struct sb *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

static void sb_addc(struct sb *b, char c)
{
	sb_addn(b, &c, 1);
}

__attribute__((format(printf, 2, 3))) static void sb_addf(struct sb *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_addn(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Appends byte C so that the regex matches exactly it, in or out of []. */
static void sb_lit(struct sb *b, unsigned char c)
{
	if (isalnum(c) || c == '_')
		sb_addc(b, (char)c);
	else
		sb_addf(b, "\\x%02x", c);
}

static void sb_free(struct sb *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- parsing ------------------------------------------------------------ */

enum tok_kind {
	TK_LIT,	  /* one literal byte */
	TK_STAR,  /* '*' */
	TK_QMARK, /* '?' */
	TK_CLASS, /* bracket expression, regex in re */
	TK_SEP,	  /* '/' between components */
	TK_DSTAR, /* a middle "**" component and its '/': zero or more components */
	TK_ALL,	  /* the pattern "**" alone: any first component */
};

struct tok {
	enum tok_kind kind;
	unsigned char c;
	char *re;
};

struct parsed {
	struct tok *t;
	size_t n, cap;
	bool anchored;
	bool below_only; /* trailing "/" + "**": strictly below */
	bool oom;
};

/* The regex of a '?': one UTF-8 sequence, or one stray byte. */
#define RE_QMARK "(?:[^/\\x80-\\xbf][\\x80-\\xbf]*|[\\x80-\\xbf])"
#define RE_STAR	 "[^/]*"
#define RE_DSTAR "(?:[^/]+/)*"
#define RE_ALL	 "[^/]+"
#define RE_END	 "(?=/|\\z)"

static void push_tok(struct parsed *g, enum tok_kind kind, unsigned char c, char *re)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 32;
		struct tok *t = realloc(g->t, cap * sizeof(*t));

		if (!t) {
			g->oom = true;
			free(re);
			return;
		}
		g->t = t;
		g->cap = cap;
	}
	g->t[g->n++] = (struct tok){kind, c, re};
}

static void parsed_free(struct parsed *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->t[i].re);
	free(g->t);
	memset(g, 0, sizeof(*g));
}

static const char *const posix_classes[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
					    "lower", "print", "punct", "space", "upper", "xdigit"};

/*
 * Parses the bracket expression starting after '[' at *PP (component ends
 * at END). On success *PP points after ']'.
 */
static int parse_class(const char **pp, const char *end, char **re, char **err)
{
	const char *p = *pp;
	struct sb m = {0}, out = {0};
	bool neg = false, first = true;

	if (p < end && (*p == '!' || *p == '^')) {
		neg = true;
		p++;
	}
	for (;;) {
		unsigned char lo, hi;

		if (p >= end) {
			err_set(err, EINVAL, "unterminated bracket expression");
			goto fail;
		}
		if (*p == ']' && !first) {
			p++;
			break;
		}
		first = false;
		if (*p == '[' && p + 1 < end && p[1] == ':') {
			const char *q = p + 2;
			size_t k;

			while (q + 1 < end && !(q[0] == ':' && q[1] == ']'))
				q++;
			if (q + 1 >= end) {
				err_set(err, EINVAL, "unterminated character class name");
				goto fail;
			}
			for (k = 0; k < sizeof(posix_classes) / sizeof(posix_classes[0]); k++)
				if (strlen(posix_classes[k]) == (size_t)(q - p - 2) &&
				    memcmp(posix_classes[k], p + 2, (size_t)(q - p - 2)) == 0)
					break;
			if (k == sizeof(posix_classes) / sizeof(posix_classes[0])) {
				err_set(err, EINVAL, "unknown character class '%.*s'",
					(int)(q - p + 2), p);
				goto fail;
			}
			sb_add(&m, "[:");
			sb_add(&m, posix_classes[k]);
			sb_add(&m, ":]");
			p = q + 2;
			continue;
		}
		if (*p == '\\') {
			if (++p >= end) {
				err_set(err, EINVAL, "unterminated bracket expression");
				goto fail;
			}
		}
		lo = (unsigned char)*p++;
		hi = lo;
		if (p + 1 < end && *p == '-' && p[1] != ']') {
			p++;
			if (*p == '\\' && ++p >= end) {
				err_set(err, EINVAL, "unterminated bracket expression");
				goto fail;
			}
			hi = (unsigned char)*p++;
		}
		if (lo >= 0x80 || hi >= 0x80) {
			err_set(err, EINVAL, "non-ASCII character in a bracket expression");
			goto fail;
		}
		if (hi < lo) {
			err_set(err, EINVAL, "range '%c-%c' out of order", lo, hi);
			goto fail;
		}
		sb_lit(&m, lo);
		if (hi != lo) {
			sb_addc(&m, '-');
			sb_lit(&m, hi);
		}
	}
	if (neg) {
		/* Any non-ASCII character is outside an ASCII-only set. */
		sb_add(&out, "(?:[^");
		sb_addn(&out, m.p, m.len);
		sb_add(&out, "/\\x80-\\xff]|[\\xc0-\\xff][\\x80-\\xbf]*|[\\x80-\\xbf])");
	} else {
		sb_add(&out, "(?!/)[");
		sb_addn(&out, m.p, m.len);
		sb_add(&out, "]");
	}
	sb_free(&m);
	if (out.oom) {
		sb_free(&out);
		return -ENOMEM;
	}
	*re = out.p;
	*pp = p;
	return 0;
fail:
	sb_free(&m);
	sb_free(&out);
	return *err ? -EINVAL : -ENOMEM;
}

static bool comp_is(const char *s, size_t n, const char *what)
{
	return n == strlen(what) && memcmp(s, what, n) == 0;
}

/* Tokenises one component S[0..N) (not "**"). */
static int parse_component(struct parsed *g, const char *s, size_t n, unsigned flags, char **err)
{
	const char *p = s, *end = s + n;
	size_t first = g->n;

	while (p < end) {
		char *re = NULL;
		int r;

		switch (*p) {
		case '\\':
			if (p + 1 >= end) {
				err_set(err, EINVAL, "trailing backslash");
				return *err ? -EINVAL : -ENOMEM;
			}
			push_tok(g, TK_LIT, (unsigned char)p[1], NULL);
			p += 2;
			break;
		case '*':
			while (p < end && *p == '*')
				p++;
			push_tok(g, TK_STAR, 0, NULL);
			break;
		case '?':
			push_tok(g, TK_QMARK, 0, NULL);
			p++;
			break;
		case '[':
			p++;
			r = parse_class(&p, end, &re, err);
			if (r < 0)
				return r;
			push_tok(g, TK_CLASS, 0, re);
			break;
		default:
			push_tok(g, TK_LIT, (unsigned char)*p, NULL);
			p++;
			break;
		}
		if (g->oom)
			return -ENOMEM;
	}
	if (flags & SFS_GLOB_EXACT) {
		for (size_t i = first; i < g->n; i++)
			if (g->t[i].kind != TK_LIT) {
				err_set(err, EINVAL, "an overlay names one exact path, not a glob");
				return *err ? -EINVAL : -ENOMEM;
			}
	}
	if (flags & SFS_GLOB_CANONICAL) {
		struct tok *last = &g->t[g->n - 1];

		if (last->kind == TK_LIT && (last->c == '.' || last->c == ' ')) {
			err_set(err, EINVAL,
				"'%.*s' ends in '%c', which canonical names never "
				"do (NTFS strips it)",
				(int)n, s, last->c);
			return *err ? -EINVAL : -ENOMEM;
		}
		for (size_t i = first; i < g->n; i++)
			if (g->t[i].kind == TK_LIT && g->t[i].c == ':') {
				err_set(err, EINVAL,
					"'%.*s' contains ':', which canonical names "
					"never do (NTFS stream separator)",
					(int)n, s);
				return *err ? -EINVAL : -ENOMEM;
			}
	}
	return 0;
}

static int parse_glob(const char *glob, unsigned flags, struct parsed *g, char **err)
{
	char *folded = NULL;
	const char *p;
	size_t n, ncomp = 0, i;
	struct {
		const char *s;
		size_t n;
	} *comps = NULL;
	int r = 0;

	memset(g, 0, sizeof(*g));
	*err = NULL;
	if (flags & SFS_GLOB_CANONICAL) {
		size_t cap = SFS_CANON_CAP(strlen(glob));

		folded = malloc(cap);
		if (!folded)
			return -ENOMEM;
		if (sfs_canon_fold(glob, strlen(glob), folded, cap) < 0) {
			free(folded);
			return -ENOMEM;
		}
		glob = folded;
	}
	p = glob;
	if (*p == '\0') {
		err_set(err, EINVAL, "empty pattern");
		r = -EINVAL;
		goto out;
	}
	if (*p == '/') {
		g->anchored = true;
		p++;
	}
	n = strlen(p);
	if (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0) {
		err_set(err, EINVAL, "pattern names only the root");
		r = -EINVAL;
		goto out;
	}
	comps = calloc(n + 1, sizeof(*comps));
	if (!comps) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0;;) {
		size_t j = i;

		while (j < n && p[j] != '/')
			j++;
		comps[ncomp].s = p + i;
		comps[ncomp].n = j - i;
		if (j == i) {
			err_set(err, EINVAL, "empty path component");
			r = -EINVAL;
			goto out;
		}
		if (comp_is(p + i, j - i, ".") || comp_is(p + i, j - i, "..")) {
			err_set(err, EINVAL, "'.' and '..' components are not allowed");
			r = -EINVAL;
			goto out;
		}
		ncomp++;
		if (j >= n)
			break;
		i = j + 1;
	}
	if (ncomp > 1)
		g->anchored = true;
	if (flags & SFS_GLOB_EXACT) {
		for (i = 0; i < ncomp; i++)
			if (comp_is(comps[i].s, comps[i].n, "**")) {
				err_set(err, EINVAL, "an overlay names one exact path, not a glob");
				r = -EINVAL;
				goto out;
			}
		g->anchored = true;
	}
	/* "**" + "/" in front floats the rest; "/" + "**" at the end means below. */
	i = 0;
	while (ncomp - i > 1 && comp_is(comps[i].s, comps[i].n, "**"))
		i++;
	if (i > 0 && !(flags & SFS_GLOB_EXACT))
		g->anchored = false;
	while (ncomp - i > 1 && comp_is(comps[ncomp - 1].s, comps[ncomp - 1].n, "**")) {
		ncomp--;
		g->below_only = true;
	}
	if (ncomp - i == 1 && comp_is(comps[i].s, comps[i].n, "**")) {
		if (flags & SFS_GLOB_EXACT) {
			err_set(err, EINVAL, "an overlay names one exact path, not a glob");
			r = -EINVAL;
			goto out;
		}
		g->anchored = true;
		push_tok(g, TK_ALL, 0, NULL);
		r = g->oom ? -ENOMEM : 0;
		goto out;
	}
	for (bool need_sep = false; i < ncomp; i++) {
		if (comp_is(comps[i].s, comps[i].n, "**")) {
			if (flags & SFS_GLOB_EXACT) {
				err_set(err, EINVAL, "an overlay names one exact path, not a glob");
				r = -EINVAL;
				goto out;
			}
			if (need_sep)
				push_tok(g, TK_SEP, '/', NULL);
			if (g->n == 0 || g->t[g->n - 1].kind != TK_DSTAR)
				push_tok(g, TK_DSTAR, 0, NULL);
			need_sep = false;
			continue;
		}
		if (need_sep)
			push_tok(g, TK_SEP, '/', NULL);
		r = parse_component(g, comps[i].s, comps[i].n, flags, err);
		if (r < 0)
			goto out;
		need_sep = true;
	}
	if (g->oom)
		r = -ENOMEM;
out:
	free(comps);
	free(folded);
	if (r < 0)
		parsed_free(g);
	return r;
}

/* ---- regex generation --------------------------------------------------- */

static void emit_tok(struct sb *b, const struct tok *t)
{
	switch (t->kind) {
	case TK_LIT:
	case TK_SEP:
		sb_lit(b, t->c);
		break;
	case TK_STAR:
		sb_add(b, RE_STAR);
		break;
	case TK_QMARK:
		sb_add(b, RE_QMARK);
		break;
	case TK_CLASS:
		sb_add(b, t->re);
		break;
	case TK_DSTAR:
		sb_add(b, RE_DSTAR);
		break;
	case TK_ALL:
		sb_add(b, RE_ALL);
		break;
	}
}

static void emit_suffix(struct sb *b, const struct parsed *g)
{
	sb_add(b, g->below_only ? "/" : RE_END);
}

/* Windows replaces these with '_' in short names. */
static unsigned char short_char(unsigned char c)
{
	if (c >= 0x80 || strchr("+,;=[]", c))
		return '_';
	return c;
}

/*
 * The regex of the 8.3 short names that may stand for a name matched by
 * component T[0..N), or false when the component has no literal text to
 * derive them from. Over-approximates: anything Windows could generate
 * matches, and a few names it would not.
 */
static bool emit_short_alias(struct sb *b, const struct tok *t, size_t n)
{
	size_t i = 0, base_end, dot = n, k, elen;
	bool base_complete = true, ext_known = false;
	char prefix[8];
	size_t plen = 0;
	struct sb ext = {0};

	while (i < n && t[i].kind == TK_LIT && t[i].c == '.')
		i++;
	if (i == n)
		return false;
	/* The extension is known when the component ends in ".literal". */
	for (k = n; k > i; k--) {
		if (t[k - 1].kind != TK_LIT)
			break;
		if (t[k - 1].c == '.') {
			dot = k - 1;
			break;
		}
	}
	if (dot < n && dot > i) {
		ext_known = true;
		base_end = dot;
		for (k = dot + 1, elen = 0; k < n && elen < 3; k++) {
			if ((t[k].c >= 0x80 && t[k].c < 0xc0) || t[k].c == ' ')
				continue;
			sb_lit(&ext, short_char(t[k].c));
			elen++;
		}
	} else {
		base_end = n;
		for (k = i; k < n; k++)
			if (t[k].kind != TK_LIT)
				break;
		ext_known = k == n; /* no wildcard: no extension */
	}
	for (k = i; k < base_end && plen < 6; k++) {
		if (t[k].kind != TK_LIT) {
			base_complete = false;
			break;
		}
		if (t[k].c == '.' || t[k].c == ' ' || (t[k].c >= 0x80 && t[k].c < 0xc0))
			continue;
		prefix[plen++] = (char)short_char(t[k].c);
	}
	if (plen == 0 && base_complete) {
		sb_free(&ext);
		return false;
	}
	sb_add(b, "(?:(?:");
	/* ~N forms: up to six characters of the base, fewer for long N. */
	for (k = 0; k < plen && k < 2; k++)
		sb_lit(b, (unsigned char)prefix[k]);
	for (k = 2; k < plen; k++) {
		sb_add(b, "(?:");
		sb_lit(b, (unsigned char)prefix[k]);
	}
	for (k = 2; k < plen; k++)
		sb_add(b, ")?");
	if (!base_complete && plen < 6)
		sb_addf(b, "[^/~.]{0,%zu}", 6 - plen);
	sb_add(b, "|");
	/* Hashed forms: two characters and four hex digits. */
	for (k = 0; k < plen && k < 2; k++)
		sb_lit(b, (unsigned char)prefix[k]);
	if (!base_complete && plen < 2)
		sb_addf(b, "[^/~.]{0,%zu}", 2 - plen);
	sb_add(b, "[0-9a-f]{4})~[0-9]+");
	if (ext_known && ext.len > 0) {
		sb_add(b, "\\x2e");
		sb_addn(b, ext.p, ext.len);
	} else if (!ext_known) {
		sb_add(b, "(?:\\x2e[^/.~]{1,3})?");
	}
	sb_add(b, ")");
	b->oom |= ext.oom;
	sb_free(&ext);
	return true;
}

/* The whole regex of one glob; with ALIAS, components also match 8.3 names. */
static void emit_glob(struct sb *b, const struct parsed *g, bool alias)
{
	size_t i = 0;

	while (i < g->n) {
		size_t j = i;

		if (g->t[i].kind == TK_SEP || g->t[i].kind == TK_DSTAR || g->t[i].kind == TK_ALL) {
			emit_tok(b, &g->t[i]);
			i++;
			continue;
		}
		while (j < g->n && g->t[j].kind != TK_SEP && g->t[j].kind != TK_DSTAR)
			j++;
		if (alias) {
			struct sb a = {0};
			size_t st = i;
			bool used;

			if (emit_short_alias(&a, g->t + i, j - i))
				sb_addc(&a, '|');
			/* "*.pem" also names ".pem", whose short name is "PEM~1". */
			while (st < j && g->t[st].kind == TK_STAR)
				st++;
			if (st > i && st < j && g->t[st].kind == TK_LIT && g->t[st].c == '.' &&
			    emit_short_alias(&a, g->t + st, j - st))
				sb_addc(&a, '|');
			used = a.len > 0;
			if (used) {
				sb_add(b, "(?:");
				sb_addn(b, a.p,
					a.len); /* ends in '|': the component itself follows */
				for (size_t k = i; k < j; k++)
					emit_tok(b, &g->t[k]);
				sb_add(b, ")");
			}
			b->oom |= a.oom;
			sb_free(&a);
			if (used) {
				i = j;
				continue;
			}
		}
		for (; i < j; i++)
			emit_tok(b, &g->t[i]);
	}
	emit_suffix(b, g);
}

/* ---- sets --------------------------------------------------------------- */

struct entry {
	int id;
	bool anchored;
	bool star; /* the glob starts with '*' and a literal: LIT is what follows the star */
	char *lit; /* leading literal bytes of the regex, raw */
	size_t litlen;
	char *rest; /* regex after the literal prefix, with suffix */
	char *full; /* alias regex (canonical sets), or NULL */
	const char *text;
};

struct chunk {
	pcre2_code *re;
	bool jit;
};

struct regexes {
	struct chunk *c;
	size_t n;
};

struct sfs_globset {
	struct regexes main;
	struct regexes alias;
	char *source;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t n = x->litlen < y->litlen ? x->litlen : y->litlen;
	int c;

	if (x->anchored != y->anchored)
		return x->anchored ? -1 : 1;
	if (x->star != y->star)
		return x->star ? 1 : -1;
	c = memcmp(x->lit, y->lit, n);
	if (c)
		return c;
	if (x->litlen != y->litlen)
		return x->litlen < y->litlen ? -1 : 1;
	c = strcmp(x->rest, y->rest);
	if (c)
		return c;
	c = strcmp(x->text, y->text);
	if (c)
		return c;
	return (x->id > y->id) - (x->id < y->id);
}

/* Deeper than this the trie stops nesting groups (PCRE2 limits nesting). */
#define TRIE_MAX_NEST 48

static void emit_flat(struct sb *b, const struct entry *e, size_t depth)
{
	for (size_t k = depth; k < e->litlen; k++)
		sb_lit(b, (unsigned char)e->lit[k]);
	sb_add(b, e->rest);
	sb_addf(b, "(*MARK:%d)", e->id);
}

/* Emits entries E[0..N), which share their first DEPTH literal bytes. */
static void emit_trie(struct sb *b, const struct entry *e, size_t n, size_t depth, int nest)
{
	size_t alts = 0, i;

	/* Path compression: one shared next byte and nobody ending here. */
	for (;;) {
		if (n == 0)
			return;
		if (e[0].litlen <= depth || e[n - 1].litlen <= depth)
			break;
		if (e[0].lit[depth] != e[n - 1].lit[depth])
			break;
		sb_lit(b, (unsigned char)e[0].lit[depth]);
		depth++;
	}
	if (n == 1) {
		emit_flat(b, e, depth);
		return;
	}
	sb_add(b, "(?:");
	if (nest >= TRIE_MAX_NEST) {
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(b, '|');
			emit_flat(b, &e[i], depth);
		}
		sb_add(b, ")");
		return;
	}
	/* Entries whose literal ends here sort first; children follow. */
	for (i = 0; i < n && e[i].litlen <= depth; i++)
		;
	for (size_t j = i; j < n;) {
		size_t k = j;

		while (k < n && e[k].lit[depth] == e[j].lit[depth])
			k++;
		if (alts++)
			sb_addc(b, '|');
		sb_lit(b, (unsigned char)e[j].lit[depth]);
		emit_trie(b, e + j, k - j, depth + 1, nest + 1);
		j = k;
	}
	for (size_t j = 0; j < i; j++) {
		if (alts++)
			sb_addc(b, '|');
		emit_flat(b, &e[j], depth);
	}
	sb_add(b, ")");
}

/*
 * The entries E[0..N) that share a start (the root, or a component
 * boundary): the trie of the plain ones, then one "[^/]*" and the trie of
 * the starred ones (which sort last). With ALIAS, every entry's alias regex
 * flat.
 */
static void emit_group(struct sb *b, const struct entry *e, size_t n, bool alias)
{
	size_t nplain = 0;

	sb_add(b, "(?:");
	if (alias) {
		for (size_t i = 0; i < n; i++) {
			if (i)
				sb_addc(b, '|');
			sb_add(b, e[i].full);
			sb_addf(b, "(*MARK:%d)", e[i].id);
		}
		sb_add(b, ")");
		return;
	}
	while (nplain < n && !e[nplain].star)
		nplain++;
	if (nplain > 0)
		emit_trie(b, e, nplain, 0, 0);
	if (n > nplain) {
		if (nplain > 0)
			sb_addc(b, '|');
		sb_add(b, RE_STAR);
		emit_trie(b, e + nplain, n - nplain, 0, 0);
	}
	sb_add(b, ")");
}

/* The combined regex of E[0..N): anchored ones first, then floating ones. */
static void emit_set(struct sb *b, const struct entry *e, size_t n, bool alias)
{
	size_t na = 0;

	while (na < n && e[na].anchored)
		na++;
	sb_add(b, "(?:");
	if (na > 0) {
		sb_add(b, "^");
		emit_group(b, e, na, alias);
	}
	if (n > na) {
		if (na > 0)
			sb_addc(b, '|');
		sb_add(b, "(?:^|/)");
		emit_group(b, e + na, n - na, alias);
	}
	sb_add(b, ")");
}

#define COMPILE_OPTS                                                                               \
	(PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF | PCRE2_NEVER_BACKSLASH_C)

static pcre2_code *compile_source(const char *src, size_t len, int *err)
{
	PCRE2_SIZE off;

	return pcre2_compile((PCRE2_SPTR)src, len, COMPILE_OPTS, err, &off, NULL);
}

static int add_chunk(struct regexes *r, pcre2_code *re)
{
	struct chunk *c = realloc(r->c, (r->n + 1) * sizeof(*c));

	if (!c) {
		pcre2_code_free(re);
		return -ENOMEM;
	}
	r->c = c;
	c[r->n].re = re;
	c[r->n].jit = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD) == 0;
	r->n++;
	return 0;
}

/*
 * Compiles E[0..N) into as few regexes as PCRE2's size limits allow,
 * halving the list when one regex would be too large.
 */
static int compile_entries(struct regexes *r, const struct entry *e, size_t n, bool alias,
			   char **first_source)
{
	struct sb b = {0};
	pcre2_code *re;
	int err = 0;

	if (n == 0)
		return 0;
	emit_set(&b, e, n, alias);
	if (b.oom) {
		sb_free(&b);
		return -ENOMEM;
	}
	re = compile_source(b.p, b.len, &err);
	if (!re && n > 1 &&
	    (err == PCRE2_ERROR_PATTERN_TOO_LARGE || err == PCRE2_ERROR_HEAPLIMIT ||
	     err == PCRE2_ERROR_NOMEMORY || err == PCRE2_ERROR_PARENTHESES_NEST_TOO_DEEP ||
	     err == PCRE2_ERROR_PATTERN_TOO_COMPLICATED)) {
		size_t half = n / 2;
		int rc;

		sb_free(&b);
		rc = compile_entries(r, e, half, alias, first_source);
		return rc < 0 ? rc : compile_entries(r, e + half, n - half, alias, first_source);
	}
	if (!re) {
		sb_free(&b);
		return err == PCRE2_ERROR_NOMEMORY ? -ENOMEM : -EINVAL;
	}
	if (first_source && !*first_source) {
		*first_source = b.p;
		b.p = NULL;
	}
	sb_free(&b);
	return add_chunk(r, re);
}

static void regexes_free(struct regexes *r)
{
	for (size_t i = 0; i < r->n; i++)
		pcre2_code_free(r->c[i].re);
	free(r->c);
	r->c = NULL;
	r->n = 0;
}

void sfs_globset_free(struct sfs_globset *gs)
{
	if (!gs)
		return;
	regexes_free(&gs->main);
	regexes_free(&gs->alias);
	free(gs->source);
	free(gs);
}

/* Fills E from the parsed glob G (literal prefix, rest, alias regex). */
static int make_entry(struct entry *e, const struct parsed *g, int id, const char *text, bool alias)
{
	struct sb lit = {0}, rest = {0}, full = {0};
	size_t i = 0;

	e->id = id;
	e->text = text;
	e->anchored = g->anchored;
	/* "*" and a literal: the star goes in front of the starred trie. */
	if (g->n > 1 && g->t[0].kind == TK_STAR && g->t[1].kind == TK_LIT) {
		e->star = true;
		i = 1;
	}
	while (i < g->n && (g->t[i].kind == TK_LIT || g->t[i].kind == TK_SEP)) {
		sb_addc(&lit, (char)g->t[i].c);
		i++;
	}
	for (; i < g->n; i++)
		emit_tok(&rest, &g->t[i]);
	emit_suffix(&rest, g);
	if (alias)
		emit_glob(&full, g, true);
	if (lit.oom || rest.oom || full.oom || !rest.p) {
		sb_free(&lit);
		sb_free(&rest);
		sb_free(&full);
		return -ENOMEM;
	}
	if (!lit.p) {
		lit.p = strdup("");
		if (!lit.p) {
			sb_free(&rest);
			sb_free(&full);
			return -ENOMEM;
		}
	}
	e->lit = lit.p;
	e->litlen = lit.len;
	e->rest = rest.p;
	e->full = full.p;
	return 0;
}

static void entries_free(struct entry *e, size_t n)
{
	if (!e)
		return;
	for (size_t i = 0; i < n; i++) {
		free(e[i].lit);
		free(e[i].rest);
		free(e[i].full);
	}
	free(e);
}

int sfs_glob_check(const char *glob, unsigned flags, char **err)
{
	char *re = NULL;
	int r = sfs_glob_regex(glob, flags, &re, err);

	free(re);
	return r;
}

int sfs_glob_regex(const char *glob, unsigned flags, char **regex, char **err)
{
	struct parsed g;
	struct sb b = {0};
	pcre2_code *re;
	int r, pcre_err;

	*regex = NULL;
	*err = NULL;
	r = parse_glob(glob, flags, &g, err);
	if (r < 0)
		return r;
	sb_add(&b, g.anchored ? "^" : "(?:^|/)");
	emit_glob(&b, &g, (flags & SFS_GLOB_CANONICAL) != 0);
	parsed_free(&g);
	if (b.oom) {
		sb_free(&b);
		return -ENOMEM;
	}
	/* The translation should always compile; if not, say what PCRE2 said. */
	re = compile_source(b.p, b.len, &pcre_err);
	if (!re) {
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(pcre_err, msg, sizeof(msg));
		err_set(err, EINVAL, "cannot compile: %s", (const char *)msg);
		sb_free(&b);
		return *err ? -EINVAL : -ENOMEM;
	}
	pcre2_code_free(re);
	*regex = b.p;
	return 0;
}

int sfs_globset_new(const char *const *globs, size_t n, unsigned flags, struct sfs_globset **out,
		    size_t *bad, char **err)
{
	struct sfs_globset *gs;
	struct entry *e;
	bool alias = (flags & SFS_GLOB_CANONICAL) != 0;
	int r = 0;

	*out = NULL;
	*err = NULL;
	if (bad)
		*bad = 0;
	gs = calloc(1, sizeof(*gs));
	e = calloc(n ? n : 1, sizeof(*e));
	if (!gs || !e) {
		free(gs);
		free(e);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct parsed g;

		r = parse_glob(globs[i], flags, &g, err);
		if (r < 0) {
			if (bad)
				*bad = i;
			entries_free(e, i);
			free(gs);
			return r;
		}
		r = make_entry(&e[i], &g, (int)i, globs[i], alias);
		parsed_free(&g);
		if (r < 0) {
			entries_free(e, i + 1);
			free(gs);
			return r;
		}
	}
	qsort(e, n, sizeof(*e), entry_cmp);
	r = compile_entries(&gs->main, e, n, false, &gs->source);
	if (r == 0 && alias)
		r = compile_entries(&gs->alias, e, n, true, NULL);
	entries_free(e, n);
	if (r < 0) {
		sfs_globset_free(gs);
		if (r == -EINVAL)
			err_set(err, EINVAL, "the combined pattern does not compile");
		return r;
	}
	if (!gs->source)
		gs->source = strdup("(*FAIL)");
	*out = gs;
	return 0;
}

const char *sfs_globset_source(const struct sfs_globset *gs)
{
	return gs && gs->source ? gs->source : "(*FAIL)";
}

/* ---- matching ----------------------------------------------------------- */

struct tls_match {
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *js;
};

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_ok;
static __thread struct tls_match *tls;

static void tls_destroy(void *p)
{
	struct tls_match *t = p;

	if (!t)
		return;
	pcre2_match_data_free(t->md);
	pcre2_match_context_free(t->mc);
	pcre2_jit_stack_free(t->js);
	free(t);
}

static void tls_init_key(void)
{
	tls_key_ok = pthread_key_create(&tls_key, tls_destroy) == 0;
}

/* One match block per thread, so matching allocates nothing after warm-up. */
static struct tls_match *tls_get(void)
{
	struct tls_match *t;

	if (tls)
		return tls;
	pthread_once(&tls_once, tls_init_key);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->md = pcre2_match_data_create(1, NULL);
	t->mc = pcre2_match_context_create(NULL);
	t->js = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, NULL);
	if (!t->md || !t->mc) {
		tls_destroy(t);
		return NULL;
	}
	if (t->js)
		pcre2_jit_stack_assign(t->mc, NULL, t->js);
	/* Names are short: a legitimate match never needs more than this. */
	pcre2_set_match_limit(t->mc, 1000000);
	pcre2_set_depth_limit(t->mc, 100000);
	if (tls_key_ok)
		pthread_setspecific(tls_key, t);
	tls = t;
	return t;
}

static int mark_id(pcre2_match_data *md)
{
	PCRE2_SPTR m = pcre2_get_mark(md);
	long v = 0;

	if (!m || !*m)
		return -EINVAL;
	for (; *m; m++) {
		if (*m < '0' || *m > '9' || v > 100000000)
			return -EINVAL;
		v = v * 10 + (*m - '0');
	}
	return (int)v;
}

static int run(const struct chunk *c, struct tls_match *t, const char *s, size_t len, uint32_t opts)
{
	if (c->jit)
		return pcre2_jit_match(c->re, (PCRE2_SPTR)s, len, 0, opts, t->md, t->mc);
	return pcre2_match(c->re, (PCRE2_SPTR)s, len, 0, opts, t->md, t->mc);
}

static int match_regexes(const struct regexes *r, struct tls_match *t, const char *s, size_t len,
			 size_t *end)
{
	for (size_t i = 0; i < r->n; i++) {
		int rc = run(&r->c[i], t, s, len, 0);

		if (rc == PCRE2_ERROR_NOMATCH)
			continue;
		if (rc < 0)
			return rc == PCRE2_ERROR_NOMEMORY ? -ENOMEM : -E2BIG;
		if (end)
			*end = pcre2_get_ovector_pointer(t->md)[1];
		return mark_id(t->md);
	}
	return -ENOENT;
}

static bool has_tilde_digit(const char *s, size_t len)
{
	const char *p = s, *e = s + len;

	while ((p = memchr(p, '~', (size_t)(e - p))) && p + 1 < e) {
		if (p[1] >= '0' && p[1] <= '9')
			return true;
		p++;
	}
	return false;
}

int sfs_globset_match(const struct sfs_globset *gs, const char *subject, size_t len, size_t *end)
{
	struct tls_match *t;
	int r;

	if (!gs || gs->main.n == 0)
		return -ENOENT;
	t = tls_get();
	if (!t)
		return -ENOMEM;
	r = match_regexes(&gs->main, t, subject, len, end);
	if (r == -ENOENT && gs->alias.n > 0 && has_tilde_digit(subject, len))
		r = match_regexes(&gs->alias, t, subject, len, end);
	return r;
}

int sfs_globset_match_prefix(const struct sfs_globset *gs, const char *subject, size_t len)
{
	struct tls_match *t;

	if (!gs || gs->main.n == 0)
		return 0;
	t = tls_get();
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < gs->main.n; i++) {
		int rc = run(&gs->main.c[i], t, subject, len, PCRE2_PARTIAL_HARD);

		if (rc >= 0 || rc == PCRE2_ERROR_PARTIAL)
			return 1;
		if (rc != PCRE2_ERROR_NOMATCH)
			return rc == PCRE2_ERROR_NOMEMORY ? -ENOMEM : -E2BIG;
	}
	return 0;
}
