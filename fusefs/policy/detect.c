/*
 * detect: which shipped project types apply to a tree, and where. A type
 * whose marker (package.json, Cargo.toml, ...) is at SOURCE's root applies
 * as written; one whose marker is in a subdirectory has its write,
 * generated and private rules re-rooted there; the protections of every
 * shipped type apply whatever was detected.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "common/quote.h"
#include "common/util.h"

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
 * (ROOT), and re-rooted at each of the subdirectories DIRS where one is.
 */
static int apply_detection(struct rule_file *f, bool root, const struct strv *dirs)
{
	size_t n = 0, extra = 0, ndirs = dirs ? dirs->n : 0;

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
			a[n].pattern = reroot(dirs->v[d], r->pattern);
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
	struct rule_file *f;
	const char *root_marker;
	struct strv dirs; /* subdirectories, relative to SOURCE */
	char *origin;
};

struct detect_scan {
	struct candidate *cands;
	size_t ncands;
	struct strv skip; /* directory names never searched (private ones) */
	size_t dirs_seen;
};

static int note_hit(struct candidate *c, const char *dir, const char *marker)
{
	cleanup_free char *where = NULL;

	if (*dir) {
		if (c->dirs.n == DETECT_MAX_PLACES ||
		    (c->dirs.n && !strcmp(c->dirs.v[c->dirs.n - 1], dir)))
			return 0;
		if (strv_push(&c->dirs, dir) < 0)
			return -ENOMEM;
	} else {
		if (c->root_marker)
			return 0;
		c->root_marker = marker;
	}
	/* DIR is a name in the project, which the agent may have made:
	 * the origin is shown to the user, and says it escaped. */
	cleanup_free char *shown = *dir ? quote_str(dir) : NULL;
	if ((*dir && !shown) ||
	    asprintf(&where, "%s%s%s%s", c->origin ? c->origin : "detected: ",
		     c->origin ? ", " : "", *dir ? shown : "", *dir ? "/" : "") < 0)
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
	for (size_t i = 0; i < s->skip.n; i++)
		if (!strcmp(s->skip.v[i], name))
			return true;
	return false;
}

/* Looks for markers in directory FD (DIR relative to SOURCE), then below. */
static int scan_dir(struct detect_scan *s, int fd, const char *dir, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	cleanup_strv struct strv subdirs = {0};
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

			for (size_t m = 0; m < c->f->detect.n; m++)
				if (fnmatch(c->f->detect.v[m], e->d_name, FNM_PERIOD) == 0) {
					r = note_hit(c, dir, c->f->detect.v[m]);
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
			r = strv_push(&subdirs, e->d_name);
	}
	strv_sort(&subdirs);
	for (size_t i = 0; r == 0 && i < subdirs.n && s->dirs_seen < DETECT_MAX_DIRS; i++) {
		cleanup_free char *path = NULL;
		int sub = openat(dirfd(d), subdirs.v[i],
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

		if (sub < 0)
			continue;
		if (asprintf(&path, "%s%s%s", dir, *dir ? "/" : "", subdirs.v[i]) < 0) {
			close(sub);
			r = -ENOMEM;
			break;
		}
		r = scan_dir(s, sub, path, depth + 1);
	}
	closedir(d);
	return r;
}

/* The last component of each private rule that is a plain name. */
static int collect_skips(struct sfs_loader *l, struct detect_scan *s)
{
	for (size_t i = 0; i < l->nfiles + s->ncands; i++) {
		const struct rule_file *f = i < l->nfiles ? l->files[i] : s->cands[i - l->nfiles].f;

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
			if (strv_push(&s->skip, name) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int sfs_loader_detect(struct sfs_loader *l, int source_fd, char **err)
{
	cleanup_strv struct strv names = {0};
	struct detect_scan s = {0};
	int r;

	r = loader_unloaded_types(l, &names, err);
	if (r < 0 || names.n == 0)
		return r;
	s.cands = calloc(names.n, sizeof(*s.cands));
	if (!s.cands)
		return -ENOMEM;
	for (size_t i = 0; i < names.n && r == 0; i++) {
		r = loader_parse_shipped(l, names.v[i], NULL, &s.cands[s.ncands].f, err);
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

		if (r == 0 && (c->root_marker || c->dirs.n)) {
			r = apply_detection(c->f, c->root_marker != NULL, &c->dirs);
			if (r == 0) {
				free(c->f->origin);
				c->f->origin = steal_ptr(&c->origin);
				r = loader_commit(l, steal_ptr(&c->f), err);
			}
		}
		rule_file_free(c->f);
		free(c->origin);
		strv_free(&c->dirs);
	}
	free(s.cands);
	strv_free(&s.skip);
	return r;
}

int sfs_loader_add_protections(struct sfs_loader *l, char **err)
{
	cleanup_strv struct strv names = {0};
	int r;

	r = loader_unloaded_types(l, &names, err);
	for (size_t i = 0; i < names.n && r == 0; i++) {
		struct rule_file *f = NULL;

		/* A type loaded since, extended by one before it. */
		if (loader_has(l, names.v[i]))
			continue;
		r = loader_parse_shipped(l, names.v[i], "not detected: its protections only", &f,
					 err);
		if (r == 0)
			r = apply_detection(f, false, NULL);
		if (r == 0)
			r = loader_commit(l, steal_ptr(&f), err);
		rule_file_free(f);
	}
	return r;
}
