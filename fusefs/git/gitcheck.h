/* gitcheck.h - whether a commit may come back to the host. Every change a
 * commit makes to its parents' trees is judged by the policy as the host's
 * checkout of it would land: a path of class immutable, private, hidden,
 * protected or overlay (its canonical form, so case, Unicode and NTFS
 * spellings count), a submodule entry, a symlink whose target or name
 * the mount would refuse (sfs_policy_shadow_name: .cargo, .github), a
 * symlink that another symlink of the commit passes through (made in the
 * other order, the mount would have refused that other one) or passed
 * through before the commit removed it, a directory the commit makes one
 * git takes for a repository (HEAD with objects/ and refs/, or with
 * commondir, whatever the directory is called: gitshape.h) or whose
 * config or hooks it changes when it is one, or a name git itself
 * refuses is a refusal. Entries are judged as git checks them out: by the mode git
 * gives them (sfs_git_canon_mode), not libgit2's reading. Content and
 * mode changes of any other path are fine: the commit is only imported,
 * and the user reviews it before anything is checked out.
 *
 * The policy given is the host's (no private git): .git is immutable. No
 * I/O but libgit2's reads of the repository's objects. */
#ifndef SANDYFS_GITCHECK_H
#define SANDYFS_GITCHECK_H

#include "policy/policy.h"

#include <git2.h>

enum sfs_git_change {
	SFS_GIT_ADD,	/* the path appears */
	SFS_GIT_MODIFY, /* its content changes */
	SFS_GIT_MODE,	/* its mode changes (executable bit) */
	SFS_GIT_TYPE,	/* file, symlink, directory or submodule becomes another */
	SFS_GIT_DELETE, /* the path goes */
};

struct sfs_git_refusal {
	const git_oid *commit;
	const char *path; /* relative to SOURCE; names as the tree holds them */
	enum sfs_git_change change;
	enum sfs_class cls;    /* the class that refuses (immutable for built-in reasons) */
	const char *rule_file; /* a rule file, or "(built-in)" */
	int rule_line;	       /* 0 when unknown */
	const char *rule_text; /* the pattern, or what the built-in check is */
	const char *why;
};

/* Called once per refusal; a negative return stops the check with it. */
typedef int (*sfs_git_refusal_fn)(void *ctx, const struct sfs_git_refusal *r);

/*
 * Checks COMMIT in REPO: against its parent, against the empty tree for a
 * root commit, and for a merge every path whose entry differs from all of
 * its parents' (what the merge itself introduced). Returns the number of
 * refusals, or a negative errno with *ERR (malloc'ed) when an object
 * cannot be read.
 */
int sfs_git_check_commit(const struct sfs_policy *p, git_repository *repo, git_commit *commit,
			 sfs_git_refusal_fn fn, void *ctx, char **err);

const char *sfs_git_change_name(enum sfs_git_change c); /* "adds", "changes", ... */

/* The objects of one import already looked at, across its commits. */
struct sfs_git_objects;

/* KNOWN: the host's objects (NULL: none), which are not judged, being
 * neither copied nor new; kept by the caller. */
int sfs_git_objects_new(git_odb *known, struct sfs_git_objects **out);
void sfs_git_objects_free(struct sfs_git_objects *o);

static inline void sfs_git_objects_freep(struct sfs_git_objects **o)
{
	sfs_git_objects_free(*o);
}
#define cleanup_git_objects __attribute__((cleanup(sfs_git_objects_freep)))

/*
 * Holds commit ID and every object it brings that the host lacks (its tree,
 * the trees below and the blobs in them) to what the host's git fsck
 * --strict asks of them, and more (gitobj.h), and every object a tree
 * entry, the tree line or a parent line names to being there with the type
 * named: what the import would copy, judged before anything is. Each
 * faulty object is one refusal: class immutable, rule "(built-in)", the
 * rule text naming the object ("tree ID"), the path where the commit's
 * tree has it ("." for the top and for the commit itself). Returns the
 * number of refusals, or a negative errno with *ERR (malloc'ed) when the
 * objects cannot be read.
 */
int sfs_git_check_objects(struct sfs_git_objects *o, git_repository *repo, const git_oid *commit,
			  sfs_git_refusal_fn fn, void *ctx, char **err);

/*
 * Both checks of commit ID, as an import makes them: its objects
 * (sfs_git_check_objects, with O), then its changes (sfs_git_check_commit)
 * as far as libgit2 can read them: where it cannot, the objects that say
 * why are refused already. Returns the number of refusals, or a negative
 * errno with *ERR.
 */
int sfs_git_check(const struct sfs_policy *p, struct sfs_git_objects *o, git_repository *repo,
		  const git_oid *commit, sfs_git_refusal_fn fn, void *ctx, char **err);

#endif
