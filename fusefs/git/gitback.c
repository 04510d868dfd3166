/* gitback.c - see gitpriv.h: `sandyfs git list|import|check`, the way
 * the agent's commits come back. */
#include "gitpriv.h"
#include "source.h"
#include "gitcheck.h"
#include "gitlayout.h"
#include "gitrefs.h"
#include "common/err.h"
#include "common/quote.h"
#include "common/usage.h"
#include "common/util.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * What `sandyfs git` reads of the agent's objects: everything it reads,
 * it reads whole (libgit2 streams no packed object), and a pack shrinks
 * what the agent made a thousandfold, 2 GiB of zeros to 9 MB. So the size
 * of each object is taken from its header first and an object over its
 * type's limit is not read: reads of it fail, and the import refuses it
 * by name before it writes anything.
 *
 * BLOB_MAX: GitHub refuses files over 100 MiB; a larger one is no source
 * to review. TREE_MAX for commits, trees and tags: those of real projects
 * are kilobytes (a tree of 10,000 entries is about 400 KiB).
 */
#define BLOB_MAX (100u << 20)
#define TREE_MAX (8u << 20)

/*
 * How much `git list` reads to count lines changed. libgit2's diff holds
 * both versions of a file and about 110 bytes for each of their lines: 16
 * MiB of one-character lines cost 800 MiB. A file whose two versions
 * together are over DIFF_FILE_MAX (sized from the object headers) is
 * counted as changed and not read, so one diff holds at most about 60
 * MiB; past DIFF_LIST_MAX read for the whole listing (however many
 * branches the agent made), so are the rest, which bounds the time a
 * listing takes. No rename detection.
 */
#define DIFF_FILE_MAX (512u << 10)
#define DIFF_LIST_MAX (32u << 20)
/* Files over a limit are named, up to this many per branch. */
#define DIFF_NAMED_MAX 10

static size_t object_max(git_object_t type)
{
	return type == GIT_OBJECT_BLOB ? BLOB_MAX : TREE_MAX;
}

/* A size for messages: "2.0 GiB", "16.0 MiB", "512 KiB", "40 bytes". */
static const char *size_text(uint64_t n, char *buf, size_t size)
{
	if (n >= 1u << 30)
		snprintf(buf, size, "%.1f GiB", (double)n / (1u << 30));
	else if (n >= 1u << 20)
		snprintf(buf, size, "%.1f MiB", (double)n / (1u << 20));
	else if (n >= 1u << 10)
		snprintf(buf, size, "%llu KiB", (unsigned long long)n >> 10);
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)n);
	return buf;
}

/* A backend of the agent's objects (loose or packed) behind one that
 * reads no object over object_max(). */
struct bounded_backend {
	git_odb_backend parent;
	git_odb_backend *inner;
};

static git_odb_backend *inner_of(git_odb_backend *b)
{
	git_odb_backend *in = ((struct bounded_backend *)b)->inner;

	in->odb = b->odb;
	return in;
}

static int bounded_check(git_odb_backend *in, const git_oid *id)
{
	char have[32], max[32];
	git_object_t type;
	size_t len;
	int r = in->read_header(&len, &type, in, id);

	if (r < 0)
		return r;
	if (len <= object_max(type))
		return 0;
	git_error_set(GIT_ERROR_ODB, "%s %s is %s, over the %s sandyfs reads of one",
		      git_object_type2string(type), git_oid_tostr_s(id),
		      size_text(len, have, sizeof(have)),
		      size_text(object_max(type), max, sizeof(max)));
	return GIT_ERROR;
}

static int bounded_read(void **data, size_t *len, git_object_t *type, git_odb_backend *b,
			const git_oid *id)
{
	git_odb_backend *in = inner_of(b);
	int r = bounded_check(in, id);

	return r < 0 ? r : in->read(data, len, type, in, id);
}

static int bounded_read_prefix(git_oid *full, void **data, size_t *len, git_object_t *type,
			       git_odb_backend *b, const git_oid *id, size_t n)
{
	git_odb_backend *in = inner_of(b);
	git_oid found;
	int r = in->exists_prefix(&found, in, id, n);

	if (r == 0)
		r = bounded_check(in, &found);
	return r < 0 ? r : in->read_prefix(full, data, len, type, in, id, n);
}

static int bounded_read_header(size_t *len, git_object_t *type, git_odb_backend *b,
			       const git_oid *id)
{
	git_odb_backend *in = inner_of(b);

	return in->read_header(len, type, in, id);
}

static int bounded_exists(git_odb_backend *b, const git_oid *id)
{
	git_odb_backend *in = inner_of(b);

	return in->exists(in, id);
}

static int bounded_exists_prefix(git_oid *out, git_odb_backend *b, const git_oid *id, size_t n)
{
	git_odb_backend *in = inner_of(b);

	return in->exists_prefix(out, in, id, n);
}

static int bounded_refresh(git_odb_backend *b)
{
	git_odb_backend *in = inner_of(b);

	return in->refresh ? in->refresh(in) : 0;
}

static void bounded_free(git_odb_backend *b)
{
	git_odb_backend *in = ((struct bounded_backend *)b)->inner;

	in->free(in);
	free(b);
}

/* Puts IN (taken over, also on failure) behind a bounded backend, added
 * to ODB at PRIORITY. */
