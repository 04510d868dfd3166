/*
 * rules: the sources of rules (shipped types, user and project files, the
 * command line), the loader that merges them, releases, and the compiled
 * policy at the end (see rules.h). One file's text is parsed in
 * ruleparse.c; detection of project types is in detect.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "loader.h"
#include "common/cachedir.h"
#include "common/err.h"
#include "common/install.h"
#include "common/util.h"

/* ---- rule options ------------------------------------------------------- */

int sfs_rule_opts_parse(struct sfs_rule_opts *o, int opt, const char *arg)
{
	int r;

	switch (opt) {
	case 't':
		r = strv_push(&o->types, arg);
		return r < 0 ? r : 1;
	case 'r':
		r = strv_push(&o->files, arg);
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
	strv_free(&o->types);
	strv_free(&o->files);
	o->no_detect = false;
}

/* ---- directories -------------------------------------------------------- */

int sfs_shipped_rules_dir(char **dir, char **err)
{
	return install_find(&install_rules, dir, err);
}

int sfs_shipped_overlays_dir(char **dir, char **err)
{
	return install_find(&install_overlays, dir, err);
}

/* The user's rules.d (common/cachedir.h), malloc'ed, or NULL when there is
 * no home. */
static char *user_rules_dir(void)
{
	cleanup_free char *config = sandy_config_dir();
	char *d = NULL;

	if (config && asprintf(&d, "%s/rules.d", config) < 0)
		d = NULL;
	return d;
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
		rule_file_free(l->files[i]);
	free(l->files);
	free(l->chain);
	free(l->shipped_dir);
	free(l->overlays_dir);
	free(l->source);
	free(l);
}

bool loader_has(const struct sfs_loader *l, const char *stem)
{
	for (size_t i = 0; i < l->nfiles; i++)
		if (l->files[i]->stem && !strcmp(l->files[i]->stem, stem))
			return true;
	return false;
}

static int load_shipped(struct sfs_loader *l, const char *name, const char *origin, char **err);

/* Resolves F's extends, then takes ownership of F. */
int loader_commit(struct sfs_loader *l, struct rule_file *f, char **err)
{
	struct rule_file **a;
	const char **chain;
	int r = 0;

	chain = realloc(l->chain, (l->nchain + 1) * sizeof(*chain));
	if (!chain) {
		rule_file_free(f);
		return -ENOMEM;
	}
	l->chain = chain;
	chain[l->nchain++] = f->stem ? f->stem : "";
	for (size_t i = 0; i < f->extends.n && r == 0; i++) {
		const char *x = f->extends.v[i];
		cleanup_free char *path = NULL, *origin = NULL, *cycle = NULL;
		size_t k;

		if (!rule_set_name_valid(x)) {
			r = err_set(err, EINVAL, "%s:%d: bad rule set name '%s' in 'extends'",
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
			r = err_set(err, ELOOP, "%s:%d: 'extends' cycle: %s", f->path,
				    f->extends_line[i], cycle ? cycle : "");
			break;
		}
		if (loader_has(l, x))
			continue;
		if (!l->shipped_dir || asprintf(&path, "%s/%s.json", l->shipped_dir, x) < 0 ||
		    access(path, F_OK) < 0) {
			r = err_set(err, ENOENT,
				    "%s:%d: unknown rule set '%s' in 'extends' (no '%s/%s.json')",
				    f->path, f->extends_line[i], x,
				    l->shipped_dir ? l->shipped_dir : "(none)", x);
			break;
		}
		if (asprintf(&origin, "extended by '%s'", f->stem ? f->stem : f->path) < 0) {
			r = -ENOMEM;
			break;
		}
		r = load_shipped(l, x, origin, err);
	}
	l->nchain--;
	if (r < 0) {
		rule_file_free(f);
		return r;
	}
	a = realloc(l->files, (l->nfiles + 1) * sizeof(*a));
	if (!a) {
		rule_file_free(f);
		return -ENOMEM;
	}
	l->files = a;
	a[l->nfiles++] = f;
	return 0;
}

int loader_parse_shipped(struct sfs_loader *l, const char *name, const char *origin,
			 struct rule_file **out, char **err)
{
	cleanup_free char *path = NULL;
	cleanup_fd int fd = -1;

	if (asprintf(&path, "%s/%s.json", l->shipped_dir, name) < 0)
		return -ENOMEM;
	fd = rule_file_open(path, err);
	if (fd < 0)
		return fd;
	return rule_file_parse_fd(l, fd, path, name, SFS_TRUST_SHIPPED, origin, out, err);
}

static int load_shipped(struct sfs_loader *l, const char *name, const char *origin, char **err)
{
	struct rule_file *f;
	int r;

	if (loader_has(l, name))
		return 0;
	r = loader_parse_shipped(l, name, origin, &f, err);
	if (r < 0)
		return r;
	return loader_commit(l, f, err);
}

int sfs_loader_add_type(struct sfs_loader *l, const char *name, const char *origin, char **err)
{
	cleanup_free char *path = NULL;

	if (!rule_set_name_valid(name))
		return err_set(err, EINVAL, "bad project type '%s'", name);
	if (!l->shipped_dir)
		return err_set(err, ENOENT, "unknown project type '%s'", name);
	if (asprintf(&path, "%s/%s.json", l->shipped_dir, name) < 0)
		return -ENOMEM;
	if (access(path, F_OK) < 0)
		return err_set(err, ENOENT, "unknown project type '%s' (no '%s')", name, path);
	return load_shipped(l, name, origin, err);
}

/* Whether F is for the project the loader loads for: a file naming
 * "projects" is for those alone, compared resolved. */
static bool for_this_project(const struct sfs_loader *l, const struct rule_file *f)
{
	char real[PATH_MAX];

	if (f->projects.n == 0)
		return true;
	for (size_t i = 0; l->source && i < f->projects.n; i++)
		if (realpath(f->projects.v[i], real) && !strcmp(real, l->source))
			return true;
	return false;
}

int sfs_loader_add_file(struct sfs_loader *l, const char *path, enum sfs_trust trust,
			const char *origin, char **err)
{
	cleanup_fd int fd = rule_file_open(path, err);
	struct rule_file *f;
	int r;

	if (fd < 0)
		return fd;
	r = rule_file_parse_fd(l, fd, path, NULL, trust, origin, &f, err);
	if (r < 0)
		return r;
	if (!for_this_project(l, f)) {
		rule_file_free(f);
		return 0;
	}
	return loader_commit(l, f, err);
}

int sfs_loader_add_buffer(struct sfs_loader *l, const char *display, const char *text, size_t len,
			  enum sfs_trust trust, const char *origin, char **err)
{
	cleanup_free char *copy = NULL;
	struct rule_file *f;
	int r;

	if (len > MAX_RULE_FILE)
		return err_set(err, EFBIG, "rule file '%s' is larger than 1 MiB", display);
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	r = rule_file_parse(l, copy, len, display, NULL, trust, origin, &f, err);
	return r < 0 ? r : loader_commit(l, f, err);
}

/* The names of the *.json files in DIR, sorted; none when DIR is missing. */
static int list_json(const char *dir, struct strv *out, char **err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return err_set(err, errno, "cannot open rules directory '%s': %s", dir,
			       strerror(errno));
	}
	while (r == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len > 5 && e->d_name[0] != '.' && !strcmp(e->d_name + len - 5, ".json"))
			r = strv_push(out, e->d_name);
	}
	closedir(d);
	strv_sort(out);
	return r;
}

