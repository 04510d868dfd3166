/* summary.c - see summary.h. */

#include "summary.h"
#include "sys/proc.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"

#include "common/quote.h"

#include <cJSON.h>
#include <git2.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

/* Enough of a file's inode to tell that it changed, also when it was
 * already dirty at launch and the status letters stay the same. */
struct ident {
	bool exists;
	dev_t dev;
	ino_t ino;
	mode_t mode;
	off_t size;
	struct timespec mtime, ctime;
};

struct snap_entry {
	char *path; /* relative to the project */
	unsigned status;
	bool unread; /* over SUMMARY_READ_MAX: judged by its metadata alone */
	struct ident id;
};

/*
 * How large a tracked file may be for the status to read it. libgit2
 * reads a tracked file when its size is as the index has it and its
 * times are not, to hash it; under a filter (text=auto, core.autocrlf,
 * ident) it holds the whole file, three times its size, to convert it
 * first. The agent chooses the file: past this size (48 MiB at most held)
 * the file is not read, and counts as changed when its metadata did
 * change; the summary says so. Source files are far smaller.
 */
#define SUMMARY_READ_MAX (16u << 20)

struct git_snapshot {
	struct snap_entry *e;
	size_t n;
};

static void ident_of(const char *path, struct ident *id)
{
	struct stat st;

	*id = (struct ident){0};
	if (lstat(path, &st) < 0)
		return;
	*id = (struct ident){.exists = true,
			     .dev = st.st_dev,
			     .ino = st.st_ino,
			     .mode = st.st_mode,
			     .size = st.st_size,
			     .mtime = st.st_mtim,
			     .ctime = st.st_ctim};
}

static bool ident_eq(const struct ident *a, const struct ident *b)
{
	return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
	       a->mode == b->mode && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->path, ((const struct snap_entry *)b)->path);
}

void summary_snapshot_free(struct git_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
	free(s);
}

static void cleanup_repop(git_repository **r)
{
	git_repository_free(*r);
}

static void cleanup_statusp(git_status_list **l)
{
	git_status_list_free(*l);
}

static void cleanup_indexp(git_index **i)
{
	git_index_free(*i);
}

/* The path status entry E is about, relative to the work tree. */
static const char *status_path(const git_status_entry *e)
{
	const git_diff_delta *d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;

	return d ? (d->new_file.path ? d->new_file.path : d->old_file.path) : NULL;
}

/* Whether the file at ST is as index entry E recorded it. */
static bool stat_matches(const git_index_entry *e, const struct stat *st)
{
	return e->mtime.seconds == (int32_t)st->st_mtim.tv_sec &&
	       e->mtime.nanoseconds == (uint32_t)st->st_mtim.tv_nsec &&
	       e->ctime.seconds == (int32_t)st->st_ctim.tv_sec &&
	       e->ctime.nanoseconds == (uint32_t)st->st_ctim.tv_nsec &&
	       e->ino == (uint32_t)st->st_ino && e->uid == st->st_uid && e->gid == st->st_gid;
}

/*
 * Keeps the status from reading the tracked files under WD (the work
 * tree, resolved) over SUMMARY_READ_MAX: in REPO's index, held in memory
 * only and never written, they are marked assumed unchanged, which libgit2
 * takes without reading. Those whose metadata changed are pushed to
 * CHANGED. One whose size changed needs no mark: libgit2 counts it as
 * modified by its size.
 */
