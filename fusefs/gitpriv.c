/* gitpriv.c - see gitpriv.h. */
#include "gitpriv.h"
#include "gitcheck.h"
#include "gitlayout.h"
#include "common/err.h"
#include "common/util.h"
#include "daemon.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds on what is read from the agent's repository. */
#define REFS_FILE_MAX (256u << 20)
#define REF_FILE_MAX  4096u
#define REFS_DEPTH    32
#define INDEX_MAX     (1u << 30)

static const char private_dir[] = ".git";
static const char record_name[] = "git-mirror";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sandyfs: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static const char *git_message(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "libgit2 error";
}

static void cleanup_repop(git_repository **r)
{
	git_repository_free(*r);
}
#define cleanup_repo __attribute__((cleanup(cleanup_repop)))

/* ---- files in the agent's directory, following no symlink ---- */

/* Opens (with CREATE, makes) directory REL below DIRFD one component at a
 * time, never through a symlink. */
static int open_dir(int dirfd, const char *rel, bool create)
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
		cur = next;
	}
	return cur;
}

/* Reads regular file NAME in DIRFD (at most CAP bytes) into a malloc'ed,
 * NUL-terminated buffer; a FIFO or device planted there is refused, not
 * waited on. */
static int read_at(int dirfd, const char *name, size_t cap, char **out, size_t *len)
{
	cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	*out = NULL;
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > cap)
		return -EFBIG;
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	if (len)
		*len = got;
	return 0;
}

/* Replaces NAME in DIRFD with LEN bytes of DATA: a new file renamed over
 * it, so a symlink the agent put there is replaced, never followed. As
 * root, the file gets OWNER's ids. */
static int write_at(int dirfd, const char *name, const void *data, size_t len,
		    const struct stat *owner)
{
	char tmp[64];
	int fd = -1;

	for (int i = 0; i < 100 && fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), ".sandyfs-%d-%d.tmp", (int)getpid(), i);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	const char *p = data;
	size_t left = len;
	int r = 0;
	while (left && r == 0) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else {
			p += n;
			left -= (size_t)n;
		}
	}
	if (r == 0 && owner && geteuid() == 0 && fchown(fd, owner->st_uid, owner->st_gid) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}

/* write_at for a path REL ("refs/heads/x") below DIRFD, making the
 * directories on the way. */
static int write_path(int dirfd, const char *rel, const char *data, const struct stat *owner)
{
	const char *slash = strrchr(rel, '/');

	if (!slash)
		return write_at(dirfd, rel, data, strlen(data), owner);
	cleanup_free char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	cleanup_fd int fd = open_dir(dirfd, dir, true);
	if (fd < 0)
		return fd;
	return write_at(fd, slash + 1, data, strlen(data), owner);
}

/* ---- refs ---- */

struct ref {
	char *name;  /* "HEAD", "refs/heads/main" */
	char *value; /* 40 hex digits, or "ref: NAME" */
};

struct refs {
	struct ref *v;
	size_t n, cap;
};

static void refs_free(struct refs *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].value);
	}
	free(r->v);
	*r = (struct refs){0};
}
#define cleanup_refs __attribute__((cleanup(refs_free)))

static struct ref *refs_find(const struct refs *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

/* Sets NAME to VALUE (replacing what it had). */
static int refs_set(struct refs *r, const char *name, const char *value)
{
	struct ref *e = refs_find(r, name);
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
		struct ref *nv = realloc(r->v, cap * sizeof(*nv));
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

static int ref_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ref *)a)->name, ((const struct ref *)b)->name);
}