static int add_bounded(git_odb *odb, git_odb_backend *in, int priority)
{
	struct bounded_backend *b = calloc(1, sizeof(*b));

	if (!b || !in->read || !in->read_prefix || !in->read_header || !in->exists ||
	    !in->exists_prefix || git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION) < 0) {
		free(b);
		in->free(in);
		return -1;
	}
	b->inner = in;
	b->parent.read = bounded_read;
	b->parent.read_prefix = bounded_read_prefix;
	b->parent.read_header = bounded_read_header;
	b->parent.exists = bounded_exists;
	b->parent.exists_prefix = bounded_exists_prefix;
	b->parent.refresh = bounded_refresh;
	b->parent.free = bounded_free;
	if (git_odb_add_backend(odb, &b->parent, priority) < 0) {
		bounded_free(&b->parent);
		return -1;
	}
	return 0;
}

/* What `sandyfs git` works on: SOURCE's repository, and a repository
 * whose objects are the private ones and SOURCE's (read through the
 * object database only: none of the private repository's config, hooks
 * or alternates is read). */
struct work {
	char source[PATH_MAX];
	git_repository *host;
	git_odb *odb;
	git_repository *repo;
	int gitfd; /* the private repository */
	int objfd; /* its objects, which the database reads through */
	struct sfs_refs host_refs, priv_refs;
	struct sfs_policy *policy;
};

/* SOURCE's policy as the mount without a private repository has it: the
 * import judges what would land in the user's checkout. */
static int load_policy(const struct sfs_rule_opts *rules, const char *source,
		       struct sfs_policy **out)
{
	struct sfs_source src = {rules, source, false};
	cleanup_free char *err = NULL;
	int r = sfs_source_policy(&src, out, &err);

	if (r < 0)
		error("%s", err ? err : strerror(-r));
	return r;
}

static void work_free(struct work *w)
{
	git_repository_free(w->repo);
	git_odb_free(w->odb);
	git_repository_free(w->host);
	if (w->gitfd >= 0)
		close(w->gitfd);
	if (w->objfd >= 0)
		close(w->objfd);
	sfs_refs_free(&w->host_refs);
	sfs_refs_free(&w->priv_refs);
	sfs_policy_free(w->policy);
}

static int store_path(const char *source, const char *store, char **out)
{
	if (store) {
		*out = strdup(store);
		return *out ? 0 : -ENOMEM;
	}
	return sfs_store_default_path(source, out);
}

/* Whether the object directory at FD (PATH, for messages) holds only
 * what git puts there: regular files, and directories one level down.
 * libgit2 opens what it finds with a blocking open() and follows
 * symlinks, so anything else is refused before it looks: -EINVAL and
 * *ODD naming the first one. */
static int plain_objects(int fd, const char *path, int depth, char **odd)
{
	DIR *d = sfs_git_opendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (S_ISREG(st.st_mode))
			continue;
		if (S_ISDIR(st.st_mode) && depth == 0) {
			int sub = sfs_git_open_dir(fd, de->d_name, false);
			cleanup_free char *subpath = NULL;
			if (sub < 0 || asprintf(&subpath, "%s/%s", path, de->d_name) < 0)
				r = sub < 0 ? sub : -ENOMEM;
			else
				r = plain_objects(sub, subpath, depth + 1, odd);
			if (sub >= 0)
				close(sub);
			continue;
		}
		r = -EINVAL;
		cleanup_free char *full = NULL, *shown = NULL;
		if (asprintf(&full, "%s/%s", path, de->d_name) < 0)
			full = NULL;
		/* The agent named it. */
		shown = full ? quote_str(full) : NULL;
		if (!shown || asprintf(odd, "'%s', %s", shown,
				       S_ISLNK(st.st_mode)    ? "a symlink"
				       : S_ISFIFO(st.st_mode) ? "a FIFO"
				       : S_ISDIR(st.st_mode)  ? "a directory too deep"
							      : "not a regular file") < 0)
			*odd = NULL;
	}
	closedir(d);
	return r;
}