static int bound_reads(git_repository *repo, const char *wd, struct strv *changed)
{
	__attribute__((cleanup(cleanup_indexp))) git_index *index = NULL;
	git_index_entry *marked = NULL;
	size_t n = 0;
	int r = 0;

	if (git_repository_index(&index, repo) < 0)
		return -EIO;
	size_t count = git_index_entrycount(index);
	for (size_t i = 0; i < count && r == 0; i++) {
		const git_index_entry *e = git_index_get_byindex(index, i);
		char full[PATH_MAX];
		struct stat st;

		if (GIT_INDEX_ENTRY_STAGE(e) != 0 || (e->flags & GIT_INDEX_ENTRY_VALID) ||
		    !S_ISREG(e->mode) ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", wd, e->path) >= sizeof(full) ||
		    lstat(full, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size <= SUMMARY_READ_MAX ||
		    (uint32_t)st.st_size != e->file_size)
			continue;
		if (!stat_matches(e, &st))
			r = strv_push(changed, e->path);
		git_index_entry *m = r == 0 ? realloc(marked, (n + 1) * sizeof(*m)) : NULL;
		if (!m) {
			r = -ENOMEM;
			break;
		}
		marked = m;
		marked[n] = *e;
		marked[n].flags |= GIT_INDEX_ENTRY_VALID;
		n++;
	}
	/* Replaced after the walk, which they would otherwise disturb;
	 * git_index_add copies each entry, path included. */
	for (size_t i = 0; i < n && r == 0; i++)
		if (git_index_add(index, &marked[i]) < 0)
			r = -EIO;
	free(marked);
	return r;
}

static int git_error_to_errno(int code)
{
	return code == GIT_ENOTFOUND ? -ENOENT : -EIO;
}

int summary_snapshot_take(const char *project, struct git_snapshot **out)
{
	__attribute__((cleanup(cleanup_repop))) git_repository *repo = NULL;
	__attribute__((cleanup(cleanup_statusp))) git_status_list *list = NULL;
	char real[PATH_MAX], wd_real[PATH_MAX];

	*out = NULL;
	if (!realpath(project, real))
		return -errno;
	int g = git_repository_open_ext(&repo, real, 0, NULL);
	if (g == GIT_ENOTFOUND)
		return 0;
	if (g < 0)
		return git_error_to_errno(g);
	const char *wd = git_repository_workdir(repo);
	if (!wd || !realpath(wd, wd_real))
		return 0; /* bare: no work tree to compare */
	size_t wl = strlen(wd_real);
	if (strncmp(real, wd_real, wl) != 0 || (real[wl] != '\0' && real[wl] != '/'))
		return 0;
	/* Status paths are relative to the work tree; the summary speaks of
	 * paths in the project, which may be a subdirectory of it. */
	const char *prefix = real[wl] ? real + wl + 1 : "";
	size_t pl = strlen(prefix);

	cleanup_strv struct strv unread = {0};
	if ((g = bound_reads(repo, wd_real, &unread)) < 0)
		return g;
	git_status_options opts = GIT_STATUS_OPTIONS_INIT;
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	/* NO_REFRESH: the index is the one bound_reads marked, not the file. */
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		     GIT_STATUS_OPT_NO_REFRESH;
	if ((g = git_status_list_new(&list, repo, &opts)) < 0)
		return git_error_to_errno(g);

	struct git_snapshot *s = calloc(1, sizeof(*s));
	size_t count = git_status_list_entrycount(list);
	if (!s || (count + unread.n && !(s->e = calloc(count + unread.n, sizeof(*s->e))))) {
		summary_snapshot_free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count + unread.n; i++) {
		const git_status_entry *e = i < count ? git_status_byindex(list, i) : NULL;
		const char *path = e ? status_path(e) : unread.v[i - count];
		if (!path || (pl && (strncmp(path, prefix, pl) != 0 || path[pl] != '/')))
			continue;
		const char *rel = pl ? path + pl + 1 : path;
		char full[PATH_MAX];
		struct snap_entry *se = &s->e[s->n];
		if (!e) {
			/* Changed, not read; maybe also staged, so listed. */
			for (size_t k = 0; k < s->n && se == &s->e[s->n]; k++)
				if (!strcmp(s->e[k].path, rel))
					se = &s->e[k];
			se->status |= GIT_STATUS_WT_MODIFIED;
			se->unread = true;
			if (se != &s->e[s->n])
				continue;
		} else {
			se->status = e->status;
		}
		se->path = strdup(rel);
		if (!se->path) {
			summary_snapshot_free(s);
			return -ENOMEM;
		}
		/* A path too long to stat keeps a zero identity: compared by
		 * its status letters alone. */
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", wd_real, path) < sizeof(full))
			ident_of(full, &se->id);
		s->n++;
	}
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
	*out = s;
	return 0;
}

struct denial_group {
	char *rule_file;
	char *rule;
	char *class;
	char *example_op;
	char *example_path;
	unsigned long count;
};

struct denial_stats {
	struct denial_group *g;
	size_t n, cap;
	unsigned long total, suppressed, unreadable;
};

void summary_denials_free(struct denial_stats *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		struct denial_group *g = &d->g[i];
		free(g->rule_file);
		free(g->rule);
		free(g->class);
		free(g->example_op);
		free(g->example_path);
	}
	free(d->g);
	free(d);
}