static bool is_oid_hex(const char *s)
{
	size_t i = 0;

	for (; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == GIT_OID_HEXSZ;
}

static bool ref_name_ok(const char *name)
{
	int valid = 0;

	if (strcmp(name, "HEAD") == 0)
		return true;
	return strncmp(name, "refs/", 5) == 0 && git_reference_name_is_valid(&valid, name) == 0 &&
	       valid;
}

/* A ref's value as a file holds it: an id or "ref: NAME", one line. */
static bool value_ok(const char *v)
{
	if (strncmp(v, "ref: ", 5) == 0)
		return ref_name_ok(v + 5) && strcmp(v + 5, "HEAD") != 0;
	return is_oid_hex(v);
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* The loose refs below directory FD (the path PREFIX), into OUT; what is
 * not a plain file with a ref in it is skipped. */
static int read_loose(int fd, const char *prefix, int depth, struct refs *out)
{
	int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd < 0 ? NULL : fdopendir(dupfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close_keep_errno(dupfd);
		return -errno;
	}
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
			int sub = open_dir(fd, de->d_name, false);
			if (sub >= 0) {
				r = read_loose(sub, name, depth + 1, out);
				close(sub);
			}
			continue;
		}
		cleanup_free char *text = NULL;
		if (!S_ISREG(st.st_mode) || !ref_name_ok(name) ||
		    read_at(fd, de->d_name, REF_FILE_MAX, &text, NULL) < 0)
			continue;
		chomp(text);
		if (value_ok(text))
			r = refs_set(out, name, text);
	}
	closedir(d);
	return r;
}

/* Lines "ID NAME" of a packed-refs file; comments and peeled lines skipped. */
static int parse_packed(char *text, struct refs *out)
{
	int r = 0;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && r == 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (line[0] == '#' || line[0] == '^' || !sp)
			continue;
		*sp = '\0';
		chomp(sp + 1);
		if (is_oid_hex(line) && ref_name_ok(sp + 1) && strcmp(sp + 1, "HEAD") != 0)
			r = refs_set(out, sp + 1, line);
	}
	return r;
}

/* The agent's refs and HEAD, as git inside would read them. */
static int read_private_refs(int gitfd, struct refs *out)
{
	cleanup_free char *text = NULL;
	int r = 0;

	if (read_at(gitfd, "packed-refs", REFS_FILE_MAX, &text, NULL) == 0)
		r = parse_packed(text, out);
	cleanup_fd int refs = open_dir(gitfd, "refs", false);
	if (r == 0 && refs >= 0)
		r = read_loose(refs, "refs", 0, out);
	cleanup_free char *head = NULL;
	if (r == 0 && read_at(gitfd, "HEAD", REF_FILE_MAX, &head, NULL) == 0) {
		chomp(head);
		if (value_ok(head))
			r = refs_set(out, "HEAD", head);
	}
	return r;
}

/* SOURCE's refs and HEAD, as its own git reads them. */
static int read_host_refs(git_repository *repo, struct refs *out)
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
		if (ref_name_ok(name) && value_ok(value))
			r = refs_set(out, name, value);
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
		if (value_ok(value))
			r = refs_set(out, "HEAD", value);
		git_reference_free(ref);
	}
	return r;
}

/* The record: "NAME<TAB>VALUE" lines. */
static int read_record(int storefd, struct refs *out)
{
	cleanup_free char *text = NULL;
	int r = read_at(storefd, record_name, REFS_FILE_MAX, &text, NULL);

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
		if (ref_name_ok(line) && value_ok(tab + 1))
			r = refs_set(out, line, tab + 1);
	}
	return r;
}

/* A growable text buffer. */
struct buf {
	char *s;
	size_t len, cap;
	bool failed;
};

