/*
 * ruleparse: the text of one rule file to rules, each with the line it was
 * written on, and every error as "FILE:LINE: reason".
 *
 * cJSON keeps no positions, so lines come from walking the text alongside
 * the parsed tree (the text is known to be valid JSON by then): the n-th
 * member in the tree is the n-th member in the text, which makes the line
 * of every key and value exact, duplicates included.
 */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glob.h"
#include "loader.h"
#include "common/err.h"
#include "common/util.h"

/* ---- positions ---------------------------------------------------------- */

struct pos {
	const cJSON *item;
	int key_line; /* object members: the line of the key */
	int value_line;
};

struct locate {
	const char *s;
	size_t len, pos;
	size_t line_pos; /* lines are counted up to here */
	int line;
	struct pos *v;
	size_t n, cap;
	bool oom;
};

static void loc_ws(struct locate *l)
{
	while (l->pos < l->len && (unsigned char)l->s[l->pos] <= 32)
		l->pos++;
}

/* The line of the current position; positions only ever move forward. */
static int loc_line(struct locate *l)
{
	for (; l->line_pos < l->pos; l->line_pos++)
		if (l->s[l->line_pos] == '\n')
			l->line++;
	return l->line;
}

static bool loc_string(struct locate *l)
{
	if (l->pos >= l->len || l->s[l->pos] != '"')
		return false;
	for (l->pos++; l->pos < l->len; l->pos++) {
		if (l->s[l->pos] == '\\')
			l->pos++;
		else if (l->s[l->pos] == '"') {
			l->pos++;
			return true;
		}
	}
	return false;
}

static void loc_record(struct locate *l, const cJSON *item, int key_line)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct pos *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->oom = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct pos){item, key_line, loc_line(l)};
}

/* Walks ITEM in the text; false when text and tree disagree. */
static bool loc_walk(struct locate *l, const cJSON *item, int key_line, int depth)
{
	loc_ws(l);
	loc_record(l, item, key_line);
	if (l->pos >= l->len || depth > 2000 || l->oom)
		return false;
	if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
		bool obj = cJSON_IsObject(item);
		char close = obj ? '}' : ']';

		if (l->s[l->pos] != (obj ? '{' : '['))
			return false;
		l->pos++;
		for (const cJSON *c = item->child; c; c = c->next) {
			int kl = 0;

			loc_ws(l);
			if (obj) {
				kl = loc_line(l);
				if (!loc_string(l))
					return false;
				loc_ws(l);
				if (l->pos >= l->len || l->s[l->pos] != ':')
					return false;
				l->pos++;
			}
			if (!loc_walk(l, c, kl, depth + 1))
				return false;
			loc_ws(l);
			if (l->pos < l->len && l->s[l->pos] == ',')
				l->pos++;
		}
		loc_ws(l);
		if (l->pos >= l->len || l->s[l->pos] != close)
			return false;
		l->pos++;
		return true;
	}
	if (cJSON_IsString(item))
		return loc_string(l);
	while (l->pos < l->len && !strchr(",]} \t\r\n", l->s[l->pos]))
		l->pos++;
	return true;
}

static int pos_cmp(const void *a, const void *b)
{
	const struct pos *x = a, *y = b;

	return (x->item > y->item) - (x->item < y->item);
}

static int line_at(const char *s, size_t pos)
{
	int line = 1;

	for (size_t i = 0; i < pos && s[i]; i++)
		if (s[i] == '\n')
			line++;
	return line;
}

void rule_free_strings(struct sfs_rule *r)
{
	free((char *)r->pattern);
	free((char *)r->why);
	free((char *)r->overlay_file);
	free((char *)r->released_by);
	for (size_t i = 0; r->except && r->except[i]; i++)
		free((char *)r->except[i]);
	free((void *)r->except);
}