/* Opens what W needs; says what fails. */
static int work_open(struct work *w, const struct sfs_rule_opts *rules, const char *store,
		     const char *source)
{
	cleanup_free char *path = NULL, *err = NULL;
	git_odb_backend *loose = NULL, *pack = NULL;
	char objects[64], host_objects[PATH_MAX + 16];

	*w = (struct work){.gitfd = -1, .objfd = -1};
	if (!realpath(source, w->source)) {
		int e = errno;
		cleanup_free char *shown = quote_str(source);
		error("cannot resolve source '%s': %s", quoted(shown), strerror(e));
		return -e;
	}
	int r = sfs_git_open_top(w->source, &w->host, &err);
	if (r <= 0) {
		cleanup_free char *shown = quote_str(w->source);
		if (r == 0)
			error("'%s' is not the top of a git work tree", quoted(shown));
		else
			error("%s", err);
		return r < 0 ? r : -ENOENT;
	}
	if (store_path(w->source, store, &path) < 0) {
		error("cannot find the project's store (no HOME): give it with --store");
		return -ENOENT;
	}
	cleanup_fd int storefd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	w->gitfd = storefd < 0 ? -errno : sfs_git_open_dir(storefd, "tree/.git", false);
	cleanup_free char *shown = quote_str(path);
	if (w->gitfd < 0) {
		error("no private repository in store '%s' (a session with --private-git "
			    "makes it): "
			    "%s",
			    quoted(shown), strerror(-w->gitfd));
		return w->gitfd;
	}
	w->objfd = sfs_git_open_dir(w->gitfd, "objects", false);
	if (w->objfd < 0) {
		error("the private repository in '%s' has no objects directory",
			    quoted(shown));
		return w->objfd;
	}
	cleanup_free char *odd = NULL;
	int e = plain_objects(w->objfd, "objects", 0, &odd);
	if (e < 0) {
		error("the private repository's objects hold %s: not read (a FIFO would "
			    "leave sandyfs waiting, a symlink would read what it points at)",
			    odd ? odd : strerror(-e));
		return e;
	}
	/* By the directory just opened: nothing swaps a symlink in on the way. */
	snprintf(objects, sizeof(objects), "/proc/self/fd/%d", w->objfd);
	snprintf(host_objects, sizeof(host_objects), "%s/objects",
		 git_repository_commondir(w->host));
	if (git_odb_new(&w->odb) < 0 || git_odb_backend_loose(&loose, objects, -1, 0, 0, 0) < 0 ||
	    add_bounded(w->odb, loose, 2) < 0 || git_odb_backend_pack(&pack, objects) < 0 ||
	    add_bounded(w->odb, pack, 1) < 0 ||
	    git_odb_add_disk_alternate(w->odb, host_objects) < 0 ||
	    git_repository_wrap_odb(&w->repo, w->odb) < 0) {
		error("cannot read the objects of the private repository: %s",
			    sfs_git_message());
		return -EIO;
	}
	if ((r = sfs_git_read_refs(w->host, &w->host_refs)) < 0 ||
	    (r = sfs_git_read_refs_at(w->gitfd, &w->priv_refs)) < 0) {
		error("cannot read the refs: %s", strerror(-r));
		return r;
	}
	return load_policy(rules, w->source, &w->policy);
}

/* The id NAME resolves to in REFS (following symbolic refs), or NULL. */
static const char *ref_id(const struct sfs_refs *refs, const char *name)
{
	const struct sfs_ref *e = sfs_refs_find(refs, name);

	for (int hops = 0; e && hops < 5; hops++) {
		if (sfs_git_is_id(e->value))
			return e->value;
		e = sfs_refs_find(refs, e->value + 5);
	}
	return NULL;
}

/* A walk over the commits reachable from TIP (of the agent's BRANCH) and
 * from none of SOURCE's refs, oldest first; -EINVAL, said, when TIP is no
 * commit. */
static int new_commits(struct work *w, const char *branch, const git_oid *tip, git_revwalk **out)
{
	git_revwalk *walk = NULL;
	git_object_t type = GIT_OBJECT_INVALID;
	size_t size;

	/* libgit2's walk would peel a tag; the branch must be the commit. */
	if (git_odb_read_header(&size, &type, w->odb, tip) < 0 || type != GIT_OBJECT_COMMIT) {
		cleanup_free char *shown = quote_str(branch);
		error("the agent's branch '%s' points at %s (%s), not a commit",
			    quoted(shown), type == GIT_OBJECT_TAG ? "a tag" : "no commit",
			    git_oid_tostr_s(tip));
		return -EINVAL;
	}
	if (git_revwalk_new(&walk, w->repo) < 0)
		return -ENOMEM;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (git_revwalk_push(walk, tip) < 0) {
		error("cannot walk commit %s: %s", git_oid_tostr_s(tip), sfs_git_message());
		git_revwalk_free(walk);
		return -EIO;
	}
	for (size_t i = 0; i < w->host_refs.n; i++) {
		git_oid id;
		git_object *obj = NULL, *commit = NULL;

		if (!sfs_git_is_id(w->host_refs.v[i].value) ||
		    git_oid_fromstr(&id, w->host_refs.v[i].value) < 0 ||
		    git_object_lookup(&obj, w->repo, &id, GIT_OBJECT_ANY) < 0)
			continue;
		if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) == 0)
			git_revwalk_hide(walk, git_object_id(commit));
		git_object_free(commit);
		git_object_free(obj);
	}
	*out = walk;
	return 0;
}

/* Where refusals go: JSON objects into LIST, else lines into TEXT, else
 * stdout, each line after PREFIX. */
struct report {
	cJSON *list;
	struct sfs_buf *text;
	const char *prefix;
};

static int report_refusal(void *ctx, const struct sfs_git_refusal *r)
{
	struct report *rep = ctx;
	char rule[PATH_MAX + 32];

	if (r->rule_line > 0)
		snprintf(rule, sizeof(rule), "%s:%d", r->rule_file, r->rule_line);
	else
		snprintf(rule, sizeof(rule), "%s", r->rule_file);
	if (!rep->list) {
		/* The path is the agent's; the rest may quote it. */
		cleanup_free char *path = quote_str(r->path), *file = quote_str(rule);
		cleanup_free char *text = quote_str(r->rule_text), *why = quote_str(r->why);
		cleanup_free char *line = NULL;
		if (asprintf(&line, "%scommit %.12s %s '%s': %s by %s '%s': %s\n", rep->prefix,
			     git_oid_tostr_s(r->commit), sfs_git_change_name(r->change),
			     quoted(path), sfs_class_name(r->cls), quoted(file), quoted(text),
			     quoted(why)) < 0)
			return -ENOMEM;
		if (!rep->text) {
			fputs(line, stdout);
			return 0;
		}
		sfs_buf_add(rep->text, "%s", line);
		return rep->text->failed ? -ENOMEM : 0;
	}
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "commit", git_oid_tostr_s(r->commit)) ||
	    quote_json_add(o, "path", r->path) < 0 ||
	    !cJSON_AddStringToObject(o, "change", sfs_git_change_name(r->change)) ||
	    !cJSON_AddStringToObject(o, "class", sfs_class_name(r->cls)) ||
	    quote_json_add(o, "rule", rule) < 0 || quote_json_add(o, "pattern", r->rule_text) < 0 ||
	    quote_json_add(o, "why", r->why) < 0) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	cJSON_AddItemToArray(rep->list, o);
	return 0;
}

