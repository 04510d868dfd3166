/*
 * rules: rule files (JSON, cJSON) to a compiled policy: sources, trust
 * levels, extends, detection, release, and error messages that name file,
 * line and reason (see rules.h).
 *
 * cJSON keeps no positions, so lines come from walking the text alongside
 * the parsed tree (the text is known to be valid JSON by then): the n-th
 * member in the tree is the n-th member in the text, which makes the line
 * of every key and value exact, duplicates included.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "glob.h"
#include "rules.h"
#include "util.h"

#define MAX_RULE_FILE (1024 * 1024)

/* ---- small helpers ------------------------------------------------------ */

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ __attribute__((cleanup(closep)))

static int seterr(char **errmsg, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int seterr(char **errmsg, int rc, const char *fmt, ...)
{
	va_list ap;

	if (errmsg) {
		free(*errmsg);
		va_start(ap, fmt);
		if (vasprintf(errmsg, fmt, ap) < 0)
			*errmsg = NULL;
		va_end(ap);
	}
	return rc;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- rule options ------------------------------------------------------- */

static int push_str(char ***v, size_t *n, const char *s)
{
	char **a = realloc(*v, (*n + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	*v = a;
	a[*n] = strdup(s);
	if (!a[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

int sfs_rule_opts_parse(struct sfs_rule_opts *o, int opt, const char *arg)
{
	int r;

	switch (opt) {
	case 't':
		r = push_str(&o->types, &o->ntypes, arg);
		return r < 0 ? r : 1;
	case 'r':
		r = push_str(&o->files, &o->nfiles, arg);
		return r < 0 ? r : 1;
	case SFS_OPT_NO_DETECT:
		o->no_detect = true;
		return 1;
	default:
		return 0;
	}
}

void sfs_rule_opts_free(struct sfs_rule_opts *o)
{
	for (size_t i = 0; i < o->ntypes; i++)
		free(o->types[i]);
	for (size_t i = 0; i < o->nfiles; i++)
		free(o->files[i]);
	free(o->types);
	free(o->files);
	memset(o, 0, sizeof(*o));
}

/* ---- directories -------------------------------------------------------- */

const char *sfs_shipped_rules_dir(void)
{
	const char *e = getenv("SANDY_RULES_DIR");

	if (e && *e)
		return e;
	if (is_dir(SANDY_RULES_DIR))
		return SANDY_RULES_DIR;
	return SANDY_SOURCE_RULES_DIR;
}

const char *sfs_shipped_overlays_dir(void)
{
	static __thread char buf[4096];
	const char *e = getenv("SANDY_OVERLAYS_DIR");

	if (e && *e)
		return e;
	snprintf(buf, sizeof(buf), "%s/../ro-overlays", sfs_shipped_rules_dir());
	if (is_dir(buf))
		return buf;
	return SANDY_SOURCE_OVERLAYS_DIR;
}

/* The user's rules.d, malloc'ed, or NULL when there is no home. */
static char *user_rules_dir(void)
{
	const char *e = getenv("SANDY_CONFIG_DIR");
	char *d = NULL;

	if (e && *e) {
		if (asprintf(&d, "%s/rules.d", e) < 0)
			d = NULL;
		return d;
	}
	e = getenv("XDG_CONFIG_HOME");
	if (e && *e == '/') {
		if (asprintf(&d, "%s/sandy/rules.d", e) < 0)
			d = NULL;
		return d;
	}
	e = getenv("HOME");
	if (e && *e) {
		if (asprintf(&d, "%s/.config/sandy/rules.d", e) < 0)
			d = NULL;
		return d;
	}
	return NULL;
}

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

/* ---- one rule file ------------------------------------------------------ */

struct lrelease {
	char *pattern;
	int line;
};

struct lfile {
	char *path;
	char *stem; /* shipped files: the NAME of NAME.json */
	char *name, *description, *origin;
	enum sfs_trust trust;
	struct sfs_rule *rules;
	size_t nrules;
	struct lrelease *rel;
	size_t nrel;
	char **extends;
	int *extends_line;
	size_t nextends;
	char **detect;
	size_t ndetect;
	int owned; /* "owned": -1 when absent */
};

struct sfs_loader {
	char *shipped_dir, *overlays_dir;
	struct lfile **files;
	size_t nfiles;
	const char **chain; /* stems being loaded, for extends cycles */
	size_t nchain;
};

static void rule_free_strings(struct sfs_rule *r)
{
	free((char *)r->pattern);
	free((char *)r->why);
	free((char *)r->overlay_file);
	free((char *)r->released_by);
}

static void lfile_free(struct lfile *f)
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
	for (size_t i = 0; i < f->nextends; i++)
		free(f->extends[i]);
	free(f->extends);
	free(f->extends_line);
	for (size_t i = 0; i < f->ndetect; i++)
		free(f->detect[i]);
	free(f->detect);
	free(f);
}

/* Parsing state of one file. */
struct pctx {
	struct sfs_loader *l;
	struct lfile *f;
	const char *text;
	size_t len;
	const cJSON *root;
	char **errmsg;
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
		return seterr(c->errmsg, -EINVAL, "%s:%d: %s", c->f->path, line,
			      msg ? msg : "error");
	return seterr(c->errmsg, -EINVAL, "%s: %s", c->f->path, msg ? msg : "error");
}

static int add_rule(struct pctx *c, const cJSON *at, enum sfs_class cls, const char *key, int index,
		    const char *pattern, const char *why, const char *overlay, int tier)
{
	struct lfile *f = c->f;
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

static unsigned glob_flags_for(enum sfs_class cls)
{
	if (cls == SFS_CLASS_WRITABLE)
		return 0;
	if (cls == SFS_CLASS_OVERLAY)
		return SFS_GLOB_CANONICAL | SFS_GLOB_EXACT;
	return SFS_GLOB_CANONICAL;
}

static int check_glob(struct pctx *c, const cJSON *at, const char *key, const char *pattern,
		      enum sfs_class cls)
{
	cleanup_free char *reason = NULL;
	int r = sfs_glob_check(pattern, glob_flags_for(cls), &reason);

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

static int parse_strings(struct pctx *c, const cJSON *v, char ***out, int **lines, size_t *n)
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
		if (push_str(out, n, e->valuestring) < 0)
			return -ENOMEM;
		if (lines) {
			int *a = realloc(*lines, *n * sizeof(*a));

			if (!a)
				return -ENOMEM;
			*lines = a;
			a[*n - 1] = item_line(c, e, false);
		}
	}
	return 0;
}

static bool valid_set_name(const char *s)
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
static int parse_globs_why(struct pctx *c, const cJSON *v, const char *key, enum sfs_class cls,
			   const char *default_why)
{
	static const char *const keys[] = {"path", "why", NULL};
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
			if ((rc = check_members(c, e, keys, key)) < 0 ||
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
		struct lrelease *a;

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

static int parse_detect(struct pctx *c, const cJSON *v)
{
	int rc = parse_strings(c, v, &c->f->detect, NULL, &c->f->ndetect);

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
		return seterr(c->errmsg, -EINVAL, "%s:%d: syntax error: empty file", c->f->path,
			      line_at(c->text, c->len));
	if (pos >= c->len)
		return seterr(c->errmsg, -EINVAL, "%s:%d: syntax error: unexpected end of file",
			      c->f->path, line_at(c->text, c->len));
	while (n < sizeof(excerpt) - 1 && pos + n < c->len && c->text[pos + n] != '\n' &&
	       c->text[pos + n] != '\r') {
		unsigned char ch = (unsigned char)c->text[pos + n];

		excerpt[n++] = ch < 32 || ch == 127 ? '?' : (char)ch;
	}
	excerpt[n] = '\0';
	return seterr(c->errmsg, -EINVAL, "%s:%d: syntax error near '%s'", c->f->path,
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
static int parse_text(struct sfs_loader *l, struct lfile *f, const char *text, size_t len,
		      char **errmsg)
{
	static const char *const keys[] = {
		"name",	   "description", "extends", "detect",	"write", "generated", "private",
		"protect", "hide",	  "overlay", "release", "owned", NULL};
	struct pctx c = {l, f, text, len, NULL, errmsg, NULL, 0};
	const char *end = NULL, *p;
	cJSON *root;
	int rc = 0;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		c.text = text += 3;
		c.len = len -= 3;
	}
	if ((p = memchr(text, '\0', len)))
		return seterr(errmsg, -EINVAL, "%s:%d: NUL byte in rule file", f->path,
			      line_at(text, (size_t)(p - text)));
	if ((p = find_escaped_nul(text, len)))
		return seterr(errmsg, -EINVAL, "%s:%d: string contains a NUL character (\\u0000)",
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
			rc = parse_strings(&c, m, &f->extends, &f->extends_line, &f->nextends);
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
		}
	}
	if (rc == -ENOMEM)
		seterr(errmsg, rc, "%s: out of memory", f->path);
out:
	free(c.pos);
	cJSON_Delete(root);
	return rc;
}

static int read_fd(int fd, const char *path, char **text, size_t *len, char **errmsg)
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
				return seterr(errmsg, -EFBIG, "rule file '%s' is larger than 1 MiB",
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
			return seterr(errmsg, -e, "cannot read rule file '%s': %s", path,
				      strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > MAX_RULE_FILE) {
		free(buf);
		return seterr(errmsg, -EFBIG, "rule file '%s' is larger than 1 MiB", path);
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static struct lfile *lfile_new(const char *path, const char *stem, enum sfs_trust trust,
			       const char *origin)
{
	struct lfile *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->path = strdup(path);
	f->stem = stem ? strdup(stem) : NULL;
	f->origin = strdup(origin ? origin : "");
	f->trust = trust;
	f->owned = -1;
	if (!f->path || (stem && !f->stem) || !f->origin) {
		lfile_free(f);
		return NULL;
	}
	return f;
}

static int parse_fd(struct sfs_loader *l, int fd, const char *path, const char *stem,
		    enum sfs_trust trust, const char *origin, struct lfile **out, char **errmsg)
{
	cleanup_free char *text = NULL;
	struct lfile *f;
	size_t len = 0;
	int r;

	*out = NULL;
	r = read_fd(fd, path, &text, &len, errmsg);
	if (r < 0)
		return r;
	f = lfile_new(path, stem, trust, origin);
	if (!f)
		return -ENOMEM;
	r = parse_text(l, f, text, len, errmsg);
	if (r < 0) {
		lfile_free(f);
		return r;
	}
	*out = f;
	return 0;
}

static int open_rule_file(const char *path, char **errmsg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return seterr(errmsg, -errno, "cannot open rule file '%s': %s", path,
			      strerror(errno));
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		return seterr(errmsg, -EINVAL, "cannot read rule file '%s': not a regular file",
			      path);
	}
	return fd;
}

/* ---- the loader --------------------------------------------------------- */

struct sfs_loader *sfs_loader_new(const char *shipped_dir, const char *overlays_dir)
{
	struct sfs_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->shipped_dir = shipped_dir ? strdup(shipped_dir) : NULL;
	l->overlays_dir = overlays_dir ? strdup(overlays_dir) : NULL;
	if ((shipped_dir && !l->shipped_dir) || (overlays_dir && !l->overlays_dir)) {
		sfs_loader_free(l);
		return NULL;
	}
	return l;
}

void sfs_loader_free(struct sfs_loader *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nfiles; i++)
		lfile_free(l->files[i]);
	free(l->files);
	free(l->chain);
	free(l->shipped_dir);
	free(l->overlays_dir);
	free(l);
}

static bool loaded(const struct sfs_loader *l, const char *stem)
{
	for (size_t i = 0; i < l->nfiles; i++)
		if (l->files[i]->stem && !strcmp(l->files[i]->stem, stem))
			return true;
	return false;
}

static int load_shipped(struct sfs_loader *l, const char *name, const char *origin, char **errmsg);

/* Resolves F's extends, then takes ownership of F. */
static int commit(struct sfs_loader *l, struct lfile *f, char **errmsg)
{
	struct lfile **a;
	const char **chain;
	int r = 0;

	chain = realloc(l->chain, (l->nchain + 1) * sizeof(*chain));
	if (!chain) {
		lfile_free(f);
		return -ENOMEM;
	}
	l->chain = chain;
	chain[l->nchain++] = f->stem ? f->stem : "";
	for (size_t i = 0; i < f->nextends && r == 0; i++) {
		const char *x = f->extends[i];
		cleanup_free char *path = NULL, *origin = NULL, *cycle = NULL;
		size_t k;

		if (!valid_set_name(x)) {
			r = seterr(errmsg, -EINVAL, "%s:%d: bad rule set name '%s' in 'extends'",
				   f->path, f->extends_line[i], x);
			break;
		}
		for (k = 0; k < l->nchain; k++)
			if (!strcmp(l->chain[k], x))
				break;
		if (k < l->nchain) {
			size_t sz = 0;
			FILE *m = open_memstream(&cycle, &sz);

			if (!m) {
				r = -ENOMEM;
				break;
			}
			for (size_t j = k; j < l->nchain; j++)
				fprintf(m, "'%s' -> ", l->chain[j]);
			fprintf(m, "'%s'", x);
			fclose(m);
			r = seterr(errmsg, -ELOOP, "%s:%d: 'extends' cycle: %s", f->path,
				   f->extends_line[i], cycle ? cycle : "");
			break;
		}
		if (loaded(l, x))
			continue;
		if (!l->shipped_dir || asprintf(&path, "%s/%s.json", l->shipped_dir, x) < 0 ||
		    access(path, F_OK) < 0) {
			r = seterr(errmsg, -ENOENT,
				   "%s:%d: unknown rule set '%s' in 'extends' (no '%s/%s.json')",
				   f->path, f->extends_line[i], x,
				   l->shipped_dir ? l->shipped_dir : "(none)", x);
			break;
		}
		if (asprintf(&origin, "extended by '%s'", f->stem ? f->stem : f->path) < 0) {
			r = -ENOMEM;
			break;
		}
		r = load_shipped(l, x, origin, errmsg);
	}
	l->nchain--;
	if (r < 0) {
		lfile_free(f);
		return r;
	}
	a = realloc(l->files, (l->nfiles + 1) * sizeof(*a));
	if (!a) {
		lfile_free(f);
		return -ENOMEM;
	}
	l->files = a;
	a[l->nfiles++] = f;
	return 0;
}

static int parse_shipped(struct sfs_loader *l, const char *name, const char *origin,
			 struct lfile **out, char **errmsg)
{
	cleanup_free char *path = NULL;
	_cleanup_close_ int fd = -1;

	if (asprintf(&path, "%s/%s.json", l->shipped_dir, name) < 0)
		return -ENOMEM;
	fd = open_rule_file(path, errmsg);
	if (fd < 0)
		return fd;
	return parse_fd(l, fd, path, name, SFS_TRUST_SHIPPED, origin, out, errmsg);
}

static int load_shipped(struct sfs_loader *l, const char *name, const char *origin, char **errmsg)
{
	struct lfile *f;
	int r;

	if (loaded(l, name))
		return 0;
	r = parse_shipped(l, name, origin, &f, errmsg);
	if (r < 0)
		return r;
	return commit(l, f, errmsg);
}

int sfs_loader_add_type(struct sfs_loader *l, const char *name, const char *origin, char **errmsg)
{
	cleanup_free char *path = NULL;

	if (!valid_set_name(name))
		return seterr(errmsg, -EINVAL, "bad project type '%s'", name);
	if (!l->shipped_dir)
		return seterr(errmsg, -ENOENT, "unknown project type '%s'", name);
	if (asprintf(&path, "%s/%s.json", l->shipped_dir, name) < 0)
		return -ENOMEM;
	if (access(path, F_OK) < 0)
		return seterr(errmsg, -ENOENT, "unknown project type '%s' (no '%s')", name, path);
	return load_shipped(l, name, origin, errmsg);
}

int sfs_loader_add_file(struct sfs_loader *l, const char *path, enum sfs_trust trust,
			const char *origin, char **errmsg)
{
	_cleanup_close_ int fd = open_rule_file(path, errmsg);
	struct lfile *f;
	int r;

	if (fd < 0)
		return fd;
	r = parse_fd(l, fd, path, NULL, trust, origin, &f, errmsg);
	if (r < 0)
		return r;
	return commit(l, f, errmsg);
}

int sfs_loader_add_buffer(struct sfs_loader *l, const char *display, const char *text, size_t len,
			  enum sfs_trust trust, const char *origin, char **errmsg)
{
	cleanup_free char *copy = NULL;
	struct lfile *f;
	int r;

	if (len > MAX_RULE_FILE)
		return seterr(errmsg, -EFBIG, "rule file '%s' is larger than 1 MiB", display);
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	f = lfile_new(display, NULL, trust, origin);
	if (!f)
		return -ENOMEM;
	r = parse_text(l, f, copy, len, errmsg);
	if (r < 0) {
		lfile_free(f);
		return r;
	}
	return commit(l, f, errmsg);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the *.json files in DIR; *N = 0 when DIR is missing. */
static int list_json(const char *dir, char ***out, size_t *n, char **errmsg)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return seterr(errmsg, -errno, "cannot open rules directory '%s': %s", dir,
			      strerror(errno));
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len <= 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 5, ".json"))
			continue;
		if (push_str(out, n, e->d_name) < 0) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_str);
	return 0;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- detection ---------------------------------------------------------- */

/* Markers are looked for this deep below SOURCE (monorepos: packages/x,
 * crates/y, services/a/b), in at most this many directories, and a type
 * is applied at most at this many places. */
#define DETECT_DEPTH	  4
#define DETECT_MAX_DIRS	  4096
#define DETECT_MAX_PLACES 32

/* Write, generated and private rules: what detection adds. */
static bool detected_only(const struct sfs_rule *r)
{
	return r->cls == SFS_CLASS_WRITABLE || r->cls == SFS_CLASS_PRIVATE;
}

/*
 * PATTERN as it applies below directory DIR (relative to SOURCE): an
 * anchored pattern is anchored at DIR, a floating one floats below it.
 */
static char *reroot(const char *dir, const char *pattern)
{
	size_t len = strlen(pattern);
	bool anchored;
	char *out = NULL, *esc = malloc(2 * strlen(dir) + 1), *e = esc;

	if (!esc)
		return NULL;
	for (const char *d = dir; *d; d++) {
		if (strchr("*?[\\", *d))
			*e++ = '\\';
		*e++ = *d;
	}
	*e = '\0';
	if (pattern[0] == '/') {
		anchored = true;
		pattern++;
	} else if (!strncmp(pattern, "**/", 3)) {
		anchored = false;
		pattern += 3;
	} else {
		while (len > 0 && pattern[len - 1] == '/')
			len--;
		anchored = memchr(pattern, '/', len) != NULL;
	}
	if (asprintf(&out, "/%s/%s%s", esc, anchored ? "" : "**/", pattern) < 0)
		out = NULL;
	free(esc);
	return out;
}

/*
 * F's rules once detection has spoken: its protections always; its write,
 * generated and private rules as written when a marker is at the root
 * (ROOT), and re-rooted at each of the NDIRS subdirectories where one is.
 */
static int apply_detection(struct lfile *f, bool root, char *const *dirs, size_t ndirs)
{
	size_t n = 0, extra = 0;

	for (size_t i = 0; i < f->nrules; i++)
		if (detected_only(&f->rules[i]))
			extra++;
	struct sfs_rule *a = calloc(f->nrules + extra * ndirs + 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < f->nrules; i++) {
		struct sfs_rule *r = &f->rules[i];

		for (size_t d = 0; d < ndirs && detected_only(r); d++) {
			a[n] = *r;
			a[n].pattern = reroot(dirs[d], r->pattern);
			a[n].why = strdup(r->why);
			a[n].overlay_file = NULL;
			a[n].released_by = NULL;
			if (!a[n].pattern || !a[n].why) {
				rule_free_strings(&a[n]);
				for (size_t k = 0; k < n; k++)
					if (detected_only(&a[k]))
						rule_free_strings(&a[k]);
				free(a);
				return -ENOMEM;
			}
			n++;
		}
	}
	/* The originals go last, so a failure above leaves F as it was. */
	for (size_t i = 0; i < f->nrules; i++) {
		if (!root && detected_only(&f->rules[i]))
			rule_free_strings(&f->rules[i]);
		else
			a[n++] = f->rules[i];
	}
	free(f->rules);
	f->rules = a;
	f->nrules = n;
	return 0;
}

/* A shipped type and where its markers were found. */
struct candidate {
	struct lfile *f;
	const char *root_marker;
	char **dirs; /* subdirectories, relative to SOURCE */
	char *origin;
	size_t ndirs, norigin;
};

struct detect_scan {
	struct candidate *cands;
	size_t ncands;
	char **skip; /* directory names never searched (private ones) */
	size_t nskip;
	size_t dirs_seen;
};

static int note_hit(struct candidate *c, const char *dir, const char *marker)
{
	cleanup_free char *where = NULL;

	if (*dir) {
		if (c->ndirs == DETECT_MAX_PLACES ||
		    (c->ndirs && !strcmp(c->dirs[c->ndirs - 1], dir)))
			return 0;
		if (push_str(&c->dirs, &c->ndirs, dir) < 0)
			return -ENOMEM;
	} else {
		if (c->root_marker)
			return 0;
		c->root_marker = marker;
	}
	if (asprintf(&where, "%s%s%s%s", c->origin ? c->origin : "detected: ",
		     c->origin ? ", " : "", dir, *dir ? "/" : "") < 0)
		return -ENOMEM;
	free(c->origin);
	c->origin = NULL;
	if (asprintf(&c->origin, "%s%s", where, marker) < 0) {
		c->origin = NULL;
		return -ENOMEM;
	}
	return 0;
}

static bool skipped_name(const struct detect_scan *s, const char *name)
{
	if (name[0] == '.')
		return true; /* .git, .venv, editor and tool state */
	for (size_t i = 0; i < s->nskip; i++)
		if (!strcmp(s->skip[i], name))
			return true;
	return false;
}

/* Looks for markers in directory FD (DIR relative to SOURCE), then below. */
static int scan_dir(struct detect_scan *s, int fd, const char *dir, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	char **subdirs = NULL;
	size_t nsub = 0;
	int r = 0;

	if (!d) {
		close(fd);
		return 0; /* unreadable: nothing detected there */
	}
	s->dirs_seen++;
	while (r == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		for (size_t i = 0; r == 0 && i < s->ncands; i++) {
			struct candidate *c = &s->cands[i];

			for (size_t m = 0; m < c->f->ndetect; m++)
				if (fnmatch(c->f->detect[m], e->d_name, FNM_PERIOD) == 0) {
					r = note_hit(c, dir, c->f->detect[m]);
					break;
				}
		}
		bool is_dir = e->d_type == DT_DIR;
		if (e->d_type == DT_UNKNOWN) {
			struct stat st;
			is_dir = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				 S_ISDIR(st.st_mode);
		}
		if (r == 0 && is_dir && depth < DETECT_DEPTH && !skipped_name(s, e->d_name))
			r = push_str(&subdirs, &nsub, e->d_name);
	}
	if (nsub)
		qsort(subdirs, nsub, sizeof(*subdirs), cmp_str);
	for (size_t i = 0; r == 0 && i < nsub && s->dirs_seen < DETECT_MAX_DIRS; i++) {
		cleanup_free char *path = NULL;
		int sub = openat(dirfd(d), subdirs[i],
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

		if (sub < 0)
			continue;
		if (asprintf(&path, "%s%s%s", dir, *dir ? "/" : "", subdirs[i]) < 0) {
			close(sub);
			r = -ENOMEM;
			break;
		}
		r = scan_dir(s, sub, path, depth + 1);
	}
	free_strv(subdirs, nsub);
	closedir(d);
	return r;
}

/* The last component of each private rule that is a plain name. */
static int collect_skips(struct sfs_loader *l, struct detect_scan *s)
{
	for (size_t i = 0; i < l->nfiles + s->ncands; i++) {
		const struct lfile *f = i < l->nfiles ? l->files[i] : s->cands[i - l->nfiles].f;

		for (size_t j = 0; j < f->nrules; j++) {
			const char *p = f->rules[j].pattern;
			cleanup_free char *name = NULL;

			if (f->rules[j].cls != SFS_CLASS_PRIVATE)
				continue;
			if (!strncmp(p, "**/", 3))
				p += 3;
			name = strndup(p, strcspn(p, "/"));
			if (!name)
				return -ENOMEM;
			size_t nl = strlen(name);
			if (!*name || strpbrk(name, "*?[\\") || (p[nl] && p[nl + 1]))
				continue;
			if (push_str(&s->skip, &s->nskip, name) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int sfs_loader_detect(struct sfs_loader *l, int source_fd, char **errmsg)
{
	struct detect_scan s = {0};
	char **names;
	size_t n;
	int r;

	if (!l->shipped_dir)
		return 0;
	r = list_json(l->shipped_dir, &names, &n, errmsg);
	if (r < 0)
		return r;
	s.cands = calloc(n ? n : 1, sizeof(*s.cands));
	if (!s.cands)
		r = -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		names[i][strlen(names[i]) - 5] = '\0';
		if (!valid_set_name(names[i]) || loaded(l, names[i]))
			continue;
		r = parse_shipped(l, names[i], NULL, &s.cands[s.ncands].f, errmsg);
		if (r == 0)
			s.ncands++;
	}
	if (r == 0)
		r = collect_skips(l, &s);
	if (r == 0) {
		int fd = openat(source_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = fd < 0 ? 0 : scan_dir(&s, fd, "", 0);
	}
	for (size_t i = 0; i < s.ncands; i++) {
		struct candidate *c = &s.cands[i];

		if (r == 0 && (c->root_marker || c->ndirs)) {
			r = apply_detection(c->f, c->root_marker != NULL, c->dirs, c->ndirs);
			if (r == 0) {
				free(c->f->origin);
				c->f->origin = c->origin;
				c->origin = NULL;
				r = commit(l, c->f, errmsg);
				c->f = NULL;
			}
		}
		lfile_free(c->f);
		free(c->origin);
		free_strv(c->dirs, c->ndirs);
	}
	free(s.cands);
	free_strv(s.skip, s.nskip);
	free_strv(names, n);
	return r;
}

int sfs_loader_add_protections(struct sfs_loader *l, char **errmsg)
{
	char **names;
	size_t n;
	int r;

	if (!l->shipped_dir)
		return 0;
	r = list_json(l->shipped_dir, &names, &n, errmsg);
	for (size_t i = 0; i < n && r == 0; i++) {
		struct lfile *f = NULL;

		names[i][strlen(names[i]) - 5] = '\0';
		if (!valid_set_name(names[i]) || loaded(l, names[i]))
			continue;
		r = parse_shipped(l, names[i], "not detected: its protections only", &f, errmsg);
		if (r == 0)
			r = apply_detection(f, false, NULL, 0);
		if (r == 0) {
			r = commit(l, f, errmsg);
			f = NULL;
		}
		lfile_free(f);
	}
	free_strv(names, n);
	return r;
}

/* Marks the protect rules each user-level release names as released. */
static int apply_releases(struct sfs_loader *l, char **errmsg)
{
	for (size_t i = 0; i < l->nfiles; i++) {
		const struct lfile *rf = l->files[i];

		for (size_t j = 0; j < rf->nrel; j++) {
			const struct lrelease *rel = &rf->rel[j];

			for (size_t k = 0; k < l->nfiles; k++) {
				struct lfile *pf = l->files[k];

				for (size_t m = 0; m < pf->nrules; m++) {
					struct sfs_rule *ru = &pf->rules[m];

					if (ru->cls != SFS_CLASS_PROTECTED ||
					    strcmp(ru->pattern, rel->pattern))
						continue;
					if (ru->tier == 0)
						return seterr(errmsg, -EPERM,
							      "%s:%d: cannot release '%s': it is "
							      "always protected (%s:%d)",
							      rf->path, rel->line, rel->pattern,
							      pf->path, ru->line);
					if (ru->released_by)
						continue;
					if (asprintf((char **)&ru->released_by, "%s:%d", rf->path,
						     rel->line) < 0) {
						ru->released_by = NULL;
						return -ENOMEM;
					}
				}
			}
		}
	}
	return 0;
}

int sfs_loader_finish(struct sfs_loader *l, struct sfs_policy **out, char **errmsg)
{
	struct sfs_policy *p;
	int r;

	*out = NULL;
	r = apply_releases(l, errmsg);
	if (r < 0)
		return r;
	p = sfs_policy_new();
	if (!p)
		return -ENOMEM;
	/* One file turning ownership off is enough: it only takes away. */
	for (size_t i = 0; i < l->nfiles; i++)
		if (l->files[i]->owned == 0)
			sfs_policy_set_ownership(p, false);
	for (size_t i = 0; i < l->nfiles && r == 0; i++) {
		const struct lfile *f = l->files[i];
		struct sfs_rule_source s = {f->path, f->name, f->description, f->origin};

		r = sfs_policy_add_source(p, &s);
		for (size_t j = 0; j < f->nrules && r == 0; j++) {
			cleanup_free char *reason = NULL;
			struct sfs_rule ru = f->rules[j];

			ru.file = f->path;
			r = sfs_policy_add_rule(p, &ru, &reason);
			if (r == -EINVAL)
				seterr(errmsg, r, "%s:%d: bad '%s' entry '%s': %s", f->path,
				       ru.line, ru.key, ru.pattern, reason ? reason : "invalid");
		}
	}
	if (r == 0)
		r = sfs_policy_compile(p, errmsg);
	if (r < 0) {
		if (r == -ENOMEM && errmsg && !*errmsg)
			seterr(errmsg, r, "out of memory while compiling the policy");
		sfs_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

/* ---- everything together ------------------------------------------------ */

/* SOURCE/.sandy/rules.json, read without following symlinks. */
static int add_project_file(struct sfs_loader *l, int source_fd, const char *source_dir,
			    char **errmsg)
{
	cleanup_free char *display = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	struct lfile *f;
	struct stat st;
	int r;

	if (asprintf(&display, "%s/.sandy/rules.json", source_dir) < 0)
		return -ENOMEM;
	dfd = openat(source_fd, ".sandy", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0; /* no project rules */
		return seterr(errmsg, -errno, "cannot open project rules directory '%s/.sandy': %s",
			      source_dir, errno == ELOOP ? "is a symlink" : strerror(errno));
	}
	fd = openat(dfd, "rules.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return seterr(errmsg, -errno, "cannot open rule file '%s': %s", display,
			      errno == ELOOP ? "is a symlink" : strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return seterr(errmsg, -EINVAL, "cannot read rule file '%s': not a regular file",
			      display);
	r = parse_fd(l, fd, display, NULL, SFS_TRUST_PROJECT, "project rules", &f, errmsg);
	if (r < 0)
		return r;
	return commit(l, f, errmsg);
}

static int add_user_files(struct sfs_loader *l, char **errmsg)
{
	cleanup_free char *dir = user_rules_dir();
	char **names;
	size_t n;
	int r;

	if (!dir)
		return 0;
	r = list_json(dir, &names, &n, errmsg);
	for (size_t i = 0; i < n && r == 0; i++) {
		cleanup_free char *path = NULL;

		if (asprintf(&path, "%s/%s", dir, names[i]) < 0)
			r = -ENOMEM;
		else
			r = sfs_loader_add_file(l, path, SFS_TRUST_USER, "user rules", errmsg);
	}
	free_strv(names, n);
	return r;
}

int sfs_policy_load(const struct sfs_rule_opts *o, const char *source_dir, struct sfs_policy **out,
		    char **errmsg)
{
	_cleanup_close_ int sfd = -1;
	struct sfs_loader *l;
	int r;

	*out = NULL;
	if (errmsg)
		*errmsg = NULL;
	sfd = open(source_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return seterr(errmsg, -errno, "cannot open source directory '%s': %s", source_dir,
			      strerror(errno));
	l = sfs_loader_new(sfs_shipped_rules_dir(), sfs_shipped_overlays_dir());
	if (!l)
		return -ENOMEM;
	r = sfs_loader_add_type(l, "base", "always", errmsg);
	for (size_t i = 0; r == 0 && i < o->ntypes; i++)
		r = sfs_loader_add_type(l, o->types[i], "--type", errmsg);
	if (r == 0 && o->ntypes == 0 && !o->no_detect)
		r = sfs_loader_detect(l, sfd, errmsg);
	for (size_t i = 0; r == 0 && i < o->nfiles; i++)
		r = sfs_loader_add_file(l, o->files[i], SFS_TRUST_USER, "--rules", errmsg);
	if (r == 0)
		r = add_user_files(l, errmsg);
	if (r == 0)
		r = add_project_file(l, sfd, source_dir, errmsg);
	/* Last, so that a rule file extending a type gets all of it. */
	if (r == 0)
		r = sfs_loader_add_protections(l, errmsg);
	if (r == 0)
		r = sfs_loader_finish(l, out, errmsg);
	sfs_loader_free(l);
	if (r < 0 && errmsg && !*errmsg)
		seterr(errmsg, r, "cannot load rules: %s", strerror(-r));
	return r;
}