void rule_file_free(struct rule_file *f)
{
	if (!f)
		return;
	free(f->path);
	free(f->stem);
	free(f->name);
	free(f->description);
	free(f->origin);
	for (size_t i = 0; i < f->nrules; i++)
		rule_free_strings(&f->rules[i]);
	free(f->rules);
	for (size_t i = 0; i < f->nrel; i++)
		free(f->rel[i].pattern);
	free(f->rel);
	strv_free(&f->extends);
	free(f->extends_line);
	strv_free(&f->detect);
	strv_free(&f->projects);
	free(f);
}
/* Parsing state of one file. */
struct pctx {
	struct sfs_loader *l;
	struct rule_file *f;
	const char *text;
	size_t len;
	const cJSON *root;
	char **err;
	struct pos *pos; /* sorted by item */
	size_t npos;
};

/* The line of ITEM (of its key with KEY), 0 when unknown. */
static int item_line(struct pctx *c, const cJSON *item, bool key)
{
	struct pos k = {item, 0, 0}, *p;

	/* No index (the walk ran out of memory or gave up): no line. */
	if (!c->pos || c->npos == 0)
		return 0;
	p = bsearch(&k, c->pos, c->npos, sizeof(*p), pos_cmp);
	if (!p)
		return 0;
	return key && p->key_line ? p->key_line : p->value_line;
}

/* One walk over the text gives the line of every item. */
static void index_lines(struct pctx *c)
{
	struct locate l = {c->text, c->len, 0, 0, 1, NULL, 0, 0, false};

	if (!loc_walk(&l, c->root, 0, 0) || l.oom) {
		free(l.v);
		return;
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), pos_cmp);
	c->pos = l.v;
	c->npos = l.n;
}

