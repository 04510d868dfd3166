/* gitpriv.c - see gitpriv.h. */
#include "gitpriv.h"
#include "gitlayout.h"
#include "gitrefs.h"
#include "common/err.h"
#include "common/quote.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char private_dir[] = ".git";
static const char record_name[] = "git-mirror";

/* The record: "NAME<TAB>VALUE" lines. */
static int read_record(int storefd, const char *name, struct sfs_refs *out)
{
	cleanup_free char *text = NULL;
	int r = sfs_git_read_at(storefd, name, REFS_FILE_MAX, &text, NULL);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && r == 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		if (sfs_git_ref_name_ok(line) && sfs_git_ref_value_ok(tab + 1))
			r = sfs_refs_set(out, line, tab + 1);
	}
	return r;
}

static bool same_value(const struct sfs_ref *a, const struct sfs_ref *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a->value, b->value) == 0;
}

/*
 * What the private repository's refs become: a ref the agent has not
 * moved since the last refresh (its value is still the recorded one)
 * follows SOURCE, one it moved or made is kept. RECORD_OUT gets what to
 * record: SOURCE's value where it was taken, the old record where the
 * agent's was kept. KEPT lists the kept names for the note.
 */
static int plan_refs(const struct sfs_refs *host, const struct sfs_refs *priv,
		     const struct sfs_refs *record, bool fresh, struct sfs_refs *want,
		     struct sfs_refs *record_out, struct sfs_buf *kept)
{
	const struct sfs_refs *all[] = {host, priv, record};
	int r = 0;

	for (size_t k = 0; k < ARRAY_SIZE(all) && r == 0; k++) {
		for (size_t i = 0; i < all[k]->n && r == 0; i++) {
			const char *name = all[k]->v[i].name;
			if (sfs_refs_find(want, name) || sfs_refs_find(record_out, name))
				continue;
			const struct sfs_ref *h = sfs_refs_find(host, name),
					     *p = sfs_refs_find(priv, name),
					     *rec = sfs_refs_find(record, name);
			bool moved = !fresh && !same_value(p, rec) && !same_value(p, h);
			if (!moved) {
				if (h)
					r = sfs_refs_set(want, name, h->value);
				if (r == 0 && h)
					r = sfs_refs_set(record_out, name, h->value);
				continue;
			}
			if (p)
				r = sfs_refs_set(want, name, p->value);
			if (r == 0 && rec)
				r = sfs_refs_set(record_out, name, rec->value);
			if (strncmp(name, "refs/heads/", 11) != 0 && strcmp(name, "HEAD") != 0)
				continue;
			/* The agent named it; the note reaches the user. */
			cleanup_free char *shown = quote_str(name);
			sfs_buf_add(kept, "%s%s", kept->len ? ", " : "", quoted(shown));
		}
	}
	return r;
}

/* Removes every loose ref below directory FD (what packed-refs now holds
 * replaces them); directories stay. */
static void remove_loose(int fd, int depth)
{
	DIR *d = sfs_git_opendir(fd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = depth < REFS_DEPTH ? sfs_git_open_dir(fd, de->d_name, false) : -1;
			if (sub >= 0) {
				remove_loose(sub, depth + 1);
				close(sub);
			}
			continue;
		}
		unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
}

static int write_refs(int gitfd, struct sfs_refs *want, const struct stat *owner)
{
	cleanup_buf struct sfs_buf packed = {0};
	int r;

	qsort(want->v, want->n, sizeof(*want->v), sfs_ref_cmp);
	sfs_buf_add(&packed, "# pack-refs with: sorted \n");
	for (size_t i = 0; i < want->n; i++)
		if (strcmp(want->v[i].name, "HEAD") != 0 && sfs_git_is_id(want->v[i].value))
			sfs_buf_add(&packed, "%s %s\n", want->v[i].value, want->v[i].name);
	if (packed.failed)
		return -ENOMEM;
	r = sfs_git_write_at(gitfd, "packed-refs", packed.s, packed.len, owner);
	if (r < 0)
		return r;
	cleanup_fd int refs = sfs_git_make_dir(gitfd, "refs", true, owner);
	if (refs < 0)
		return refs;
	remove_loose(refs, 0);
	/* Symbolic refs cannot be packed. */
	for (size_t i = 0; i < want->n && r == 0; i++) {
		char line[PATH_MAX + 8];
		if (strcmp(want->v[i].name, "HEAD") == 0 || sfs_git_is_id(want->v[i].value))
			continue;
		snprintf(line, sizeof(line), "%s\n", want->v[i].value);
		r = sfs_git_write_path(gitfd, want->v[i].name, line, owner);
	}
	struct sfs_ref *head = sfs_refs_find(want, "HEAD");
	if (r == 0) {
		char line[PATH_MAX + 8];
		snprintf(line, sizeof(line), "%s\n", head ? head->value : "ref: refs/heads/main");
		r = sfs_git_write_at(gitfd, "HEAD", line, strlen(line), owner);
	}
	return r;
}