/* Checks every commit of WALK; the refusals go to REP. Returns their
 * number, or a negative errno; *COUNT gets the commits. */
static int check_walk(struct work *w, git_revwalk *walk, struct report *rep, size_t *count,
		      git_oid **ids)
{
	git_oid id;
	int refused = 0, r;
	size_t cap = 0;
	cleanup_git_objects struct sfs_git_objects *seen = NULL;
	git_odb *host = NULL;

	*count = 0;
	if (ids)
		*ids = NULL;
	if (git_repository_odb(&host, w->host) < 0 || sfs_git_objects_new(host, &seen) < 0) {
		git_odb_free(host);
		return -ENOMEM;
	}
	/* Owned by the host's repository, which outlives the walk. */
	git_odb_free(host);
	while ((r = git_revwalk_next(&id, walk)) == 0) {
		cleanup_free char *err = NULL;

		r = sfs_git_check(w->policy, seen, w->repo, &id, report_refusal, rep, &err);
		if (r < 0) {
			/* ERR may name a path of the commit's. */
			cleanup_free char *shown = quote_str(err ? err : strerror(-r));
			error("%s", quoted(shown));
			return r;
		}
		refused += r;
		if (ids && *count == cap) {
			cap = cap ? cap * 2 : 64;
			git_oid *n = realloc(*ids, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			*ids = n;
		}
		if (ids)
			(*ids)[*count] = id;
		(*count)++;
	}
	if (r != GIT_ITEROVER) {
		error("cannot walk the commits: %s", sfs_git_message());
		return -EIO;
	}
	return refused;
}

/* What a listing says of a branch's changes, between the parent of its
 * oldest commit and its tip. */
struct diffstat {
	size_t files, insertions, deletions;
	size_t unread; /* files counted, not read */
	size_t named;  /* of which in NAMES */
	struct {
		char *path;
		uint64_t size; /* both versions together */
		bool budget;   /* past DIFF_LIST_MAX, not over DIFF_FILE_MAX */
	} names[DIFF_NAMED_MAX];
};

static void diffstat_free(struct diffstat *st)
{
	for (size_t i = 0; i < st->named; i++)
		free(st->names[i].path);
}

/* The size of F's object from its header, 0 for none (an added or
 * deleted side, a submodule's commit), UINT64_MAX when it cannot be
 * told, so that it is not read either. */
static uint64_t file_size(git_odb *odb, const git_diff_file *f)
{
	git_object_t type;
	size_t len;

	if (git_oid_is_zero(&f->id) || f->mode == GIT_FILEMODE_COMMIT)
		return 0;
	return git_odb_read_header(&len, &type, odb, &f->id) < 0 ? UINT64_MAX : len;
}

static int diffstat(struct work *w, const git_oid *first, const git_oid *tip, struct diffstat *st,
		    uint64_t *read)
{
	git_commit *a = NULL, *b = NULL, *parent = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	int r = -EIO;

	*st = (struct diffstat){0};
	if (git_commit_lookup(&a, w->repo, first) < 0 || git_commit_lookup(&b, w->repo, tip) < 0)
		goto out;
	if (git_commit_parentcount(a) > 0 &&
	    (git_commit_parent(&parent, a, 0) < 0 || git_commit_tree(&ta, parent) < 0))
		goto out;
	/* Tree against tree compares ids: no content is read here. */
	if (git_commit_tree(&tb, b) < 0 || git_diff_tree_to_tree(&diff, w->repo, ta, tb, NULL) < 0)
		goto out;
	r = 0;
	for (size_t i = 0; r == 0 && i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		uint64_t ol = file_size(w->odb, &d->old_file), nl = file_size(w->odb, &d->new_file);
		uint64_t both = ol == UINT64_MAX || nl == UINT64_MAX ? UINT64_MAX : ol + nl;
		git_patch *patch = NULL;
		size_t add, del;

		st->files++;
		if (both <= DIFF_FILE_MAX && *read + both <= DIFF_LIST_MAX) {
			*read += both;
			if (git_patch_from_diff(&patch, diff, i) == 0 &&
			    git_patch_line_stats(NULL, &add, &del, patch) == 0) {
				st->insertions += add;
				st->deletions += del;
			}
			git_patch_free(patch);
			continue;
		}
		st->unread++;
		if (st->named == DIFF_NAMED_MAX || both == UINT64_MAX)
			continue;
		st->names[st->named].path =
			strdup(d->new_file.path ? d->new_file.path : d->old_file.path);
		st->names[st->named].size = both;
		st->names[st->named].budget = both <= DIFF_FILE_MAX;
		if (!st->names[st->named++].path)
			r = -ENOMEM;
	}
out:
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(parent);
	git_commit_free(a);
	git_commit_free(b);
	return r;
}

/* The files a diffstat counted without reading, as lines of text. */
static void print_unread(const struct diffstat *st)
{
	char size[32], max[32], total[32];

	for (size_t i = 0; i < st->named; i++) {
		cleanup_free char *path = quote_str(st->names[i].path);
		if (st->names[i].budget)
			printf("  %s: past the %s a listing reads: counted, not read\n",
			       quoted(path), size_text(DIFF_LIST_MAX, total, sizeof(total)));
		else
			printf("  %s: %s, over the %s diff limit: counted, not read\n",
			       quoted(path), size_text(st->names[i].size, size, sizeof(size)),
			       size_text(DIFF_FILE_MAX, max, sizeof(max)));
	}
	if (st->unread > st->named)
		printf("  ... and %zu more files counted, not read\n", st->unread - st->named);
}

static void print_commits(struct work *w, const git_oid *ids, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		git_commit *c = NULL;
		if (git_commit_lookup(&c, w->repo, &ids[i]) < 0)
			continue;
		const char *summary = git_commit_summary(c);
		cleanup_free char *shown = quote_str(summary ? summary : "");
		printf("  %.12s %s\n", git_oid_tostr_s(&ids[i]), quoted(shown));
		git_commit_free(c);
	}
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* The branch's entry of a JSON listing: its counts and the files over
 * the limits, which are named with DIFF_FILE_MAX. */
static int branch_json(cJSON *out, const char *name, const char *tip_hex, size_t n,
		       const struct diffstat *st, bool importable, cJSON **refused)
{
	cJSON *o = cJSON_CreateObject(), *unread = cJSON_CreateArray();

	cJSON_AddItemToArray(out, o);
	if (!o || !unread || quote_json_add(o, "branch", name) < 0 ||
	    !cJSON_AddStringToObject(o, "tip", tip_hex) ||
	    !cJSON_AddNumberToObject(o, "commits", (double)n) ||
	    !cJSON_AddNumberToObject(o, "files", (double)st->files) ||
	    !cJSON_AddNumberToObject(o, "insertions", (double)st->insertions) ||
	    !cJSON_AddNumberToObject(o, "deletions", (double)st->deletions) ||
	    !cJSON_AddBoolToObject(o, "importable", importable)) {
		cJSON_Delete(unread);
		return -ENOMEM;
	}
	cJSON_AddItemToObject(o, "refused", *refused);
	*refused = NULL;
	cJSON_AddItemToObject(o, "not_read", unread);
	for (size_t i = 0; i < st->named; i++) {
		cJSON *u = cJSON_CreateObject();
		cJSON_AddItemToArray(unread, u);
		if (!u || quote_json_add(u, "path", st->names[i].path) < 0 ||
		    !cJSON_AddNumberToObject(u, "size", (double)st->names[i].size))
			return -ENOMEM;
	}
	if (!cJSON_AddNumberToObject(o, "not_read_count", (double)st->unread) ||
	    !cJSON_AddNumberToObject(o, "diff_file_limit", DIFF_FILE_MAX) ||
	    !cJSON_AddNumberToObject(o, "diff_list_limit", DIFF_LIST_MAX))
		return -ENOMEM;
	return 0;
}

/* One branch of the agent's (refs/heads/NAME at TIP) for `git list`: its
 * commits SOURCE lacks, whether they may come back, and why not. Nothing
 * when it has none. Into OUT as JSON, else printed; *READ counts what
 * the listing has read of DIFF_LIST_MAX. A negative errno when the
 * branch cannot be read (libgit2 or the check said why). */
static int list_branch(struct work *w, const char *name, const char *tip_hex, cJSON *out,
		       uint64_t *read)
{
	git_revwalk *walk = NULL;
	git_oid tip, *ids = NULL;
	size_t n = 0;
	struct diffstat st = {0};
	cleanup_buf struct sfs_buf refusals = {0};
	struct report rep = {.prefix = "  refused: "};
	int r;

	if (git_oid_fromstr(&tip, tip_hex) < 0)
		return 0;
	/* A branch that is no commit cannot be imported: said, and skipped
	 * as one that cannot be read. */
	if ((r = new_commits(w, name, &tip, &walk)) < 0)
		return r;
	if (out)
		rep.list = cJSON_CreateArray();
	else
		rep.text = &refusals; /* printed after the commits */
	r = check_walk(w, walk, &rep, &n, &ids);
	git_revwalk_free(walk);
	if (r >= 0 && n > 0) {
		int e = diffstat(w, &ids[0], &tip, &st, read);
		if (e == -ENOMEM)
			r = e;
		else if (e < 0)
			error("cannot count the changes of %.12s: %s", tip_hex,
				    sfs_git_message());
	}
	if (r >= 0 && n > 0 && out) {
		r = branch_json(out, name, tip_hex, n, &st, r == 0, &rep.list) < 0 ? -ENOMEM : r;
	} else if (r >= 0 && n > 0) {
		cleanup_free char *shown = quote_str(name), *target = NULL;
		if (asprintf(&target, "sandy/%s", name) < 0)
			target = NULL;
		cleanup_free char *shown_target = target ? quote_str(target) : NULL;
		printf("%s: %zu commit%s, %zu file%s changed, %zu insertion%s(+), "
		       "%zu deletion%s(-); ",
		       quoted(shown), n, plural(n), st.files, plural(st.files), st.insertions,
		       plural(st.insertions), st.deletions, plural(st.deletions));
		if (r)
			printf("cannot be imported\n");
		else
			printf("ready to import as %s\n", quoted(shown_target));
		print_commits(w, ids, n);
		print_unread(&st);
		if (refusals.len)
			fputs(refusals.s, stdout);
	}
	diffstat_free(&st);
	cJSON_Delete(rep.list);
	free(ids);
	return r < 0 ? r : 0;
}

int sfs_git_list_main(const struct sfs_rule_opts *rules, const char *store, bool json,
		      const char *source)
{
	struct work w;
	cJSON *out = json ? cJSON_CreateArray() : NULL;
	uint64_t read = 0; /* of DIFF_LIST_MAX */
	int status = 1;

	sfs_git_library_init();
	if (work_open(&w, rules, store, source) < 0)
		goto done;
	qsort(w.priv_refs.v, w.priv_refs.n, sizeof(*w.priv_refs.v), sfs_ref_cmp);
	status = 0;
	for (size_t i = 0; i < w.priv_refs.n; i++) {
		const struct sfs_ref *ref = &w.priv_refs.v[i];

		if (strncmp(ref->name, "refs/heads/", 11) != 0 || !sfs_git_is_id(ref->value))
			continue;
		int r = list_branch(&w, ref->name + 11, ref->value, out, &read);
		if (r == -ENOMEM) {
			error("out of memory");
			status = 1;
			break;
		}
		if (r == 0)
			continue;
		/* The agent's branch: the others are listed still. */
		cleanup_free char *shown = quote_str(ref->name + 11);
		error("branch '%s' (%.12s) cannot be read: skipped", quoted(shown),
			    ref->value);
		status = 1;
		cJSON *o = out ? cJSON_CreateObject() : NULL;
		cJSON_AddItemToArray(out, o);
		if (o && (quote_json_add(o, "branch", ref->name + 11) < 0 ||
			  !cJSON_AddStringToObject(o, "tip", ref->value) ||
			  !cJSON_AddStringToObject(o, "error", "cannot be read")))
			break;
	}
	if (json) {
		char *text = cJSON_PrintUnformatted(out);
		if (text)
			puts(text);
		else
			status = 1;
		free(text);
	}
done:
	cJSON_Delete(out);
	work_free(&w);
	git_libgit2_shutdown();
	return status;
}

/* Copies object ID, and for a tree everything in it, from the combined
 * database into SOURCE's, unless SOURCE has it. */
static int copy_object(struct work *w, git_odb *dst, const git_oid *id)
{
	git_odb_object *obj = NULL;
	git_oid written;

	if (git_odb_exists(dst, id))
		return 0;
	if (git_odb_read(&obj, w->odb, id) < 0) {
		error("cannot read object %s: %s", git_oid_tostr_s(id), sfs_git_message());
		return -EIO;
	}
	git_object_t type = git_odb_object_type(obj);
	int r = git_odb_write(&written, dst, git_odb_object_data(obj), git_odb_object_size(obj),
			      type);
	git_odb_object_free(obj);
	if (r < 0 || !git_oid_equal(&written, id)) {
		error("cannot write object %s into the repository: %s", git_oid_tostr_s(id),
			    r < 0 ? sfs_git_message() : "its id changed");
		return -EIO;
	}
	if (type != GIT_OBJECT_TREE)
		return 0;
	git_tree *tree = NULL;
	if (git_tree_lookup(&tree, w->repo, id) < 0)
		return -EIO;
	r = 0;
	for (size_t i = 0; r == 0 && i < git_tree_entrycount(tree); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		if (git_tree_entry_filemode(e) != GIT_FILEMODE_COMMIT)
			r = copy_object(w, dst, git_tree_entry_id(e));
	}
	git_tree_free(tree);
	return r;
}

/* Object ids seen, so that a tree many paths share is looked at once:
 * open addressing, the ids' first bytes as their hash. */
struct oidset {
	git_oid *v;
	size_t n, cap;
};

/* 1 when ID is new to S (and now in it), 0 when it was there, -ENOMEM. */
static int oidset_add(struct oidset *s, const git_oid *id)
{
	static const git_oid zero;

	if (2 * (s->n + 1) > s->cap) {
		struct oidset big = {.cap = s->cap ? 2 * s->cap : 256};
		if (!(big.v = calloc(big.cap, sizeof(*big.v))))
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (!git_oid_equal(&s->v[i], &zero))
				oidset_add(&big, &s->v[i]);
		free(s->v);
		*s = big;
	}
	uint64_t h;
	memcpy(&h, id->id, sizeof(h));
	for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (git_oid_equal(&s->v[i], id))
			return 0;
		if (git_oid_equal(&s->v[i], &zero)) {
			s->v[i] = *id;
			s->n++;
			return 1;
		}
	}
}

