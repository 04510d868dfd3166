/* gitrefs.c - see gitrefs.h. */
#include "gitrefs.h"
#include "common/err.h"
#include "common/fileat.h"
#include "common/quote.h"
#include "common/usage.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *sfs_git_message(void)
{
	/* libgit2's messages may name what the agent chose (a ref, a path,
	 * an object's text): shown escaped. The previous one is freed, so
	 * each is good until the next call; the commands that call this
	 * run in one thread. */
	static char *shown;
	const git_error *e = git_error_last();

	free(shown);
	shown = quote_str(e && e->message ? e->message : "libgit2 error");
	return quoted(shown);
}

/* ---- files in the agent's directory, following no symlink ---- */

/* Opens (with CREATE, makes) directory REL below DIRFD one component at a
 * time, never through a symlink. */
int sfs_git_open_dir(int dirfd, const char *rel, bool create)
{
	return sfs_git_make_dir(dirfd, rel, create, NULL);
}

int sfs_git_make_dir(int dirfd, const char *rel, bool create, const struct stat *owner)
{
	cleanup_free char *copy = strdup(rel);
	int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);

	if (!copy || cur < 0) {
		close_keep_errno(cur);
		return copy ? -errno : -ENOMEM;
	}
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST) {
				close_keep_errno(cur);
				return -errno;
			}
			next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		int e = errno;
		close(cur);
		if (next < 0)
			return e == ELOOP ? -ENOTDIR : -e;
		/* Every directory on the way, made now or by an earlier
		 * sandyfs, is the owner's, so that the agent's git (as that
		 * user) can add objects and refs below it. */
		if (owner && geteuid() == 0 && fchown(next, owner->st_uid, owner->st_gid) < 0) {
			close_keep_errno(next);
			return -errno;
		}
		cur = next;
	}
	return cur;
}

/* Reads regular file NAME in DIRFD (at most CAP bytes) into a malloc'ed,
 * NUL-terminated buffer; a FIFO or device planted there is refused, not
 * waited on, and a symlink is not followed (EINVAL). */
int sfs_git_read_at(int dirfd, const char *name, size_t cap, char **out, size_t *len)
{
	int r = fileat_read(dirfd, name, cap, FILEAT_REGULAR, out, len);

	return r == -ELOOP ? -EINVAL : r;
}

/* Replaces NAME in DIRFD with LEN bytes of DATA: a new file renamed over
 * it, so a symlink the agent put there is replaced, never followed. As
 * root, the file gets OWNER's ids. */
int sfs_git_write_at(int dirfd, const char *name, const void *data, size_t len,
		     const struct stat *owner)
{
	return fileat_replace(dirfd, name, data, len, 0644, owner);
}

/* sfs_git_write_at for a path REL ("refs/heads/x") below DIRFD, making the
 * directories on the way. */
int sfs_git_write_path(int dirfd, const char *rel, const char *data, const struct stat *owner)
{
	const char *slash = strrchr(rel, '/');

	if (!slash)
		return sfs_git_write_at(dirfd, rel, data, strlen(data), owner);
	cleanup_free char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	cleanup_fd int fd = sfs_git_make_dir(dirfd, dir, true, owner);
	if (fd < 0)
		return fd;
	return sfs_git_write_at(fd, slash + 1, data, strlen(data), owner);
}

/* ---- refs ---- */

void sfs_refs_free(struct sfs_refs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].value);
	}
	free(r->v);
	*r = (struct sfs_refs){0};
}

struct sfs_ref *sfs_refs_find(const struct sfs_refs *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

/* Sets NAME to VALUE (replacing what it had). */
int sfs_refs_set(struct sfs_refs *r, const char *name, const char *value)
{
	struct sfs_ref *e = sfs_refs_find(r, name);
	char *v = strdup(value);

	if (!v)
		return -ENOMEM;
	if (e) {
		free(e->value);
		e->value = v;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct sfs_ref *nv = realloc(r->v, cap * sizeof(*nv));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n].name = strdup(name);
	if (!r->v[r->n].name) {
		free(v);
		return -ENOMEM;
	}
	r->v[r->n++].value = v;
	return 0;
}

int sfs_ref_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sfs_ref *)a)->name, ((const struct sfs_ref *)b)->name);
}