/* Field KEY of a record, as the audit log holds it: the bytes of a name
 * (from KEY_hex when the name is not UTF-8, see quote.h); "" for a missing
 * field. Shown only through quote_str(). */
static char *json_text(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!v || cJSON_IsNull(v))
		return strdup("");
	/* "rule" may be an entry object rather than its glob. */
	if (cJSON_IsObject(v)) {
		obj = v;
		key = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "path")) ? "path" : "glob";
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, key)))
			return cJSON_PrintUnformatted(v);
		v = cJSON_GetObjectItemCaseSensitive(v, key);
	} else if (!cJSON_IsString(v)) {
		return cJSON_PrintUnformatted(v);
	}
	char *bytes = NULL;
	int r = quote_json_get(obj, key, &bytes, NULL);
	/* A KEY_hex that is not hex: the text is all there is. */
	return r == -EINVAL ? strdup(v->valuestring) : bytes;
}

static int add_denial(struct denial_stats *d, const cJSON *rec)
{
	cleanup_free char *file = json_text(rec, "rule_file");
	cleanup_free char *rule = json_text(rec, "rule");

	if (!file || !rule)
		return -ENOMEM;
	d->total++;
	for (size_t i = 0; i < d->n; i++) {
		if (!strcmp(d->g[i].rule_file, file) && !strcmp(d->g[i].rule, rule)) {
			d->g[i].count++;
			return 0;
		}
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct denial_group *g = realloc(d->g, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		d->g = g;
		d->cap = cap;
	}
	struct denial_group *g = &d->g[d->n];
	*g = (struct denial_group){.count = 1};
	g->rule_file = steal_ptr(&file);
	g->rule = steal_ptr(&rule);
	g->class = json_text(rec, "class");
	g->example_op = json_text(rec, "op");
	g->example_path = json_text(rec, "path");
	d->n++;
	if (!g->class || !g->example_op || !g->example_path)
		return -ENOMEM;
	return 0;
}

static int group_cmp(const void *a, const void *b)
{
	const struct denial_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	int c = strcmp(x->rule_file, y->rule_file);
	return c ? c : strcmp(x->rule, y->rule);
}

int summary_denials_read(const char *path, struct denial_stats **out)
{
	struct denial_stats *d = calloc(1, sizeof(*d));
	cleanup_file FILE *f = NULL;
	cleanup_free char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (!d)
		return -ENOMEM;
	*out = d;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (r == 0 && getline(&line, &cap, f) > 0) {
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		cJSON *rec = cJSON_Parse(line);
		const cJSON *sup = rec ? cJSON_GetObjectItemCaseSensitive(rec, "suppressed") : NULL;
		if (!cJSON_IsObject(rec))
			d->unreadable++;
		else if (cJSON_IsNumber(sup))
			d->suppressed += sup->valuedouble > 0 ? (unsigned long)sup->valuedouble : 0;
		else
			r = add_denial(d, rec);
		cJSON_Delete(rec);
	}
	/* Most frequent first: the rule the agent kept running into. */
	if (d->n)
		qsort(d->g, d->n, sizeof(*d->g), group_cmp);
	return r;
}

static void print_denials(FILE *f, const struct denial_stats *d, bool have_policy)
{
	if (!have_policy) {
		fprintf(f, "sandy: no write policy in this session (--fs=bind)\n");
		return;
	}
	if (!d || (d->total == 0 && d->suppressed == 0)) {
		fprintf(f, "sandy: nothing was denied\n");
	} else {
		fprintf(f, "sandy: %lu operation%s denied, by rule:\n", d->total + d->suppressed,
			d->total + d->suppressed == 1 ? "" : "s");
		for (size_t i = 0; i < d->n; i++) {
			const struct denial_group *g = &d->g[i];
			/* Shipped and user rule files are known by their
			 * names; the directory would only make the line long. */
			const char *base = strrchr(g->rule_file, '/');
			cleanup_free char *file = quote_str(base ? base + 1 : g->rule_file);
			cleanup_free char *rule = quote_str(g->rule), *cls = quote_str(g->class);
			cleanup_free char *op = quote_str(g->example_op);
			cleanup_free char *path = quote_str(g->example_path);
			fprintf(f, "  %6lu  %s%s%s", g->count, quoted(file),
				file && *file ? ": " : "",
				*g->rule ? quoted(rule) : "no write rule matches");
			if (*g->class)
				fprintf(f, " (%s)", quoted(cls));
			fprintf(f, "; e.g. %s '%s'\n", *g->example_op ? quoted(op) : "write",
				quoted(path));
		}
		if (d->suppressed)
			fprintf(f, "  %6lu  more, not logged one by one (rate limit)\n",
				d->suppressed);
		fprintf(f, "sandy: 'sandy explain PATH' says why a path is protected\n");
	}
	if (d && d->unreadable)
		fprintf(f, "sandy: %lu audit record%s could not be read\n", d->unreadable,
			d->unreadable == 1 ? "" : "s");
}

struct change {
	char letter;
	const char *path;
	bool owned;
	const struct snap_entry *unread; /* judged by its metadata: this entry's */
};

/* Marks the changes the agent owns (it created them through the mount),
 * as `sandyfs explain --json` says. Quietly nothing when it cannot. */
static void mark_owned(const struct summary_policy *policy, struct change *changes, size_t n)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL;
	int r = sandyfs_query_argv(&argv, policy->fs, "explain", true, policy->rule_args);

	for (size_t i = 0; r == 0 && i < n; i++)
		r = strv_push(&argv, changes[i].path);
	if (r < 0 || n == 0 ||
	    proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0)
		return;
	cJSON *root = cJSON_Parse(out);
	const cJSON *e;
	size_t i = 0;
	cJSON_ArrayForEach(e, root)
	{
		const cJSON *cls = cJSON_GetObjectItemCaseSensitive(e, "class");
		if (i < n && cJSON_IsString(cls) && !strcmp(cls->valuestring, "owned"))
			changes[i].owned = true;
		i++;
	}
	cJSON_Delete(root);
}