/*
 * How deep the trees of an import may nest. copy_object recurses once a
 * level; git itself refuses trees deeper than 4096 (core.maxTreeDepth).
 */
#define TREE_DEPTH_MAX 4096

/* What check_sizes walks with: the objects seen and the path so far. */
struct size_walk {
	struct work *w;
	git_odb *dst;
	struct oidset seen;
	struct sfs_buf path;
	const git_oid *commit;
	const char *branch;
};

/* Whether object ID (at PATH of the commit being checked, when it is a
 * tree entry) and what it holds may be copied: every object that
 * copy_object would write, each read from its header alone. */
static int check_size(struct size_walk *sw, const git_oid *id, int depth)
{
	char have[32], max[32];
	git_object_t type;
	size_t len;
	int r;

	if (git_odb_exists(sw->dst, id) || (r = oidset_add(&sw->seen, id)) == 0)
		return 0;
	if (r < 0 || sw->path.failed)
		return -ENOMEM;
	if (git_odb_read_header(&len, &type, sw->w->odb, id) < 0) {
		error("cannot read object %s: %s", git_oid_tostr_s(id), sfs_git_message());
		return -EIO;
	}
	if (len > object_max(type) || depth > TREE_DEPTH_MAX) {
		cleanup_free char *path = quote_str(sw->path.len ? sw->path.s : "");
		cleanup_free char *branch = quote_str(sw->branch);
		char commit[16];
		snprintf(commit, sizeof(commit), "%.12s", git_oid_tostr_s(sw->commit));
		if (depth > TREE_DEPTH_MAX)
			error("tree %s at '%s' of commit %s is nested deeper than %d trees: "
				    "'%s' not imported (nothing was written)",
				    git_oid_tostr_s(id), quoted(path), commit, TREE_DEPTH_MAX,
				    quoted(branch));
		else
			error(
				"%s %s%s%s%s of commit %s is %s, over the %s an import copies of "
				"one: '%s' not imported (nothing was written)",
				git_object_type2string(type), git_oid_tostr_s(id),
				sw->path.len ? " at '" : "", sw->path.len ? quoted(path) : "",
				sw->path.len ? "'" : "", commit, size_text(len, have, sizeof(have)),
				size_text(object_max(type), max, sizeof(max)), quoted(branch));
		return -EFBIG;
	}
	if (type != GIT_OBJECT_TREE)
		return 0;
	git_tree *tree = NULL;
	if (git_tree_lookup(&tree, sw->w->repo, id) < 0) {
		error("cannot read tree %s: %s", git_oid_tostr_s(id), sfs_git_message());
		return -EIO;
	}
	size_t at = sw->path.len;
	r = 0;
	for (size_t i = 0; r == 0 && i < git_tree_entrycount(tree); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT)
			continue;
		sfs_buf_add(&sw->path, "%s%s", at ? "/" : "", git_tree_entry_name(e));
		r = check_size(sw, git_tree_entry_id(e), depth + 1);
		sw->path.len = at;
		if (sw->path.s)
			sw->path.s[at] = '\0';
	}
	git_tree_free(tree);
	return r;
}