static int perr(struct pctx *c, const cJSON *item, bool key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int perr(struct pctx *c, const cJSON *item, bool key, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	va_list ap;
	int line = item ? item_line(c, item, key) : 0;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (line > 0)
		return err_set(c->err, EINVAL, "%s:%d: %s", c->f->path, line, msg ? msg : "error");
	return err_set(c->err, EINVAL, "%s: %s", c->f->path, msg ? msg : "error");
}

static int add_rule(struct pctx *c, const cJSON *at, enum sfs_class cls, const char *key, int index,
		    const char *pattern, const char *why, const char *overlay, int tier)
{
	struct rule_file *f = c->f;
	struct sfs_rule *a = realloc(f->rules, (f->nrules + 1) * sizeof(*a));
	struct sfs_rule *r;

	if (!a)
		return -ENOMEM;
	f->rules = a;
	r = &a[f->nrules];
	memset(r, 0, sizeof(*r));
	r->cls = cls;
	r->key = key; /* static */
	r->index = index;
	r->line = item_line(c, at, false);
	r->tier = tier;
	r->pattern = strdup(pattern);
	r->why = strdup(why);
	r->overlay_file = overlay ? strdup(overlay) : NULL;
	if (!r->pattern || !r->why || (overlay && !r->overlay_file)) {
		free((char *)r->pattern);
		free((char *)r->why);
		free((char *)r->overlay_file);
		return -ENOMEM;
	}
	f->nrules++;
	return 0;
}

static int check_glob(struct pctx *c, const cJSON *at, const char *key, const char *pattern,
		      enum sfs_class cls)
{
	cleanup_free char *reason = NULL;
	int r = sfs_glob_check(pattern, sfs_class_glob_flags(cls), &reason);

	if (r == -EINVAL)
		return perr(c, at, false, "bad glob '%s' in '%s': %s", pattern, key,
			    reason ? reason : "invalid");
	return r;
}

/* KEY's value must be an array; returns it or sets the error. */
static const cJSON *want_array(struct pctx *c, const cJSON *v, const char *what, int *rc)
{
	if (!cJSON_IsArray(v)) {
		*rc = perr(c, v, false, "wrong type for '%s': expected an array of %s", v->string,
			   what);
		return NULL;
	}
	*rc = 0;
	return v;
}

static int parse_strings(struct pctx *c, const cJSON *v, struct strv *out, int **lines)
{
	const cJSON *e;
	int rc;

	if (!want_array(c, v, "strings", &rc))
		return rc;
	cJSON_ArrayForEach(e, v)
	{
		if (!cJSON_IsString(e))
			return perr(c, e, false, "wrong type in '%s': expected a string",
				    v->string);
		if (!*e->valuestring)
			return perr(c, e, false, "empty string in '%s'", v->string);
		if (strv_push(out, e->valuestring) < 0)
			return -ENOMEM;
		if (lines) {
			int *a = realloc(*lines, out->n * sizeof(*a));

			if (!a)
				return -ENOMEM;
			*lines = a;
			a[out->n - 1] = item_line(c, e, false);
		}
	}
	return 0;
}

bool rule_set_name_valid(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_'))
			return false;
	return true;
}

/* Checks the members of object O against KEYS; returns 0 or the error. */
static int check_members(struct pctx *c, const cJSON *o, const char *const *keys, const char *in)
{
	for (const cJSON *m = o->child; m; m = m->next) {
		bool known = false;

		for (const char *const *k = keys; *k; k++)
			if (strcmp(*k, m->string) == 0)
				known = true;
		if (!known) {
			if (in)
				return perr(c, m, true, "unknown key '%s' in a '%s' entry",
					    m->string, in);
			return perr(c, m, true, "unknown key '%s'", m->string);
		}
		for (const cJSON *d = o->child; d != m; d = d->next)
			if (strcmp(d->string, m->string) == 0)
				return perr(c, m, true, "duplicate key '%s'", m->string);
	}
	return 0;
}

static const cJSON *member(const cJSON *o, const char *key)
{
	for (const cJSON *m = o->child; m; m = m->next)
		if (strcmp(m->string, key) == 0)
			return m;
	return NULL;
}

/* A member that must be a string, or absent when OPTIONAL. */
static int want_string(struct pctx *c, const cJSON *o, const char *key, bool optional,
		       const char *in, const char **out)
{
	const cJSON *m = member(o, key);

	*out = NULL;
	if (!m) {
		if (optional)
			return 0;
		return perr(c, o, false, "'%s' entry without '%s'", in, key);
	}
	if (!cJSON_IsString(m))
		return perr(c, m, false, "wrong type for '%s': expected a string", key);
	if (!*m->valuestring && !optional)
		return perr(c, m, false, "'%s' must not be empty", key);
	*out = m->valuestring;
	return 0;
}

static int parse_protect(struct pctx *c, const cJSON *v)
{
	static const char *const keys[] = {"path", "why", "tier", NULL};
	const cJSON *e;
	int rc, i = 0;

	if (!want_array(c, v, "{\"path\", \"why\"} objects", &rc))
		return rc;
	cJSON_ArrayForEach(e, v)
	{
		const char *path, *why;
		const cJSON *t;
		int tier = 0;

		if (!cJSON_IsObject(e))
			return perr(c, e, false,
				    "wrong type in 'protect': expected an object with 'path' and "
				    "'why'");
		if ((rc = check_members(c, e, keys, "protect")) < 0 ||
		    (rc = want_string(c, e, "path", false, "protect", &path)) < 0 ||
		    (rc = want_string(c, e, "why", false, "protect", &why)) < 0)
			return rc;
		t = member(e, "tier");
		if (t) {
			if (!cJSON_IsNumber(t) ||
			    (t->valuedouble != 0 && t->valuedouble != 1 && t->valuedouble != 2))
				return perr(c, t, false,
					    "wrong value for 'tier': expected 0, 1 or 2");
			tier = (int)t->valuedouble;
		}
		if ((rc = check_glob(c, member(e, "path"), "protect", path, SFS_CLASS_PROTECTED)) <
			    0 ||
		    (rc = add_rule(c, member(e, "path"), SFS_CLASS_PROTECTED, "protect", i, path,
				   why, NULL, tier)) < 0)
			return rc;
		i++;
	}
	return 0;
}

/* "hide" and "private": globs, or {"path", "why"} objects. */
/* A hide entry's "except": the globs of what its path matches that stays
 * visible, onto the rule just added. */
static int parse_except(struct pctx *c, const cJSON *e, const char *key)
{
	const cJSON *v = member(e, "except"), *x;
	struct sfs_rule *r = &c->f->rules[c->f->nrules - 1];
	size_t n = 0;
	int rc;

	if (!v)
		return 0;
	if (!want_array(c, v, "globs", &rc))
		return rc;
	char **a = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	r->except = (const char *const *)a;
	cJSON_ArrayForEach(x, v)
	{
		if (!cJSON_IsString(x) || !*x->valuestring)
			return perr(c, x, false, "wrong type in 'except' of '%s': expected a glob",
				    key);
		if ((rc = check_glob(c, x, key, x->valuestring, SFS_CLASS_HIDDEN)) < 0)
			return rc;
		if (!(a[n++] = strdup(x->valuestring)))
			return -ENOMEM;
	}
	return 0;
}

static int parse_globs_why(struct pctx *c, const cJSON *v, const char *key, enum sfs_class cls,
			   const char *default_why)
{
	static const char *const keys[] = {"path", "why", NULL};
	static const char *const hide_keys[] = {"path", "why", "except", NULL};
	const cJSON *e;
	int rc, i = 0;

	if (!want_array(c, v, "globs or {\"path\", \"why\"} objects", &rc))
		return rc;
	cJSON_ArrayForEach(e, v)
	{
		const char *path, *why = NULL;
		const cJSON *at = e;

		if (cJSON_IsString(e)) {
			path = e->valuestring;
		} else if (cJSON_IsObject(e)) {
			if ((rc = check_members(c, e, cls == SFS_CLASS_HIDDEN ? hide_keys : keys,
						key)) < 0 ||
			    (rc = want_string(c, e, "path", false, key, &path)) < 0 ||
			    (rc = want_string(c, e, "why", true, key, &why)) < 0)
				return rc;
			at = member(e, "path");
		} else {
			return perr(c, e, false,
				    "wrong type in '%s': expected a glob or an object with 'path'",
				    key);
		}
		if ((rc = check_glob(c, at, key, path, cls)) < 0 ||
		    (rc = add_rule(c, at, cls, key, i, path, why && *why ? why : default_why, NULL,
				   0)) < 0)
			return rc;
		if (cJSON_IsObject(e) && (rc = parse_except(c, e, key)) < 0)
			return rc;
		i++;
	}
	return 0;
}

/* "write" and "generated": glob strings. */
static int parse_write(struct pctx *c, const cJSON *v, bool generated)
{
	const char *key = generated ? "generated" : "write";
	const cJSON *e;
	int rc, i = 0;

	/* A generated tree lifts protections: a repository may not lift its
	 * own. */
	if (generated && c->f->trust == SFS_TRUST_PROJECT)
		return perr(c, v, true,
			    "'generated' is only allowed in shipped and user-level rule files");
	if (!want_array(c, v, "globs", &rc))
		return rc;
	cJSON_ArrayForEach(e, v)
	{
		if (!cJSON_IsString(e))
			return perr(c, e, false, "wrong type in '%s': expected a glob string", key);
		if ((rc = check_glob(c, e, key, e->valuestring, SFS_CLASS_WRITABLE)) < 0 ||
		    (rc = add_rule(c, e, SFS_CLASS_WRITABLE, key, i, e->valuestring,
				   generated ? "a generated tree (build output): writable, and "
					       "build-tool protections do not apply in it"
					     : "matched by a write rule",
				   NULL, 0)) < 0)
			return rc;
		c->f->rules[c->f->nrules - 1].generated = generated;
		i++;
	}
	return 0;
}

/* The host file an overlay serves, checked to be a regular file. */
static int overlay_file(struct pctx *c, const cJSON *at, const char *file, char **out)
{
	struct stat st;
	char *real;
	int r;

	*out = NULL;
	if (!strchr(file, '/')) {
		if (!strcmp(file, ".") || !strcmp(file, ".."))
			return perr(c, at, false, "bad overlay file '%s'", file);
		if (!c->l->overlays_dir)
			return perr(c, at, false, "overlay file '%s': no shipped overlay directory",
				    file);
		r = asprintf(out, "%s/%s", c->l->overlays_dir, file);
	} else if (c->f->trust != SFS_TRUST_USER) {
		return perr(c, at, false,
			    "overlay file '%s': only user-level rule files may name a host path; "
			    "name a file of the shipped overlay directory instead",
			    file);
	} else if (file[0] == '/') {
		r = asprintf(out, "%s", file);
	} else {
		const char *slash = strrchr(c->f->path, '/');

		if (slash)
			r = asprintf(out, "%.*s/%s", (int)(slash - c->f->path), c->f->path, file);
		else
			r = asprintf(out, "%s", file);
	}
	if (r < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	r = stat(*out, &st);
	if (r < 0 || !S_ISREG(st.st_mode)) {
		r = perr(c, at, false, "overlay file '%s': %s", *out,
			 r < 0 ? strerror(errno) : "not a regular file");
		free(*out);
		*out = NULL;
		return r;
	}
	/* The daemon opens it later, maybe from another directory. */
	real = realpath(*out, NULL);
	if (real) {
		free(*out);
		*out = real;
	}
	return 0;
}

static int parse_overlay(struct pctx *c, const cJSON *v)
{
	static const char *const keys[] = {"path", "file", "why", NULL};
	const cJSON *e;
	int rc, i = 0;

	if (!want_array(c, v, "{\"path\", \"file\"} objects", &rc))
		return rc;
	cJSON_ArrayForEach(e, v)
	{
		const char *path, *file, *why;
		cleanup_free char *host = NULL, *dflt = NULL;

		if (!cJSON_IsObject(e))
			return perr(c, e, false,
				    "wrong type in 'overlay': expected an object with 'path' and "
				    "'file'");
		if ((rc = check_members(c, e, keys, "overlay")) < 0 ||
		    (rc = want_string(c, e, "path", false, "overlay", &path)) < 0 ||
		    (rc = want_string(c, e, "file", false, "overlay", &file)) < 0 ||
		    (rc = want_string(c, e, "why", true, "overlay", &why)) < 0)
			return rc;
		if ((rc = check_glob(c, member(e, "path"), "overlay", path, SFS_CLASS_OVERLAY)) <
			    0 ||
		    (rc = overlay_file(c, member(e, "file"), file, &host)) < 0)
			return rc;
		if (!why || !*why) {
			if (asprintf(&dflt, "served read-only from '%s'", host) < 0)
				return -ENOMEM;
			why = dflt;
		}
		rc = add_rule(c, member(e, "path"), SFS_CLASS_OVERLAY, "overlay", i, path, why,
			      host, 0);
		if (rc < 0)
			return rc;
		i++;
	}
	return 0;
}

static int parse_release(struct pctx *c, const cJSON *v)
{
	const cJSON *e;
	int rc;

	if (c->f->trust != SFS_TRUST_USER)
		return perr(c, v, true,
			    "'release' is only allowed in user-level rule files and on the command "
			    "line");
	if (!want_array(c, v, "strings", &rc))
		return rc;
	cJSON_ArrayForEach(e, v)
	{
		struct rule_release *a;

		if (!cJSON_IsString(e) || !*e->valuestring)
			return perr(c, e, false,
				    "wrong type in 'release': expected a protected path");
		a = realloc(c->f->rel, (c->f->nrel + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		c->f->rel = a;
		a[c->f->nrel].pattern = strdup(e->valuestring);
		if (!a[c->f->nrel].pattern)
			return -ENOMEM;
		a[c->f->nrel].line = item_line(c, e, false);
		c->f->nrel++;
	}
	return 0;
}

/* "projects": the absolute paths of the projects a user-level file is
 * for, so that a release for one project lives in the user's own
 * configuration and never in the project. */
static int parse_projects(struct pctx *c, const cJSON *v)
{
	int rc;

	if (c->f->trust != SFS_TRUST_USER)
		return perr(c, v, true,
			    "'projects' is only allowed in user-level rule files and on the "
			    "command line");
	if ((rc = parse_strings(c, v, &c->f->projects, NULL)) < 0)
		return rc;
	for (const cJSON *e = v->child; e; e = e->next)
		if (e->valuestring[0] != '/')
			return perr(c, e, false,
				    "wrong type in 'projects': expected an absolute path");
	return 0;
}

static int parse_detect(struct pctx *c, const cJSON *v)
{
	int rc = parse_strings(c, v, &c->f->detect, NULL);

	if (rc < 0)
		return rc;
	for (const cJSON *e = v->child; e; e = e->next)
		if (strchr(e->valuestring, '/') || !strcmp(e->valuestring, ".") ||
		    !strcmp(e->valuestring, ".."))
			return perr(
				c, e, false,
				"bad detect marker '%s': markers name files at the project root",
				e->valuestring);
	return 0;
}

/* Where a syntax error is: a short excerpt of the text there. */
static int syntax_error(struct pctx *c, const char *at)
{
	size_t pos = at && at >= c->text && at <= c->text + c->len ? (size_t)(at - c->text) : 0;
	size_t n = 0;
	char excerpt[24];
	bool only_ws = true;

	for (size_t i = 0; i < c->len; i++)
		if ((unsigned char)c->text[i] > 32)
			only_ws = false;
	if (only_ws)
		return err_set(c->err, EINVAL, "%s:%d: syntax error: empty file", c->f->path,
			       line_at(c->text, c->len));
	if (pos >= c->len)
		return err_set(c->err, EINVAL, "%s:%d: syntax error: unexpected end of file",
			       c->f->path, line_at(c->text, c->len));
	while (n < sizeof(excerpt) - 1 && pos + n < c->len && c->text[pos + n] != '\n' &&
	       c->text[pos + n] != '\r') {
		unsigned char ch = (unsigned char)c->text[pos + n];

		excerpt[n++] = ch < 32 || ch == 127 ? '?' : (char)ch;
	}
	excerpt[n] = '\0';
	return err_set(c->err, EINVAL, "%s:%d: syntax error near '%s'", c->f->path,
		       line_at(c->text, pos), excerpt);
}

/* A "\u0000" escape would silently cut a string short in cJSON. */
static const char *find_escaped_nul(const char *s, size_t len)
{
	for (size_t i = 0; i + 6 <= len; i++) {
		size_t bs = 0;

		if (s[i] != '\\' || s[i + 1] != 'u' || strncmp(s + i + 2, "0000", 4))
			continue;
		for (size_t j = i; j > 0 && s[j - 1] == '\\'; j--)
			bs++;
		if (bs % 2 == 0)
			return s + i;
	}
	return NULL;
}

/* Parses TEXT (NUL-terminated, LEN bytes) into F. */
static int parse_text(struct sfs_loader *l, struct rule_file *f, const char *text, size_t len,
		      char **err)
{
	static const char *const keys[] = {
		"name",	   "description", "extends", "detect",	"write", "generated", "private",
		"protect", "hide",	  "overlay", "release", "owned", "projects", NULL};
	struct pctx c = {l, f, text, len, NULL, err, NULL, 0};
	const char *end = NULL, *p;
	cJSON *root;
	int rc = 0;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		c.text = text += 3;
		c.len = len -= 3;
	}
	if ((p = memchr(text, '\0', len)))
		return err_set(err, EINVAL, "%s:%d: NUL byte in rule file", f->path,
			       line_at(text, (size_t)(p - text)));
	if ((p = find_escaped_nul(text, len)))
		return err_set(err, EINVAL, "%s:%d: string contains a NUL character (\\u0000)",
			       f->path, line_at(text, (size_t)(p - text)));
	root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
	if (!root)
		return syntax_error(&c, end);
	c.root = root;
	index_lines(&c);
	if (!cJSON_IsObject(root)) {
		rc = perr(&c, root, false, "wrong type: a rule file is one JSON object");
		goto out;
	}
	if ((rc = check_members(&c, root, keys, NULL)) < 0)
		goto out;
	for (const cJSON *m = root->child; m && rc == 0; m = m->next) {
		const char *k = m->string;

		if (!strcmp(k, "name") || !strcmp(k, "description")) {
			char **dst = !strcmp(k, "name") ? &f->name : &f->description;

			if (!cJSON_IsString(m)) {
				rc = perr(&c, m, false, "wrong type for '%s': expected a string",
					  k);
				break;
			}
			*dst = strdup(m->valuestring);
			if (!*dst)
				rc = -ENOMEM;
		} else if (!strcmp(k, "extends")) {
			rc = parse_strings(&c, m, &f->extends, &f->extends_line);
		} else if (!strcmp(k, "detect")) {
			rc = parse_detect(&c, m);
		} else if (!strcmp(k, "write") || !strcmp(k, "generated")) {
			rc = parse_write(&c, m, !strcmp(k, "generated"));
		} else if (!strcmp(k, "private")) {
			rc = parse_globs_why(&c, m, "private", SFS_CLASS_PRIVATE,
					     "a private directory: served from the project's store "
					     "outside the source tree, never from the source tree");
		} else if (!strcmp(k, "protect")) {
			rc = parse_protect(&c, m);
		} else if (!strcmp(k, "hide")) {
			rc = parse_globs_why(&c, m, "hide", SFS_CLASS_HIDDEN,
					     "secrets are not readable inside the sandbox");
		} else if (!strcmp(k, "owned")) {
			if (!cJSON_IsBool(m))
				rc = perr(&c, m, false,
					  "wrong type for 'owned': expected true or "
					  "false");
			else
				f->owned = cJSON_IsTrue(m) ? 1 : 0;
		} else if (!strcmp(k, "overlay")) {
			rc = parse_overlay(&c, m);
		} else if (!strcmp(k, "release")) {
			rc = parse_release(&c, m);
		} else if (!strcmp(k, "projects")) {
			rc = parse_projects(&c, m);
		}
	}
	if (rc == -ENOMEM)
		err_set(err, -rc, "%s: out of memory", f->path);
out:
	free(c.pos);
	cJSON_Delete(root);
	return rc;
}

static int read_fd(int fd, const char *path, char **text, size_t *len, char **err)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb;

			if (cap > MAX_RULE_FILE) {
				free(buf);
				return err_set(err, EFBIG, "rule file '%s' is larger than 1 MiB",
					       path);
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			free(buf);
			return err_set(err, e, "cannot read rule file '%s': %s", path, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > MAX_RULE_FILE) {
		free(buf);
		return err_set(err, EFBIG, "rule file '%s' is larger than 1 MiB", path);
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static struct rule_file *rule_file_new(const char *path, const char *stem, enum sfs_trust trust,
				       const char *origin)
{
	struct rule_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->path = strdup(path);
	f->stem = stem ? strdup(stem) : NULL;
	f->origin = strdup(origin ? origin : "");
	f->trust = trust;
	f->owned = -1;
	if (!f->path || (stem && !f->stem) || !f->origin) {
		rule_file_free(f);
		return NULL;
	}
	return f;
}

int rule_file_parse(struct sfs_loader *l, const char *text, size_t len, const char *path,
		    const char *stem, enum sfs_trust trust, const char *origin,
		    struct rule_file **out, char **err)
{
	struct rule_file *f = rule_file_new(path, stem, trust, origin);
	int r;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	r = parse_text(l, f, text, len, err);
	if (r < 0) {
		rule_file_free(f);
		return r;
	}
	*out = f;
	return 0;
}

int rule_file_parse_fd(struct sfs_loader *l, int fd, const char *path, const char *stem,
		       enum sfs_trust trust, const char *origin, struct rule_file **out, char **err)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	r = read_fd(fd, path, &text, &len, err);
	if (r < 0)
		return r;
	return rule_file_parse(l, text, len, path, stem, trust, origin, out, err);
}

int rule_file_open(const char *path, char **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return err_set(err, errno, "cannot open rule file '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, EINVAL, "cannot read rule file '%s': not a regular file", path);
	}
	return fd;
}