/* Where the private directories (dependencies, build state) are kept, as
 * `sandyfs store` says: "PATH<TAB>SIZE MiB in N files". */
static void print_store(FILE *f, const struct summary_policy *policy)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL;
	int r = strv_extend(&argv, &policy->fs->argv);

	r = strv_ok(r, strv_push(&argv, "store"));
	r = strv_ok(r, strv_push(&argv, "--"));
	r = strv_ok(r, strv_push(&argv, policy->fs->project));
	if (r < 0 ||
	    proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0 ||
	    !out)
		return;
	out[strcspn(out, "\n")] = '\0';
	char *tab = strchr(out, '\t');
	if (!tab || strstr(tab, " in 0 files"))
		return;
	*tab = '\0';
	cleanup_free char *where = quote_str(out);
	fprintf(f,
		"sandy: private directories (node_modules, .venv, ...) are kept in %s (%s);\n"
		"       'sandy clean' removes them\n",
		quoted(where), tab + 1);
}

static char change_letter(const struct snap_entry *before, const struct snap_entry *after,
			  const char *project)
{
	struct ident now;
	char full[PATH_MAX];
	const char *path = before ? before->path : after->path;

	if (after)
		now = after->id;
	else if ((size_t)snprintf(full, sizeof(full), "%s/%s", project, path) < sizeof(full))
		ident_of(full, &now);
	else
		now = before->id;
	bool existed = before ? before->id.exists
			      : !(after->status & (GIT_STATUS_WT_NEW | GIT_STATUS_INDEX_NEW));
	if (!now.exists)
		return existed ? 'D' : 0;
	return existed ? 'M' : 'A';
}