/* Whether the objects that copying the commits IDS of BRANCH would write
 * are all within their limits: 0, or a negative errno, said. */
static int check_sizes(struct work *w, git_odb *dst, const git_oid *ids, size_t n,
		       const char *branch)
{
	struct size_walk sw = {.w = w, .dst = dst, .branch = branch};
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		git_commit *c = NULL;
		sw.commit = &ids[i];
		sw.path.len = 0;
		r = check_size(&sw, &ids[i], 0);
		if (r == 0 && git_commit_lookup(&c, w->repo, &ids[i]) < 0)
			r = -EIO;
		if (r == 0)
			r = check_size(&sw, git_commit_tree_id(c), 0);
		git_commit_free(c);
	}
	free(sw.seen.v);
	sfs_buf_free(&sw.path);
	return r;
}

static int copy_commits(struct work *w, const git_oid *ids, size_t n, const char *branch)
{
	git_odb *dst = NULL;
	int r;

	if (git_repository_odb(&dst, w->host) < 0)
		return -EIO;
	/* Everything is sized before anything is written. */
	r = check_sizes(w, dst, ids, n, branch);
	for (size_t i = 0; i < n && r == 0; i++) {
		git_commit *c = NULL;
		r = git_commit_lookup(&c, w->repo, &ids[i]) < 0 ? -EIO : 0;
		if (r == 0)
			r = copy_object(w, dst, git_commit_tree_id(c));
		if (r == 0)
			r = copy_object(w, dst, &ids[i]);
		git_commit_free(c);
	}
	git_odb_free(dst);
	return r;
}