bool sfs_git_is_id(const char *s)
{
	size_t i = 0;

	for (; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == GIT_OID_HEXSZ;
}

bool sfs_git_ref_name_ok(const char *name)
{
	int valid = 0;

	if (strcmp(name, "HEAD") == 0)
		return true;
	return strncmp(name, "refs/", 5) == 0 && git_reference_name_is_valid(&valid, name) == 0 &&
	       valid;
}

/* A ref's value as a file holds it: an id or "ref: NAME", one line. */
bool sfs_git_ref_value_ok(const char *v)
{
	if (strncmp(v, "ref: ", 5) == 0)
		return sfs_git_ref_name_ok(v + 5) && strcmp(v + 5, "HEAD") != 0;
	return sfs_git_is_id(v);
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

DIR *sfs_git_opendir(int fd)
{
	int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd < 0 ? NULL : fdopendir(dupfd);

	if (!d)
		close_keep_errno(dupfd);
	return d;
}

/* The loose refs below directory FD (the path PREFIX), into OUT; what is
 * not a plain file with a ref in it is skipped. */
static int read_loose(int fd, const char *prefix, int depth, struct sfs_refs *out)
{
	DIR *d = sfs_git_opendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		char name[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(name, sizeof(name), "%s/%s", prefix, de->d_name) >= (int)sizeof(name))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < REFS_DEPTH) {
			int sub = sfs_git_open_dir(fd, de->d_name, false);
			if (sub >= 0) {
				r = read_loose(sub, name, depth + 1, out);
				close(sub);
			}
			continue;
		}
		cleanup_free char *text = NULL;
		if (!S_ISREG(st.st_mode) || !sfs_git_ref_name_ok(name) ||
		    sfs_git_read_at(fd, de->d_name, REF_FILE_MAX, &text, NULL) < 0)
			continue;
		chomp(text);
		if (sfs_git_ref_value_ok(text))
			r = sfs_refs_set(out, name, text);
	}
	closedir(d);
	return r;
}

/* Lines "ID NAME" of a packed-refs file; comments and peeled lines skipped. */
static int parse_packed(char *text, struct sfs_refs *out)
{
	int r = 0;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && r == 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (line[0] == '#' || line[0] == '^' || !sp)
			continue;
		*sp = '\0';
		chomp(sp + 1);
		if (sfs_git_is_id(line) && sfs_git_ref_name_ok(sp + 1) &&
		    strcmp(sp + 1, "HEAD") != 0)
			r = sfs_refs_set(out, sp + 1, line);
	}
	return r;
}

/* The agent's refs and HEAD, as git inside would read them. */
int sfs_git_read_refs_at(int gitfd, struct sfs_refs *out)
{
	cleanup_free char *text = NULL;
	int r = 0;

	if (sfs_git_read_at(gitfd, "packed-refs", REFS_FILE_MAX, &text, NULL) == 0)
		r = parse_packed(text, out);
	cleanup_fd int refs = sfs_git_open_dir(gitfd, "refs", false);
	if (r == 0 && refs >= 0)
		r = read_loose(refs, "refs", 0, out);
	cleanup_free char *head = NULL;
	if (r == 0 && sfs_git_read_at(gitfd, "HEAD", REF_FILE_MAX, &head, NULL) == 0) {
		chomp(head);
		if (sfs_git_ref_value_ok(head))
			r = sfs_refs_set(out, "HEAD", head);
	}
	return r;
}

/* SOURCE's refs and HEAD, as its own git reads them. */
int sfs_git_read_refs(git_repository *repo, struct sfs_refs *out)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	int r = 0, g;

	if (git_reference_iterator_new(&it, repo) < 0)
		return -EIO;
	while (r == 0 && (g = git_reference_next(&ref, it)) == 0) {
		char value[GIT_OID_HEXSZ + PATH_MAX];
		const char *name = git_reference_name(ref);

		if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC)
			snprintf(value, sizeof(value), "ref: %s",
				 git_reference_symbolic_target(ref));
		else
			git_oid_tostr(value, sizeof(value), git_reference_target(ref));
		if (sfs_git_ref_name_ok(name) && sfs_git_ref_value_ok(value))
			r = sfs_refs_set(out, name, value);
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	if (r == 0 && git_reference_lookup(&ref, repo, "HEAD") == 0) {
		char value[GIT_OID_HEXSZ + PATH_MAX];

		if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC)
			snprintf(value, sizeof(value), "ref: %s",
				 git_reference_symbolic_target(ref));
		else
			git_oid_tostr(value, sizeof(value), git_reference_target(ref));
		if (sfs_git_ref_value_ok(value))
			r = sfs_refs_set(out, "HEAD", value);
		git_reference_free(ref);
	}
	return r;
}

void sfs_buf_add(struct sfs_buf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->failed = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

void sfs_buf_free(struct sfs_buf *b)
{
	free(b->s);
}

/* Opens SOURCE's repository when SOURCE is its work tree's top. */
int sfs_git_open_top(const char *source, git_repository **out, char **err)
{
	int g = git_repository_open_ext(out, source, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);

	if (g == GIT_ENOTFOUND)
		return 0;
	if (g < 0)
		return err_set(err, EIO, "cannot open the git repository at '%s': %s", source,
			       sfs_git_message());
	const char *wd = git_repository_workdir(*out);
	char real[PATH_MAX];
	if (git_repository_is_bare(*out) || !wd || !realpath(wd, real) || strcmp(real, source)) {
		git_repository_free(*out);
		*out = NULL;
		return 0;
	}
	return 1;
}

int sfs_git_trimmed_dir(const char *path, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", path);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}