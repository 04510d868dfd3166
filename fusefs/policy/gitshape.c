/* gitshape.c - see gitshape.h. */
#include "gitshape.h"
#include "canon.h"

#include <limits.h>
#include <string.h>

const char *const sfs_gitdir_part_names[SFS_GITDIR_NPARTS] = {"HEAD", "objects", "refs",
							      "commondir"};

static const struct sfs_rule rule_complete = {
	.cls = SFS_CLASS_IMMUTABLE,
	.file = "(built-in)",
	.key = "immutable",
	.index = 0,
	.pattern = "HEAD + objects/ + refs/",
	.why = "this name would complete the shape of a git directory (HEAD with objects/ and "
	       "refs/, or with commondir): git on the host would take the directory for a "
	       "repository and run what its config names, from a prompt's `git status` on cd",
};

static const struct sfs_rule rule_inside = {
	.cls = SFS_CLASS_IMMUTABLE,
	.file = "(built-in)",
	.key = "immutable",
	.index = 0,
	.pattern = "config, hooks/ of a git directory",
	.why = "this directory is a git directory to git (HEAD with objects/ and refs/, or with "
	       "commondir): git on the host reads its config and hooks as a .git's",
};

/* The canonical form of NAME into OUT; false when it has none. */
static bool canon_of(const char *name, size_t len, char *out, size_t cap)
{
	return len <= NAME_MAX && sfs_canon_component(name, len, out, cap) >= 0;
}

/* Whether NAME may fold to one of the names here (head, objects, refs,
 * commondir, config..., hooks): the guard asks of every component of
 * every change, so most are let go by their first byte. An ASCII first
 * byte folds to itself in lower case (ignorables and letters that fold to
 * ASCII are not ASCII). */
static bool maybe_ours(const char *name, size_t len)
{
	unsigned char c = len ? (unsigned char)name[0] : 0;

	if (c >= 0x80)
		return true;
	c |= 0x20;
	return c == 'c' || c == 'h' || c == 'o' || c == 'r';
}

unsigned sfs_gitdir_part(const char *name, size_t len)
{
	static const char *const folded[SFS_GITDIR_NPARTS] = {"head", "objects", "refs",
							      "commondir"};
	char c[SFS_CANON_CAP(NAME_MAX) + 1];

	if (!maybe_ours(name, len) || !canon_of(name, len, c, sizeof(c)))
		return 0;
	for (unsigned i = 0; i < SFS_GITDIR_NPARTS; i++)
		if (strcmp(c, folded[i]) == 0)
			return 1u << i;
	return 0;
}

bool sfs_gitdir_complete(unsigned present)
{
	return (present & SFS_GITDIR_HEAD) &&
	       ((present & (SFS_GITDIR_OBJECTS | SFS_GITDIR_REFS)) ==
			(SFS_GITDIR_OBJECTS | SFS_GITDIR_REFS) ||
		(present & SFS_GITDIR_COMMONDIR));
}

bool sfs_gitdir_command_name(const char *name, size_t len)
{
	char c[SFS_CANON_CAP(NAME_MAX) + 1];

	if (!maybe_ours(name, len))
		return false;
	if (!canon_of(name, len, c, sizeof(c)))
		return true; /* cannot be told apart: treated as one */
	return !strcmp(c, "config") || !strcmp(c, "config.worktree") || !strcmp(c, "commondir") ||
	       !strcmp(c, "hooks");
}

void sfs_gitdir_refuse(struct sfs_decision *out, bool completes)
{
	sfs_policy_refuse(out, completes ? &rule_complete : &rule_inside);
}
