/*
 * gitobj: git's objects read from their bytes as git itself reads them.
 *
 * libgit2 is lenient where git is not, and reads some bytes otherwise: it
 * gives a tree entry of mode 120755 the type of an executable file, where
 * git checks it out as a symlink. What comes back from the agent is judged
 * as the host's git will take it, so the modes here are git's, and the
 * objects the import would copy are first held to what the host's `git
 * fsck --strict` asks of them (git's fsck.c, fsck_tree, fsck_commit and
 * fsck_ident), and in places to more: an object that passes here passes
 * fsck, and libgit2 reads it as git does.
 *
 * Pure: bytes in, a verdict out; no libgit2, no I/O. Object ids are SHA-1
 * (20 bytes), the only kind libgit2 1.5 reads.
 */
#ifndef SANDYFS_GITOBJ_H
#define SANDYFS_GITOBJ_H

#include <stdbool.h>
#include <stddef.h>

#define SFS_GIT_RAWSZ 20

/* The five modes of git's canonical tree entries. */
#define SFS_GIT_MODE_TREE    0040000u
#define SFS_GIT_MODE_FILE    0100644u
#define SFS_GIT_MODE_EXEC    0100755u
#define SFS_GIT_MODE_LINK    0120000u
#define SFS_GIT_MODE_GITLINK 0160000u

/*
 * The mode git gives a tree entry written with mode MODE, whatever its
 * bits: one of the five above (git's canon_mode, which its tree reading
 * applies to every entry).
 */
unsigned sfs_git_canon_mode(unsigned mode);

/* One entry of a tree object, pointing into the object's bytes. */
struct sfs_gitobj_entry {
	const char *mode_text; /* the octal digits as written */
	size_t mode_len;
	unsigned mode;	  /* their value, as written (not canonical) */
	const char *name; /* NUL-terminated in the object */
	size_t len;
	const unsigned char *id; /* SFS_GIT_RAWSZ bytes */
};

/*
 * The entry of tree DATA (SIZE bytes) at offset *POS, read as git's
 * decode_tree_entry reads it ("MODE NAME\0ID"); *POS moves past it.
 * Returns 1, 0 at the end of the tree, -EINVAL where git cannot read it.
 */
int sfs_gitobj_tree_next(const void *data, size_t size, size_t *pos, struct sfs_gitobj_entry *e);

/* What is wrong with an object. */
struct sfs_gitobj_fault {
	const char *why; /* a sentence, naming git fsck's message id where it has one */
	const char *at;	 /* the entry (its name) the fault was found at, or NULL */
	size_t atlen;
};

/*
 * Whether tree DATA (SIZE bytes) is one the host's git fsck --strict
 * passes and git checks out as written. Refused (1, the first fault in
 * *F): bytes git cannot read as a tree; a mode other than 100644, 100755,
 * 120000, 40000 and 160000 exactly (fsck, even --strict, only warns of
 * others, and of 100664 only when --strict: checked out, they are what
 * sfs_git_canon_mode says, so a stranger mode is only ever a disguise); a
 * zero-padded mode; an empty name, ".", "..", a '/' in a name, .git in any
 * spelling canon.h knows (also after a backslash), a .gitmodules that is a
 * symlink; the null id; names out of git's order, or twice (a file and a
 * directory of one name too). Returns 0 when the tree is sound, -ENOMEM.
 */
int sfs_gitobj_check_tree(const void *data, size_t size, struct sfs_gitobj_fault *f);

/*
 * Whether commit DATA (SIZE bytes) is one the host's git fsck --strict
 * passes, in the shape git writes: "tree ID", any "parent ID" lines, one
 * "author" and one "committer" line, other headers, a blank line, the
 * message. IDs in lower-case hex; idents "NAME <EMAIL> SECONDS +ZZZZ" with
 * no '<' or '>' in name or email, the seconds in digits with no leading
 * zero and within a signed 64-bit time, the zone a sign and four digits.
 * Stricter than fsck: no NUL byte anywhere, no second tree, parent, author
 * or committer header later on, and the blank line present. Returns 0,
 * or 1 with the first fault in *F.
 */
int sfs_gitobj_check_commit(const void *data, size_t size, struct sfs_gitobj_fault *f);

/*
 * The tree id and the parent ids of commit DATA, which
 * sfs_gitobj_check_commit passed: *TREE, and PARENT(CTX, ID) for each parent.
 * Returns 0, or the first non-zero return of PARENT.
 */
int sfs_gitobj_commit_links(const void *data, size_t size, unsigned char tree[SFS_GIT_RAWSZ],
			    int (*parent)(void *ctx, const unsigned char id[SFS_GIT_RAWSZ]),
			    void *ctx);

#endif