int loader_unloaded_types(const struct sfs_loader *l, struct strv *names, char **err)
{
	cleanup_strv struct strv files = {0};
	int r;

	if (!l->shipped_dir)
		return 0;
	r = list_json(l->shipped_dir, &files, err);
	for (size_t i = 0; i < files.n && r == 0; i++) {
		files.v[i][strlen(files.v[i]) - 5] = '\0';
		if (rule_set_name_valid(files.v[i]) && !loader_has(l, files.v[i]))
			r = strv_push(names, files.v[i]);
	}
	return r;
}

/* PATTERN without what only says where it may match: leading slashes and
 * "any depth" prefixes, trailing slashes. */
static void bare(const char *pattern, const char **start, size_t *len)
{
	const char *s = pattern;

	while (!strncmp(s, "**/", 3) || *s == '/')
		s += *s == '/' ? 1 : 3;
	*len = strlen(s);
	while (*len && s[*len - 1] == '/')
		(*len)--;
	*start = s;
}

/* Levenshtein distance of A[0..AL) and B[0..BL), capped at 64. */
static size_t distance(const char *a, size_t al, const char *b, size_t bl)
{
	size_t row[65];

	if (al > 64 || bl > 64)
		return 64;
	for (size_t j = 0; j <= bl; j++)
		row[j] = j;
	for (size_t i = 1; i <= al; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= bl; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[bl];
}

/* The protect rule whose pattern is nearest PATTERN: the same name written
 * with another anchor ("**\/.github/workflows/" for ".github/workflows/"),
 * else the fewest edits; NULL when none is near. */
static const struct sfs_rule *nearest_protect(const struct sfs_loader *l, const char *pattern,
					      const char **file)
{
	const struct sfs_rule *best = NULL;
	size_t best_d = SIZE_MAX, pl, rl;
	const char *ps, *rs;

	bare(pattern, &ps, &pl);
	for (size_t k = 0; k < l->nfiles; k++)
		for (size_t m = 0; m < l->files[k]->nrules; m++) {
			const struct sfs_rule *ru = &l->files[k]->rules[m];

			if (ru->cls != SFS_CLASS_PROTECTED)
				continue;
			bare(ru->pattern, &rs, &rl);
			size_t d = rl == pl && !strncmp(rs, ps, pl) ? 0 : 1 + distance(ps, pl, rs, rl);
			if (d < best_d) {
				best_d = d;
				best = ru;
				*file = l->files[k]->path;
			}
		}
	/* More edits than half the name is no longer a misspelling. */
	return best && best_d <= 1 + pl / 2 ? best : NULL;
}

/* Marks the protect rules REL names as released; false when it names
 * none. */
static int release_one(struct sfs_loader *l, const struct rule_file *rf,
		       const struct rule_release *rel, bool *found, char **err)
{
	for (size_t k = 0; k < l->nfiles; k++) {
		struct rule_file *pf = l->files[k];

		for (size_t m = 0; m < pf->nrules; m++) {
			struct sfs_rule *ru = &pf->rules[m];

			if (ru->cls != SFS_CLASS_PROTECTED || strcmp(ru->pattern, rel->pattern))
				continue;
			if (ru->tier == 0)
				return err_set(err, EPERM,
					       "%s:%d: cannot release '%s': it is always protected "
					       "(%s:%d)",
					       rf->path, rel->line, rel->pattern, pf->path, ru->line);
			*found = true;
			if (ru->released_by)
				continue;
			if (asprintf((char **)&ru->released_by, "%s:%d", rf->path, rel->line) < 0) {
				ru->released_by = NULL;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

/* Marks the protect rules each user-level release names as released. A
 * release must be spelled as the entry it releases: one that names none
 * would leave the name protected while its writer believes otherwise. */
static int apply_releases(struct sfs_loader *l, char **err)
{
	for (size_t i = 0; i < l->nfiles; i++) {
		const struct rule_file *rf = l->files[i];

		for (size_t j = 0; j < rf->nrel; j++) {
			const struct rule_release *rel = &rf->rel[j];
			const char *file = NULL;
			bool found = false;
			int r = release_one(l, rf, rel, &found, err);

			if (r < 0)
				return r;
			if (found)
				continue;
			const struct sfs_rule *near = nearest_protect(l, rel->pattern, &file);
			if (!near)
				return err_set(err, EINVAL,
					       "%s:%d: cannot release '%s': no protect entry is "
					       "written so (see `sandyfs rules SOURCE`)",
					       rf->path, rel->line, rel->pattern);
			return err_set(err, EINVAL,
				       "%s:%d: cannot release '%s': no protect entry is written so; "
				       "the nearest is '%s' (%s:%d)",
				       rf->path, rel->line, rel->pattern, near->pattern, file,
				       near->line);
		}
	}
	return 0;
}

int sfs_loader_finish(struct sfs_loader *l, struct sfs_policy **out, char **err)
{
	struct sfs_policy *p;
	int r;

	*out = NULL;
	r = apply_releases(l, err);
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
		const struct rule_file *f = l->files[i];
		struct sfs_rule_source s = {f->path, f->name, f->description, f->origin};

		r = sfs_policy_add_source(p, &s);
		for (size_t j = 0; j < f->nrules && r == 0; j++) {
			cleanup_free char *reason = NULL;
			struct sfs_rule ru = f->rules[j];

			ru.file = f->path;
			r = sfs_policy_add_rule(p, &ru, &reason);
			if (r == -EINVAL)
				err_set(err, -r, "%s:%d: bad '%s' entry '%s': %s", f->path, ru.line,
					ru.key, ru.pattern, reason ? reason : "invalid");
		}
	}
	if (r == 0)
		r = sfs_policy_compile(p, err);
	if (r < 0) {
		if (r == -ENOMEM && err && !*err)
			err_set(err, -r, "out of memory while compiling the policy");
		sfs_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

/* ---- everything together ------------------------------------------------ */

/* SOURCE/.sandy/rules.json, read without following symlinks. */
static int add_project_file(struct sfs_loader *l, int source_fd, const char *source_dir, char **err)
{
	cleanup_free char *display = NULL;
	cleanup_fd int dfd = -1, fd = -1;
	struct rule_file *f;
	struct stat st;
	int r;

	if (asprintf(&display, "%s/.sandy/rules.json", source_dir) < 0)
		return -ENOMEM;
	dfd = openat(source_fd, ".sandy", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0; /* no project rules */
		return err_set(err, errno, "cannot open project rules directory '%s/.sandy': %s",
			       source_dir, errno == ELOOP ? "is a symlink" : strerror(errno));
	}
	fd = openat(dfd, "rules.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(err, errno, "cannot open rule file '%s': %s", display,
			       errno == ELOOP ? "is a symlink" : strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "cannot read rule file '%s': not a regular file",
			       display);
	r = rule_file_parse_fd(l, fd, display, NULL, SFS_TRUST_PROJECT, "project rules", &f, err);
	if (r < 0)
		return r;
	return loader_commit(l, f, err);
}

static int add_user_files(struct sfs_loader *l, char **err)
{
	cleanup_free char *dir = user_rules_dir();
	cleanup_strv struct strv names = {0};
	int r;

	if (!dir)
		return 0;
	r = list_json(dir, &names, err);
	for (size_t i = 0; i < names.n && r == 0; i++) {
		cleanup_free char *path = NULL;

		if (asprintf(&path, "%s/%s", dir, names.v[i]) < 0)
			r = -ENOMEM;
		else
			r = sfs_loader_add_file(l, path, SFS_TRUST_USER, "user rules", err);
	}
	return r;
}

int sfs_policy_load(const struct sfs_rule_opts *o, const char *source_dir, struct sfs_policy **out,
		    char **err)
{
	cleanup_fd int sfd = -1;
	struct sfs_loader *l;
	int r;

	*out = NULL;
	if (err)
		*err = NULL;
	sfd = open(source_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return err_set(err, errno, "cannot open source directory '%s': %s", source_dir,
			       strerror(errno));
	cleanup_free char *shipped = NULL, *overlays = NULL;
	if ((r = sfs_shipped_rules_dir(&shipped, err)) < 0 ||
	    (r = sfs_shipped_overlays_dir(&overlays, err)) < 0)
		return r;
	l = sfs_loader_new(shipped, overlays);
	if (!l)
		return -ENOMEM;
	char real[PATH_MAX];
	if (realpath(source_dir, real) && !(l->source = strdup(real))) {
		sfs_loader_free(l);
		return -ENOMEM;
	}
	r = sfs_loader_add_type(l, "base", "always", err);
	for (size_t i = 0; r == 0 && i < o->types.n; i++)
		r = sfs_loader_add_type(l, o->types.v[i], "--type", err);
	if (r == 0 && o->types.n == 0 && !o->no_detect)
		r = sfs_loader_detect(l, sfd, err);
	for (size_t i = 0; r == 0 && i < o->files.n; i++)
		r = sfs_loader_add_file(l, o->files.v[i], SFS_TRUST_USER, "--rules", err);
	if (r == 0)
		r = add_user_files(l, err);
	if (r == 0)
		r = add_project_file(l, sfd, source_dir, err);
	/* Last, so that a rule file extending a type gets all of it. */
	if (r == 0)
		r = sfs_loader_add_protections(l, err);
	if (r == 0)
		r = sfs_loader_finish(l, out, err);
	sfs_loader_free(l);
	if (r < 0 && err && !*err)
		err_set(err, -r, "cannot load rules: %s", strerror(-r));
	return r;
}

int sfs_shipped_types(struct strv *names, char **err)
{
	cleanup_free char *shipped = NULL;
	int r = sfs_shipped_rules_dir(&shipped, err);

	if (r < 0)
		return r;
	struct sfs_loader *l = sfs_loader_new(shipped, NULL);
	if (!l)
		return -ENOMEM;
	cleanup_strv struct strv all = {0};
	r = loader_unloaded_types(l, &all, err);
	sfs_loader_free(l);
	/* base.json is always read: not a type to ask for. */
	for (size_t i = 0; r == 0 && i < all.n; i++)
		if (strcmp(all.v[i], "base") != 0)
			r = strv_push(names, all.v[i]);
	return r;
}