/* Points sandy/BRANCH at TIP: made, moved forward, or (FORCE) replaced. */
static int set_import_ref(struct work *w, const char *refname, const git_oid *tip, bool force,
			  const char *branch)
{
	git_reference *old = NULL, *ref = NULL;
	char msg[PATH_MAX + 64];
	int g = git_reference_lookup(&old, w->host, refname);
	cleanup_free char *shown = quote_str(branch), *shown_ref = quote_str(refname + 11);

	snprintf(msg, sizeof(msg), "sandy: import of the agent's %s", branch);
	if (g == 0 && git_reference_type(old) == GIT_REFERENCE_DIRECT) {
		const git_oid *was = git_reference_target(old);
		if (git_oid_equal(was, tip)) {
			printf("%s is already at %.12s\n", quoted(shown_ref), git_oid_tostr_s(tip));
			git_reference_free(old);
			return 0;
		}
		if (!force && !git_graph_descendant_of(w->repo, tip, was)) {
			error("%s exists and the agent's %s does not extend it (rebased?); "
				    "--force replaces it",
				    quoted(shown_ref), quoted(shown));
			git_reference_free(old);
			return -EEXIST;
		}
		g = git_reference_create_matching(&ref, w->host, refname, tip, 1, was, msg);
	} else if (g == GIT_ENOTFOUND) {
		g = git_reference_create(&ref, w->host, refname, tip, 0, msg);
	}
	git_reference_free(old);
	git_reference_free(ref);
	if (g < 0) {
		error("cannot set %s: %s", quoted(shown_ref), sfs_git_message());
		return -EIO;
	}
	printf("imported %s as %s (%.12s)\n", quoted(shown), quoted(shown_ref),
	       git_oid_tostr_s(tip));
	return 0;
}

