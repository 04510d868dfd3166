/* gitrefs.h - what sandyfs's handling of the agent's private repository
 * (gitpriv.c, which makes it, and gitback.c, which brings work back from
 * it) shares: files in a directory the agent writes, opened and written
 * with *at() calls that follow no symlink; refs, parsed here from files
 * the agent may have forged, or read from SOURCE's repository with
 * libgit2; a growable text buffer. Internal to those files. */
#ifndef SANDYFS_GITREFS_H
#define SANDYFS_GITREFS_H

#include <dirent.h>
#include <git2.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Bounds on what is read from the agent's repository. */
#define REFS_FILE_MAX (256u << 20)
#define REF_FILE_MAX  4096u
#define REFS_DEPTH    32
#define INDEX_MAX     (1u << 30)

/* libgit2's last error message, escaped (quote.h) and good until the next
 * call. */
const char *sfs_git_message(void);

static inline void cleanup_repop(git_repository **r)
{
	git_repository_free(*r);
}
#define cleanup_repo __attribute__((cleanup(cleanup_repop)))

/* ---- files ---- */

/* Opens (with CREATE, makes) directory REL below DIRFD one component at a
 * time, never through a symlink: an fd, or -ENOTDIR when something else
 * is in the way. */
int sfs_git_open_dir(int dirfd, const char *rel, bool create);
/* The same, and when run as root with an OWNER, every directory on the way
 * (made now or found) given OWNER's uid and gid. */
int sfs_git_make_dir(int dirfd, const char *rel, bool create, const struct stat *owner);
/* A listing of directory FD, on an fd of its own (FD stays the
 * caller's); NULL with errno. */
DIR *sfs_git_opendir(int fd);
/* Reads regular file NAME in DIRFD (at most CAP bytes) into a malloc'ed,
 * NUL-terminated buffer; a FIFO, device or symlink there is refused
 * (-EINVAL), not waited on or followed. */
int sfs_git_read_at(int dirfd, const char *name, size_t cap, char **out, size_t *len);
/* Replaces NAME in DIRFD with LEN bytes of DATA: a new file renamed over
 * it, so a symlink there is replaced, never followed. As root, the file
 * gets OWNER's ids (when OWNER is not NULL). */
int sfs_git_write_at(int dirfd, const char *name, const void *data, size_t len,
		     const struct stat *owner);
/* The same for a path REL ("refs/heads/x"), making the directories on the way. */
int sfs_git_write_path(int dirfd, const char *rel, const char *data, const struct stat *owner);

/* ---- refs ---- */

struct sfs_ref {
	char *name;  /* "HEAD", "refs/heads/main" */
	char *value; /* 40 hex digits, or "ref: NAME" */
};

struct sfs_refs {
	struct sfs_ref *v;
	size_t n, cap;
};

void sfs_refs_free(struct sfs_refs *r);
#define cleanup_refs __attribute__((cleanup(sfs_refs_free)))
struct sfs_ref *sfs_refs_find(const struct sfs_refs *r, const char *name);
/* Sets NAME to VALUE (copied), replacing what it had. */
int sfs_refs_set(struct sfs_refs *r, const char *name, const char *value);
/* qsort order by name. */
int sfs_ref_cmp(const void *a, const void *b);

/* An object id in hex (SHA-1). */
bool sfs_git_is_id(const char *s);
/* HEAD, or a valid name under refs/. */
bool sfs_git_ref_name_ok(const char *name);
/* A ref's value as a file holds it: an id or "ref: NAME". */
bool sfs_git_ref_value_ok(const char *v);

/* The refs and HEAD of the repository at directory GITFD, as git would
 * read them (packed-refs, then loose refs over it); whatever is not a
 * plain file holding a valid ref is skipped. */
int sfs_git_read_refs_at(int gitfd, struct sfs_refs *out);
/* The refs and HEAD of REPO, through libgit2. */
int sfs_git_read_refs(git_repository *repo, struct sfs_refs *out);

/* ---- text ---- */

struct sfs_buf {
	char *s;
	size_t len, cap;
	bool failed; /* out of memory: the text is incomplete */
};

void sfs_buf_add(struct sfs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sfs_buf_free(struct sfs_buf *b);
#define cleanup_buf __attribute__((cleanup(sfs_buf_free)))

/* ---- repositories ---- */

/* Opens SOURCE's repository (SOURCE resolved) when SOURCE is the top of
 * its work tree: 1; 0 when it is not; a negative errno with *ERR. */
int sfs_git_open_top(const char *source, git_repository **out, char **err);
/* PATH without its trailing slashes into OUT. */
int sfs_git_trimmed_dir(const char *path, char *out, size_t size);

#endif