static void buf_add(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_add(struct buf *b, const char *fmt, ...)
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

static void buf_free(struct buf *b)
{
	free(b->s);
}
#define cleanup_buf __attribute__((cleanup(buf_free)))

static bool same_value(const struct ref *a, const struct ref *b)
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
static int plan_refs(const struct refs *host, const struct refs *priv, const struct refs *record,
		     bool fresh, struct refs *want, struct refs *record_out, struct buf *kept)
{
	const struct refs *all[] = {host, priv, record};
	int r = 0;

	for (size_t k = 0; k < ARRAY_SIZE(all) && r == 0; k++) {
		for (size_t i = 0; i < all[k]->n && r == 0; i++) {
			const char *name = all[k]->v[i].name;
			if (refs_find(want, name) || refs_find(record_out, name))
				continue;
			const struct ref *h = refs_find(host, name), *p = refs_find(priv, name),
					 *rec = refs_find(record, name);
			bool moved = !fresh && !same_value(p, rec) && !same_value(p, h);
			if (!moved) {
				if (h)
					r = refs_set(want, name, h->value);
				if (r == 0 && h)
					r = refs_set(record_out, name, h->value);
				continue;
			}
			if (p)
				r = refs_set(want, name, p->value);
			if (r == 0 && rec)
				r = refs_set(record_out, name, rec->value);
			if (strncmp(name, "refs/heads/", 11) == 0 || strcmp(name, "HEAD") == 0)
				buf_add(kept, "%s%s", kept->len ? ", " : "", name);
		}
	}
	return r;
}

/* Removes every loose ref below directory FD (what packed-refs now holds
 * replaces them); directories stay. */
static void remove_loose(int fd, int depth)
{
	int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd < 0 ? NULL : fdopendir(dupfd);
	struct dirent *de;

	if (!d) {
		close_keep_errno(dupfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = depth < REFS_DEPTH ? open_dir(fd, de->d_name, false) : -1;
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

static int write_refs(int gitfd, struct refs *want, const struct stat *owner)
{
	cleanup_buf struct buf packed = {0};
	int r;

	qsort(want->v, want->n, sizeof(*want->v), ref_cmp);
	buf_add(&packed, "# pack-refs with: sorted \n");
	for (size_t i = 0; i < want->n; i++)
		if (strcmp(want->v[i].name, "HEAD") != 0 && is_oid_hex(want->v[i].value))
			buf_add(&packed, "%s %s\n", want->v[i].value, want->v[i].name);
	if (packed.failed)
		return -ENOMEM;
	r = write_at(gitfd, "packed-refs", packed.s, packed.len, owner);
	if (r < 0)
		return r;
	cleanup_fd int refs = open_dir(gitfd, "refs", true);
	if (refs < 0)
		return refs;
	remove_loose(refs, 0);
	/* Symbolic refs cannot be packed. */
	for (size_t i = 0; i < want->n && r == 0; i++) {
		char line[PATH_MAX + 8];
		if (strcmp(want->v[i].name, "HEAD") == 0 || is_oid_hex(want->v[i].value))
			continue;
		snprintf(line, sizeof(line), "%s\n", want->v[i].value);
		r = write_path(gitfd, want->v[i].name, line, owner);
	}
	struct ref *head = refs_find(want, "HEAD");
	if (r == 0) {
		char line[PATH_MAX + 8];
		snprintf(line, sizeof(line), "%s\n", head ? head->value : "ref: refs/heads/main");
		r = write_at(gitfd, "HEAD", line, strlen(line), owner);
	}
	return r;
}

static int write_record(int storefd, const struct refs *record)
{
	cleanup_buf struct buf b = {0};

	buf_add(&b, "# sandyfs: the refs of SOURCE as last copied into the private repository\n");
	for (size_t i = 0; i < record->n; i++)
		buf_add(&b, "%s\t%s\n", record->v[i].name, record->v[i].value);
	return b.failed ? -ENOMEM : write_at(storefd, record_name, b.s, b.len, NULL);
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
static void buf_quoted(struct buf *b, const char *s)
{
	buf_add(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			buf_add(b, "\\%c", *s);
		else if (*s == '\n')
			buf_add(b, "\\n");
		else if (*s == '\t')
			buf_add(b, "\\t");
		else if ((unsigned char)*s >= 0x20)
			buf_add(b, "%c", *s);
	}
	buf_add(b, "\"");
}

/* SOURCE's local config, the kept keys only, as a config file. */
static int build_config(git_repository *host, struct buf *out)
{
	git_config *all = NULL, *local = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *e;
	char last_section[1024] = "";

	buf_add(out, "# Made by sandyfs from the host repository's config, without what runs\n"
		     "# programs (hooks, filters, fsmonitor, aliases); remade at each mount.\n"
		     "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
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

		if (!config_key_kept(key) || !first || !last ||
		    (size_t)(last - key) >= sizeof(section))
			continue;
		memcpy(section, key, (size_t)(last - key));
		section[last - key] = '\0';
		if (strcmp(section, last_section) != 0) {
			if (first == last)
				buf_add(out, "[%s]\n", section);
			else {
				buf_add(out, "[%.*s ", (int)(first - key), key);
				buf_quoted(out, section + (first - key) + 1);
				buf_add(out, "]\n");
			}
			snprintf(last_section, sizeof(last_section), "%s", section);
		}
		buf_add(out, "\t%s = ", last + 1);
		buf_quoted(out, e->value ? e->value : "");
		buf_add(out, "\n");
	}
	git_config_iterator_free(it);
	git_config_free(local);
	return out->failed ? -ENOMEM : 0;
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
	int r = read_at(dfd, name, cap, &text, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	const char *slash = strrchr(name, '/');
	if (!slash)
		return write_at(gitfd, name, text, len, owner);
	cleanup_free char *dir = strndup(name, (size_t)(slash - name));
	cleanup_fd int sub = dir ? open_dir(gitfd, dir, true) : -ENOMEM;
	return sub < 0 ? sub : write_at(sub, slash + 1, text, len, owner);
}

/* The id HEAD resolves to in REFS (HEAD itself or the branch it names),
 * or NULL. */
static const char *head_id(const struct refs *refs)
{
	const struct ref *h = refs_find(refs, "HEAD");

	for (int hops = 0; h && hops < 5; hops++) {
		if (is_oid_hex(h->value))
			return h->value;
		h = refs_find(refs, h->value + 5);
	}
	return NULL;
}

/* Opens SOURCE's repository when SOURCE is its work tree's top. */
static int open_host(const char *source, git_repository **out, char **err)
{
	int g = git_repository_open_ext(out, source, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);

	if (g == GIT_ENOTFOUND)
		return 0;
	if (g < 0)
		return err_set(err, EIO, "cannot open the git repository at '%s': %s", source,
			       git_message());
	const char *wd = git_repository_workdir(*out);
	char real[PATH_MAX];
	if (git_repository_is_bare(*out) || !wd || !realpath(wd, real) || strcmp(real, source)) {
		git_repository_free(*out);
		*out = NULL;
		return 0;
	}
	return 1;
}

static int trimmed_dir(const char *path, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", path);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}

int sfs_gitpriv_refresh(struct sfs_store *store, const char *source, const char *host_git_at,
			char **note, char **err)
{
	cleanup_repo git_repository *host = NULL;
	cleanup_refs struct refs hrefs = {0}, prefs = {0}, record = {0}, want = {0},
				 record_out = {0};
	cleanup_buf struct buf kept = {0}, config = {0};
	char common[PATH_MAX], gitdir[PATH_MAX], alternates[PATH_MAX + 16];
	struct stat owner;
	int r;

	*note = NULL;
	*err = NULL;
	r = open_host(source, &host, err);
	if (r <= 0)
		return r;
	if (trimmed_dir(git_repository_commondir(host), common, sizeof(common)) < 0 ||
	    trimmed_dir(git_repository_path(host), gitdir, sizeof(gitdir)) < 0)
		return err_set(err, ENAMETOOLONG, "git directory of '%s' too long", source);
	if (stat(gitdir, &owner) < 0)
		return err_set(err, errno, "cannot read '%s': %s", gitdir, strerror(errno));
	int treefd = sfs_store_tree_fd(store), storefd = sfs_store_dir_fd(store);
	struct stat st;
	bool fresh = fstatat(treefd, private_dir, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	cleanup_fd int gitfd = open_dir(treefd, private_dir, true);
	if (gitfd < 0)
		return err_set(err, -gitfd, "cannot open the private repository in the store: %s",
			       gitfd == -ENOTDIR ? "its .git is not a directory"
						 : strerror(-gitfd));
	if (geteuid() == 0 && fchown(gitfd, owner.st_uid, owner.st_gid) < 0) {
		/* Left to the daemon's uid: the agent's git then cannot
		 * write, which it says. */
	}
	static const char *const dirs[] = {"objects/info", "objects/pack", "refs/heads",
					   "refs/tags", "info"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		int fd = open_dir(gitfd, dirs[i], true);
		if (fd < 0)
			return err_set(err, -fd, "cannot make '%s' in the private repository: %s",
				       dirs[i], strerror(-fd));
		close(fd);
	}
	if ((r = read_host_refs(host, &hrefs)) < 0 ||
	    (!fresh && (r = read_private_refs(gitfd, &prefs)) < 0) ||
	    (r = read_record(storefd, &record)) < 0 ||
	    (r = plan_refs(&hrefs, &prefs, &record, fresh, &want, &record_out, &kept)) < 0)
		return err_set(err, -r, "cannot read the refs: %s", strerror(-r));
	if (kept.failed)
		return -ENOMEM;
	/* The index describes HEAD's commit: SOURCE's when HEAD is the same. */
	const char *want_head = head_id(&want), *host_head = head_id(&hrefs);
	bool same_head = same_value(refs_find(&want, "HEAD"), refs_find(&hrefs, "HEAD")) &&
			 want_head && host_head && strcmp(want_head, host_head) == 0;
	r = write_refs(gitfd, &want, &owner);
	if (r == 0)
		r = write_record(storefd, &record_out);
	if (r == 0)
		r = build_config(host, &config);
	if (r == 0)
		r = write_at(gitfd, "config", config.s, config.len, &owner);
	if (r == 0) {
		int n = snprintf(alternates, sizeof(alternates), "%s/objects\n",
				 host_git_at ? host_git_at : common);
		r = n < 0 || (size_t)n >= sizeof(alternates) ? -ENAMETOOLONG : 0;
	}
	cleanup_fd int info = r == 0 ? open_dir(gitfd, "objects/info", true) : -1;
	if (r == 0)
		r = info < 0 ? info
			     : write_at(info, "alternates", alternates, strlen(alternates), &owner);
	if (r == 0)
		r = copy_host_file(gitfd, common, "info/exclude", REFS_FILE_MAX, &owner);
	if (r == 0 && (fresh || same_head))
		r = copy_host_file(gitfd, gitdir, "index", INDEX_MAX, &owner);
	if (r < 0)
		return err_set(err, -r, "cannot write the private repository: %s", strerror(-r));
	if (kept.len && asprintf(note, "kept the agent's own %s", kept.s) < 0)
		*note = NULL;
	return 0;
}

/* ---- bringing work back ---- */

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
	struct refs host_refs, priv_refs;
	struct sfs_policy *policy;
};

static void work_free(struct work *w)
{
	git_repository_free(w->repo);
	git_odb_free(w->odb);
	git_repository_free(w->host);
	if (w->gitfd >= 0)
		close(w->gitfd);
	if (w->objfd >= 0)
		close(w->objfd);
	refs_free(&w->host_refs);
	refs_free(&w->priv_refs);
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

/* Opens what W needs; says what fails. */
static int work_open(struct work *w, const struct sfs_rule_opts *rules, const char *store,
		     const char *source)
{
	cleanup_free char *path = NULL, *err = NULL;
	git_odb_backend *loose = NULL, *pack = NULL;
	char objects[64], host_objects[PATH_MAX + 16];

	*w = (struct work){.gitfd = -1, .objfd = -1};
	if (!realpath(source, w->source)) {
		say("cannot resolve source '%s': %s", source, strerror(errno));
		return -errno;
	}
	int r = open_host(w->source, &w->host, &err);
	if (r <= 0) {
		if (r == 0)
			say("'%s' is not the top of a git work tree", source);
		else
			say("%s", err);
		return r < 0 ? r : -ENOENT;
	}
	if (store_path(w->source, store, &path) < 0) {
		say("cannot find the project's store (no HOME): give it with --store");
		return -ENOENT;
	}
	cleanup_fd int storefd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	w->gitfd = storefd < 0 ? -errno : open_dir(storefd, "tree/.git", false);
	if (w->gitfd < 0) {
		say("no private repository in store '%s' (a session with --private-git makes it): "
		    "%s",
		    path, strerror(-w->gitfd));
		return w->gitfd;
	}
	w->objfd = open_dir(w->gitfd, "objects", false);
	if (w->objfd < 0) {
		say("the private repository in '%s' has no objects directory", path);
		return w->objfd;
	}
	/* By the directory just opened: nothing swaps a symlink in on the way. */
	snprintf(objects, sizeof(objects), "/proc/self/fd/%d", w->objfd);
	snprintf(host_objects, sizeof(host_objects), "%s/objects",
		 git_repository_commondir(w->host));
	if (git_odb_new(&w->odb) < 0 || git_odb_backend_loose(&loose, objects, -1, 0, 0, 0) < 0 ||
	    git_odb_add_backend(w->odb, loose, 2) < 0 ||
	    (loose = NULL, git_odb_backend_pack(&pack, objects) < 0) ||
	    git_odb_add_backend(w->odb, pack, 1) < 0 ||
	    (pack = NULL, git_odb_add_disk_alternate(w->odb, host_objects) < 0) ||
	    git_repository_wrap_odb(&w->repo, w->odb) < 0) {
		if (loose)
			loose->free(loose);
		if (pack)
			pack->free(pack);
		say("cannot read the objects of the private repository: %s", git_message());
		return -EIO;
	}
	if ((r = read_host_refs(w->host, &w->host_refs)) < 0 ||
	    (r = read_private_refs(w->gitfd, &w->priv_refs)) < 0) {
		say("cannot read the refs: %s", strerror(-r));
		return r;
	}
	return sfs_load_policy(rules, w->source, &w->policy) < 0 ? -EINVAL : 0;
}

/* The id NAME resolves to in REFS (following symbolic refs), or NULL. */
static const char *ref_id(const struct refs *refs, const char *name)
{
	const struct ref *e = refs_find(refs, name);

	for (int hops = 0; e && hops < 5; hops++) {
		if (is_oid_hex(e->value))
			return e->value;
		e = refs_find(refs, e->value + 5);
	}
	return NULL;
}

/* A walk over the commits reachable from TIP and from none of SOURCE's
 * refs, oldest first. */
static int new_commits(struct work *w, const git_oid *tip, git_revwalk **out)
{
	git_revwalk *walk = NULL;

	if (git_revwalk_new(&walk, w->repo) < 0)
		return -ENOMEM;
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
	if (git_revwalk_push(walk, tip) < 0) {
		say("cannot walk commit %s: %s", git_oid_tostr_s(tip), git_message());
		git_revwalk_free(walk);
		return -EIO;
	}
	for (size_t i = 0; i < w->host_refs.n; i++) {
		git_oid id;
		git_object *obj = NULL, *commit = NULL;

		if (!is_oid_hex(w->host_refs.v[i].value) ||
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

struct report {
	cJSON *list; /* JSON: the refusals, or NULL to print them */
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
		printf("%scommit %.12s %s '%s': %s by %s '%s': %s\n", rep->prefix,
		       git_oid_tostr_s(r->commit), sfs_git_change_name(r->change), r->path,
		       sfs_class_name(r->cls), rule, r->rule_text, r->why);
		return 0;
	}
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "commit", git_oid_tostr_s(r->commit)) ||
	    !cJSON_AddStringToObject(o, "path", r->path) ||
	    !cJSON_AddStringToObject(o, "change", sfs_git_change_name(r->change)) ||
	    !cJSON_AddStringToObject(o, "class", sfs_class_name(r->cls)) ||
	    !cJSON_AddStringToObject(o, "rule", rule) ||
	    !cJSON_AddStringToObject(o, "pattern", r->rule_text) ||
	    !cJSON_AddStringToObject(o, "why", r->why)) {
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

	*count = 0;
	if (ids)
		*ids = NULL;
	while ((r = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c = NULL;
		cleanup_free char *err = NULL;

		if (git_commit_lookup(&c, w->repo, &id) < 0) {
			say("cannot read commit %s: %s", git_oid_tostr_s(&id), git_message());
			return -EIO;
		}
		r = sfs_git_check_commit(w->policy, w->repo, c, report_refusal, rep, &err);
		git_commit_free(c);
		if (r < 0) {
			say("%s", err ? err : strerror(-r));
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
		say("cannot walk the commits: %s", git_message());
		return -EIO;
	}
	return refused;
}

/* Files changed, insertions and deletions between the parent of the
 * oldest commit (FIRST) and TIP. */
static void diffstat(struct work *w, const git_oid *first, const git_oid *tip, size_t stat[3])
{
	git_commit *a = NULL, *b = NULL, *parent = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_diff_stats *stats = NULL;

	stat[0] = stat[1] = stat[2] = 0;
	if (git_commit_lookup(&a, w->repo, first) < 0 || git_commit_lookup(&b, w->repo, tip) < 0)
		goto out;
	if (git_commit_parentcount(a) > 0 &&
	    (git_commit_parent(&parent, a, 0) < 0 || git_commit_tree(&ta, parent) < 0))
		goto out;
	if (git_commit_tree(&tb, b) < 0 ||
	    git_diff_tree_to_tree(&diff, w->repo, ta, tb, NULL) < 0 ||
	    git_diff_get_stats(&stats, diff) < 0)
		goto out;
	stat[0] = git_diff_stats_files_changed(stats);
	stat[1] = git_diff_stats_insertions(stats);
	stat[2] = git_diff_stats_deletions(stats);
out:
	git_diff_stats_free(stats);
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(parent);
	git_commit_free(a);
	git_commit_free(b);
}

static void print_commits(struct work *w, const git_oid *ids, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		git_commit *c = NULL;
		if (git_commit_lookup(&c, w->repo, &ids[i]) < 0)
			continue;
		const char *summary = git_commit_summary(c);
		printf("  %.12s %s\n", git_oid_tostr_s(&ids[i]), summary ? summary : "");
		git_commit_free(c);
	}
}

int sfs_git_list_main(const struct sfs_rule_opts *rules, const char *store, bool json,
		      const char *source)
{
	struct work w;
	cJSON *out = json ? cJSON_CreateArray() : NULL;
	int status = 1;

	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	if (work_open(&w, rules, store, source) < 0)
		goto done;
	qsort(w.priv_refs.v, w.priv_refs.n, sizeof(*w.priv_refs.v), ref_cmp);
	status = 0;
	for (size_t i = 0; i < w.priv_refs.n && status == 0; i++) {
		const char *name = w.priv_refs.v[i].name;
		git_revwalk *walk = NULL;
		git_oid tip, *ids = NULL;
		size_t n = 0, stat[3];

		if (strncmp(name, "refs/heads/", 11) != 0 || !is_oid_hex(w.priv_refs.v[i].value) ||
		    git_oid_fromstr(&tip, w.priv_refs.v[i].value) < 0)
			continue;
		if (new_commits(&w, &tip, &walk) < 0) {
			status = 1;
			break;
		}
		struct report rep = {.list = json ? cJSON_CreateArray() : NULL,
				     .prefix = "  refused: "};
		cleanup_buf struct buf refusals = {0};
		int refused;
		if (json) {
			refused = check_walk(&w, walk, &rep, &n, &ids);
		} else {
			/* The refusals are printed after the commits. */
			struct report quiet = {.list = cJSON_CreateArray()};
			refused = check_walk(&w, walk, &quiet, &n, &ids);
			cJSON *e;
			cJSON_ArrayForEach(e, quiet.list)
			{
				buf_add(&refusals,
					"  refused: commit %.12s %s '%s': %s by %s '%s'\n",
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "commit")),
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "change")),
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "path")),
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "class")),
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "rule")),
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "pattern")));
			}
			cJSON_Delete(quiet.list);
		}
		git_revwalk_free(walk);
		if (refused < 0) {
			cJSON_Delete(rep.list);
			free(ids);
			status = 1;
			break;
		}
		if (n > 0)
			diffstat(&w, &ids[0], &tip, stat);
		const char *branch = name + 11;
		if (n > 0 && json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "branch", branch);
			cJSON_AddStringToObject(o, "tip", w.priv_refs.v[i].value);
			cJSON_AddNumberToObject(o, "commits", (double)n);
			cJSON_AddNumberToObject(o, "files", (double)stat[0]);
			cJSON_AddNumberToObject(o, "insertions", (double)stat[1]);
			cJSON_AddNumberToObject(o, "deletions", (double)stat[2]);
			cJSON_AddBoolToObject(o, "importable", refused == 0);
			cJSON_AddItemToObject(o, "refused", rep.list);
			rep.list = NULL;
			cJSON_AddItemToArray(out, o);
		} else if (n > 0) {
			printf("%s: %zu commit%s, %zu file%s changed, %zu insertion%s(+), %zu "
			       "deletion%s(-); ",
			       branch, n, n == 1 ? "" : "s", stat[0], stat[0] == 1 ? "" : "s",
			       stat[1], stat[1] == 1 ? "" : "s", stat[2], stat[2] == 1 ? "" : "s");
			if (refused)
				printf("cannot be imported\n");
			else
				printf("ready to import as sandy/%s\n", branch);
			print_commits(&w, ids, n);
			if (refusals.len)
				fputs(refusals.s, stdout);
		}
		cJSON_Delete(rep.list);
		free(ids);
	}
	if (status == 0 && json) {
		char *text = cJSON_PrintUnformatted(out);
		if (text)
			puts(text);
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
		say("cannot read object %s: %s", git_oid_tostr_s(id), git_message());
		return -EIO;
	}
	git_object_t type = git_odb_object_type(obj);
	int r = git_odb_write(&written, dst, git_odb_object_data(obj), git_odb_object_size(obj),
			      type);
	git_odb_object_free(obj);
	if (r < 0 || !git_oid_equal(&written, id)) {
		say("cannot write object %s into the repository: %s", git_oid_tostr_s(id),
		    r < 0 ? git_message() : "its id changed");
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

static int copy_commits(struct work *w, const git_oid *ids, size_t n)
{
	git_odb *dst = NULL;
	int r = 0;

	if (git_repository_odb(&dst, w->host) < 0)
		return -EIO;
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

	snprintf(msg, sizeof(msg), "sandy: import of the agent's %s", branch);
	if (g == 0 && git_reference_type(old) == GIT_REFERENCE_DIRECT) {
		const git_oid *was = git_reference_target(old);
		if (git_oid_equal(was, tip)) {
			printf("%s is already at %.12s\n", refname + 11, git_oid_tostr_s(tip));
			git_reference_free(old);
			return 0;
		}
		if (!force && !git_graph_descendant_of(w->repo, tip, was)) {
			say("%s exists and the agent's %s does not extend it (rebased?); "
			    "--force replaces it",
			    refname + 11, branch);
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
		say("cannot set %s: %s", refname + 11, git_message());
		return -EIO;
	}
	printf("imported %s as %s (%.12s)\n", branch, refname + 11, git_oid_tostr_s(tip));
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

	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	if (work_open(&w, rules, store, source) < 0)
		goto done;
	snprintf(name, sizeof(name), "refs/heads/%s", branch);
	snprintf(target, sizeof(target), "refs/heads/sandy/%s", branch);
	if (!ref_name_ok(name) || !ref_name_ok(target) || strlen(branch) > PATH_MAX - 32) {
		say("'%s' is not a branch name", branch);
		status = 2;
		goto done;
	}
	const char *id = ref_id(&w.priv_refs, name);
	if (!id || git_oid_fromstr(&tip, id) < 0) {
		say("the agent's repository has no branch '%s' ('sandyfs git list' shows them)",
		    branch);
		goto done;
	}
	if (new_commits(&w, &tip, &walk) < 0)
		goto done;
	struct report rep = {.prefix = "refused: "};
	r = check_walk(&w, walk, &rep, &n, &ids);
	if (r < 0)
		goto done;
	if (r > 0) {
		say("%s not imported: %d change%s the policy keeps (nothing was written)", branch,
		    r, r == 1 ? "" : "s");
		goto done;
	}
	if (copy_commits(&w, ids, n) < 0 || set_import_ref(&w, target, &tip, force, branch) < 0)
		goto done;
	status = 0;
done:
	free(ids);
	git_revwalk_free(walk);
	work_free(&w);
	git_libgit2_shutdown();
	return status;
}

int sfs_git_check_main(const struct sfs_rule_opts *rules, const char *git_dir, const char *source,
		       char **commits, int ncommits)
{
	char real[PATH_MAX], dflt[PATH_MAX + 8];
	git_repository *repo = NULL;
	struct sfs_policy *policy = NULL;
	struct report rep = {.prefix = "refused: "};
	int status = 1, refused = 0;

	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	if (!realpath(source, real)) {
		say("cannot resolve source '%s': %s", source, strerror(errno));
		goto done;
	}
	snprintf(dflt, sizeof(dflt), "%s/.git", real);
	if (git_repository_open_ext(&repo, git_dir ? git_dir : dflt, GIT_REPOSITORY_OPEN_NO_SEARCH,
				    NULL) < 0) {
		say("cannot open the git repository '%s': %s", git_dir ? git_dir : dflt,
		    git_message());
		goto done;
	}
	if (sfs_load_policy(rules, real, &policy) < 0)
		goto done;
	status = 0;
	for (int i = 0; i < ncommits && status == 0; i++) {
		git_object *obj = NULL, *c = NULL;
		cleanup_free char *err = NULL;

		if (git_revparse_single(&obj, repo, commits[i]) < 0 ||
		    git_object_peel(&c, obj, GIT_OBJECT_COMMIT) < 0) {
			say("'%s' is not a commit: %s", commits[i], git_message());
			status = 2;
		} else {
			int r = sfs_git_check_commit(policy, repo, (git_commit *)c, report_refusal,
						     &rep, &err);
			if (r < 0) {
				say("%s", err ? err : strerror(-r));
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
	git_repository_free(repo);
	git_libgit2_shutdown();
	return status;
}