int sfs_git_import_main(const struct sfs_rule_opts *rules, const char *store, bool force,
			const char *source, const char *branch)
{
	char name[PATH_MAX], target[PATH_MAX];
	struct work w;
	git_revwalk *walk = NULL;
	git_oid tip, *ids = NULL;
	size_t n = 0;
	int status = 1, r;

	cleanup_free char *shown = quote_str(branch);
	sfs_git_library_init();
	if (work_open(&w, rules, store, source) < 0)
		goto done;
	snprintf(name, sizeof(name), "refs/heads/%s", branch);
	snprintf(target, sizeof(target), "refs/heads/sandy/%s", branch);
	if (!sfs_git_ref_name_ok(name) || !sfs_git_ref_name_ok(target) ||
	    strlen(branch) > PATH_MAX - 32) {
		error("'%s' is not a branch name", quoted(shown));
		status = 2;
		goto done;
	}
	const char *id = ref_id(&w.priv_refs, name);
	if (!id || git_oid_fromstr(&tip, id) < 0) {
		error(
			"the agent's repository has no branch '%s' ('sandyfs git list' shows them)",
			quoted(shown));
		goto done;
	}
	if (new_commits(&w, branch, &tip, &walk) < 0)
		goto done;
	struct report rep = {.prefix = "refused: "};
	r = check_walk(&w, walk, &rep, &n, &ids);
	if (r < 0)
		goto done;
	if (r > 0) {
		error("%s not imported: %d change%s the policy keeps (nothing was written)",
			    quoted(shown), r, r == 1 ? "" : "s");
		goto done;
	}
	if (copy_commits(&w, ids, n, branch) < 0 ||
	    set_import_ref(&w, target, &tip, force, branch) < 0)
		goto done;
	status = 0;
done:
	free(ids);
	git_revwalk_free(walk);
	work_free(&w);
	git_libgit2_shutdown();
	return status;
}

int sfs_git_check_main(const struct sfs_rule_opts *rules, const char *git_dir, const char *host_git,
		       const char *source, char **commits, int ncommits)
{
	char real[PATH_MAX], dflt[PATH_MAX + 8], objects[PATH_MAX + 16];
	git_repository *repo = NULL;
	git_odb *host = NULL;
	struct sfs_policy *policy = NULL;
	struct report rep = {.prefix = "refused: "};
	int status = 1, refused = 0;
	cleanup_git_objects struct sfs_git_objects *seen = NULL;

	sfs_git_library_init();
	if (!realpath(source, real)) {
		int e = errno;
		cleanup_free char *shown = quote_str(source);
		error("cannot resolve source '%s': %s", quoted(shown), strerror(e));
		goto done;
	}
	snprintf(dflt, sizeof(dflt), "%s/.git", real);
	if (git_repository_open_ext(&repo, git_dir ? git_dir : dflt, GIT_REPOSITORY_OPEN_NO_SEARCH,
				    NULL) < 0) {
		cleanup_free char *shown = quote_str(git_dir ? git_dir : dflt);
		error("cannot open the git repository '%s': %s", quoted(shown),
			    sfs_git_message());
		goto done;
	}
	snprintf(objects, sizeof(objects), "%s/objects", host_git ? host_git : "");
	if (host_git && git_odb_open(&host, objects) < 0) {
		cleanup_free char *shown = quote_str(host_git);
		error("cannot read the objects of '%s': %s", quoted(shown),
			    sfs_git_message());
		goto done;
	}
	if (load_policy(rules, real, &policy) < 0)
		goto done;
	if (sfs_git_objects_new(host, &seen) < 0)
		goto done;
	status = 0;
	for (int i = 0; i < ncommits && status == 0; i++) {
		git_object *obj = NULL, *c = NULL;
		cleanup_free char *err = NULL;

		if (git_revparse_single(&obj, repo, commits[i]) < 0 ||
		    git_object_peel(&c, obj, GIT_OBJECT_COMMIT) < 0) {
			cleanup_free char *shown = quote_str(commits[i]);
			error("'%s' is not a commit: %s", quoted(shown), sfs_git_message());
			status = 2;
		} else if (host && git_odb_exists(host, git_object_id(c))) {
			/* The host's repository has it: not the agent's. */
		} else {
			int r = sfs_git_check(policy, seen, repo, git_object_id(c), report_refusal,
					      &rep, &err);
			if (r < 0) {
				cleanup_free char *shown = quote_str(err ? err : strerror(-r));
				error("%s", quoted(shown));
				status = 2;
			} else
				refused += r;
		}
		git_object_free(c);
		git_object_free(obj);
	}
	if (status == 0 && refused)
		status = 1;
done:
	sfs_policy_free(policy);
	git_odb_free(host);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return status;
}