static int write_record(int storefd, const char *name, const struct sfs_refs *record)
{
	cleanup_buf struct sfs_buf b = {0};

	sfs_buf_add(&b,
		    "# sandyfs: the refs of SOURCE as last copied into the private repository\n");
	for (size_t i = 0; i < record->n; i++)
		sfs_buf_add(&b, "%s\t%s\n", record->v[i].name, record->v[i].value);
	return b.failed ? -ENOMEM : sfs_git_write_at(storefd, name, b.s, b.len, NULL);
}

/* ---- config ---- */

/* Keys of SOURCE's own config the agent's git gets: what says who commits
 * and where the remotes are, how files are compared; nothing that names a
 * program, a hook, a filter or a path on the host. */
static bool config_key_kept(const char *key)
{
	static const char *const exact[] = {
		"core.filemode",
		"core.ignorecase",
		"core.precomposeunicode",
		"core.autocrlf",
		"core.eol",
		"core.symlinks",
		"core.logallrefupdates",
		"core.quotepath",
		"core.abbrev",
		"core.safecrlf",
		"user.name",
		"user.email",
		"init.defaultbranch",
		"pull.rebase",
		"pull.ff",
		"push.default",
		"push.autosetupremote",
		"fetch.prune",
		"merge.ff",
		"merge.conflictstyle",
		"rebase.autosquash",
		"rebase.autostash",
		"diff.renames",
		"status.showuntrackedfiles",
	};
	static const struct {
		const char *section, *name;
	} per_subsection[] = {
		{"remote.", ".url"},	    {"remote.", ".pushurl"}, {"remote.", ".fetch"},
		{"remote.", ".push"},	    {"remote.", ".tagopt"},  {"remote.", ".prune"},
		{"branch.", ".remote"},	    {"branch.", ".merge"},   {"branch.", ".rebase"},
		{"branch.", ".pushremote"}, {"submodule.", ".url"},  {"submodule.", ".active"},
		{"submodule.", ".branch"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
		if (strcmp(key, exact[i]) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(per_subsection); i++) {
		size_t a = strlen(per_subsection[i].section), b = strlen(per_subsection[i].name),
		       n = strlen(key);
		const char *dot = strrchr(key, '.');
		if (n > a + b && strncmp(key, per_subsection[i].section, a) == 0 &&
		    strcmp(dot, per_subsection[i].name) == 0 && dot > key + a)
			return true;
	}
	return false;
}

/* A value (or subsection name) in double quotes, escaped as git reads it. */
static void buf_quoted(struct sfs_buf *b, const char *s)
{
	sfs_buf_add(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sfs_buf_add(b, "\\%c", *s);
		else if (*s == '\n')
			sfs_buf_add(b, "\\n");
		else if (*s == '\t')
			sfs_buf_add(b, "\\t");
		else if ((unsigned char)*s >= 0x20)
			sfs_buf_add(b, "%c", *s);
	}
	sfs_buf_add(b, "\"");
}

/* SOURCE's local config, the kept keys only, as a config file. */
static int build_config(git_repository *host, bool submodule, struct sfs_buf *out)
{
	git_config *all = NULL, *local = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *e;
	char last_section[1024] = "";

	sfs_buf_add(out, "# Made by sandyfs from the host repository's config, without what runs\n"
			 "# programs (hooks, filters, fsmonitor, aliases); remade at each mount.\n"
			 "# Settings of your own go in .git/config, which includes this file.\n");
	if (git_repository_config(&all, host) < 0)
		return -EIO;
	int g = git_config_open_level(&local, all, GIT_CONFIG_LEVEL_LOCAL);
	git_config_free(all);
	if (g == GIT_ENOTFOUND)
		return 0;
	if (g < 0 || git_config_iterator_new(&it, local) < 0) {
		git_config_free(local);
		return -EIO;
	}
	while (git_config_next(&e, it) == 0) {
		const char *key = e->name, *first = strchr(key, '.'), *last = strrchr(key, '.');
		char section[1024];

		/* A submodule's work tree is named relative to its git
		 * directory, which has the same place in the private
		 * repository. */
		bool worktree = submodule && !strcmp(key, "core.worktree") && e->value &&
				e->value[0] != '/';
		if ((!config_key_kept(key) && !worktree) || !first || !last ||
		    (size_t)(last - key) >= sizeof(section))
			continue;
		memcpy(section, key, (size_t)(last - key));
		section[last - key] = '\0';
		if (strcmp(section, last_section) != 0) {
			if (first == last)
				sfs_buf_add(out, "[%s]\n", section);
			else {
				sfs_buf_add(out, "[%.*s ", (int)(first - key), key);
				buf_quoted(out, section + (first - key) + 1);
				sfs_buf_add(out, "]\n");
			}
			snprintf(last_section, sizeof(last_section), "%s", section);
		}
		sfs_buf_add(out, "\t%s = ", last + 1);
		buf_quoted(out, e->value ? e->value : "");
		sfs_buf_add(out, "\n");
	}
	git_config_iterator_free(it);
	git_config_free(local);
	return out->failed ? -ENOMEM : 0;
}

/* The private repository's own config, made once: what the agent sets
 * there (a remote, its identity) stays from session to session, and it
 * includes config.sandy, remade from SOURCE's at each mount. */
static int write_own_config(int gitfd, const struct stat *owner)
{
	static const char text[] = "[core]\n"
				   "\trepositoryformatversion = 0\n"
				   "\tbare = false\n"
				   "[include]\n"
				   "\tpath = config.sandy\n";
	struct stat st;

	if (fstatat(gitfd, "config", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		return 0;
	return sfs_git_write_at(gitfd, "config", text, sizeof(text) - 1, owner);
}

/* ---- refresh ---- */

static int copy_host_file(int gitfd, const char *host_gitdir, const char *name, size_t cap,
			  const struct stat *owner)
{
	cleanup_fd int dfd = open(host_gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *text = NULL;
	size_t len = 0;

	if (dfd < 0)
		return -errno;
	int r = sfs_git_read_at(dfd, name, cap, &text, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	const char *slash = strrchr(name, '/');
	if (!slash)
		return sfs_git_write_at(gitfd, name, text, len, owner);
	cleanup_free char *dir = strndup(name, (size_t)(slash - name));
	cleanup_fd int sub = dir ? sfs_git_make_dir(gitfd, dir, true, owner) : -ENOMEM;
	return sub < 0 ? sub : sfs_git_write_at(sub, slash + 1, text, len, owner);
}

/* SOURCE's info/exclude, and the agent's worktrees, which live in the
 * project only as far as its own repository is concerned. */
static int write_exclude(int gitfd, const char *common, bool top, const struct stat *owner)
{
	cleanup_fd int dfd = open(common, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *text = NULL;
	cleanup_buf struct sfs_buf b = {0};
	cleanup_fd int info = sfs_git_make_dir(gitfd, "info", true, owner);

	if (info < 0)
		return info;
	if (dfd >= 0 && sfs_git_read_at(dfd, "info/exclude", REFS_FILE_MAX, &text, NULL) == 0)
		sfs_buf_add(&b, "%s%s", text, *text && text[strlen(text) - 1] != '\n' ? "\n" : "");
	if (top)
		sfs_buf_add(&b,
			    "# sandy: the agent's worktrees (git worktree add .worktrees/NAME)\n"
			    "/.worktrees/\n");
	return b.failed ? -ENOMEM : sfs_git_write_at(info, "exclude", b.s, b.len, owner);
}

/* The id HEAD resolves to in REFS (HEAD itself or the branch it names),
 * or NULL. */
static const char *head_id(const struct sfs_refs *refs)
{
	const struct sfs_ref *h = sfs_refs_find(refs, "HEAD");

	for (int hops = 0; h && hops < 5; hops++) {
		if (sfs_git_is_id(h->value))
			return h->value;
		h = sfs_refs_find(refs, h->value + 5);
	}
	return NULL;
}

/* What a refresh shares across the repository and its submodules. */
struct mirror {
	int treefd, storefd;
	const char *common;  /* SOURCE's common git directory */
	const char *seen_at; /* the same, where git inside finds it */
	struct stat owner;   /* SOURCE's git directory: what the files get */
	struct sfs_buf kept; /* what the agent kept, for the note */
	char **err;
};

/* The record of the repository at REL ("" for SOURCE's, "modules/NAME"
 * for a submodule's) in the store. */
static void record_name_of(const char *rel, char *out, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	if (!*rel) {
		snprintf(out, size, "%s", record_name);
		return;
	}
	for (const char *c = rel; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	snprintf(out, size, "%s-%016llx", record_name, (unsigned long long)h);
}

static int mirror_repo(struct mirror *m, git_repository *repo, const char *rel, int depth);

struct submodule_walk {
	struct mirror *m;
	git_repository *parent;
	int depth, r;
};

/* A submodule whose git directory lies in SOURCE's common directory
 * (modules/NAME, as `git submodule` makes them) gets its private copy at
 * the same place in the private repository, where its .git file in
 * SOURCE already points. Others (not cloned, elsewhere) are left out. */
static int submodule_cb(git_submodule *sm, const char *name, void *payload)
{
	struct submodule_walk *w = payload;
	git_repository *sub = NULL;
	char dir[PATH_MAX];
	size_t n = strlen(w->m->common);

	(void)name;
	if (git_submodule_open(&sub, sm) < 0)
		return 0;
	if (sfs_git_trimmed_dir(git_repository_commondir(sub), dir, sizeof(dir)) == 0 &&
	    strncmp(dir, w->m->common, n) == 0 && dir[n] == '/' && !strstr(dir + n, "/../"))
		w->r = mirror_repo(w->m, sub, dir + n + 1, w->depth + 1);
	git_repository_free(sub);
	return w->r < 0 ? -1 : 0;
}

/* Makes or refreshes the private copy of REPO at .git/REL in the store. */
static int mirror_repo(struct mirror *m, git_repository *repo, const char *rel, int depth)
{
	cleanup_refs struct sfs_refs hrefs = {0}, prefs = {0}, record = {0}, want = {0},
				     record_out = {0};
	cleanup_buf struct sfs_buf config = {0};
	char common[PATH_MAX], gitdir[PATH_MAX], path[PATH_MAX], alternates[PATH_MAX + 16],
		record_file[64];
	struct stat st;
	int r;

	if (depth > 8)
		return 0;
	if (sfs_git_trimmed_dir(git_repository_commondir(repo), common, sizeof(common)) < 0 ||
	    sfs_git_trimmed_dir(git_repository_path(repo), gitdir, sizeof(gitdir)) < 0 ||
	    snprintf(path, sizeof(path), "%s%s%s", private_dir, *rel ? "/" : "", rel) >=
		    (int)sizeof(path))
		return err_set(m->err, ENAMETOOLONG, "git directory '%s' too long", rel);
	bool fresh = fstatat(m->treefd, path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	cleanup_fd int gitfd = sfs_git_make_dir(m->treefd, path, true, &m->owner);
	if (gitfd < 0)
		return err_set(m->err, -gitfd, "cannot open the private repository's '%s': %s",
			       path, gitfd == -ENOTDIR ? "not a directory" : strerror(-gitfd));
	static const char *const dirs[] = {"objects/info", "objects/pack", "refs/heads",
					   "refs/tags", "info"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		int fd = sfs_git_make_dir(gitfd, dirs[i], true, &m->owner);
		if (fd < 0)
			return err_set(m->err, -fd, "cannot make '%s/%s' in the store: %s", path,
				       dirs[i], strerror(-fd));
		close(fd);
	}
	record_name_of(rel, record_file, sizeof(record_file));
	if ((r = sfs_git_read_refs(repo, &hrefs)) < 0 ||
	    (!fresh && (r = sfs_git_read_refs_at(gitfd, &prefs)) < 0) ||
	    (r = read_record(m->storefd, record_file, &record)) < 0 ||
	    (r = plan_refs(&hrefs, &prefs, &record, fresh, &want, &record_out, &m->kept)) < 0)
		return err_set(m->err, -r, "cannot read the refs of '%s': %s", path, strerror(-r));
	/* The index describes HEAD's commit: SOURCE's when HEAD is the same. */
	const char *want_head = head_id(&want), *host_head = head_id(&hrefs);
	bool same_head = same_value(sfs_refs_find(&want, "HEAD"), sfs_refs_find(&hrefs, "HEAD")) &&
			 want_head && host_head && strcmp(want_head, host_head) == 0;
	r = write_refs(gitfd, &want, &m->owner);
	if (r == 0)
		r = write_record(m->storefd, record_file, &record_out);
	if (r == 0)
		r = build_config(repo, *rel != '\0', &config);
	if (r == 0)
		r = sfs_git_write_at(gitfd, "config.sandy", config.s, config.len, &m->owner);
	if (r == 0)
		r = write_own_config(gitfd, &m->owner);
	if (r == 0) {
		int n = snprintf(alternates, sizeof(alternates), "%s%s%s/objects\n", m->seen_at,
				 *rel ? "/" : "", rel);
		r = n < 0 || (size_t)n >= sizeof(alternates) ? -ENAMETOOLONG : 0;
	}
	cleanup_fd int info =
		r == 0 ? sfs_git_make_dir(gitfd, "objects/info", true, &m->owner) : -1;
	if (r == 0)
		r = info < 0 ? info
			     : sfs_git_write_at(info, "alternates", alternates, strlen(alternates),
						&m->owner);
	if (r == 0)
		r = write_exclude(gitfd, common, !*rel, &m->owner);
	if (r == 0 && (fresh || same_head))
		r = copy_host_file(gitfd, gitdir, "index", INDEX_MAX, &m->owner);
	if (r < 0)
		return err_set(m->err, -r, "cannot write the private repository's '%s': %s", path,
			       strerror(-r));
	struct submodule_walk w = {.m = m, .parent = repo, .depth = depth};
	if (git_submodule_foreach(repo, submodule_cb, &w) < 0 && w.r == 0)
		git_error_clear(); /* a broken .gitmodules: no submodules to mirror */
	return w.r;
}

static int refresh(struct sfs_store *store, const char *source, const char *host_git_at,
		   char **note, char **err)
{
	cleanup_repo git_repository *host = NULL;
	char common[PATH_MAX];
	int r;

	*note = NULL;
	*err = NULL;
	r = sfs_git_open_top(source, &host, err);
	if (r <= 0)
		return r;
	if (sfs_git_trimmed_dir(git_repository_commondir(host), common, sizeof(common)) < 0)
		return err_set(err, ENAMETOOLONG, "git directory of '%s' too long", source);
	struct mirror m = {
		.treefd = sfs_store_tree_fd(store),
		.storefd = sfs_store_dir_fd(store),
		.common = common,
		.seen_at = host_git_at ? host_git_at : common,
		.err = err,
	};
	if (stat(git_repository_path(host), &m.owner) < 0)
		return err_set(err, errno, "cannot read '%s': %s", git_repository_path(host),
			       strerror(errno));
	r = mirror_repo(&m, host, "", 0);
	if (r == 0 && m.kept.failed)
		r = -ENOMEM;
	if (r == 0 && m.kept.len && asprintf(note, "kept the agent's own %s", m.kept.s) < 0)
		*note = NULL;
	sfs_buf_free(&m.kept);
	return r;
}

int sfs_gitpriv_refresh(struct sfs_store *store, const char *source, const char *host_git_at,
			char **note, char **err)
{
	/* Without it, the first object read from a pack (any cloned
	 * repository) crashed the daemon: the policy's layout code had shut
	 * libgit2 down again. */
	sfs_git_library_init();
	int r = refresh(store, source, host_git_at, note, err);
	git_libgit2_shutdown();
	return r;
}