static void print_changes(FILE *f, const char *project, const struct git_snapshot *launch,
			  const struct summary_policy *policy)
{
	struct git_snapshot *end = NULL;

	if (!launch) {
		cleanup_free char *where = quote_str(project);
		fprintf(f, "sandy: no list of changed files ('%s' is not in a git work tree)\n",
			quoted(where));
		return;
	}
	int r = summary_snapshot_take(project, &end);
	if (r < 0 || !end) {
		fprintf(f, "sandy: cannot list the changed files: %s\n",
			r < 0 ? strerror(-r) : "the git repository is gone");
		return;
	}
	struct change *changes = calloc(launch->n + end->n + 1, sizeof(*changes));
	size_t n = 0, i = 0, j = 0;
	if (!changes) {
		summary_snapshot_free(end);
		return;
	}
	/* Both lists are sorted: walk them side by side. */
	while (i < launch->n || j < end->n) {
		const struct snap_entry *a = i < launch->n ? &launch->e[i] : NULL;
		const struct snap_entry *b = j < end->n ? &end->e[j] : NULL;
		int c = !a ? 1 : !b ? -1 : strcmp(a->path, b->path);
		char letter = 0;
		if (c == 0) {
			if (a->status != b->status || !ident_eq(&a->id, &b->id))
				letter = change_letter(a, b, project);
			i++, j++;
		} else if (c < 0) {
			letter = change_letter(a, NULL, project);
			i++;
		} else {
			letter = change_letter(NULL, b, project);
			j++;
		}
		if (letter)
			changes[n++] = (struct change){letter, c <= 0 ? a->path : b->path, false,
						       c >= 0 && b->unread ? b : NULL};
	}
	const size_t shown = 25;
	if (policy)
		mark_owned(policy, changes, n < shown ? n : shown);
	if (n == 0) {
		fprintf(f, "sandy: no file changed\n");
	} else {
		fprintf(f, "sandy: %zu file%s changed:\n", n, n == 1 ? "" : "s");
		for (size_t k = 0; k < n && k < shown; k++) {
			cleanup_free char *path = quote_str(changes[k].path);
			fprintf(f, "  %6c  %s%s", changes[k].letter, quoted(path),
				changes[k].owned ? "  (the agent's own)" : "");
			if (changes[k].unread)
				fprintf(f,
					"  (%.1f MiB, over the %u MiB read limit: judged by its "
					"size and times, not read)",
					(double)changes[k].unread->id.size / (1 << 20),
					SUMMARY_READ_MAX >> 20);
			fputc('\n', f);
		}
		if (n > shown)
			fprintf(f, "          ... and %zu more ('git status' lists them)\n",
				n - shown);
	}
	free(changes);
	summary_snapshot_free(end);
}

void summary_print(FILE *f, const char *project, const struct git_snapshot *launch,
		   const struct denial_stats *denials, const struct summary_policy *policy)
{
	print_denials(f, denials, policy != NULL);
	print_changes(f, project, launch, policy);
	if (policy)
		print_store(f, policy);
	fflush(f);
}
